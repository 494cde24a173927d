// macOS: the Seatbelt profile and the sandbox-exec argv for a canonical
// policy.  Pure functions (no macOS API is called), so the profile is built
// and tested on any OS; only macOS runs it.
//
// The profile is the base policy (macos/base.sbpl, embedded at build time)
// followed by generated rules and the network file for the policy's level.
// The generated rules express the policy's entries (CanonicalPolicy's
// readable, writable with protected paths, denied, and the deny globs of
// its entries): one rule per entry, shallowest path first, so that with
// Seatbelt's "last matching rule wins" the most specific entry decides as it
// does on Linux; then the names that renames may not move, the directories
// whose metadata traversal needs, and the deny globs as regexes.  Without a
// readable root, macos/restricted_read.sbpl (what any process needs to start)
// comes first.  Every path and regex is a -D parameter (-DREAD_i, -DWRITE_i,
// -DDENY_i, -DFIXED_i, -DTRAVERSE_i, -DDENY_GLOB_i), never spliced into the
// text.  danger-full-access has no profile: these functions throw
// sbx::Error for it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace sbx {

// The full profile text for the policy (base files + generated rules).
std::string seatbelt_profile(const CanonicalPolicy&);

// The -D parameters: {"-DWRITE_0=/path", "-DREAD_0=/path/.git", ...}, in the
// order the profile names them.
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
