// The supervisor: runs an ExecPlan, streams its output whole and keeps a
// capped copy, enforces the deadline, forwards signals and kills every
// descendant.  It knows nothing about policies.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "platform/plan.h"

namespace sbx {

enum class Stream { Stdout, Stderr };

// Which part of a stream over the cap is shown (output_cap.h).
enum class Keep { Head, Tail, Both };

// What sbx keeps of each stream (the result's text and counts, and what the
// live stream shows when it is capped too).
struct OutputCaps {
    std::uint64_t max_bytes = 10240;  // per stream; 0 = unlimited
    std::uint64_t max_lines = 256;    // per stream; 0 = unlimited
    Keep keep = Keep::Both;
};

struct SuperviseOptions {
    std::optional<std::chrono::milliseconds> timeout;
    // What is kept of each stream: the capture, the result's counts, and with
    // cap_live or on_output the live stream too.
    OutputCaps caps;
    // Text mode: every byte of the command's stdout and stderr goes to sbx's
    // own, as it arrives.  When nothing else needs the bytes (no capture, no
    // tail_bytes, no cap on the live stream), a stream that is not a
    // terminal is given to the command itself.
    bool passthrough = true;
    // Text mode: the live stream is capped too (a short log): the head live,
    // the omission note (on stderr) and the tail once the command has ended.
    bool cap_live = false;
    // Keep the capped bytes in the result (for --json and the end event).
    bool capture = false;
    // Called with each shown (capped) chunk as it arrives (for --events); what
    // it returns is written to stdout_fd, without blocking the loop as in
    // text mode.
    std::function<std::string(Stream, std::string_view)> on_output;
    // With on_output: what to write at the omission point of a stream over
    // the cap (for --events), before its tail.
    std::function<std::string(Stream, std::uint64_t bytes, std::uint64_t lines)> on_omitted;
    // Keep the last tail_bytes bytes of each stream, whatever the caps, for
    // the denial heuristics and the approver (0 = off; on, text mode splices
    // only what comes before the end of what a pipe holds, and reads the end).
    std::size_t tail_bytes = 0;
    // The child is the sandbox helper, which removes what it made on the host
    // once its sandbox is gone: when the command is to be killed (the
    // deadline), the helper's descendants go first, and the helper, while it
    // still runs plan.argv[0], gets up to a second to end by itself.
    bool child_cleans_up = false;
    // Given to the program at plan.proxy_fd (the helper's end of the
    // allowlist proxy's socket pair, net/proxy.h), or -1.
    int proxy_channel = -1;
    // More descriptors for the program, each (descriptor, the number it gets
    // it at): the helper's --mask-file contents.  Numbers above 2, none
    // plan.report_fd or plan.proxy_fd, each once, below 128.
    std::vector<std::pair<int, int>> pass_fds;
    // Relay a new pseudo-terminal (exec/terminal.h): the command's stdin,
    // stdout, and stderr when sbx's stderr is the same file as its stdout,
    // are the slave of a pty made here, the controlling terminal of a session
    // of the child's own; sbx's stdin (a terminal, in raw mode meanwhile)
    // is copied to it and its output is the stdout stream.  The caller
    // checks that stdin is a terminal.
    bool tty = false;
    // Where text mode's pass-through goes (tests point these elsewhere).
    int stdout_fd = 1;
    int stderr_fd = 2;
};

struct StreamResult {
    std::string shown;  // the kept (capped) bytes, head then tail, when capture is on
    std::string tail;   // the last tail_bytes bytes seen, when asked for
    // The kept copy: whether the caps cut it, and its counts (lines only
    // when the bytes are looked at: capture, a capped live stream).
    bool truncated = false;
    std::uint64_t bytes = 0;  // total bytes seen (0 when given sbx's stream itself)
    std::uint64_t shown_bytes = 0;
    std::uint64_t shown_lines = 0;
    std::uint64_t omitted_bytes = 0;
    std::uint64_t omitted_lines = 0;  // lines of which no byte was shown
};

struct ExecResult {
    int exit_code = 0;          // sbx's exit status for this run (124, 128+N, ...)
    OutputCaps caps;            // the caps that applied
    std::optional<int> signal;  // the signal that killed the command
    bool timed_out = false;
    std::int64_t duration_ms = 0;
    StreamResult out;
    StreamResult err;
    // Set when the command could not be executed (exit_code 126/127): the
    // reason, e.g. "cannot run 'foo': No such file or directory".
    std::optional<std::string> exec_error;
    // What the program wrote on plan.report_fd (the helper's status lines).
    std::string report;
    // Descendants still alive after the final kill (should be 0: a process
    // in uninterruptible sleep can delay its death).
    std::size_t survivors = 0;
    // Text mode: what sbx last wrote to its stderr (or to the same file
    // through stdout) ended mid-line, so a note after the run starts with a
    // newline.  A stderr given to the command itself tells only when it is a
    // regular file.
    bool stderr_mid_line = false;
    // The command's processes as sbx saw them: the child, and without a
    // subreaper (the portable backend) every process noted every 100 ms
    // (macOS's unified log names its denials by pid).
    std::set<long> pids;
};

// Runs the plan to completion.  While it runs, SIGINT, SIGTERM, SIGHUP and
// SIGQUIT are blocked in the caller and forwarded to the command's process
// group; the calling process becomes a child subreaper and must have no other
// children of its own while this runs (every descendant is killed at the end).
//
// Throws Error when the command cannot be started at all for a reason of
// sbx's own (fork/pipe failure); a command that is not found or not
// executable gives exit_code 127 / 126 with a message on the err stream.
ExecResult supervise(const ExecPlan&, const SuperviseOptions&);

}  // namespace sbx
