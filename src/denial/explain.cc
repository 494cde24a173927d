#include "denial/explain.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "denial/fix.h"
#include "denial/read_groups.h"
#include "policy/check.h"
#include "util/error.h"
#include "util/path.h"
#include "util/shell_word.h"

namespace sbx {

namespace {

bool in_system_directory(const std::string& path) {
    const auto& dirs = system_directories();
    return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return path_within(path, d); });
}

// Why sbx learn does not suggest a change that --explain would, or "": -w
// of a system directory, and -n full (a learning run suggests names, and a
// connect whose name it does not know may well be one the command can do
// without: it went on without it).
std::string too_wide_to_learn(const PolicyDelta& change) {
    for (const auto& root : change.writable_roots)
        if (in_system_directory(root))
            return fmt::format(
                "-w {} would open a system directory (install into the workspace, or under $HOME, "
                "instead)",
                root);
    if (change.network == Network::Full)
        return "learn suggests the names a command connects to (--allow-domain), never -n full, and this "
               "connection's name is not known; give the name with --allow-domain and learn again";
    return "";
}

// Whether `word` is the option `short_name`/`long_name` in any of CLI11's
// spellings, and whether its value is the next word.
struct OptionMatch {
    bool matches = false;
    bool value_follows = false;
};

OptionMatch match_option(const std::string& word, std::string_view short_name, std::string_view long_name) {
    if (word == short_name || word == long_name) return {true, true};
    if (word.starts_with(std::string(long_name) + "=")) return {true, false};
    // -pworkspace-write (CLI11 takes a short option's value glued on).
    if (word.size() > 2 && word.starts_with(short_name) && !word.starts_with("--")) return {true, false};
    return {};
}

// The invocation without --explain and without the options `replaced` (as
// {short, long} pairs) with their values.
std::vector<std::string> without(const std::vector<std::string>& invocation,
                                 const std::vector<std::pair<std::string_view, std::string_view>>& replaced) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < invocation.size(); ++i) {
        const std::string& w = invocation[i];
        if (i > 0 && w == "--explain") continue;
        bool dropped = false;
        for (const auto& [s, l] : replaced)
            if (const OptionMatch m = match_option(w, s, l); i > 0 && m.matches) {
                if (m.value_follows) ++i;
                dropped = true;
                break;
            }
        if (!dropped) out.push_back(w);
    }
    return out;
}

// Policy p's verdict on denial d (a path the recorder or audit named, or a
// destination); nullopt where d names nothing check_access takes.
std::optional<Verdict> verdict(const CanonicalPolicy& p, const Denial& d, const Environment& env) {
    try {
        const Access access = access_of(d);
        // A server's bind, listen or accept with no address: on the sandbox's loopback.
        std::string address = d.address.empty() && is_serving(d.operation) ? "127.0.0.1:0" : d.address;
        // A lookup (of a name the output gave) is allowed where a connection
        // to that name is: of its port, only that it is probably https's.
        if (!d.host.empty()) address = d.host + ":443";
        return check_access(p, access, access == Access::Connect ? address : join_path(env.cwd, d.path), env);
    } catch (const Error&) {
        return std::nullopt;
    }
}

bool allows(const CanonicalPolicy& p, const Denial& d, const Environment& env) {
    const auto v = verdict(p, d, env);
    return v && v->allowed;
}

// Drops each writable root that the rest of `change` makes unnecessary for `wanted`.
PolicyDelta prune_writable(PolicyDelta change, const std::vector<const Denial*>& wanted, const Environment& env,
                           const ResolveWith& resolve_with) {
    constexpr std::size_t kMostTried = 32;  // resolutions, each a walk of the policy: bounded
    std::size_t tried = 0;
    auto& roots = change.writable_roots;
    for (std::size_t i = 0; i < roots.size() && tried < kMostTried;) {
        PolicyDelta fewer = change;
        fewer.writable_roots.erase(fewer.writable_roots.begin() + static_cast<std::ptrdiff_t>(i));
        ++tried;
        try {
            const CanonicalPolicy p = resolve_with(fewer);
            if (std::all_of(wanted.begin(), wanted.end(), [&](const Denial* d) { return allows(p, *d, env); })) {
                change = std::move(fewer);
                continue;
            }
        } catch (const Error&) {
        }
        ++i;
    }
    return change;
}

}  // namespace

const std::vector<std::string>& system_directories() {
    static const std::vector<std::string> dirs{"/etc",   "/usr",   "/bin",    "/sbin", "/lib",
                                               "/lib32", "/lib64", "/libx32", "/boot", "/var/lib"};
    return dirs;
}

Explanation explain_run(const ExplainRequest& request, const DenialAnalysis& analysis) {
    const auto& [invocation, command, policy, env, resolve_with, learning] = request;
    Explanation e;
    e.unseen = analysis.omitted;
    std::vector<PolicyDelta> fixes;
    std::vector<const Denial*> fixed;
    for (const auto& d : analysis.denials) {
        // Each denial's own (explain_denials', or its source's: the
        // allowlist proxy's refusal of more connections than its cap is of
        // its own address, no host to allow).
        const Fix f = d.fix ? *d.fix : fix_for(policy, d, env);
        if (const std::string why = learning ? too_wide_to_learn(f.change) : ""; !why.empty()) {
            e.not_suggested.push_back({denied_what(d), why});
        } else if (f.change.empty()) {
            e.not_suggested.push_back({denied_what(d), f.refused});
        } else {
            fixes.push_back(f.change);
            fixed.push_back(&d);
        }
    }
    if (fixes.empty()) return e;
    PolicyDelta change = prune_writable(merged(fixes), fixed, env, resolve_with);
    if (learning) change = group_reads(std::move(change), env);  // sbx learn --reads: a tool's files read
    e.added = to_flags(change);
    // What the line really allows, by the policy it makes.
    std::optional<CanonicalPolicy> after;
    std::string unresolved;
    try {
        after = resolve_with(change);
    } catch (const Error& err) {
        unresolved = err.what();
    }
    for (const Denial* d : fixed) {
        if (after && allows(*after, *d, env)) {
            ++e.allowed;
            continue;
        }
        e.not_suggested.push_back({denied_what(*d), after
                                                        ? fmt::format("the suggested flags do not allow it ({})",
                                                                      verdict(*after, *d, env).value_or(Verdict{}).rule)
                                                        : "the suggested flags do not make a policy: " + unresolved});
    }
    if (e.allowed == 0) {
        e.added.clear();
        return e;
    }
    std::vector<std::pair<std::string_view, std::string_view>> replaced;
    if (change.mode) replaced.emplace_back("-p", "--policy");
    // An allowlist replaces -n restricted too (apply, policy_delta.h).
    if (change.network || (!change.allow_domains.empty() && policy.network == Network::Restricted))
        replaced.emplace_back("-n", "--network");
    e.change = change;
    e.argv = without(invocation, replaced);
    e.argv.insert(e.argv.end(), e.added.begin(), e.added.end());
    e.argv.push_back("--");
    e.argv.insert(e.argv.end(), command.begin(), command.end());
    return e;
}

namespace {

// The denials no flag was suggested for, the first five: "sbx: LABEL: not
// suggested for WHAT: WHY" each.
std::string not_suggested_lines(const Explanation& e, std::string_view label) {
    constexpr std::size_t kShown = 5;
    std::string out;
    for (std::size_t i = 0; i < e.not_suggested.size() && i < kShown; ++i)
        out +=
            fmt::format("sbx: {}: not suggested for {}: {}\n", label, e.not_suggested[i].what, e.not_suggested[i].why);
    if (e.not_suggested.size() > kShown)
        out += fmt::format("sbx: {}: ... and {} more not suggested (--json lists them all)\n", label,
                           e.not_suggested.size() - kShown);
    return out;
}

}  // namespace

std::string explanation_text(const Explanation& e, std::size_t denials) {
    if (denials == 0 && e.unseen == 0)
        return "sbx: explain: no denial was recorded (the recorder sees writes and connects; see sbx(1))\n";
    std::string out;
    if (!e.argv.empty()) {
        const std::string of = e.allowed == denials ? fmt::format("the {} denied", denials)
                                                    : fmt::format("{} of the {} denied", e.allowed, denials);
        out += fmt::format("sbx: explain: {} operation{} would have been allowed by: {}\n", of, denials == 1 ? "" : "s",
                           shell_line(e.argv));
    } else {
        out += "sbx: explain: no flag is suggested for what was denied\n";
    }
    out += not_suggested_lines(e, "explain");
    if (e.unseen > 0)
        out += fmt::format("sbx: explain: {} more denied operation{} only counted, not looked at{}\n", e.unseen,
                           e.unseen == 1 ? " was" : "s were",
                           e.argv.empty() ? "" : "; run the line above to see what is left");
    return out;
}

std::string learning_text(const std::vector<std::string>& invocation, const std::vector<std::string>& command,
                          const Explanation& e, std::size_t denials) {
    // No flag to add: the invocation as it was.
    std::vector<std::string> line = e.argv;
    if (line.empty()) {
        line = invocation;
        line.push_back("--");
        line.insert(line.end(), command.begin(), command.end());
    }
    std::string out = fmt::format("sbx: learn: it needs: {}\n", shell_line(line));
    if (denials == 0 && e.unseen == 0) out += "sbx: learn: the policy refused nothing\n";
    else if (e.allowed < denials)
        out += fmt::format("sbx: learn: that line allows {} of the {} operations the policy refused\n", e.allowed,
                           denials);
    out += not_suggested_lines(e, "learn");
    if (e.unseen > 0)
        out += fmt::format(
            "sbx: learn: {} more refused operation{} only counted, not looked at; learn again with "
            "the line above\n",
            e.unseen, e.unseen == 1 ? " was" : "s were");
    return out;
}

nlohmann::json explanation_json(const Explanation& e) {
    nlohmann::json refused = nlohmann::json::array();
    for (const auto& r : e.not_suggested) refused.push_back({{"what", r.what}, {"why", r.why}});
    nlohmann::json j{{"argv", e.argv},       {"line", shell_line(e.argv)}, {"added", e.added},
                     {"allowed", e.allowed}, {"not_suggested", refused},   {"unseen", e.unseen}};
    if (e.argv.empty()) j["line"] = nullptr;
    return j;
}

}  // namespace sbx
