#include "denial/policy_delta.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "util/path.h"
#include "util/shell_word.h"

namespace sbx {

namespace {

void add_once(std::vector<std::string>& to, const std::vector<std::string>& from) {
    for (const auto& x : from)
        if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
}

void add_flags(std::vector<std::string>& out, const char* flag, const std::vector<std::string>& values) {
    for (const auto& v : values) out.insert(out.end(), {flag, v});
}

}  // namespace

bool PolicyDelta::empty() const { return *this == PolicyDelta{}; }

PolicyDelta merged(const std::vector<PolicyDelta>& deltas) {
    PolicyDelta out;
    for (const auto& d : deltas) {
        if (d.mode) out.mode = d.mode;
        if (d.network && (!out.network || *d.network == Network::Full)) out.network = d.network;  // the widest asked
        add_once(out.writable_roots, d.writable_roots);
        add_once(out.unprotect, d.unprotect);
        out.git_write = out.git_write || d.git_write;
        add_once(out.read_only, d.read_only);
        add_once(out.allow_domains, d.allow_domains);
    }
    // --unprotect .git opens all of .git: --git-write beside it is refused,
    // and says nothing more.
    if (std::find(out.unprotect.begin(), out.unprotect.end(), ".git") != out.unprotect.end()) out.git_write = false;
    const std::vector<std::string> roots = out.writable_roots;
    std::erase_if(out.writable_roots, [&roots](const std::string& w) {
        return std::any_of(roots.begin(), roots.end(), [&](const std::string& other) { return path_below(w, other); });
    });
    return out;
}

std::vector<std::string> to_flags(const PolicyDelta& d) {
    std::vector<std::string> out;
    if (d.mode) out.insert(out.end(), {"-p", std::string(to_string(*d.mode))});
    if (d.network) out.insert(out.end(), {"-n", std::string(to_string(*d.network))});
    add_flags(out, "-w", d.writable_roots);
    add_flags(out, "--unprotect", d.unprotect);
    if (d.git_write) out.emplace_back("--git-write");
    add_flags(out, "--read-only", d.read_only);
    add_flags(out, "--allow-domain", d.allow_domains);
    return out;
}

std::string flags_text(const PolicyDelta& d) { return shell_line(to_flags(d)); }

nlohmann::json to_json(const PolicyDelta& d) {
    nlohmann::json j = nlohmann::json::object();
    auto list = [&j](const char* key, const std::vector<std::string>& values) {
        if (!values.empty()) j[key] = values;
    };
    if (d.mode) j["mode"] = to_string(*d.mode);
    if (d.network) j["network"] = to_string(*d.network);
    list("writable_roots", d.writable_roots);
    list("unprotect", d.unprotect);
    if (d.git_write) j["git_write"] = true;
    list("read_only", d.read_only);
    list("allow_domains", d.allow_domains);
    return j;
}

void apply(const PolicyDelta& d, PolicyInput& in) {
    if (d.mode) in.mode = d.mode;
    if (d.network) in.network = d.network;
    // An allowlist is -n limited's network: a -n restricted given beside it
    // would be refused (policy.cc resolve_domains), so it goes.
    else if (!d.allow_domains.empty() && in.network == Network::Restricted) in.network.reset();
    for (const auto& w : d.writable_roots) in.writable_roots.push_back({w, "--writable-root"});
    for (const auto& n : d.unprotect) in.unprotect.push_back(n);
    if (d.git_write) in.git_write = true;
    for (const auto& r : d.read_only)
        in.extra_entries.push_back({{FsTarget::Kind::Path, r}, FsAccess::Read, "--read-only"});
    for (const auto& p : d.allow_domains) in.allow_domains.push_back({p, "--allow-domain"});
}

}  // namespace sbx
