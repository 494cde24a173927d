// sbx-tls's ephemeral CA (issue 36): a P-256 key and a self-signed CA
// certificate made at start, kept in this process only; a leaf certificate
// per host, made on first use and kept.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace sbx::tls {

struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Free {
    void operator()(X509* x) const { X509_free(x); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Cert = std::unique_ptr<X509, X509Free>;

// Whether host is an IPv4 or IPv6 literal (a leaf's SAN is then IP:, and
// the host's side verifies an address, not a name).
bool ip_literal(const std::string& host);

class EphemeralCa {
public:
    EphemeralCa();  // throws std::runtime_error
    std::string pem() const;
    // The leaf for host (a name, or an IP literal), and the key of every leaf.
    X509* leaf(const std::string& host);
    EVP_PKEY* leaf_key() const { return leaf_key_.get(); }

private:
    Pkey key_, leaf_key_;
    Cert cert_;
    std::mutex mutex_;
    std::map<std::string, Cert> leaves_;
};

}  // namespace sbx::tls
