// The Seatbelt profile for a canonical policy; see seatbelt.h.
#include "platform/seatbelt.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>

#include "seatbelt_base.h"  // generated from macos/*.sbpl by meson

namespace sbx {
namespace {

// On macOS /tmp, /var and /etc are symlinks into /private, and Seatbelt
// matches the resolved path.  A policy resolved elsewhere (--target-os macos
// on Linux) holds the short form, one resolved on macOS the /private form;
// the profile carries both so that either way the rule matches.
std::optional<std::string> private_alias(const std::string& path) {
    static constexpr std::array<std::string_view, 3> aliased{"/tmp", "/var", "/etc"};
    constexpr std::string_view private_dir = "/private";
    for (std::string_view top : aliased) {
        if (path_within(path, top)) return std::string(private_dir) + path;
        const std::string long_form = std::string(private_dir) + std::string(top);
        if (path_within(path, long_form)) return path.substr(private_dir.size());
    }
    return std::nullopt;
}

void check_path(const std::string& path, std::string_view what) {
    if (path.empty() || path.front() != '/')
        throw Error(fmt::format("seatbelt: {} '{}' is not an absolute path", what, path));
    if (path.find('\0') != std::string::npos) throw Error(fmt::format("seatbelt: {} contains a NUL byte", what));
}

void check_sandboxed(const CanonicalPolicy& policy) {
    if (policy.mode == Mode::DangerFullAccess)
        throw Error("seatbelt: danger-full-access runs without a sandbox, so it has no Seatbelt profile");
    if (seatbelt_runs_unsandboxed(policy))
        throw Error(
            "seatbelt: external-sandbox with a full network runs without sandbox-exec on macOS (nothing is left "
            "to restrict), so it has no Seatbelt profile; sbx run runs the command as it is, or use -n restricted for "
            "a network-only profile");
}

// Equal depth: read, then write, then deny, so that with Seatbelt's "last
// matching rule wins" deny beats write beats read on the same path.
int rank(FsAccess a) {
    switch (a) {
        case FsAccess::Read: return 0;
        case FsAccess::Write: return 1;
        case FsAccess::Deny: return 2;
    }
    return 0;
}

// One path rule of the profile: an entry that changes the access its
// ancestors give (`inherited`).
struct PathRule {
    std::string path;
    FsAccess access = FsAccess::Read;
    std::optional<FsAccess> inherited;  // what the shallower rules give at `path`
    std::string param;                  // "" for the unfiltered whole-filesystem read
};

struct Param {
    std::string name;
    std::string value;
};

// Everything the profile says about files, with the -D parameters it uses.
struct FilePlan {
    bool external = false;  // external-sandbox: the filesystem is left alone
    bool reads_root = true;
    std::vector<PathRule> rules;         // in profile order: shallow to deep
    std::vector<std::string> fixed;      // params: directories not writable as a name
    std::vector<std::string> traverse;   // params: directories whose metadata is readable
    std::vector<std::string> globs;      // params: regexes of deny globs
    std::vector<std::string> terminals;  // params: the inherited terminal devices
    std::vector<Param> params;
};

// The access the rules so far give to `path`: the deepest rule at the path
// or above it, the later one on the same path (nullopt: no rule, no access).
std::optional<FsAccess> decide(const std::vector<PathRule>& rules, const std::string& path) {
    std::optional<FsAccess> access;
    std::size_t best = 0;
    bool found = false;
    for (const PathRule& r : rules) {
        if (!path_within(path, r.path)) continue;
        const std::size_t d = path_depth(r.path);
        if (!found || d >= best) {
            best = d;
            access = r.access;
            found = true;
        }
    }
    return access;
}

bool readable(std::optional<FsAccess> a) { return a == FsAccess::Read || a == FsAccess::Write; }

// ---------------------------------------------------------------------------
// Deny globs as Seatbelt regexes (POSIX extended syntax, as Codex writes them
// in codex-rs/sandboxing/src/seatbelt.rs: seatbelt_regex_for_unreadable_glob).

// A literal character: the regex metacharacters get a backslash, except ']'
// and '}', which are literal unescaped in POSIX extended regexes (where "\]"
// is not defined) and in ECMAScript alike.
void append_escaped(std::string& out, char c) {
    static constexpr std::string_view special = ".^$|()[{*+?\\";
    if (special.find(c) != std::string_view::npos) out += '\\';
    out += c;
}

// A bracket expression [..] starting at pattern[i] == '['; advances i past
// it.  nullopt when it can match no character (only '/').  A literal '[' when
// it is not closed.
std::optional<std::string> bracket_regex(std::string_view pattern, std::size_t& i) {
    std::size_t j = i + 1;
    const bool negated = j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^');
    if (negated) ++j;
    const std::size_t first = j;
    if (j < pattern.size() && pattern[j] == ']') ++j;  // a leading ']' is literal
    while (j < pattern.size() && pattern[j] != ']') ++j;
    if (j >= pattern.size()) {  // not closed: a literal '['
        ++i;
        return std::string("\\[");
    }
    const std::string_view body = pattern.substr(first, j - first);
    i = j + 1;
    auto refuse = [&](std::string_view why) -> Error {
        return Error(
            fmt::format("seatbelt: deny glob '{}': the bracket expression [{}{}] {}; "
                        "write it with alphanumeric characters and ranges",
                        pattern, negated ? "!" : "", body, why));
    };
    // Inside brackets, backslash, '[', ']', '^' and '-' read differently in
    // the regex dialects, so they are taken out as escaped alternatives (and
    // refused in a negated set, which has no such way out).
    std::string inside;
    std::vector<std::string> outside;
    for (std::size_t k = 0; k < body.size(); ++k) {
        const char c = body[k];
        if (k + 2 < body.size() && body[k + 1] == '-') {
            const char hi = body[k + 2];
            if (!std::isalnum(static_cast<unsigned char>(c)) || !std::isalnum(static_cast<unsigned char>(hi)))
                throw refuse("has a range of punctuation");
            inside += c;
            inside += '-';
            inside += hi;
            k += 2;
            continue;
        }
        if (c == '/') continue;  // a glob never matches '/' outside '**'
        if (static_cast<unsigned char>(c) >= 0x80) throw refuse("has a non-ASCII character");
        if (c == '\\' || c == '[' || c == ']' || c == '^' || c == '-') {
            if (negated) throw refuse("negates one of \\ [ ] ^ -");
            std::string alt;
            append_escaped(alt, c);
            outside.push_back(alt);
            continue;
        }
        inside += c;
    }
    if (negated) return "[^/" + inside + "]";
    if (inside.empty() && outside.empty()) return std::nullopt;
    if (outside.empty()) return "[" + inside + "]";
    std::string out = "(";
    if (!inside.empty()) outside.insert(outside.begin(), "[" + inside + "]");
    for (std::size_t k = 0; k < outside.size(); ++k) out += (k ? "|" : "") + outside[k];
    return out + ")";
}

// The anchored regex for an absolute glob: '*', '?' and [..] within one
// component, '**' as a whole component across any number of them; a match
// that is a directory is denied with everything below it.  nullopt when the
// pattern can match nothing.
std::optional<std::string> glob_regex(std::string_view pattern) {
    std::string out = "^";
    for (std::size_t i = 0; i < pattern.size();) {
        const char c = pattern[i];
        if (c == '*') {
            const bool whole = (i == 0 || pattern[i - 1] == '/') && i + 1 < pattern.size() && pattern[i + 1] == '*' &&
                               (i + 2 == pattern.size() || pattern[i + 2] == '/');
            if (whole && i + 2 == pattern.size()) {
                out += ".*";
                i += 2;
            } else if (whole) {
                out += "(.*/)?";
                i += 3;
            } else {
                out += "[^/]*";
                while (i < pattern.size() && pattern[i] == '*') ++i;
            }
        } else if (c == '?') {
            out += "[^/]";
            ++i;
        } else if (c == '[') {
            std::optional<std::string> set = bracket_regex(pattern, i);
            if (!set) return std::nullopt;
            out += *set;
        } else if (c == '\\' && i + 1 < pattern.size()) {
            append_escaped(out, pattern[i + 1]);
            i += 2;
        } else {
            append_escaped(out, c);
            ++i;
        }
    }
    return out + "(/.*)?$";
}

// ---------------------------------------------------------------------------

// The path rules, shallow to deep.
void plan_path_rules(const CanonicalPolicy& policy, FilePlan& plan) {
    // Every entry that decides its own path, from the derived sets: read
    // entries, write entries (but /dev/null, which the base policy allows as
    // data writes on the device, never as a name to unlink), their protected
    // paths and read-only carve-outs (read), deny entries (globs expanded).
    struct Candidate {
        std::string path;
        FsAccess access;
    };
    std::vector<Candidate> candidates;
    auto add = [&](const std::string& path, FsAccess access, std::string_view what) {
        check_path(path, what);
        for (const std::string& p : {path, private_alias(path).value_or("")}) {
            if (p.empty()) continue;
            const bool seen = std::any_of(candidates.begin(), candidates.end(),
                                          [&](const Candidate& c) { return c.path == p && c.access == access; });
            if (!seen) candidates.push_back({p, access});
        }
    };
    for (const std::string& r : policy.readable) add(r, FsAccess::Read, "readable path");
    for (const WritableRoot& w : policy.writable) {
        if (w.path != "/dev/null") add(w.path, FsAccess::Write, "writable root");
        for (const std::string& p : w.protected_paths) add(p, FsAccess::Read, "protected path");
    }
    for (const std::string& d : policy.denied) add(d, FsAccess::Deny, "denied path");
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        const std::size_t da = path_depth(a.path), db = path_depth(b.path);
        if (da != db) return da < db;
        if (a.access != b.access) return rank(a.access) < rank(b.access);
        return a.path < b.path;  // paths of one depth do not overlap: any fixed order
    });

    // Shallow to deep: with Seatbelt's last matching rule winning, the most
    // specific entry decides, as in decide_path().  An entry that gives what
    // its ancestors already give is left out.
    std::size_t n_read = 0, n_write = 0, n_deny = 0;
    for (const Candidate& c : candidates) {
        const std::optional<FsAccess> inherited = decide(plan.rules, c.path);
        if (inherited == c.access) continue;
        PathRule rule{c.path, c.access, inherited, ""};
        if (!(c.path == "/" && c.access == FsAccess::Read)) {
            switch (c.access) {
                case FsAccess::Read: rule.param = fmt::format("READ_{}", n_read++); break;
                case FsAccess::Write: rule.param = fmt::format("WRITE_{}", n_write++); break;
                case FsAccess::Deny: rule.param = fmt::format("DENY_{}", n_deny++); break;
            }
            plan.params.push_back({rule.param, rule.path});
        }
        plan.rules.push_back(std::move(rule));
    }
}

void plan_deny_globs(const CanonicalPolicy& policy, FilePlan& plan) {
    // Deny globs: the pattern itself, so that a file created later is denied
    // too (the Linux view can only hide what the pattern matched at start).
    std::vector<std::string> glob_patterns;
    for (const FsEntry& e : policy.entries) {
        if (e.target.kind != FsTarget::Kind::Glob || e.access != FsAccess::Deny) continue;
        std::string pattern = e.target.value;
        if (pattern.empty() || pattern.front() != '/') pattern = join_path(policy.workspace, pattern);
        check_path(pattern, "deny glob");
        for (const std::string& p : {pattern, private_alias(pattern).value_or("")})
            if (!p.empty() && std::find(glob_patterns.begin(), glob_patterns.end(), p) == glob_patterns.end())
                glob_patterns.push_back(p);
    }
    for (const std::string& pattern : glob_patterns) {
        const std::optional<std::string> regex = glob_regex(pattern);
        if (!regex) continue;
        const std::string name = fmt::format("DENY_GLOB_{}", plan.globs.size());
        plan.globs.push_back(name);
        plan.params.push_back({name, *regex});
    }
}

void plan_fixed_directories(FilePlan& plan) {
    // No rename may carry a read-only or denied path out from under its rule:
    // each directory from a writable ancestor down to it keeps its name.  (A
    // glob's directories are not fixed: that would forbid creating them when
    // they do not exist yet.  A directory renamed out of a pattern takes the
    // files created in it later along; what matched at start is denied by
    // name, as on Linux, and its directories are fixed like any deny entry's.)
    std::vector<std::string> fixed_dirs;
    auto fix_chain = [&](const std::string& target_dir) {
        for (const PathRule& w : plan.rules) {
            if (w.access != FsAccess::Write || !path_within(target_dir, w.path)) continue;
            for (std::string dir = target_dir;; dir = parent_path(dir)) {
                if (decide(plan.rules, dir) == FsAccess::Write &&
                    std::find(fixed_dirs.begin(), fixed_dirs.end(), dir) == fixed_dirs.end())
                    fixed_dirs.push_back(dir);
                if (dir == w.path || dir == "/") break;
            }
        }
    };
    for (const PathRule& r : plan.rules)
        if (r.access != FsAccess::Write && r.path != "/") fix_chain(parent_path(r.path));
    std::sort(fixed_dirs.begin(), fixed_dirs.end());
    for (const std::string& dir : fixed_dirs) {
        plan.fixed.push_back(fmt::format("FIXED_{}", plan.fixed.size()));
        plan.params.push_back({plan.fixed.back(), dir});
    }
}

void plan_traversal(const CanonicalPolicy& policy, FilePlan& plan) {
    // The directories on the way to a readable or writable entry that no
    // rule lets the command read: their metadata (stat, getattrlist), as the
    // Linux view shows them, traversable but not listable.  Seatbelt checks
    // the final path of an open, not each directory of the lookup, but
    // realpath() and getcwd() look at every directory on the way.  A
    // symlink on an entry's given path (/bin -> /usr/bin for :minimal) is
    // read to resolve it.
    std::vector<std::string> traverse_dirs;
    auto add_traverse = [&](const std::string& path) {
        if (path == "/" || readable(decide(plan.rules, path))) return;
        if (std::find(traverse_dirs.begin(), traverse_dirs.end(), path) == traverse_dirs.end())
            traverse_dirs.push_back(path);
    };
    auto add_ancestors = [&](const std::string& path) {
        for (std::string dir = parent_path(path); dir != "/"; dir = parent_path(dir)) add_traverse(dir);
    };
    for (const PathRule& r : plan.rules)
        if (r.access != FsAccess::Deny) add_ancestors(r.path);
    if (!plan.reads_root) {
        for (const ResolvedEntry& e : policy.resolved) {
            if (e.given.empty() || e.access == FsAccess::Deny || !readable(decide(plan.rules, e.path))) continue;
            check_path(e.given, "entry path");
            add_traverse(e.given);
            add_ancestors(e.given);
        }
    }
    std::sort(traverse_dirs.begin(), traverse_dirs.end());
    for (const std::string& dir : traverse_dirs) {
        plan.traverse.push_back(fmt::format("TRAVERSE_{}", plan.traverse.size()));
        plan.params.push_back({plan.traverse.back(), dir});
    }
}

void plan_terminals(const SeatbeltContext& context, FilePlan& plan) {
    // The terminal devices the command inherits, each once; /dev/tty has its
    // own rule in the base policy.
    std::vector<std::string> terminals;
    for (const std::string& t : context.terminals) {
        check_path(t, "terminal");
        if (t != "/dev/tty" && std::find(terminals.begin(), terminals.end(), t) == terminals.end())
            terminals.push_back(t);
    }
    for (const std::string& t : terminals) {
        plan.terminals.push_back(fmt::format("TERMINAL_{}", plan.terminals.size()));
        plan.params.push_back({plan.terminals.back(), t});
    }
}

FilePlan plan_files(const CanonicalPolicy& policy, const SeatbeltContext& context) {
    check_sandboxed(policy);
    FilePlan plan;
    if (policy.mode == Mode::ExternalSandbox) {
        plan.external = true;  // (allow default): the terminals need no rule
        return plan;
    }
    // "/" readable: from the derived sets, like everything here (the
    // difference from reads_root(): CanonicalPolicy::root_in_derived_sets).
    plan.reads_root = policy.root_in_derived_sets();

    plan_path_rules(policy, plan);
    plan_deny_globs(policy, plan);
    plan_fixed_directories(plan);
    plan_traversal(policy, plan);
    plan_terminals(context, plan);
    return plan;
}

std::string_view network_rules(Network network) {
    switch (network) {
        case Network::Restricted: return seatbelt_files::network_restricted;
        case Network::Limited: return seatbelt_files::network_limited;
        case Network::Full: return seatbelt_files::network_full;
    }
    throw Error("seatbelt: unknown network level");
}

std::string param_filter(std::string_view kind, const std::string& param) {
    return fmt::format("({} (param {}))", kind, sbpl_quote(param));
}

// The rule of one entry.  Denials name the path both as a literal and as a
// subpath, as Codex does (build_seatbelt_access_policy in
// codex-rs/sandboxing/src/seatbelt.rs), so that the first creation of the
// name itself is covered whatever the path's form.
std::string path_rule_text(const PathRule& r) {
    constexpr std::string_view read_ops = "file-read* file-map-executable";
    if (r.param.empty()) return fmt::format("(allow {})", read_ops);
    const std::string subpath = param_filter("subpath", r.param);
    const std::string both = param_filter("literal", r.param) + " " + subpath;
    switch (r.access) {
        case FsAccess::Read:
            if (r.inherited == FsAccess::Write) return fmt::format("(deny file-write* {})", both);
            return fmt::format("(allow {} {})", read_ops, subpath);
        case FsAccess::Write:
            if (r.inherited == FsAccess::Read) return fmt::format("(allow file-write* {})", subpath);
            return fmt::format("(allow {} file-write* {})", read_ops, subpath);
        case FsAccess::Deny: return fmt::format("(deny {} file-write* file-test-existence {})", read_ops, both);
    }
    return {};
}

void append_multi(std::string& out, std::string_view head, const std::vector<std::string>& params,
                  std::string_view kind) {
    out += head;
    for (const std::string& p : params) out += "\n  " + param_filter(kind, p);
    out += ")\n\n";
}

void append_file_rules(std::string& out, const FilePlan& plan) {
    if (!plan.reads_root) {
        out += seatbelt_files::restricted_read;
        if (!out.empty() && out.back() != '\n') out += '\n';
        out += '\n';
    }
    out +=
        "; Files: one rule per entry of the policy, from the shallowest path to the\n"
        "; deepest and, on the same path, read before write before deny.  Seatbelt\n"
        "; applies the last rule that matches, so the most specific entry decides, as\n"
        "; on Linux: a denied directory beats the readable root, a writable hole\n"
        "; below it beats the denial, a read-only carve-out beats its writable root.\n"
        "; Reading includes mapping code (dylibs, native modules).  The paths come as\n"
        "; -D parameters, never spliced into this text.  The rules match path names,\n"
        "; not files, so a protected or denied name that does not exist yet cannot\n"
        "; be created either; nor does a symlink get round them, as Seatbelt checks\n"
        "; the resolved path.  Hard links (file-link) stay denied everywhere: a\n"
        "; second name for a read-only or denied file would escape its rule.\n";
    for (const PathRule& r : plan.rules) {
        if (r.param.empty()) continue;
        out += fmt::format(";   {} = {} ({})\n", r.param, sbpl_quote(r.path), to_string(r.access));
    }
    if (plan.rules.empty()) out += "; No entry: nothing is readable or writable but what the lines above allow.\n";
    for (const PathRule& r : plan.rules) out += path_rule_text(r) + "\n";
    out += "\n";

    auto value_of = [&](const std::string& name) {
        for (const Param& p : plan.params)
            if (p.name == name) return p.value;
        return std::string();
    };
    // One section: its comment, the parameters with their values, one rule.
    auto section = [&](std::string_view comment, const std::vector<std::string>& params, std::string_view head,
                       std::string_view kind) {
        if (params.empty()) return;
        out += comment;
        for (const std::string& p : params) out += fmt::format(";   {} = {}\n", p, sbpl_quote(value_of(p)));
        append_multi(out, head, params, kind);
    };
    section(
        "; Renames: the writable directories that lead to a read-only or denied path\n"
        "; (a writable root and the directories above such a path) cannot be renamed\n"
        "; or removed, so that no rename moves that path away from the name its rule\n"
        "; holds (mv project /tmp/p, then write /tmp/p/.git/hooks/x).  Only unlink\n"
        "; is denied, as in Codex: the directory itself stays writable otherwise\n"
        "; (touch ., chmod, tar x of a ./ entry, rsync -a src/ .).\n",
        plan.fixed, "(deny file-write-unlink", "literal");
    section(
        "; Traversal: the directories on the way to a readable or writable entry\n"
        "; that are not readable themselves give their metadata only (stat,\n"
        "; getattrlist for realpath and getcwd), never their listing.\n",
        plan.traverse, "(allow file-read-metadata", "literal");
    section(
        "; Deny globs, last so that they beat every entry: each pattern as an anchored\n"
        "; regex ('*', '?' and [..] within a component, '**' across components, a\n"
        "; matched directory with everything below it).  Unlike on Linux, where the\n"
        "; pattern is expanded once at start, a file created later that matches is\n"
        "; denied too, and no matching name can be created.\n",
        plan.globs, "(deny file-read* file-map-executable file-write* file-test-existence", "regex");
    section(
        "; The terminal the command inherited (the device of sbx's stdin, stdout or\n"
        "; stderr): reads, writes and termios ioctls (line editing, the window size,\n"
        "; job control), as /dev/tty in the base policy.  Other terminals of the user\n"
        "; stay closed; TIOCSTI is denied by the last rule.\n",
        plan.terminals, "(allow file-read-data file-write-data file-ioctl", "literal");
}

// Last in every profile, so that no rule above reopens it: TIOCSTI pushes
// characters into a terminal's input, where the user's shell would run them
// after sbx exits.  macOS allows it only on the caller's controlling terminal,
// which is the user's (sbx keeps the command in the terminal's session for
// job control), so it is denied by name.  Codex ends the profile of its debug
// sandbox with the same rule (codex-rs/cli/src/debug_sandbox.rs).
constexpr std::string_view kNoTiocsti =
    "\n; Last: no TIOCSTI on any terminal (it would type into the user's shell).\n"
    "(deny file-ioctl (ioctl-command TIOCSTI))\n";

// external-sandbox with a restricted or limited network: Codex's network-only
// profile (codex-rs/sandboxing/src/seatbelt/network_only.rs): everything is
// allowed but IP and UNIX-socket connects, binds and accepts; "limited" keeps
// loopback, as Codex's allow_local_binding does.
std::string external_profile(const CanonicalPolicy& policy) {
    std::string out = fmt::format(
        "(version 1)\n"
        "; sbx: mode external-sandbox, network {}.  The sandbox around sbx confines files\n"
        "; and processes; this profile, as Codex's network-only one\n"
        "; (codex-rs/sandboxing/src/seatbelt/network_only.rs), only takes the network away.\n"
        "(allow default)\n",
        to_string(policy.network));
    if (policy.network == Network::Limited) {
        out +=
            "; IP: loopback only (the host's: macOS has no private one).\n"
            "(deny network-outbound (require-all (remote ip \"*:*\") (require-not (remote ip \"localhost:*\"))))\n"
            "(deny network-bind (require-all (local ip \"*:*\") (require-not (local ip \"localhost:*\"))))\n"
            "(deny network-inbound (require-all (local ip \"*:*\") (require-not (local ip \"localhost:*\"))))\n";
    } else {
        out +=
            "; IP: no connect, bind or accept on any address.\n"
            "(deny network-outbound (remote ip \"*:*\"))\n"
            "(deny network-bind (local ip \"*:*\"))\n"
            "(deny network-inbound (local ip \"*:*\"))\n";
    }
    out +=
        "; UNIX sockets by path (the resolver, docker.sock, the host's daemons).\n"
        "(deny network-outbound (remote unix-socket))\n"
        "(deny network-bind (local unix-socket))\n";
    out += kNoTiocsti;
    return out;
}

}  // namespace

std::string sbpl_quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (byte < 0x20 || byte >= 0x7f) {
            out += fmt::format("\\x{:02X}", byte);
        } else {
            out += c;
        }
    }
    out += '"';
    return out;
}

bool seatbelt_runs_unsandboxed(const CanonicalPolicy& policy) {
    return policy.mode == Mode::ExternalSandbox && policy.network == Network::Full;
}

void check_seatbelt_roots(const CanonicalPolicy& policy, const Environment& env) {
    if (policy.mode != Mode::WorkspaceWrite) return;
    // At the top of each writable root, and in each directory above a nested one.
    for (const ProtectedNameDirectory& dir : protected_name_directories(policy, env)) {
        for (const std::string& name : policy.protected_names) {
            const std::string path = join_path(dir.path, name);
            const std::optional<std::string> target = env.readlink(path);
            if (!target) continue;
            throw Error(fmt::format(
                "{} is a symlink (to {}) in {}; on macOS sbx refuses a protected name that is "
                "a symlink, as Codex does (Seatbelt would protect whatever it names now, and an earlier run may "
                "have planted it): replace the link with the real directory, or lift the name with --unprotect {}",
                path, *target,
                dir.outer.empty() ? "the writable root " + dir.path
                                  : fmt::format("{}, on the way from the writable root {} down to {}", dir.path,
                                                dir.outer, dir.inner),
                name));
        }
    }
}

std::vector<std::string> inherited_terminals() {
    std::vector<std::string> out;
    for (int fd = 0; fd <= 2; ++fd) {
        if (::isatty(fd) != 1) continue;
        std::array<char, 256> name{};
        if (::ttyname_r(fd, name.data(), name.size()) != 0) continue;
        const std::string t(name.data());
        if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
    return out;
}

std::string seatbelt_profile(const CanonicalPolicy& policy, const SeatbeltContext& context) {
    const FilePlan plan = plan_files(policy, context);
    if (plan.external) return external_profile(policy);
    std::string out(seatbelt_files::base);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += fmt::format("\n; ---- Generated by sbx from the canonical policy: mode {}, network {} ----\n\n",
                       to_string(policy.mode), to_string(policy.network));
    append_file_rules(out, plan);
    out += network_rules(policy.network);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += kNoTiocsti;
    return out;
}

std::vector<std::string> seatbelt_parameters(const CanonicalPolicy& policy, const SeatbeltContext& context) {
    std::vector<std::string> params;
    for (const Param& p : plan_files(policy, context).params) params.push_back(fmt::format("-D{}={}", p.name, p.value));
    return params;
}

std::vector<std::string> seatbelt_argv(const CanonicalPolicy& policy, const std::vector<std::string>& command,
                                       const std::string& sandbox_exec, const SeatbeltContext& context) {
    if (sandbox_exec.empty() || sandbox_exec.front() != '/')
        throw Error(fmt::format("seatbelt: sandbox-exec path '{}' is not absolute; sbx never looks it up in PATH",
                                sandbox_exec));
    if (command.empty()) throw Error("seatbelt: no command to run");
    std::vector<std::string> argv{sandbox_exec, "-p", seatbelt_profile(policy, context)};
    for (std::string& p : seatbelt_parameters(policy, context)) argv.push_back(std::move(p));
    argv.emplace_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

}  // namespace sbx
