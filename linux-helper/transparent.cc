#include "transparent.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "file_mask.h"
#include "step_error.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "transparent TCP";
constexpr std::uint32_t kV4Base = 0xc6120000;                     // 198.18.0.0/15 (RFC 2544: never routed)
constexpr std::uint8_t kV6Prefix[12] = {0xfd, 0xc0, 0xde, 0x00};  // fdc0:de00::/96
constexpr std::uint32_t kTtl = 300;
constexpr std::uint16_t kResolverPort = 53;
constexpr std::uint32_t kResolverAddress = 0x7f000035;  // 127.0.0.53

enum Rcode : std::uint8_t { NoError = 0, FormErr = 1, ServFail = 2, NxDomain = 3, NotImp = 4, Refused = 5 };
enum : std::uint16_t { TypeA = 1, TypeAAAA = 28, TypeAny = 255, ClassIn = 1 };

std::uint16_t read16(std::span<const std::uint8_t> b, std::size_t at) {
    return static_cast<std::uint16_t>(b[at] << 8 | b[at + 1]);
}
void put16(std::vector<std::uint8_t>& out, std::uint16_t v) {
    out.push_back(static_cast<std::uint8_t>(v >> 8));
    out.push_back(static_cast<std::uint8_t>(v));
}

bool host_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; }

bool is_localhost(std::string_view name) {
    constexpr std::string_view kLocal = "localhost";
    return name == kLocal ||
           (name.size() > kLocal.size() + 1 && name.ends_with(kLocal) && name[name.size() - kLocal.size() - 1] == '.');
}

// An answer being written: the query's header, then what is added to it.
struct Reply {
    std::vector<std::uint8_t> out;
    std::uint16_t flags = 0;  // the query's

    // The header set for the answer: rcode, the question (up to
    // question_end: none for 0) and the number of answers.
    std::vector<std::uint8_t> finish(Rcode rcode, std::size_t question_end, std::uint16_t answers) {
        out[2] = static_cast<std::uint8_t>(0x80 | (flags >> 8 & 0x01));  // QR, opcode 0, RD as asked
        out[3] = static_cast<std::uint8_t>(0x80 | rcode);                // RA
        out[4] = 0;
        out[5] = question_end > 0 ? 1 : 0;
        out[6] = static_cast<std::uint8_t>(answers >> 8);
        out[7] = static_cast<std::uint8_t>(answers);
        std::fill(out.begin() + 8, out.begin() + 12, 0);
        return out;
    }
};

// The question: QNAME (labels, no compression; lower-cased), QTYPE, QCLASS.
struct Question {
    std::string name;
    bool host_name = true;  // only RFC 952/1123 characters
    std::uint16_t type = 0;
    std::uint16_t klass = 0;
    std::size_t end = 0;  // where it ends in the query
};

// The question after the header; nullopt when it is malformed.
std::optional<Question> read_question(std::span<const std::uint8_t> query) {
    Question q;
    std::size_t at = 12;
    for (;;) {
        if (at >= query.size()) return std::nullopt;
        const std::size_t length = query[at++];
        if (length == 0) break;
        if (length > 63 || at + length > query.size()) return std::nullopt;
        if (!q.name.empty()) q.name += '.';
        for (std::size_t i = 0; i < length; ++i) {
            char c = static_cast<char>(query[at + i]);
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            q.host_name = q.host_name && host_name_char(c);
            q.name += c;
        }
        at += length;
        if (q.name.size() > 253) return std::nullopt;
    }
    if (at + 4 > query.size()) return std::nullopt;
    q.type = read16(query, at);
    q.klass = read16(query, at + 2);
    q.end = at + 4;
    return q;
}

// The address an A (a) or AAAA record gives name: for localhost the
// loopback, the sandbox's own (RFC 6761), else its synthetic address;
// nullopt when every synthetic address is taken.
std::optional<std::vector<std::uint8_t>> address_record(const std::string& name, bool a, SyntheticNames& names) {
    std::uint8_t rdata[16];
    const std::size_t length = a ? 4 : 16;
    if (is_localhost(name)) {
        if (a) {
            const std::uint32_t lo = htonl(INADDR_LOOPBACK);
            std::memcpy(rdata, &lo, 4);
        } else {
            std::memcpy(rdata, &in6addr_loopback, 16);
        }
    } else {
        const auto index = names.assign(name);
        if (!index) return std::nullopt;
        if (a) {
            const in_addr v4 = SyntheticNames::v4(*index);
            std::memcpy(rdata, &v4, 4);
        } else {
            const in6_addr v6 = SyntheticNames::v6(*index);
            std::memcpy(rdata, &v6, 16);
        }
    }
    return std::vector<std::uint8_t>(rdata, rdata + length);
}

}  // namespace

std::optional<std::uint32_t> SyntheticNames::assign(const std::string& name) {
    std::lock_guard lock(mutex_);
    if (const auto it = index_.find(name); it != index_.end()) return it->second;
    if (names_.size() >= kMax) return std::nullopt;
    names_.push_back(name);
    const auto index = static_cast<std::uint32_t>(names_.size());
    index_.emplace(name, index);
    return index;
}

std::optional<std::string> SyntheticNames::name_at(std::uint32_t index) const {
    std::lock_guard lock(mutex_);
    if (index == 0 || index > names_.size()) return std::nullopt;
    return names_[index - 1];
}

std::optional<std::string> SyntheticNames::name_of(const in_addr& address) const {
    const std::uint32_t host = ntohl(address.s_addr);
    if ((host & 0xfffe0000) != kV4Base) return std::nullopt;
    return name_at(host - kV4Base);
}

std::optional<std::string> SyntheticNames::name_of(const in6_addr& address) const {
    if (std::memcmp(address.s6_addr, kV6Prefix, sizeof kV6Prefix) != 0) return std::nullopt;
    std::uint32_t index = 0;
    std::memcpy(&index, address.s6_addr + 12, 4);
    return name_at(ntohl(index));
}

in_addr SyntheticNames::v4(std::uint32_t index) {
    in_addr a{};
    a.s_addr = htonl(kV4Base + index);
    return a;
}

in6_addr SyntheticNames::v6(std::uint32_t index) {
    in6_addr a{};
    std::memcpy(a.s6_addr, kV6Prefix, sizeof kV6Prefix);
    const std::uint32_t net = htonl(index);
    std::memcpy(a.s6_addr + 12, &net, 4);
    return a;
}

std::optional<std::vector<std::uint8_t>> dns_answer(std::span<const std::uint8_t> query, SyntheticNames& names) {
    if (query.size() < 12) return std::nullopt;  // no header: nothing to answer to
    const std::uint16_t flags = read16(query, 2);
    if (flags & 0x8000) return std::nullopt;  // a response
    Reply reply{{query.begin(), query.begin() + 12}, flags};
    if ((flags >> 11 & 0xf) != 0) return reply.finish(NotImp, 0, 0);
    if (read16(query, 4) != 1) return reply.finish(FormErr, 0, 0);
    const auto q = read_question(query);
    if (!q) return reply.finish(FormErr, 0, 0);
    reply.out.insert(reply.out.end(), query.begin() + 12, query.begin() + static_cast<std::ptrdiff_t>(q->end));
    if (q->klass != ClassIn) return reply.finish(Refused, q->end, 0);
    if (!q->host_name || q->name.empty()) return reply.finish(q->name.empty() ? NoError : NxDomain, q->end, 0);
    const bool a = q->type == TypeA || q->type == TypeAny;
    if (!a && q->type != TypeAAAA) return reply.finish(NoError, q->end, 0);  // no record of that type
    const auto address = address_record(q->name, a, names);
    if (!address) return reply.finish(ServFail, q->end, 0);  // every synthetic address is taken
    put16(reply.out, 0xc00c);                                // the question's name
    put16(reply.out, a ? TypeA : TypeAAAA);
    put16(reply.out, ClassIn);
    put16(reply.out, static_cast<std::uint16_t>(kTtl >> 16));
    put16(reply.out, static_cast<std::uint16_t>(kTtl));
    put16(reply.out, static_cast<std::uint16_t>(address->size()));
    reply.out.insert(reply.out.end(), address->begin(), address->end());
    return reply.finish(NoError, q->end, 1);
}

std::optional<SocksTarget> transparent_target(const sockaddr_storage& address, socklen_t length,
                                              const SyntheticNames& names) {
    SocksTarget target;
    in_addr v4{};
    if (address.ss_family == AF_INET) {
        if (length < sizeof(sockaddr_in)) return std::nullopt;
        const auto& in = reinterpret_cast<const sockaddr_in&>(address);
        v4 = in.sin_addr;
        target.port = ntohs(in.sin_port);
    } else if (address.ss_family == AF_INET6) {
        if (length < sizeof(sockaddr_in6)) return std::nullopt;
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
        target.port = ntohs(in6.sin6_port);
        if (!IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
            if (IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) || IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr)) return std::nullopt;
            if (auto name = names.name_of(in6.sin6_addr)) {
                target.name = std::move(*name);
            } else {
                sockaddr_in6 copy{};
                copy.sin6_family = AF_INET6;
                copy.sin6_addr = in6.sin6_addr;
                std::memcpy(&target.address, &copy, sizeof copy);
            }
            return target;
        }
        std::memcpy(&v4, in6.sin6_addr.s6_addr + 12, 4);
    } else {
        return std::nullopt;
    }
    const std::uint32_t host = ntohl(v4.s_addr);
    if ((host >> 24) == 127 || host == INADDR_ANY) return std::nullopt;  // the sandbox's own loopback
    if (auto name = names.name_of(v4)) {
        target.name = std::move(*name);
    } else {
        sockaddr_in copy{};
        copy.sin_family = AF_INET;
        copy.sin_addr = v4;
        std::memcpy(&target.address, &copy, sizeof copy);
    }
    return target;
}

std::vector<std::uint8_t> socks5_request(const SocksTarget& target) {
    std::vector<std::uint8_t> out{5, 1, 0};
    if (!target.name.empty()) {
        out.push_back(3);
        out.push_back(static_cast<std::uint8_t>(target.name.size()));  // at most 253 (dns_answer)
        out.insert(out.end(), target.name.begin(), target.name.end());
    } else if (target.address.ss_family == AF_INET) {
        const auto& in = reinterpret_cast<const sockaddr_in&>(target.address);
        out.push_back(1);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(&in.sin_addr);
        out.insert(out.end(), bytes, bytes + 4);
    } else {
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(target.address);
        out.push_back(4);
        out.insert(out.end(), in6.sin6_addr.s6_addr, in6.sin6_addr.s6_addr + 16);
    }
    put16(out, target.port);
    return out;
}

int socks5_errno(std::uint8_t reply) {
    switch (reply) {
        case 0: return 0;
        case 2: return EPERM;  // not allowed by ruleset: the proxy's denial
        case 3: return ENETUNREACH;
        case 4: return EHOSTUNREACH;
        case 6: return ETIMEDOUT;
        default: return ECONNREFUSED;  // general failure, refused, unsupported
    }
}

namespace {

// Waits until socket is ready for events; false when alive() says the
// caller is gone.
bool wait_for(int socket, short events, const std::function<bool()>& alive) {
    pollfd p{socket, events, 0};
    for (;;) {
        const int n = ::poll(&p, 1, 1000);
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return true;  // the call that follows reports it
        if (n == 0 && !alive()) return false;
    }
}

// All of bytes, or the errno.
int send_exactly(int socket, std::span<const std::uint8_t> bytes, const std::function<bool()>& alive) {
    while (!bytes.empty()) {
        const ssize_t n = ::send(socket, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n >= 0) {
            bytes = bytes.subspan(static_cast<std::size_t>(n));
        } else if (errno == EAGAIN || errno == EINTR) {
            if (!wait_for(socket, POLLOUT, alive)) return ECONNABORTED;
        } else {
            return errno == EPIPE || errno == ECONNRESET ? ECONNREFUSED : errno;
        }
    }
    return 0;
}

// Exactly size bytes into out (nothing more), or the errno.
int receive_exactly(int socket, std::uint8_t* out, std::size_t size, const std::function<bool()>& alive) {
    while (size > 0) {
        const ssize_t n = ::recv(socket, out, size, MSG_DONTWAIT);
        if (n > 0) {
            out += n;
            size -= static_cast<std::size_t>(n);
        } else if (n == 0) {
            return ECONNREFUSED;  // the proxy closed without an answer
        } else if (errno == EAGAIN || errno == EINTR) {
            if (!wait_for(socket, POLLIN, alive)) return ECONNABORTED;
        } else {
            return errno == ECONNRESET ? ECONNREFUSED : errno;
        }
    }
    return 0;
}

}  // namespace

int socks5_handshake(int socket, const SocksTarget& target, const std::function<bool()>& alive) {
    constexpr std::uint8_t greeting[] = {5, 1, 0};  // one method: no authentication
    if (int e = send_exactly(socket, greeting, alive)) return e;
    std::uint8_t choice[2];
    if (int e = receive_exactly(socket, choice, 2, alive)) return e;
    if (choice[0] != 5 || choice[1] != 0) return ECONNREFUSED;
    if (int e = send_exactly(socket, socks5_request(target), alive)) return e;
    std::uint8_t head[4];
    if (int e = receive_exactly(socket, head, 4, alive)) return e;
    if (head[0] != 5) return ECONNREFUSED;
    std::size_t rest = 0;
    switch (head[3]) {
        case 1: rest = 4 + 2; break;
        case 4: rest = 16 + 2; break;
        case 3: {
            std::uint8_t length = 0;
            if (int e = receive_exactly(socket, &length, 1, alive)) return e;
            rest = length + 2u;
            break;
        }
        default: return ECONNREFUSED;
    }
    std::uint8_t bound[258];
    if (int e = receive_exactly(socket, bound, rest, alive)) return e;
    return socks5_errno(head[1]);
}

void TransparentTcp::bind_resolver() {
    resolver = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(kResolverPort);
    at.sin_addr.s_addr = htonl(kResolverAddress);
    if (!resolver.valid() || ::bind(resolver.get(), reinterpret_cast<sockaddr*>(&at), sizeof at) != 0)
        fail_errno(kStep, "binding the resolver on 127.0.0.53:53 in the sandbox's network");
}

void TransparentTcp::install_resolv_conf() {
    mount_content_over("/etc/resolv.conf", "# sbx: the sandbox's resolver (transparent TCP)\nnameserver 127.0.0.53\n",
                       kStep, "give the policy read access to /etc/resolv.conf (and to the file it links to)");
}

void TransparentTcp::serve_resolver() {
    const int socket = resolver.get();
    if (socket < 0) return;
    std::thread([socket, names = names] {
        std::uint8_t query[1500];
        for (;;) {
            sockaddr_storage from{};
            socklen_t from_length = sizeof from;
            const ssize_t n =
                ::recvfrom(socket, query, sizeof query, 0, reinterpret_cast<sockaddr*>(&from), &from_length);
            if (n < 0) {
                if (errno == EINTR || errno == ENOMEM) continue;
                return;  // the socket is gone
            }
            const auto answer = dns_answer(std::span(query, static_cast<std::size_t>(n)), *names);
            if (answer)
                (void)::sendto(socket, answer->data(), answer->size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from),
                               from_length);
        }
    }).detach();
}

}  // namespace sbx::helper
