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
// -DDENY_i, -DFIXED_i, -DTRAVERSE_i, -DDENY_GLOB_i, -DTERMINAL_i), never
// spliced into the text.  The last rule denies TIOCSTI everywhere.
//
// external-sandbox leaves files and processes to the sandbox around sbx: with
// a restricted or limited network its profile is Codex's network-only one,
// (allow default) and the network denials; with a full network nothing is
// left to restrict and sbx runs the command without sandbox-exec
// (seatbelt_runs_unsandboxed).  danger-full-access and that case have no
// profile: these functions throw sbx::Error for them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace sbx {

// What the profile needs beyond the policy, known only where sbx runs.
struct SeatbeltContext {
    // The terminal devices the command inherits (/dev/ttys003: sbx's own
    // stdin, stdout, stderr).  Each gets reads, writes and termios ioctls
    // (-DTERMINAL_i); no other terminal of the user is reachable.
    std::vector<std::string> terminals;
};

// The full profile text for the policy (base files + generated rules).
std::string seatbelt_profile(const CanonicalPolicy&, const SeatbeltContext& = {});

// The -D parameters: {"-DWRITE_0=/path", "-DREAD_0=/path/.git", ...}, in the
// order the profile names them.
std::vector<std::string> seatbelt_parameters(const CanonicalPolicy&, const SeatbeltContext& = {});

// The whole argv: {sandbox_exec, "-p", PROFILE, params..., "--", command...}.
std::vector<std::string> seatbelt_argv(const CanonicalPolicy&, const std::vector<std::string>& command,
                                       const std::string& sandbox_exec, const SeatbeltContext& = {});

// external-sandbox with a full network: on macOS sbx applies no sandbox at
// all (as Codex): there is nothing left to restrict, and inside the outer
// sandbox a nested sandbox-exec fails (sandbox_apply: Operation not
// permitted).
bool seatbelt_runs_unsandboxed(const CanonicalPolicy&);

// Refuses (sbx::Error) a writable root whose protected name (.git, .codex,
// ...) is a symlink, as Codex does, and so a directory above a nested root
// (protected_name_directories): Seatbelt matches resolved paths, so the
// rules would hold whatever the link names now, a link an earlier run may
// have planted.  Only the macOS plan calls it; the Linux helper protects
// the link and its target (protected_paths_of in src/policy/policy.cc).
void check_seatbelt_roots(const CanonicalPolicy&, const Environment&);

// The terminal devices on sbx's stdin, stdout and stderr (ttyname), each
// once: SeatbeltContext::terminals for a run.  Not pure: reads the
// descriptors.
std::vector<std::string> inherited_terminals();

// A Seatbelt (SBPL, TinyScheme) string literal, quotes included, that reads
// back as exactly `text`: backslash and double quote are escaped, and every
// byte outside printable ASCII (controls, DEL, the bytes of UTF-8 sequences)
// is written as \xHH.  Used for every literal sbx splices into a profile.
std::string sbpl_quote(std::string_view text);

}  // namespace sbx
