#include "exec/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "util/error.h"
#include "util/path.h"

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

}  // namespace

std::vector<ProcEntry> descendant_entries_of(pid_t ancestor, const std::vector<ProcEntry>& all) {
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

Pipe make_pipe() {
    int fds[2];
    if (::pipe(fds) != 0) throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    // sbx starts no thread, so no other spawn sees them before they are CLOEXEC.
    Fd read(fds[0]), write(fds[1]);
    if (::fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0 || ::fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0)
        throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    Pipe p;
    p.read = Fd(fd_above_stdio(read.release()));
    p.write = Fd(fd_above_stdio(write.release()));
    return p;
}

Pipe make_socketpair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
        throw Error(fmt::format("cannot create a socket pair: {}", std::strerror(errno)));
    Pipe p;
    p.read = Fd(fds[0]);
    p.write = Fd(fds[1]);
    if (::fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0 || ::fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0)
        throw Error(fmt::format("cannot create a socket pair: {}", std::strerror(errno)));
    return p;
}

const std::vector<std::string>& kept_env_names() {
    static const std::vector<std::string> names{"PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR"};
    return names;
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
    for (const auto& entry : plan.env_default) {
        const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
        if (std::none_of(env.begin(), env.end(), [&](const std::string& e) { return env_name(e) == name; }))
            env.push_back(name + "=" + entry.second);
    }
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

std::optional<std::string> find_program(const std::string& argv0, const std::vector<std::string>& env,
                                        const std::string& cwd) {
    for (const auto& candidate : exec_candidates(argv0, env)) {
        const std::string path = candidate.front() == '/' ? candidate : join_path(cwd, candidate);
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) continue;
        std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
        if (real) return std::string(real.get());
    }
    return std::nullopt;
}

std::vector<ProcEntry> descendant_entries(pid_t ancestor) { return descendant_entries_of(ancestor, process_table()); }

std::vector<pid_t> descendants_of(pid_t ancestor) {
    std::vector<pid_t> out;
    for (const auto& e : descendant_entries(ancestor)) out.push_back(e.pid);
    return out;
}

namespace {

// The descendants of `ancestor` and the members of `group` in `table`, and
// the processes of `seen` still there.
std::vector<ProcEntry> tree_and_group(pid_t ancestor, pid_t group, const std::vector<ProcEntry>& table,
                                      const SeenProcesses& seen) {
    auto found = descendant_entries_of(ancestor, table);
    for (const auto& e : table) {
        const auto it = seen.find(e.pid);
        if ((group > 0 && e.pgid == group) || (it != seen.end() && it->second == e.start)) found.push_back(e);
    }
    return found;
}

}  // namespace

void remember_descendants(pid_t ancestor, pid_t group, SeenProcesses& seen) {
    for (const auto& e : tree_and_group(ancestor, group, process_table(), {}))
        if (e.state != 'Z') seen[e.pid] = e.start;
}

std::vector<pid_t> stop_descendants(pid_t ancestor, pid_t group, const SeenProcesses& seen) {
    std::set<pid_t> stopped;
    for (int round = 0; round < 16; ++round) {
        bool more = false;
        const auto found = tree_and_group(ancestor, group, process_table(), seen);
        for (const auto& e : found) {
            if (e.state == 'Z' || !stopped.insert(e.pid).second) continue;
            ::kill(e.pid, SIGSTOP);
            more = true;
        }
        if (!more) break;
    }
    return {stopped.begin(), stopped.end()};
}

bool has_children() {
    siginfo_t info{};
    return !(::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD);
}

std::size_t kill_all_descendants(pid_t skip_reap, int budget_ms, const std::vector<pid_t>& also) {
    const pid_t self = ::getpid();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
    std::set<pid_t> pending(also.begin(), also.end());  // not yet seen dead
    while (true) {
        // Every descendant has an ancestor (or itself) among sbx's children:
        // no child at all means none is left, and the scan below is not
        // needed.  (With a subreaper, the Linux backend, that includes the
        // orphans; without, only `also` can name them.)
        if (!has_children() && pending.empty()) return 0;
        const auto table = process_table();
        std::size_t remaining = 0;
        for (const auto& e : descendant_entries_of(self, table)) {
            pending.erase(e.pid);                                // counted here
            if (e.pid == skip_reap && e.state == 'Z') continue;  // reaped by the caller
            ++remaining;
            if (e.state != 'Z') ::kill(e.pid, SIGKILL);
            if (e.ppid == self && e.pid != skip_reap) ::waitpid(e.pid, nullptr, WNOHANG);
        }
        // Those out of sbx's tree: dead once gone or a zombie (reaped by
        // whoever adopted them).
        std::set<pid_t> live;
        for (const auto& e : table)
            if (e.state != 'Z' && pending.count(e.pid) != 0) live.insert(e.pid);
        for (pid_t p : live) ::kill(p, SIGKILL);
        pending = live;
        remaining += live.size();
        if (remaining == 0) return 0;
        if (std::chrono::steady_clock::now() >= until) return remaining;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

}  // namespace sbx::exec
