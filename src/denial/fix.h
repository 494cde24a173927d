// For one denied operation: its Fix (denial/denial.h), the rule of the
// canonical policy that refused it and the smallest sensible change of the
// policy that would allow it, or why none is suggested.  Pure: the
// filesystem's answers (does ~/.cache exist?) and $HOME come in through
// Environment.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "denial/denial.h"
#include "net/domain.h"
#include "policy/check.h"
#include "policy/policy.h"

namespace sbx {

// The fix of the allowlist's decision by name or address (net/domain.h) for
// a connection it refused: --allow-domain of the pattern it names, or none
// and why.
Fix fix_of(const net::Decision&);

// The access a denial was of: Connect for a network operation, Exec for
// "exec" (recorded) or audit's fs.execute, Write for the write class,
// else Read.
Access access_of(const Denial&);

// A server's call (bind, listen, accept): under restricted, -n limited
// allows it, on the sandbox's own loopback.
bool is_serving(const std::string& operation);

// A fix's text as the end of a sentence: "allow with -w /root/.npm", or
// "no flag suggested: WHY" as it is.
std::string allow_clause(const std::string& fix_text);

// The directories under $HOME that sbx suggests whole (the top of a cache or
// tool directory) instead of the deep path a tool happened to write, relative
// to $HOME; "*" is any one name.  Listed in sbx(1).
const std::vector<std::string>& tool_directories();

// Why making `path` `made` ("writable", "readable") would give away too
// much, or "": /, $HOME or above it, ~/.ssh or ~/.gnupg or anything in them.
std::string too_open(const std::string& path, const Environment& env, std::string_view made);

// The fix for one denial: a write-class operation on d.path (recorded or
// audited), a connect (or any net.* operation) to d.address, a read or exec
// (recorded, or audit's fs.read_*, fs.execute) on d.path.  A relative path is
// taken against env.cwd.  Never suggests -w for /, $HOME or above it, a
// protected path, ~/.ssh or ~/.gnupg, or a directory already writable; never
// --read-only for those (too_open) or a path an entry denies; never -n
// limited (it reaches only the sandbox's own loopback, not the host's).
Fix fix_for(const CanonicalPolicy&, const Denial&, const Environment&);

// Fills each denial's rule and fix.  For the output heuristic (sandbox_denied
// from a message naming a path; env.cwd is the command's, for a relative
// one): `guess`, the message read as a denial with its rule and fix; and
// sandbox_denied false when "Permission denied" or "Operation not permitted"
// names a path the policy lets the command read (`cat /etc/shadow` as a
// user: the file's mode refused it, not the sandbox).
void explain_denials(DenialAnalysis&, const CanonicalPolicy&, const Environment&);

}  // namespace sbx
