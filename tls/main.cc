// sbx-tls: the TLS termination of sbx's allowlist proxy for masked secrets
// (issue 36; docs/network.md).  sbx starts it once per attempt that masks a
// secret (src/cli/tls_relay.h); OpenSSL never runs inside sbx itself.
//
// Protocol: its standard input holds the configuration, read to its end (a
// memfd of sbx's; at most 8 MiB):
//                   {"secrets":[{"sentinel":S,"value":V},...]}   (each pair
//                   the same length, 8 bytes or more; at most 64, each at
//                   most 16384 bytes)
// then over the AF_UNIX SOCK_SEQPACKET descriptor of --channel-fd N:
//   sbx-tls -> sbx  {"ca":PEM,"trust_file":PATH}  (the ephemeral CA's
//                   certificate; the file OpenSSL trusts here: $SSL_CERT_FILE
//                   or its default), or {"error":TEXT} and exit 1
//   sbx -> sbx-tls  {"host":H,"port":P,"inject":[i,...]} with two
//                   descriptors (SCM_RIGHTS): the command's connection, about
//                   to send its ClientHello, then the host's, connected.  Each
//                   is served by a thread (at most 64 at once; more are
//                   closed): relay.h.  A bad message is said on stderr and
//                   its descriptors closed.
//   the end of the channel: every connection is shut down, every thread
//                   joined, exit 0.
// The CA's key, the values and the connections stay in this process, which
// is not dumpable (no ptrace, no /proc/PID/mem for the same user).
#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <openssl/x509.h>
#include <nlohmann/json.hpp>

#include "ca.h"
#include "relay.h"

namespace {

using nlohmann::json;
using namespace sbx::tls;

constexpr std::size_t kMaxMessage = 64 * 1024, kMaxConfig = 8 * 1024 * 1024;
constexpr std::size_t kMaxSecrets = 64, kMaxValue = 16384, kMinValue = 8;
constexpr int kMaxConnections = 64;

void say(const std::string& what) {
    const std::string line = "sbx: sbx-tls: " + what + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

// One message and up to two descriptors; false at the end of the channel.
bool receive(int channel, std::string& text, std::vector<int>& fds) {
    text.assign(kMaxMessage, '\0');
    fds.clear();
    iovec iov{text.data(), text.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))]{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(channel, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return false;
    text.resize(static_cast<std::size_t>(n));
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (std::size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                fds.push_back(fd);
            }
    return true;
}

void answer(int channel, const json& j) {
    const std::string text = j.dump();
    (void)!::send(channel, text.data(), text.size(), MSG_NOSIGNAL);
}

// The secrets of the first message; throws std::runtime_error.
std::vector<std::pair<std::string, std::string>> read_config(const std::string& text) {
    const json doc = json::parse(text, nullptr, false);
    if (!doc.is_object() || !doc.contains("secrets") || !doc["secrets"].is_array())
        throw std::runtime_error("the configuration is not {\"secrets\": [...]}");
    if (doc["secrets"].size() > kMaxSecrets) throw std::runtime_error("more than 64 secrets");
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& s : doc["secrets"]) {
        if (!s.is_object() || !s.contains("sentinel") || !s.contains("value") || !s["sentinel"].is_string() ||
            !s["value"].is_string())
            throw std::runtime_error("a secret is not {\"sentinel\": ..., \"value\": ...}");
        auto sentinel = s["sentinel"].get<std::string>(), value = s["value"].get<std::string>();
        if (sentinel.size() != value.size() || value.size() < kMinValue || value.size() > kMaxValue)
            throw std::runtime_error("a sentinel and its value must be of one length, 8 to 16384 bytes");
        pairs.emplace_back(std::move(sentinel), std::move(value));
    }
    return pairs;
}

// The live connections' descriptors, shut down at the end.
class Live {
public:
    bool add(int a, int b) {
        std::lock_guard lock(mutex_);
        if (count_ >= kMaxConnections) return false;
        ++count_;
        fds_.insert(a);
        fds_.insert(b);
        return true;
    }
    void remove(int a, int b) {
        std::lock_guard lock(mutex_);
        --count_;
        fds_.erase(a);
        fds_.erase(b);
    }
    void shut_all() {
        std::lock_guard lock(mutex_);
        for (const int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }

private:
    std::mutex mutex_;
    std::set<int> fds_;
    int count_ = 0;
};

struct Secrets {
    std::vector<std::pair<std::string, std::string>> pairs;  // (sentinel, value)
    Pairs outbound(const json& inject) const {
        Pairs out;
        if (!inject.is_array()) return out;
        for (const auto& i : inject)
            if (i.is_number_unsigned() && i.get<std::size_t>() < pairs.size())
                out.push_back(pairs[i.get<std::size_t>()]);
        return out;
    }
    Pairs inbound() const {
        Pairs out;
        for (const auto& [sentinel, value] : pairs) out.emplace_back(value, sentinel);
        return out;
    }
};

void close_all(const std::vector<int>& fds) {
    for (const int fd : fds) ::close(fd);
}

// Standard input read to its end (at most kMaxConfig), then /dev/null in
// its place.
std::string read_stdin() {
    std::string text;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error(std::string("reading the configuration: ") + std::strerror(errno));
        if (n == 0) break;
        text.append(chunk, static_cast<std::size_t>(n));
        if (text.size() > kMaxConfig) throw std::runtime_error("the configuration is larger than 8 MiB");
    }
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0 && null != STDIN_FILENO) {
        ::dup2(null, STDIN_FILENO);
        ::close(null);
    }
    return text;
}

int serve_channel(int channel) {
    std::string text;
    std::vector<int> fds;
    Secrets secrets;
    try {
        secrets.pairs = read_config(read_stdin());
    } catch (const std::exception& e) {
        answer(channel, {{"error", e.what()}});
        return 1;
    }
    EphemeralCa ca;
    const Contexts contexts;
    const char* trust = std::getenv("SSL_CERT_FILE");
    answer(channel, {{"ca", ca.pem()}, {"trust_file", trust && *trust ? trust : X509_get_default_cert_file()}});
    const int stop = ::eventfd(0, EFD_CLOEXEC);
    if (stop < 0) throw std::runtime_error("eventfd");
    Live live;
    std::list<std::thread> threads;
    while (receive(channel, text, fds)) {
        const json m = json::parse(text, nullptr, false);
        if (fds.size() != 2 || !m.is_object() || !m.contains("host") || !m["host"].is_string() || !m.contains("port") ||
            !m["port"].is_number_unsigned()) {
            say("a connection message without a host, a port and two descriptors: closed");
            close_all(fds);
            continue;
        }
        Connection c{fds[0],
                     fds[1],
                     m["host"].get<std::string>(),
                     m["port"].get<std::uint16_t>(),
                     secrets.outbound(m.value("inject", json::array())),
                     secrets.inbound()};
        if (!live.add(c.command, c.upstream)) {
            say("more than 64 connections at once: one closed");
            close_all(fds);
            continue;
        }
        threads.emplace_back([c = std::move(c), &contexts, &ca, &live, stop]() mutable {
            const int a = c.command, b = c.upstream;
            serve(std::move(c), contexts, ca, stop);
            live.remove(a, b);
            ::close(a);
            ::close(b);
        });
    }
    const std::uint64_t one = 1;
    (void)!::write(stop, &one, sizeof one);
    live.shut_all();
    for (auto& t : threads) t.join();
    ::close(stop);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || std::string(argv[1]) != "--channel-fd") {
        say("usage: sbx-tls --channel-fd N (sbx starts it; see src/cli/tls_relay.h)");
        return 2;
    }
    char* end = nullptr;
    const long channel = std::strtol(argv[2], &end, 10);
    if (*end != '\0' || channel < 3 || channel > 1024) {
        say("--channel-fd: not a descriptor number");
        return 2;
    }
    ::prctl(PR_SET_DUMPABLE, 0);
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    ::signal(SIGPIPE, SIG_IGN);
    try {
        return serve_channel(static_cast<int>(channel));
    } catch (const std::exception& e) {
        say(e.what());
        return 1;
    }
}
