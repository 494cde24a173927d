#include "mounts.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <algorithm>
#include <string_view>
#include <utility>

#include "util.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "mounts";

bool is_under(const std::string& path, const std::string& root) {
    if (root == "/") return true;
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
           path[root.size()] == '/';
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}


Fd clone_tree(const std::string& path, unsigned extra_flags = 0) {
    Fd fd(::open_tree(AT_FDCWD, path.c_str(),
                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | extra_flags));
    if (!fd.valid()) fail_errno(kStep, "open_tree " + path, "check that the path is reachable");
    return fd;
}

void set_readonly(int fd, const char* path, unsigned flags) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(fd, path, flags, &attr, sizeof attr) != 0)
        fail_errno(kStep, std::string("mount_setattr read-only ") + (*path ? path : "(detached tree)"),
                   "the kernel needs mount_setattr (Linux 5.12 or later)");
}

void attach(const Fd& tree, const std::string& path) {
    if (::move_mount(tree.get(), "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        fail_errno(kStep, "move_mount onto " + path);
}

void bind_readonly(const std::string& path) {
    Fd tree = clone_tree(path);
    set_readonly(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE);
    attach(tree, path);
}

void pin_symlink(const std::string& path) {
    // A mount point cannot be removed, renamed or replaced.
    Fd link(::open_tree(AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW));
    if (!link.valid() || ::move_mount(link.get(), "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        fail_errno(kStep, "cannot pin the protected symlink " + path,
                   "replace the symlink with a directory, or --unprotect its name");
}

// Binds an existing protected path read-only (pinning it when a symlink).
void protect_existing(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0)
        fail_errno(kStep, "the protected path " + path + " changed while the sandbox was set up", "retry the command");
    if (!S_ISLNK(st.st_mode)) {
        bind_readonly(path);
        return;
    }
    pin_symlink(path);
    // What it points to stays read-only too.
    char target[PATH_MAX];
    if (::realpath(path.c_str(), target) == nullptr)
        fail(kStep, "the protected symlink " + path + " points to nothing",
             "remove or fix the symlink, or --unprotect its name");
    bind_readonly(target);
}

bool is_placeholder(const std::string& path) {
    char target[64];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
    return n > 0 && std::string_view(target, static_cast<std::size_t>(n)) == kPlaceholderTarget;
}

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}


}  // namespace

const ProtectedPaths::Directory& ProtectedPaths::lock_directory(const std::string& path) {
    for (const auto& dir : directories_)
        if (dir.path == path) return dir;
    Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) fail_errno(kStep, "open " + path, "the writable root must be a readable directory");
    while (::flock(fd.get(), LOCK_SH) != 0)
        if (errno != EINTR) fail_errno(kStep, "flock " + path);
    directories_.push_back({path, std::move(fd)});
    return directories_.back();
}

ProtectedPaths::ProtectedPaths(const CanonicalPolicy& policy) {
    std::vector<std::string> roots;
    for (const auto& root : policy.writable)
        if (exists(root.path)) roots.push_back(root.path);
    for (const auto& root : policy.writable) {
        if (!exists(root.path)) continue;
        for (const auto& path : root.protected_paths) {
            const bool inside = std::any_of(roots.begin(), roots.end(),
                                            [&](const std::string& r) { return is_under(path, r); });
            if (!inside) continue;  // already read-only
            if (std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.path == path; }))
                continue;
            lock_directory(parent_of(path));  // before looking: no run removes placeholders meanwhile
            if (!exists(path)) {
                if (errno != ENOENT) fail_errno(kStep, "lstat " + path);
                if (::symlink(kPlaceholderTarget, path.c_str()) != 0 && errno != EEXIST) {
                    // The command has our uid and no capability: it cannot create it either.
                    if (errno == EACCES || errno == EPERM || errno == EROFS) continue;
                    fail_errno(kStep, "creating the placeholder " + path,
                               "create the parent directory, or --unprotect the name");
                }
            }
            entries_.push_back({path, is_placeholder(path)});
        }
    }
}

ProtectedPaths::~ProtectedPaths() {
    for (const auto& dir : directories_) {
        if (::flock(dir.lock.get(), LOCK_EX | LOCK_NB) != 0) continue;  // another run still uses it
        for (const auto& entry : entries_)
            if (entry.placeholder && parent_of(entry.path) == dir.path && is_placeholder(entry.path))
                (void)::unlink(entry.path.c_str());
    }
}

void make_mounts_private() {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        fail_errno(kStep, "making mounts private");
}

void build_filesystem_view(const CanonicalPolicy& policy, const ProtectedPaths& protect) {
    make_mounts_private();

    // The writable roots that exist, parents before children.
    std::vector<std::string> roots;
    for (const auto& root : policy.writable) {
        if (root.path == "/")
            fail(kStep, "'/' cannot be a writable root of a sandboxed filesystem", "use external-sandbox");
        if (exists(root.path)) roots.push_back(root.path);
    }
    std::stable_sort(roots.begin(), roots.end(),
                     [](const std::string& a, const std::string& b) { return a.size() < b.size(); });

    std::vector<Fd> trees;
    trees.reserve(roots.size());
    for (const auto& root : roots) trees.push_back(clone_tree(root));

    set_readonly(AT_FDCWD, "/", AT_RECURSIVE);

    for (std::size_t i = 0; i < roots.size(); ++i) attach(trees[i], roots[i]);

    for (const auto& entry : protect.entries()) {
        if (entry.placeholder) {
            if (!is_placeholder(entry.path))
                fail(kStep, "the placeholder " + entry.path + " changed while the sandbox was set up",
                     "retry the command");
            pin_symlink(entry.path);
        } else {
            protect_existing(entry.path);
        }
    }
}

void mount_proc() {
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
        fail_errno(kStep, "mounting /proc for the new pid namespace",
                   "a fully visible /proc must exist on the host");
}

}  // namespace sbx::helper
