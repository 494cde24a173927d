#include "approval/approver.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/core.h>

#include "exec/process.h"
#include "exec/spawn.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/fd.h"
#include "util/path.h"

namespace sbx::approval {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

std::string_view trim(std::string_view s) {
    const auto ws = " \t\r\n";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

void set_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

nlohmann::json to_json(const ApprovalPrompt& p) {
    json denials = json::array();
    for (const auto& d : p.denials) denials.push_back(sbx::to_json(d));
    json j{{"command", p.command}, {"cwd", p.cwd},       {"reason", p.reason},          {"kind", to_string(p.kind)},
           {"policy", p.policy},   {"denials", denials}, {"stderr_tail", p.stderr_tail}};
    if (p.network) j["network"] = json{{"host", p.network->host}, {"port", p.network->port}};
    return j;
}

std::optional<ReviewDecision> parse_approver_output(std::string_view out) {
    const auto text = trim(out);
    if (auto word = parse_review_decision(text)) return word;
    if (text.empty() || text.front() != '{') return std::nullopt;
    const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("decision") || !doc["decision"].is_string()) return std::nullopt;
    return parse_review_decision(doc["decision"].get<std::string>());
}

namespace {

// The program execvp would run (a name with a slash as it is, else found in
// $PATH, execvp's default when it is unset), symlinks resolved.
std::optional<std::string> find_approver(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::error_code ec;
    const std::string cwd = std::filesystem::current_path(ec).string();
    return exec::find_program(program, {std::string("PATH=") + (path != nullptr ? path : "/bin:/usr/bin")},
                              ec ? "/" : cwd);
}

}  // namespace

ProgramApprover::ProgramApprover(std::string program, std::chrono::milliseconds timeout,
                                 const std::vector<std::string>& writable_roots)
    : program_(std::move(program)), timeout_(timeout) {
    // Resolved now, before anything runs: a misspelled approver would
    // otherwise show only as a denial after the first attempt, and a name
    // looked up when the prompt comes would find whatever the first attempt
    // left there.
    const auto found = program_.empty() ? std::nullopt : find_approver(program_);
    if (!found)
        throw Error(fmt::format("--approver: '{}' is not an executable program{}; give its path, or fix the name",
                                program_, program_.find('/') == std::string::npos ? " on PATH" : ""));
    for (const auto& root : writable_roots) {
        if (path_within(*found, root))
            throw Error(
                fmt::format("--approver: {} lies in {}, which the sandboxed command may write, so the command could "
                            "replace the program that judges it; install the approver outside every writable root "
                            "(e.g. ~/.local/bin) and give that path",
                            *found, root));
    }
    struct stat st {};
    if (::stat(found->c_str(), &st) != 0) throw Error(fmt::format("--approver: {}: {}", *found, std::strerror(errno)));
    resolved_ = *found;
    device_ = st.st_dev;
    inode_ = st.st_ino;
}

namespace {

ApproverAnswer denied(std::string note) { return ApproverAnswer{ReviewDecision::Denied, "approver", std::move(note)}; }

// A started approver program and sbx's ends of its stdin (a socket, so
// that a send after it closed fails without SIGPIPE) and its stdout, both
// non-blocking.  The child is ended (killed, waited for) before the ends
// are closed.
struct RunningApprover {
    Fd stdin_end;
    Fd stdout_end;
    exec::Child child;
};

// Starts `resolved` (argv[0]: `program`, as given) in its own process group.
RunningApprover start_approver(const std::string& program, const std::string& resolved) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        throw Error(fmt::format("--approver {}: socketpair: {}", program, std::strerror(errno)));
    Fd in_parent(sv[0]), in_child(sv[1]);
    int pp[2];
    if (::pipe(pp) != 0) throw Error(fmt::format("--approver {}: pipe: {}", program, std::strerror(errno)));
    Fd out_parent(pp[0]), out_child(pp[1]);
    // CLOEXEC after the fact (macOS has neither pipe2 nor SOCK_CLOEXEC): sbx
    // starts no thread, so no other spawn can see them meanwhile.
    for (int fd : {sv[0], sv[1], pp[0], pp[1]}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);

    // Everything the child needs is prepared before it starts; it makes
    // only async-signal-safe calls (exec/spawn.h).
    std::string name = program;
    std::vector<char*> argv{name.data(), nullptr};  // argv[0] as given; the file is resolved
    sigset_t none;
    sigemptyset(&none);
    const int stdin_end = in_child.get(), stdout_end = out_child.get();
    auto run_program = [&]() -> int {
        ::setpgid(0, 0);  // its own group, which a timeout kills whole
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::signal(SIGPIPE, SIG_DFL);
        if (::dup2(stdin_end, 0) < 0 || ::dup2(stdout_end, 1) < 0) ::_exit(126);
        ::execv(resolved.c_str(), argv.data());
        const int err = errno;
        const char* msg = "sbx: --approver: cannot execute the program: ";
        (void)!::write(2, msg, std::strlen(msg));
        (void)!::write(2, std::strerror(err), std::strlen(std::strerror(err)));
        (void)!::write(2, "\n", 1);
        ::_exit(err == ENOENT ? 127 : 126);
    };
    exec::Child child = exec::spawn(fmt::format("--approver {}", program).c_str(), run_program);
    in_child.reset();
    out_child.reset();
    set_nonblocking(in_parent.get());
    set_nonblocking(out_parent.get());
    return {std::move(in_parent), std::move(out_parent), std::move(child)};
}

// What the program wrote on its stdout until it closed it.
struct ProgramOutput {
    std::string text;
    bool overflow = false;   // more than kMaxAnswerBytes (the rest dropped)
    bool timed_out = false;  // the deadline came first
};

// Sends what is left of the request, as much as the socket takes; closes it
// once all is sent (EOF for the program) or when the program closed its end.
void send_some(Fd& to, short revents, std::string_view& rest) {
    if (revents & (POLLERR | POLLHUP)) {
        to.reset();  // it closed its stdin: fine, it may answer anyway
        return;
    }
    const ssize_t w = ::send(to.get(), rest.data(), rest.size(), MSG_NOSIGNAL);
    if (w > 0) rest.remove_prefix(static_cast<std::size_t>(w));
    else if (w < 0 && errno != EAGAIN && errno != EINTR) to.reset();
    if (rest.empty() && to.valid()) to.reset();  // EOF for it
}

// Reads what the program wrote; true at the end of its stdout (or an error).
bool read_some(int from, ProgramOutput& out) {
    char buf[4096];
    const ssize_t got = ::read(from, buf, sizeof buf);
    if (got > 0) {
        if (out.text.size() + static_cast<std::size_t>(got) > kMaxAnswerBytes) out.overflow = true;
        else out.text.append(buf, static_cast<std::size_t>(got));
        return false;
    }
    return got == 0 || (errno != EAGAIN && errno != EINTR);
}

// Writes the request to the program's stdin while reading its stdout, until
// it closes its stdout or the deadline passes.
ProgramOutput exchange(RunningApprover& approver, std::string_view request,
                       std::optional<exec::Clock::time_point> deadline, const std::string& program) {
    ProgramOutput out;
    bool eof = false;
    while (!eof) {
        if (deadline && exec::Clock::now() >= *deadline) {
            out.timed_out = true;
            return out;
        }
        pollfd fds[2] = {{approver.stdout_end.get(), POLLIN, 0}, {approver.stdin_end.get(), POLLOUT, 0}};
        const nfds_t n = approver.stdin_end.valid() ? 2 : 1;
        if (exec::poll_until(fds, n, deadline) < 0)
            throw Error(fmt::format("--approver {}: poll: {}", program, std::strerror(errno)));
        if (n == 2 && fds[1].revents != 0) send_some(approver.stdin_end, fds[1].revents, request);
        if (fds[0].revents != 0) eof = read_some(approver.stdout_end.get(), out);
    }
    return out;
}

// The answer, once its stdout is closed: the program must exit, within the
// same deadline, with status 0, having written a decision.
ApproverAnswer answer_of(exec::Child& child, const ProgramOutput& out, std::optional<exec::Clock::time_point> deadline,
                         std::chrono::milliseconds timeout) {
    const auto info = child.wait_until(deadline);
    if (!info) {
        child.kill_group();
        return denied(fmt::format("did not exit within {} ms; killed", timeout.count()));
    }
    const exec::ExitStatus status = exec::exit_status_of(*info);
    if (status.signal) return denied(fmt::format("killed by signal {}", *status.signal));
    if (status.code != 0) return denied(fmt::format("exited with status {}", status.code));
    if (out.overflow) return denied("answer longer than 64 KiB");
    const auto decision = parse_approver_output(out.text);
    if (!decision) {
        std::string shown(trim(out.text).substr(0, 80));
        return denied(fmt::format("not a decision: '{}'", shown));
    }
    return ApproverAnswer{*decision, "approver", ""};
}

}  // namespace

ApproverAnswer ProgramApprover::ask(const ApprovalPrompt& prompt) {
    // The program found before the first attempt, or none: a file put at
    // its path since (by rename, say) is not what was named.
    struct stat now {};
    if (::stat(resolved_.c_str(), &now) != 0 || now.st_dev != device_ || now.st_ino != inode_)
        return denied(fmt::format("{} is no longer the program found before the command ran; not run", resolved_));
    const std::string request =
        to_json(prompt).dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace) + "\n";
    RunningApprover approver = start_approver(program_, resolved_);
    // A zero timeout (--approver-timeout 0) waits as long as it takes.
    const std::optional<exec::Clock::time_point> deadline =
        timeout_.count() > 0 ? std::optional(exec::Clock::now() + timeout_) : std::nullopt;
    const ProgramOutput out = exchange(approver, request, deadline, program_);
    if (out.timed_out) {
        approver.child.kill_group();
        return denied(fmt::format("no answer within {} ms; killed", timeout_.count()));
    }
    return answer_of(approver.child, out, deadline, timeout_);
}

std::string render_prompt(const ApprovalPrompt& prompt) {
    // Everything from the command's side escaped (util/escape.h) and folded,
    // so that no line of it can pass for one of sbx's own.
    constexpr std::size_t kWidth = 100;
    const std::string indent = "           ";
    auto field = [&](std::string_view label, const std::string& escaped) {
        return fmt::format("  {:<9}{}\n", label, fold_for_display(escaped, kWidth, indent));
    };
    std::string command;
    for (const auto& w : prompt.command) command += (command.empty() ? "" : " ") + shell_word_for_display(w);
    std::string text = fmt::format("sbx: approval needed ({}): {}\n", to_string(prompt.kind),
                                   fold_for_display(escape_for_display(prompt.reason), kWidth, indent));
    text += field("command:", command);
    text += field("cwd:", escape_for_display(prompt.cwd));
    if (prompt.network)
        text += field("connect:", escape_for_display(fmt::format("{}:{}", prompt.network->host, prompt.network->port)));
    if (prompt.kind == ApprovalKind::Sandbox || prompt.kind == ApprovalKind::Escalation)
        text += field("runs:", "without what sbx would lift (see the reason), if you answer y or a");
    // Why, after a failed sandboxed attempt: its first denials (the rest counted).
    constexpr std::size_t kShown = 3;
    for (std::size_t i = 0; i < prompt.denials.size() && i < kShown; ++i) {
        const auto& d = prompt.denials[i];
        text += field("denied:", escape_for_display(fmt::format("{} {} ({}; fix: {})", d.operation,
                                                                d.path.empty() ? d.address : d.path,
                                                                d.fix ? d.fix->rule : "", d.fix ? d.fix->text() : "")));
    }
    if (prompt.denials.size() > kShown)
        text += field("denied:", fmt::format("{} more (see --json)", prompt.denials.size() - kShown));
    return text;
}

TtyApprover::TtyApprover(std::string path) : path_(std::move(path)) {}

ApproverAnswer TtyApprover::ask(const ApprovalPrompt& prompt) {
    Fd tty(::open(path_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!tty.valid())
        return ApproverAnswer{ReviewDecision::Denied, "default-deny", "no --approver and no terminal to ask on"};
    // What was typed before the question (for the command, after its end)
    // answers nothing: only a line typed once the question is shown does.
    ::tcflush(tty.get(), TCIFLUSH);
    const std::string header = render_prompt(prompt);
    const std::string question = "Allow? [y]es / [n]o / [a]lways for this session / [q]uit: ";
    auto say = [&](const std::string& text) { return write_all(tty.get(), text); };
    if (!say(header)) return ApproverAnswer{ReviewDecision::Denied, "tty", "cannot write to the terminal"};
    for (int tries = 0; tries < 3; ++tries) {
        if (!say(question)) break;
        std::string line;
        bool closed = false;
        for (;;) {
            char c;
            const ssize_t r = ::read(tty.get(), &c, 1);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                closed = true;
                break;
            }
            if (c == '\n') break;
            line.push_back(c);
        }
        const auto reply = trim(line);
        if (reply == "y" || reply == "Y" || reply == "yes") return ApproverAnswer{ReviewDecision::Approved, "tty", ""};
        if (reply == "a" || reply == "A") return ApproverAnswer{ReviewDecision::ApprovedForSession, "tty", ""};
        if (reply == "n" || reply == "N" || reply == "no") return ApproverAnswer{ReviewDecision::Denied, "tty", ""};
        if (reply == "q" || reply == "Q") return ApproverAnswer{ReviewDecision::Abort, "tty", ""};
        if (closed) return ApproverAnswer{ReviewDecision::Denied, "tty", "the terminal closed"};
    }
    return ApproverAnswer{ReviewDecision::Denied, "tty", "no valid answer"};
}

std::unique_ptr<Approver> make_approver(const ApprovalSettings& s, const std::vector<std::string>& writable) {
    if (s.approver) return std::make_unique<ProgramApprover>(*s.approver, s.approver_timeout, writable);
    return std::make_unique<TtyApprover>();
}

}  // namespace sbx::approval
