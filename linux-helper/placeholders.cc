#include "placeholders.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "step_error.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "mounts";

// Removes what name names in dir if it is (still) a placeholder of the kind
// recorded; a pin on it (inside the sandbox) goes first.
void remove_placeholder(const Fd& dir, const ProtectedPaths::Entry& entry, bool pinned) {
    const std::string name = base_name(entry.path);
    if (pinned) (void)::umount2(entry.path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
    if (entry.legacy) {
        if (is_legacy_placeholder(dir, name)) (void)::unlinkat(dir.get(), name.c_str(), 0);
        return;
    }
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && is_our_placeholder(st))
        (void)::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR);
}

// The pid holding a lock on the file fd refers to, from /proc/locks ("" when
// none is listed: a holder in another pid namespace, say).
std::string lock_holder(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return {};
    Fd locks(::open("/proc/locks", O_RDONLY | O_CLOEXEC));
    if (!locks.valid()) return {};
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(locks.get(), buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters have "->" after the number.
    char id[64];
    std::snprintf(id, sizeof id, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                  static_cast<unsigned long long>(st.st_ino));
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::string number, type, advisory, mode, pid, file;
        if (!(fields >> number >> type >> advisory >> mode >> pid >> file) || type == "->") continue;
        if (file == id) return pid;
    }
    return {};
}

// Where no placeholder can be made, whether the command could still create
// the name itself.  It has the helper's uid and no capability: not on a
// read-only filesystem, nor (EACCES) in a directory of another user, whose
// mode it cannot change; but in a directory of its own (mode 0555, say) it
// can chmod the directory and then create the name.
bool could_create(const Fd& dir, int err) {
    if (err == EROFS) return false;
    if (err != EACCES) return true;  // EPERM (no symlinks on this filesystem), and any other
    struct stat st {};
    return ::fstat(dir.get(), &st) != 0 || st.st_uid == ::geteuid();
}

[[noreturn]] void fail_missing_placeholder(const std::string& path, int err) {
    const std::string parent = parent_path(path), name = base_name(path);
    const std::string reason = "the protected path " + path +
                               " is missing and cannot be held read-only: its placeholder cannot be made (" +
                               std::strerror(err) + ")";
    if (err == EACCES)
        fail(kStep, reason + ", and the command, which owns " + parent + ", could make it writable and create " + name,
             "make the directory writable (chmod u+w " + parent + "), or --unprotect " + name);
    fail(kStep, reason + ", so the command could create it",
         "--unprotect " + name + ", or use a workspace where directories can be made");
}

// Workers for the removals: an rmdir can wait for the disk (ext4 without a
// journal, mounted with discard, discards the directory's block before
// rmdir returns: 0.07 to 3 ms each on a virtio disk), so the removals in
// different directories overlap.
template <typename Fn>
void for_each_parallel(std::size_t count, const Fn& fn) {
    if (count < 2) {
        for (std::size_t i = 0; i < count; ++i) fn(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < count;) fn(i);
    };
    std::vector<std::thread> workers;
    const std::size_t n = std::min<std::size_t>(count - 1, 7);
    try {
        for (std::size_t i = 0; i < n; ++i) workers.emplace_back(work);
    } catch (const std::system_error&) {
        // No thread: the rest is done here.
    }
    work();
    for (auto& w : workers) w.join();
}

}  // namespace

const ProtectedPaths::Directory* ProtectedPaths::lock_directory(const std::string& path) {
    for (const auto& dir : directories_)
        if (dir.path == path) return &dir;
    Fd fd = open_exact(path, O_RDONLY | O_DIRECTORY);
    if (!fd.valid()) {
        if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return nullptr;
        fail_errno(kStep, "open " + path, "the writable root must be a readable directory");
    }
    const Identity id = identity_of(fd, path);
    // Never wait for long: any local user can lock /tmp or /dev/shm.  Without
    // the lock, another run could remove our placeholders: refuse instead.
    for (int attempt = 0; ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0; ++attempt) {
        if (errno != EWOULDBLOCK && errno != EINTR) fail_errno(kStep, "flock " + path);
        if (attempt == 100) {
            const std::string holder = lock_holder(fd.get());
            fail(kStep,
                 "the directory " + path + ", which holds protected paths, is locked (flock LOCK_EX) by " +
                     (holder.empty() ? std::string("another process") : "process " + holder),
                 "end that process, or use a workspace outside " + path);
        }
        ::usleep(10000);
    }
    directories_.push_back({path, std::move(fd), id});
    return &directories_.back();
}

// One path that must hold still inside a writable root: found as it is, or
// given a placeholder at its first missing component.
void ProtectedPaths::add(const std::string& target, bool denied) {
    // Covered already: the same path, or inside a placeholder (empty inside).
    for (const auto& e : entries_)
        if (e.path == target || (e.placeholder && path_below(target, e.path))) return;
    // Before looking: no run removes placeholders meanwhile.  The first
    // missing component's directory: where a placeholder goes.
    std::string path = target;
    const Directory* dir = nullptr;
    for (;;) {
        const std::string parent = parent_path(path);
        if ((dir = lock_directory(parent)) != nullptr) break;
        if (errno == ENOTDIR) return;  // below a file: it cannot be created
        if (errno == ELOOP)
            fail(kStep,
                 "cannot enforce the " + std::string(denied ? "denied" : "read-only") + " path " + target +
                     ": a symlink is on its way (" + parent + " or above), inside a writable root",
                 "name the path without the symlink, or remove the symlink");
        if (std::any_of(roots_.begin(), roots_.end(), [&](const Root& r) { return r.path == parent; }))
            fail_changed(parent);  // the root itself went away
        path = parent;
    }
    for (const auto& e : entries_)
        if (e.path == path) return;
    const std::string name = base_name(path);
    // Made where the name is missing; EEXIST (which comes before any
    // permission error) where it exists.
    if (::mkdirat(dir->lock.get(), name.c_str(), 0) == 0) {
        // Ours, just made (pid 1 checks it again before covering it).
        entries_.push_back({path, true, false, dir->id});
        return;
    }
    const int err = errno;
    if (err != EEXIST) {
        if (!could_create(dir->lock, err)) return;
        fail_missing_placeholder(path, err);
    }
    struct stat st {};
    if (::fstatat(dir->lock.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) fail_changed(path);
    if (is_our_placeholder(st)) {
        entries_.push_back({path, true, false, dir->id});  // left by a killed run, or shared
    } else if (S_ISLNK(st.st_mode) && is_legacy_placeholder(dir->lock, name)) {
        entries_.push_back({path, true, true, dir->id});
    } else if (path != target) {
        fail_changed(target);  // a component made meanwhile
    } else if (!denied) {
        entries_.push_back({path, false, false, dir->id});
    }
    // An existing denied path is covered in pid 1 (build_filesystem_view).
}

ProtectedPaths::ProtectedPaths(const CanonicalPolicy& policy) {
    for (const auto& path : policy.denied) {
        if (path == "/")
            fail(kStep, "a deny entry for / would hide the whole filesystem",
                 "deny the paths below / that must be hidden");
        // pid 1 mounts a fresh /proc (and /dev/mqueue) over the view.
        for (const char* fresh : {"/proc", "/dev/mqueue"})
            if (path == fresh || path_below(path, fresh))
                fail(kStep,
                     "the denied path " + path + " cannot be hidden: the sandbox mounts its own " + fresh + " there",
                     "drop the entry (the sandbox's " + std::string(fresh) +
                         " shows only its own processes and queues)");
    }
    // "/" writable in a sandboxed filesystem: only as Codex's `:root` write
    // narrowed by other entries; "/" named as a writable root (-w /,
    // writable_roots ["/"]) stays refused.
    const bool root_write = std::any_of(policy.entries.begin(), policy.entries.end(), [](const FsEntry& e) {
        return e.target.kind == FsTarget::Kind::Root && e.access == FsAccess::Write;
    });
    for (const auto& root : policy.writable)
        if (root.path == "/" && !root_write)
            fail(kStep, "'/' cannot be a writable root of a sandboxed filesystem",
                 "use external-sandbox, or a ':root' write entry narrowed by read or deny entries");
    // Each root opened once, without following symlinks (its path has none
    // once resolved): pid 1 checks that it finds the same directory there.
    for (const auto& root : policy.writable) {
        Fd fd = open_exact(root.path, O_PATH);
        if (!fd.valid()) {
            if (errno == ENOENT) continue;
            if (errno == ELOOP) fail_changed(root.path);
            fail_errno(kStep, "open " + root.path);
        }
        roots_.push_back({root.path, identity_of(fd, root.path)});
    }
    // (resolve() refused a deny or read-only path given through a symlink
    // inside a writable root; what changed since is refused below: ELOOP.)
    // What must hold still inside the writable roots, parents first.
    std::vector<std::pair<std::string, bool>> targets;  // path, denied
    for (const auto& root : policy.writable) {
        if (std::none_of(roots_.begin(), roots_.end(), [&](const Root& r) { return r.path == root.path; })) continue;
        for (const auto& path : root.protected_paths) targets.emplace_back(path, false);
    }
    for (const auto& path : policy.denied) targets.emplace_back(path, true);
    std::stable_sort(targets.begin(), targets.end(),
                     [](const auto& a, const auto& b) { return a.first.size() < b.first.size(); });
    // Should a later name be refused, the placeholders made so far go too.
    try {
        for (const auto& target : targets) {
            // (not a structured binding: clang 14, the fuzz build's compiler, cannot capture one)
            const std::string& path = target.first;
            const bool inside =
                std::any_of(roots_.begin(), roots_.end(), [&](const Root& r) { return path_below(path, r.path); });
            if (!inside) continue;  // read-only already, and nothing can be created there
            add(path, target.second);
        }
    } catch (...) {
        remove_placeholders(false);
        throw;
    }
}

ProtectedPaths::~ProtectedPaths() { remove_placeholders(false); }

void ProtectedPaths::remove_placeholders(bool pinned) const {
    // One worker per directory: removals in one directory take its lock in
    // turn anyway, those of different directories overlap.
    std::vector<const Directory*> dirs;
    for (const auto& dir : directories_) {
        if (std::none_of(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.placeholder && parent_path(e.path) == dir.path; }))
            continue;
        if (::flock(dir.lock.get(), LOCK_EX | LOCK_NB) != 0) continue;  // another run still uses it
        dirs.push_back(&dir);
    }
    // Inside the sandbox each placeholder is a mount point: its cover goes
    // first (remove_placeholder); the directory's fd is the host's mount.
    for_each_parallel(dirs.size(), [&](std::size_t i) {
        for (const auto& entry : entries_)
            if (entry.placeholder && parent_path(entry.path) == dirs[i]->path)
                remove_placeholder(dirs[i]->lock, entry, pinned);
    });
}

bool is_our_placeholder(const struct stat& st) {
    return S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0 && st.st_uid == ::geteuid();
}

bool is_legacy_placeholder(const Fd& dir, const std::string& name) {
    char target[64];
    const ssize_t n = ::readlinkat(dir.get(), name.c_str(), target, sizeof target);
    return n > 0 && std::string_view(target, static_cast<std::size_t>(n)) == kLegacyPlaceholderTarget;
}

}  // namespace sbx::helper
