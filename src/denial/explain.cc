#include "denial/explain.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "denial/fix.h"
#include "policy/check.h"
#include "util/error.h"
#include "util/path.h"
#include "util/shell_word.h"

namespace sbx {

namespace {

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

// The flags of all fixes, merged: one -p and one -n at most (full over
// limited: a connect's and a server's), each -w,
// --unprotect, --read-only and --allow-domain once, a -w inside another left
// out.
std::vector<std::string> merge_flags(const std::vector<std::vector<std::string>>& fixes) {
    std::string mode, network;
    std::vector<std::string> writable, unprotect, read_only, domains;
    bool git_write = false;
    auto add_once = [](std::vector<std::string>& v, const std::string& x) {
        if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
    };
    for (const auto& words : fixes)
        for (std::size_t i = 0; i < words.size(); i += 2) {
            const std::string& flag = words[i];
            if (flag == "--git-write") {  // the one without a value
                git_write = true;
                --i;
                continue;
            }
            if (i + 1 == words.size()) break;
            const std::string& value = words[i + 1];
            if (flag == "-p") mode = value;
            else if (flag == "-n" && (network.empty() || value == "full")) network = value;  // the widest asked
            else if (flag == "-w") add_once(writable, value);
            else if (flag == "--unprotect") add_once(unprotect, value);
            else if (flag == "--read-only") add_once(read_only, value);
            else if (flag == "--allow-domain") add_once(domains, value);
        }
    std::vector<std::string> out;
    if (!mode.empty()) out.insert(out.end(), {"-p", mode});
    if (!network.empty()) out.insert(out.end(), {"-n", network});
    for (const auto& w : writable) {
        const bool inside_another = std::any_of(writable.begin(), writable.end(),
                                                [&](const std::string& other) { return path_below(w, other); });
        if (!inside_another) out.insert(out.end(), {"-w", w});
    }
    if (git_write) out.push_back("--git-write");
    for (const auto& n : unprotect) out.insert(out.end(), {"--unprotect", n});
    for (const auto& r : read_only) out.insert(out.end(), {"--read-only", r});
    for (const auto& d : domains) out.insert(out.end(), {"--allow-domain", d});
    return out;
}

// Policy p's verdict on denial d (a path the recorder or audit named, or a
// destination); nullopt where d names nothing check_access takes.
std::optional<Verdict> verdict(const CanonicalPolicy& p, const Denial& d, const Environment& env) {
    try {
        const Access access = access_of(d);
        // A server's bind, listen or accept with no address: on the sandbox's loopback.
        const std::string address = d.address.empty() && is_serving(d.operation) ? "127.0.0.1:0" : d.address;
        return check_access(p, access, access == Access::Connect ? address : join_path(env.cwd, d.path), env);
    } catch (const Error&) {
        return std::nullopt;
    }
}

bool allows(const CanonicalPolicy& p, const Denial& d, const Environment& env) {
    const auto v = verdict(p, d, env);
    return v && v->allowed;
}

// Drops each -w that the rest of `added` makes unnecessary for `wanted`.
std::vector<std::string> prune_writable(std::vector<std::string> added, const std::vector<const Denial*>& wanted,
                                        const Environment& env, const ResolveWith& resolve_with) {
    constexpr std::size_t kMostTried = 32;  // resolutions, each a walk of the policy: bounded
    std::size_t tried = 0;
    for (std::size_t i = 0; i + 1 < added.size() && tried < kMostTried;) {
        if (added[i] != "-w") {
            i += 2;
            continue;
        }
        std::vector<std::string> fewer = added;
        fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i), fewer.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        ++tried;
        try {
            const CanonicalPolicy p = resolve_with(fewer);
            if (std::all_of(wanted.begin(), wanted.end(), [&](const Denial* d) { return allows(p, *d, env); })) {
                added = std::move(fewer);
                continue;
            }
        } catch (const Error&) {
        }
        i += 2;
    }
    return added;
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_word(w);
    return out;
}

}  // namespace

Explanation explain_run(const std::vector<std::string>& invocation, const std::vector<std::string>& command,
                        const CanonicalPolicy& policy, const DenialAnalysis& analysis, const Environment& env,
                        const ResolveWith& resolve_with) {
    Explanation e;
    e.unseen = analysis.omitted;
    std::vector<std::vector<std::string>> fixes;
    std::vector<const Denial*> fixed;
    for (const auto& d : analysis.denials) {
        const Fix f = fix_for(policy, d, env);
        if (f.flags.empty()) {
            e.not_suggested.push_back({denied_what(d), f.refused});
        } else {
            fixes.push_back(f.flags);
            fixed.push_back(&d);
        }
    }
    if (fixes.empty()) return e;
    e.added = prune_writable(merge_flags(fixes), fixed, env, resolve_with);
    // What the line really allows, by the policy it makes.
    std::optional<CanonicalPolicy> after;
    std::string unresolved;
    try {
        after = resolve_with(e.added);
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
    for (std::size_t i = 0; i < e.added.size(); i += 2) {
        if (e.added[i] == "-p") replaced.emplace_back("-p", "--policy");
        if (e.added[i] == "-n") replaced.emplace_back("-n", "--network");
    }
    e.argv = without(invocation, replaced);
    e.argv.insert(e.argv.end(), e.added.begin(), e.added.end());
    e.argv.push_back("--");
    e.argv.insert(e.argv.end(), command.begin(), command.end());
    return e;
}

std::string explanation_text(const Explanation& e, std::size_t denials) {
    constexpr std::size_t kShown = 5;
    if (denials == 0 && e.unseen == 0)
        return "sbx: explain: no denial was recorded (the recorder sees writes and connects; see sbx(1))\n";
    std::string out;
    if (!e.argv.empty()) {
        const std::string of = e.allowed == denials ? fmt::format("the {} denied", denials)
                                                    : fmt::format("{} of the {} denied", e.allowed, denials);
        out += fmt::format("sbx: explain: {} operation{} would have been allowed by: {}\n", of, denials == 1 ? "" : "s",
                           joined(e.argv));
    } else {
        out += "sbx: explain: no flag is suggested for what was denied\n";
    }
    for (std::size_t i = 0; i < e.not_suggested.size() && i < kShown; ++i)
        out += fmt::format("sbx: explain: not suggested for {}: {}\n", e.not_suggested[i].what, e.not_suggested[i].why);
    if (e.not_suggested.size() > kShown)
        out += fmt::format("sbx: explain: ... and {} more not suggested (--json lists them all)\n",
                           e.not_suggested.size() - kShown);
    if (e.unseen > 0)
        out += fmt::format("sbx: explain: {} more denied operation{} only counted, not looked at{}\n", e.unseen,
                           e.unseen == 1 ? " was" : "s were",
                           e.argv.empty() ? "" : "; run the line above to see what is left");
    return out;
}

nlohmann::json explanation_json(const Explanation& e) {
    nlohmann::json refused = nlohmann::json::array();
    for (const auto& r : e.not_suggested) refused.push_back({{"what", r.what}, {"why", r.why}});
    nlohmann::json j{{"argv", e.argv},       {"line", joined(e.argv)},   {"added", e.added},
                     {"allowed", e.allowed}, {"not_suggested", refused}, {"unseen", e.unseen}};
    if (e.argv.empty()) j["line"] = nullptr;
    return j;
}

}  // namespace sbx
