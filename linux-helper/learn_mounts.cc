// --learn's view (learn_view.h): the plan carried out in pid 1's mount
// namespace.
#include <dirent.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "learn_view.h"
#include "mount_ops.h"
#include "mounts.h"
#include "root_view.h"
#include "step_error.h"

namespace sbx::helper {

namespace {

constexpr const char* kStep = "learning view";

// A host directory's entries, by what they are (symlinks not followed).
std::vector<HostEntry> list_host_directory(const std::string& path) {
    std::vector<HostEntry> out;
    Fd dir = open_exact(path, O_RDONLY | O_DIRECTORY);
    if (!dir.valid()) fail_errno(kStep, "opening " + path);
    // The listing owns its own descriptor (closedir closes it), as git_view's.
    Fd copy(::dup(dir.get()));
    std::unique_ptr<DIR, int (*)(DIR*)> listing(copy.valid() ? ::fdopendir(copy.get()) : nullptr, ::closedir);
    if (!listing) fail_errno(kStep, "reading " + path);
    copy.release();
    while (const dirent* e = ::readdir(listing.get())) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat st {};
        if (::fstatat(dir.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        HostEntry entry{name, S_ISDIR(st.st_mode)   ? HostEntry::Type::Directory
                              : S_ISLNK(st.st_mode) ? HostEntry::Type::Symlink
                                                    : HostEntry::Type::Other};
        if (entry.type == HostEntry::Type::Symlink) {
            std::string target(4096, '\0');
            const ssize_t n = ::readlinkat(dir.get(), e->d_name, target.data(), target.size());
            if (n < 0) continue;
            target.resize(static_cast<std::size_t>(n));
            entry.target = std::move(target);
        }
        out.push_back(std::move(entry));
    }
    return out;
}

// An overlay of the host's directory lower (an O_PATH descriptor), its
// upper and work directories the names upper and work in layers (a tmpfs).
Fd new_overlay(const Fd& lower, const Fd& layers, const std::string& upper, const std::string& work,
               const std::string& path) {
    for (const auto& name : {upper, work})
        if (::mkdirat(layers.get(), name.c_str(), 0755) != 0) fail_errno(kStep, "making the layer of " + path);
    Fd up(::openat(layers.get(), upper.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    Fd wk(::openat(layers.get(), work.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    Fd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
    if (!fs.valid()) fail_errno(kStep, "fsopen overlay for " + path, "the kernel needs overlayfs");
    // In a user namespace only user.* extended attributes can be set.
    if (::fsconfig(fs.get(), FSCONFIG_SET_FD, "lowerdir+", nullptr, lower.get()) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_FD, "upperdir", nullptr, up.get()) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_FD, "workdir", nullptr, wk.get()) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0)
        fail_errno(kStep, "configuring the overlay of " + path,
                   "the kernel needs overlayfs layers given by descriptor (Linux 6.8 or later)");
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        fail_errno(kStep, "creating the overlay of " + path);
    Fd mount(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
    if (!mount.valid()) fail_errno(kStep, "fsmount the overlay of " + path);
    return mount;
}

// The directories a user other than root may write in, resolved, those
// that exist.
std::vector<std::string> user_tops(const CanonicalPolicy& policy) {
    std::vector<std::string> candidates{policy.workspace};
    for (const auto& w : policy.writable) candidates.push_back(w.path);
    for (const char* name : {"HOME", "TMPDIR"})
        if (const char* value = std::getenv(name); value != nullptr && value[0] == '/') candidates.emplace_back(value);
    candidates.insert(candidates.end(), {"/tmp", "/var/tmp"});
    std::vector<std::string> out;
    for (const auto& c : candidates) {
        char real[PATH_MAX];
        struct stat st {};
        if (::realpath(c.c_str(), real) != nullptr && ::stat(real, &st) == 0 && S_ISDIR(st.st_mode))
            out.emplace_back(real);
    }
    return out;
}

// The policy's denied paths hidden, as its own view hides them: an empty
// directory (mode 0000) or an empty file, read-only, over each one that
// exists (one that does not holds nothing to read).
void cover_denied(const CanonicalPolicy& policy) {
    if (policy.denied.empty()) return;
    const Fd covers = new_private_tmpfs("the learning view's covers");
    if (::mkdirat(covers.get(), "dir", 0) != 0) fail_errno(kStep, "making the covers");
    if (Fd file(::openat(covers.get(), "file", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0)); !file.valid())
        fail_errno(kStep, "making the covers");
    for (const auto& path : policy.denied) {
        const Fd at = open_exact(path, O_PATH | O_NOFOLLOW);
        if (!at.valid()) {
            if (errno == ENOENT) continue;
            fail_errno(kStep, "opening " + path);
        }
        struct stat st {};
        if (::fstat(at.get(), &st) != 0) fail_errno(kStep, "stat " + path);
        const Fd cover = clone_at(covers, S_ISDIR(st.st_mode) ? "dir" : "file", path, 0);
        set_readonly(cover.get(), "", AT_EMPTY_PATH);
        attach_at(cover, at, "", path);
    }
}

std::string read_mountinfo() {
    std::ifstream in("/proc/self/mountinfo");
    if (!in) fail_errno(kStep, "reading /proc/self/mountinfo");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

CanonicalPolicy learning_layers(CanonicalPolicy policy) {
    policy.readable = {"/"};
    for (const auto& entry : list_host_directory("/"))
        if (entry.type != HostEntry::Type::Symlink && !learn_view_leaves("/" + entry.name))
            policy.writable.push_back(WritableRoot{"/" + entry.name, {}});
    policy.denied.clear();
    return policy;
}

void build_learning_view(const CanonicalPolicy& policy, bool root) {
    make_mounts_private();
    const std::vector<LearnItem> items = plan_learning_view(mount_points_of(read_mountinfo()), list_host_directory,
                                                            root ? std::vector<std::string>{"/"} : user_tops(policy));
    // The lower layers, opened before anything is mounted over them.
    struct Layer {
        const LearnItem* item;
        Fd lower;
    };
    std::vector<Layer> layers;
    for (const auto& item : items) {
        if (item.kind != LearnItem::Kind::Overlay) continue;
        Fd lower = open_exact(item.path, O_PATH | O_DIRECTORY);
        if (!lower.valid()) fail_errno(kStep, "opening " + item.path);
        layers.push_back({&item, std::move(lower)});
    }
    const Fd upper = new_private_tmpfs("the learning run's layers");
    Fd shm;
    if (Fd at = open_exact("/dev/shm", O_PATH | O_DIRECTORY); at.valid()) shm = new_private_tmpfs("/dev/shm");
    set_readonly(AT_FDCWD, "/", AT_RECURSIVE);
    attach_private_terminals();
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string& path = layers[i].item->path;
        const Fd overlay = new_overlay(layers[i].lower, upper, "u" + std::to_string(i), "w" + std::to_string(i), path);
        attach_at(overlay, layers[i].lower, "", path);
    }
    if (shm.valid()) {
        Fd at = open_exact("/dev/shm", O_PATH | O_DIRECTORY);
        if (!at.valid()) fail_errno(kStep, "opening /dev/shm");
        attach_at(shm, at, "", "/dev/shm");
    }
    cover_denied(policy);
}

}  // namespace sbx::helper
