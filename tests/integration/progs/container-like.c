/* container-like: runs a command as it would run in a Docker or Podman
 * container with the engines' defaults, without an engine: the default
 * capability set (the bounding, permitted, effective and inheritable sets
 * cut to it) and the part of the default seccomp profile that decides what a
 * sandbox can do there: no new namespaces (unshare, setns, clone with a
 * CLONE_NEW* flag: EPERM; clone3: ENOSYS, so that callers fall back to
 * clone), no mounts, no keyrings, no bpf, no perf.  Landlock, seccomp and
 * prctl stay allowed, as in the default profile.  The filter is loaded with
 * no_new_privs unset when the caller may (root: the engines do not set it),
 * else with it set.
 *
 *   container-like CMD [ARG...]
 *
 * Built by the tests with cc and libseccomp (tests/integration/containers.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int kept[] = {
    CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FSETID,  CAP_FOWNER,           CAP_MKNOD,      CAP_NET_RAW, CAP_SETGID,
    CAP_SETUID, CAP_SETFCAP,      CAP_SETPCAP, CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT, CAP_KILL,    CAP_AUDIT_WRITE};

static int is_kept(int cap) {
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; ++i)
        if (kept[i] == cap) return 1;
    return 0;
}

static void die(const char* what, int err) {
    fprintf(stderr, "container-like: %s: %s\n", what, strerror(err));
    exit(126);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: container-like CMD [ARG...]\n");
        return 2;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) die("seccomp_init", ENOMEM);
    const unsigned long new_namespaces = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                         CLONE_NEWNET | CLONE_NEWCGROUP | 0x80 /* CLONE_NEWTIME */;
    int rc = 0;
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0);
    /* clone with any CLONE_NEW* bit: one rule per bit (a masked compare
     * against a nonzero value). */
    for (unsigned long bit = 1; bit; bit <<= 1)
        if (new_namespaces & bit)
            rc |=
                seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    const int refused[] = {SCMP_SYS(mount),      SCMP_SYS(umount2),         SCMP_SYS(pivot_root),
                           SCMP_SYS(fsopen),     SCMP_SYS(fsmount),         SCMP_SYS(fsconfig),
                           SCMP_SYS(move_mount), SCMP_SYS(open_tree),       SCMP_SYS(mount_setattr),
                           SCMP_SYS(keyctl),     SCMP_SYS(add_key),         SCMP_SYS(request_key),
                           SCMP_SYS(bpf),        SCMP_SYS(perf_event_open), SCMP_SYS(open_by_handle_at)};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i)
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i], 0);
    if (rc != 0) die("seccomp_rule_add", -rc);

    /* The capabilities first (dropping from the bounding set needs
     * CAP_SETPCAP, which the default set keeps). */
    for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
        if (!is_kept(cap) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
            die("PR_CAPBSET_DROP", errno);
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &header, data) != 0) die("capget", errno);
    for (int cap = 0; cap < 64; ++cap) {
        if (is_kept(cap)) continue;
        data[cap / 32].effective &= ~(1U << (cap % 32));
        data[cap / 32].permitted &= ~(1U << (cap % 32));
        data[cap / 32].inheritable &= ~(1U << (cap % 32));
    }
    /* Without CAP_SYS_ADMIN the filter needs no_new_privs; the engines load
     * theirs before dropping it, so root here keeps it for the load. */
    const int root = geteuid() == 0;
    if (!root) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs", errno);
        if (seccomp_load(ctx) != 0) die("seccomp_load", errno);
        if (syscall(SYS_capset, &header, data) != 0) die("capset", errno);
    } else {
        if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0) die("seccomp_attr_set", EINVAL);
        if (seccomp_load(ctx) != 0) die("seccomp_load", errno);
        if (syscall(SYS_capset, &header, data) != 0) die("capset", errno);
    }
    seccomp_release(ctx);
    execvp(argv[1], argv + 1);
    die(argv[1], errno);
}
