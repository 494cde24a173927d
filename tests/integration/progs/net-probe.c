/* Network probes for the enforcement tests.  Each probe tries one thing and
 * prints "ok" or the errno name; exit 0 when the operation worked, 1 when it
 * failed, 2 on a usage error.
 *
 *   tcp HOST PORT MSG          connect (IPv4 or IPv6 literal) and send MSG
 *   udp HOST PORT MSG          sendto
 *   udp-msg HOST PORT MSG      sendmsg with the address in msg_name (where no
 *                              seccomp filter can read it)
 *   raw                        socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)
 *   unix PATH MSG              connect to a pathname stream socket, send MSG
 *   abstract NAME MSG          the same for an abstract name
 *   socket FAMILY              socket(): netlink, packet, vsock, unix-dgram, inet, inet6, unix
 *   socketpair                 an AF_UNIX stream pair carries a message both ways
 *   serve-tcp HOST             serve on HOST:0 and connect to it from a child
 *   serve-unix PATH            the same on a pathname socket
 *   serve-abstract NAME        the same on an abstract name
 *   accept-unix PATH           bind PATH, accept one connection, print what it sends
 *   stall-unix PATH            a server on PATH that never accepts, three clients
 *                              blocked connecting to it (each interrupted by
 *                              SIGALRM after 2 s); meanwhile serve-tcp 127.0.0.1
 *                              must work.  Prints "ok", then "interrupted N".
 *   race-unix GOOD BAD N       serve GOOD; N connects (sending "race") while a
 *                              thread flips the address between GOOD and BAD;
 *                              prints "connected X of N"
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static int failed(const char* what) {
    printf("%s: %s\n", what, strerrorname_np(errno) ? strerrorname_np(errno) : strerror(errno));
    return 1;
}

static int worked(void) {
    printf("ok\n");
    return 0;
}

/* An IPv4 or IPv6 literal and a port. */
static socklen_t inet_address(const char* host, const char* port, struct sockaddr_storage* ss) {
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in* v4 = (struct sockaddr_in*)ss;
    struct sockaddr_in6* v6 = (struct sockaddr_in6*)ss;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((unsigned short)atoi(port));
        return sizeof *v4;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((unsigned short)atoi(port));
        return sizeof *v6;
    }
    fprintf(stderr, "not an address: %s\n", host);
    exit(2);
}

static socklen_t unix_address(const char* name, int abstract, struct sockaddr_un* un) {
    memset(un, 0, sizeof *un);
    un->sun_family = AF_UNIX;
    size_t n = strlen(name);
    if (n + 2 > sizeof un->sun_path) {
        fprintf(stderr, "name too long\n");
        exit(2);
    }
    memcpy(un->sun_path + (abstract ? 1 : 0), name, n);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
}

static int connect_and_send(int domain, const struct sockaddr* addr, socklen_t len, const char* msg) {
    int fd = socket(domain, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return failed("socket");
    if (connect(fd, addr, len) != 0) return failed("connect");
    if (send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0) return failed("send");
    close(fd);
    return worked();
}

/* Listen on fd (already bound), connect from a child, pass a message. */
static int serve(int domain, int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (listen(fd, 4) != 0) return failed("listen");
    if (getsockname(fd, (struct sockaddr*)&ss, &len) != 0) return failed("getsockname");
    pid_t child = fork();
    if (child < 0) return failed("fork");
    if (child == 0) {
        int c = socket(domain, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c < 0 || connect(c, (struct sockaddr*)&ss, len) != 0) _exit(failed("client connect"));
        if (send(c, "hello", 5, MSG_NOSIGNAL) != 5) _exit(failed("client send"));
        _exit(0);
    }
    int a = accept(fd, NULL, NULL);
    int status = 0;
    if (a < 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        return failed("accept");
    }
    char buf[8] = {0};
    ssize_t n = recv(a, buf, 5, MSG_WAITALL);
    waitpid(child, &status, 0);
    if (n != 5 || memcmp(buf, "hello", 5) != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("the message did not arrive\n");
        return 1;
    }
    return worked();
}

static void on_alarm(int sig) { (void)sig; }

/* The address the race probe connects to, flipped by a thread. */
static struct sockaddr_un race_address;
static struct sockaddr_un race_choices[2];
static volatile int race_stop;
static volatile unsigned race_flips;

static void* flipper(void* arg) {
    (void)arg;
    for (unsigned i = 0; !race_stop; ++i) {
        memcpy(&race_address, &race_choices[i & 1], sizeof race_address);
        race_flips = i;
    }
    return NULL;
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2) return 2;
    const char* what = argv[1];
    struct sockaddr_storage ss;
    struct sockaddr_un un;

    if (strcmp(what, "tcp") == 0 && argc == 5) {
        socklen_t len = inet_address(argv[2], argv[3], &ss);
        return connect_and_send(ss.ss_family, (struct sockaddr*)&ss, len, argv[4]);
    }
    if (strcmp(what, "udp") == 0 && argc == 5) {
        socklen_t len = inet_address(argv[2], argv[3], &ss);
        int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        if (sendto(fd, argv[4], strlen(argv[4]), 0, (struct sockaddr*)&ss, len) < 0) return failed("sendto");
        return worked();
    }
    if (strcmp(what, "udp-msg") == 0 && argc == 5) {
        socklen_t len = inet_address(argv[2], argv[3], &ss);
        int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        struct iovec iov = {argv[4], strlen(argv[4])};
        struct msghdr msg = {.msg_name = &ss, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1};
        if (sendmsg(fd, &msg, 0) < 0) return failed("sendmsg");
        return worked();
    }
    if (strcmp(what, "raw") == 0 && argc == 2) {
        if (socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP) < 0) return failed("socket");
        return worked();
    }
    if (strcmp(what, "unix") == 0 && argc == 4) {
        socklen_t len = unix_address(argv[2], 0, &un);
        return connect_and_send(AF_UNIX, (struct sockaddr*)&un, len, argv[3]);
    }
    if (strcmp(what, "abstract") == 0 && argc == 4) {
        socklen_t len = unix_address(argv[2], 1, &un);
        return connect_and_send(AF_UNIX, (struct sockaddr*)&un, len, argv[3]);
    }
    if (strcmp(what, "unix-dgram") == 0 && argc == 4) {
        socklen_t len = unix_address(argv[2], 0, &un);
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        if (sendto(fd, argv[3], strlen(argv[3]), 0, (struct sockaddr*)&un, len) < 0) return failed("sendto");
        return worked();
    }
    if (strcmp(what, "socket") == 0 && argc == 3) {
        int fd = -1;
        const char* f = argv[2];
        if (strcmp(f, "netlink") == 0) fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        else if (strcmp(f, "packet") == 0) fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
        else if (strcmp(f, "vsock") == 0) fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
        else if (strcmp(f, "unix-dgram") == 0) fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        else if (strcmp(f, "unix") == 0) fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        else if (strcmp(f, "inet") == 0) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        else if (strcmp(f, "inet6") == 0) fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        else return 2;
        if (fd < 0) return failed("socket");
        return worked();
    }
    if (strcmp(what, "socketpair") == 0 && argc == 2) {
        int sv[2];
        char buf[4] = {0};
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return failed("socketpair");
        if (write(sv[0], "ping", 4) != 4 || read(sv[1], buf, 4) != 4 || memcmp(buf, "ping", 4) != 0)
            return failed("exchange");
        if (write(sv[1], "pong", 4) != 4 || read(sv[0], buf, 4) != 4 || memcmp(buf, "pong", 4) != 0)
            return failed("exchange");
        return worked();
    }
    if (strcmp(what, "serve-tcp") == 0 && argc == 3) {
        socklen_t len = inet_address(argv[2], "0", &ss);
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        if (bind(fd, (struct sockaddr*)&ss, len) != 0) return failed("bind");
        return serve(ss.ss_family, fd);
    }
    if ((strcmp(what, "serve-unix") == 0 || strcmp(what, "serve-abstract") == 0) && argc == 3) {
        socklen_t len = unix_address(argv[2], what[6] == 'a', &un);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        if (bind(fd, (struct sockaddr*)&un, len) != 0) return failed("bind");
        return serve(AF_UNIX, fd);
    }
    if (strcmp(what, "accept-unix") == 0 && argc == 3) {
        socklen_t len = unix_address(argv[2], 0, &un);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        if (bind(fd, (struct sockaddr*)&un, len) != 0) return failed("bind");
        if (listen(fd, 4) != 0) return failed("listen");
        int a = accept(fd, NULL, NULL);
        if (a < 0) return failed("accept");
        char buf[64] = {0};
        ssize_t n = recv(a, buf, sizeof buf - 1, 0);
        if (n < 0) return failed("recv");
        printf("got %s\n", buf);
        return 0;
    }
    if (strcmp(what, "stall-unix") == 0 && argc == 3) {
        socklen_t len = unix_address(argv[2], 0, &un);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        if (bind(fd, (struct sockaddr*)&un, len) != 0) return failed("bind");
        if (listen(fd, 0) != 0) return failed("listen");
        pid_t clients[3];
        for (int i = 0; i < 3; ++i) {
            clients[i] = fork();
            if (clients[i] == 0) {
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = on_alarm; /* no SA_RESTART: connect returns EINTR */
                sigaction(SIGALRM, &sa, NULL);
                alarm(2);
                int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (connect(c, (struct sockaddr*)&un, len) == 0) _exit(0);
                fprintf(stderr, "client %d: %s\n", i, strerrorname_np(errno));
                _exit(errno == EINTR ? 3 : 1);
            }
        }
        usleep(300000);
        alarm(10); /* the probe dies if serving blocks */
        int rc = serve(AF_INET, ({
                           struct sockaddr_storage a;
                           socklen_t l = inet_address("127.0.0.1", "0", &a);
                           int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                           if (t < 0 || bind(t, (struct sockaddr*)&a, l) != 0) return failed("bind");
                           t;
                       }));
        int interrupted = 0;
        for (int i = 0; i < 3; ++i) {
            int status = 0;
            waitpid(clients[i], &status, 0);
            if (WIFEXITED(status) && WEXITSTATUS(status) == 3) ++interrupted;
        }
        printf("interrupted %d\n", interrupted);
        return rc;
    }
    if (strcmp(what, "race-unix") == 0 && argc == 5) {
        unix_address(argv[2], 0, &race_choices[0]);
        unix_address(argv[3], 0, &race_choices[1]);
        race_address = race_choices[0];
        int n = atoi(argv[4]), connected = 0;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return failed("socket");
        if (bind(fd, (struct sockaddr*)&race_choices[0], sizeof race_choices[0]) != 0) return failed("bind");
        if (listen(fd, 128) != 0) return failed("listen");
        pid_t server = fork();
        if (server == 0) {
            for (;;) {
                int a = accept(fd, NULL, NULL);
                if (a >= 0) close(a);
            }
        }
        close(fd);
        pthread_t thread;
        pthread_create(&thread, NULL, flipper, NULL);
        while (race_flips < 1000) usleep(1000);
        for (int i = 0; i < n; ++i) {
            int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (c < 0) return failed("socket");
            if (connect(c, (struct sockaddr*)&race_address, sizeof race_address) == 0) {
                ++connected;
                send(c, "race", 4, MSG_NOSIGNAL);
            }
            close(c);
        }
        race_stop = 1;
        pthread_join(thread, NULL);
        kill(server, SIGKILL);
        waitpid(server, NULL, 0);
        printf("connected %d of %d\n", connected, n);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of net-probe.c\n");
    return 2;
}
