#include "net/proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "denial/fix.h"
#include "util/ascii.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/fd.h"
#include "util/fd_pass.h"
#include "util/relay_server.h"
#include "util/relay_threads.h"
#include "util/splice_pump.h"

namespace sbx::net {

namespace {

constexpr std::size_t kMaxHead = 64 * 1024;  // a request's head, at most
constexpr int kHeadTimeoutMs = 30'000;       // to send it
constexpr int kConnectTimeoutMs = 15'000;    // to reach the host
constexpr std::size_t kMaxDenials = 100;
constexpr std::size_t kMaxControlLine = 4096;  // a --control-fd line, at most

// A --control-fd line that changed nothing, said on sbx's stderr.
void report_control(const std::string& what) {
    const std::string line = "sbx: --control-fd: " + what + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

// Why a request could not be served, and how the client is told.
enum class Failure { Refused, NotFound, Unreachable, BadRequest };

struct Target {
    std::string host;  // normalised
    std::uint16_t port = 0;
};

std::optional<std::uint16_t> parse_port(std::string_view s) {
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || port == 0 || port > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(port);
}

// Letters, digits, '.', '-', '_' and ':' only (a name or an address): what
// the decisions, the headers and the denials may carry.
bool plausible_host(std::string_view host) {
    if (host.empty() || host.size() > 253) return false;
    for (const char c : host)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' && c != ':') return false;
    return true;
}

// "host:port", "[v6]:port", or "host" with default_port.
std::optional<Target> parse_authority(std::string_view a, std::optional<std::uint16_t> default_port) {
    std::string_view host, port;
    if (a.starts_with('[')) {
        const auto close = a.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        host = a.substr(1, close - 1);
        const std::string_view rest = a.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return std::nullopt;
        port = rest.empty() ? "" : rest.substr(1);
    } else {
        const auto colon = a.rfind(':');
        host = a.substr(0, colon);
        port = colon == std::string_view::npos ? "" : a.substr(colon + 1);
    }
    if (!plausible_host(host)) return std::nullopt;
    std::optional<std::uint16_t> p = port.empty() ? default_port : parse_port(port);
    if (!p) return std::nullopt;
    return Target{normalize_host(host), *p};
}

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Reads into buffer until it holds n bytes; false on end, error or timeout.
bool read_to(int fd, std::string& buffer, std::size_t n) {
    char chunk[4096];
    while (buffer.size() < n) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, kHeadTimeoutMs) <= 0) return false;
        const ssize_t got = ::recv(fd, chunk, std::min(sizeof chunk, n - buffer.size()), 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        buffer.append(chunk, static_cast<std::size_t>(got));
    }
    return true;
}

// Appends what one read gives; false on end, error or timeout.
bool read_some(int fd, std::string& buffer) {
    char chunk[4096];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, kHeadTimeoutMs) <= 0) return false;
        const ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        buffer.append(chunk, static_cast<std::size_t>(got));
        return true;
    }
}

}  // namespace

struct AllowlistProxy::State {
    RelayCap cap;
    Fd control;                   // --control-fd: updates of the rules, a line each (proxy.h)
    std::string control_pending;  // a line not yet ended
    Fd ours, theirs;              // the socket pair: ours receives the listener
    Fd stop;                      // an eventfd: readable once finish() was called
    LiveConnections connections;  // shut down by finish()

    AskHost ask;
    Terminator terminate;
    std::mutex ask_mutex;                                           // one question at a time; guards answers
    std::map<std::pair<std::string, std::uint16_t>, bool> answers;  // what ask said, per host and port

    std::mutex mutex;    // guards what follows
    DomainRules rules_;  // read through rules(): updated by --control-fd
    std::vector<ProxyDenial> denials;

    DomainRules rules() {
        std::lock_guard lock(mutex);
        return rules_;
    }
    // The decision by name, with ask's answer for an unlisted host.
    Decision decide(const Target& t);
    void read_control();
    void apply_control(std::string_view line);

    void deny(const Target& t, const Decision& d) {
        std::lock_guard lock(mutex);
        ProxyDenial x{t.host, t.port, fix_of(d)};
        if (denials.size() < kMaxDenials && std::find(denials.begin(), denials.end(), x) == denials.end())
            denials.push_back(std::move(x));
    }

    void run();
    void refuse_over_cap(Fd accepted);
    void serve(Fd accepted);
    void serve_http(LiveSocket& client, std::string head);
    void serve_socks(LiveSocket& client, std::string head);
    // The upstream connection, or why not (decision set on a refusal).
    LiveSocket connect_to(const Target& t, Failure& why, Decision& refusal);
    // fresh: nothing the command sent is read yet (a tunnel, SOCKS5).
    void relay(LiveSocket& client, LiveSocket& upstream, const Target& t, bool fresh);
    bool handed_to_tls(LiveSocket& client, LiveSocket& upstream, const Target& t);
};

namespace {

std::string refusal_body(const Target& t, const Decision& d) {
    return fmt::format("sbx: connect to {}:{} refused: {}; {}\n", t.host, t.port, d.rule,
                       allow_clause(fix_of(d).text()));
}

std::string http_error(int code, std::string_view reason, std::string_view body, std::string_view extra = "") {
    return fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\n{}Content-Length: {}\r\nConnection: "
        "close\r\n\r\n{}",
        code, reason, extra, body.size(), body);
}

// Header lines of a request head (after the request line), without the
// hop-by-hop ones a proxy drops.
std::string forwarded_headers(std::string_view headers) {
    std::string out;
    while (!headers.empty()) {
        const auto end = headers.find("\r\n");
        const std::string_view line = headers.substr(0, end);
        headers = end == std::string_view::npos ? "" : headers.substr(end + 2);
        if (line.empty()) break;
        const std::string_view name = line.substr(0, line.find(':'));
        const std::string lower = ascii_lower(name);
        if (lower == "proxy-connection" || lower == "proxy-authorization" || lower == "connection" ||
            lower == "keep-alive")
            continue;
        out += line;
        out += "\r\n";
    }
    return out;
}

}  // namespace

void AllowlistProxy::State::run() {
    // Each connection's thread, at most cap.connections at once (two threads
    // each while relaying), all joined before this returns: the live ones end
    // once finish() has shut their sockets down.
    RelayThreads threads(cap.connections);
    Fd listener;
    for (;;) {
        pollfd p[3] = {{stop.get(), POLLIN, 0},
                       {listener.valid() ? listener.get() : ours.get(), POLLIN, 0},
                       {control.valid() ? control.get() : -1, POLLIN, 0}};
        if (::poll(p, 3, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[0].revents) break;
        if (p[2].revents) read_control();
        if (!p[1].revents) continue;
        if (!listener.valid()) {
            if (p[1].revents & (POLLHUP | POLLERR)) {
                ours.reset();  // the helper ended without sending it
                break;
            }
            listener = receive_fd(ours.get());
            if (!listener.valid()) break;  // closed, or a message without it
            continue;
        }
        Fd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!client.valid()) continue;
        if (!threads.has_room()) {
            refuse_over_cap(std::move(client));
            continue;
        }
        // Should no thread be made, the connection closes.
        threads.start([this, client = std::move(client)]() mutable { serve(std::move(client)); });
    }
    // Ending: no new connection; the live ones are shut down by finish().
    listener.reset();
    threads.join(true);
}

// What the control descriptor holds now; each whole line applied, the
// descriptor dropped at its end (or on an error).
void AllowlistProxy::State::read_control() {
    char chunk[4096];
    const ssize_t got = ::read(control.get(), chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) {
        if (!control_pending.empty()) apply_control(control_pending);
        control.reset();
        return;
    }
    control_pending.append(chunk, static_cast<std::size_t>(got));
    for (auto end = control_pending.find('\n'); end != std::string::npos; end = control_pending.find('\n')) {
        apply_control(std::string_view(control_pending).substr(0, end));
        control_pending.erase(0, end + 1);
    }
    if (control_pending.size() > kMaxControlLine) {
        report_control("a line of more than 4096 bytes: ignored");
        control_pending.clear();
    }
}

// "allow-domain PATTERN" or "deny-domain PATTERN[=REASON]", for the
// connections that come next; anything else changes nothing and is said on
// stderr.  Empty lines and lines starting with '#' are skipped.
void AllowlistProxy::State::apply_control(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') return;
    const auto space = line.find(' ');
    const std::string_view verb = line.substr(0, space);
    const std::string_view pattern = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (verb != "allow-domain" && verb != "deny-domain") {
        report_control(fmt::format("'{}' is not 'allow-domain PATTERN' or 'deny-domain PATTERN': ignored",
                                   escape_for_display(line)));
        return;
    }
    try {
        const bool deny = verb == "deny-domain";
        const std::string p = normalize_pattern(pattern, fmt::format("--control-fd: {}", verb), deny);
        std::lock_guard lock(mutex);
        auto& list = deny ? rules_.deny : rules_.allow;
        if (std::find(list.begin(), list.end(), p) == list.end()) list.push_back(p);
    } catch (const Error& e) {
        report_control(fmt::format("{}: ignored", escape_for_display(e.what())));
    }
}

Decision AllowlistProxy::State::decide(const Target& t) {
    Decision d = decide_host(rules(), t.host, t.port);
    if (d.allowed || !d.unlisted || !ask) return d;
    bool yes = false;
    {
        std::lock_guard lock(ask_mutex);
        const auto key = std::make_pair(t.host, t.port);
        if (const auto it = answers.find(key); it != answers.end()) {
            yes = it->second;
        } else if (!connections.stopping()) {
            yes = ask(t.host, t.port);
            answers.emplace(key, yes);
        }
    }
    if (yes) return {true, "approved by --approver"};
    d.rule += " (nor did an approver allow it)";
    return d;
}

// One connection more than the cap allows: refused from the accepting thread,
// without a wait.  An HTTP client (or one that has sent nothing yet) gets 503
// with X-Sbx-Denied; a SOCKS5 one, whose greeting has no refusal to give, is
// closed.  The bytes it already sent are read first, so that the close is a
// FIN after the answer, not a reset that could discard it.
void AllowlistProxy::State::refuse_over_cap(Fd client) {
    const Target proxy{"127.0.0.1", kProxyPort};
    const std::string rule =
        cap.limit_procs ? fmt::format(
                              "sbx's proxy serves at most {} connection{} at once: two threads each, counted against "
                              "--limit-procs {}",
                              cap.connections, cap.connections == 1 ? "" : "s", *cap.limit_procs)
                        : fmt::format("sbx's proxy serves at most {} connections at once", cap.connections);
    const Decision refusal{false, rule, "",
                           cap.limit_procs ? "open fewer connections at once, or raise --limit-procs by two per "
                                             "connection"
                                           : "open fewer connections at once"};
    deny(proxy, refusal);
    const std::string fix = fix_of(refusal).text();
    char first = 0;
    if (::recv(client.get(), &first, 1, MSG_PEEK | MSG_DONTWAIT) != 1 || first != 0x05) {
        const std::string body = fmt::format("sbx: connection refused: {}; {}\n", rule, fix);
        const std::string answer =
            http_error(503, "Service Unavailable", body, fmt::format("X-Sbx-Denied: {}\r\n", rule));
        // A new socket's send buffer holds it whole: no wait.
        ssize_t sent = ::send(client.get(), answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)sent;
    }
    ::shutdown(client.get(), SHUT_WR);
    char sink[4096];
    for (std::size_t drained = 0; drained < kMaxHead;) {
        const ssize_t n = ::recv(client.get(), sink, sizeof sink, MSG_DONTWAIT);
        if (n <= 0) break;
        drained += static_cast<std::size_t>(n);
    }
}

void AllowlistProxy::State::serve(Fd accepted) {
    LiveSocket client(connections, std::move(accepted));
    std::string head;
    if (!client.valid() || !read_to(client.get(), head, 1)) return;
    if (head[0] == 0x05) serve_socks(client, std::move(head));
    else serve_http(client, std::move(head));
}

namespace {

// The text of an IPv4 or IPv6 socket address's address, as Address.
std::optional<Address> address_of(const sockaddr* sa) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = nullptr;
    if (sa->sa_family == AF_INET) raw = &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr;
    else if (sa->sa_family == AF_INET6) raw = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    if (raw == nullptr || ::inet_ntop(sa->sa_family, raw, text, sizeof text) == nullptr) return std::nullopt;
    return parse_address(text);
}

// The addresses of the host's own interfaces, now: a service bound to
// 0.0.0.0 answers on each of them as on the loopback (domain.h).
std::vector<Address> host_addresses() {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return {};
    const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owned(list, ::freeifaddrs);
    std::vector<Address> out;
    for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next)
        if (i->ifa_addr != nullptr)
            if (auto a = address_of(i->ifa_addr)) out.push_back(*a);
    return out;
}

}  // namespace

LiveSocket AllowlistProxy::State::connect_to(const Target& t, Failure& why, Decision& refusal) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(t.port);
    if (::getaddrinfo(t.host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
        why = Failure::NotFound;
        return LiveSocket();
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, ::freeaddrinfo);
    why = Failure::Unreachable;
    bool any_allowed = false;
    const std::vector<Address> own = host_addresses();
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        const auto address = address_of(a->ai_addr);
        if (!address) continue;
        const Decision d = decide_address(rules(), t.host, *address, own, t.port);
        if (!d.allowed) {
            if (!any_allowed && refusal.rule.empty()) refusal = d;
            continue;
        }
        any_allowed = true;
        LiveSocket s(connections, Fd(::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)));
        if (!s.valid()) continue;
        int rc = ::connect(s.get(), a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            pollfd p{s.get(), POLLOUT, 0};
            int error = ETIMEDOUT;
            if (::poll(&p, 1, kConnectTimeoutMs) == 1) {
                socklen_t size = sizeof error;
                ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &error, &size);
            }
            rc = error == 0 ? 0 : -1;
        }
        if (rc == 0) {
            ::fcntl(s.get(), F_SETFL, ::fcntl(s.get(), F_GETFL) & ~O_NONBLOCK);
            return s;
        }
    }
    if (!any_allowed && !refusal.rule.empty()) why = Failure::Refused;
    return LiveSocket();
}

// A connection that carries a secret (Terminator): handed to sbx-tls when the
// command speaks first with a TLS handshake record (0x16).
bool AllowlistProxy::State::handed_to_tls(LiveSocket& client, LiveSocket& upstream, const Target& t) {
    if (!terminate.select) return false;
    const auto pairs = terminate.select(t.host, t.port);
    if (!pairs) return false;
    pollfd p[2] = {{client.get(), POLLIN, 0}, {upstream.get(), POLLIN, 0}};
    if (::poll(p, 2, kHeadTimeoutMs) <= 0 || p[1].revents || !(p[0].revents & POLLIN)) return false;
    char first = 0;
    if (::recv(client.get(), &first, 1, MSG_PEEK) != 1 || first != 0x16) return false;
    if (!terminate.hand_over(client.get(), upstream.get(), t.host, t.port, *pairs))
        ::shutdown(client.get(), SHUT_RDWR);  // sbx-tls is gone: nothing passes unterminated
    return true;
}

void AllowlistProxy::State::relay(LiveSocket& client, LiveSocket& upstream, const Target& t, bool fresh) {
    if (fresh && handed_to_tls(client, upstream, t)) return;
    const int one = 1;
    ::setsockopt(upstream.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    tune_loopback_leg(client.get());  // the command's leg: the sandbox's loopback
    splice_both_ways(client.get(), upstream.get());
}

void AllowlistProxy::State::serve_http(LiveSocket& client, std::string head) {
    std::size_t end;
    while ((end = head.find("\r\n\r\n")) == std::string::npos) {
        if (head.size() >= kMaxHead || !read_some(client.get(), head)) return;
    }
    const std::string_view all(head);
    const std::string_view request_line = all.substr(0, all.find("\r\n"));
    const std::string rest(all.substr(end + 4));  // bytes after the head (a body, or a client hello)
    const std::string_view headers = all.substr(request_line.size() + 2, end + 2 - request_line.size() - 2);

    auto fail = [&](int code, std::string_view reason, std::string_view body) {
        send_all(client.get(), http_error(code, reason, body));
    };
    const auto sp1 = request_line.find(' ');
    const auto sp2 = request_line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1) return fail(400, "Bad Request", "sbx: not an HTTP request\n");
    const std::string_view method = request_line.substr(0, sp1);
    const std::string_view uri = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = request_line.substr(sp2 + 1);

    const bool tunnel = method == "CONNECT";
    std::optional<Target> target;
    std::string path;
    if (tunnel) {
        target = parse_authority(uri, std::nullopt);
    } else if (uri.size() > 7 && equal_ignoring_case(uri.substr(0, 7), "http://")) {
        const std::string_view after = uri.substr(7);
        const auto slash = after.find_first_of("/?");
        target = parse_authority(after.substr(0, slash), 80);
        path = slash == std::string_view::npos ? "/" : std::string(after.substr(slash));
        if (path.front() == '?') path = "/" + path;
    } else {
        return fail(400, "Bad Request",
                    "sbx: the proxy takes CONNECT host:port and http:// URLs (https goes through CONNECT)\n");
    }
    if (!target) return fail(400, "Bad Request", "sbx: no host:port in the request\n");

    Decision d = decide(*target);
    if (!d.allowed) {
        deny(*target, d);
        send_all(client.get(),
                 http_error(403, "Forbidden", refusal_body(*target, d), fmt::format("X-Sbx-Denied: {}\r\n", d.rule)));
        return;
    }
    Failure why{};
    Decision refusal;
    LiveSocket upstream = connect_to(*target, why, refusal);
    if (!upstream.valid()) {
        if (why == Failure::Refused) {
            deny(*target, refusal);
            send_all(client.get(), http_error(403, "Forbidden", refusal_body(*target, refusal),
                                              fmt::format("X-Sbx-Denied: {}\r\n", refusal.rule)));
            return;
        }
        const std::string body =
            why == Failure::NotFound
                ? fmt::format("sbx: {} could not be resolved on the host\n", target->host)
                : fmt::format("sbx: {}:{} could not be reached from the host\n", target->host, target->port);
        return fail(502, "Bad Gateway", body);
    }
    if (tunnel) {
        if (!send_all(client.get(), "HTTP/1.1 200 Connection established\r\n\r\n") ||
            (!rest.empty() && !send_all(upstream.get(), rest)))
            return;
    } else {
        const std::string forwarded = fmt::format("{} {} {}\r\n{}Connection: close\r\n\r\n{}", method, path, version,
                                                  forwarded_headers(headers), rest);
        if (!send_all(upstream.get(), forwarded)) return;
    }
    relay(client, upstream, *target, tunnel && rest.empty());
}

void AllowlistProxy::State::serve_socks(LiveSocket& client, std::string head) {
    const int fd = client.get();
    // Greeting: 05 NMETHODS METHODS...; only "no authentication" (00).
    if (!read_to(fd, head, 2) || !read_to(fd, head, 2 + static_cast<unsigned char>(head[1]))) return;
    if (head.find('\0', 2) == std::string::npos) {
        send_all(fd, std::string_view("\x05\xff", 2));
        return;
    }
    if (!send_all(fd, std::string_view("\x05\x00", 2))) return;
    // Request: 05 CMD 00 ATYP ADDR PORT.
    std::string r;
    if (!read_to(fd, r, 5)) return;
    auto reply = [&](char code) {
        const char answer[10] = {0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0};
        return send_all(fd, std::string_view(answer, sizeof answer));
    };
    std::size_t length = 0;
    const unsigned char atyp = static_cast<unsigned char>(r[3]);
    if (atyp == 0x01) length = 4 + 4 + 2;
    else if (atyp == 0x04) length = 4 + 16 + 2;
    else if (atyp == 0x03) length = 4 + 1 + static_cast<unsigned char>(r[4]) + 2;
    else {
        reply(0x08);  // address type not supported
        return;
    }
    if (r[0] != 0x05 || !read_to(fd, r, length)) return;
    if (r[1] != 0x01) {
        reply(0x07);  // only CONNECT
        return;
    }
    Target t;
    char text[INET6_ADDRSTRLEN] = {};
    if (atyp == 0x01) ::inet_ntop(AF_INET, r.data() + 4, text, sizeof text);
    if (atyp == 0x04) ::inet_ntop(AF_INET6, r.data() + 4, text, sizeof text);
    t.host = atyp == 0x03 ? normalize_host(std::string_view(r).substr(5, length - 7)) : std::string(text);
    if (!plausible_host(t.host)) {
        reply(0x04);  // host unreachable: not a name
        return;
    }
    t.port = static_cast<std::uint16_t>((static_cast<unsigned char>(r[length - 2]) << 8) |
                                        static_cast<unsigned char>(r[length - 1]));
    Decision d = decide(t);
    if (!d.allowed) {
        deny(t, d);
        reply(0x02);  // connection not allowed by ruleset
        return;
    }
    Failure why{};
    Decision refusal;
    LiveSocket upstream = connect_to(t, why, refusal);
    if (!upstream.valid()) {
        if (why == Failure::Refused) deny(t, refusal);
        reply(why == Failure::Refused ? 0x02 : why == Failure::NotFound ? 0x04 : 0x05);
        return;
    }
    if (!reply(0x00)) return;
    relay(client, upstream, t, true);
}

AllowlistProxy::AllowlistProxy(DomainRules rules, RelayCap cap, Fd control, AskHost ask, Terminator terminate)
    : state_(std::make_shared<State>()) {
    state_->rules_ = std::move(rules);
    state_->ask = std::move(ask);
    state_->terminate = std::move(terminate);
    state_->cap = cap;
    state_->control = std::move(control);
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        throw Error(fmt::format("the allowlist proxy: socketpair: {}", std::strerror(errno)));
    state_->ours.reset(pair[0]);
    state_->theirs.reset(pair[1]);
    state_->stop.reset(::eventfd(0, EFD_CLOEXEC));
    if (!state_->stop.valid()) throw Error(fmt::format("the allowlist proxy: eventfd: {}", std::strerror(errno)));
    // sbx's signals are the supervisor's.
    try {
        thread_ = thread_without_signals([state = state_] { state->run(); });
    } catch (const std::system_error& e) {
        throw Error(fmt::format("the allowlist proxy: cannot start its thread: {}", e.what()));
    }
}

int AllowlistProxy::helper_channel() const { return state_->theirs.get(); }

std::vector<ProxyDenial> AllowlistProxy::finish() {
    if (thread_.joinable()) {
        state_->connections.stop();
        const std::uint64_t one = 1;
        ssize_t ignored = ::write(state_->stop.get(), &one, sizeof one);
        (void)ignored;
        thread_.join();
    }
    std::lock_guard lock(state_->mutex);
    return state_->denials;
}

AllowlistProxy::~AllowlistProxy() { finish(); }

}  // namespace sbx::net
