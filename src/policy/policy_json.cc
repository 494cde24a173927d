// The canonical policy's JSON form, and policy documents read as input
// (sbx's canonical keys, or Codex's SandboxPolicy).
#include <algorithm>
#include <array>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "policy/policy.h"
#include "util/json_error.h"

namespace sbx {

using nlohmann::json;

namespace {

using Keys = std::span<const std::string_view>;

constexpr std::array<std::string_view, 16> kInputKeys{"mode",
                                                      "network",
                                                      "workspace",
                                                      "writable_roots",
                                                      "exclude_slash_tmp",
                                                      "exclude_tmpdir_env_var",
                                                      "protected_names",
                                                      "allow_unprotected",
                                                      "git_write",
                                                      "limits",
                                                      "entries",
                                                      "glob_scan_max_depth",
                                                      "allow_domains",
                                                      "deny_domains",
                                                      "secrets",
                                                      "tls_passthrough"};
constexpr std::array<std::string_view, 3> kDerivedKeys{"readable", "writable", "denied"};
constexpr std::array<std::string_view, 4> kEntryKeys{"path", "special", "glob", "access"};
constexpr std::array<std::string_view, 4> kSpecialEntryKeys{"special", "subpath", "path", "access"};
constexpr std::array<std::pair<std::string_view, FsTarget::Kind>, 6> kSpecials{{
    {"root", FsTarget::Kind::Root},
    {"minimal", FsTarget::Kind::Minimal},
    {"tmpdir", FsTarget::Kind::TmpDir},
    {"slash_tmp", FsTarget::Kind::SlashTmp},
    {"project_roots", FsTarget::Kind::ProjectRoots},
    {"unknown", FsTarget::Kind::Unknown},
}};
constexpr std::array<std::string_view, 5> kSecretKeys{"env", "file", "mode", "hosts", "extract"};
constexpr std::array<std::string_view, 5> kLimitKeys{"memory", "cpu_seconds", "processes", "file_size", "open_files"};

constexpr std::array<std::string_view, 1> kCodexPlainKeys{"type"};
constexpr std::array<std::string_view, 3> kCodexReadOnlyKeys{"type", "access", "network_access"};
constexpr std::array<std::string_view, 3> kCodexReadAccessKeys{"type", "include_platform_defaults", "readable_roots"};
constexpr std::array<std::string_view, 2> kCodexExternalKeys{"type", "network_access"};
constexpr std::array<std::string_view, 6> kCodexWorkspaceKeys{
    "type", "writable_roots", "network_access", "exclude_tmpdir_env_var", "exclude_slash_tmp", "read_only_access"};
constexpr std::array<std::string_view, 2> kWritableEntryKeys{"path", "protected"};

std::string list(Keys keys) { return fmt::format("{}", fmt::join(keys, ", ")); }

bool contains(Keys keys, const std::string& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); }

// Reads typed values out of one JSON object, with errors that name the
// document and the key.
class Reader {
public:
    Reader(const json& obj, std::string source) : obj_(obj), source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw Error(fmt::format("{}: key '{}': {}", source_, key, what));
    }

    void only(Keys a, Keys b = {}) const {
        for (const auto& [k, v] : obj_.items()) {
            if (!contains(a, k) && !contains(b, k)) {
                std::string known = list(a);
                if (b.size()) known += ", " + list(b);
                throw Error(fmt::format("{}: unknown key '{}' (known keys: {})", source_, k, known));
            }
        }
    }

    const json* get(const std::string& key, json::value_t type, const char* type_name) const {
        auto it = obj_.find(key);
        if (it == obj_.end()) return nullptr;
        bool ok = it->type() == type || (type == json::value_t::number_unsigned &&
                                         it->type() == json::value_t::number_integer && it->get<std::int64_t>() >= 0);
        if (!ok) fail(key, fmt::format("expected {}, got {}", type_name, type_desc(*it)));
        return &*it;
    }

    std::optional<std::string> string(const std::string& key) const {
        const json* v = get(key, json::value_t::string, "a string");
        return v ? std::optional(v->get<std::string>()) : std::nullopt;
    }

    std::optional<bool> boolean(const std::string& key) const {
        const json* v = get(key, json::value_t::boolean, "true or false");
        return v ? std::optional(v->get<bool>()) : std::nullopt;
    }

    std::optional<std::vector<std::string>> strings(const std::string& key) const {
        const json* v = get(key, json::value_t::array, "a list of strings");
        if (!v) return std::nullopt;
        std::vector<std::string> out;
        for (const auto& e : *v) {
            if (!e.is_string()) fail(key, fmt::format("expected a list of strings, found {}", type_desc(e)));
            out.push_back(e.get<std::string>());
        }
        return out;
    }

    // An optional count: absent or null means unset.
    std::optional<std::uint64_t> count(const std::string& key) const {
        auto it = obj_.find(key);
        if (it == obj_.end() || it->is_null()) return std::nullopt;
        return get(key, json::value_t::number_unsigned, "a whole number >= 0 or null")->get<std::uint64_t>();
    }

    const std::string& source() const { return source_; }

    static std::string type_desc(const json& v) {
        switch (v.type()) {
            case json::value_t::null: return "null";
            case json::value_t::boolean: return "a boolean";
            case json::value_t::string: return "a string";
            case json::value_t::array: return "a list";
            case json::value_t::object: return "an object";
            case json::value_t::number_float: return "a fractional number";
            case json::value_t::number_integer:
            case json::value_t::number_unsigned: return "a number";
            default: return "an unsupported value";
        }
    }

private:
    const json& obj_;
    std::string source_;
};

// Codex's ReadOnlyAccess ({"type":"full-access"} or {"type":"restricted",
// "include_platform_defaults":true, "readable_roots":[...]}): what the mode
// reads besides what it writes.  Restricted access reads the platform set
// (when include_platform_defaults, the default), the readable roots and the
// working directory, as Codex's get_readable_roots_with_cwd does.
void codex_read_access(const Reader& r, const std::string& key, PolicyInput& in) {
    const json* access =
        r.get(key, json::value_t::object, "an object ({\"type\": \"full-access\"} or {\"type\": \"restricted\", ...})");
    if (!access) return;
    Reader ar(*access, r.source() + ": key '" + key + "'");
    const auto type = ar.string("type");
    if (!type) ar.fail("type", "missing (full-access or restricted)");
    if (*type == "full-access") {
        ar.only(kCodexPlainKeys);
        return;
    }
    if (*type != "restricted") ar.fail("type", fmt::format("'{}' is not one of: full-access, restricted", *type));
    ar.only(kCodexReadAccessKeys);
    in.read_base = ar.boolean("include_platform_defaults").value_or(true) ? ReadBase::Minimal : ReadBase::None;
    in.read_base_source = ar.source();
    in.extra_entries.push_back(
        {{FsTarget::Kind::ProjectRoots, ""}, FsAccess::Read, ar.source() + " (the working directory)"});
    for (const auto& root : ar.strings("readable_roots").value_or(std::vector<std::string>{})) {
        if (root.empty() || (root.front() != '/' && !is_home_relative(root)))
            ar.fail("readable_roots", fmt::format("'{}' is not an absolute path", root));
        in.extra_entries.push_back({{FsTarget::Kind::Path, root}, FsAccess::Read, ar.source() + ": readable_roots"});
    }
}

PolicyInput codex_input(const json& doc, const std::string& source) {
    Reader r(doc, source);
    const std::string type = *r.string("type");
    PolicyInput in;
    in.mode_source = source + ": key 'type'";
    in.network_source = source + ": key 'network_access'";
    if (type == "read-only") {
        r.only(kCodexReadOnlyKeys);
        in.mode = Mode::ReadOnly;
        codex_read_access(r, "access", in);
        if (auto n = r.boolean("network_access")) in.network = *n ? Network::Full : Network::Restricted;
    } else if (type == "danger-full-access") {
        r.only(kCodexPlainKeys);
        in.mode = Mode::DangerFullAccess;
    } else if (type == "external-sandbox") {
        r.only(kCodexExternalKeys);
        in.mode = Mode::ExternalSandbox;
        if (auto n = r.string("network_access")) {
            if (*n == "restricted") in.network = Network::Restricted;
            else if (*n == "enabled") in.network = Network::Full;
            else r.fail("network_access", fmt::format("'{}' is not one of: restricted, enabled", *n));
        }
    } else if (type == "workspace-write") {
        r.only(kCodexWorkspaceKeys);
        in.mode = Mode::WorkspaceWrite;
        if (auto roots = r.strings("writable_roots"))
            for (const auto& root : *roots) in.writable_roots.push_back({root, source + ": key 'writable_roots'"});
        if (auto n = r.boolean("network_access")) in.network = *n ? Network::Full : Network::Restricted;
        in.exclude_tmpdir_env_var = r.boolean("exclude_tmpdir_env_var");
        in.exclude_slash_tmp = r.boolean("exclude_slash_tmp");
        codex_read_access(r, "read_only_access", in);
    } else {
        r.fail("type", fmt::format("'{}' is not one of: read-only, workspace-write, danger-full-access, "
                                   "external-sandbox",
                                   type));
    }
    return in;
}

json entry_json(const FsEntry& e) {
    json out{{"access", to_string(e.access)}};
    switch (e.target.kind) {
        case FsTarget::Kind::Path: out["path"] = e.target.value; break;
        case FsTarget::Kind::Glob: out["glob"] = e.target.value; break;
        case FsTarget::Kind::Unknown:
            out["special"] = "unknown";
            out["path"] = e.target.value;
            break;
        default:
            for (const auto& [name, kind] : kSpecials)
                if (kind == e.target.kind) out["special"] = name;
            if (e.target.kind == FsTarget::Kind::ProjectRoots && !e.target.value.empty())
                out["subpath"] = e.target.value;
            break;
    }
    return out;
}

// "secrets": [{"env"|"file": NAME, "mode": "mask"|"deny", "hosts": [...],
// "extract": RE}]; mode may be left out (mask with hosts, deny without).
std::vector<PolicyInput::SourcedSecret> secrets_from_json(const Reader& r) {
    const json* list =
        r.get("secrets", json::value_t::array,
              "a list of {\"env\"|\"file\": NAME, \"mode\": \"mask\"|\"deny\", \"hosts\": [...]} objects");
    std::vector<PolicyInput::SourcedSecret> out;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const json& e = (*list)[i];
        const std::string where = fmt::format("{}: key 'secrets' [{}]", r.source(), i);
        if (!e.is_object()) throw Error(fmt::format("{}: expected an object, got {}", where, Reader::type_desc(e)));
        Reader er(e, where);
        er.only(kSecretKeys);
        if (e.contains("env") == e.contains("file"))
            throw Error(fmt::format("{}: give exactly one of 'env', 'file'", where));
        Secret s;
        s.kind = e.contains("env") ? Secret::Kind::Env : Secret::Kind::File;
        s.name = *er.string(s.kind == Secret::Kind::Env ? "env" : "file");
        s.hosts = er.strings("hosts").value_or(std::vector<std::string>{});
        s.extract = er.string("extract").value_or("");
        const std::string mode = er.string("mode").value_or(s.hosts.empty() ? "deny" : "mask");
        if (mode != "mask" && mode != "deny") er.fail("mode", fmt::format("'{}' is not mask or deny", mode));
        if (mode == "mask" && s.hosts.empty())
            er.fail("hosts", "a masked secret needs the hosts its real value may reach (none: use mode deny)");
        if (mode == "deny" && (!s.hosts.empty() || !s.extract.empty()))
            er.fail(s.hosts.empty() ? "extract" : "hosts", "a withheld secret (mode deny) reaches no host");
        out.push_back({std::move(s), where});
    }
    return out;
}

std::vector<FsEntry> entries_from_json(const Reader& r) {
    const std::string shape =
        "a list of {\"path\"|\"special\"|\"glob\": ..., \"access\": \"read\"|\"write\"|\"deny\"} objects";
    const json* list = r.get("entries", json::value_t::array, shape.c_str());
    std::vector<FsEntry> out;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const json& e = (*list)[i];
        const std::string where = fmt::format("{}: key 'entries' [{}]", r.source(), i);
        if (!e.is_object()) throw Error(fmt::format("{}: expected an object, got {}", where, Reader::type_desc(e)));
        Reader er(e, where);
        FsEntry entry;
        entry.source = where;
        const auto access = er.string("access");
        if (!access) er.fail("access", "missing (read, write or deny)");
        const auto parsed = parse_fs_access(*access);
        if (!parsed) er.fail("access", fmt::format("'{}' is not one of: read, write, deny", *access));
        entry.access = *parsed;
        const int kinds =
            int(e.contains("path") && !e.contains("special")) + int(e.contains("special")) + int(e.contains("glob"));
        if (kinds != 1) throw Error(fmt::format("{}: give exactly one of 'path', 'special', 'glob'", where));
        if (auto special = er.string("special")) {
            er.only(kSpecialEntryKeys);
            auto it =
                std::find_if(kSpecials.begin(), kSpecials.end(), [&](const auto& s) { return s.first == *special; });
            if (it == kSpecials.end())
                er.fail("special", fmt::format("'{}' is not one of: root, minimal, tmpdir, slash_tmp, project_roots, "
                                               "unknown",
                                               *special));
            entry.target.kind = it->second;
            if (auto sub = er.string("subpath")) {
                if (entry.target.kind != FsTarget::Kind::ProjectRoots)
                    er.fail("subpath", "only project_roots takes a subpath");
                entry.target.value = *sub;
            }
            if (auto path = er.string("path")) {
                if (entry.target.kind != FsTarget::Kind::Unknown)
                    er.fail("path", "only the special 'unknown' takes a path");
                entry.target.value = *path;
            }
        } else {
            er.only(kEntryKeys);
            const bool glob = e.contains("glob");
            const std::string key = glob ? "glob" : "path";
            const std::string value = *er.string(key);
            const bool home = is_home_relative(value);  // expanded by resolve()
            if (value.empty() || (value.front() != '/' && !home))
                er.fail(key, fmt::format("'{}' is not an absolute path", value));
            entry.target = {glob ? FsTarget::Kind::Glob : FsTarget::Kind::Path,
                            glob || home ? value : join_path("/", value)};
        }
        out.push_back(std::move(entry));
    }
    return out;
}

// The derived keys' shape is checked here; their values by check_derived_keys().
void check_derived_shape(const json& doc, const Reader& r) {
    r.strings("readable");
    r.strings("denied");
    const json* w = r.get("writable", json::value_t::array, "a list of {\"path\", \"protected\"} objects");
    if (!w) return;
    for (const auto& e : *w) {
        if (!e.is_object()) r.fail("writable", "expected a list of {\"path\", \"protected\"} objects");
        Reader er(e, r.source() + ": key 'writable'");
        er.only(kWritableEntryKeys);
        if (!er.string("path")) er.fail("path", "missing");
        er.strings("protected");
    }
    (void)doc;
}

json entries_json(const CanonicalPolicy& p) {
    json out = json::array();
    for (const auto& e : p.entries) out.push_back(entry_json(e));
    return out;
}

json writable_json(const CanonicalPolicy& p) {
    json writable = json::array();
    for (const auto& w : p.writable) writable.push_back({{"path", w.path}, {"protected", w.protected_paths}});
    return writable;
}

// The value of a derived key (kDerivedKeys) for p.
json derived_json(const CanonicalPolicy& p, std::string_view key) {
    if (key == "readable") return json(p.readable);
    if (key == "denied") return json(p.denied);
    return writable_json(p);
}

json parse_json_text(std::string_view text, const std::string& source) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for huge numbers
        throw Error(fmt::format("{}: invalid JSON: {}", source, json_error_message(e)));
    }
}

void check_derived_keys(const json& doc, const CanonicalPolicy& resolved, const std::string& source) {
    if (!doc.is_object() || doc.contains("type")) return;
    for (std::string_view key : kDerivedKeys) {
        auto it = doc.find(std::string(key));
        if (it == doc.end()) continue;
        const json derived = derived_json(resolved, key);
        if (*it != derived) {
            throw Error(
                fmt::format("{}: key '{}' does not match the policy the other keys describe (they "
                            "resolve to {}); remove the key to have it computed",
                            source, key, derived.dump()));
        }
    }
}

}  // namespace

json to_json(const CanonicalPolicy& p) {
    auto opt = [](const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); };
    json out{
        {"mode", to_string(p.mode)},
        {"network", to_string(p.network)},
        {"workspace", p.workspace},
        {"entries", entries_json(p)},
        {"glob_scan_max_depth", p.glob_scan_max_depth ? json(*p.glob_scan_max_depth) : json(nullptr)},
        {"protected_names", p.protected_names},
        {"allow_unprotected", p.allow_unprotected},
        {"limits",
         {{"memory", opt(p.limits.memory)},
          {"cpu_seconds", opt(p.limits.cpu_seconds)},
          {"processes", opt(p.limits.processes)},
          {"file_size", opt(p.limits.file_size)},
          {"open_files", opt(p.limits.open_files)}}},
        {"readable", derived_json(p, "readable")},
        {"writable", derived_json(p, "writable")},
        {"denied", derived_json(p, "denied")},
    };
    if (p.git_write) out["git_write"] = true;  // only when given: every other policy's form is unchanged
    // Only with an allowlist: the form of every other policy is unchanged.
    if (!p.allow_domains.empty() || !p.deny_domains.empty()) {
        out["allow_domains"] = p.allow_domains;
        out["deny_domains"] = p.deny_domains;
    }
    // Only with secrets: the form of every other policy is unchanged.
    if (!p.secrets.empty()) {
        json list = json::array();
        for (const auto& s : p.secrets) {
            json e{{std::string(to_string(s.kind)), s.name}, {"mode", s.masked() ? "mask" : "deny"}};
            if (s.masked()) e["hosts"] = s.hosts;
            if (!s.extract.empty()) e["extract"] = s.extract;
            list.push_back(std::move(e));
        }
        out["secrets"] = std::move(list);
    }
    if (!p.tls_passthrough.empty()) out["tls_passthrough"] = p.tls_passthrough;
    return out;
}

std::string to_json_text(const CanonicalPolicy& p, int indent) { return to_json(p).dump(indent); }

PolicyInput input_from_json(const json& doc, const std::string& source) {
    if (!doc.is_object())
        throw Error(fmt::format("{}: expected a JSON object, got {}", source, Reader::type_desc(doc)));
    if (doc.contains("type")) return codex_input(doc, source);

    Reader r(doc, source);
    r.only(kInputKeys, kDerivedKeys);
    PolicyInput in;
    in.mode_source = source + ": key 'mode'";
    in.network_source = source + ": key 'network'";
    if (auto m = r.string("mode")) {
        in.mode = parse_mode(*m);
        if (!in.mode)
            r.fail("mode", fmt::format("'{}' is not one of: read-only, workspace-write, danger-full-access, "
                                       "external-sandbox",
                                       *m));
    }
    if (auto n = r.string("network")) {
        in.network = parse_network(*n);
        if (!in.network) r.fail("network", fmt::format("'{}' is not one of: restricted, limited, full", *n));
    }
    if (auto ws = r.string("workspace")) {
        if (ws->empty() || (ws->front() != '/' && !is_home_relative(*ws)))
            r.fail("workspace", fmt::format("'{}' is not an absolute path", *ws));
        in.workspace = PolicyInput::SourcedPath{*ws, source + ": key 'workspace'"};
    }
    if (auto roots = r.strings("writable_roots")) {
        for (const auto& root : *roots) {
            if (root.empty() || (root.front() != '/' && !is_home_relative(root)))
                r.fail("writable_roots", fmt::format("'{}' is not an absolute path", root));
            in.writable_roots.push_back({root, source + ": key 'writable_roots'"});
        }
    }
    in.exclude_slash_tmp = r.boolean("exclude_slash_tmp");
    in.exclude_tmpdir_env_var = r.boolean("exclude_tmpdir_env_var");
    in.protected_names = r.strings("protected_names");
    in.allow_unprotected = r.boolean("allow_unprotected");
    in.git_write = r.boolean("git_write");
    if (const json* lim = r.get("limits", json::value_t::object, "an object")) {
        Reader lr(*lim, source + ": key 'limits'");
        lr.only(kLimitKeys);
        in.limits.memory = lr.count("memory");
        in.limits.cpu_seconds = lr.count("cpu_seconds");
        in.limits.processes = lr.count("processes");
        in.limits.file_size = lr.count("file_size");
        in.limits.open_files = lr.count("open_files");
    }
    if (doc.contains("entries")) {
        in.entries = entries_from_json(r);
        in.entries_source = source + ": key 'entries'";
    }
    if (auto depth = r.count("glob_scan_max_depth")) {
        if (*depth == 0 || *depth > 1000) r.fail("glob_scan_max_depth", "expected a whole number from 1 to 1000");
        in.glob_scan_max_depth = static_cast<unsigned>(*depth);
    }
    for (const char* key : {"allow_domains", "deny_domains"}) {
        if (auto patterns = r.strings(key)) {
            auto& to = std::string_view(key) == "allow_domains" ? in.allow_domains : in.deny_domains;
            for (const auto& pattern : *patterns) to.push_back({pattern, fmt::format("{}: key '{}'", source, key)});
        }
    }
    if (doc.contains("secrets")) in.secrets = secrets_from_json(r);
    if (auto patterns = r.strings("tls_passthrough"))
        for (const auto& pattern : *patterns)
            in.tls_passthrough.push_back({pattern, fmt::format("{}: key 'tls_passthrough'", source)});
    check_derived_shape(doc, r);
    return in;
}

PolicyInput input_from_json_text(std::string_view text, const std::string& source) {
    return input_from_json(parse_json_text(text, source), source);
}

namespace {

// A document's input resolved in env, its derived keys checked; without the
// writable roots that do not exist when existing_roots_only.
CheckedPolicy read_checked(std::string_view text, const std::string& source, const Environment& env,
                           bool existing_roots_only, ResolveScope scope) {
    const json doc = parse_json_text(text, source);
    CheckedPolicy out{input_from_json(doc, source), {}};
    if (existing_roots_only)
        std::erase_if(out.input.writable_roots, [&](const PolicyInput::SourcedPath& root) {
            return !env.realpath(join_path(env.cwd, expand_home(root.path, env, root.source)));
        });
    out.policy = resolve(out.input, env, scope);
    check_derived_keys(doc, out.policy, source);
    return out;
}

}  // namespace

CheckedPolicy read_policy_text(std::string_view text, const std::string& source, const Environment& env) {
    return read_checked(text, source, env, false, ResolveScope::OneDocument);
}

CanonicalPolicy parse_sandbox_policy_text(std::string_view text, const std::string& source, const Environment& env) {
    return read_checked(text, source, env, true, ResolveScope::Whole).policy;
}

PolicyInput input_from_document_text(std::string_view text, const std::string& source, const std::string& policy_cwd) {
    const json doc = parse_json_text(text, source);
    if (is_permission_profile(doc)) return input_from_permission_profile(text, policy_cwd, source, UnknownKeys::Refuse);
    return input_from_json(doc, source);
}

CheckedPolicy read_policy_document(std::string_view text, const std::string& source, const Environment& env) {
    if (!is_permission_profile(parse_json_text(text, source))) return read_policy_text(text, source, env);
    CheckedPolicy out{input_from_permission_profile(text, env.cwd, source, UnknownKeys::Refuse), {}};
    out.policy = resolve(out.input, env, ResolveScope::OneDocument);
    return out;
}

CanonicalPolicy parse_policy_text(std::string_view text, const std::string& source, const Environment& env) {
    return read_checked(text, source, env, false, ResolveScope::Whole).policy;
}

}  // namespace sbx
