#include "root_view.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inherited_fds.h"
#include "mount_ops.h"
#include "step_error.h"
#include "util/fd.h"
#include "walk.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "root view";
// Where the new root is mounted while it is built: any directory of the
// host's root would do (nothing below it is used once the clones are taken),
// and /proc is one that every system running the helper has.
constexpr const char* kBase = "/proc";
constexpr const char* kNewMountApi = "the kernel needs the new mount API (Linux 5.12 or later)";
// The host's device nodes every view gets (as bubblewrap's --dev).
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom", "tty"};

// The path below the new root ("usr/bin" for /usr/bin).
const char* relative(const std::string& path) { return path.c_str() + 1; }

// Sets the process's umask to 0 while the view is built (mkdirat's modes as
// given), and back.
class NoUmask {
public:
    NoUmask() : old_(::umask(0)) {}
    ~NoUmask() { ::umask(old_); }
    NoUmask(const NoUmask&) = delete;
    NoUmask& operator=(const NoUmask&) = delete;

private:
    mode_t old_;
};

// The gid of group name in the text of an /etc/group ("tty:x:5:").
std::optional<gid_t> group_id(std::string_view text, std::string_view name) {
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string_view line = text.substr(at, end - at);
        at = end + 1;
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || line.substr(0, colon) != name) continue;
        const std::size_t gid_at = line.find(':', colon + 1);
        if (gid_at == std::string_view::npos) return std::nullopt;
        gid_t gid = 0;
        const std::string_view field = line.substr(gid_at + 1, line.find(':', gid_at + 1) - gid_at - 1);
        const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), gid);
        if (ec != std::errc() || ptr != field.data() + field.size() || field.empty()) return std::nullopt;
        return gid;
    }
    return std::nullopt;
}

// The host's /etc/group ("" where it cannot be read).
std::string host_groups() {
    std::ifstream in("/etc/group");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

[[noreturn]] void changed(const std::string& path) {
    fail(kStep,
         path +
             " is not what it was when the policy was resolved (renamed, or a symlink on its way, "
             "while the sandbox was set up)",
         "retry the command; make sure no other process renames it or its parent directories");
}

Identity identity_of(const Fd& fd, const std::string& path, struct stat* out = nullptr) {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail_errno(kStep, "fstat " + path);
    if (out != nullptr) *out = st;
    return {st.st_dev, st.st_ino};
}

// One thing the new root holds, at its own path.
struct Item {
    enum class Kind {
        Clone,   // a detached clone of the host's path (tree), at the same path
        Link,    // a symlink as the host has it (target)
        Tmpfs,   // a fresh, empty, writable tmpfs (/dev/shm)
        Devpts,  // the sandbox's own devpts instance (/dev/pts)
    };
    Kind kind = Kind::Clone;
    std::string path;
    Fd tree;
    Identity id;
    bool directory = true;
    bool writable = false;
    std::string target;
};

// What the view holds, collected while the host's root is still there.
struct Plan {
    std::vector<Item> items;

    // The innermost clone whose path holds path (or is path, unless strict).
    const Item* covering(const std::string& path, bool strict) const {
        const Item* best = nullptr;
        for (const auto& item : items) {
            if (item.kind != Item::Kind::Clone || !path_within(path, item.path)) continue;
            if (strict && item.path == path) continue;
            if (best == nullptr || item.path.size() > best->path.size()) best = &item;
        }
        return best;
    }

    void add_link(const std::string& path, std::string target) {
        for (const auto& item : items)
            if (item.path == path) return;
        Item link;
        link.kind = Item::Kind::Link;
        link.path = path;
        link.target = std::move(target);
        items.push_back(std::move(link));
    }
};

// A clone of the host's path, opened without following any symlink; nullopt
// when the path is missing (now), or is itself a symlink: an entry left
// unresolved (a protected name that is a symlink, or the placeholder of a
// concurrent run), which the clone holding it has as it is.
std::optional<Item> clone_host_path(const std::string& path, bool writable) {
    Fd fd = open_exact(path, O_PATH);
    if (!fd.valid()) {
        const int err = errno;
        if (err == ENOENT) return std::nullopt;
        if (err == ELOOP) {
            struct stat st {};
            if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return std::nullopt;
            changed(path);
        }
        fail_errno(kStep, "open " + path, "the path must be reachable by the user running the sandbox", err);
    }
    Item item;
    struct stat st {};
    item.id = identity_of(fd, path, &st);
    item.directory = S_ISDIR(st.st_mode);
    // A device is written through a read-only mount all the same; read-only,
    // its owner, mode and times stay the host's.
    item.writable = writable && !S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode);
    item.path = path;
    item.tree = Fd(::open_tree(fd.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    if (!item.tree.valid()) fail_errno(kStep, "open_tree " + path, kNewMountApi);
    if (!writable) {
        mount_attr attr{};
        attr.attr_set = MOUNT_ATTR_RDONLY;
        if (::mount_setattr(item.tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
            fail_errno(kStep, "making the clone of " + path + " read-only", kNewMountApi);
    }
    return item;
}

// The view's /dev: the host's device nodes (read-only: clone_host_path), a devpts instance of the sandbox's own with
// ptmx a link into it, the inherited terminal at /dev/console, the links to /proc/self/fd, and a private /dev/shm
// unless an entry gives the host's (CanonicalPolicy::entries_give_host_dev_shm).
void plan_devices(const CanonicalPolicy& policy, Plan& plan) {
    for (const char* name : kDevices)
        if (auto item = clone_host_path(std::string("/dev/") + name, true)) plan.items.push_back(std::move(*item));
    Item pts;
    pts.kind = Item::Kind::Devpts;
    pts.path = "/dev/pts";
    plan.items.push_back(std::move(pts));
    plan.add_link("/dev/ptmx", "pts/ptmx");
    if (Fd terminal = clone_inherited_terminal(); terminal.valid()) {
        Item console;
        console.path = kTerminalInView;
        console.tree = std::move(terminal);
        console.directory = false;
        plan.items.push_back(std::move(console));
    }
    plan.add_link("/dev/fd", "/proc/self/fd");
    plan.add_link("/dev/stdin", "/proc/self/fd/0");
    plan.add_link("/dev/stdout", "/proc/self/fd/1");
    plan.add_link("/dev/stderr", "/proc/self/fd/2");
    if (!policy.entries_give_host_dev_shm()) {
        Item shm;
        shm.kind = Item::Kind::Tmpfs;
        shm.path = "/dev/shm";
        plan.items.push_back(std::move(shm));
    }
}

// Every read and write entry that decides its own path, cloned (unless a
// clone of the same access holds it already), and the symlinks on the way to
// it.  Shorter paths first: a clone is planned before the entries inside it.
void plan_entries(const CanonicalPolicy& policy, Plan& plan) {
    std::vector<const ResolvedEntry*> entries;
    for (const auto& entry : policy.resolved)
        if (entry.exists && entry.access != FsAccess::Deny) entries.push_back(&entry);
    std::stable_sort(entries.begin(), entries.end(),
                     [](const ResolvedEntry* a, const ResolvedEntry* b) { return a->path.size() < b->path.size(); });
    for (const ResolvedEntry* entry : entries) {
        const std::string& path = entry->path;
        if (path.empty() || path[0] != '/' || path == "/" || path == "/dev" || path_within(path, "/proc")) continue;
        // A read entry below a deny entry is not reopened, nor is an entry
        // that another, more specific one overrides.
        if (decide_path(policy, path).access != entry->access) continue;
        if (!entry->given.empty()) {
            // Every symlink met on the way, recorded; at most 40 of them in
            // all, as the kernel's resolution allows.
            int budget = 40;
            WalkVisitor visit;
            visit.link = [&](const std::string& link, std::string_view text, int) {
                if (--budget < 0)
                    fail(kStep, "too many symlinks on the way to an entry (at " + link + ")",
                         "give the entry by its real path");
                // /dev and /proc are the view's own.
                if (!path_within(link, "/dev") && !path_within(link, "/proc")) plan.add_link(link, std::string(text));
            };
            (void)walk_path("/", entry->given, visit);
        }
        const bool writable = entry->access == FsAccess::Write;
        const Item* holder = plan.covering(path, false);
        if (holder != nullptr && holder->writable == writable) continue;
        if (auto item = clone_host_path(path, writable)) plan.items.push_back(std::move(*item));
    }
}

// What path names in the new root, without following any symlink.
Fd open_in_view(const Fd& root, const std::string& path, int flags = O_PATH) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
    for (;;) {
        const long fd = ::syscall(SYS_openat2, root.get(), relative(path), &how, sizeof how);
        if (fd >= 0) return Fd(static_cast<int>(fd));
        if (errno != EAGAIN && errno != EINTR) return Fd();
    }
}

void attach(const Fd& tree, const Fd& mount_point, const std::string& path) {
    if (::move_mount(tree.get(), "", mount_point.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        fail_errno(kStep, "move_mount onto " + path, kNewMountApi);
}

void make_directory(const Fd& root, const std::string& path, mode_t mode) {
    if (::mkdirat(root.get(), relative(path), mode) == 0) return;
    if (errno != EEXIST) fail_errno(kStep, "mkdir " + path + " in the new root");
    struct stat st {};
    const Fd fd = open_in_view(root, path);
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISDIR(st.st_mode)) changed(path);
}

// The directories leading to path in the new root's own tmpfs (no clone
// holds path's parent); made holds those made or found so far.
void make_parents(const Fd& root, std::vector<std::string>& made, const std::string& path) {
    for (auto slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        std::string dir = path.substr(0, slash);
        if (std::find(made.begin(), made.end(), dir) != made.end()) continue;
        make_directory(root, dir, 0755);
        made.push_back(std::move(dir));
    }
}

// The place of a clone: in the new root's tmpfs, an empty directory or file
// made for it; inside another clone, what that clone has there, which must
// be what the host path was when it was cloned.
Fd make_mount_point(const Fd& root, const Plan& plan, std::vector<std::string>& made, const Item& item) {
    if (plan.covering(item.path, true) != nullptr) {
        Fd fd = open_in_view(root, item.path);
        if (!fd.valid() || identity_of(fd, item.path) != item.id) changed(item.path);
        return fd;
    }
    make_parents(root, made, item.path);
    if (item.directory) {
        make_directory(root, item.path, 0755);
    } else {
        Fd file(::openat(root.get(), relative(item.path), O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444));
        if (!file.valid()) fail_errno(kStep, "creating the mount point of " + item.path + " in the new root");
    }
    Fd fd = open_in_view(root, item.path);
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || S_ISDIR(st.st_mode) != item.directory) changed(item.path);
    return fd;
}

void make_link(const Fd& root, const Plan& plan, std::vector<std::string>& made, const Item& item) {
    if (plan.covering(item.path, true) != nullptr) return;  // the clone has it
    make_parents(root, made, item.path);
    if (::symlinkat(item.target.c_str(), root.get(), relative(item.path)) == 0) return;
    if (errno != EEXIST) fail_errno(kStep, "symlink " + item.path + " in the new root");
    char text[PATH_MAX];
    const ssize_t n = ::readlinkat(root.get(), relative(item.path), text, sizeof text);
    if (n < 0 || std::string_view(text, static_cast<std::size_t>(n)) != item.target) changed(item.path);
}

// Everything planned, shorter paths first (a clone before what lies in it).
void populate(const Fd& root, Plan& plan) {
    std::stable_sort(plan.items.begin(), plan.items.end(),
                     [](const Item& a, const Item& b) { return a.path.size() < b.path.size(); });
    std::vector<std::string> made{"/dev", "/proc"};
    for (const auto& item : plan.items) {
        switch (item.kind) {
            case Item::Kind::Clone: attach(item.tree, make_mount_point(root, plan, made, item), item.path); break;
            case Item::Kind::Link: make_link(root, plan, made, item); break;
            case Item::Kind::Devpts: {
                make_directory(root, item.path, 0755);
                const Fd mount_point = open_in_view(root, item.path);
                if (!mount_point.valid()) changed(item.path);
                attach(new_private_devpts(), mount_point, item.path);
                break;
            }
            case Item::Kind::Tmpfs: {
                make_parents(root, made, item.path);
                make_directory(root, item.path, 01777);
                const Fd fs = new_private_tmpfs(item.path);
                const Fd mount_point = open_in_view(root, item.path);
                if (!mount_point.valid()) changed(item.path);
                attach(fs, mount_point, item.path);
                break;
            }
        }
    }
}

// A denied directory that the new root has only because an entry lies below
// it: traverse-only, as Codex shows it.
void close_denied_directories(const CanonicalPolicy& policy, const Fd& root, const Plan& plan) {
    for (const auto& path : policy.denied) {
        if (path.empty() || path[0] != '/' || path == "/" || path_within(path, "/dev") || path_within(path, "/proc"))
            continue;
        if (plan.covering(path, false) != nullptr) continue;  // host content: the caller masks it
        const Fd dir = open_in_view(root, path, O_RDONLY | O_DIRECTORY);
        if (!dir.valid()) continue;  // not in the view
        if (::fchmod(dir.get(), 0111) != 0) fail_errno(kStep, "chmod 0111 " + path + " in the new root");
    }
}

void make_read_only(const Fd& mount, const std::string& what) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(mount.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
        fail_errno(kStep, "making " + what + " read-only", kNewMountApi);
}

// The new root becomes "/", and the old one (the host's tree) goes.
void pivot_into(const Fd& root) {
    if (::fchdir(root.get()) != 0) fail_errno(kStep, "fchdir into the new root");
    if (::syscall(SYS_pivot_root, ".", ".") != 0)
        fail_errno(kStep, "pivot_root into the new root",
                   "run the helper outside a chroot (pivot_root needs the mount namespace's own root)");
    // The old root now lies on top of the new one, at ".".
    if (::umount2(".", MNT_DETACH) != 0) fail_errno(kStep, "detaching the old root");
    if (::chdir("/") != 0) fail_errno(kStep, "chdir / in the new root");
}

}  // namespace

void enter_entries_root(const CanonicalPolicy& policy) {
    const NoUmask no_umask;
    // 1. Everything taken from the host, before anything changes.
    Plan plan;
    plan_devices(policy, plan);
    plan_entries(policy, plan);

    // 2. The new root: a tmpfs, with /dev (a tmpfs of its own) and /proc.
    const Fd root = new_filesystem("tmpfs", {{"mode", "0755"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the new root");
    {
        const Fd base = open_exact(kBase, O_PATH | O_DIRECTORY);
        if (!base.valid()) fail_errno(kStep, std::string("open ") + kBase, "a /proc directory must exist on the host");
        attach(root, base, kBase);
    }
    make_directory(root, "/dev", 0755);
    make_directory(root, "/proc", 0555);
    const Fd dev =
        new_filesystem("tmpfs", {{"mode", "0755"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/dev");
    attach(dev, open_in_view(root, "/dev"), "/dev");
    populate(root, plan);
    close_denied_directories(policy, root, plan);

    // 3. A fresh proc, while the host's is still visible.
    const Fd proc = new_filesystem(
        "proc", {}, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/proc");
    attach(proc, open_in_view(root, "/proc"), "/proc");

    // 4. No new names at the top or in /dev; then the switch.
    make_read_only(dev, "/dev");
    make_read_only(root, "the new root");
    pivot_into(root);
}

Fd new_private_devpts() {
    Fd fs(::fsopen("devpts", FSOPEN_CLOEXEC));
    if (!fs.valid()) fail_errno(kStep, "fsopen devpts for /dev/pts", kNewMountApi);
    // Every devpts mounted so is a new instance; its ptmx opens ptys in it.
    for (const auto& [key, value] : {std::pair{"ptmxmode", "0666"}, std::pair{"mode", "0620"}})
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, value, 0) != 0)
            fail_errno(kStep, std::string("fsconfig ") + key + "=" + value + " of /dev/pts");
    // The tty group owns new ptys where it is mapped (EINVAL in a user
    // namespace that maps only the caller's group: the caller's group then).
    if (const auto gid = group_id(host_groups(), "tty")) {
        const std::string text = std::to_string(*gid);
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "gid", text.c_str(), 0) != 0 && errno != EINVAL)
            fail_errno(kStep, "fsconfig gid=" + text + " of /dev/pts");
    }
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        fail_errno(kStep, "creating the devpts of /dev/pts");
    Fd mount(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC));
    if (!mount.valid()) fail_errno(kStep, "fsmount devpts for /dev/pts", kNewMountApi);
    return mount;
}

void attach_private_terminals() {
    // The inherited terminal's node first, while /dev/pts is the host's.
    const Fd terminal = clone_inherited_terminal();
    if (const Fd pts = open_exact("/dev/pts", O_PATH | O_DIRECTORY); pts.valid()) {
        attach(new_private_devpts(), pts, "/dev/pts");
        // A ptmx device node opens a pty in the devpts next to it, and so
        // does the new instance's own ptmx, which goes over it.
        struct stat st {};
        if (::lstat("/dev/ptmx", &st) == 0 && S_ISCHR(st.st_mode)) {
            const Fd ptmx(::open_tree(AT_FDCWD, "/dev/pts/ptmx", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
            if (!ptmx.valid()) fail_errno(kStep, "open_tree /dev/pts/ptmx", kNewMountApi);
            const Fd at = open_exact("/dev/ptmx", O_PATH);
            if (!at.valid()) changed("/dev/ptmx");
            attach(ptmx, at, "/dev/ptmx");
        }
    }
    if (terminal.valid()) {
        const Fd at = open_exact(kTerminalInView, O_PATH);
        if (at.valid()) attach(terminal, at, kTerminalInView);
    }
}

Fd new_filesystem(const char* type, std::initializer_list<std::pair<const char*, const char*>> options,
                  unsigned attributes, const std::string& what) {
    Fd fs(::fsopen(type, FSOPEN_CLOEXEC));
    if (!fs.valid()) fail_errno(kStep, std::string("fsopen ") + type + " for " + what, kNewMountApi);
    for (const auto& [key, value] : options)
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, value, 0) != 0)
            fail_errno(kStep, std::string("fsconfig ") + key + "=" + value + " of " + what);
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        fail_errno(kStep, std::string("creating the ") + type + " of " + what);
    Fd mount(::fsmount(fs.get(), FSMOUNT_CLOEXEC, attributes));
    if (!mount.valid())
        fail_errno(kStep, std::string("fsmount ") + type + " for " + what,
                   std::string(type) == "proc" ? "a fully visible /proc must exist on the host" : "");
    return mount;
}

Fd new_private_tmpfs(const std::string& what) {
    return new_filesystem("tmpfs", {{"mode", "1777"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, what);
}

}  // namespace sbx::helper
