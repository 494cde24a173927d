// The run-time side of a policy's secrets (issue 36, docs/network.md): the
// real values, read from sbx's environment and from the files, a sentinel
// of the same length for each, and what the sandbox gets instead (the
// sentinels in its environment, copies of the files with the sentinels in
// them, the variables withheld).  Pure but for read_secret_file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/tls_relay.h"
#include "exec/supervisor.h"
#include "net/proxy.h"
#include "platform/plan.h"
#include "policy/policy.h"
#include "util/fd.h"

namespace sbx {

struct MaskedFile {
    std::string path;     // absolute, as the policy names it
    std::string content;  // the file with each secret value replaced by its sentinel
};

struct PreparedSecrets {
    std::vector<SecretPair> pairs;           // each value once: what sbx-tls puts back
    std::vector<std::vector<int>> pairs_of;  // per secret of the policy (same index): its pairs
    std::map<std::string, std::string> env;  // masked variables and their sentinels
    std::vector<std::string> unset;          // withheld variables
    std::vector<MaskedFile> files;
    bool masked() const { return !pairs.empty(); }
};

// Fills n bytes with randomness (getrandom in sbx).
using RandomBytes = std::function<void(unsigned char*, std::size_t)>;

// The shortest value sbx masks: its sentinel is as long, letters and digits.
// The longest (a token's length, not a document's), and the most values in
// a run: sbx-tls's bounds (tls/main.cc).
inline constexpr std::size_t kMinSecretLength = 8, kMaxSecretLength = 16384, kMaxSecretValues = 64;

// A sentinel for value: the same length, random letters and digits, never
// equal to it.  Throws Error for a value shorter than kMinSecretLength or
// longer than kMaxSecretLength, or one that is not UTF-8 text.
std::string sentinel_for(std::string_view value, const RandomBytes&, const std::string& what);

// The policy's secrets made ready.  getenv: sbx's environment; read_file: a
// secret file's content (read_secret_file).  Throws Error naming the secret:
// a masked variable that is not set, a value sentinel_for refuses, more
// than kMaxSecretValues values, an extract that matches nothing (the file
// would show its secret).
PreparedSecrets prepare_secrets(const CanonicalPolicy&,
                                const std::function<std::optional<std::string>(const std::string&)>& getenv,
                                const std::function<std::string(const std::string&)>& read_file, const RandomBytes&);

// The pairs to put back on a connection to host:port: those of every masked
// secret one of whose hosts admits it; nullopt (not terminated) when none
// does or a tls_passthrough pattern admits it.
std::optional<std::vector<int>> pairs_for(const CanonicalPolicy&, const PreparedSecrets&, const std::string& host,
                                          std::uint16_t port);

// A secret file's content: a regular file (symlinks followed) with no other
// hard link (which would show the real file elsewhere), at most 1 MiB.
// Throws Error naming the cause.
std::string read_secret_file(const std::string& path);

// What one attempt holds for its secrets: sbx-tls, and the masked files'
// contents for the helper.
struct AttemptSecrets {
    std::optional<TlsRelay> relay;
    std::vector<Fd> files;
};

// A run's secrets: prepared once (the sentinels are the same in every
// attempt), with the directory of the CA's files where the command reads
// them (made once where a masked secret needs them; removed at the end).
class RunSecrets {
public:
    // Throws Error (prepare_secrets's): nothing has run.
    explicit RunSecrets(const CanonicalPolicy&);
    ~RunSecrets();
    RunSecrets(const RunSecrets&) = delete;
    RunSecrets& operator=(const RunSecrets&) = delete;

    // "" unless a secret is masked.
    const std::string& ca_dir() const { return ca_dir_; }

    // A sandboxed attempt (a masked secret: the Linux helper's): the sentinels and the withheld
    // variables in its environment, --mask-file for each masked file (its
    // content passed in opt.pass_fds), and, where a secret is masked, sbx-tls
    // started and the CA's files written, named by SSL_CERT_FILE and the
    // like.  Throws Error (a variable --env sets, sbx-tls failing).
    void apply(ExecPlan&, SuperviseOptions&, AttemptSecrets&) const;

    // The proxy's Terminator for an attempt (none without sbx-tls).
    net::Terminator terminator(const AttemptSecrets&) const;

private:
    CanonicalPolicy policy_;
    PreparedSecrets prepared_;
    std::string ca_dir_;
};

// The variables that point the command's tools at the CA's files: the bundle
// (the host's trusted certificates and the CA) or the CA alone (for the
// tools that add it to theirs).  Listed in sbx(1).
std::map<std::string, std::string> ca_environment(const std::string& bundle, const std::string& ca);

}  // namespace sbx
