// User configuration, project policies and their trust (config.h).
#include "policy/config.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/json_error.h"
#include "util/sha256.h"

namespace sbx {

using nlohmann::json;

namespace {

bool has_dotdot(std::string_view path) {
    bool found = false;
    for_each_component(path, [&](std::string_view part) {
        found = found || part == "..";
        return !found;
    });
    return found;
}

// The project policy's path `value` (at `where`), absolute: relative ones
// from the workspace, staying in it.
std::string project_path(const std::string& value, const std::string& where, const std::string& workspace,
                         const Environment& env, bool glob) {
    if (value.empty()) throw Error(fmt::format("{}: empty path", where));
    if (is_home_relative(value)) return value;  // resolve() expands it
    if (value.front() == '/') {
        const std::string abs = join_path("/", value);
        if (path_within(abs, workspace)) {
            const std::string rel = abs == workspace ? "." : abs.substr(workspace == "/" ? 1 : workspace.size() + 1);
            throw Error(fmt::format(
                "{}: '{}' is inside the workspace; a project policy names it relative to the workspace ('{}')", where,
                value, rel));
        }
        return abs;
    }
    if (has_dotdot(value))
        throw Error(
            fmt::format("{}: '{}' holds '..'; a project policy's relative paths stay in the workspace", where, value));
    const std::string abs = join_path(workspace, value);
    if (glob) return abs;
    // The part that exists, symlinks resolved, must stay in the workspace.
    std::string existing = abs;
    std::optional<std::string> real;
    while (!(real = env.realpath(existing)) && existing != workspace) existing = parent_path(existing);
    if (real && !path_within(*real, workspace))
        throw Error(fmt::format("{}: '{}' leads out of the workspace (to {}) through a symlink", where, value, *real));
    return abs;
}

int network_rank(const CanonicalPolicy& p) {
    switch (p.network) {
        case Network::Restricted: return 0;
        case Network::Limited: return p.by_name() ? 2 : 1;
        case Network::Full: return 3;
    }
    return 3;
}

int access_rank(const std::optional<FsAccess>& a) {
    if (!a || *a == FsAccess::Deny) return 0;
    return *a == FsAccess::Read ? 1 : 2;
}

bool subset(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return std::all_of(a.begin(), a.end(),
                       [&](const std::string& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

}  // namespace

std::string sbx_config_directory(const char* xdg_config_home, const char* home) {
    if (xdg_config_home != nullptr && xdg_config_home[0] == '/') return join_path(xdg_config_home, "sbx");
    if (home != nullptr && home[0] == '/') return join_path(home, ".config/sbx");
    return "";
}

PolicyInput project_input_from_text(std::string_view text, const std::string& source, const std::string& workspace,
                                    const Environment& env) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        throw Error(fmt::format("{}: not valid JSON: {}", source, json_error_message(e)));
    }
    if (!doc.is_object()) throw Error(fmt::format("{}: expected a JSON object", source));
    for (const char* key : {"type", "workspace", "readable", "writable", "denied"})
        if (doc.contains(key))
            throw Error(
                fmt::format("{}: key '{}': not in a project policy (it holds the canonical policy's keys with paths "
                            "relative to the workspace, as 'sbx policy --relative' prints them)",
                            source, key));
    if (auto it = doc.find("entries"); it != doc.end() && it->is_array()) {
        for (std::size_t i = 0; i < it->size(); ++i) {
            json& e = (*it)[i];
            if (!e.is_object() || e.contains("special")) continue;  // input_from_json checks them
            for (const char* key : {"path", "glob"}) {
                auto v = e.find(key);
                if (v == e.end() || !v->is_string()) continue;
                const std::string where = fmt::format("{}: key 'entries' [{}]: {}", source, i, key);
                *v = project_path(v->get<std::string>(), where, workspace, env, std::string_view(key) == "glob");
            }
        }
    }
    if (auto it = doc.find("writable_roots"); it != doc.end() && it->is_array())
        for (auto& root : *it)
            if (root.is_string())
                root = project_path(root.get<std::string>(), source + ": key 'writable_roots'", workspace, env, false);
    return input_from_json(doc, source);
}

std::vector<std::string> widenings(const CanonicalPolicy& base, const CanonicalPolicy& combined) {
    std::vector<std::string> out;
    const bool base_fs = base.sandboxed_filesystem();
    const bool combined_fs = combined.sandboxed_filesystem();
    if (!combined_fs && (base_fs || (combined.mode == Mode::DangerFullAccess && base.mode != combined.mode)))
        out.push_back(fmt::format("mode {} (without it: {})", to_string(combined.mode), to_string(base.mode)));
    if (base_fs && combined_fs) {
        std::vector<std::string> points{"/"};
        for (const auto* p : {&base, &combined})
            for (const auto& e : p->resolved) points.push_back(e.path);
        std::sort(points.begin(), points.end());
        points.erase(std::unique(points.begin(), points.end()), points.end());
        for (const auto& path : points) {
            const FsDecision b = decide_path(base, path);
            const FsDecision c = decide_path(combined, path);
            if (access_rank(c.access) <= access_rank(b.access)) continue;
            out.push_back(fmt::format("makes {} {} (without it: {}; {})", path,
                                      c.access == FsAccess::Write ? "writable" : "readable",
                                      access_rank(b.access) == 0 ? "not accessible" : "read-only",
                                      c.entry ? c.entry->rule : std::string("no entry")));
        }
    }
    if (network_rank(combined) > network_rank(base))
        out.push_back(fmt::format("network {}{} (without it: {}{})", to_string(combined.network),
                                  combined.by_name() ? " with allowed domains" : "", to_string(base.network),
                                  base.by_name() ? " with allowed domains" : ""));
    else if (combined.by_name() && base.by_name() &&
             (!subset(combined.allow_domains, base.allow_domains) || !subset(base.deny_domains, combined.deny_domains)))
        out.push_back("allow_domains or deny_domains allow a domain that is not allowed without it");
    const std::array<std::pair<const char*, std::optional<std::uint64_t> Limits::*>, 5> limits{{
        {"memory", &Limits::memory},
        {"cpu_seconds", &Limits::cpu_seconds},
        {"processes", &Limits::processes},
        {"file_size", &Limits::file_size},
        {"open_files", &Limits::open_files},
    }};
    for (const auto& [name, field] : limits) {
        const auto& b = base.limits.*field;
        const auto& c = combined.limits.*field;
        if (b && (!c || *c > *b))
            out.push_back(fmt::format("limit {} {} (without it: {})", name, c ? std::to_string(*c) : "none", *b));
    }
    if (combined.allow_unprotected && !base.allow_unprotected) out.push_back("allow_unprotected true");
    if (combined.git_write && !base.git_write) out.push_back("git_write true");
    // A masked secret has sbx send the real value to its hosts, even where
    // the command would not have it (--clear-env): a widening unless the
    // policy without this layer masks it already for those hosts.
    for (const auto& s : combined.secrets) {
        if (!s.masked()) continue;
        const auto b = std::find_if(base.secrets.begin(), base.secrets.end(),
                                    [&](const Secret& o) { return o.kind == s.kind && o.name == s.name; });
        if (b == base.secrets.end() || !b->masked() || !subset(s.hosts, b->hosts))
            out.push_back(fmt::format("secret {} {} sent to {}", to_string(s.kind), s.name, fmt::join(s.hosts, ", ")));
    }
    return out;
}

json relative_json(const CanonicalPolicy& p) {
    json out = to_json(p);
    for (const char* key : {"workspace", "readable", "writable", "denied"}) out.erase(key);
    for (auto& e : out["entries"]) {
        if (e.contains("special")) continue;
        for (const char* key : {"path", "glob"}) {
            auto v = e.find(key);
            if (v == e.end()) continue;
            const std::string abs = v->get<std::string>();
            if (!path_within(abs, p.workspace)) continue;
            *v = abs == p.workspace ? "." : abs.substr(p.workspace == "/" ? 1 : p.workspace.size() + 1);
        }
    }
    return out;
}

std::string trust_record_name(const std::string& policy_path) { return sha256_hex(policy_path); }

std::string trust_record_text(const TrustRecord& r) { return fmt::format("{}  {}\n", r.hash, r.path); }

std::optional<TrustRecord> parse_trust_record(std::string_view text) {
    if (text.size() < 68 || text.back() != '\n' || text.substr(64, 2) != "  ") return std::nullopt;
    TrustRecord r{std::string(text.substr(0, 64)), std::string(text.substr(66, text.size() - 67))};
    if (!std::all_of(r.hash.begin(), r.hash.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))
        return std::nullopt;
    if (r.path.empty() || r.path.front() != '/' || r.path.find('\n') != std::string::npos) return std::nullopt;
    return r;
}

Trust trust_of(const std::optional<TrustRecord>& record, const std::string& policy_path, const std::string& hash) {
    if (!record || record->path != policy_path) return Trust::Untrusted;
    return record->hash == hash ? Trust::Trusted : Trust::Changed;
}

std::vector<std::pair<std::string, std::string>> setting_origins(const std::vector<PolicyLayer>& layers) {
    std::vector<std::pair<std::string, std::string>> out;
    // A setting one value decides: the last layer that sets it.
    auto scalar = [&](const char* setting, auto&& set) {
        std::string from = "built-in default";
        for (const auto& l : layers)
            if (set(l.input)) from = l.name;
        out.emplace_back(setting, from);
    };
    // A list: every layer that adds to it, in order; nothing when none does.
    auto listed = [&](const char* setting, auto&& set) {
        std::vector<std::string> from;
        for (const auto& l : layers)
            if (set(l.input)) from.push_back(l.name);
        if (!from.empty()) out.emplace_back(setting, fmt::format("{}", fmt::join(from, ", ")));
    };
    scalar("mode", [](const PolicyInput& i) { return i.mode.has_value() || i.entries.has_value(); });
    scalar("network", [](const PolicyInput& i) { return i.network.has_value(); });
    scalar("workspace", [](const PolicyInput& i) { return i.workspace.has_value(); });
    scalar("entries", [](const PolicyInput& i) { return i.entries.has_value(); });
    listed("extra entries", [](const PolicyInput& i) { return !i.extra_entries.empty(); });
    listed("writable roots", [](const PolicyInput& i) { return !i.writable_roots.empty(); });
    scalar("exclude_slash_tmp", [](const PolicyInput& i) { return i.exclude_slash_tmp.has_value(); });
    scalar("exclude_tmpdir", [](const PolicyInput& i) { return i.exclude_tmpdir_env_var.has_value(); });
    scalar("protected names", [](const PolicyInput& i) { return i.protected_names.has_value(); });
    listed("protect", [](const PolicyInput& i) { return !i.protect.empty(); });
    listed("unprotect", [](const PolicyInput& i) { return !i.unprotect.empty(); });
    scalar("allow_unprotected", [](const PolicyInput& i) { return i.allow_unprotected.has_value(); });
    scalar("git_write", [](const PolicyInput& i) { return i.git_write.has_value(); });
    listed("allow domains", [](const PolicyInput& i) { return !i.allow_domains.empty(); });
    listed("deny domains", [](const PolicyInput& i) { return !i.deny_domains.empty(); });
    listed("secrets", [](const PolicyInput& i) { return !i.secrets.empty(); });
    listed("tls passthrough", [](const PolicyInput& i) { return !i.tls_passthrough.empty(); });
    scalar("limit memory", [](const PolicyInput& i) { return i.limits.memory.has_value(); });
    scalar("limit cpu_seconds", [](const PolicyInput& i) { return i.limits.cpu_seconds.has_value(); });
    scalar("limit processes", [](const PolicyInput& i) { return i.limits.processes.has_value(); });
    scalar("limit file_size", [](const PolicyInput& i) { return i.limits.file_size.has_value(); });
    scalar("limit open_files", [](const PolicyInput& i) { return i.limits.open_files.has_value(); });
    return out;
}

}  // namespace sbx
