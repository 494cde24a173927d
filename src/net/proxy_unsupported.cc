// The allowlist proxy where sbx has none (macOS): Seatbelt has no private
// network for the command, so plan() refuses an allowlist before anything
// runs (as it refuses network limited) and this is never constructed.
#include "net/proxy.h"

#include "util/error.h"

namespace sbx::net {

struct AllowlistProxy::State {};

AllowlistProxy::AllowlistProxy(DomainRules, RelayCap, Fd, AskHost, Terminator) {
    throw Error("--allow-domain: the allowlist proxy needs Linux (a private network namespace for the command)");
}

AllowlistProxy::~AllowlistProxy() = default;

int AllowlistProxy::helper_channel() const { return -1; }

std::vector<ProxyDenial> AllowlistProxy::finish() { return {}; }

}  // namespace sbx::net
