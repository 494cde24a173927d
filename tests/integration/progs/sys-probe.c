/* Syscall probes for the enforcement tests.  Each probe tries one thing and
 * prints "ok" or the errno name; exit 0 when the call worked, 1 when it
 * failed, 2 on a usage error.  The other-ABI probes may be killed (SIGSYS).
 *
 *   ptrace PID            PTRACE_SEIZE another process (then detach)
 *   ptrace-child          PTRACE_SEIZE a child of this probe
 *   vmread PID ADDR       process_vm_readv of 1 byte at ADDR (hex) in PID
 *   vmread-child          process_vm_readv from a child of this probe
 *   io_uring              io_uring_setup
 *   tiocsti [high]        ioctl(/dev/null, TIOCSTI[|1<<32]): unfiltered ENOTTY
 *   tiocsti-stdin [high]  TIOCSTI[|1<<32] on stdin (give it a terminal)
 *   int80                 getpid through the i386 ABI (int $0x80)
 *   x32                   getpid through the x32 ABI (bit 30 of the number)
 *   mount DIR             mount a tmpfs on DIR
 *   umount DIR            umount2 DIR
 *   create PATH MODE      open(PATH, O_CREAT|O_EXCL|O_WRONLY, MODE) (MODE in octal)
 *   tmpfile DIR PATH MODE open(DIR, O_TMPFILE|O_WRONLY, MODE), then linkat it to PATH
 *   mknod PATH MODE       mknod(PATH, S_IFREG|MODE, 0)
 *   fchmodat2 PATH MODE   fchmodat2(AT_FDCWD, PATH, MODE, 0) (syscall 452)
 *   openat2 PATH          openat2(AT_FDCWD, PATH, {O_RDONLY}) (syscall 437)
 *   tty winsz|setd|ooff|excl
 *                         on stdin (give it a terminal): TIOCSWINSZ to 50x132,
 *                         TIOCSETD to N_NULL (27), TCXONC(TCOOFF), TIOCEXCL
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int result(long rc) {
    if (rc < 0) {
        printf("%s\n", strerrorname_np(errno) ? strerrorname_np(errno) : strerror(errno));
        return 1;
    }
    printf("ok\n");
    return 0;
}

static char secret[] = "secret";

static pid_t sleeping_child(void) {
    pid_t c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    return c;
}

static void end_child(pid_t c) {
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
}

static long seize(pid_t pid) {
    long rc = ptrace(PTRACE_SEIZE, pid, NULL, NULL);
    if (rc == 0) ptrace(PTRACE_DETACH, pid, NULL, NULL);
    return rc;
}

static long vmread(pid_t pid, uintptr_t addr) {
    char buf[1];
    struct iovec local = {buf, 1}, remote = {(void*)addr, 1};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2) return 2;
    const char* what = argv[1];
    if (strcmp(what, "ptrace") == 0 && argc == 3) return result(seize(atoi(argv[2])));
    if (strcmp(what, "ptrace-child") == 0) {
        pid_t c = sleeping_child();
        long rc = seize(c);
        int saved = errno;
        end_child(c);
        errno = saved;
        return result(rc);
    }
    if (strcmp(what, "vmread") == 0 && argc == 4) return result(vmread(atoi(argv[2]), strtoull(argv[3], NULL, 16)));
    if (strcmp(what, "vmread-child") == 0) {
        pid_t c = sleeping_child();
        long rc = vmread(c, (uintptr_t)secret);
        int saved = errno;
        end_child(c);
        errno = saved;
        return result(rc);
    }
    if (strcmp(what, "io_uring") == 0) {
        char params[120];
        memset(params, 0, sizeof params);
        return result(syscall(425 /* io_uring_setup */, 4, params));
    }
    if (strcmp(what, "tiocsti") == 0) {
        unsigned long request = TIOCSTI;
        if (argc == 3 && strcmp(argv[2], "high") == 0) request |= 1UL << 32;
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        char c = 'x';
        if (fd < 0) return result(-1);
        return result(syscall(SYS_ioctl, fd, request, &c));
    }
    if (strcmp(what, "tiocsti-stdin") == 0) {
        unsigned long request = TIOCSTI;
        if (argc == 3 && strcmp(argv[2], "high") == 0) request |= 1UL << 32;
        char c = '#';
        return result(syscall(SYS_ioctl, 0, request, &c));
    }
    if (strcmp(what, "int80") == 0) {
        long ret = 20; /* __NR_getpid on i386 */
        __asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
        if (ret < 0 && ret > -4096) {
            errno = (int)-ret;
            return result(-1);
        }
        printf("ok (pid %ld)\n", ret);
        return 0;
    }
    if (strcmp(what, "x32") == 0) return result(syscall(0x40000000L | SYS_getpid));
    if (strcmp(what, "mount") == 0 && argc == 3) return result(mount("none", argv[2], "tmpfs", 0, NULL));
    if (strcmp(what, "umount") == 0 && argc == 3) return result(umount2(argv[2], MNT_DETACH));
    if (strcmp(what, "create") == 0 && argc == 4) {
        int fd = open(argv[2], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, (mode_t)strtoul(argv[3], NULL, 8));
        if (fd >= 0) close(fd);
        return result(fd);
    }
    if (strcmp(what, "tmpfile") == 0 && argc == 5) {
        int fd = open(argv[2], O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)strtoul(argv[4], NULL, 8));
        if (fd < 0) return result(-1);
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        return result(linkat(AT_FDCWD, self, AT_FDCWD, argv[3], AT_SYMLINK_FOLLOW));
    }
    if (strcmp(what, "mknod") == 0 && argc == 4)
        return result(mknod(argv[2], S_IFREG | (mode_t)strtoul(argv[3], NULL, 8), 0));
    if (strcmp(what, "fchmodat2") == 0 && argc == 4)
        return result(syscall(452, AT_FDCWD, argv[2], strtoul(argv[3], NULL, 8), 0));
    if (strcmp(what, "openat2") == 0 && argc == 3) {
        struct {
            uint64_t flags, mode, resolve;
        } how = {O_RDONLY | O_CLOEXEC, 0, 0};
        long fd = syscall(437, AT_FDCWD, argv[2], &how, sizeof how);
        if (fd >= 0) close((int)fd);
        return result(fd);
    }
    if (strcmp(what, "tty") == 0 && argc == 3) {
        const char* op = argv[2];
        if (strcmp(op, "winsz") == 0) {
            struct winsize ws = {50, 132, 0, 0};
            return result(ioctl(0, TIOCSWINSZ, &ws));
        }
        if (strcmp(op, "setd") == 0) {
            int disc = 27; /* N_NULL */
            return result(ioctl(0, TIOCSETD, &disc));
        }
        if (strcmp(op, "ooff") == 0) return result(ioctl(0, TCXONC, (unsigned long)TCOOFF));
        if (strcmp(op, "excl") == 0) return result(ioctl(0, TIOCEXCL));
    }
    fprintf(stderr, "usage: see the comment at the top of sys-probe.c\n");
    return 2;
}
