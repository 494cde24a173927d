#include "landlock.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mount_ops.h"
#include "step_error.h"
#include "util/fd.h"
#include "util/landlock_abi.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "landlock";
constexpr const char* kNoLandlock =
    "enable Landlock (CONFIG_SECURITY_LANDLOCK and 'landlock' in the lsm= boot parameter)";

// Rights newer than the Debian header (which stops at ABI 2).
constexpr std::uint64_t kFsExecute = 1ULL << 0, kFsWriteFile = 1ULL << 1, kFsReadFile = 1ULL << 2,
                        kFsReadDir = 1ULL << 3, kFsRefer = 1ULL << 13, kFsTruncate = 1ULL << 14,
                        kFsIoctlDev = 1ULL << 15, kFsMakeSock = 1ULL << 9;
constexpr std::uint64_t kNetBindTcp = 1ULL << 0, kNetConnectTcp = 1ULL << 1;
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;
constexpr std::uint32_t kRestrictSelfLogNewExecOn = 1U << 1;  // ABI 7
constexpr std::uint32_t kCreateRulesetVersion = 1U << 0;

// Reading and running, which a policy that reads "/" leaves unhandled.
constexpr std::uint64_t kReadRights = kFsExecute | kFsReadFile | kFsReadDir;
// The rights that make sense on a non-directory.
constexpr std::uint64_t kFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

struct RulesetAttr {  // struct landlock_ruleset_attr, ABI 6 layout
    std::uint64_t handled_access_fs = 0;
    std::uint64_t handled_access_net = 0;
    std::uint64_t scoped = 0;
};

std::uint64_t fs_rights(int abi) {
    std::uint64_t rights = (1ULL << 13) - 1;  // ABI 1: execute .. make_sym
    if (abi >= 2) rights |= kFsRefer;
    if (abi >= 3) rights |= kFsTruncate;
    if (abi >= 5) rights |= kFsIoctlDev;
    return rights;
}

// A writable root (resolved: no symlinks) is opened without following any,
// so that one swapped onto its way meanwhile is refused, not granted.
void add_path_rule(int ruleset, const std::string& path, std::uint64_t rights, bool exact = false) {
    Fd fd = exact ? open_exact(path, O_PATH) : Fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd.valid()) {
        if (errno == ENOENT) return;  // nothing to grant on a path that is not there
        if (errno == ELOOP && exact)
            fail(kStep,
                 "the writable root " + path + " is reached through a symlink now (it changed after it was resolved)",
                 "retry the command");
        fail_errno(kStep, "open " + path);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail_errno(kStep, "fstat " + path);
    if (!S_ISDIR(st.st_mode)) rights &= kFileRights;
    landlock_path_beneath_attr rule{};
    rule.allowed_access = rights;
    rule.parent_fd = fd.get();
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        fail_errno(kStep, "adding the rule for " + path);
}

// The names of the controlling terminal when it is fd 0 (TIOCGSID answers
// only for that; in a pid namespace the session's leader may read as 0):
// /dev/tty, and the name fd 0 has (ttyname: /dev/pts/N) when that name is
// the same device in this view; none otherwise.
std::vector<std::string> terminal_names() {
    if (::isatty(STDIN_FILENO) != 1 || ::tcgetsid(STDIN_FILENO) == -1) return {};
    std::vector<std::string> names{"/dev/tty"};
    char name[256];
    struct stat in {
    }, named{};
    if (::ttyname_r(STDIN_FILENO, name, sizeof name) == 0 && ::fstat(STDIN_FILENO, &in) == 0 &&
        ::stat(name, &named) == 0 && S_ISCHR(named.st_mode) && named.st_rdev == in.st_rdev)
        names.emplace_back(name);
    return names;
}

// Whether Landlock applies at all (false: no Landlock, external-sandbox,
// whose network layer is seccomp's); refuses (StepError) what this ABI
// cannot enforce for the policy.
bool refuse_what_abi_cannot_enforce(const CanonicalPolicy& policy, int abi, bool with_mount_layer) {
    const bool filesystem = policy.sandboxed_filesystem();
    if (abi < 1) {
        if (filesystem) fail(kStep, "the kernel offers no Landlock", kNoLandlock);
        return false;
    }
    if (filesystem && !with_mount_layer) refuse_landlock_alone(policy);
    if (filesystem && !with_mount_layer && abi < 3)
        fail(kStep,
             "Landlock ABI " + std::to_string(abi) + " cannot deny truncation and there is no read-only mount view",
             "use a kernel with Landlock ABI 3 (Linux 6.2) or enable user namespaces");
    return true;
}

// The rights the ruleset handles, and its scopes.
RulesetAttr handled_rights(const CanonicalPolicy& policy, int abi, bool with_mount_layer) {
    // Every right the ruleset handles and no rule grants costs a walk from
    // the file up to "/" on each open that asks for it, in the kernel.  So:
    // - read and execute, when the policy reads "/": a rule on "/" would
    //   grant them everywhere, so they are left unhandled, which grants them
    //   with no walk;
    // - truncate, with the mount view: the kernel asks it on every open (for
    //   a later ftruncate), so every read of a file outside the writable
    //   roots walked to "/"; there, outside the writable roots every mount is
    //   read-only (EROFS), and O_TRUNC needs the write right, still handled.
    std::uint64_t unhandled = 0;
    if (policy.reads_root()) unhandled |= kReadRights;
    if (with_mount_layer) unhandled |= kFsTruncate;
    RulesetAttr attr;
    if (policy.sandboxed_filesystem()) attr.handled_access_fs = fs_rights(abi) & ~unhandled;
    if (abi >= 4 && policy.network == Network::Restricted) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    // Signals: every sandbox, external-sandbox too, where no pid namespace
    // would otherwise keep the command from killing sbx (and outliving its
    // timeout) or any other process of the user; below ABI 6 the caller
    // gives external-sandbox a pid namespace instead (main.cc).
    if (abi >= 6) {
        attr.scoped = kScopeSignal;
        if (policy.sandboxed_filesystem() || policy.network != Network::Full) attr.scoped |= kScopeAbstractUnix;
    }
    return attr;
}

// What the filesystem rules are given beside the policy.
struct FsRuleOptions {
    std::uint64_t handled = 0;  // the ruleset's handled_access_fs
    bool with_mount_layer = false;
    bool socket_files = true;
};

// Read entries (only without "/": with it, reads are not handled); deny
// entries get no rule (Landlock cannot take away below an allowed parent:
// the view covers them).
void add_read_rules(const Fd& ruleset, const CanonicalPolicy& policy) {
    if (policy.reads_root()) return;
    for (const auto& path : policy.readable) add_path_rule(ruleset.get(), path, kReadRights);
    // The new root holds only the entries' paths, /dev and /proc
    // (root_view.h), so listing its directories shows nothing else; a denied
    // or skeleton directory's mode keeps it unlistable.
    add_path_rule(ruleset.get(), "/", kFsReadDir);
    for (const char* path : {"/dev", "/proc"})
        if (std::find(policy.readable.begin(), policy.readable.end(), path) == policy.readable.end())
            add_path_rule(ruleset.get(), path, kReadRights);
}

void add_filesystem_rules(const Fd& ruleset, const CanonicalPolicy& policy, const FsRuleOptions& options) {
    const std::uint64_t all = options.handled & (options.socket_files ? ~0ULL : ~kFsMakeSock);
    add_read_rules(ruleset, policy);
    for (const auto& root : policy.writable) add_path_rule(ruleset.get(), root.path, all, true);
    // The sandbox's own ptys (root_view.h: a devpts of its own, none of
    // the host's in it): opened, read, written, and their ioctls (ABI 5),
    // which seccomp narrows (seccomp_rules.h).
    if (options.with_mount_layer) {
        const std::uint64_t pty = (kFsReadFile | kFsWriteFile | kFsReadDir | kFsIoctlDev) & options.handled;
        if (pty != 0)
            for (const char* path : {"/dev/pts", "/dev/ptmx"}) add_path_rule(ruleset.get(), path, pty);
    }
    // The sandbox's own /dev/shm (CanonicalPolicy::private_dev_shm),
    // which only the mount layer makes: without it /dev/shm is the host's.
    if (options.with_mount_layer && policy.private_dev_shm()) add_path_rule(ruleset.get(), "/dev/shm", all);
    // The controlling terminal, when it is the command's stdin, read and
    // written by its names (with its ioctls, which seccomp filters on
    // every descriptor: no TIOCSTI, TIOCSWINSZ, TIOCSCTTY): /dev/tty,
    // and /dev/pts/N that less and vim open (terminal_names).  /dev/tty
    // opens the opener's own controlling terminal and nothing else, and
    // /dev/pts/N is granted only as the device fd 0 is, so both reach
    // only what the command holds on fd 0 already: under sbx's relay the
    // private pseudo-terminal sbx made for it (sbx's exec/terminal.h),
    // else (-T, codex) the terminal it was given, whose fd 0 a terminal
    // session opens read-write.  Without that (stdin a pipe or a file
    // while the session has a terminal) there is no rule: /dev/tty stays
    // read-only, so that output sbx's caller sent elsewhere cannot be
    // written to the terminal behind its back.
    for (const auto& name : terminal_names())
        add_path_rule(ruleset.get(), name, (kFsReadFile | kFsWriteFile | kFsIoctlDev) & all);
}

}  // namespace

void refuse_landlock_alone(const CanonicalPolicy& policy) {
    const std::string fix = "enable unprivileged user namespaces, or drop the entry";
    if (!policy.reads_root())
        fail(kStep,
             "without a mount namespace a policy that does not read / cannot be enforced (Landlock alone cannot hide "
             "the rest)",
             "enable unprivileged user namespaces, or add a ':root' read entry");
    // sbx's own deny of the app-server's socket directory is listed as not
    // enforced, with the protected names, by the caller's note.
    const std::string daemon = "/tmp/codex-daemon-" + std::to_string(::geteuid());
    for (const auto& path : policy.denied)
        if (path != daemon)
            fail(kStep,
                 "without a mount namespace the denied path " + path +
                     " cannot be hidden (Landlock alone cannot deny below a readable directory)",
                 fix);
    for (const auto& path : policy.readable)
        for (const auto& root : policy.writable)
            if (path == root.path || path_below(path, root.path))
                fail(kStep,
                     "without a mount namespace the read-only path " + path + " inside the writable root " + root.path +
                         " cannot be enforced (Landlock alone cannot take writes away below a writable directory)",
                     fix);
}

bool landlock_scopes_signals() { return landlock_abi() >= 6; }

void apply_landlock(const CanonicalPolicy& policy, bool with_mount_layer, bool socket_files) {
    const int abi = landlock_abi();
    if (!refuse_what_abi_cannot_enforce(policy, abi, with_mount_layer)) return;
    const RulesetAttr attr = handled_rights(policy, abi, with_mount_layer);
    if (!attr.handled_access_fs && !attr.handled_access_net && !attr.scoped) return;
    Fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)));
    if (!ruleset.valid()) fail_errno(kStep, "creating the ruleset", kNoLandlock);
    if (policy.sandboxed_filesystem())
        add_filesystem_rules(ruleset, policy, {attr.handled_access_fs, with_mount_layer, socket_files});
    const std::uint32_t flags = abi >= 7 ? kRestrictSelfLogNewExecOn : 0;
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), flags) != 0)
        fail_errno(kStep, "landlock_restrict_self", "no_new_privs must be set first");
}

}  // namespace sbx::helper
