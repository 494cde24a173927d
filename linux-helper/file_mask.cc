#include "file_mask.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <utility>

#include "mount_ops.h"
#include "step_error.h"
#include "util/fd.h"
#include "util/path.h"

namespace sbx::helper {

namespace {

constexpr std::size_t kMaxMask = 1024 * 1024;
constexpr const char* kStep = "mask file";

bool write_all_to(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

}  // namespace

std::vector<FileMask> read_file_masks(const std::vector<std::pair<int, std::string>>& given) {
    std::vector<FileMask> out;
    for (const auto& [fd, path] : given) {
        Fd in(fd);
        std::string content;
        char chunk[65536];
        for (;;) {
            const ssize_t n = ::read(in.get(), chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno == EAGAIN) {  // a non-blocking pipe: wait for its writer
                pollfd ready{in.get(), POLLIN, 0};
                ::poll(&ready, 1, -1);
                continue;
            }
            if (n < 0)
                fail_errno(kStep, "reading the content of " + path + " from descriptor " + std::to_string(fd),
                           "open descriptor " + std::to_string(fd) + " on the content (" + std::to_string(fd) +
                               "<FILE) before starting the helper");
            if (n == 0) break;
            content.append(chunk, static_cast<std::size_t>(n));
            if (content.size() > kMaxMask) fail(kStep, "the content for " + path + " is larger than 1 MiB");
        }
        out.push_back({path, std::move(content)});
    }
    return out;
}

void install_masks(const std::vector<FileMask>& masks, const CanonicalPolicy& policy) {
    const std::string fix = "mask only a file the policy lets the command read (an existing regular file, not denied)";
    std::vector<std::pair<dev_t, std::string>> made;  // each mask's tmpfs, and the path it was made for
    for (const auto& m : masks) {
        char real[PATH_MAX];
        struct stat st {};
        if (::realpath(m.path.c_str(), real) == nullptr || ::stat(real, &st) != 0 || !S_ISREG(st.st_mode))
            fail(kStep, "the sandbox's view has no file " + m.path + " to show in its place", fix);
        if (path_within(real, "/proc")) fail(kStep, m.path + " lies under /proc, the kernel's files", fix);
        const auto access = decide_path(policy, real).access;
        if (!access || *access == FsAccess::Deny)
            fail(kStep, m.path + ": the policy does not let the command read it", fix);
        for (const auto& [dev, earlier] : made)
            if (dev == st.st_dev) fail(kStep, m.path + " is the file masked for " + earlier, "give each file once");
        mount_content_over(real, m.content, kStep, fix);
        if (::stat(real, &st) != 0) fail_errno(kStep, "stat of the masked file " + m.path);
        made.emplace_back(st.st_dev, m.path);
    }
}

void mount_content_over(const std::string& path, std::string_view content, std::string_view step,
                        std::string_view fix) {
    char real[PATH_MAX];
    struct stat st {};
    if (::realpath(path.c_str(), real) == nullptr || ::stat(real, &st) != 0 || !S_ISREG(st.st_mode))
        fail(step, "the sandbox's view has no file " + path + " to show in its place", fix);
    const std::string size = std::to_string(content.size() + 4096);
    Fd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
    if (!fs.valid() || ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "size", size.c_str(), 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "mode", "0755", 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        fail_errno(step, "creating the tmpfs for " + path, "the kernel needs fsopen (Linux 5.2 or later)");
    Fd mount(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (!mount.valid()) fail_errno(step, "fsmount of the tmpfs for " + path);
    {
        // The real file's permissions (a tool that checks its credentials
        // file is private still finds it so); the mount, read-only, refuses
        // writes with EROFS as the rest of the view does.
        Fd file(::openat(mount.get(), "file", O_CREAT | O_WRONLY | O_CLOEXEC, 0));
        if (file.valid() && ::fchmod(file.get(), st.st_mode & 0777) != 0)
            fail_errno(step, "setting the mode of the content for " + path);
        if (!file.valid() || !write_all_to(file.get(), content)) fail_errno(step, "writing the content for " + path);
    }
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(mount.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
        fail_errno(step, "making the tmpfs for " + path + " read-only");
    // Kernels before 6.15 clone no detached mount: attached on /proc for the
    // clone of the file, then gone again (pid 1 made /proc already).
    if (::move_mount(mount.get(), "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) != 0)
        fail_errno(step, "attaching the tmpfs for " + path);
    Fd file(::open_tree(AT_FDCWD, "/proc/file", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    const int saved = errno;
    if (::umount2("/proc", MNT_DETACH | UMOUNT_NOFOLLOW) != 0) fail_errno(step, "detaching the tmpfs from /proc");
    if (!file.valid()) fail_errno(step, "open_tree of the file for " + path, {}, saved);
    if (::move_mount(file.get(), "", AT_FDCWD, real, MOVE_MOUNT_F_EMPTY_PATH) != 0)
        fail_errno(step, std::string("mounting the masked file over ") + real, fix);
}

}  // namespace sbx::helper
