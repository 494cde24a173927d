#include "host_watch.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "step_error.h"
#include "util/path.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "host watch";

}  // namespace

std::vector<WatchPoint> watch_points(const std::vector<std::string>& paths) {
    std::vector<WatchPoint> points;
    for (const auto& path : paths) {
        std::string directory = "/";
        for_each_component(path, [&](std::string_view name) {
            WatchPoint point{directory, std::string(name), path};
            const bool seen = std::any_of(points.begin(), points.end(), [&](const WatchPoint& p) {
                return p.directory == point.directory && p.name == point.name;
            });
            if (!seen) points.push_back(std::move(point));
            directory = child_path(directory, name);
        });
    }
    return points;
}

HostWatch::HostWatch(const std::vector<std::string>& paths)
    : inotify_(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)), stop_(::eventfd(0, EFD_CLOEXEC)) {
    if (!inotify_.valid()) fail_errno(kStep, "inotify_init1");
    if (!stop_.valid()) fail_errno(kStep, "eventfd");
    for (auto& point : watch_points(paths)) {
        const int wd = ::inotify_add_watch(inotify_.get(), point.directory.c_str(),
                                           IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
        if (wd >= 0) {
            watched_.push_back({wd, std::move(point.name), std::move(point.path)});
            continue;
        }
        // Missing (its appearance is watched a level up); or a directory this
        // user may not read, where the command, as the same user, cannot
        // list what appears either.
        if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) continue;
        fail_errno(kStep, "inotify_add_watch " + point.directory,
                   errno == ENOSPC ? "raise fs.inotify.max_user_watches" : "");
    }
}

HostWatch::~HostWatch() {
    stop();
    unwatch();
}

void HostWatch::start(pid_t pid1) {
    pid1_ = Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid1, 0)));
    if (!pid1_.valid()) {
        ::kill(pid1, SIGKILL);  // unreaped: still ours, never another's
        fail_errno(kStep, "pidfd_open of pid 1");
    }
    thread_ = std::thread([this] { watch(); });
}

void HostWatch::watch() {
    for (;;) {
        pollfd fds[2] = {{inotify_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
        if (fds[1].revents != 0) return;
        if (fds[0].revents == 0) continue;
        if ((uncovered_ = take_events())) break;
    }
    // Uncovered (or poll failed, which must not leave the sandbox unwatched).
    if (!uncovered_) uncovered_ = "";
    ::syscall(SYS_pidfd_send_signal, pid1_.get(), SIGKILL, nullptr, 0);
}

void HostWatch::finish() {
    stop();
    if (!uncovered_) uncovered_ = take_events();
    unwatch();
    if (!uncovered_) return;
    const std::string_view fix =
        "run it again; while commands run, save such files in place rather than by rename (editors: no atomic "
        "or backup-by-rename save)";
    if (uncovered_->empty())
        fail(kStep,
             "events were lost (the inotify queue overflowed), so the host may have replaced a denied or read-only "
             "path unseen: the command was killed",
             fix);
    fail(kStep,
         "the host replaced " + *uncovered_ +
             " while the command ran (a rename over it or a new file where it was missing), which a mount cannot "
             "cover: the command was killed",
         fix);
}

void HostWatch::stop() {
    if (!thread_.joinable()) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(stop_.get(), &one, sizeof one);
    thread_.join();
}

// Closing an inotify descriptor that still has watches waits for an SRCU
// grace period (8-15 ms measured here, on every run's way out, exit included);
// with its watches removed first, the close takes microseconds.
void HostWatch::unwatch() {
    for (std::size_t i = 0; i < watched_.size(); ++i) {
        const int wd = watched_[i].wd;
        const bool first = std::none_of(watched_.begin(), watched_.begin() + static_cast<std::ptrdiff_t>(i),
                                        [&](const Watched& w) { return w.wd == wd; });
        if (first) ::inotify_rm_watch(inotify_.get(), wd);
    }
    watched_.clear();
}

std::optional<std::string> HostWatch::take_events() {
    alignas(inotify_event) char buffer[4096];
    for (;;) {
        const ssize_t got = ::read(inotify_.get(), buffer, sizeof buffer);
        if (got <= 0) return std::nullopt;  // EAGAIN: the queue is empty
        for (ssize_t at = 0; at < got;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
            at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            if (event->mask & IN_Q_OVERFLOW) return "";
            if (event->len == 0) continue;
            const std::string_view name(event->name);
            for (const auto& w : watched_)
                if (w.wd == event->wd && w.name == name) return w.path;
        }
    }
}

}  // namespace sbx::helper
