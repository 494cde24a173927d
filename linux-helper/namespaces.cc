#include "namespaces.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "sbx_config.h"
#include "step_error.h"
#include "util/apparmor_userns.h"
#include "util/fd.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "namespaces";

void write_proc_file(const char* path, const char* text, std::size_t length) {
    Fd fd(::open(path, O_WRONLY | O_CLOEXEC));
    if (!fd.valid()) fail_errno(kStep, std::string("open ") + path);
    // Ubuntu's AppArmor restriction refuses the map (EPERM) to a helper
    // without its profile: the refusal then names the profile.
    if (::write(fd.get(), text, length) != static_cast<ssize_t>(length))
        fail_errno(
            kStep, std::string("write ") + path,
            errno == EPERM || errno == EACCES ? apparmor::userns_fix_for_this_helper(SBX_APPARMOR_PROFILE, true) : "");
}

bool userns_unavailable(int err) {
    // EPERM: forbidden by policy (AppArmor, sysctl); ENOSPC/EUSERS: the limit
    // (max_user_namespaces = 0); EINVAL: no CONFIG_USER_NS.
    return err == EPERM || err == ENOSPC || err == EUSERS || err == EINVAL || err == EACCES;
}

pid_t clone_with(int flags) {
    // A fork into new namespaces (no stack: the child continues here).
    return static_cast<pid_t>(
        ::syscall(SYS_clone, static_cast<unsigned long>(flags) | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

}  // namespace

void map_ids(uid_t uid, gid_t gid) {
    char line[64];
    int n = std::snprintf(line, sizeof line, "%u %u 1\n", uid, uid);
    write_proc_file("/proc/self/uid_map", line, static_cast<std::size_t>(n));
    write_proc_file("/proc/self/setgroups", "deny", 4);
    n = std::snprintf(line, sizeof line, "%u %u 1\n", gid, gid);
    write_proc_file("/proc/self/gid_map", line, static_cast<std::size_t>(n));
}

Fork fork_into_namespaces(const NamespaceRequest& request) {
    int flags = 0;
    if (request.mount) flags |= CLONE_NEWNS;
    if (request.pid) flags |= CLONE_NEWPID;
    if (request.ipc) flags |= CLONE_NEWIPC;
    if (request.net) flags |= CLONE_NEWNET;
    if (::geteuid() == 0) {
        const pid_t pid = clone_with(flags);
        if (pid >= 0) return {pid, true, false};
        if (errno != EPERM) fail_errno(kStep, "clone", "check the kernel's namespace support");
        // Root without CAP_SYS_ADMIN (a container): try a user namespace.
    }
    const pid_t pid = clone_with(flags | CLONE_NEWUSER);
    if (pid >= 0) return {pid, true, true};
    if (userns_unavailable(errno)) return {};
    fail_errno(kStep, "clone", "check the kernel's namespace support");
}

void hide_proc() {
    if (::mount("none", "/proc", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555") != 0)
        fail_errno(kStep, "hiding /proc for --no-proc (an empty tmpfs over it)", "run without --no-proc");
}

void without_effective_capabilities(const std::function<void()>& fn) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct saved[2]{};
    if (::syscall(SYS_capget, &header, saved) != 0) fail_errno(kStep, "capget");
    __user_cap_data_struct none[2]{};
    for (int i = 0; i < 2; ++i) none[i] = {0, saved[i].permitted, saved[i].inheritable};
    if (::syscall(SYS_capset, &header, none) != 0) fail_errno(kStep, "capset (effective set off)");
    fn();
    if (::syscall(SYS_capset, &header, saved) != 0) fail_errno(kStep, "capset (effective set back)");
}

}  // namespace sbx::helper
