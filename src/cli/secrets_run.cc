#include "cli/secrets_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "net/domain.h"
#include "util/error.h"
#include "util/fd.h"
#include "util/utf8.h"

namespace sbx {

namespace {

constexpr std::size_t kMaxSecretFile = 1024 * 1024;
constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// The pair of value (added once); its index.
int pair_of(PreparedSecrets& out, const std::string& value, const RandomBytes& random, const std::string& what) {
    for (std::size_t i = 0; i < out.pairs.size(); ++i)
        if (out.pairs[i].value == value) return static_cast<int>(i);
    if (out.pairs.size() == kMaxSecretValues)
        throw Error(
            fmt::format("{}: more than {} secret values in one run; mask fewer (an extract that matches "
                        "each token once)",
                        what, kMaxSecretValues));
    out.pairs.push_back({sentinel_for(value, random, what), value});
    return static_cast<int>(out.pairs.size() - 1);
}

// Every occurrence of each pair's value in text replaced by its sentinel.
std::string masked_text(std::string text, const PreparedSecrets& out, const std::vector<int>& pairs) {
    for (const int i : pairs) {
        const auto& [sentinel, value] = out.pairs[static_cast<std::size_t>(i)];
        for (auto at = text.find(value); at != std::string::npos; at = text.find(value, at + value.size()))
            text.replace(at, value.size(), sentinel);
    }
    return text;
}

void prepare_file(const Secret& s, std::string content, PreparedSecrets& out, std::vector<int>& mine,
                  const RandomBytes& random) {
    const std::string what = "secret file " + s.name;
    if (s.extract.empty()) {
        std::string value = content;
        while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
        mine.push_back(pair_of(out, value, random, what));
    } else {
        const std::regex re(s.extract);
        for (auto it = std::sregex_iterator(content.begin(), content.end(), re); it != std::sregex_iterator(); ++it)
            if ((*it)[1].matched && (*it)[1].length() > 0) mine.push_back(pair_of(out, (*it)[1].str(), random, what));
        if (mine.empty())
            throw Error(
                fmt::format("{}: extract '{}' matches nothing in it, so nothing would be masked; fix the "
                            "pattern (group 1 is the secret)",
                            what, s.extract));
    }
    out.files.push_back({s.name, masked_text(std::move(content), out, mine)});
}

}  // namespace

std::string sentinel_for(std::string_view value, const RandomBytes& random, const std::string& what) {
    if (value.size() < kMinSecretLength)
        throw Error(
            fmt::format("{}: its value has {} characters, too few to mask ({} at least: its stand-in is "
                        "as long); withhold it instead (no @HOST)",
                        what, value.size(), kMinSecretLength));
    if (value.size() > kMaxSecretLength)
        throw Error(
            fmt::format("{}: its value has {} bytes, more than a token's {}; mask the token alone (extract, "
                        "group 1) or withhold it (no @HOST)",
                        what, value.size(), kMaxSecretLength));
    if (!valid_utf8(value))
        throw Error(
            fmt::format("{}: its value is not UTF-8 text, which a request's header could not carry; "
                        "withhold it (no @HOST), or mask the token alone (extract, group 1)",
                        what));
    std::string s(value.size(), '\0');
    do {
        std::vector<unsigned char> bytes(value.size());
        random(bytes.data(), bytes.size());
        for (std::size_t i = 0; i < s.size(); ++i) s[i] = kAlphabet[bytes[i] % kAlphabet.size()];
    } while (s == value);
    return s;
}

PreparedSecrets prepare_secrets(const CanonicalPolicy& p,
                                const std::function<std::optional<std::string>(const std::string&)>& getenv,
                                const std::function<std::string(const std::string&)>& read_file,
                                const RandomBytes& random) {
    PreparedSecrets out;
    for (const auto& s : p.secrets) {
        std::vector<int> mine;
        if (s.kind == Secret::Kind::Env && !s.masked()) {
            out.unset.push_back(s.name);
        } else if (s.kind == Secret::Kind::Env) {
            const auto value = getenv(s.name);
            if (!value)
                throw Error(
                    fmt::format("secret env {}: it is not set in sbx's environment; set it, or drop it", s.name));
            mine.push_back(pair_of(out, *value, random, "secret env " + s.name));
            out.env[s.name] = out.pairs[static_cast<std::size_t>(mine.back())].sentinel;
        } else if (s.masked()) {
            // A file the policy does not show needs no stand-in (and the
            // helper could not mount one over it).
            const auto access = decide_path(p, s.name).access;
            if (!access || *access == FsAccess::Deny)
                throw Error(
                    fmt::format("secret file {}: the policy does not let the command read it, so there is "
                                "nothing to mask; drop it, or let the command read it (--read-only {})",
                                s.name, s.name));
            prepare_file(s, read_file(s.name), out, mine, random);
        }
        out.pairs_of.push_back(std::move(mine));
    }
    return out;
}

std::optional<std::vector<int>> pairs_for(const CanonicalPolicy& p, const PreparedSecrets& prepared,
                                          const std::string& host, std::uint16_t port) {
    if (!p.tls_passthrough.empty() && net::decide_host({p.tls_passthrough, {}}, host, port).allowed)
        return std::nullopt;
    std::vector<int> out;
    for (std::size_t i = 0; i < p.secrets.size() && i < prepared.pairs_of.size(); ++i) {
        if (!p.secrets[i].masked() || !net::decide_host({p.secrets[i].hosts, {}}, host, port).allowed) continue;
        for (const int pair : prepared.pairs_of[i])
            if (std::find(out.begin(), out.end(), pair) == out.end()) out.push_back(pair);
    }
    if (out.empty()) return std::nullopt;
    return out;
}

std::string read_secret_file(const std::string& path) {
    const std::string what = "secret file " + path;
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) throw Error(fmt::format("{}: cannot read it: {}", what, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(fmt::format("{}: not a regular file; mask a file, or withhold it (no @HOST)", what));
    if (st.st_nlink != 1)
        throw Error(
            fmt::format("{}: it has {} hard links, and the sandbox would show the real file at the others; "
                        "make it a file of its own (cp, then replace it)",
                        what, st.st_nlink));
    if (st.st_size > static_cast<off_t>(kMaxSecretFile)) throw Error(fmt::format("{}: larger than 1 MiB", what));
    std::string content(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < content.size()) {
        const ssize_t n = ::read(fd.get(), content.data() + got, content.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    content.resize(got);
    return content;
}

}  // namespace sbx

namespace sbx {

namespace {

// sbx's own randomness for the sentinels.
void random_bytes(unsigned char* out, std::size_t n) {
    Fd urandom(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
    std::size_t got = 0;
    while (urandom.valid() && got < n) {
        const ssize_t r = ::read(urandom.get(), out + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
    }
    if (got < n) throw Error("secrets: cannot read /dev/urandom for the sentinels");
}

// The CA's directory: where the policy does not let the command write, when
// such a place exists ($XDG_RUNTIME_DIR, its symlinks resolved: the policy
// decides the directory it leads to), else /tmp; made 0755.
std::string make_ca_dir(const CanonicalPolicy& p) {
    std::string base = "/tmp";
    if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && run[0] == '/') {
        char real[PATH_MAX];
        struct stat st {};
        if (::realpath(run, real) != nullptr && ::stat(real, &st) == 0 && S_ISDIR(st.st_mode) &&
            decide_path(p, real).access != FsAccess::Write)
            base = real;
    }
    std::string dir = base + "/sbx-ca-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr)
        throw Error(fmt::format("secrets: cannot make a directory for the CA in {}: {}", base, std::strerror(errno)));
    ::chmod(dir.c_str(), 0755);
    return dir;
}

// content in an unlinked file of dir, read from its start.
Fd anonymous_file(const std::string& dir, const std::string& content) {
    std::string name = dir + "/mask-XXXXXX";
    Fd fd(::mkstemp(name.data()));  // POSIX (mkostemp is not everywhere)
    if (fd.valid()) ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC);
    if (!fd.valid()) throw Error(fmt::format("secrets: cannot make a file in {}: {}", dir, std::strerror(errno)));
    ::unlink(name.c_str());
    std::string_view rest = content;
    while (!rest.empty()) {
        const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw Error(fmt::format("secrets: cannot write a masked file's copy: {}", std::strerror(errno)));
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    ::lseek(fd.get(), 0, SEEK_SET);
    return fd;
}

std::string file_text(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    std::string out;
    char chunk[65536];
    for (ssize_t n; fd.valid() && (n = ::read(fd.get(), chunk, sizeof chunk)) > 0;)
        out.append(chunk, static_cast<std::size_t>(n));
    return out;
}

void write_new_file(const std::string& path, const std::string& text) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    std::string_view rest = text;
    while (fd.valid() && !rest.empty()) {
        const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
        if (n <= 0 && errno != EINTR) break;
        if (n > 0) rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (!fd.valid() || !rest.empty())
        throw Error(fmt::format("secrets: cannot write {}: {}", path, std::strerror(errno)));
}

// The helper's words "--mask-file N:PATH" before its "--".
void add_mask_words(ExecPlan& plan, int fd, const std::string& path) {
    const auto end = std::find(plan.argv.begin() + 1, plan.argv.end(), "--");
    plan.argv.insert(end, {"--mask-file", fmt::format("{}:{}", fd, path)});
}

}  // namespace

std::map<std::string, std::string> ca_environment(const std::string& bundle, const std::string& ca) {
    return {{"SSL_CERT_FILE", bundle},  {"CURL_CA_BUNDLE", bundle},  {"REQUESTS_CA_BUNDLE", bundle},
            {"GIT_SSL_CAINFO", bundle}, {"PIP_CERT", bundle},        {"CARGO_HTTP_CAINFO", bundle},
            {"AWS_CA_BUNDLE", bundle},  {"NODE_EXTRA_CA_CERTS", ca}, {"DENO_CERT", ca}};
}

RunSecrets::RunSecrets(const CanonicalPolicy& p)
    : policy_(p),
      prepared_(prepare_secrets(
          p,
          [](const std::string& name) -> std::optional<std::string> {
              const char* v = std::getenv(name.c_str());
              return v ? std::optional<std::string>(v) : std::nullopt;
          },
          read_secret_file, random_bytes)) {
    if (prepared_.masked()) ca_dir_ = make_ca_dir(p);
}

RunSecrets::~RunSecrets() {
    if (ca_dir_.empty()) return;
    for (const char* name : {"/bundle.pem", "/ca.pem"}) ::unlink((ca_dir_ + name).c_str());
    ::rmdir(ca_dir_.c_str());
}

void RunSecrets::apply(ExecPlan& plan, SuperviseOptions& opt, AttemptSecrets& held) const {
    for (const auto& [name, sentinel] : prepared_.env) {
        if (plan.env_add.count(name))
            throw Error(
                fmt::format("--env {}: {} is a masked secret, whose stand-in the command gets; drop one", name, name));
        if (std::find(plan.env_remove.begin(), plan.env_remove.end(), name) != plan.env_remove.end())
            throw Error(
                fmt::format("--unset-env {}: {} is a masked secret, whose stand-in the command gets; drop "
                            "one (withhold it with no @HOST)",
                            name, name));
        plan.env_add[name] = sentinel;
    }
    for (const auto& name : prepared_.unset) {
        if (plan.env_add.count(name))
            throw Error(fmt::format("--env {}: {} is a withheld secret; drop one", name, name));
        plan.env_remove.push_back(name);
    }
    for (const auto& f : prepared_.files) {
        held.files.push_back(anonymous_file(ca_dir_, f.content));
        const int target = kHelperProxyFd + static_cast<int>(held.files.size());
        opt.pass_fds.emplace_back(held.files.back().get(), target);
        add_mask_words(plan, target, f.path);
    }
    if (!prepared_.masked()) return;
    held.relay.emplace(find_tls_relay(plan.argv.front()), prepared_.pairs);
    const std::string bundle = ca_dir_ + "/bundle.pem", ca = ca_dir_ + "/ca.pem";
    std::string trusted = file_text(held.relay->trust_file());
    if (!trusted.empty() && trusted.back() != '\n') trusted += '\n';
    write_new_file(ca, held.relay->ca_pem());
    write_new_file(bundle, trusted + held.relay->ca_pem());
    for (auto& [name, value] : ca_environment(bundle, ca)) plan.env_add[name] = value;
}

net::Terminator RunSecrets::terminator(const AttemptSecrets& held) const {
    if (!held.relay) return {};
    const TlsRelay* relay = &*held.relay;
    return {[this](const std::string& host, std::uint16_t port) { return pairs_for(policy_, prepared_, host, port); },
            [relay](int client, int upstream, const std::string& host, std::uint16_t port,
                    const std::vector<int>& pairs) { return relay->hand_over(client, upstream, host, port, pairs); }};
}

}  // namespace sbx
