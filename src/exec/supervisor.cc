// The supervisor's poll loop: one loop over the command's stdout and stderr
// pipes, a pidfd for the child and a signalfd for the forwarded signals, with
// the deadline as the poll timeout.
#include "exec/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "exec/output_cap.h"
#include "exec/process.h"
#include "platform/helper_status.h"
#include "util/clone_stack.h"
#include "util/error.h"

extern char** environ;

namespace sbx {

namespace {

using Clock = std::chrono::steady_clock;
using exec::Fd;

constexpr std::array kForwarded{SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr auto kDrainAfterExit = std::chrono::seconds(2);
constexpr std::size_t kReadBuffer = 256 * 1024;
constexpr std::size_t kSpliceChunk = 1 << 20;
// What a helper gets at the timeout to remove its placeholders and end (it
// needs about a millisecond): short enough that sbx still returns within
// 100 ms of the deadline when the helper cannot (it is then killed, and its
// placeholders wait for the next run there).
constexpr auto kCleanupGrace = std::chrono::milliseconds(50);
// The most sbx waits, when the command stops, for the rest of it to act on
// the stop signals it was sent (await_stop_signals): a process that cannot
// run for that long (uninterruptible sleep) does not hold the job's stop.
constexpr auto kStopSettle = std::chrono::seconds(1);
// Shown bytes a sink holds for a slow reader before the pipes feeding it
// are left unread.
constexpr std::size_t kPendingLimit = 256 * 1024;

// Blocks the forwarded signals and SIGCONT (read through a signalfd) and SIGTTOU, ignores
// SIGPIPE (a closed sbx stdout is seen as EPIPE) and makes SIGCHLD default so
// that the child is not auto-reaped; restores all of it on destruction.
class SignalGuard {
public:
    SignalGuard() {
        sigset_t block;
        sigemptyset(&block);
        for (int s : kForwarded) sigaddset(&block, s);
        sigaddset(&block, SIGCONT);  // it still continues sbx; the signalfd tells of it
        sigaddset(&block, SIGTTOU);
        sigaddset(&block, SIGCHLD);
        if (::sigprocmask(SIG_BLOCK, &block, &old_mask_) != 0)
            throw Error(fmt::format("cannot block signals: {}", std::strerror(errno)));
        struct sigaction ign {};
        ign.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ign, &old_pipe_);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        ::sigaction(SIGCHLD, &dfl, &old_chld_);
    }
    ~SignalGuard() {
        ::sigaction(SIGCHLD, &old_chld_, nullptr);
        ::sigaction(SIGPIPE, &old_pipe_, nullptr);
        ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    }
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;
    const sigset_t& old_mask() const { return old_mask_; }

private:
    sigset_t old_mask_{};
    struct sigaction old_pipe_ {};
    struct sigaction old_chld_ {};
};

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
    ~TerminalGuard() {
        if (took_ && (group_ == 0 || ::tcgetpgrp(STDIN_FILENO) == group_))
            ::tcsetpgrp(STDIN_FILENO, ::getpgrp());  // SIGTTOU is blocked
    }
    TerminalGuard(const TerminalGuard&) = delete;
    TerminalGuard& operator=(const TerminalGuard&) = delete;

private:
    bool took_ = false;
    pid_t group_ = 0;  // the command's process group, once it exists
};

// A POSIX timer that sends sbx SIGCONT at a time of Clock, so that the
// deadline (and the end of the drain) holds while sbx is stopped: a SIGCONT
// continues a stopped process when it is sent, even blocked, and the loop
// then finds the time passed.  The signalfd tells of it with SI_TIMER.
// steady_clock is CLOCK_MONOTONIC (libstdc++ on Linux), as the timer's.
class WakeTimer {
public:
    WakeTimer() {
        sigevent ev{};
        ev.sigev_notify = SIGEV_SIGNAL;
        ev.sigev_signo = SIGCONT;
        if (::timer_create(CLOCK_MONOTONIC, &ev, &id_) != 0)
            throw Error(fmt::format("cannot create the deadline's timer: {}", std::strerror(errno)));
    }
    ~WakeTimer() { ::timer_delete(id_); }
    WakeTimer(const WakeTimer&) = delete;
    WakeTimer& operator=(const WakeTimer&) = delete;

    // Fires once at t (at once if t has passed); replaces an earlier time.
    bool at(Clock::time_point t) {
        using namespace std::chrono;
        const auto ns = std::max<std::int64_t>(duration_cast<nanoseconds>(t.time_since_epoch()).count(), 1);
        itimerspec spec{};
        spec.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
        spec.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
        return ::timer_settime(id_, TIMER_ABSTIME, &spec, nullptr) == 0;
    }

private:
    timer_t id_{};
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
    int out_fd;
    int err_fd;
    int status_fd;
    int report_fd;     // the write end of the report pipe, or -1
    int report_target; // where the program expects it (never status_fd)
    const sigset_t* mask;
    CloneStack* stack;  // ASan's view of the child's stack (empty without ASan)
};

enum Stage : int { kStageChdir = 1, kStageStdin = 2, kStageExec = 3 };

[[noreturn]] void child_fail(const ChildSetup& s, int stage, int err) {
    const int msg[2] = {stage, err};
    ssize_t ignored = ::write(s.status_fd, msg, sizeof msg);
    (void)ignored;
    ::_exit(stage == kStageExec ? (err == ENOENT || err == ENOTDIR ? 127 : 126) : 125);
}

[[noreturn]] void child_main(const ChildSetup& s) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != s.parent) ::_exit(125);
    ::setpgid(0, 0);
    if (s.take_tty) ::tcsetpgrp(STDIN_FILENO, ::getpid());  // SIGTTOU is still blocked here
    if (s.stdin_null) {
        const int fd = ::open("/dev/null", O_RDONLY);
        if (fd < 0 || ::dup2(fd, STDIN_FILENO) < 0) child_fail(s, kStageStdin, errno);
        if (fd != STDIN_FILENO) ::close(fd);
    }
    if (::dup2(s.out_fd, STDOUT_FILENO) < 0 || ::dup2(s.err_fd, STDERR_FILENO) < 0)
        child_fail(s, kStageStdin, errno);
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
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        for (int fd = 3; fd < 65536; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    // The report pipe stays open across exec, at the number the program was given.
    if (s.report_fd >= 0) {
        if (s.report_fd == s.report_target) {
            if (::fcntl(s.report_fd, F_SETFD, 0) != 0) child_fail(s, kStageStdin, errno);
        } else if (::dup2(s.report_fd, s.report_target) < 0) {
            child_fail(s, kStageStdin, errno);
        }
    }
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

// What a non-blocking pipe holds now (its writers are gone or done), up to 64 KiB.
std::string read_available(int fd) {
    std::string text;
    char buffer[4096];
    while (text.size() < 65536) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    return text;
}

// Big enough for child_main (a few hundred bytes of frames and execve).
constexpr std::size_t kChildStack = 64 * 1024;

int child_entry(void* arg) {
    const auto& setup = *static_cast<const ChildSetup*>(arg);
    setup.stack->in_child();
    child_main(setup);
}

// A file description of sbx's own, with O_NONBLOCK, on the pipe or terminal
// that fd writes to, so that a reader who stops reading never blocks the loop
// (the deadline and the signals stay served); the caller's description keeps
// its flags.  Invalid where it cannot be had (a regular file, which does not
// stall; a socket; no /proc; a pipe of another user): writes there block.
Fd nonblocking_copy(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) return Fd();
    return Fd(::open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
}

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
            own = nonblocking_copy(fd);
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
    OutputCap cap;
    StreamResult* result;
    Sink* sink;  // where the shown bytes go (nullptr: captured only)
    bool splice_out = false;
    bool open = true;
    bool ended = false;  // its omission note and tail were given

    // Read only while its sink keeps up: a command whose output waits blocks
    // on its full pipe, as it would writing to sbx's stream itself.
    bool readable() const { return open && !(sink && sink->full()); }
};

class Loop {
public:
    explicit Loop(const SuperviseOptions& opt) : opt_(opt), buf_(new char[kReadBuffer]) {}

    // The shown part of a chunk: to the capture and to sbx's stream (as it
    // is, or as the callback's event lines).
    void emit(Pump& p, std::string_view shown) {
        if (shown.empty()) return;
        if (opt_.capture) p.result->shown.append(shown);
        if (!p.sink) return;
        if (opt_.on_output) {
            queue(*p.sink, opt_.on_output(p.which, shown));
        } else if (p.open) {
            queue(*p.sink, shown);
            // sbx's own stream is gone: like a shell pipeline, the command's
            // pipe closes too, so that its next write fails (SIGPIPE).
            if (p.sink->gone) close(p);
        }
    }

    void queue(Sink& s, std::string_view data) {
        if (s.gone) return;
        if (s.sent > 0 && s.sent >= s.pending.size() / 2) {
            s.pending.erase(0, s.sent);  // now and then, not at every partial write
            s.sent = 0;
        }
        s.pending.append(data);
        if (!data.empty()) {
            s.last = data.back();
            if (s.twin) s.twin->last = s.last;
        }
        flush(s);
    }

    // The end of a stream (the command has ended): the note where output
    // was omitted (text mode: on `notes`, sbx's stderr, on a line of its
    // own; --events: on_omitted), then the tail.
    void end_stream(Pump& p, Sink* notes) {
        if (p.ended) return;
        p.ended = true;
        if (p.sink && p.sink->gone) return;  // nothing more can be shown
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
        const std::string_view tail = p.cap.tail();
        if (tail.empty()) return;
        if (opt_.capture) p.result->shown.append(tail);
        if (!p.sink) return;
        if (opt_.on_output) queue(*p.sink, opt_.on_output(p.which, tail));
        else queue(*p.sink, tail);
    }

    // Writes what sbx's stream takes now; the rest waits for POLLOUT.
    void flush(Sink& s) {
        s.stalled = false;
        while (s.sent < s.pending.size()) {
            const auto t = Clock::now();
            const ssize_t w = ::write(s.target(), s.pending.data() + s.sent, s.pending.size() - s.sent);
            writing_ += Clock::now() - t;
            if (w < 0) {
                if (errno == EINTR) continue;
                if (errno != EAGAIN) lost(s);
                return;
            }
            s.sent += static_cast<std::size_t>(w);
        }
        s.drop();
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
        ssize_t n = -1;
        // Capped, every byte is read: the tail and the line counts need them.
        if (opt_.tail_bytes > 0 || !p.splice_out) {
            n = ::read(p.fd.get(), buf_.get(), kReadBuffer);
            if (n > 0) {
                const std::string_view chunk(buf_.get(), static_cast<std::size_t>(n));
                if (opt_.tail_bytes > 0) keep_tail(*p.result, chunk);
                emit(p, chunk.substr(0, p.cap.admit(chunk)));
            }
        } else {
            Sink& s = *p.sink;
            const int to = s.target();
            const auto t = Clock::now();
            n = ::splice(p.fd.get(), nullptr, to, nullptr, kSpliceChunk,
                         SPLICE_F_MOVE | (to == s.fd ? 0U : SPLICE_F_NONBLOCK));
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
                p.splice_out = false;  // not spliceable (a terminal, O_APPEND): read and write
                return pump(p);
            }
            if (n > 0) p.cap.admit_unseen(static_cast<std::uint64_t>(n));
        }
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) close(p);
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

// Whether pid still runs the file at path (it has not exec'd something else).
bool still_runs(pid_t pid, const std::string& path) {
    struct stat running {}, file {};
    return ::stat(fmt::format("/proc/{}/exe", pid).c_str(), &running) == 0 && ::stat(path.c_str(), &file) == 0 &&
           running.st_dev == file.st_dev && running.st_ino == file.st_ino;
}

// SIGKILL to every descendant of the helper (pid 1 of its sandbox takes the
// rest of the sandbox with it), again as new ones appear, until the helper
// has ended by itself or the grace is over.  A helper stopped along with its
// command is continued, or it could not clean up.
void kill_under_helper(pid_t helper, const Fd& pidfd) {
    const auto until = Clock::now() + kCleanupGrace;
    do {
        for (pid_t d : exec::descendants_of(helper)) ::kill(d, SIGKILL);
        ::kill(helper, SIGCONT);
        pollfd p{pidfd.get(), POLLIN, 0};
        if (::poll(&p, 1, 5) > 0) return;
    } while (Clock::now() < until);
}

int ms_until(Clock::time_point now, Clock::time_point t) {
    if (t <= now) return 0;
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - now).count();
    return static_cast<int>((us + 999) / 1000);
}

// Reaps the zombies of orphaned descendants (reparented to sbx, the
// subreaper) so that a long run does not pile them up; the main child is left
// to its pidfd.
void reap_orphans(pid_t main_child) {
    while (true) {
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
        if (info.si_pid == main_child) return;
        ::waitpid(info.si_pid, nullptr, WNOHANG);
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

void follow_stop(const Fd& pidfd, pid_t group, TerminalGuard& terminal, std::optional<Clock::time_point> end_by) {
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.get()), &info, WSTOPPED | WNOHANG) != 0 ||
        info.si_pid == 0 || info.si_code != CLD_STOPPED)
        return;
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
    // Stopped and continued, sbx finds the SIGCONT pending (it is blocked).
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
bool can_hand_over(int fd) {
    return ::fcntl(fd, F_GETFD) != -1 && ::isatty(fd) == 0;
}

// Whether two fds write to the same file (a terminal, a pipe, 2>&1).
bool same_file(int a, int b) {
    struct stat sa {}, sb {};
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

ExecResult supervise(const ExecPlan& plan, const SuperviseOptions& opt) {
    if (plan.argv.empty()) throw Error("no command to run");
    // Orphaned descendants (double-forked, setsid) are reparented to sbx, so
    // that they can be found and killed.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);

    SignalGuard signals;
    sigset_t watched;
    sigemptyset(&watched);
    for (int s : kForwarded) sigaddset(&watched, s);
    sigaddset(&watched, SIGCONT);
    sigaddset(&watched, SIGCHLD);  // orphans reparented to sbx are reaped as they die
    Fd sigfd(::signalfd(-1, &watched, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sigfd.valid()) throw Error(fmt::format("cannot create a signalfd: {}", std::strerror(errno)));

    // Uncapped text mode where nothing needs to see the bytes (no capture,
    // no events, no tail for the denial notes): the command writes to sbx's
    // stream itself, as fast as without sbx.  Anything else goes through a
    // pipe that sbx reads.
    const bool hand_over = opt.passthrough && !opt.capture && !opt.on_output && opt.tail_bytes == 0 &&
                           opt.caps.max_bytes == 0 && opt.caps.max_lines == 0 &&
                           opt.stdout_fd != STDERR_FILENO && opt.stderr_fd != STDOUT_FILENO;
    const bool out_direct = hand_over && can_hand_over(opt.stdout_fd);
    const bool err_direct = hand_over && can_hand_over(opt.stderr_fd);
    auto out_pipe = exec::make_pipe();
    auto err_pipe = exec::make_pipe();
    // Larger pipes: fewer wakeups when a lot passes through (best effort;
    // an unprivileged user is capped by /proc/sys/fs/pipe-max-size).
    if (!out_direct) ::fcntl(out_pipe.read.get(), F_SETPIPE_SZ, 1 << 20);
    auto status_pipe = exec::make_pipe();
    // The report pipe, and the exec status pipe kept off the report's number
    // (where the child puts the report's write end).
    std::optional<exec::Pipe> report_pipe;
    if (plan.report_fd >= 0) {
        report_pipe = exec::make_pipe();
        if (status_pipe.write.get() == plan.report_fd) {
            status_pipe.write = Fd(::fcntl(status_pipe.write.get(), F_DUPFD_CLOEXEC, plan.report_fd + 1));
            if (!status_pipe.write.valid()) throw Error(fmt::format("cannot move a pipe: {}", std::strerror(errno)));
        }
        ::fcntl(report_pipe->read.get(), F_SETFL, O_NONBLOCK);
    }

    // Everything the child needs, built before the clone.
    std::vector<std::string> env = exec::child_environment(plan, environ);
    std::vector<std::string> argv_copy = plan.argv;
    ChildSetup setup{};
    setup.parent = ::getpid();
    for (auto& a : argv_copy) setup.argv.push_back(a.data());
    setup.argv.push_back(nullptr);
    for (auto& e : env) setup.envp.push_back(e.data());
    setup.envp.push_back(nullptr);
    setup.candidates = exec::exec_candidates(plan.argv[0], env);
    setup.cwd = plan.cwd.c_str();
    setup.stdin_null = plan.stdin_mode == StdinMode::Null;
    // Job control when stdin is the session's terminal; the child's group
    // takes the terminal at once when sbx is in the foreground.
    const bool job_control = plan.stdin_mode == StdinMode::Inherit && ::isatty(STDIN_FILENO) == 1 &&
                             ::tcgetsid(STDIN_FILENO) == ::getsid(0);
    setup.take_tty = job_control && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
    setup.out_fd = out_direct ? opt.stdout_fd : out_pipe.write.get();
    setup.err_fd = err_direct ? opt.stderr_fd : err_pipe.write.get();
    setup.status_fd = status_pipe.write.get();
    setup.report_fd = report_pipe ? report_pipe->write.get() : -1;
    setup.report_target = plan.report_fd;
    setup.mask = &signals.old_mask();

    TerminalGuard terminal;
    const auto start = Clock::now();
    const std::optional<Clock::time_point> deadline =
        opt.timeout ? std::optional(start + *opt.timeout) : std::nullopt;
    // With a timeout, the timer is armed before the command starts (no
    // timeout, no timer: the drain after exit makes one if it has to wait).
    std::optional<WakeTimer> wake;
    std::optional<Clock::time_point> wake_at;
    if (deadline) {
        wake.emplace();
        if (!wake->at(*deadline))
            throw Error(fmt::format("cannot arm the deadline's timer: {}", std::strerror(errno)));
        wake_at = deadline;
    }
    // The child runs on a stack of its own inside sbx's memory (CLONE_VM)
    // while sbx waits (CLONE_VFORK) until it has exec'd or exited, as
    // posix_spawn does: no page tables are copied and none torn down again.
    // It only makes async-signal-safe calls and writes no memory of sbx's
    // (its signal handlers are its own: CLONE_SIGHAND is not set), but for
    // clone_stack in an ASan build (util/clone_stack.h).
    auto child_stack = std::make_unique_for_overwrite<char[]>(kChildStack);
    CloneStack clone_stack(child_stack.get(), kChildStack);
    setup.stack = &clone_stack;
    clone_stack.before_clone();
    const pid_t pid = ::clone(child_entry, child_stack.get() + kChildStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
    clone_stack.after_clone();
    if (pid < 0) throw Error(fmt::format("cannot start the command: clone: {}", std::strerror(errno)));

    // The child made its own process group before exec (CLONE_VFORK: sbx
    // resumes only after that).
    terminal.group(pid);
    if (setup.take_tty) terminal.took();
    Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd.valid()) {
        const int saved = errno;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        throw Error(fmt::format("cannot watch the command: pidfd_open: {}", std::strerror(saved)));
    }
    out_pipe.write.reset();
    err_pipe.write.reset();
    status_pipe.write.reset();
    if (report_pipe) report_pipe->write.reset();

    // Did exec succeed?  EOF means yes (the pipe closed at exec).
    int failure[2] = {0, 0};
    ssize_t got;
    do {
        got = ::read(status_pipe.read.get(), failure, sizeof failure);
    } while (got < 0 && errno == EINTR);
    status_pipe.read.reset();

    ExecResult result;
    result.caps = opt.caps;
    Loop loop(opt);
    // Text mode writes each stream to sbx's own, --events writes both as
    // lines on stdout, --json nothing while the command runs.
    Sink out_sink{opt.stdout_fd}, err_sink{opt.stderr_fd};
    if (same_file(opt.stdout_fd, opt.stderr_fd)) {
        out_sink.twin = &err_sink;
        err_sink.twin = &out_sink;
    }
    Sink* const out_to = opt.passthrough || opt.on_output ? &out_sink : nullptr;
    Sink* const err_to = opt.passthrough ? &err_sink : opt.on_output ? &out_sink : nullptr;
    Pump out{Stream::Stdout, std::move(out_pipe.read), OutputCap(opt.caps), &result.out, out_to};
    Pump err{Stream::Stderr, std::move(err_pipe.read), OutputCap(opt.caps), &result.err, err_to};
    const bool splice_ok =
        opt.passthrough && !opt.capture && !opt.on_output && opt.tail_bytes == 0 && out.cap.unlimited();
    out.splice_out = err.splice_out = splice_ok;
    // Handed over: nothing to read (the pipe's write end is gone already).
    if (out_direct) loop.close(out);
    if (err_direct) loop.close(err);
    // The end of the run: the notes and tails, once what is pending was
    // written (stdout's note goes to stderr, after stdout's head).
    auto end_streams = [&] {
        for (Pump* p : {&out, &err}) {
            loop.finish(out_sink);
            loop.finish(err_sink);
            loop.end_stream(*p, opt.passthrough ? &err_sink : nullptr);
        }
        loop.finish(out_sink);
        loop.finish(err_sink);
    };

    if (got == static_cast<ssize_t>(sizeof failure)) {
        siginfo_t info{};
        ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.get()), &info, WEXITED);
        if (failure[0] != kStageExec) {
            const std::string what = failure[0] == kStageChdir
                                         ? fmt::format("cannot change to directory '{}'", plan.cwd)
                                         : std::string("cannot set up the command's standard streams");
            throw Error(fmt::format("{}: {}", what, std::strerror(failure[1])));
        }
        const std::string message = describe_exec_failure(exec_failure(plan, setup.candidates, failure[1]), nullptr, plan.cwd);
        result.exit_code = (failure[1] == ENOENT || failure[1] == ENOTDIR) ? 127 : 126;
        result.exec_error = message;
        const std::string line = "sbx: " + message + "\n";
        if (err_direct) write_all(opt.stderr_fd, line);
        else loop.emit(err, line.substr(0, err.cap.admit(line)));
        end_streams();
        result.stderr_mid_line = opt.passthrough && err_sink.last != '\n';
        fill(result.out, out.cap);
        fill(result.err, err.cap);
        if (report_pipe) result.report = read_available(report_pipe->read.get());
        result.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        return result;
    }

    std::optional<Clock::time_point> drain_until;
    bool exited = false;
    siginfo_t status{};

    while (true) {
        if (exited && !out.open && !err.open) break;
        const auto now = Clock::now();
        std::optional<Clock::time_point> end_by = deadline;
        if (exited && (!end_by || *drain_until < *end_by)) end_by = drain_until;
        if (end_by && now >= *end_by) {
            if (!exited) result.timed_out = true;
            break;
        }
        // The drain's end holds while sbx is stopped too (best effort, tried
        // once: a timer that cannot be had leaves it to the poll's timeout).
        if (end_by && end_by != wake_at) {
            wake_at = end_by;
            try {
                if (!wake) wake.emplace();
                wake->at(*end_by);
            } catch (const Error&) {
            }
        }
        // sbx's own streams are watched too: for POLLOUT while a reader there
        // lags behind (the pipes feeding it are not read meanwhile), else
        // only for POLLERR/POLLHUP (events 0): when the reader of a pipe there
        // goes away, the command's pipe is closed in text mode so that it sees
        // SIGPIPE, as it would in a plain shell pipeline, even while sbx is
        // discarding past the cap.
        auto reading = [](const Pump& p) { return p.readable() ? p.fd.get() : -1; };
        auto watching = [&](const Sink& s) {
            const bool fed = (out.open && out.sink == &s) || (err.open && err.sink == &s);
            return pollfd{fed && !s.gone ? s.write_fd() : -1, static_cast<short>(s.waiting() ? POLLOUT : 0), 0};
        };
        std::array<pollfd, 6> fds{pollfd{sigfd.get(), POLLIN, 0}, pollfd{exited ? -1 : pidfd.get(), POLLIN, 0},
                                  pollfd{reading(out), POLLIN, 0},
                                  pollfd{reading(err), POLLIN, 0},
                                  watching(out_sink),
                                  watching(err_sink)};
        const int r = ::poll(fds.data(), fds.size(), end_by ? ms_until(now, *end_by) : -1);
        if (r < 0) {
            if (errno == EINTR) continue;
            throw Error(fmt::format("poll: {}", std::strerror(errno)));
        }
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo si{};
            bool child_died = false;
            while (::read(sigfd.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
                if (si.ssi_signo == SIGCHLD) child_died = true;
                // The timer's SIGCONT (the deadline, the drain's end) is no fg
                // or bg: the loop ends the run without continuing the command.
                else if (si.ssi_signo == SIGCONT && si.ssi_code == SI_TIMER) continue;
                else if (si.ssi_signo == SIGCONT && job_control) continue_child(pid, terminal);
                else ::kill(-pid, static_cast<int>(si.ssi_signo));
            }
            if (child_died) reap_orphans(pid);
            if (child_died && job_control) follow_stop(pidfd, pid, terminal, end_by);
        }
        if (fds[2].revents != 0) loop.pump(out);
        if (fds[3].revents != 0) loop.pump(err);
        for (auto [f, s] : {std::pair{fds[4], &out_sink}, std::pair{fds[5], &err_sink}}) {
            if (f.revents & (POLLERR | POLLHUP | POLLNVAL)) {
                loop.lost(*s);
                for (Pump* p : {&out, &err})
                    if (opt.passthrough && p->sink == s) loop.close(*p);
            } else if (f.revents & POLLOUT) {
                loop.flush(*s);
            }
        }
        if (fds[1].revents != 0) {
            if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.get()), &status,
                         WEXITED | WNOHANG) == 0 &&
                status.si_pid != 0) {
                exited = true;
                drain_until = Clock::now() + kDrainAfterExit;
            }
        }
        // The command has ended, so the deadline no longer needs the loop:
        // sbx's streams are written blocking from now on, even to a slow reader.
        if (exited) {
            loop.finish(out);
            loop.finish(err);
        }
    }

    // Whatever is left of the command: its group, then every descendant
    // (including those that left the group), found through /proc.  The
    // helper's sandbox goes first, so that it removes its placeholders.
    if (!exited && opt.child_cleans_up && still_runs(pid, plan.argv[0])) kill_under_helper(pid, pidfd);
    ::kill(-pid, SIGKILL);
    result.survivors = exec::kill_all_descendants(exited ? 0 : pid, 2000);
    if (!exited) {
        pollfd p{pidfd.get(), POLLIN, 0};
        ::poll(&p, 1, 1000);
        if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.get()), &status,
                     WEXITED | WNOHANG) == 0 &&
            status.si_pid != 0)
            exited = true;
    }
    loop.finish(out);
    loop.finish(err);
    loop.drain_now(out, err, std::chrono::milliseconds(20));
    end_streams();
    result.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();

    if (exited && (status.si_code == CLD_KILLED || status.si_code == CLD_DUMPED)) {
        result.signal = status.si_status;
        result.exit_code = 128 + status.si_status;
    } else if (exited) {
        result.exit_code = status.si_status;
    } else {
        result.exit_code = 128 + SIGKILL;
        result.signal = SIGKILL;
    }
    if (result.timed_out) result.exit_code = 124;
    result.stderr_mid_line = opt.passthrough && err_sink.last != '\n';
    fill(result.out, out.cap);
    fill(result.err, err.cap);
    if (report_pipe) result.report = read_available(report_pipe->read.get());
    if (opt.tail_bytes > 0) {
        for (auto* r : {&result.out, &result.err})
            if (r->tail.size() > opt.tail_bytes) r->tail.erase(0, r->tail.size() - opt.tail_bytes);
    }
    return result;
}

}  // namespace sbx
