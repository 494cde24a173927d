// macOS: the Seatbelt profile and the sandbox-exec argv for a canonical
// policy.  Pure functions (no macOS API is called), so the profile is built
// and tested on any OS; only macOS runs it.
//
// The profile is the base policy (macos/base.sbpl, embedded at build time)
// followed by generated rules: reads everywhere, writes on the writable roots
// (passed as -DWRITABLE_ROOT_i=PATH parameters, never spliced into the text)
// minus their protected paths (-DWRITABLE_ROOT_i_PROTECTED_j) and minus the
// directories deeper in a root that lead to one (-DWRITABLE_ROOT_i_ANCESTOR_j,
// as with nested roots), and the network file for the policy's level.
// danger-full-access has no profile: these functions throw sbx::Error for it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace sbx {

// The full profile text for the policy (base files + generated rules).
std::string seatbelt_profile(const CanonicalPolicy&);

// The -D parameters: {"-DWRITABLE_ROOT_0=/path", "-DWRITABLE_ROOT_0_PROTECTED_0=/path/.git", ...}.
std::vector<std::string> seatbelt_parameters(const CanonicalPolicy&);

// The whole argv: {sandbox_exec, "-p", PROFILE, params..., "--", command...}.
std::vector<std::string> seatbelt_argv(const CanonicalPolicy&, const std::vector<std::string>& command,
                                       const std::string& sandbox_exec);

// A Seatbelt (SBPL, TinyScheme) string literal, quotes included, that reads
// back as exactly `text`: backslash and double quote are escaped, and every
// byte outside printable ASCII (controls, DEL, the bytes of UTF-8 sequences)
// is written as \xHH.  Used for every literal sbx splices into a profile.
std::string sbpl_quote(std::string_view text);

}  // namespace sbx
