// Layer 3's guard against the host (issue 29, class 7).
//
// A mount covers a dentry, not a name.  When the host renames a file over a
// denied or read-only path (as editors save), or creates one where it was
// missing, or renames a directory on its way and makes a new one, the kernel
// keeps the sandbox's cover on the old dentry, and the name then shows the
// new file: readable, and writable inside a writable root.  No mechanism an
// unprivileged helper has makes a cover follow a name: a mountpoint refuses
// renames only in the renamer's own mount namespace, Landlock grants by
// hierarchy and cannot carve a name out of a writable directory, and
// fanotify's permission events need CAP_SYS_ADMIN on the host.
//
// So the helper watches.  For each path the view covers (every denied path,
// every protected path and placeholder), every directory on its way, from
// "/" down to its parent, is watched through inotify for the next component
// appearing (IN_CREATE, IN_MOVED_TO): on the host, after the placeholders
// are made and before pid 1 makes the covers (pid 1 checks what it covers
// against what the helper opened, so nothing changes unseen in between).
// From the fork on, a thread blocked on those events kills the whole sandbox
// (SIGKILL to pid 1 through its pidfd) at the first one, and the helper ends
// 125 naming the path; an event still queued when the command has ended
// counts the same, as does a lost event (the queue overflowed).
//
// What it leaves: the time from the host's rename to the kill, in which a
// command that keeps trying can read (or, inside a writable root, write) the
// new file; the command is stopped and the run fails, so the user knows.
// The host's own copies and new hard links of a protected file are its
// choice, as with cp.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/fd.h"

namespace sbx::helper {

// One directory to watch for one name: `name` appearing in `directory`
// uncovers `path` (the path itself, or a directory on its way).
struct WatchPoint {
    std::string directory;
    std::string name;
    std::string path;
    bool operator==(const WatchPoint&) const = default;
};

// Every directory on the way of each path (absolute, normalised) with the
// component below it, "/" first; each pair once.
std::vector<WatchPoint> watch_points(const std::vector<std::string>& paths);

class HostWatch {
public:
    // Watches the ways of paths (a directory that does not exist is skipped:
    // its own appearance is watched one level up).  Throws Error.
    explicit HostWatch(const std::vector<std::string>& paths);
    HostWatch(const HostWatch&) = delete;
    HostWatch& operator=(const HostWatch&) = delete;
    ~HostWatch();

    // In the helper, once pid 1 exists and before anything reaps it: the
    // thread that kills the sandbox at the first event.
    void start(pid_t pid1);
    // Stops the thread, reads what is still queued and removes the watches;
    // throws Error (the refusal, naming the path) when the host uncovered a
    // path or events were lost.
    void finish();

private:
    struct Watched {
        int wd;
        std::string name;
        std::string path;
    };
    void stop();     // the thread, joined
    void unwatch();  // every watch removed, so that the close is quick
    // Reads the queue without waiting; the first uncovering event's path.
    std::optional<std::string> take_events();
    void watch();

    Fd inotify_;
    Fd stop_;  // an eventfd: finish() wakes the thread through it
    Fd pid1_;  // pid 1's pidfd
    std::vector<Watched> watched_;
    std::thread thread_;
    std::optional<std::string> uncovered_;  // the thread's, until joined
};

}  // namespace sbx::helper
