#include "exec/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "util/error.h"

namespace sbx::exec {

namespace {

int fd_above_stdio(int fd) {
    if (fd > 2) return fd;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    const int saved = errno;
    ::close(fd);
    if (moved < 0) throw Error(fmt::format("cannot move a pipe above fd 2: {}", std::strerror(saved)));
    return moved;
}

std::string_view env_name(std::string_view entry) {
    const auto eq = entry.find('=');
    return eq == std::string_view::npos ? entry : entry.substr(0, eq);
}

struct ProcEntry {
    pid_t pid;
    pid_t ppid;
    char state;
};

// The start of a small /proc file in buf, NUL-terminated; false when it
// cannot be read (the process is gone).
template <std::size_t N>
bool read_proc_file(const char* path, char (&buf)[N]) {
    Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return false;
    const ssize_t n = ::read(fd.get(), buf, N - 1);
    if (n <= 0) return false;
    buf[n] = '\0';
    return true;
}

// pid, ppid and state from /proc/PID/stat ("pid (comm) S ppid ..."; comm may
// contain spaces and parentheses, so parse after the last ')').
bool read_stat(pid_t pid, ProcEntry& out) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    char buf[512];
    if (!read_proc_file(path, buf)) return false;
    const char* close_paren = std::strrchr(buf, ')');
    if (close_paren == nullptr) return false;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return false;
    out = ProcEntry{pid, static_cast<pid_t>(ppid), state};
    return true;
}

std::vector<ProcEntry> scan_proc() {
    std::vector<ProcEntry> entries;
    // Without /proc only the process-group kill remains (the caller's).
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) return entries;
    while (const dirent* d = ::readdir(dir)) {
        char* end = nullptr;
        const long pid = std::strtol(d->d_name, &end, 10);
        if (end == d->d_name || *end != '\0' || pid <= 0) continue;
        ProcEntry e{};
        if (read_stat(static_cast<pid_t>(pid), e)) entries.push_back(e);
    }
    ::closedir(dir);
    return entries;
}

std::vector<ProcEntry> descendant_entries(pid_t ancestor) {
    const auto all = scan_proc();
    std::multimap<pid_t, const ProcEntry*> children;
    for (const auto& e : all) children.emplace(e.ppid, &e);
    std::vector<ProcEntry> out;
    std::vector<pid_t> todo{ancestor};
    while (!todo.empty()) {
        const pid_t p = todo.back();
        todo.pop_back();
        auto [lo, hi] = children.equal_range(p);
        for (auto it = lo; it != hi; ++it) {
            out.push_back(*it->second);
            todo.push_back(it->second->pid);
        }
    }
    return out;
}

}  // namespace

Pipe make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    Pipe p;
    p.read = Fd(fd_above_stdio(fds[0]));
    p.write = Fd(fd_above_stdio(fds[1]));
    return p;
}

std::vector<std::string> child_environment(const ExecPlan& plan, const char* const* base) {
    const auto& kept = kept_env_names();
    std::vector<std::string> env;
    for (const char* const* e = base; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        const auto name = env_name(entry);
        if (plan.clear_env && std::find(kept.begin(), kept.end(), name) == kept.end()) continue;
        if (std::find(plan.env_remove.begin(), plan.env_remove.end(), name) != plan.env_remove.end()) continue;
        if (plan.env_add.count(std::string(name)) != 0) continue;
        env.emplace_back(entry);
    }
    for (const auto& [name, value] : plan.env_add) env.push_back(name + "=" + value);
    for (const auto& [name, value] : plan.env_default)
        if (std::none_of(env.begin(), env.end(), [&](const std::string& e) { return env_name(e) == name; }))
            env.push_back(name + "=" + value);
    return env;
}

std::vector<std::string> exec_candidates(const std::string& argv0, const std::vector<std::string>& env) {
    std::string_view path = "/usr/local/bin:/usr/bin:/bin";
    for (const auto& e : env) {
        if (e.starts_with("PATH=")) {
            path = std::string_view(e).substr(5);
            break;
        }
    }
    return sbx::exec_candidates(argv0, path);
}

std::vector<pid_t> descendants_of(pid_t ancestor) {
    std::vector<pid_t> out;
    for (const auto& e : descendant_entries(ancestor)) out.push_back(e.pid);
    return out;
}

namespace {

// Whether one thread (its /proc status file) has a stop signal pending that
// it can still act on.
bool thread_stop_in_flight(const char* status_path) {
    char buf[4096];
    if (!read_proc_file(status_path, buf)) return false;
    auto field = [&](const char* name) -> const char* {
        const char* at = std::strstr(buf, name);
        return at == nullptr ? nullptr : at + std::strlen(name);
    };
    const char* state = field("\nState:\t");
    if (state == nullptr || std::strchr("TtZX", *state) != nullptr) return false;  // already stopped, or gone
    auto mask = [&](const char* name) -> unsigned long long {
        const char* at = field(name);
        return at == nullptr ? 0 : std::strtoull(at, nullptr, 16);
    };
    constexpr unsigned long long kStops =
        1ULL << (SIGSTOP - 1) | 1ULL << (SIGTSTP - 1) | 1ULL << (SIGTTIN - 1) | 1ULL << (SIGTTOU - 1);
    return ((mask("\nSigPnd:\t") | mask("\nShdPnd:\t")) & kStops & ~mask("\nSigBlk:\t")) != 0;
}

}  // namespace

bool stop_signal_in_flight(pid_t ancestor) {
    for (const auto& e : descendant_entries(ancestor)) {
        if (e.state == 'T' || e.state == 't' || e.state == 'Z' || e.state == 'X') continue;
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(e.pid));
        DIR* dir = ::opendir(path);
        if (dir == nullptr) continue;
        bool found = false;
        while (const dirent* d = ::readdir(dir)) {
            if (d->d_name[0] == '.') continue;
            char status[320];
            std::snprintf(status, sizeof status, "/proc/%d/task/%s/status", static_cast<int>(e.pid), d->d_name);
            if ((found = thread_stop_in_flight(status))) break;
        }
        ::closedir(dir);
        if (found) return true;
    }
    return false;
}

std::size_t kill_all_descendants(pid_t skip_reap, int budget_ms) {
    const pid_t self = ::getpid();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
    while (true) {
        // sbx is a child subreaper, so every living descendant has an ancestor
        // (or itself) among sbx's children: no child at all means none is
        // left, and the /proc scan below is not needed.
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD) return 0;
        std::size_t remaining = 0;
        for (const auto& e : descendant_entries(self)) {
            if (e.pid == skip_reap && e.state == 'Z') continue;  // reaped by the caller
            ++remaining;
            if (e.state != 'Z') ::kill(e.pid, SIGKILL);
            if (e.ppid == self && e.pid != skip_reap) ::waitpid(e.pid, nullptr, WNOHANG);
        }
        if (remaining == 0) return 0;
        if (std::chrono::steady_clock::now() >= until) return remaining;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

}  // namespace sbx::exec
