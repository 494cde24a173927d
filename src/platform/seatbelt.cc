// The Seatbelt profile for a canonical policy; see seatbelt.h.
#include "platform/seatbelt.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "seatbelt_base.h"  // generated from macos/*.sbpl by meson

namespace sbx {
namespace {

// One writable root as the profile sees it.
struct SeatbeltRoot {
    std::string path;
    std::vector<std::string> protected_paths;  // its own, each -D..._PROTECTED_j
    // What its write rule excludes:
    std::vector<std::pair<std::size_t, std::size_t>> excluded;  // (root, j) of every protected path inside it
    bool fixed = false;                  // the root directory itself (it leads to a protected path)
    std::vector<std::string> ancestors;  // directories inside it that lead to one, each -D..._ANCESTOR_j
};

// True when `path` is `root` or lies below it (component-wise: /a/bc is not
// below /a/b).
bool is_within(std::string_view path, std::string_view root) {
    if (root == "/") return !path.empty() && path.front() == '/';
    if (!path.starts_with(root)) return false;
    return path.size() == root.size() || path[root.size()] == '/';
}

// On macOS /tmp, /var and /etc are symlinks into /private, and Seatbelt
// matches the resolved path.  A policy resolved elsewhere (--target-os macos
// on Linux) holds the short form, one resolved on macOS the /private form;
// the profile carries both so that either way the rule matches.
std::optional<std::string> private_alias(const std::string& path) {
    static constexpr std::array<std::string_view, 3> aliased{"/tmp", "/var", "/etc"};
    constexpr std::string_view private_dir = "/private";
    for (std::string_view top : aliased) {
        if (is_within(path, top)) return std::string(private_dir) + path;
        const std::string long_form = std::string(private_dir) + std::string(top);
        if (is_within(path, long_form)) return path.substr(private_dir.size());
    }
    return std::nullopt;
}

void check_path(const std::string& path, std::string_view what) {
    if (path.empty() || path.front() != '/')
        throw Error(fmt::format("seatbelt: {} '{}' is not an absolute path", what, path));
    if (path.find('\0') != std::string::npos)
        throw Error(fmt::format("seatbelt: {} contains a NUL byte", what));
}

void check_sandboxed(const CanonicalPolicy& policy) {
    if (policy.mode == Mode::DangerFullAccess)
        throw Error("seatbelt: danger-full-access runs without a sandbox, so it has no Seatbelt profile");
    if (policy.readable != std::vector<std::string>{"/"})
        throw Error("seatbelt: only a policy that reads everywhere (readable = [\"/\"]) has a profile");
}

void add_root(std::vector<SeatbeltRoot>& roots, const std::string& path,
              const std::vector<std::string>& protected_paths) {
    auto it = std::find_if(roots.begin(), roots.end(),
                           [&](const SeatbeltRoot& r) { return r.path == path; });
    if (it == roots.end()) {
        roots.emplace_back();
        roots.back().path = path;
        it = std::prev(roots.end());
    }
    for (const std::string& p : protected_paths)
        if (std::find(it->protected_paths.begin(), it->protected_paths.end(), p) ==
            it->protected_paths.end())
            it->protected_paths.push_back(p);
}

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// What the write rule of `root` must leave out.  Every protected path inside
// it (its own, and those of roots nested in it) as a subtree.  And, as single
// names, the directories through which such a path is reached, the root
// itself included: renaming or removing one of them would move the protected
// path away from the name the rule holds (mv project /tmp/p, then write
// /tmp/p/.git/hooks/x).  Writing inside those directories stays allowed.
void plan_exclusions(SeatbeltRoot& root, const std::vector<SeatbeltRoot>& roots) {
    for (std::size_t k = 0; k < roots.size(); ++k)
        for (std::size_t j = 0; j < roots[k].protected_paths.size(); ++j)
            if (is_within(roots[k].protected_paths[j], root.path)) root.excluded.emplace_back(k, j);
    auto excluded_subtree = [&](const std::string& dir) {
        return std::any_of(root.excluded.begin(), root.excluded.end(), [&](const auto& kj) {
            return is_within(dir, roots[kj.first].protected_paths[kj.second]);
        });
    };
    for (const auto& [k, j] : root.excluded) {
        const std::string& target = roots[k].protected_paths[j];
        std::vector<std::string> chain;  // the directories from the root down to the target's parent
        for (std::string dir = target; dir != root.path && dir != "/";) {
            dir = parent_of(dir);
            chain.push_back(dir);
        }
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            if (*it == root.path) {
                root.fixed = true;
            } else if (!excluded_subtree(*it) &&
                       std::find(root.ancestors.begin(), root.ancestors.end(), *it) == root.ancestors.end()) {
                root.ancestors.push_back(*it);
            }
        }
    }
}

// The parameterised roots, in policy order, each followed by its /private
// alias.  /dev/null is not among them: the base policy allows writing to it
// (a literal rule on the device, not a subtree).  Protected paths that lie in
// no root are dropped: nothing could write there anyway.
std::vector<SeatbeltRoot> seatbelt_roots(const CanonicalPolicy& policy) {
    check_sandboxed(policy);
    std::vector<SeatbeltRoot> roots;
    if (policy.mode == Mode::ExternalSandbox) return roots;  // the filesystem is left alone
    for (const WritableRoot& w : policy.writable) {
        check_path(w.path, "writable root");
        for (const std::string& p : w.protected_paths) check_path(p, "protected path");
        if (w.path == "/dev/null") continue;
        add_root(roots, w.path, w.protected_paths);
        if (auto alias = private_alias(w.path)) {
            std::vector<std::string> aliased;
            for (const std::string& p : w.protected_paths)
                aliased.push_back(private_alias(p).value_or(p));
            add_root(roots, *alias, aliased);
        }
    }
    for (SeatbeltRoot& root : roots) {
        std::erase_if(root.protected_paths, [&](const std::string& p) {
            return std::none_of(roots.begin(), roots.end(),
                                [&](const SeatbeltRoot& r) { return is_within(p, r.path); });
        });
    }
    for (SeatbeltRoot& root : roots) plan_exclusions(root, roots);
    return roots;
}

std::string root_param(std::size_t i) { return fmt::format("WRITABLE_ROOT_{}", i); }
std::string protected_param(std::size_t i, std::size_t j) {
    return fmt::format("WRITABLE_ROOT_{}_PROTECTED_{}", i, j);
}
std::string ancestor_param(std::size_t i, std::size_t j) {
    return fmt::format("WRITABLE_ROOT_{}_ANCESTOR_{}", i, j);
}

std::string_view network_rules(Network network) {
    switch (network) {
        case Network::Restricted: return seatbelt_files::network_restricted;
        case Network::Limited: return seatbelt_files::network_limited;
        case Network::Full: return seatbelt_files::network_full;
    }
    throw Error("seatbelt: unknown network level");
}

void append_file_rules(std::string& out, const CanonicalPolicy& policy,
                       const std::vector<SeatbeltRoot>& roots) {
    if (policy.mode == Mode::ExternalSandbox) {
        out +=
            "; Filesystem: external-sandbox leaves the filesystem to the sandbox around sbx;\n"
            "; every file operation is allowed here.\n"
            "(allow file*)\n\n";
        return;
    }
    out +=
        "; Reads: the whole filesystem is readable, and executable (mapping code\n"
        "; from any file: dylibs, python and node native modules).\n"
        "(allow file-read* file-map-executable)\n\n";
    if (roots.empty()) {
        out += "; Writes: none, besides the devices of the base policy (/dev/null).\n\n";
        return;
    }
    out +=
        "; Writes: below each writable root, except below its protected paths (and any\n"
        "; protected path of another root inside it).  The paths come as -D parameters,\n"
        "; never spliced into this text.  The rules match path names, not files, so a\n"
        "; protected name that does not exist yet (a first .git/hooks/x, a first .sbx/)\n"
        "; cannot be created either; nor does a symlink get round them, as Seatbelt\n"
        "; checks the resolved path.  The root and the directories leading to a\n"
        "; protected path are themselves left out (their contents are not), so that\n"
        "; no rename moves a protected path away from its name.  Hard links\n"
        "; (file-link) stay denied everywhere: a second name for a protected or\n"
        "; read-only file would make it writable under that name.\n";
    for (std::size_t i = 0; i < roots.size(); ++i) {
        out += fmt::format(";   {} = {}\n", root_param(i), sbpl_quote(roots[i].path));
        for (std::size_t j = 0; j < roots[i].protected_paths.size(); ++j)
            out += fmt::format(";   {} = {}\n", protected_param(i, j),
                               sbpl_quote(roots[i].protected_paths[j]));
        for (std::size_t j = 0; j < roots[i].ancestors.size(); ++j)
            out += fmt::format(";   {} = {}\n", ancestor_param(i, j), sbpl_quote(roots[i].ancestors[j]));
    }
    out += "(allow file-write*";
    for (std::size_t i = 0; i < roots.size(); ++i) {
        const SeatbeltRoot& root = roots[i];
        const std::string param = sbpl_quote(root_param(i));
        std::vector<std::string> exclusions;
        if (root.fixed) exclusions.push_back(fmt::format("(literal (param {}))", param));
        for (std::size_t j = 0; j < root.ancestors.size(); ++j)
            exclusions.push_back(fmt::format("(literal (param {}))", sbpl_quote(ancestor_param(i, j))));
        for (const auto& [k, j] : root.excluded)
            exclusions.push_back(fmt::format("(subpath (param {}))", sbpl_quote(protected_param(k, j))));
        const std::string subpath = fmt::format("(subpath (param {}))", param);
        if (exclusions.empty()) {
            out += "\n  " + subpath;
            continue;
        }
        out += "\n  (require-all\n    " + subpath;
        for (const std::string& filter : exclusions) out += "\n    (require-not " + filter + ")";
        out += ")";
    }
    out += ")\n\n";
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

std::string seatbelt_profile(const CanonicalPolicy& policy) {
    const std::vector<SeatbeltRoot> roots = seatbelt_roots(policy);
    std::string out(seatbelt_files::base);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += fmt::format(
        "\n; ---- Generated by sbx from the canonical policy: mode {}, network {} ----\n\n",
        to_string(policy.mode), to_string(policy.network));
    append_file_rules(out, policy, roots);
    out += network_rules(policy.network);
    if (!out.empty() && out.back() != '\n') out += '\n';
    return out;
}

std::vector<std::string> seatbelt_parameters(const CanonicalPolicy& policy) {
    std::vector<std::string> params;
    const std::vector<SeatbeltRoot> roots = seatbelt_roots(policy);
    for (std::size_t i = 0; i < roots.size(); ++i) {
        params.push_back(fmt::format("-D{}={}", root_param(i), roots[i].path));
        for (std::size_t j = 0; j < roots[i].protected_paths.size(); ++j)
            params.push_back(fmt::format("-D{}={}", protected_param(i, j), roots[i].protected_paths[j]));
        for (std::size_t j = 0; j < roots[i].ancestors.size(); ++j)
            params.push_back(fmt::format("-D{}={}", ancestor_param(i, j), roots[i].ancestors[j]));
    }
    return params;
}

std::vector<std::string> seatbelt_argv(const CanonicalPolicy& policy, const std::vector<std::string>& command,
                                       const std::string& sandbox_exec) {
    if (sandbox_exec.empty() || sandbox_exec.front() != '/')
        throw Error(fmt::format("seatbelt: sandbox-exec path '{}' is not absolute; sbx never looks it up in PATH",
                                sandbox_exec));
    if (command.empty()) throw Error("seatbelt: no command to run");
    std::vector<std::string> argv{sandbox_exec, "-p", seatbelt_profile(policy)};
    for (std::string& p : seatbelt_parameters(policy)) argv.push_back(std::move(p));
    argv.emplace_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

}  // namespace sbx
