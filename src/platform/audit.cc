#include "platform/audit.h"

#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>

namespace sbx {

namespace {

Fd audit_socket(int flags) { return Fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | flags, NETLINK_AUDIT)); }

// AUDIT_GET: -1 unknown (not permitted), 0 off, 1 on.
int audit_enabled() {
    auto fd = audit_socket(0);
    if (!fd.valid()) return -1;
    timeval tv{1, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    nlmsghdr req{};
    req.nlmsg_len = NLMSG_LENGTH(0);
    req.nlmsg_type = AUDIT_GET;
    req.nlmsg_flags = NLM_F_REQUEST;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd.get(), &req, req.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) return -1;
    alignas(nlmsghdr) char buf[8192];
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < static_cast<ssize_t>(NLMSG_LENGTH(sizeof(struct ::audit_status)))) return -1;
    const auto* h = reinterpret_cast<const nlmsghdr*>(buf);
    if (h->nlmsg_type != AUDIT_GET) return -1;
    struct ::audit_status st {};
    std::memcpy(&st, NLMSG_DATA(h), sizeof st);
    return st.enabled != 0 ? 1 : 0;
}

Fd subscribe_readlog() {
    auto fd = audit_socket(SOCK_NONBLOCK);
    if (!fd.valid()) return fd;
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return Fd();
    const int size = 4 << 20;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
    return fd;
}

}  // namespace

AuditStatus audit_status() {
    AuditStatus s;
    const int enabled = audit_enabled();
    s.readable = subscribe_readlog().valid();
    if (enabled != -1) s.enabled = enabled == 1;
    if (s.enabled == false) s.detail = "audit is off (auditctl -e 1 turns it on), so no Landlock denial is recorded";
    else if (s.enabled == true)
        s.detail = s.readable ? "audit is on and readable: exact Landlock denials are reported"
                              : "audit is on, but its records are readable only with CAP_AUDIT_READ: run sbx as root";
    else
        s.detail = s.readable ? "the audit log is readable, but whether audit is on is not (CAP_AUDIT_CONTROL)"
                              : "this user can neither ask whether audit is on nor read its records: root can";
    return s;
}

// Subscribing is cheap; asking the kernel whether audit is on is not (it
// answers from a new kernel thread), so that question waits until collect()
// would otherwise wait for records that might never come.
AuditWatch::AuditWatch() { fd_ = subscribe_readlog(); }

std::vector<AuditRecord> AuditWatch::collect(int wait_ms) {
    std::vector<AuditRecord> out;
    if (!active()) return out;
    auto drain = [&] {
        alignas(nlmsghdr) char buf[16384];
        while (true) {
            const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
            if (n <= 0) break;
            int left = static_cast<int>(n);
            for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
                const int type = h->nlmsg_type;
                if (type != kAuditLandlockAccess && type != kAuditLandlockDomain) continue;
                const char* data = static_cast<const char*>(NLMSG_DATA(h));
                std::size_t len = h->nlmsg_len - NLMSG_LENGTH(0);
                while (len > 0 && (data[len - 1] == '\0' || data[len - 1] == '\n')) --len;
                out.push_back(AuditRecord{type, std::string(data, len)});
            }
        }
    };
    drain();
    // kauditd delivers records asynchronously: wait for the first one, but
    // only when audit is on at all.
    if (out.empty() && wait_ms > 0 && audit_enabled() != 0) {
        pollfd p{fd_.get(), POLLIN, 0};
        ::poll(&p, 1, wait_ms);
        drain();
    }
    return out;
}

}  // namespace sbx
