#include "ca.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace sbx::tls {

namespace {

constexpr long kValidFor = 7L * 24 * 3600;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("the ephemeral CA: " + what); }

Pkey p256() {
    EVP_PKEY* k = EVP_EC_gen("P-256");
    if (k == nullptr) fail("cannot make a P-256 key");
    return Pkey(k);
}

void add_extension(X509* x, X509V3_CTX& ctx, int nid, const std::string& value) {
    X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (e == nullptr || X509_add_ext(x, e, -1) != 1) fail("cannot add an extension: " + value);
    X509_EXTENSION_free(e);
}

// A certificate for key named cn, issued by issuer (nullptr: itself); signed later.
Cert make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer) {
    Cert x(X509_new());
    if (!x || X509_set_version(x.get(), 2) != 1) fail("X509_new");
    BIGNUM* serial = BN_new();
    if (serial == nullptr || BN_rand(serial, 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
        BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x.get())) == nullptr)
        fail("a serial number");
    BN_free(serial);
    X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x.get()), kValidFor);
    X509_set_pubkey(x.get(), key);
    X509_NAME* name = X509_get_subject_name(x.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(x.get(), issuer ? X509_get_subject_name(issuer) : name);
    return x;
}

void sign(X509* x, EVP_PKEY* signer) {
    if (X509_sign(x, signer, EVP_sha256()) <= 0) fail("cannot sign");
}

}  // namespace

bool ip_literal(const std::string& host) {
    unsigned char buf[16];
    return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

EphemeralCa::EphemeralCa() : key_(p256()), leaf_key_(p256()) {
    cert_ = make_cert(key_.get(), "sbx ephemeral CA", nullptr);
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, cert_.get(), cert_.get(), nullptr, nullptr, 0);
    add_extension(cert_.get(), ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_extension(cert_.get(), ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
    add_extension(cert_.get(), ctx, NID_subject_key_identifier, "hash");
    sign(cert_.get(), key_.get());
}

std::string EphemeralCa::pem() const {
    BIO* bio = BIO_new(BIO_s_mem());
    if (bio == nullptr || PEM_write_bio_X509(bio, cert_.get()) != 1) fail("cannot write the certificate");
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return out;
}

X509* EphemeralCa::leaf(const std::string& host) {
    std::lock_guard lock(mutex_);
    if (auto it = leaves_.find(host); it != leaves_.end()) return it->second.get();
    Cert x = make_cert(leaf_key_.get(), host.size() <= 64 ? host : "sbx", cert_.get());
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, cert_.get(), x.get(), nullptr, nullptr, 0);
    add_extension(x.get(), ctx, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(x.get(), ctx, NID_key_usage, "critical,digitalSignature");
    add_extension(x.get(), ctx, NID_ext_key_usage, "serverAuth");
    add_extension(x.get(), ctx, NID_authority_key_identifier, "keyid");
    add_extension(x.get(), ctx, NID_subject_alt_name, (ip_literal(host) ? "IP:" : "DNS:") + host);
    sign(x.get(), key_.get());
    return leaves_.emplace(host, std::move(x)).first->second.get();
}

}  // namespace sbx::tls
