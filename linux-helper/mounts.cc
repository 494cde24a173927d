#include "mounts.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "deny_plan.h"
#include "mount_ops.h"
#include "root_view.h"
#include "step_error.h"
#include "walk.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "mounts";

// A path opened in pid 1 again: it must still be what the host opened.
Fd reopen(const std::string& path, Identity expected, int flags) {
    Fd fd = open_exact(path, flags);
    if (!fd.valid() || identity_of(fd, path) != expected) fail_changed(path);
    return fd;
}

// A mount of what name names in dir (dir itself for "") on itself, as
// writable as it was: a mount point cannot be removed, renamed or replaced.
void pin_at(const Fd& dir, const std::string& name, unsigned flags, const std::string& what, const std::string& fix) {
    Fd tree(::open_tree(
        dir.get(), name.c_str(),
        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW | flags | (name.empty() ? AT_EMPTY_PATH : 0U)));
    if (!tree.valid() || ::move_mount(tree.get(), "", dir.get(), name.c_str(),
                                      MOVE_MOUNT_F_EMPTY_PATH | (name.empty() ? MOVE_MOUNT_T_EMPTY_PATH : 0U)) != 0)
        fail_errno(kStep, "cannot pin " + what, fix);
}

void pin_symlink(const Fd& dir, const std::string& name, const std::string& path) {
    pin_at(dir, name, 0, "the symlink " + path, "replace the symlink with a directory, or --unprotect its name");
}

Fd open_parent(const std::string& path) {
    Fd dir = open_exact(parent_path(path), O_PATH | O_DIRECTORY);
    if (!dir.valid()) fail_changed(path);
    return dir;
}

// Binds an existing protected path read-only (pinning it when a symlink).
void protect_existing(const Fd& dir, const std::string& path, const std::vector<std::string>& roots) {
    const std::string name = base_name(path);
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) fail_changed(path);
    if (!S_ISLNK(st.st_mode)) {
        bind_readonly_at(dir, name, path);
        return;
    }
    pin_symlink(dir, name, path);
    // What it points to stays read-only too.
    char target[PATH_MAX];
    if (::realpath(path.c_str(), target) != nullptr) {
        Fd fd = open_exact(target, O_PATH | O_NOFOLLOW);
        if (!fd.valid()) fail_changed(target);
        bind_readonly_at(fd, "", target);
        return;
    }
    // It points to nothing: harmless, pinned as it is, unless what it names
    // could be created in a writable root.
    const ssize_t n = ::readlinkat(dir.get(), name.c_str(), target, sizeof target - 1);
    std::string missing = n > 0 ? std::string(target, static_cast<std::size_t>(n)) : std::string("/");
    if (missing[0] != '/') missing = parent_path(path) + "/" + missing;
    char existing[PATH_MAX];
    while (::realpath(missing.c_str(), existing) == nullptr && missing != "/") missing = parent_path(missing);
    const std::string where = existing;
    if (std::any_of(roots.begin(), roots.end(),
                    [&](const std::string& r) { return where == r || path_below(where, r); }))
        fail(kStep, "the protected symlink " + path + " points to nothing that exists, inside a writable root",
             "remove or fix the symlink, or --unprotect its name");
}

// The innermost writable root that strictly contains path ("" when none).
std::string enclosing_root(const std::vector<std::string>& roots, const std::string& path) {
    std::string best;
    for (const auto& root : roots)
        if (path_below(path, root) && root.size() > best.size()) best = root;
    return best;
}

// The mounts that hold in place what lies between a writable root and a
// nested root or a protected path below its top: a directory or symlink that
// is a mount point cannot be renamed, removed or replaced (EBUSY).
struct Pins {
    struct Pin {
        std::string path;
        bool link = false;
    };
    const std::vector<std::string>& roots;
    const std::vector<std::string>& protected_paths;  // mounted anyway
    std::vector<Pin> list;

    void add(const std::string& path, bool link) {
        if (enclosing_root(roots, path).empty()) return;  // read-only already
        if (std::find(roots.begin(), roots.end(), path) != roots.end()) return;
        if (std::find(protected_paths.begin(), protected_paths.end(), path) != protected_paths.end()) return;
        for (const auto& pin : list)
            if (pin.path == path) return;
        list.push_back({path, link});
    }

    // Every directory strictly between the innermost root holding path and path.
    void between(const std::string& path) {
        const std::string root = enclosing_root(roots, path);
        if (root.empty()) return;
        for (auto slash = path.find('/', root.size() + 1); slash != std::string::npos;
             slash = path.find('/', slash + 1))
            add(path.substr(0, slash), false);
    }

    // Every directory and symlink on the literal path `target` (relative to
    // the directory dir, which has no symlinks), following the symlinks, at
    // most 16 deep.
    void follow(const std::string& dir, std::string_view target) {
        WalkVisitor visit;
        visit.link = [this](const std::string& link, std::string_view, int depth) {
            add(link, true);
            if (depth + 1 > 16)
                fail(kStep, "too many symlinks on the way to a protected path from " + parent_path(link),
                     "shorten the chain of symlinks, or --unprotect the name");
        };
        visit.other = [this](const std::string& path, const struct stat& st) {
            if (S_ISDIR(st.st_mode)) add(path, false);
        };
        (void)walk_path(dir, target, visit);
    }
};

// The directory a `.git` file names ("gitdir: DIR"), "" when none.
std::string gitdir_of(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (!fd.valid()) return {};
    char buf[4096];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n <= 0) return {};
    return gitdir_of_text(std::string_view(buf, static_cast<std::size_t>(n)));
}

// A mount of a directory on itself: it stays as writable as it was.
void pin_directory(const std::string& path) {
    Fd dir = open_exact(path, O_PATH | O_DIRECTORY);
    if (!dir.valid()) fail_changed(path);
    pin_at(dir, "", AT_RECURSIVE, path + ", which lies between a writable root and a nested root or protected path",
           "retry the command, or use a workspace outside the other writable roots");
}

// The covers of the view: a small tmpfs made once in pid 1, attached on
// /proc while the view is built; each cover is a clone of one of its names,
// read-only.
class Covers {
public:
    static constexpr const char* kEmpty = "empty";         // directory, 0555
    static constexpr const char* kDenyDir = "deny";        // directory, 0000
    static constexpr const char* kDenyFile = "deny-file";  // file, 0000
    explicit Covers(const std::vector<Skeleton>& skeletons) {
        Fd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
        if (!fs.valid()) fail_errno(kStep, "fsopen tmpfs", "the kernel needs fsopen (Linux 5.2 or later) and tmpfs");
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "size", "4k", 0) != 0 ||
            ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "mode", "0111", 0) != 0 ||
            ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
            fail_errno(kStep, "creating the tmpfs of the covers");
        mount_ = Fd(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
        if (!mount_.valid()) fail_errno(kStep, "fsmount of the covers' tmpfs");
        make(kEmpty, true, 0555);
        make(kDenyDir, true, 0);
        make(kDenyFile, false, 0);
        for (std::size_t i = 0; i < skeletons.size(); ++i) {
            const std::string top = skeleton(i);
            std::vector<std::string> dirs{top};
            make(top, true, 0700);
            for (const auto& [rel, dir] : skeletons[i]) {
                std::string at = top;
                for (std::size_t pos = 0;;) {
                    const auto slash = rel.find('/', pos);
                    at += "/" + rel.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
                    if (slash == std::string::npos) break;
                    if (std::find(dirs.begin(), dirs.end(), at) == dirs.end()) {
                        make(at, true, 0700);
                        dirs.push_back(at);
                    }
                    pos = slash + 1;
                }
                make(at, dir, dir ? 0111 : 0);
            }
            // Traverse-only, deepest first (made 0700 to be filled).
            for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
                if (::fchmodat(mount_.get(), it->c_str(), 0111, 0) != 0)
                    fail_errno(kStep, "chmod in the covers' tmpfs");
        }
        set_readonly(mount_.get(), "", AT_EMPTY_PATH);
        // Cloned from where it is attached: kernels before 6.15 clone no
        // detached mount.  /proc is there in every view, and pid 1 mounts a
        // fresh proc over it afterwards anyway; the tmpfs goes again first.
        if (::move_mount(mount_.get(), "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) != 0)
            fail_errno(kStep, "attaching the covers' tmpfs on /proc");
    }
    Covers(const Covers&) = delete;
    Covers& operator=(const Covers&) = delete;
    ~Covers() { (void)::umount2("/proc", MNT_DETACH | UMOUNT_NOFOLLOW); }

    static std::string skeleton(std::size_t i) { return "hole" + std::to_string(i); }

    // A read-only clone of name (recursive: a skeleton), to be attached over path.
    Fd clone(const std::string& name, const std::string& path) const {
        Fd tree(::open_tree(mount_.get(), name.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
        if (!tree.valid()) fail_errno(kStep, "open_tree of the cover for " + path);
        return tree;
    }

private:
    void make(const std::string& name, bool dir, mode_t mode) {
        if (dir) {
            if (::mkdirat(mount_.get(), name.c_str(), 0700) != 0 && errno != EEXIST)
                fail_errno(kStep, "mkdir in the covers' tmpfs");
        } else {
            Fd fd(::openat(mount_.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
            if (!fd.valid()) fail_errno(kStep, "creating a file in the covers' tmpfs");
        }
        if (::fchmodat(mount_.get(), name.c_str(), mode, 0) != 0) fail_errno(kStep, "chmod in the covers' tmpfs");
    }

    Fd mount_;
};

void cover_at(const Covers& covers, const std::string& cover, const Fd& dir, const std::string& name,
              const std::string& path) {
    attach_at(covers.clone(cover, path), dir, name, path);
}

// What the view holds at a denied path ("/": nothing looked at, refused by
// plan_denials).
DeniedPathFact look_at_denied(const std::string& path) {
    if (path == "/") return {path};
    Fd parent = open_exact(parent_path(path), O_PATH | O_DIRECTORY);
    if (!parent.valid()) {
        if (errno == ENOENT || errno == ENOTDIR) return {path, DeniedKind::Missing};
        if (errno == ELOOP) return {path, DeniedKind::Symlink};
        return {path, DeniedKind::Unopenable, errno};
    }
    struct stat st {};
    if (::fstatat(parent.get(), base_name(path).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return {path, DeniedKind::Missing};
    if (S_ISLNK(st.st_mode)) return {path, DeniedKind::Symlink};
    return {path, S_ISDIR(st.st_mode) ? DeniedKind::Directory : DeniedKind::Other};
}

// Step 2: the writable roots that exist, parents before children, each with
// a detached clone (none for "/").
struct RootClones {
    std::vector<ProtectedPaths::Root> found;  // as the host opened them
    std::vector<std::string> paths;
    std::vector<Fd> trees;
};

RootClones clone_writable_roots(const ProtectedPaths& protect) {
    // The writable roots that exist, parents before children, each cloned
    // from what the host opened (checked again) while it is still writable.
    RootClones out{protect.roots(), {}, {}};
    auto& found = out.found;
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.path.size() < b.path.size(); });
    auto& roots = out.paths;
    auto& trees = out.trees;
    roots.reserve(found.size());
    trees.reserve(found.size());
    for (const auto& root : found) {
        roots.push_back(root.path);
        if (root.path == "/") {
            trees.emplace_back();
            continue;
        }
        const Fd at = reopen(root.path, root.id, O_PATH);
        trees.push_back(clone_at(at, "", root.path, AT_RECURSIVE));
        // A device (/dev/null) is written through a read-only mount all the
        // same; read-only, its owner, mode and times stay the host's.
        struct stat st {};
        if (::fstat(at.get(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
            set_readonly(trees.back().get(), "", AT_EMPTY_PATH);
    }
    return out;
}

// Step 4's plan (made before the view is read-only, from the host's paths),
// on roots and protected_paths, which it refers to.
Pins plan_pins(const CanonicalPolicy& policy, const ProtectedPaths& protect, const std::vector<std::string>& roots,
               const std::vector<std::string>& protected_paths) {
    // What must hold still besides the roots and protected paths: the
    // directories between a writable root and a nested root, and every
    // directory and symlink from a root down to a protected path below its
    // top (a gitdir in sub/gd, `.codex -> sub/cfg`, `gitdir: link/gd`, a
    // carve-out docs/api, a denied path).
    Pins pins{roots, protected_paths, {}};
    for (const auto& root : roots) pins.between(root);
    for (const auto& entry : protect.entries()) {
        pins.between(entry.path);
        if (entry.placeholder) continue;
        struct stat st {};
        if (::lstat(entry.path.c_str(), &st) != 0) continue;  // protect_existing refuses
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            const ssize_t n = ::readlink(entry.path.c_str(), target, sizeof target);
            if (n > 0) pins.follow(parent_path(entry.path), std::string_view(target, static_cast<std::size_t>(n)));
        } else if (S_ISREG(st.st_mode) && entry.path.ends_with("/.git")) {
            const std::string gitdir = gitdir_of(entry.path);
            if (!gitdir.empty()) pins.follow(parent_path(entry.path), gitdir);
        }
    }
    for (const auto& path : policy.denied) {
        struct stat st {};
        if (path != "/" && ::lstat(path.c_str(), &st) == 0) pins.between(path);
    }
    return pins;
}

// Step 3: the whole tree read-only (unless "/" is writable), with the
// sandbox's own terminals and /dev/shm.
void make_view_read_only(const CanonicalPolicy& policy) {
    // "/" writable (root:write narrowed by other entries): the view stays
    // writable, with its carve-outs, covers and protected names.
    const bool root_writable = std::any_of(policy.writable.begin(), policy.writable.end(),
                                           [](const WritableRoot& r) { return r.path == "/"; });
    // The sandbox's own /dev/shm (CanonicalPolicy::private_dev_shm): without the root the
    // view has it already (root_view.h), kept writable here; with the root,
    // a fresh one goes over the host's.
    Fd private_shm;
    if (policy.private_dev_shm())
        if (Fd at = open_exact("/dev/shm", O_PATH | O_DIRECTORY); at.valid())
            private_shm =
                policy.reads_root() ? new_private_tmpfs("/dev/shm") : clone_at(at, "", "/dev/shm", AT_RECURSIVE);

    if (!root_writable) set_readonly(AT_FDCWD, "/", AT_RECURSIVE);
    // Without the root the view has them already (root_view.h).
    if (policy.reads_root()) attach_private_terminals();
    if (private_shm.valid()) {
        Fd at = open_exact("/dev/shm", O_PATH | O_DIRECTORY);
        if (!at.valid()) fail_changed("/dev/shm");
        attach_at(private_shm, at, "", "/dev/shm");
    }
}

// Step 4: the roots' clones and the pins, parents first.
void attach_roots_and_pins(const RootClones& clones, const Pins& pins) {
    const std::vector<std::string>& roots = clones.paths;
    // Roots and pins, parents first: a pin is taken from the root holding it.
    struct Step {
        const std::string* path;
        std::size_t tree;  // roots.size() for a pin
        bool link;
    };
    std::vector<Step> steps;
    steps.reserve(roots.size() + pins.list.size());
    for (std::size_t i = 0; i < roots.size(); ++i)
        if (clones.trees[i].valid()) steps.push_back({&roots[i], i, false});
    for (const auto& pin : pins.list) steps.push_back({&pin.path, roots.size(), pin.link});
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.path->size() < b.path->size(); });
    for (const auto& step : steps) {
        if (step.tree < roots.size()) {
            attach_at(clones.trees[step.tree], reopen(*step.path, clones.found[step.tree].id, O_PATH), "", *step.path);
        } else if (step.link) {
            pin_symlink(open_parent(*step.path), base_name(*step.path), *step.path);
        } else {
            pin_directory(*step.path);
        }
    }
}

// Step 6's facts, for plan_denials (deny_plan.h): what the view holds at
// each denied path, looked at before any cover without following a symlink,
// and whether each writable root is a directory.
DenyFacts look_at_denials(const CanonicalPolicy& policy, const ProtectedPaths& protect,
                          const std::vector<std::string>& roots) {
    DenyFacts facts;
    for (const auto& path : policy.denied) facts.denied.push_back(look_at_denied(path));
    for (const auto& entry : protect.entries())
        if (entry.placeholder) facts.placeholders.push_back(entry.path);
    facts.roots = roots;
    for (const auto& root : roots) {
        struct stat st {};
        facts.root_is_directory.push_back(::lstat(root.c_str(), &st) != 0 || S_ISDIR(st.st_mode));
    }
    return facts;
}

// Step 5: each protected path bound read-only (or, under git_write, a git
// view), each placeholder covered.
std::vector<GitView> protect_entries(const CanonicalPolicy& policy, const ProtectedPaths& protect,
                                     const std::vector<std::string>& roots, std::optional<Covers>& covers) {
    // Each parent directory opened (and checked) once: the protected names of
    // a root share it.
    std::vector<std::pair<std::string, Fd>> parents;
    auto parent_fd = [&](const ProtectedPaths::Entry& entry) -> const Fd& {
        const std::string parent = parent_path(entry.path);
        for (const auto& [path, fd] : parents)
            if (path == parent) return fd;
        parents.emplace_back(parent, reopen(parent, entry.parent, O_PATH | O_DIRECTORY));
        return parents.back().second;
    };
    std::vector<GitView> git_views;
    for (const auto& entry : protect.entries()) {
        const Fd& dir = parent_fd(entry);
        const std::string name = base_name(entry.path);
        if (entry.legacy) {
            if (!is_legacy_placeholder(dir, name))
                fail(kStep, "the placeholder " + entry.path + " changed while the sandbox was set up",
                     "retry the command");
            pin_symlink(dir, name, entry.path);
        } else if (entry.placeholder) {
            struct stat st {};
            if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !is_our_placeholder(st))
                fail(kStep, "the placeholder " + entry.path + " changed while the sandbox was set up",
                     "retry the command");
            const bool deny = std::find(policy.denied.begin(), policy.denied.end(), entry.path) != policy.denied.end();
            cover_at(*covers, deny ? Covers::kDenyDir : Covers::kEmpty, dir, name, entry.path);
        } else if (policy.git_write && name == ".git" && GitView::is_repository(dir, name)) {
            git_views.emplace_back(dir, name, entry.path);
        } else {
            protect_existing(dir, entry.path, roots);
        }
    }
    return git_views;
}

// Step 6: the covers of the denied paths.
void cover_denials(const std::vector<DenyPlan>& plans, const RootClones& clones, std::optional<Covers>& covers) {
    const std::vector<std::string>& roots = clones.paths;
    // The covers of the denied paths, parents first; a hole is cloned (with
    // what protects it) before its denied directory is covered, and attached
    // back on the skeleton.
    for (const auto& plan : plans) {
        Fd parent = open_exact(parent_path(plan.path), O_PATH | O_DIRECTORY);
        if (!parent.valid()) {
            if (errno == ELOOP) refuse_symlink_on_way(plan.path);
            fail_changed(plan.path);
        }
        const std::string name = base_name(plan.path);
        if (plan.holes.empty()) {
            cover_at(*covers, plan.dir ? Covers::kDenyDir : Covers::kDenyFile, parent, name, plan.path);
            continue;
        }
        std::vector<Fd> holes;
        for (const std::size_t h : plan.holes)
            holes.push_back(clone_at(reopen(roots[h], clones.found[h].id, O_PATH), "", roots[h], AT_RECURSIVE));
        cover_at(*covers, Covers::skeleton(plan.skeleton), parent, name, plan.path);
        for (std::size_t i = 0; i < holes.size(); ++i) {
            const std::string& hole = roots[plan.holes[i]];
            Fd at = open_exact(hole, O_PATH);
            if (!at.valid()) fail_errno(kStep, "open " + hole + " on the cover of " + plan.path);
            attach_at(holes[i], at, "", hole);
        }
    }
}

}  // namespace

void make_mounts_private() {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail_errno(kStep, "making mounts private");
}

std::vector<GitView> build_filesystem_view(const CanonicalPolicy& policy, const ProtectedPaths& protect) {
    make_mounts_private();  // step 1
    if (!policy.reads_root()) enter_entries_root(policy);
    const RootClones clones = clone_writable_roots(protect);
    std::vector<std::string> protected_paths;
    for (const auto& entry : protect.entries()) protected_paths.push_back(entry.path);
    const Pins pins = plan_pins(policy, protect, clones.paths, protected_paths);
    make_view_read_only(policy);
    attach_roots_and_pins(clones, pins);
    const DenyPlans denials = plan_denials(look_at_denials(policy, protect, clones.paths));
    const bool any_placeholder = std::any_of(protect.entries().begin(), protect.entries().end(),
                                             [](const auto& e) { return e.placeholder && !e.legacy; });
    std::optional<Covers> covers;
    if (any_placeholder || !denials.covers.empty()) covers.emplace(denials.skeletons);
    std::vector<GitView> git_views = protect_entries(policy, protect, clones.paths, covers);
    cover_denials(denials.covers, clones, covers);
    return git_views;
}

void mount_namespace_filesystems(bool read_only, bool fresh_proc) {
    const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | (read_only ? MS_RDONLY : 0);
    if (fresh_proc && ::mount("proc", "/proc", "proc", flags, nullptr) != 0)
        fail_errno(kStep, "mounting /proc for the new pid namespace", "a fully visible /proc must exist on the host");
    // The host's queues are not those of the new IPC namespace: where the host
    // shows its own at /dev/mqueue, the sandbox sees its own there instead.
    struct stat st {};
    if (::lstat("/dev/mqueue", &st) != 0 || !S_ISDIR(st.st_mode)) return;
    if (::mount("mqueue", "/dev/mqueue", "mqueue", flags, nullptr) != 0)
        fail_errno(kStep, "mounting /dev/mqueue for the new IPC namespace",
                   "the kernel needs CONFIG_POSIX_MQUEUE, or remove the host's /dev/mqueue directory");
}

}  // namespace sbx::helper
