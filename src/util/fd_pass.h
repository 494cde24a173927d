// Passing a descriptor over a UNIX socket: one byte carrying it as
// SCM_RIGHTS.  The helper hands the seccomp listener from the command to
// pid 1 (linux-helper/process.cc) and the proxy's listening socket from pid 1
// to sbx (linux-helper/network.cc, src/net/proxy.cc).
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "util/fd.h"

namespace sbx {

// The message of one byte with room for one descriptor.
struct FdMessage {
    char byte = 'F';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))]{};
    msghdr msg{};
    FdMessage() {
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    FdMessage(const FdMessage&) = delete;
    FdMessage& operator=(const FdMessage&) = delete;
};

// Sends fd (retried on EINTR; MSG_NOSIGNAL).  False, with errno, when it
// could not be sent.
inline bool send_fd(int socket, int fd) {
    FdMessage m;
    cmsghdr* cmsg = CMSG_FIRSTHDR(&m.msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
    ssize_t n;
    while ((n = ::sendmsg(socket, &m.msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return n == 1;
}

// Receives one descriptor (close-on-exec; retried on EINTR): invalid at the
// end of the stream, on a message without one, or on failure.
inline Fd receive_fd(int socket) {
    FdMessage m;
    ssize_t n;
    while ((n = ::recvmsg(socket, &m.msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return Fd();
    for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg); c != nullptr; c = CMSG_NXTHDR(&m.msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
            return Fd(fd);
        }
    }
    return Fd();
}

}  // namespace sbx
