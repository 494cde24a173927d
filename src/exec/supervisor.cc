// The supervisor's poll loop: one loop over the command's stdout and stderr
// pipes, a pidfd for the child (Linux) and an fd for the forwarded signals
// (exec/backend.h: a signalfd, or the portable backend's self-pipe), with
// the deadline as the poll timeout.  supervise(), at the end, lists the
// phases of a run (class Run); the child is started by exec/spawn.h.
#include "exec/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "denial/helper_status.h"
#include "exec/backend.h"
#include "exec/output_cap.h"
#include "exec/process.h"
#include "exec/spawn.h"
#include "exec/terminal.h"
#include "util/error.h"

extern char** environ;

namespace sbx {

namespace {

using Clock = std::chrono::steady_clock;
using exec::Fd;

constexpr auto kDrainAfterExit = std::chrono::seconds(2);
constexpr std::size_t kReadBuffer = 256 * 1024;
constexpr std::size_t kSpliceChunk = 1 << 20;
// What a helper gets at the timeout to remove its placeholders and end (it
// needs about a millisecond idle, but tens of milliseconds on a loaded
// machine: at load 10 on 2 cores 50 ms left placeholders behind): short
// enough that sbx still returns within 250 ms of the deadline when the
// helper cannot (it is then killed, and its placeholders wait for the next
// run there).  A helper that ends at once costs nothing of it.
constexpr auto kCleanupGrace = std::chrono::milliseconds(200);
// The most sbx waits, when the command stops, for the rest of it to act on
// the stop signals it was sent (await_stop_signals): a process that cannot
// run for that long (uninterruptible sleep) does not hold the job's stop.
constexpr auto kStopSettle = std::chrono::seconds(1);
// How often, without a subreaper, the command's processes are noted, so that
// one orphaned during the run is still found at its end.
constexpr auto kNoteEvery = std::chrono::milliseconds(100);
// How often, during the drain, sbx looks whether a process of the command
// still has a stream that was given to it open (no pipe's end tells).
constexpr auto kHolderCheckEvery = std::chrono::milliseconds(10);
// Shown bytes a sink holds for a slow reader before the pipes feeding it
// are left unread.
constexpr std::size_t kPendingLimit = 256 * 1024;
// The relay: what is typed and not yet taken by the pty before sbx stops
// reading the terminal, and how often sbx looks whether it has the
// terminal's foreground again (a running job's fg sends no SIGCONT).
constexpr std::size_t kTypedLimit = 64 * 1024;
constexpr auto kForegroundCheckEvery = std::chrono::milliseconds(250);

// Gives the terminal back to sbx's process group when the command had it
// (not after the job was continued in the background: the shell has it;
// nor when the shell took it while sbx was stopped, and sbx ends in the
// background, continued at its deadline).
class TerminalGuard {
public:
    TerminalGuard() = default;
    void took(bool held = true) { took_ = held; }  // false: sbx's group has it (again)
    bool held() const { return took_; }
    void group(pid_t g) { group_ = g; }
    // Taken back when the child's group still has it, or a group that no
    // longer exists does (the sandboxed command's own, which the helper gave
    // it: its processes are gone); never from a group that is there (the
    // shell's, after a bg).  Else sbx's approval prompt read the terminal
    // from the background (EIO: "the terminal closed").
    ~TerminalGuard() {
        if (!took_) return;
        const pid_t now = ::tcgetpgrp(STDIN_FILENO);
        if (group_ == 0 || now == group_ || (now > 0 && ::kill(-now, 0) != 0 && errno == ESRCH))
            ::tcsetpgrp(STDIN_FILENO, ::getpgrp());  // SIGTTOU is blocked
    }
    TerminalGuard(const TerminalGuard&) = delete;
    TerminalGuard& operator=(const TerminalGuard&) = delete;

private:
    bool took_ = false;
    pid_t group_ = 0;  // the command's process group, once it exists
};

// What the child needs, prepared before the clone so that the child only
// makes async-signal-safe calls.
struct ChildSetup {
    pid_t parent;
    std::vector<char*> argv;
    std::vector<char*> envp;
    std::vector<std::string> candidates;
    const char* cwd;
    bool stdin_null;
    bool take_tty;
    // The relay's pty slave (-1: none): the child leads a new session with
    // it as its controlling terminal, and it is the child's stdin.
    int tty_fd;
    int out_fd;
    int err_fd;
    int status_fd;
    int report_fd;      // the write end of the report pipe, or -1
    int report_target;  // where the program expects it (never status_fd)
    int pass_fd;        // the proxy channel (at 10 or above), or -1
    int pass_target;    // where the program expects it (never status_fd)
    // SuperviseOptions::pass_fds, each moved to 128 or above first.
    std::vector<std::pair<int, int>> pass_more;
    int fd_ceiling;  // exec::open_fd_ceiling()
    const sigset_t* mask;
};

enum Stage : int { kStageChdir = 1, kStageStdin = 2, kStageExec = 3 };

[[noreturn]] void child_fail(const ChildSetup& s, int stage, int err) {
    const int msg[2] = {stage, err};
    ssize_t ignored = ::write(s.status_fd, msg, sizeof msg);
    (void)ignored;
    ::_exit(stage == kStageExec ? (err == ENOENT || err == ENOTDIR ? 127 : 126) : 125);
}

[[noreturn]] void child_main(const ChildSetup& s) {
    exec::child_dies_with_parent();
    if (::getppid() != s.parent) ::_exit(125);
    if (s.tty_fd >= 0) {
        if (::setsid() < 0 || ::ioctl(s.tty_fd, TIOCSCTTY, 0) != 0 || ::dup2(s.tty_fd, STDIN_FILENO) < 0)
            child_fail(s, kStageStdin, errno);
    } else {
        ::setpgid(0, 0);
        if (s.take_tty) ::tcsetpgrp(STDIN_FILENO, ::getpid());  // SIGTTOU is still blocked here
    }
    if (s.stdin_null) {
        const int fd = ::open("/dev/null", O_RDONLY);
        if (fd < 0 || ::dup2(fd, STDIN_FILENO) < 0) child_fail(s, kStageStdin, errno);
        if (fd != STDIN_FILENO) ::close(fd);
    }
    if (::dup2(s.out_fd, STDOUT_FILENO) < 0 || ::dup2(s.err_fd, STDERR_FILENO) < 0) child_fail(s, kStageStdin, errno);
    // sbx's own stream handed over as it is (dup2 onto itself keeps its flags).
    ::fcntl(STDOUT_FILENO, F_SETFD, 0);
    ::fcntl(STDERR_FILENO, F_SETFD, 0);
    if (s.cwd[0] != '\0' && ::chdir(s.cwd) != 0) child_fail(s, kStageChdir, errno);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, s.mask, nullptr);
    // Every fd but 0..2 closes at exec (the status pipe too, which tells the
    // parent that exec succeeded).
    exec::cloexec_from_3(s.fd_ceiling);
    // The report pipe stays open across exec, at the number the program was given.
    if (s.report_fd >= 0) {
        if (s.report_fd == s.report_target) {
            if (::fcntl(s.report_fd, F_SETFD, 0) != 0) child_fail(s, kStageStdin, errno);
        } else if (::dup2(s.report_fd, s.report_target) < 0) {
            child_fail(s, kStageStdin, errno);
        }
    }
    if (s.pass_fd >= 0 && ::dup2(s.pass_fd, s.pass_target) < 0) child_fail(s, kStageStdin, errno);
    for (const auto& [from, to] : s.pass_more)
        if (::dup2(from, to) < 0) child_fail(s, kStageStdin, errno);
    // The PATH search of execvp, with the PATH of the child's environment.
    int err = ENOENT;
    bool saw_eacces = false;
    for (const auto& c : s.candidates) {
        ::execve(c.c_str(), s.argv.data(), s.envp.data());
        err = errno;
        if (err == EACCES) {
            saw_eacces = true;
            continue;
        }
        if (err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV || err == ETIMEDOUT) continue;
        break;
    }
    if (saw_eacces && (err == ENOENT || err == ENOTDIR || err == EACCES)) err = EACCES;
    child_fail(s, kStageExec, err);
}

// execve's failure with the file it tried first (the PATH search's first
// candidate that exists, as the child saw it from plan.cwd).
ExecFailure exec_failure(const ExecPlan& plan, const std::vector<std::string>& candidates, int err) {
    ExecFailure f{plan.argv[0], err, std::nullopt, std::nullopt};
    for (const auto& c : candidates) {
        struct stat st {};
        const std::string full = c.starts_with('/') || plan.cwd.empty() ? c : join_path(plan.cwd, c);
        if (::stat(full.c_str(), &st) == 0) {
            f.path = c;
            f.mode = st.st_mode;
            break;
        }
    }
    return f;
}

// What a non-blocking pipe holds now (its writers are gone or done), up to
// 1 MiB (the largest pipe a user may make by default: the helper grows its
// status pipe for a learning run's reads, linux-helper/recorder.h).
std::string read_available(int fd) {
    std::string text;
    char buffer[4096];
    while (text.size() < 1024 * 1024) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    return text;
}

int child_entry(void* arg) { child_main(*static_cast<const ChildSetup*>(arg)); }

// One of sbx's own streams, as the loop writes to it.
struct Sink {
    int fd;
    Fd own{};  // nonblocking_copy(fd), made at the first output
    bool own_tried = false;
    // Bytes the reader has not taken yet (from offset `sent`), and whether a
    // splice found the stream full: either waits for POLLOUT.
    std::string pending{};
    std::size_t sent = 0;
    bool stalled = false;
    bool gone = false;  // the reader went away (EPIPE)
    // The last byte queued here, and the other sink when both write to the
    // same file (a terminal, 2>&1): where a note must start on a new line.
    char last = '\n';
    Sink* twin = nullptr;

    int write_fd() const { return own.valid() ? own.get() : fd; }
    // The fd to write or splice to now.
    int target() {
        if (!own_tried) {
            own = exec::nonblocking_copy(fd);
            own_tried = true;
        }
        return write_fd();
    }
    bool waiting() const { return sent < pending.size() || stalled; }
    // The pipes feeding it are not read until the reader catches up.
    bool full() const { return pending.size() - sent >= kPendingLimit || stalled; }
    void drop() {
        pending.clear();
        sent = 0;
    }
};

struct Pump {
    Stream which;
    Fd fd;
    OutputCap cap;  // what is kept (and, live_capped, what is shown)
    StreamResult* result;
    Sink* sink;  // where the shown bytes go (nullptr: captured only)
    // The sink gets what the cap shows (--events, text mode's cap_live),
    // else every byte.
    bool live_capped = false;
    // Nothing but the sink needs the bytes: spliced (where it can be).
    bool splice_out = false;
    // The sink gets every byte and only the tail is looked at: all but the
    // end of what the pipe holds is spliced (where it can be).
    bool splice_front = false;
    bool open = true;
    bool ended = false;  // its omission note and tail were given

    // Read only while its sink keeps up: a command whose output waits blocks
    // on its full pipe, as it would writing to sbx's stream itself.
    bool readable() const { return open && !(sink && sink->full()); }
};

class Loop {
public:
    explicit Loop(const SuperviseOptions& opt) : opt_(opt), buf_(std::make_unique_for_overwrite<char[]>(kReadBuffer)) {}

    // A chunk the command wrote: what sbx keeps of it (the tail for the
    // denial notes; the capped copy, counted, and captured when asked for),
    // and to sbx's stream every byte, or when the live stream is capped only
    // what the cap shows.
    void take(Pump& p, std::string_view chunk) {
        if (chunk.empty()) return;
        if (opt_.tail_bytes > 0) keep_tail(*p.result, chunk);
        if (!p.live_capped && !opt_.capture) {
            p.cap.admit_unseen(chunk.size());  // only counted: nothing looks at the kept copy
            show(p, chunk);
            return;
        }
        const std::string_view kept = chunk.substr(0, p.cap.admit(chunk));
        if (opt_.capture) p.result->shown.append(kept);
        show(p, p.live_capped ? kept : chunk);
    }

    // Bytes for sbx's stream: as they are, or as the callback's event lines.
    void show(Pump& p, std::string_view data) {
        if (data.empty() || !p.sink) return;
        if (opt_.on_output) {
            queue(*p.sink, opt_.on_output(p.which, data));
        } else if (p.open) {
            queue(*p.sink, data);
            // sbx's own stream is gone: like a shell pipeline, the command's
            // pipe closes too, so that its next write fails (SIGPIPE).
            if (p.sink->gone) close(p);
        }
    }

    // Written now as far as sbx's stream takes it (straight from `data` when
    // nothing waits before it); the rest waits for POLLOUT.
    void queue(Sink& s, std::string_view data) {
        if (s.gone) return;
        if (!data.empty()) {
            s.last = data.back();
            if (s.twin) s.twin->last = s.last;
        }
        if (s.sent >= s.pending.size()) {
            const std::size_t n = write_some(s, data);
            if (s.gone || n == data.size()) return;
            data.remove_prefix(n);
        }
        if (s.sent > 0 && s.sent >= s.pending.size() / 2) {
            s.pending.erase(0, s.sent);  // now and then, not at every partial write
            s.sent = 0;
        }
        s.pending.append(data);
    }

    // The end of a stream (the command has ended): the note where output
    // was omitted (text mode: on `notes`, sbx's stderr, on a line of its
    // own; --events: on_omitted), then the tail.
    void end_stream(Pump& p, Sink* notes) {
        if (p.ended) return;
        p.ended = true;
        const std::string_view tail = p.cap.tail();
        if (opt_.capture) p.result->shown.append(tail);
        // Shown whole as it came, or nothing more can be shown.
        if (!p.live_capped || (p.sink && p.sink->gone)) return;
        if (p.cap.truncated()) {
            const Omission o = p.cap.omitted();
            if (opt_.on_output && opt_.on_omitted && p.sink) {
                queue(*p.sink, opt_.on_omitted(p.which, o.bytes, o.lines));
            } else if (opt_.passthrough && notes) {
                std::string note = omission_note(p.which, o);
                if (notes->last != '\n') note.insert(0, "\n");
                queue(*notes, note);
            }
        }
        if (tail.empty() || !p.sink) return;
        if (opt_.on_output) queue(*p.sink, opt_.on_output(p.which, tail));
        else queue(*p.sink, tail);
    }

    // Writes what is pending as far as sbx's stream takes it now.
    void flush(Sink& s) {
        const std::size_t n = write_some(s, std::string_view(s.pending).substr(s.sent));
        if (s.gone) return;
        s.sent += n;
        if (s.sent >= s.pending.size()) s.drop();
    }

    // What sbx's stream takes of `data` now (all of it when the stream
    // blocks); a reader gone marks the sink lost.
    std::size_t write_some(Sink& s, std::string_view data) {
        s.stalled = false;
        std::size_t done = 0;
        while (done < data.size()) {
            const auto t = Clock::now();
            const ssize_t w = ::write(s.target(), data.data() + done, data.size() - done);
            writing_ += Clock::now() - t;
            if (w < 0) {
                if (errno == EINTR) continue;
                if (errno != EAGAIN) lost(s);
                break;
            }
            done += static_cast<std::size_t>(w);
        }
        return done;
    }

    // From now on sbx's stream is written as the caller opened it, waiting
    // for the reader if need be, starting with what is pending.
    void finish(Sink& s) {
        s.own.reset();
        s.own_tried = true;
        s.stalled = false;
        const auto t = Clock::now();
        if (s.waiting() && !write_all(s.fd, std::string_view(s.pending).substr(s.sent))) s.gone = true;
        writing_ += Clock::now() - t;
        s.drop();
    }

    void finish(Pump& p) {
        if (p.sink) finish(*p.sink);
    }

    // The reader of sbx's stream went away.
    void lost(Sink& s) {
        s.gone = true;
        s.drop();
        s.stalled = false;
    }

    void close(Pump& p) {
        p.open = false;
        p.fd.reset();
    }

    // One read (or splice) from a readable pipe.
    void pump(Pump& p) {
        if (!p.open) return;
        if (p.splice_out) return splice_all(p);
        if (p.splice_front && splice_front(p)) return;
        // Read when something besides sbx's stream needs the bytes (the kept
        // copy, the tail, a capped live stream).
        const ssize_t n = ::read(p.fd.get(), buf_.get(), kReadBuffer);
        if (n > 0) take(p, std::string_view(buf_.get(), static_cast<std::size_t>(n)));
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) close(p);
    }

    // Nothing but sbx's stream needs the bytes: they move without a copy.
    void splice_all(Pump& p) {
        Sink& s = *p.sink;
        const int to = s.target();
        const auto t = Clock::now();
        const ssize_t n = exec::splice_pipe(p.fd.get(), to, kSpliceChunk, to != s.fd);
        writing_ += Clock::now() - t;
        if (n < 0 && errno == EPIPE) {
            lost(s);
            return close(p);
        }
        if (n < 0 && errno == EAGAIN) {
            s.stalled = true;  // readable, so it is sbx's stream that is full
            return;
        }
        if (n < 0 && errno != EINTR) {
            p.splice_out = false;  // not spliceable (a terminal, O_APPEND, no splice): read and write
            return pump(p);
        }
        if (n > 0) p.cap.admit_unseen(static_cast<std::uint64_t>(n));
        if (n == 0) close(p);
    }

    // Only the last tail_bytes of the stream are looked at (text mode,
    // sandboxed: the denial notes, the approver).  When the pipe holds more
    // than twice that, all but the last tail_bytes move without a copy; the
    // rest is read and written as usual, so that what is read after a splice
    // is the stream's end so far, and nothing is held back.  (A tee(2) of
    // everything into a pipe of sbx's to read the tail from took as much CPU
    // as reading and writing it all: issue 35.)  True when the pump is done
    // for now: sbx's stream is full, or gone.
    bool splice_front(Pump& p) {
        Sink& s = *p.sink;
        // Not past bytes that wait for sbx's stream: read after them instead.
        if (s.waiting()) return false;
        int held = 0;
        if (::ioctl(p.fd.get(), FIONREAD, &held) != 0 || held <= 0 ||
            static_cast<std::size_t>(held) <= 2 * opt_.tail_bytes)
            return false;
        const int to = s.target();
        const std::size_t front = static_cast<std::size_t>(held) - opt_.tail_bytes;
        const auto t = Clock::now();
        const ssize_t n = exec::splice_pipe(p.fd.get(), to, front, to != s.fd);
        writing_ += Clock::now() - t;
        if (n > 0) p.cap.admit_unseen(static_cast<std::uint64_t>(n));
        if (n < 0 && errno == EPIPE) {
            lost(s);
            close(p);
            return true;
        }
        if ((n < 0 && errno == EAGAIN) || (n > 0 && static_cast<std::size_t>(n) < front)) {
            s.stalled = true;  // sbx's stream took what it could
            return true;
        }
        if (n < 0 && errno != EINTR) p.splice_front = false;  // not spliceable: read and write
        return false;
    }

    void keep_tail(StreamResult& r, std::string_view chunk) {
        const std::size_t keep = opt_.tail_bytes;
        if (chunk.size() >= keep) {
            r.tail.assign(chunk.substr(chunk.size() - keep));
            return;
        }
        r.tail.append(chunk);
        if (r.tail.size() > 2 * keep) r.tail.erase(0, r.tail.size() - keep);
    }

    // Reads what is left in the pipes without waiting for more than `budget`
    // (time spent waiting for sbx's own reader does not count).
    void drain_now(Pump& a, Pump& b, std::chrono::milliseconds budget) {
        const auto until = Clock::now() + budget;
        const auto written = writing_;
        while ((a.open || b.open) && Clock::now() < until + (writing_ - written)) {
            std::array<pollfd, 2> fds{pollfd{a.open ? a.fd.get() : -1, POLLIN, 0},
                                      pollfd{b.open ? b.fd.get() : -1, POLLIN, 0}};
            if (::poll(fds.data(), fds.size(), 0) <= 0) return;
            if (fds[0].revents != 0) pump(a);
            if (fds[1].revents != 0) pump(b);
        }
    }

private:
    const SuperviseOptions& opt_;
    std::unique_ptr<char[]> buf_;
    Clock::duration writing_{};  // spent in writes and splices to sbx's streams
};

// SIGKILL to every descendant of the helper (pid 1 of its sandbox takes the
// rest of the sandbox with it), again as new ones appear, until the helper
// has ended by itself or the grace is over.  A helper stopped along with its
// command is continued, or it could not clean up.
void kill_under_helper(const exec::Child& helper) {
    const auto until = Clock::now() + kCleanupGrace;
    do {
        for (pid_t d : exec::descendants_of(helper.pid())) ::kill(d, SIGKILL);
        ::kill(helper.pid(), SIGCONT);
        pollfd p{helper.pidfd(), POLLIN, 0};
        if (::poll(&p, 1, 5) > 0) return;
    } while (Clock::now() < until);
}

// Reaps the zombies of orphaned descendants (reparented to sbx, the
// subreaper) so that a long run does not pile them up; the main child is left
// to its pidfd.  Only this thread's children (__WNOTHREAD): the supervisor's
// thread made the main child and adopts the orphans, while a child another
// thread of sbx made meanwhile (an --approver program asked by the allowlist
// proxy about a connection) is that thread's to wait for, with its status.
#ifdef __WNOTHREAD
constexpr int kThisThreadOnly = __WNOTHREAD;
#else
constexpr int kThisThreadOnly = 0;  // macOS: no other thread of sbx starts a child there (no allowlist proxy)
#endif
void reap_orphans(pid_t main_child) {
    while (true) {
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | kThisThreadOnly) != 0 || info.si_pid == 0) return;
        if (info.si_pid == main_child) return;
        ::waitpid(info.si_pid, nullptr, WNOHANG | kThisThreadOnly);
    }
}

// sbx was continued (fg or bg, after a stop or not): the terminal goes to
// the child's group if the shell gave it to sbx (fg), and the group is
// continued.  The helper passes both on the same way.
void continue_child(pid_t group, TerminalGuard& terminal) {
    if (::tcgetpgrp(STDIN_FILENO) == ::getpgrp()) {
        ::tcsetpgrp(STDIN_FILENO, group);
        terminal.took();
    }
    ::kill(-group, SIGCONT);
}

// Job control, when stdin is the session's terminal: a child stopped by ^Z
// (or by reading the terminal in the background, also when sbx was started
// in the background) stops sbx as well, so that the shell sees the job
// stop; sbx goes on at a SIGCONT (continue_child).  A shell's fg of a job
// that was running gives sbx's group the terminal without a SIGCONT: the
// child's read then stops it, and it is continued with the terminal at once.
// Before sbx stops its job, the rest of the command that was sent a stop
// signal with its child (^Z reaches the whole foreground group) acts on it.
// The shell takes the terminal back as soon as sbx stops, and a process that
// was blocked reading the terminal when ^Z came, woken by the signal but not
// yet run (a loaded machine), would otherwise take what is typed at the
// shell's prompt (its read returns data that arrived before it saw the
// signal, whichever group has the terminal by then).  Bounded, for a process
// that cannot run (uninterruptible sleep), by kStopSettle and the deadline.
void await_stop_signals(pid_t child, std::optional<Clock::time_point> end_by) {
    const auto until = Clock::now() + kStopSettle;
    while (exec::stop_signal_in_flight(child)) {
        const auto now = Clock::now();
        if (now >= until || (end_by && now >= *end_by)) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void follow_stop(exec::Child& child, TerminalGuard& terminal, std::optional<Clock::time_point> end_by) {
    const pid_t group = child.pid();
    if (!child.take_stop()) return;
    if (!terminal.held() && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp()) {
        continue_child(group, terminal);
        return;
    }
    await_stop_signals(group, end_by);
    // Taken back only from the child's group: a job in the background (bg)
    // that stops on reading the terminal leaves the shell's terminal alone.
    if (terminal.held()) {
        ::tcsetpgrp(STDIN_FILENO, ::getpgrp());  // SIGTTOU is blocked
        terminal.took(false);
    }
    // What ^Z does to a foreground group, done to sbx's: the whole job stops
    // (the rest of a pipeline, a script that ran sbx), and each member may
    // tidy the terminal first (less, vim).
    ::kill(0, SIGTSTP);
    // Stopped and continued, sbx finds the SIGCONT pending (it is blocked;
    // the portable backend catches it instead, and continues the command
    // here and again when the loop reads it: the same SIGCONT twice).
    // Not stopped (the job ignores SIGTSTP, or its group is orphaned): ^Z
    // changes nothing for this job, so the command goes on too.
    sigset_t pending;
    if (::sigpending(&pending) == 0 && !sigismember(&pending, SIGCONT)) continue_child(group, terminal);
}

void fill(StreamResult& r, const OutputCap& cap) {
    r.bytes = cap.total();
    r.shown_bytes = cap.shown_bytes();
    r.shown_lines = cap.shown_lines();
    r.truncated = cap.truncated();
    const Omission o = cap.omitted();
    r.omitted_bytes = o.bytes;
    r.omitted_lines = o.lines;
}

// Whether the command can be given sbx's stream fd itself: a valid fd that
// is not a terminal (a terminal goes on through the pipe, as capped output
// does, so that the command sees the same kind of stream either way).
bool can_hand_over(int fd) { return ::fcntl(fd, F_GETFD) != -1 && ::isatty(fd) == 0; }

// Whether the last byte written through fd, a regular file, is not a newline
// (read through a description of its own: fd itself may be write-only).
// Anything else cannot tell, and counts as at a line's start.
bool file_ends_mid_line(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    const off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at <= 0) return false;
    const Fd again(::open(fmt::format("/dev/fd/{}", fd).c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    char c = '\n';
    return again.valid() && ::pread(again.get(), &c, 1, at - 1) == 1 && c != '\n';
}

// Whether two fds write to the same file (a terminal, a pipe, 2>&1).
bool same_file(int a, int b) {
    struct stat sa {
    }, sb{};
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

namespace {

// What the child reported on the status pipe before it exited: the stage
// that failed and its errno.
struct ChildFailure {
    int stage;
    int err;
};

// One run of a plan, phase by phase (supervise() calls them in order).  The
// members are declared in the order they must be given up: the pumps and
// sinks first, the terminal before the signal mask it needs (SIGTTOU
// blocked), the signal mask last.
class Run {
public:
    // Set up the signals and streams: the signals sbx forwards are read
    // through an fd (exec/backend.h); the command's streams are pipes sbx
    // reads, or sbx's own streams handed over.
    // track_orphans: no subreaper, so the command's processes are noted
    // every 100 ms (exec::remember_descendants).
    Run(const ExecPlan& plan, const SuperviseOptions& opt, bool track_orphans)
        : plan_(plan),
          opt_(opt),
          track_orphans_(track_orphans),
          signals_(opt.tty),
          loop_(opt),
          out_sink_{opt.stdout_fd},
          err_sink_{opt.stderr_fd},
          out_{Stream::Stdout, Fd(), OutputCap(opt.caps), &result_.out, nullptr},
          err_{Stream::Stderr, Fd(), OutputCap(opt.caps), &result_.err, nullptr} {
        result_.caps = opt.caps;
        set_up_streams();
    }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    // Everything the child needs, built before the clone, and the deadline's
    // timer; then the child, which makes its own process group and execs.
    void start_child() {
        prepare_child();
        start_ = Clock::now();
        // With a timeout, the timer is armed before the command starts (no
        // timeout, no timer: the drain after exit makes one if it has to wait).
        if (opt_.timeout) {
            deadline_ = start_ + *opt_.timeout;
            wake_.emplace();
            if (!wake_->at(*deadline_))
                throw Error(fmt::format("cannot arm the deadline's timer: {}", std::strerror(errno)));
            wake_at_ = deadline_;
        }
        // It only makes async-signal-safe calls and writes no memory of sbx's
        // (exec/spawn.h).  The child made its own process group before exec
        // (sbx resumes only after that).
        if (opt_.tty) raw_.emplace(STDIN_FILENO);
        child_.emplace(exec::spawn("the command", child_entry, &setup_));
        terminal_.group(child_->pid());
        if (setup_.take_tty) terminal_.took();
        slave_.reset();  // the command's alone: its master reads EIO once the command's processes are gone
        out_pipe_.write.reset();
        err_pipe_.write.reset();
        status_pipe_.write.reset();
        if (report_pipe_) report_pipe_->write.reset();
    }

    // Did exec succeed?  EOF on the status pipe means yes (it closed at exec).
    std::optional<ChildFailure> wait_for_exec() {
        int failure[2] = {0, 0};
        ssize_t got;
        do {
            got = ::read(status_pipe_.read.get(), failure, sizeof failure);
        } while (got < 0 && errno == EINTR);
        status_pipe_.read.reset();
        if (got != static_cast<ssize_t>(sizeof failure)) return std::nullopt;
        return ChildFailure{failure[0], failure[1]};
    }

    // The command could not be run: sbx's own failure (Error), or 127/126
    // with the reason on the err stream.
    ExecResult exec_failed(const ChildFailure& failure) {
        child_->wait_until(std::nullopt);
        if (failure.stage != kStageExec) {
            const std::string what = failure.stage == kStageChdir
                                         ? fmt::format("cannot change to directory '{}'", plan_.cwd)
                                         : std::string("cannot set up the command's standard streams");
            throw Error(fmt::format("{}: {}", what, std::strerror(failure.err)));
        }
        const std::string message =
            describe_exec_failure(exec_failure(plan_, setup_.candidates, failure.err), nullptr, plan_.cwd);
        result_.exit_code = (failure.err == ENOENT || failure.err == ENOTDIR) ? 127 : 126;
        result_.exec_error = message;
        const std::string line = "sbx: " + message + "\n";
        // One pipe (or the relay's terminal) for both streams: the line goes
        // where the command's stderr went (err_ is closed then).
        if (err_direct_) write_all(opt_.stderr_fd, line);
        else loop_.take(merged_ ? out_ : err_, line);
        end_streams();
        result_.duration_ms = elapsed_ms();
        return finish_result();
    }

    // The poll loop, until the command has ended and its pipes are drained
    // (or the drain's time is up), or the deadline.
    void pump_until_end() {
        while (true) {
            if (exited_ && !out_.open && !err_.open && !given_stream_held()) return;
            const auto now = Clock::now();
            const auto end_by = ends_by();
            if (end_by && now >= *end_by) {
                if (!exited_) result_.timed_out = true;
                return;
            }
            keep_awake_until(end_by);
            auto fds = poll_set();
            const int r = ::poll(fds.data(), fds.size(), exec::poll_timeout(now, next_wake(now, end_by)));
            if (r < 0) {
                if (errno == EINTR) continue;
                throw Error(fmt::format("poll: {}", std::strerror(errno)));
            }
            bool signalled = false;
            if (fds[0].revents & POLLIN) signalled = take_signals(end_by);
            if (fds[2].revents != 0) loop_.pump(out_);
            if (fds[3].revents != 0) loop_.pump(err_);
            serve_sinks(fds[4], fds[5]);
            if (fds[6].revents != 0) type_in();
            if (fds[7].revents != 0) pass_typed();
            // Without a pidfd (the portable backend), a SIGCHLD tells of the end.
            if (fds[1].revents != 0 || (signalled && child_->pidfd() < 0)) {
                if (const auto status = child_->try_wait()) {
                    status_ = *status;
                    exited_ = true;
                    drain_until_ = Clock::now() + kDrainAfterExit;
                }
            }
            // The command has ended, so the deadline no longer needs the loop:
            // sbx's streams are written blocking from now on, even to a slow reader.
            if (exited_) {
                loop_.finish(out_);
                loop_.finish(err_);
            }
        }
    }

    // Whatever is left of the command: its group, then every descendant
    // (including those that left the group), found in the process table:
    // stopped first, so that none forks or is orphaned out of reach while
    // the rest dies (the portable backend has no subreaper).  The helper's
    // sandbox goes first, so that it removes its placeholders.
    void end_command() {
        const pid_t pid = child_->pid();
        if (!exited_ && opt_.child_cleans_up && exec::still_runs(pid, plan_.argv[0])) kill_under_helper(*child_);
        // With a subreaper every process of the command is sbx's child or a
        // child's descendant: none left means nothing to find, and the scan
        // of the process table (about 1 ms here) is skipped.
        const auto stopped = !track_orphans_ && exited_ && !exec::has_children()
                                 ? std::vector<pid_t>{}
                                 : exec::stop_descendants(::getpid(), pid, seen_);
        ::kill(-pid, SIGKILL);
        result_.survivors = exec::kill_all_descendants(exited_ ? 0 : pid, 2000, stopped);
        if (!exited_) {
            if (const auto status = child_->wait_until(Clock::now() + std::chrono::seconds(1))) {
                status_ = *status;
                exited_ = true;
            } else {
                child_->release();  // in uninterruptible sleep, say: not waited for
            }
        }
    }

    // What is left in the pipes, then the notes and tails.
    void drain() {
        loop_.finish(out_);
        loop_.finish(err_);
        loop_.drain_now(out_, err_, std::chrono::milliseconds(20));
        end_streams();
        result_.duration_ms = elapsed_ms();
    }

    ExecResult result() {
        if (child_) result_.pids.insert(child_->pid());
        for (const auto& [pid, start] : seen_) result_.pids.insert(pid);
        if (exited_) {
            const exec::ExitStatus end = exec::exit_status_of(status_);
            result_.exit_code = end.code;
            result_.signal = end.signal;
        } else {
            result_.exit_code = 128 + SIGKILL;
            result_.signal = SIGKILL;
        }
        if (result_.timed_out) result_.exit_code = 124;
        return finish_result();
    }

private:
    void set_up_streams() {
        const bool unseen = choose_direct_streams();
        open_pipes();
        route_streams(unseen);
    }

    // Which streams the command gets as they are (sbx's own), instead of a
    // pipe; returns whether nothing but sbx's streams needs the bytes.
    bool choose_direct_streams() {
        // Text mode where nothing but sbx's streams needs the bytes (no
        // capture, no events, no tail for the denial notes, no cap on the
        // live stream): the command writes to sbx's stream itself, as fast as
        // without sbx and in the order it wrote (2>&1).  Anything else goes
        // through a pipe that sbx reads, or where nothing looks at the bytes
        // splices.
        const bool unseen = opt_.passthrough && !opt_.capture && !opt_.on_output && opt_.tail_bytes == 0 &&
                            (!opt_.cap_live || out_.cap.unlimited());
        // Handed over only where the drain can tell when the command's
        // processes let the stream go (given_stream_held): each of them is
        // found (a subreaper: without one, an orphan escapes sbx's tree) and
        // its open files seen.
        const bool hand_over = unseen && opt_.stdout_fd != STDERR_FILENO && opt_.stderr_fd != STDOUT_FILENO &&
                               !track_orphans_ && exec::open_files_visible();
        // The relay: stderr goes to the pty too when it is the same file as
        // stdout (a terminal, 2>&1), else it stays a stream of its own.
        const bool both_tty = opt_.tty && same_file(opt_.stdout_fd, opt_.stderr_fd);
        out_direct_ = hand_over && !opt_.tty && can_hand_over(opt_.stdout_fd);
        err_direct_ = hand_over && !both_tty && can_hand_over(opt_.stderr_fd);
        for (auto [direct, fd] : {std::pair{out_direct_, opt_.stdout_fd}, std::pair{err_direct_, opt_.stderr_fd}}) {
            struct stat st {};
            if (direct && ::fstat(fd, &st) == 0) given_.push_back(st);
        }
        return unseen;
    }

    // The relay's pty, the command's output pipes, the exec status pipe and
    // the report pipe.
    void open_pipes() {
        if (opt_.tty) {
            exec::PtyPair pty = exec::open_pty(STDIN_FILENO);
            master_in_ = Fd(::fcntl(pty.master.get(), F_DUPFD_CLOEXEC, 3));
            if (!master_in_.valid()) throw Error(fmt::format("cannot copy the pty's master: {}", std::strerror(errno)));
            master_ = std::move(pty.master);
            slave_ = std::move(pty.slave);
        }
        out_pipe_ = exec::make_pipe();
        err_pipe_ = exec::make_pipe();
        // Larger pipes: fewer wakeups when a lot passes through (best effort;
        // an unprivileged user is capped by /proc/sys/fs/pipe-max-size).
        if (!out_direct_) exec::grow_pipe(out_pipe_.read.get());
        status_pipe_ = exec::make_pipe();
        // The report pipe, and the exec status pipe kept off the report's number
        // (where the child puts the report's write end).
        if (plan_.report_fd >= 0) {
            report_pipe_ = exec::make_pipe();
            if (status_pipe_.write.get() == plan_.report_fd || status_pipe_.write.get() == plan_.proxy_fd) {
                status_pipe_.write = Fd(
                    ::fcntl(status_pipe_.write.get(), F_DUPFD_CLOEXEC, std::max(plan_.report_fd, plan_.proxy_fd) + 1));
                if (!status_pipe_.write.valid())
                    throw Error(fmt::format("cannot move a pipe: {}", std::strerror(errno)));
            }
            ::fcntl(report_pipe_->read.get(), F_SETFL, O_NONBLOCK);
        }
    }

    // Where each stream's bytes are read from and go to.
    void route_streams(bool unseen) {
        // Text mode writes each stream to sbx's own, --events writes both as
        // lines on stdout, --json nothing while the command runs.
        if (same_file(opt_.stdout_fd, opt_.stderr_fd)) {
            out_sink_.twin = &err_sink_;
            err_sink_.twin = &out_sink_;
            // One file for both (2>&1, a terminal): the command gets one pipe
            // for both too, as it would without sbx, so that what it writes
            // to each arrives in the order it wrote it (two pipes read in
            // turn would interleave "touch: " and a later stdout line).  Its
            // bytes are then all in the stdout stream (the kept copy, the
            // tail; the stderr tail mirrors it: finish_result).
            merged_ = (opt_.passthrough || opt_.tty) && !out_direct_ && !err_direct_;
        }
        out_.sink = opt_.passthrough || opt_.on_output ? &out_sink_ : nullptr;
        err_.sink = opt_.passthrough ? &err_sink_ : opt_.on_output ? &out_sink_ : nullptr;
        // The relay's output is read from the pty's master (no splice there).
        out_.fd = opt_.tty ? std::move(master_) : std::move(out_pipe_.read);
        err_.fd = std::move(err_pipe_.read);
        out_.live_capped = err_.live_capped = opt_.cap_live || opt_.on_output;
        out_.splice_out = err_.splice_out = unseen;
        out_.splice_front = err_.splice_front =
            opt_.passthrough && !out_.live_capped && !opt_.capture && opt_.tail_bytes > 0;
        if (opt_.tty) out_.splice_out = out_.splice_front = false;
        // Handed over: nothing to read (the pipe's write end goes at the start).
        if (out_direct_) loop_.close(out_);
        if (err_direct_ || merged_) loop_.close(err_);
    }

    void prepare_child() {
        env_ = exec::child_environment(plan_, environ);
        argv_ = plan_.argv;
        setup_.parent = ::getpid();
        for (auto& a : argv_) setup_.argv.push_back(a.data());
        setup_.argv.push_back(nullptr);
        for (auto& e : env_) setup_.envp.push_back(e.data());
        setup_.envp.push_back(nullptr);
        setup_.candidates = exec::exec_candidates(plan_.argv[0], env_);
        setup_.cwd = plan_.cwd.c_str();
        setup_.stdin_null = plan_.stdin_mode == StdinMode::Null && !opt_.tty;
        // Job control when stdin is the session's terminal; the child's group
        // takes the terminal at once when sbx is in the foreground.  The
        // relay leaves the user's terminal to sbx: the child's session has
        // the pty, and sbx follows its stops (follow_relay_stop).
        job_control_ = !opt_.tty && plan_.stdin_mode == StdinMode::Inherit && ::isatty(STDIN_FILENO) == 1 &&
                       ::tcgetsid(STDIN_FILENO) == ::getsid(0);
        setup_.take_tty = job_control_ && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
        setup_.tty_fd = slave_.valid() ? slave_.get() : -1;
        const int out_write = slave_.valid() ? slave_.get() : out_pipe_.write.get();
        setup_.out_fd = out_direct_ ? opt_.stdout_fd : out_write;
        setup_.err_fd = err_direct_ ? opt_.stderr_fd : merged_ ? out_write : err_pipe_.write.get();
        setup_.status_fd = status_pipe_.write.get();
        setup_.report_fd = report_pipe_ ? report_pipe_->write.get() : -1;
        setup_.report_target = plan_.report_fd;
        // The proxy channel above the numbers the child moves descriptors to.
        if (opt_.proxy_channel >= 0 && plan_.proxy_fd >= 0) {
            proxy_channel_ = Fd(::fcntl(opt_.proxy_channel, F_DUPFD_CLOEXEC, 10));
            if (!proxy_channel_.valid()) throw Error(fmt::format("cannot move a socket: {}", std::strerror(errno)));
        }
        setup_.pass_fd = proxy_channel_.valid() ? proxy_channel_.get() : -1;
        setup_.pass_target = plan_.proxy_fd;
        // Above every number they go to (at most 100 of them, from 3: below 128).
        for (const auto& [fd, target] : opt_.pass_fds) {
            passed_.emplace_back(::fcntl(fd, F_DUPFD_CLOEXEC, 128));
            if (!passed_.back().valid()) throw Error(fmt::format("cannot move a descriptor: {}", std::strerror(errno)));
            setup_.pass_more.emplace_back(passed_.back().get(), target);
        }
        setup_.fd_ceiling = exec::open_fd_ceiling();
        setup_.mask = &signals_.old_mask();
    }

    // When the loop must wake: the end, or without a subreaper the next note
    // of the command's processes (taken here when due).
    std::optional<Clock::time_point> next_wake(Clock::time_point now, std::optional<Clock::time_point> end_by) {
        // The relay in the background: raw again (and reading) once sbx has
        // the terminal's foreground, looked at now and then.
        if (raw_ && !raw_->raw() && !exited_ && !raw_->resume()) {
            const auto check = now + kForegroundCheckEvery;
            if (!end_by || check < *end_by) end_by = check;
        }
        if (exited_ && !given_.empty() && end_by) return std::min(*end_by, next_holder_check_);
        if (!track_orphans_ || exited_) return end_by;
        if (now >= next_note_) {
            exec::remember_descendants(::getpid(), child_->pid(), seen_);
            next_note_ = now + kNoteEvery;
        }
        return end_by && *end_by < next_note_ ? end_by : std::optional(next_note_);
    }

    // Once the command has exited: whether one of its processes still has a
    // stream that was given to it (sbx's own stdout or stderr) open.  The
    // drain waits for that as for a pipe's end, looking every 10 ms (taken
    // as still held in between).
    bool given_stream_held() {
        if (given_.empty()) return false;
        const auto now = Clock::now();
        if (now < next_holder_check_) return true;
        next_holder_check_ = now + kHolderCheckEvery;
        // With a subreaper each of them is a descendant of sbx's: none left, none holds it.
        if (!exec::has_children()) return false;
        for (const auto& e : exec::descendant_entries(::getpid())) {
            if (e.state == 'Z') continue;
            for (const auto& file : given_)
                if (exec::has_open(e.pid, file)) return true;
        }
        return false;
    }

    // The deadline, or once the command has exited the drain's end if sooner.
    std::optional<Clock::time_point> ends_by() const {
        std::optional<Clock::time_point> end_by = deadline_;
        if (exited_ && (!end_by || *drain_until_ < *end_by)) end_by = drain_until_;
        return end_by;
    }

    // The drain's end holds while sbx is stopped too (best effort, tried
    // once: a timer that cannot be had leaves it to the poll's timeout).
    void keep_awake_until(std::optional<Clock::time_point> end_by) {
        if (!end_by || end_by == wake_at_) return;
        wake_at_ = end_by;
        try {
            if (!wake_) wake_.emplace();
            wake_->at(*end_by);
        } catch (const Error&) {
        }
    }

    // The signalfd, the child's pidfd, the command's pipes, sbx's streams.
    // sbx's own streams are watched for POLLOUT while a reader there lags
    // behind (the pipes feeding it are not read meanwhile), else only for
    // POLLERR/POLLHUP (events 0): when the reader of a pipe there goes away,
    // the command's pipe is closed in text mode so that it sees SIGPIPE, as
    // it would in a plain shell pipeline, even while sbx is discarding past
    // the cap.
    std::array<pollfd, 8> poll_set() const {
        auto reading = [](const Pump& p) { return p.readable() ? p.fd.get() : -1; };
        auto watching = [&](const Sink& s) {
            const bool fed = (out_.open && out_.sink == &s) || (err_.open && err_.sink == &s);
            return pollfd{fed && !s.gone ? s.write_fd() : -1, static_cast<short>(s.waiting() ? POLLOUT : 0), 0};
        };
        return {pollfd{signals_.fd(), POLLIN, 0},
                pollfd{exited_ ? -1 : child_->pidfd(), POLLIN, 0},
                pollfd{reading(out_), POLLIN, 0},
                pollfd{reading(err_), POLLIN, 0},
                watching(out_sink_),
                watching(err_sink_),
                pollfd{typing() ? STDIN_FILENO : -1, POLLIN, 0},
                pollfd{typed_.empty() ? -1 : master_in_.get(), POLLOUT, 0}};
    }

    // The relay reads what is typed while the user's terminal is sbx's (raw,
    // in the foreground), the command runs, and the pty keeps up.
    bool typing() const {
        return raw_ && raw_->raw() && typing_open_ && !exited_ && master_in_.valid() && typed_.size() < kTypedLimit;
    }

    // What was typed, on to the pty as far as it takes it now.
    void type_in() {
        char buffer[4096];
        const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (n > 0) typed_.append(buffer, static_cast<std::size_t>(n));
        else if (n == 0 || (errno != EINTR && errno != EAGAIN)) typing_open_ = false;
        pass_typed();
    }

    void pass_typed() {
        if (typed_.empty()) return;
        const ssize_t w = ::write(master_in_.get(), typed_.data(), typed_.size());
        if (w > 0) typed_.erase(0, static_cast<std::size_t>(w));
        else if (w < 0 && errno != EINTR && errno != EAGAIN) typed_.clear();  // the pty is gone
    }

    // The forwarded signals go to the command's group; a SIGCHLD reaps
    // orphans and follows a stop of the child.  Whether a SIGCHLD came.
    bool take_signals(std::optional<Clock::time_point> end_by) {
        const pid_t pid = child_->pid();
        bool child_died = false;
        while (const auto si = signals_.next()) {
            if (si->signo == SIGCHLD) child_died = true;
            // The timer's SIGCONT (the deadline, the drain's end) is no fg
            // or bg: the loop ends the run without continuing the command.
            else if (si->signo == SIGCONT && si->timer) continue;
            else if (si->signo == SIGCONT && raw_) continue_relay();
            else if (si->signo == SIGCONT && job_control_) continue_child(pid, terminal_);
            else if (si->signo == SIGWINCH) exec::copy_window_size(STDIN_FILENO, master_in_.get());
            else if (si->signo == SIGTSTP) stop_relay(false);
            else forward(pid, si->signo);
        }
        if (child_died) reap_orphans(pid);
        if (child_died && job_control_) follow_stop(*child_, terminal_, end_by);
        if (child_died && raw_ && child_->take_stop()) stop_relay(true);
        return child_died;
    }

    // The relay's job control.  The command stopped (^Z reached its group
    // through the pty; the helper stops with it): sbx stops its own job with
    // the user's terminal back in the mode it had, so that the shell
    // prompts.  A SIGTSTP sent to sbx itself stops sbx alone (the command
    // runs on until its output fills the pty).  When sbx does not stop (its
    // group orphaned from its shell), it goes on at once.
    void stop_relay(bool whole_job) {
        raw_->pause();
        exec::stop_self(whole_job);
        sigset_t pending;
        if (::sigpending(&pending) == 0 && !sigismember(&pending, SIGCONT)) continue_relay();
    }

    // Continued (fg, bg): raw again when sbx has the terminal's foreground,
    // the window size again (it may have changed meanwhile), and the
    // command continued.
    void continue_relay() {
        raw_->resume();
        exec::copy_window_size(STDIN_FILENO, master_in_.get());
        ::kill(-child_->pid(), SIGCONT);
    }

    // A signal for the command's group.  Without a subreaper its processes
    // are noted first: the signal may end a parent whose orphans must still
    // be found at the end.
    void forward(pid_t group, int signo) {
        if (track_orphans_ && !exited_) exec::remember_descendants(::getpid(), group, seen_);
        ::kill(-group, signo);
    }

    // sbx's streams: a reader gone closes the pipes feeding it (text mode);
    // room again flushes what is pending.
    void serve_sinks(const pollfd& out, const pollfd& err) {
        for (auto [f, s] : {std::pair{out, &out_sink_}, std::pair{err, &err_sink_}}) {
            if (f.revents & (POLLERR | POLLHUP | POLLNVAL)) {
                loop_.lost(*s);
                for (Pump* p : {&out_, &err_})
                    if (opt_.passthrough && p->sink == s) loop_.close(*p);
            } else if (f.revents & POLLOUT) {
                loop_.flush(*s);
            }
        }
    }

    // The end of the run: the notes and tails, once what is pending was
    // written (stdout's note goes to stderr, after stdout's head).
    void end_streams() {
        for (Pump* p : {&out_, &err_}) {
            loop_.finish(out_sink_);
            loop_.finish(err_sink_);
            loop_.end_stream(*p, opt_.passthrough ? &err_sink_ : nullptr);
        }
        loop_.finish(out_sink_);
        loop_.finish(err_sink_);
    }

    std::int64_t elapsed_ms() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
    }

    ExecResult finish_result() {
        result_.stderr_mid_line =
            opt_.passthrough && (err_direct_ ? file_ends_mid_line(opt_.stderr_fd) : err_sink_.last != '\n');
        fill(result_.out, out_.cap);
        fill(result_.err, err_.cap);
        if (report_pipe_) result_.report = read_available(report_pipe_->read.get());
        if (opt_.tail_bytes > 0) {
            for (auto* r : {&result_.out, &result_.err})
                if (r->tail.size() > opt_.tail_bytes) r->tail.erase(0, r->tail.size() - opt_.tail_bytes);
            // One pipe for both: the end of stderr is somewhere in stdout's.
            if (merged_) result_.err.tail = result_.out.tail;
        }
        return std::move(result_);
    }

    const ExecPlan& plan_;
    const SuperviseOptions& opt_;
    const bool track_orphans_;
    exec::SignalWatch signals_;
    bool out_direct_ = false;
    bool err_direct_ = false;
    bool merged_ = false;  // stdout and stderr one file: one pipe for both
    exec::Pipe out_pipe_, err_pipe_, status_pipe_;
    std::optional<exec::Pipe> report_pipe_;
    Fd proxy_channel_;        // a copy of opt_.proxy_channel for the child, at 10 or above
    std::vector<Fd> passed_;  // copies of opt_.pass_fds for the child, at 128 or above
    std::vector<std::string> env_;
    std::vector<std::string> argv_;
    ChildSetup setup_{};
    bool job_control_ = false;
    TerminalGuard terminal_;
    // The relay (opt_.tty): the pty's master (moved to out_ once set up), a
    // copy to write what is typed to, the slave until the child has it, the
    // user's terminal in raw mode, and what was typed and not yet taken.
    Fd master_, master_in_, slave_;
    std::optional<exec::RawTerminal> raw_;
    std::string typed_;
    bool typing_open_ = true;  // sbx's stdin has not ended
    Clock::time_point start_{};
    std::optional<Clock::time_point> deadline_;
    std::optional<exec::WakeTimer> wake_;
    std::optional<Clock::time_point> wake_at_;
    std::optional<exec::Child> child_;
    bool exited_ = false;
    siginfo_t status_{};
    std::optional<Clock::time_point> drain_until_;
    exec::SeenProcesses seen_;
    Clock::time_point next_note_{};
    std::vector<struct stat> given_;  // the streams given to the command itself
    Clock::time_point next_holder_check_{};
    ExecResult result_;
    Loop loop_;
    Sink out_sink_, err_sink_;
    Pump out_, err_;
};

}  // namespace

ExecResult supervise(const ExecPlan& plan, const SuperviseOptions& opt) {
    if (plan.argv.empty()) throw Error("no command to run");
    // Orphaned descendants (double-forked, setsid) are reparented to sbx, so
    // that they can be found and killed.
    const bool subreaper = exec::become_subreaper();
    Run run(plan, opt, !subreaper);  // the signals and the streams
    run.start_child();
    if (const auto failure = run.wait_for_exec()) return run.exec_failed(*failure);
    run.pump_until_end();
    run.end_command();
    run.drain();
    return run.result();
}

}  // namespace sbx
