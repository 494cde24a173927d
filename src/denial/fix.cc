#include "denial/fix.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include <fmt/format.h>

#include "net/domain.h"
#include "policy/check.h"

namespace sbx {

namespace {

// The file operations the recorder names, and audit's write-class blockers.
bool is_write(const std::string& op) {
    for (const char* w : {"fs.write", "fs.make", "fs.remove", "fs.truncate", "fs.refer"})
        if (op.find(w) != std::string::npos) return true;
    for (const char* w : {"write", "create", "remove", "rename", "chmod", "chown", "utimes"})
        if (op == w) return true;
    return false;
}

bool is_network(const Denial& d) {
    return !d.address.empty() || d.operation.starts_with("net.") || d.operation == "connect" ||
           d.operation == "socket" || is_serving(d.operation);
}

Fix refuse(std::string rule, std::string why) { return Fix{std::move(rule), {}, std::move(why)}; }

// The protected name (of a writable root, or of a directory above a nested
// root) that `path` (denied by a protection) falls under, if the path is
// below it as that name.
std::string protected_name_of(const CanonicalPolicy& p, const std::string& path, const Environment& env) {
    const auto dirs = protected_name_directories(p, env);
    auto holds_names = [&dirs](const std::string& dir) {
        return std::any_of(dirs.begin(), dirs.end(), [&](const ProtectedNameDirectory& d) { return d.path == dir; });
    };
    for (const auto& root : p.writable)
        for (const auto& prot : root.protected_paths)
            if (path_within(path, prot) && holds_names(parent_path(prot))) {
                const std::string name = base_name(prot);
                if (std::find(p.protected_names.begin(), p.protected_names.end(), name) != p.protected_names.end())
                    return name;
            }
    return {};
}

bool exists(const Environment& env, const std::string& path) { return env.realpath(path).has_value(); }

std::vector<std::string> components(std::string_view path) {
    std::vector<std::string> out;
    for_each_component(path, [&](std::string_view c) { out.emplace_back(c); });
    return out;
}

// The directory to make writable for a write to `path` (absolute, resolved):
// the top of a known tool directory under $HOME, else the directory holding
// the path; raised until it exists or its parent does (`sbx run` makes only
// the last component of a missing root).

std::string directory_for(const std::string& path, const Environment& env) {
    std::string dir = parent_path(path);
    if (env.home && path_below(path, *env.home)) {
        const auto parts = components(std::string_view(path).substr(env.home->size()));
        for (const auto& tool : tool_directories()) {
            const auto want = components(tool);
            std::size_t i = 0;
            while (i < want.size() && i < parts.size() && (want[i] == "*" || want[i] == parts[i])) ++i;
            // The whole top matched, or the path is the start of one (mkdir ~/.npm).
            if (i == want.size() || i == parts.size()) {
                dir = *env.home;
                for (std::size_t k = 0; k < i; ++k) dir = child_path(dir, parts[k]);
                break;
            }
        }
    }
    while (dir != "/" && !exists(env, dir) && !exists(env, parent_path(dir))) dir = parent_path(dir);
    return dir;
}

// Why -w dir would be too wide, or "".
std::string too_wide(const CanonicalPolicy& p, const std::string& dir, const Environment& env) {
    if (std::string why = too_open(dir, env, "writable"); !why.empty()) return why;
    for (const auto& root : p.writable)
        for (const auto& prot : root.protected_paths)
            if (path_within(prot, dir) && !path_within(root.path, dir))
                return fmt::format("that would make the protected {} writable", prot);
    if (check_access(p, Access::Write, dir, env).allowed) return fmt::format("{} is already writable", dir);
    return {};
}

Fix write_fix(const CanonicalPolicy& p, const std::string& target, const Environment& env) {
    const Verdict v = check_access(p, Access::Write, target, env);
    std::string rule = v.rule;
    if (v.allowed)
        return refuse(rule,
                      fmt::format("the policy allows writes to {}; the refusal was not the sandbox's", v.subject));
    const FsDecision d = decide_path(p, v.subject);
    if (d.entry && d.entry->protection) {
        const std::string name = protected_name_of(p, v.subject, env);
        if (d.entry->rule == kStateDirectoryRule)
            return refuse(rule, "sbx keeps its session approvals there, which no sandboxed command may write");
        if (name.empty()) return refuse(rule, "it is what a protected name leads to");
        if (name == ".git" && !p.git_write && git_write_opens(p, v.subject))
            return Fix{rule, PolicyDelta{.git_write = true}, ""};
        return Fix{rule, PolicyDelta{.unprotect = {name}}, ""};
    }
    if (d.access == FsAccess::Deny)
        return refuse(rule, "an entry of the policy denies it (drop that entry to allow it)");
    if (d.entry && d.entry->path != "/" &&
        std::any_of(p.writable.begin(), p.writable.end(),
                    [&](const WritableRoot& w) { return w.path != "/" && path_below(d.entry->path, w.path); }))
        return refuse(rule, "an entry of the policy keeps it read-only (drop that entry to allow writes)");
    // The view's /dev holds the host's device nodes read-only but /dev/null
    // (and /dev/shm, a private tmpfs): a terminal is the command's standard
    // streams, not /dev/tty (Codex's helper gives its command no controlling
    // terminal either).  -w /dev would hand over every device the view has.
    if (path_within(v.subject, "/dev")) return refuse(rule, "the sandbox's device nodes are read-only but /dev/null");
    if (p.mode == Mode::ReadOnly && !p.workspace.empty() && path_within(v.subject, p.workspace)) {
        PolicyDelta change{.mode = Mode::WorkspaceWrite};
        if (v.subject != p.workspace) {
            const std::string rel = v.subject.substr(p.workspace.size() == 1 ? 1 : p.workspace.size() + 1);
            const std::string first = rel.substr(0, rel.find('/'));
            if (std::find(p.protected_names.begin(), p.protected_names.end(), first) != p.protected_names.end())
                change.unprotect.push_back(first);
        }
        return Fix{rule, change, ""};
    }
    const std::string dir = directory_for(v.subject, env);
    if (auto why = too_wide(p, dir, env); !why.empty()) return refuse(rule, why);
    if (p.mode == Mode::ReadOnly)
        return Fix{rule, PolicyDelta{.mode = Mode::WorkspaceWrite, .writable_roots = {dir}}, ""};
    return Fix{rule, PolicyDelta{.writable_roots = {dir}}, ""};
}

Fix read_fix(const CanonicalPolicy& p, Access access, const std::string& target, const Environment& env) {
    const Verdict v = check_access(p, access, target, env);
    std::string rule = v.rule;
    if (v.allowed)
        return refuse(rule, fmt::format("the policy allows this on {}; the refusal was not the sandbox's", v.subject));
    const FsDecision d = decide_path(p, v.subject);
    if (d.access) return refuse(rule, "an entry of the policy denies it (drop that entry to allow it)");
    if (std::string why = too_open(v.subject, env, "readable"); !why.empty()) return refuse(rule, why);
    return Fix{rule, PolicyDelta{.read_only = {v.subject}}, ""};
}

// The host and the port of "host:port" ("[v6]:port"); port 0 when there is none.
std::pair<std::string, std::uint16_t> split_address(const std::string& address) {
    const auto colon = address.rfind(':');
    const bool bracketed = address.starts_with('[');
    const std::string host = bracketed ? address.substr(1, address.find(']') - 1) : address.substr(0, colon);
    if (colon == std::string::npos || (bracketed && colon < address.find(']'))) return {host, 0};
    unsigned port = 0;
    const std::string digits = address.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    const bool ok = ec == std::errc() && end == digits.data() + digits.size() && port <= 65535;
    return {host, ok ? static_cast<std::uint16_t>(port) : std::uint16_t{0}};
}

Fix network_fix(const CanonicalPolicy& p, const Denial& d) {
    if (is_serving(d.operation) && p.network == Network::Restricted)
        return Fix{"network restricted: no sockets except AF_UNIX socketpair", PolicyDelta{.network = Network::Limited},
                   ""};
    // An allowlist (--allow-domain): the proxy's decision by name; -n full
    // would be a usage error with it.
    if (p.by_name() && !d.address.empty()) {
        const auto [host, port] = split_address(d.address);
        const net::Decision by_name = net::decide_host({p.allow_domains, p.deny_domains}, host, port);
        if (by_name.allowed)  // the name passed: the proxy refused the address it resolved to
            return refuse(by_name.rule,
                          "the name is allowed, the address it resolved to is not (the proxy's note names it)");
        return fix_of(by_name);
    }
    // A lookup of a name the output gives: that name through sbx's proxy,
    // rather than the whole network.
    if (!d.host.empty() && p.network != Network::Full && !p.by_name())
        return Fix{check_access(p, Access::Connect, d.address, Environment{}).rule,
                   PolicyDelta{.allow_domains = {d.host}}, ""};
    Verdict v;
    try {
        v = check_access(p, Access::Connect, d.address, Environment{});
    } catch (const Error&) {  // audit's "saddr:src" of a bind, or no address
        v = check_access(p, Access::Connect, "0.0.0.0:0", Environment{});
    }
    std::string rule = v.rule;
    if (v.allowed) return refuse(rule, "the policy allows it; the refusal was not the sandbox's");
    // -n limited reaches only the sandbox's own loopback, never the host's.
    return Fix{rule, PolicyDelta{.network = Network::Full}, ""};
}

}  // namespace

std::string too_open(const std::string& path, const Environment& env, std::string_view made) {
    if (path == "/") return fmt::format("that would make / {}", made);
    if (env.home && path_within(*env.home, path)) return fmt::format("that would make $HOME {}", made);
    if (env.home)
        for (const char* secret : {".ssh", ".gnupg"})
            if (path_within(path, child_path(*env.home, secret)))
                return fmt::format("that would make ~/{} {}", secret, made);
    return {};
}

std::string Fix::flags_text() const { return sbx::flags_text(change); }

std::string Fix::text() const { return change.empty() ? "no flag suggested: " + refused : flags_text(); }

Fix fix_of(const net::Decision& d) {
    if (d.allow.empty()) return refuse(d.rule, d.no_fix);
    return Fix{d.rule, PolicyDelta{.allow_domains = {d.allow}}, ""};
}

bool is_serving(const std::string& op) { return op == "bind" || op == "listen" || op == "accept"; }

Access access_of(const Denial& d) {
    if (is_network(d)) return Access::Connect;
    if (d.operation == "exec" || d.operation.find("execute") != std::string::npos) return Access::Exec;
    return is_write(d.operation) ? Access::Write : Access::Read;
}

std::string allow_clause(const std::string& fix_text) {
    return fix_text.starts_with('-') ? "allow with " + fix_text : fix_text;
}

const std::vector<std::string>& tool_directories() {
    static const std::vector<std::string> dirs{
        ".npm",       ".yarn",    ".pnpm-store",    ".m2",       ".gradle", ".ivy2", ".cargo/registry", ".cargo/git",
        "go/pkg/mod", ".cache/*", ".local/share/*", ".config/*",
    };
    return dirs;
}

Fix fix_for(const CanonicalPolicy& p, const Denial& d, const Environment& env) {
    if (env.home && *env.home == "/") {  // HOME=/ (a daemon's): no home to keep out of the fix
        Environment without = env;
        without.home.reset();
        return fix_for(p, d, without);
    }
    if (is_network(d)) return network_fix(p, d);
    if (!d.target.empty())
        return refuse("scope: the command may not signal processes outside the sandbox",
                      "only -p danger-full-access (no sandbox) allows it");
    if (d.path.empty() ||
        d.operation.find("ioctl") != std::string::npos)  // audit's scope.*, fs.ioctl_dev; ptrace, mount
        return refuse(d.operation.starts_with("fs.") || d.operation.starts_with("scope.")
                          ? ""
                          : "seccomp: refused in every sandbox",
                      "only -p danger-full-access (no sandbox) allows it");
    const std::string path = join_path(env.cwd, d.path);
    const Access access = access_of(d);
    if (access == Access::Write) return write_fix(p, path, env);
    return read_fix(p, access, path, env);
}

void explain_denials(DenialAnalysis& a, const CanonicalPolicy& p, const Environment& env) {
    for (auto& d : a.denials) {
        // Its source knew exactly (the allowlist proxy; for its cap on
        // connections, that no flag helps: the address is the proxy's own,
        // which a decision by name would read as a host to allow).
        if (!d.fix) d.fix = fix_for(p, d, env);
    }
    // The guess is for files: none where the files' denials are exact
    // (recorded, or audited); beside recorded connects (denial/denial.h,
    // add_recorded_network), still made.
    const bool exact_files =
        std::any_of(a.denials.begin(), a.denials.end(), [](const Denial& d) { return !d.path.empty(); });
    if (!a.sandbox_denied || a.recorded || exact_files || a.path.empty() || !p.sandboxed_filesystem()) return;
    const std::string path = join_path(env.cwd, a.path);
    Denial g;
    g.path = path;
    if (a.reason == "permission denied" || a.reason == "operation not permitted") {
        if (check_access(p, Access::Read, path, env).allowed) {
            // The file's mode or owner refused it: not the sandbox.
            a.sandbox_denied = false;
            a.reason.clear();
            return;
        }
        g.operation = "read";
    } else {
        g.operation = "write";
    }
    Fix f = fix_for(p, g, env);
    // A relative name whose place in the workspace is writable: the command
    // had changed directory, and where to is not in the output.
    if (a.path.front() != '/' && g.operation == "write" && f.change.empty() &&
        check_access(p, Access::Write, path, env).allowed) {
        g.path = a.path;
        f = refuse("",
                   fmt::format("{} is writable: the command wrote elsewhere (--record-denials records where)", path));
    }
    g.fix = std::move(f);
    a.guess = std::move(g);
}

}  // namespace sbx
