#include "relay.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <stdexcept>

#include "substitute.h"

namespace sbx::tls {

namespace {

constexpr int kHandshakeSeconds = 30;
constexpr int kQuietFlushMs = 100;  // a held prefix goes out after this much quiet
constexpr std::size_t kRecord = 16384;
constexpr std::size_t kMaxPending = 4 * kRecord;

struct SslFree {
    void operator()(SSL* s) const { SSL_free(s); }
};
using Ssl = std::unique_ptr<SSL, SslFree>;

const unsigned char kHttp11[] = "\x08http/1.1";

int select_http11(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned inlen,
                  void*) {
    unsigned char* chosen = nullptr;
    if (SSL_select_next_proto(&chosen, outlen, kHttp11, sizeof kHttp11 - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;  // HTTP/2 only: its compressed headers would hide the sentinels
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

std::string openssl_error() {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return "the connection ended";
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    return text;
}

void say(const Connection& c, const std::string& what) {
    const std::string line = "sbx: TLS to " + c.host + ":" + std::to_string(c.port) + ": " + what + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

void timeouts(int fd, int seconds) {
    const timeval t{seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
}

// The host's side: connected and verified, or nullptr (said).
Ssl to_host(const Connection& c, const Contexts& ctx) {
    Ssl s(SSL_new(ctx.client));
    if (!s || SSL_set_fd(s.get(), c.upstream) != 1) return nullptr;
    if (ip_literal(c.host)) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s.get()), c.host.c_str());
    } else {
        SSL_set_tlsext_host_name(s.get(), c.host.c_str());
        SSL_set1_host(s.get(), c.host.c_str());
    }
    if (SSL_connect(s.get()) != 1) {
        const long verify = SSL_get_verify_result(s.get());
        say(c, verify != X509_V_OK ? std::string("the host's certificate is not trusted (") +
                                         X509_verify_cert_error_string(verify) + "); nothing was sent"
                                   : "the handshake with the host failed: " + openssl_error());
        return nullptr;
    }
    return s;
}

// The command's side, with the leaf for the host.
Ssl to_command(const Connection& c, const Contexts& ctx, EphemeralCa& ca) {
    Ssl s(SSL_new(ctx.server));
    if (!s || SSL_set_fd(s.get(), c.command) != 1 || SSL_use_certificate(s.get(), ca.leaf(c.host)) != 1 ||
        SSL_use_PrivateKey(s.get(), ca.leaf_key()) != 1)
        return nullptr;
    if (SSL_accept(s.get()) != 1) {
        say(c, "the command's handshake failed: " + openssl_error());
        return nullptr;
    }
    return s;
}

// One direction: read from `from` into the end of buf, replace in place,
// write to `to` from its start.  buf[sent, ready) is final and not yet
// written; buf[ready, end) a held prefix.
struct Leg {
    SSL* from;
    SSL* to;
    int from_fd, to_fd;
    Substituter sub;
    std::string buf{};
    std::size_t sent = 0, ready = 0;
    bool eof = false, closed = false;
    short read_wait = 0, write_wait = 0;  // POLLIN/POLLOUT on from_fd / to_fd; 0: none
    bool holding() const { return ready < buf.size(); }
};

enum class Step { Progress, Waiting, Failed };

Step read_some(Leg& l) {
    if (l.eof || l.buf.size() - l.sent >= kMaxPending) return Step::Waiting;
    const std::size_t old = l.buf.size();
    l.buf.resize(old + kRecord);
    const int n = SSL_read(l.from, l.buf.data() + old, kRecord);
    l.buf.resize(old + static_cast<std::size_t>(std::max(n, 0)));
    if (n > 0) {
        l.ready = l.sub.scan(l.buf, l.ready);
        return Step::Progress;
    }
    const int e = SSL_get_error(l.from, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        l.read_wait = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return Step::Waiting;
    }
    ERR_clear_error();
    l.eof = true;  // close_notify, or the end of the stream
    l.ready = l.buf.size();
    return Step::Progress;
}

Step write_some(Leg& l) {
    if (l.sent == l.ready) {
        if (l.eof && !l.closed && !l.holding()) {
            SSL_shutdown(l.to);  // close_notify: this direction is done
            ERR_clear_error();
            l.closed = true;
            return Step::Progress;
        }
        return Step::Waiting;
    }
    const int n = SSL_write(l.to, l.buf.data() + l.sent, static_cast<int>(std::min(l.ready - l.sent, kRecord)));
    if (n > 0) {
        l.sent += static_cast<std::size_t>(n);
        if (l.sent == l.ready) {  // only the held prefix moves
            l.buf.erase(0, l.sent);
            l.ready = l.sent = 0;
        }
        return Step::Progress;
    }
    const int e = SSL_get_error(l.to, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        l.write_wait = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return Step::Waiting;
    }
    return Step::Failed;
}

void relay(Leg (&legs)[2], int stop) {
    for (;;) {
        bool progress = false;
        for (Leg& l : legs) {
            l.read_wait = l.write_wait = 0;
            const Step r = read_some(l);
            const Step w = write_some(l);
            if (w == Step::Failed) return;
            progress = progress || r == Step::Progress || w == Step::Progress;
        }
        if (legs[0].closed && legs[1].closed) return;
        if (progress) continue;
        pollfd p[5];
        nfds_t n = 0;
        p[n++] = {stop, POLLIN, 0};
        bool holding = false;
        for (Leg& l : legs) {
            if (l.read_wait) p[n++] = {l.from_fd, l.read_wait, 0};
            if (l.write_wait) p[n++] = {l.to_fd, l.write_wait, 0};
            holding = holding || l.holding();
        }
        const int ready = ::poll(p, n, holding ? kQuietFlushMs : -1);
        if (ready < 0 && errno != EINTR) return;
        if (p[0].revents) return;
        if (ready == 0)
            for (Leg& l : legs) l.ready = l.buf.size();  // quiet: the held prefix goes as it is
    }
}

void make_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

Contexts::Contexts() {
    server = SSL_CTX_new(TLS_server_method());
    client = SSL_CTX_new(TLS_client_method());
    if (server == nullptr || client == nullptr) throw std::runtime_error("SSL_CTX_new: " + openssl_error());
    for (SSL_CTX* c : {server, client}) {
        SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
        SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    }
    SSL_CTX_set_alpn_select_cb(server, select_http11, nullptr);
    SSL_CTX_set_verify(client, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_set_default_verify_paths(client) != 1)
        throw std::runtime_error("cannot load the trusted certificates: " + openssl_error());
    if (SSL_CTX_set_alpn_protos(client, kHttp11, sizeof kHttp11 - 1) != 0)
        throw std::runtime_error("ALPN: " + openssl_error());
}

Contexts::~Contexts() {
    SSL_CTX_free(server);
    SSL_CTX_free(client);
}

void serve(Connection c, const Contexts& ctx, EphemeralCa& ca, int stop) {
    timeouts(c.command, kHandshakeSeconds);
    timeouts(c.upstream, kHandshakeSeconds);
    {
        Ssl host = to_host(c, ctx);
        Ssl command = host ? to_command(c, ctx, ca) : nullptr;
        if (host && command) {
            make_nonblocking(c.command);
            make_nonblocking(c.upstream);
            Leg legs[2] = {{command.get(), host.get(), c.command, c.upstream, Substituter(c.outbound)},
                           {host.get(), command.get(), c.upstream, c.command, Substituter(c.inbound)}};
            relay(legs, stop);
        }
    }
}

}  // namespace sbx::tls
