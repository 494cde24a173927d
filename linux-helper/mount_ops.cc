#include "mount_ops.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "step_error.h"

namespace sbx::helper {
namespace {

constexpr const char* kMountStep = "mounts";

}  // namespace

void fail_changed(const std::string& path) {
    fail(kMountStep,
         path + " is not where it was resolved (renamed, or a symlink on its way, while the sandbox was set up)",
         "retry the command; make sure no other process renames its parent directories");
}

Fd open_exact(const std::string& path, int flags) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    for (;;) {
        const long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
        if (fd >= 0) return Fd(static_cast<int>(fd));
        if (errno != EAGAIN && errno != EINTR) return Fd();
    }
}

Identity identity_of(const Fd& fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail_errno(kMountStep, "fstat " + path);
    return {st.st_dev, st.st_ino};
}

Fd clone_at(const Fd& dir, const std::string& name, const std::string& path, unsigned flags) {
    Fd fd(::open_tree(
        dir.get(), name.c_str(),
        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW | flags | (name.empty() ? AT_EMPTY_PATH : 0U)));
    if (!fd.valid()) fail_errno(kMountStep, "open_tree " + path, "check that the path is reachable");
    return fd;
}

void set_readonly(int fd, const char* path, unsigned flags) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(fd, path, flags, &attr, sizeof attr) != 0)
        fail_errno(kMountStep, std::string("mount_setattr read-only ") + (*path ? path : "(detached tree)"),
                   "the kernel needs mount_setattr (Linux 5.12 or later)");
}

void attach_at(const Fd& tree, const Fd& dir, const std::string& name, const std::string& path) {
    if (::move_mount(tree.get(), "", dir.get(), name.c_str(),
                     MOVE_MOUNT_F_EMPTY_PATH | (name.empty() ? MOVE_MOUNT_T_EMPTY_PATH : 0U)) != 0)
        fail_errno(kMountStep, "move_mount onto " + path);
}

void bind_readonly_at(const Fd& dir, const std::string& name, const std::string& path) {
    Fd tree = clone_at(dir, name, path, AT_RECURSIVE);
    set_readonly(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE);
    attach_at(tree, dir, name, path);
}

}  // namespace sbx::helper
