// Codex 0.169's --permission-profile JSON (CODEX-HELPER.md section 3) read
// into a PolicyInput.
//
// Codex reads it with serde as an untagged enum: first the tagged shapes
// ({"type": "managed" | "disabled" | "external"}), whose unknown keys are
// ignored at every level, then the older untagged shape ({"network": {...},
// "file_system": {...}}), whose unknown keys at the top level and in
// file_system are errors.  Every tag and enum value is exact lowercase.
// Codex reports every shape error as "data did not match any variant of
// untagged enum PermissionProfileDe"; here the message names the key.
// sbx's own policy sources (--policy-file, --policy-json) read the tagged
// shapes too, with unknown keys refused as every other key of theirs is.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "policy/policy.h"
#include "util/json_error.h"

namespace sbx {

using nlohmann::json;

namespace {

constexpr const char* kNoVariant = "data did not match any variant of untagged enum PermissionProfileDe";

std::string describe(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::string: return fmt::format("\"{}\"", v.get<std::string>());
        case json::value_t::array: return "a list";
        case json::value_t::object: return "an object";
        case json::value_t::number_float: return "a fractional number";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return fmt::format("the number {}", v.dump());
        default: return "an unsupported value";
    }
}

std::string quoted(std::initializer_list<const char*> values) {
    std::vector<std::string> q;
    for (const char* v : values) q.push_back(fmt::format("\"{}\"", v));
    return fmt::format("{}", fmt::join(q, ", "));
}

// The profile as Codex's types have it, before it becomes a PolicyInput.
struct Profile {
    enum class Type { Managed, Disabled, External } type = Type::Managed;
    bool restricted = true;  // managed: file_system "restricted" (false: "unrestricted")
    std::vector<FsEntry> entries;
    std::optional<unsigned> glob_scan_max_depth;
    Network network = Network::Restricted;
};

class Parser {
public:
    Parser(std::string source, std::string policy_cwd, UnknownKeys unknown)
        : source_(std::move(source)), cwd_(std::move(policy_cwd)), unknown_(unknown) {}

    Profile profile(const json& doc) const {
        if (!doc.is_object()) fail("", fmt::format("expected a JSON object, got {}", describe(doc)));
        if (doc.contains("type")) return tagged(doc);
        return legacy(doc);
    }

private:
    // Codex's own words close the helper's message; sbx's sources do without them.
    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        const std::string codex = unknown_ == UnknownKeys::Ignore ? fmt::format(" ({})", kNoVariant) : "";
        if (key.empty()) throw Error(fmt::format("{}: invalid permission profile: {}{}", source_, what, codex));
        throw Error(fmt::format("{}: invalid permission profile: key '{}': {}{}", source_, key, what, codex));
    }

    // A tagged shape's keys: those it knows, and under UnknownKeys::Refuse nothing else.
    void shape_keys(const json& obj, const std::string& where, std::initializer_list<const char*> keys) const {
        if (unknown_ == UnknownKeys::Refuse) only(obj, where, keys, fmt::format("this shape takes {}", quoted(keys)));
    }

    static std::string at(const std::string& where, const std::string& key) {
        return where.empty() ? key : where + "." + key;
    }

    // A required member; "missing" otherwise.
    const json& member(const json& obj, const std::string& where, const std::string& key) const {
        auto it = obj.find(key);
        if (it == obj.end()) fail(at(where, key), "missing");
        return *it;
    }

    const json& object(const json& v, const std::string& where) const {
        if (!v.is_object()) fail(where, fmt::format("expected an object, got {}", describe(v)));
        return v;
    }

    std::string string(const json& v, const std::string& where) const {
        if (!v.is_string()) fail(where, fmt::format("expected a string, got {}", describe(v)));
        return v.get<std::string>();
    }

    // The tag of an internally tagged enum: one of values, exactly.
    std::string tag(const json& obj, const std::string& where, const std::string& key,
                    std::initializer_list<const char*> values) const {
        const std::string t = string(member(obj, where, key), at(where, key));
        for (const char* v : values)
            if (t == v) return t;
        fail(at(where, key), fmt::format("\"{}\" is not one of {}", t, quoted(values)));
    }

    Network network(const json& v, const std::string& where) const {
        if (!v.is_string()) fail(where, fmt::format("expected \"restricted\" or \"enabled\", got {}", describe(v)));
        const std::string n = v.get<std::string>();
        if (n == "restricted") return Network::Restricted;
        if (n == "enabled") return Network::Full;
        fail(where, fmt::format("\"{}\" is not one of \"restricted\", \"enabled\"", n));
    }

    // Absent or null: unset; otherwise an integer >= 1 (Codex's NonZeroUsize;
    // values above UINT_MAX mean no limit anyway).
    std::optional<unsigned> depth(const json& obj, const std::string& where) const {
        auto it = obj.find("glob_scan_max_depth");
        if (it == obj.end() || it->is_null()) return std::nullopt;
        const std::string key = at(where, "glob_scan_max_depth");
        if (!it->is_number_integer() ||
            (it->is_number_unsigned() ? it->get<std::uint64_t>() == 0 : it->get<std::int64_t>() < 1))
            fail(key, fmt::format("expected a whole number >= 1, got {}", describe(*it)));
        const std::uint64_t n = it->get<std::uint64_t>();
        return static_cast<unsigned>(std::min<std::uint64_t>(n, UINT_MAX));
    }

    // An absolute path, lexically normalised ("/w/sub/../sub/" is "/w/sub").
    std::string absolute_path(const json& v, const std::string& where) const {
        const std::string p = string(v, where);
        if (p.empty() || p.front() != '/')
            fail(where, fmt::format("\"{}\" is not an absolute path (no relative paths, ~ or file:// URLs)", p));
        return join_path("/", p);
    }

    FsTarget target(const json& v, const std::string& where) const {
        object(v, where);
        const std::string type = tag(v, where, "type", {"path", "special", "glob_pattern"});
        if (type == "path") {
            shape_keys(v, where, {"type", "path"});
            return {FsTarget::Kind::Path, absolute_path(member(v, where, "path"), at(where, "path"))};
        }
        if (type == "glob_pattern") {
            shape_keys(v, where, {"type", "pattern"});
            const std::string pattern = string(member(v, where, "pattern"), at(where, "pattern"));
            return {FsTarget::Kind::Glob, pattern};  // made absolute by entry()
        }
        shape_keys(v, where, {"type", "value"});
        const std::string vw = at(where, "value");
        const json& value = object(member(v, where, "value"), vw);
        const std::string kind =
            tag(value, vw, "kind",
                {"root", "minimal", "tmpdir", "slash_tmp", "project_roots", "current_working_directory", "unknown"});
        if (kind == "unknown") shape_keys(value, vw, {"kind", "path", "subpath"});
        else if (kind == "project_roots" || kind == "current_working_directory")
            shape_keys(value, vw, {"kind", "subpath"});
        else shape_keys(value, vw, {"kind"});
        // An optional string: absent and null are the same.
        auto optional_string = [&](const std::string& key) -> std::optional<std::string> {
            auto it = value.find(key);
            if (it == value.end() || it->is_null()) return std::nullopt;
            return string(*it, at(vw, key));
        };
        if (kind == "root") return {FsTarget::Kind::Root, ""};
        if (kind == "minimal") return {FsTarget::Kind::Minimal, ""};
        if (kind == "tmpdir") return {FsTarget::Kind::TmpDir, ""};
        if (kind == "slash_tmp") return {FsTarget::Kind::SlashTmp, ""};
        if (kind == "unknown") {
            const json& path = member(value, vw, "path");
            const std::string p = string(path, at(vw, "path"));
            optional_string("subpath");  // checked, then ignored with the entry
            return {FsTarget::Kind::Unknown, p};
        }
        // project_roots and its alias current_working_directory: the
        // subpath lexically normalised, "" for the project root itself.
        std::string sub = optional_string("subpath").value_or("");
        if (!sub.empty()) sub = join_path("", sub);
        if (sub == ".") sub.clear();
        return {FsTarget::Kind::ProjectRoots, sub};
    }

    FsAccess access(const json& v, const std::string& where) const {
        if (!v.is_string())
            fail(where,
                 fmt::format("expected one of {}, got {}", quoted({"read", "write", "deny", "none"}), describe(v)));
        const std::string a = v.get<std::string>();
        if (a == "read") return FsAccess::Read;
        if (a == "write") return FsAccess::Write;
        if (a == "deny" || a == "none") return FsAccess::Deny;
        fail(where, fmt::format("\"{}\" is not one of {}", a, quoted({"read", "write", "deny", "none"})));
    }

    // One entry; nullopt when it can never resolve to anything (a
    // project_roots entry or a relative glob with a relative policy cwd,
    // which Codex ignores).
    std::optional<FsEntry> entry(const json& v, const std::string& where) const {
        object(v, where);
        shape_keys(v, where, {"path", "access", "missing_path_behavior"});
        FsEntry e;
        e.target = target(member(v, where, "path"), at(where, "path"));
        e.access = access(member(v, where, "access"), at(where, "access"));
        if (auto it = v.find("missing_path_behavior"); it != v.end() && !it->is_null()) {
            // Accepted and without effect (section 4.5).
            if (!it->is_string() || it->get<std::string>() != "skip")
                fail(at(where, "missing_path_behavior"),
                     fmt::format("expected \"skip\" or null, got {}", describe(*it)));
        }
        e.source = fmt::format("{}: {}", source_, where);
        const bool cwd_absolute = !cwd_.empty() && cwd_.front() == '/';
        if (e.target.kind == FsTarget::Kind::ProjectRoots && !cwd_absolute) return std::nullopt;
        if (e.target.kind == FsTarget::Kind::Glob) {
            const bool absolute = !e.target.value.empty() && e.target.value.front() == '/';
            if (!absolute && !cwd_absolute) return std::nullopt;
            e.target.value = join_path(absolute ? std::string() : cwd_, e.target.value);
        }
        return e;
    }

    std::vector<FsEntry> entries(const json& v, const std::string& where) const {
        if (!v.is_array()) fail(where, fmt::format("expected a list of entries, got {}", describe(v)));
        std::vector<FsEntry> out;
        for (std::size_t i = 0; i < v.size(); ++i)
            if (auto e = entry(v[i], fmt::format("{}[{}]", where, i))) out.push_back(std::move(*e));
        return out;
    }

    Profile tagged(const json& doc) const {
        Profile p;
        const std::string type = tag(doc, "", "type", {"managed", "disabled", "external"});
        if (type == "disabled") shape_keys(doc, "", {"type"});
        else if (type == "external") shape_keys(doc, "", {"type", "network"});
        else shape_keys(doc, "", {"type", "file_system", "network"});
        if (type == "disabled") {
            p.type = Profile::Type::Disabled;
            p.network = Network::Full;
            return p;
        }
        p.network = network(member(doc, "", "network"), "network");
        if (type == "external") {
            p.type = Profile::Type::External;
            return p;
        }
        const json& fs = object(member(doc, "", "file_system"), "file_system");
        const std::string fs_type = tag(fs, "file_system", "type", {"restricted", "unrestricted"});
        if (fs_type == "unrestricted") shape_keys(fs, "file_system", {"type"});
        else shape_keys(fs, "file_system", {"type", "entries", "glob_scan_max_depth"});
        if (fs_type == "unrestricted") {
            p.restricted = false;
            return p;
        }
        p.entries = entries(member(fs, "file_system", "entries"), "file_system.entries");
        p.glob_scan_max_depth = depth(fs, "file_system");
        return p;
    }

    void only(const json& obj, const std::string& where, std::initializer_list<const char*> keys,
              const std::string& why) const {
        for (const auto& item : obj.items()) {
            const std::string& k = item.key();  // no structured binding: clang 14 (fuzz build) cannot capture one
            if (std::none_of(keys.begin(), keys.end(), [&](const char* known) { return k == known; }))
                fail(at(where, k), "unknown key; " + why);
        }
    }

    // {"network": {"enabled": BOOL}, "file_system": {"entries": [...],
    // "glob_scan_max_depth": N} or {"read": [ABS...], "write": [ABS...]}}:
    // managed, restricted.
    Profile legacy(const json& doc) const {
        only(doc, "", {"network", "file_system"},
             "a profile without \"type\" is the older shape, which takes only 'network' and 'file_system'; "
             "a current one starts with \"type\": \"managed\", \"disabled\" or \"external\"");
        Profile p;
        if (auto it = doc.find("network"); it != doc.end() && !it->is_null()) {
            object(*it, "network");
            if (auto e = it->find("enabled"); e != it->end() && !e->is_null()) {
                if (!e->is_boolean())
                    fail("network.enabled", fmt::format("expected true or false, got {}", describe(*e)));
                if (e->get<bool>()) p.network = Network::Full;
            }
        }
        auto it = doc.find("file_system");
        if (it == doc.end() || it->is_null()) return p;
        const json& fs = object(*it, "file_system");
        if (fs.contains("read") || fs.contains("write")) {
            only(fs, "file_system", {"read", "write"},
                 "the older file_system takes either 'read' and 'write' lists or 'entries' and "
                 "'glob_scan_max_depth', not both");
            for (const char* key : {"read", "write"}) {
                auto list = fs.find(key);
                if (list == fs.end() || list->is_null()) continue;
                const std::string where = at("file_system", key);
                if (!list->is_array())
                    fail(where, fmt::format("expected a list of absolute paths, got {}", describe(*list)));
                for (std::size_t i = 0; i < list->size(); ++i) {
                    const std::string w = fmt::format("{}[{}]", where, i);
                    FsEntry e{{FsTarget::Kind::Path, absolute_path((*list)[i], w)},
                              std::string(key) == "read" ? FsAccess::Read : FsAccess::Write,
                              fmt::format("{}: {}", source_, w)};
                    p.entries.push_back(std::move(e));
                }
            }
            return p;
        }
        only(fs, "file_system", {"entries", "glob_scan_max_depth"},
             "the older file_system takes either 'read' and 'write' lists or 'entries' and 'glob_scan_max_depth'");
        if (auto e = fs.find("entries"); e != fs.end()) p.entries = entries(*e, "file_system.entries");
        p.glob_scan_max_depth = depth(fs, "file_system");
        return p;
    }

    std::string source_;
    std::string cwd_;
    UnknownKeys unknown_;
};

// The same place for any policy cwd: "/" and :root, "/tmp" and :slash_tmp,
// otherwise the same target.
bool same_place(const FsTarget& a, const FsTarget& b) {
    auto canon = [](const FsTarget& t) -> FsTarget {
        if (t.kind == FsTarget::Kind::Root) return {FsTarget::Kind::Path, "/"};
        if (t.kind == FsTarget::Kind::SlashTmp) return {FsTarget::Kind::Path, "/tmp"};
        return t;
    };
    return canon(a) == canon(b);
}

// Section 4.3: root writable and no narrowing entry, that is no read entry
// without a write entry for the same place, no deny entry (deny beats write
// at the same place; Codex's own test is looser, this is never looser), and
// no deny glob.  :minimal, :unknown and read/write globs never narrow.
bool full_disk_write(const std::vector<FsEntry>& entries) {
    auto is_root = [](const FsTarget& t) { return same_place(t, {FsTarget::Kind::Root, ""}); };
    const bool root_write = std::any_of(entries.begin(), entries.end(), [&](const FsEntry& e) {
        return e.access == FsAccess::Write && is_root(e.target);
    });
    if (!root_write) return false;
    for (const FsEntry& e : entries) {
        if (e.target.kind == FsTarget::Kind::Minimal || e.target.kind == FsTarget::Kind::Unknown) continue;
        if (e.target.kind == FsTarget::Kind::Glob) {
            if (e.access == FsAccess::Deny) return false;
            continue;
        }
        if (e.access == FsAccess::Deny) return false;
        if (e.access == FsAccess::Read && std::none_of(entries.begin(), entries.end(), [&](const FsEntry& w) {
                return w.access == FsAccess::Write && same_place(w.target, e.target);
            }))
            return false;
    }
    return true;
}

// JSON text to a document; a key given twice is an error, as in serde.
json parse_text(std::string_view text, const std::string& source) {
    std::vector<std::vector<std::string>> keys;  // per open object
    std::optional<std::string> duplicate;
    auto callback = [&](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
        if (event == json::parse_event_t::key && !keys.empty()) {
            const std::string k = parsed.get<std::string>();
            auto& seen = keys.back();
            if (std::find(seen.begin(), seen.end(), k) != seen.end() && !duplicate) duplicate = k;
            seen.push_back(k);
        }
        return true;
    };
    json doc;
    try {
        doc = json::parse(text, callback);
    } catch (const json::exception& e) {
        throw Error(fmt::format("{}: invalid permission profile JSON: {}", source, json_error_message(e)));
    }
    if (duplicate)
        throw Error(fmt::format("{}: invalid permission profile JSON: duplicate key '{}'", source, *duplicate));
    return doc;
}

}  // namespace

bool is_permission_profile(const json& doc) {
    if (!doc.is_object()) return false;
    const auto type = doc.find("type");
    if (type == doc.end() || !type->is_string()) return false;
    const std::string& t = type->get_ref<const std::string&>();
    return t == "managed" || t == "disabled" || t == "external";
}

PolicyInput input_from_permission_profile(std::string_view text, const std::string& policy_cwd,
                                          const std::string& source, UnknownKeys unknown) {
    const Profile p = Parser(source, policy_cwd, unknown).profile(parse_text(text, source));
    PolicyInput in;
    in.mode_source = source + ": key 'type'";
    in.network_source = source + ": key 'network'";
    in.network = p.network;
    switch (p.type) {
        case Profile::Type::Disabled: in.mode = Mode::DangerFullAccess; return in;
        case Profile::Type::External: in.mode = Mode::ExternalSandbox; return in;
        case Profile::Type::Managed: break;
    }
    if (!p.restricted) {
        in.mode_source = source + ": key 'file_system.type'";
        in.mode = Mode::ExternalSandbox;
        return in;
    }
    if (full_disk_write(p.entries)) {
        // No filesystem sandbox, as Codex: only the network rules apply.
        in.mode_source = source + ": key 'file_system.entries' (root writable, nothing narrower)";
        in.mode = Mode::ExternalSandbox;
        return in;
    }
    in.entries = p.entries;
    in.entries_source = source;
    in.glob_scan_max_depth = p.glob_scan_max_depth;
    if (!policy_cwd.empty() && policy_cwd.front() == '/')
        in.workspace = PolicyInput::SourcedPath{join_path("/", policy_cwd), "--sandbox-policy-cwd"};
    return in;
}

}  // namespace sbx
