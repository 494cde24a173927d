#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <vector>

#include "namespaces.h"
#include "recorder.h"
#include "step_error.h"
#include "util/clone_stack.h"
#include "util/fd_pass.h"
#include "util/signal_fd.h"
#include "util/signal_set.h"

namespace sbx::helper {
namespace {

// Passed on to pid 1 and from it to the command's group.  SIGCONT too: it
// continues a command stopped on the terminal (see pass_terminal).
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCONT};

sigset_t watched_signals() {
    sigset_t set = signal_set(kForwarded);
    sigaddset(&set, SIGCHLD);
    return set;
}

int exit_code_of(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 125;
}

// What pid 1 tells the helper through the status pipe: the command stopped
// on the terminal (value: the signal), or its wait status once it is gone.
struct Report {
    enum Kind : int { Stopped = 1, Exited = 2 } kind;
    int value;
};

void send_report(int pipe, Report report) {
    write_all(pipe, std::string_view(reinterpret_cast<const char*>(&report), sizeof report));
}

// The terminal on stdin, as the helper finds it: job control applies when it
// is the session's controlling terminal (a stop of the command is followed
// up, a SIGCONT hands the terminal down); the command takes it over at once
// when the helper's group has its foreground.
struct Terminal {
    bool job_control = false;
    bool foreground = false;
};

Terminal terminal_at_start() {
    Terminal t;
    t.job_control = ::isatty(STDIN_FILENO) == 1 && ::tcgetsid(STDIN_FILENO) == ::getsid(0);
    t.foreground = t.job_control && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
    return t;
}

// Job control: a process whose own group has the terminal's foreground hands
// it on to group (the next level down: pid 1, then the command) before
// continuing it.  A group continued in the background gets no terminal.
void pass_terminal(pid_t group) {
    if (::tcgetpgrp(STDIN_FILENO) != ::getpgrp()) return;
    // Should the shell take it back meanwhile: no stop (and pid 1 ignores SIGTTOU).
    const BlockedSignals no_stop(signal_set({SIGTTOU}));
    ::tcsetpgrp(STDIN_FILENO, group);
}

// The signals the helper and pid 1 each watch through a signalfd (the
// forwarded ones and SIGCHLD, blocked beforehand), and where the forwarded
// ones go: to pid 1 from the helper, to the command's group from pid 1.  The
// one piece of signal handling of both wait loops.
class SignalRelay {
public:
    explicit SignalRelay(bool job_control) : job_control_(job_control) {
        fd_ = open_signalfd(watched_signals());
        if (!fd_.valid()) fail_errno("pid 1", "signalfd");
    }
    // Where forwarded signals go: target, or its process group (then the
    // target itself, should it have left the group).
    void to(pid_t target, bool group) {
        target_ = target;
        group_ = group;
    }
    int fd() const { return fd_.get(); }
    void close() { fd_.reset(); }

    // A SIGCONT hands the terminal down first.
    void forward(int sig) const {
        if (sig == SIGCONT && job_control_) pass_terminal(target_);
        if (group_ && ::kill(-target_, sig) == 0) return;
        ::kill(target_, sig);
    }

    // What is pending: each SIGCHLD to on_child, any other signal forwarded
    // unless the terminal sent it (SI_KERNEL: the terminal's signals reach
    // its foreground group directly).
    template <class OnChild>
    void take(OnChild&& on_child) const {
        read_signals(fd_.get(), [&](const signalfd_siginfo& info) {
            const int sig = static_cast<int>(info.ssi_signo);
            if (sig == SIGCHLD) on_child();
            else if (info.ssi_code != SI_KERNEL) forward(sig);
        });
    }

private:
    Fd fd_;
    bool job_control_;
    pid_t target_ = 0;
    bool group_ = false;
};

// What pid 1 starts from (read-only to it), as run_under_pid1 was given it.
struct Pid1Start {
    bool user;        // in a user namespace of its own: setup maps the ids first
    int status_pipe;  // the write end of the reports to the helper
    const sigset_t& original_mask;
    Terminal terminal;
    const Pid1Hooks& hooks;
    const Command& command;
};

// What the command process starts from (read-only to it).
struct CommandStart {
    const Pid1Start* pid1;
    int handoff;      // pid 1's end of the socketpair: closed in the command
    int command_end;  // the command's end, for the seccomp listener
};

// The command process: never returns.  It leads a process group of its own,
// which pid 1 forwards signals to, and which takes over the terminal's
// foreground when the helper had it, so that the terminal's own signals
// (^C, ^\) reach the command's group and not the helper or pid 1.
[[noreturn]] void command_main(const CommandStart& start) {
    const Pid1Start& s = *start.pid1;
    try {
        ::setpgid(0, 0);
        if (s.terminal.foreground) {
            const sigset_t ttou = signal_set({SIGTTOU});  // tcsetpgrp from a background group stops it otherwise
            ::sigprocmask(SIG_BLOCK, &ttou, nullptr);
            ::tcsetpgrp(STDIN_FILENO, ::getpid());
        }
        ::sigprocmask(SIG_SETMASK, &s.original_mask, nullptr);
        Fd listener = s.hooks.prepare();
        if (listener.valid() && !send_fd(start.command_end, listener.get()))
            fail_errno("seccomp", "passing the listener to pid 1");
    } catch (const std::exception& e) {
        s.command.status.error(e);
        ::_exit(125);
    }
    exec_command(s.command);
}

int command_entry(void* arg) {
    const auto& start = *static_cast<const CommandStart*>(arg);
    ::close(start.handoff);  // the command's own fd table (no CLONE_FILES)
    command_main(start);
}

// Starts the command as posix_spawn would: in pid 1's memory (CLONE_VM), on
// a stack of its own, with pid 1 suspended (CLONE_VFORK) until the command
// has exec'd or exited, so that no page tables are copied (about 50 us).
// Except when the recorder sees exec (recorder.h): then as a fork, so that
// pid 1 is free to answer the command's own execve.
// Its layers (capabilities, no_new_privs, Landlock, seccomp, cwd, signal
// mask) are per task and its fd table is its own, so none of them reaches
// pid 1; it writes no object of pid 1's (what it allocates stays allocated).
pid_t start_command(const Pid1Start& s, int handoff, int command_end) {
    constexpr std::size_t kStack = 8 << 20;  // touched pages only
    constexpr std::size_t kGuard = 1 << 12;
    void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) fail_errno("pid 1", "mmap of the command's stack");
    if (::mprotect(stack, kGuard, PROT_NONE) != 0) fail_errno("pid 1", "mprotect of the command's stack guard");
    const CommandStart start{&s, handoff, command_end};
    const bool answers_exec = s.command.recorder != nullptr && s.command.recorder->records_files();
    const int flags = answers_exec ? SIGCHLD : CLONE_VM | CLONE_VFORK | SIGCHLD;
    const pid_t command = clone_on_stack(stack, kStack, flags, command_entry, const_cast<CommandStart*>(&start));
    const int saved = errno;
    ::munmap(stack, kStack);  // the command has exec'd or exited, or has a copy of its own
    if (command < 0) fail_errno("pid 1", "clone of the command", {}, saved);
    return command;
}

// Whether the helper is gone: the status pipe has no reader any more.
bool helper_gone(int status_pipe) {
    pollfd reader{status_pipe, 0, 0};
    return ::poll(&reader, 1, 0) > 0 && (reader.revents & POLLERR);
}

// Pid 1 once the helper is gone (killed, say with SIGKILL by whoever ran it):
// nobody waits for the command any more.  Every other process of the sandbox
// is killed and reaped, then pid 1 does the helper's cleanup and ends.
[[noreturn]] void end_abandoned(const Pid1Hooks& hooks) {
    ::kill(-1, SIGKILL);  // all of the namespace but pid 1
    while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
    }
    hooks.abandoned();
    ::_exit(125);
}

// Pid 1's first steps: out of the helper's process group (a signal sent to
// that group, as sbx forwards them, reaches the helper, which forwards it
// here), then the sandbox's setup.  No PR_SET_PDEATHSIG: pid 1 outlives the
// helper, for as long as it takes to clean up after it (end_abandoned).
void enter_sandbox(const Pid1Start& s) {
    ::setpgid(0, 0);
    if (helper_gone(s.status_pipe)) end_abandoned(s.hooks);
    s.hooks.setup(s.user);
}

// Reaps pid 1's children: orphans as they come, and the command, whose end
// (reported to the helper) ends pid 1.  A command stopped on the terminal
// (^Z) stops the helper too, and so sbx, so that the shell gets the terminal
// back; unless pid 1's group was given the terminal meanwhile (fg without
// SIGCONT): then on with it at once.
void reap_children(const Pid1Start& s, const SignalRelay& signals, pid_t command) {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
        if (pid != command) continue;  // an orphan, reaped (or stopped)
        if (WIFSTOPPED(status) && s.terminal.job_control) {
            if (::tcgetpgrp(STDIN_FILENO) == ::getpgrp()) {
                signals.forward(SIGCONT);
            } else {
                send_report(s.status_pipe, {Report::Stopped, WSTOPSIG(status)});
            }
        }
        if (WIFSTOPPED(status)) continue;
        if (s.command.ended) {
            ::kill(-1, SIGKILL);  // all of the namespace but pid 1
            while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
            }
            s.command.ended();
        }
        if (s.command.recorder) s.command.recorder->finish();
        send_report(s.status_pipe, {Report::Exited, status});
        ::_exit(exit_code_of(status));
    }
}

// Pid 1's loop until the command ends: its signals, the seccomp listener
// handed over by the command (network limited, --record-denials), the
// notifications it serves (the mediator's and the recorder's), and the
// helper's end.
[[noreturn]] void serve_sandbox(const Pid1Start& s, const SignalRelay& signals, Fd handoff, pid_t command) {
    std::optional<NotificationServer> mediator;
    if (s.command.transparent) s.command.transparent->serve_resolver();
    for (;;) {
        // The status pipe for POLLERR only: the helper is gone.
        pollfd fds[4] = {{signals.fd(), POLLIN, 0}, {handoff.get(), POLLIN, 0}, {-1, POLLIN, 0}, {s.status_pipe, 0, 0}};
        if (mediator) fds[2].fd = mediator->fd();
        if (::poll(fds, 4, -1) < 0) {
            if (errno == EINTR) continue;
            fail_errno("pid 1", "poll");
        }
        if (fds[3].revents & POLLERR) end_abandoned(s.hooks);
        if (fds[0].revents & POLLIN) signals.take([&] { reap_children(s, signals, command); });
        if (fds[1].revents & POLLIN) {
            Fd listener = receive_fd(handoff.get());
            if (listener.valid())
                mediator.emplace(std::move(listener), s.command.recorder, s.command.host_unix_sockets,
                                 s.command.transparent);
            handoff.reset();
        } else if (fds[1].revents & (POLLHUP | POLLERR)) {
            handoff.reset();
        }
        if (mediator && (fds[2].revents & POLLIN)) {
            mediator->handle();
        } else if (mediator && (fds[2].revents & (POLLHUP | POLLERR | POLLNVAL))) {
            mediator.reset();  // no process uses the filter any more
        }
    }
}

// Pid 1 of the new pid namespace: never returns.
[[noreturn]] void pid1_main(const Pid1Start& s) {
    try {
        enter_sandbox(s);
        SignalRelay signals(s.terminal.job_control);
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) fail_errno("pid 1", "socketpair");
        Fd handoff(pair[0]), command_end(pair[1]);
        const pid_t command = start_command(s, handoff.get(), command_end.get());
        command_end.reset();
        signals.to(command, /*group=*/true);
        serve_sandbox(s, signals, std::move(handoff), command);
    } catch (const std::exception& e) {
        s.command.status.error(e);
        ::_exit(125);
    }
}

// The helper's side, while pid 1 runs: pid 1's reports and the relays'
// pipes, the signals forwarded to pid 1.  Returns the command's wait status
// (or pid 1's, when it failed before the command ran).
class Pid1Watch {
public:
    Pid1Watch(pid_t pid1, Fd reports, Terminal terminal, OutputRelays& relays)
        : pid1_(pid1), reports_(std::move(reports)), relays_(relays), signals_(terminal.job_control) {
        signals_.to(pid1, /*group=*/false);
    }

    int wait() {
        // The signals, pid 1's reports, then the relays' pipes (-1 once ended).
        std::vector<pollfd> fds(2 + relays_.size());
        for (std::size_t i = 0; i < relays_.size(); ++i) fds[2 + i] = {relays_.read_end(i), POLLIN, 0};
        for (bool pid1_done = false; !pid1_done;) {
            fds[0] = {signals_.fd(), POLLIN, 0};
            fds[1] = {reports_open_ ? reports_.get() : -1, POLLIN, 0};
            if (::poll(fds.data(), fds.size(), -1) < 0) {
                if (errno == EINTR) continue;
                fail_errno("pid 1", "poll");
            }
            for (std::size_t i = 0; i < relays_.size(); ++i)
                if (fds[2 + i].revents != 0 && !relays_.pump(i)) fds[2 + i].fd = -1;
            if (fds[1].revents != 0) reports_open_ = take_report();
            if (!(fds[0].revents & POLLIN)) continue;
            signals_.take([&] {
                const pid_t done = ::waitpid(pid1_, &pid1_status_, WNOHANG);
                if (done == pid1_) pid1_done = true;
                if (done < 0 && errno != EINTR) fail_errno("pid 1", "waitpid");
            });
        }
        signals_.close();
        return pid1_status_;
    }

    // Once pid 1 has ended (the signals restored): what the relays' pipes and
    // the reports still hold.
    int finish() {
        relays_.drain();  // the sandbox is gone: so are the pipes' writers
        while (reports_open_ && take_report()) {
        }
        return command_status_ ? *command_status_ : pid1_status_;
    }

private:
    // One report; false at the end of the pipe (pid 1 is gone).
    bool take_report() {
        Report report{};
        if (::read(reports_.get(), &report, sizeof report) != static_cast<ssize_t>(sizeof report)) return false;
        if (report.kind == Report::Exited) command_status_ = report.value;
        // Stopped: the helper stops too (its parent sees it, as a shell sees
        // a job stop), until a SIGCONT, which it passes on.  Unless its group
        // was given the terminal meanwhile (a shell's fg of a running job
        // sends no SIGCONT): then on with it at once.
        if (report.kind == Report::Stopped) {
            if (::tcgetpgrp(STDIN_FILENO) == ::getpgrp()) {
                signals_.forward(SIGCONT);
            } else {
                ::raise(SIGSTOP);
            }
        }
        return true;
    }

    pid_t pid1_;
    Fd reports_;
    bool reports_open_ = true;  // until the end of the pipe
    OutputRelays& relays_;
    SignalRelay signals_;
    std::optional<int> command_status_;
    int pid1_status_ = 0;
};

}  // namespace

std::optional<int> run_under_pid1(const NamespaceRequest& request, const Pid1Hooks& hooks, OutputRelays& relays,
                                  const Command& command) {
    const sigset_t watched = watched_signals();
    sigset_t original;
    if (::sigprocmask(SIG_BLOCK, &watched, &original) != 0) fail_errno("pid 1", "sigprocmask");
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) fail_errno("pid 1", "pipe");
    // Asked here, in the host's pid namespace, where process groups outside
    // pid 1's namespace are visible.
    const Terminal terminal = terminal_at_start();
    Fd status_read(pipe_fds[0]), status_write(pipe_fds[1]);
    const Fork child = fork_into_namespaces(request);
    if (!child.entered) {
        ::sigprocmask(SIG_SETMASK, &original, nullptr);
        return std::nullopt;
    }
    if (child.pid == 0) {
        status_read.reset();
        pid1_main(Pid1Start{child.user, status_write.get(), original, terminal, hooks, command});
    }
    status_write.reset();
    relays.close_write_ends();
    if (hooks.forked) hooks.forked(child.pid);
    Pid1Watch pid1(child.pid, std::move(status_read), terminal, relays);
    pid1.wait();
    ::sigprocmask(SIG_SETMASK, &original, nullptr);
    return pid1.finish();
}

void exec_command(const Command& command) {
    ::execvp(command.argv[0], command.argv);
    const int err = errno;
    command.status.exec_failed(command.argv, err);
    ::_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

void exit_like(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        ::signal(sig, SIG_DFL);
        const sigset_t only = signal_set({sig});
        ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
        ::raise(sig);
        ::_exit(128 + sig);
    }
    ::_exit(exit_code_of(status));
}

}  // namespace sbx::helper
