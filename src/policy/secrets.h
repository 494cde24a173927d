// Secrets in a policy (issue 36): --secret-env, --secret-file, the
// "secrets" and "tls_passthrough" keys, checked and merged into the
// canonical policy.  Pure (the filesystem through Environment).
#pragma once

#include "policy/policy.h"

namespace sbx {

// The input's secrets and tls_passthrough resolved into p (after its mode,
// network and allowlist): names checked, "~/" and relative files made
// absolute, hosts normalised, each (kind, name) once (withheld wins; a
// masked one's hosts accumulate).  A withheld file becomes a deny entry
// added to in.extra_entries.  Throws Error naming the source: a bad name,
// host or extract; a masked secret where the filesystem is not sandboxed,
// or (resolving the whole policy) whose host no allow-domain admits.
void resolve_secrets(PolicyInput& in, const Environment& env, CanonicalPolicy& p, ResolveScope scope);

// "--secret-env NAME[@HOST,...]" and "--secret-file PATH[@HOST,...]" as a
// secret (hosts not yet normalised); throws Error for an empty name or host.
Secret parse_secret_flag(Secret::Kind kind, const std::string& value, const std::string& flag);

}  // namespace sbx
