// sbx's side of sbx-tls (tls/main.cc; issue 36): the process that
// terminates TLS for the connections that carry a masked secret, so that
// OpenSSL never parses the command's bytes inside sbx.  It is started once
// per attempt that masks a secret, with the pairs of (sentinel, real value);
// it makes an ephemeral CA, whose certificate the command trusts (ca_pem),
// and is handed each connection to terminate: the command's socket and the
// upstream one, with the pairs to put back.  Closing the channel ends it.
// Linux only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/spawn.h"
#include "util/fd.h"

namespace sbx {

struct SecretPair {
    std::string sentinel;  // what the command sees
    std::string value;     // what the host receives; the same length
};

class TlsRelay {
public:
    // Starts exe (sbx-tls) with the pairs and takes its answer.  Throws
    // Error ("sbx-tls: ...") when it cannot start or refuses.
    TlsRelay(const std::string& exe, const std::vector<SecretPair>& pairs);
    ~TlsRelay();
    TlsRelay(const TlsRelay&) = delete;
    TlsRelay& operator=(const TlsRelay&) = delete;

    const std::string& ca_pem() const { return ca_pem_; }
    // The trust store sbx-tls verifies hosts with (the command's bundle is
    // this file's certificates and the CA).
    const std::string& trust_file() const { return trust_file_; }

    // Hands a connection over (copies of both sockets; the caller closes its
    // own): inject lists the pairs whose sentinel becomes the value in what
    // the command sends.  False when sbx-tls is gone.  Thread-safe.
    bool hand_over(int client, int upstream, const std::string& host, std::uint16_t port,
                   const std::vector<int>& inject) const;

private:
    Fd channel_;
    std::optional<exec::Child> child_;
    std::string ca_pem_, trust_file_;
};

// Where sbx finds sbx-tls: $SBX_TLS_EXE, else beside the Linux helper.
// Throws Error when it is not there.
std::string find_tls_relay(const std::string& linux_helper);

}  // namespace sbx
