// sbx-tls needs the allowlist proxy, which needs Linux (net/proxy.h): a
// masked secret is refused with the allowlist before anything runs.
#include "cli/tls_relay.h"

#include "util/error.h"

namespace sbx {

TlsRelay::TlsRelay(const std::string&, const std::vector<SecretPair>&) {
    throw Error("a masked secret needs sbx-tls, which runs on Linux only");
}

TlsRelay::~TlsRelay() = default;

bool TlsRelay::hand_over(int, int, const std::string&, std::uint16_t, const std::vector<int>&) const { return false; }

std::string find_tls_relay(const std::string&) {
    throw Error("a masked secret needs sbx-tls, which runs on Linux only");
}

}  // namespace sbx
