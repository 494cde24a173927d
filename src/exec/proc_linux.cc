// The process table and the terminal's stop signals on Linux, from /proc
// (exec/process.h).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "exec/process.h"

namespace sbx::exec {

namespace {

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

// pid, ppid, state, pgrp and start time from /proc/PID/stat ("pid (comm) S ppid ..."; comm may
// contain spaces and parentheses, so parse after the last ')').
bool read_stat(pid_t pid, ProcEntry& out) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    char buf[512];
    if (!read_proc_file(path, buf)) return false;
    const char* close_paren = std::strrchr(buf, ')');
    if (close_paren == nullptr) return false;
    char state = 0;
    int ppid = 0, pgid = 0;
    unsigned long long start = 0;
    // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime priority nice num_threads itrealvalue starttime
    if (std::sscanf(close_paren + 1, " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                    &state, &ppid, &pgid, &start) != 4)
        return false;
    out = ProcEntry{pid, static_cast<pid_t>(ppid), state, static_cast<pid_t>(pgid), start};
    return true;
}

}  // namespace

std::vector<ProcEntry> process_table() {
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

Fd nonblocking_copy(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) return Fd();
    return Fd(::open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
}

bool open_files_visible() { return ::access("/proc/self/fd", R_OK) == 0; }

bool has_open(pid_t pid, const struct stat& file) {
    const std::string fds = fmt::format("/proc/{}/fd", pid);
    DIR* dir = ::opendir(fds.c_str());
    if (dir == nullptr) return errno != ENOENT && errno != ESRCH;  // gone, or not this user's to read
    bool found = false;
    struct stat st {};
    while (const dirent* d = ::readdir(dir)) {
        if (d->d_name[0] == '.') continue;
        if (::fstatat(::dirfd(dir), d->d_name, &st, 0) == 0 && st.st_dev == file.st_dev && st.st_ino == file.st_ino) {
            found = true;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

bool still_runs(pid_t pid, const std::string& path) {
    struct stat running {
    }, file{};
    return ::stat(fmt::format("/proc/{}/exe", pid).c_str(), &running) == 0 && ::stat(path.c_str(), &file) == 0 &&
           running.st_dev == file.st_dev && running.st_ino == file.st_ino;
}

}  // namespace sbx::exec
