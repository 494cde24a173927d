#include "cli/tls_relay.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace sbx {

namespace {

constexpr std::size_t kMaxAnswer = 64 * 1024;
constexpr auto kAnswerWithin = std::chrono::seconds(10);
constexpr auto kEndWithin = std::chrono::seconds(5);

// One message with up to two descriptors.
bool send_message(int socket, const std::string& text, const int* fds, std::size_t n) {
    iovec iov{const_cast<char*>(text.data()), text.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))]{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (n > 0) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(n * sizeof(int));
        std::memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    }
    ssize_t sent;
    while ((sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return sent == static_cast<ssize_t>(text.size());
}

std::string receive_answer(int socket, exec::Child& child) {
    const auto until = exec::Clock::now() + kAnswerWithin;
    pollfd p[2] = {{socket, POLLIN, 0}, {child.pidfd(), POLLIN, 0}};
    if (exec::poll_until(p, child.pidfd() >= 0 ? 2 : 1, until) <= 0 || !(p[0].revents & POLLIN))
        throw Error("sbx-tls: no answer to its configuration (it ended, or took more than 10 s)");
    std::string answer(kMaxAnswer, '\0');
    const ssize_t got = ::recv(socket, answer.data(), answer.size(), 0);
    if (got <= 0) throw Error("sbx-tls: it ended without answering its configuration");
    answer.resize(static_cast<std::size_t>(got));
    return answer;
}

}  // namespace

TlsRelay::TlsRelay(const std::string& exe, const std::vector<SecretPair>& pairs) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        throw Error(fmt::format("sbx-tls: socketpair: {}", std::strerror(errno)));
    channel_.reset(pair[0]);
    Fd theirs(pair[1]);
    const int their_end = theirs.get();
    // The configuration on its standard input, a memfd read to its end: a
    // packet of the channel could not hold 64 secrets of 16 KiB.
    nlohmann::json config{{"secrets", nlohmann::json::array()}};
    for (const auto& p : pairs) config["secrets"].push_back({{"sentinel", p.sentinel}, {"value", p.value}});
    const std::string text = config.dump();
    Fd input(::memfd_create("sbx-tls-config", MFD_CLOEXEC));
    if (!input.valid() || !write_all(input.get(), text) || ::lseek(input.get(), 0, SEEK_SET) != 0)
        throw Error(fmt::format("sbx-tls: cannot write its configuration: {}", std::strerror(errno)));
    const int config_fd = input.get();
    const char* argv[] = {exe.c_str(), "--channel-fd", "3", nullptr};
    auto run = [&]() -> int {
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (::dup2(config_fd, 0) < 0) ::_exit(126);
        // dup2 onto itself would keep close-on-exec.
        if (their_end == 3 ? ::fcntl(3, F_SETFD, 0) != 0 : ::dup2(their_end, 3) < 0) ::_exit(126);
        ::execv(argv[0], const_cast<char* const*>(argv));
        const char* msg = "sbx: sbx-tls: cannot execute it\n";
        (void)!::write(2, msg, std::strlen(msg));
        ::_exit(127);
    };
    child_.emplace(exec::spawn("sbx-tls", run));
    theirs.reset();
    input.reset();
    const nlohmann::json answer = nlohmann::json::parse(receive_answer(channel_.get(), *child_), nullptr, false);
    if (!answer.is_object()) throw Error("sbx-tls: its answer is not JSON");
    if (answer.contains("error")) throw Error(fmt::format("sbx-tls: {}", answer["error"].dump()));
    if (!answer.contains("ca") || !answer["ca"].is_string() || !answer.contains("trust_file") ||
        !answer["trust_file"].is_string())
        throw Error("sbx-tls: its answer has no CA");
    ca_pem_ = answer["ca"].get<std::string>();
    trust_file_ = answer["trust_file"].get<std::string>();
}

TlsRelay::~TlsRelay() {
    channel_.reset();  // its end of the stream: it shuts every connection down and exits
    if (child_ && !child_->wait_until(exec::Clock::now() + kEndWithin)) child_->kill_group();
}

bool TlsRelay::hand_over(int client, int upstream, const std::string& host, std::uint16_t port,
                         const std::vector<int>& inject) const {
    const nlohmann::json m{{"host", host}, {"port", port}, {"inject", inject}};
    const int fds[2] = {client, upstream};
    return send_message(channel_.get(), m.dump(), fds, 2);
}

std::string find_tls_relay(const std::string& linux_helper) {
    if (const char* e = std::getenv("SBX_TLS_EXE"); e && *e) {
        if (e[0] != '/') throw Error(fmt::format("$SBX_TLS_EXE: '{}' is not an absolute path", e));
        return e;
    }
    const std::string beside = linux_helper.substr(0, linux_helper.rfind('/') + 1) + "sbx-tls";
    struct stat st {};
    if (::stat(beside.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(beside.c_str(), X_OK) != 0)
        throw Error(
            fmt::format("a masked secret needs sbx-tls, which is not beside the helper ({}); install sbx "
                        "whole, or set $SBX_TLS_EXE",
                        beside));
    return beside;
}

}  // namespace sbx
