// Codex 0.169's --permission-profile JSON (CODEX-HELPER.md sections 3 and 7):
// every shape Codex accepts and rejects, and what each becomes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "error_of.h"
#include "policy/policy.h"

using namespace sbx;

namespace {

using K = FsTarget::Kind;

const std::string kCwd = "/home/u/proj";

PolicyInput parse(const std::string& text, const std::string& cwd = kCwd) {
    return input_from_permission_profile(text, cwd);
}

// The message of the Error that parsing text throws ("" when it does not).
std::string error_of(const std::string& text, const std::string& cwd = kCwd) {
    return test::error_of([&] { parse(text, cwd); });
}

FsEntry entry(K kind, std::string value, FsAccess access) { return {{kind, std::move(value)}, access, ""}; }
FsEntry path(std::string p, FsAccess a) { return entry(K::Path, std::move(p), a); }
FsEntry special(K kind, FsAccess a) { return entry(kind, "", a); }

constexpr FsAccess R = FsAccess::Read;
constexpr FsAccess W = FsAccess::Write;
constexpr FsAccess D = FsAccess::Deny;

// JSON pieces in Codex's own spelling.
std::string sp(const std::string& kind) { return R"({"type":"special","value":{"kind":")" + kind + R"("}})"; }
std::string pa(const std::string& p) { return R"({"type":"path","path":")" + p + R"("})"; }
std::string ent(const std::string& target, const std::string& access, const std::string& extra = "") {
    return R"({"path":)" + target + R"(,"access":")" + access + "\"" + extra + "}";
}
const std::string kRootRead = ent(sp("root"), "read");
std::string managed(const std::string& entries, const std::string& network = "restricted",
                    const std::string& fs_extra = "") {
    return R"({"type":"managed","file_system":{"type":"restricted","entries":[)" + entries + "]" + fs_extra +
           R"(},"network":")" + network + "\"}";
}
// One entry besides root:read.
std::string with(const std::string& e) { return managed(kRootRead + "," + e); }

const std::vector<FsEntry>& entries_of(const PolicyInput& in) {
    REQUIRE(in.entries.has_value());
    return *in.entries;
}

}  // namespace

TEST_CASE("profile: the top-level types and what they mean (section 3.2)") {
    SECTION("disabled: no sandbox, host network") {
        const PolicyInput in = parse(R"({"type":"disabled"})");
        CHECK(in.mode == Mode::DangerFullAccess);
        CHECK(in.network == Network::Full);
        CHECK_FALSE(in.entries);
    }
    SECTION("external: the network rules only") {
        PolicyInput in = parse(R"({"type":"external","network":"restricted"})");
        CHECK(in.mode == Mode::ExternalSandbox);
        CHECK(in.network == Network::Restricted);
        in = parse(R"({"type":"external","network":"enabled"})");
        CHECK(in.mode == Mode::ExternalSandbox);
        CHECK(in.network == Network::Full);
        CHECK_FALSE(in.entries);
    }
    SECTION("managed + unrestricted: external-sandbox with its network") {
        PolicyInput in = parse(R"({"type":"managed","file_system":{"type":"unrestricted"},"network":"enabled"})");
        CHECK(in.mode == Mode::ExternalSandbox);
        CHECK(in.network == Network::Full);
        in = parse(R"({"type":"managed","file_system":{"type":"unrestricted"},"network":"restricted"})");
        CHECK(in.mode == Mode::ExternalSandbox);
        CHECK(in.network == Network::Restricted);
        CHECK_FALSE(in.entries);
    }
    SECTION("managed + restricted: the complete entry list, the mode left to resolve()") {
        const PolicyInput in =
            parse(managed(kRootRead + "," + ent(pa("/w"), "write"), "enabled", R"(,"glob_scan_max_depth":4)"));
        CHECK_FALSE(in.mode);
        CHECK(in.network == Network::Full);
        CHECK(entries_of(in) == std::vector<FsEntry>{special(K::Root, R), path("/w", W)});
        CHECK(in.entries_source == "--permission-profile");
        REQUIRE(in.workspace);
        CHECK(in.workspace->path == kCwd);
        CHECK(in.workspace->source == "--sandbox-policy-cwd");
        CHECK(in.glob_scan_max_depth == 4u);
        CHECK(entries_of(in)[1].source == "--permission-profile: file_system.entries[1]");
    }
    SECTION("an empty entry list is a profile that gives nothing") {
        const PolicyInput in = parse(managed(""));
        CHECK(entries_of(in).empty());
        CHECK_FALSE(in.mode);
    }
}

TEST_CASE("profile: full-disk write has no filesystem sandbox (section 4.3)") {
    auto mode_of = [](const std::string& entries) { return parse(managed(entries)).mode; };
    const std::string root_write = ent(sp("root"), "write");
    CHECK(mode_of(root_write) == Mode::ExternalSandbox);
    CHECK(mode_of(root_write + "," + ent(pa("/"), "write")) == Mode::ExternalSandbox);
    CHECK(mode_of(ent(pa("/"), "write")) == Mode::ExternalSandbox);
    CHECK(mode_of(root_write + "," + kRootRead) == Mode::ExternalSandbox);  // shadowed by root:write
    CHECK(mode_of(root_write + "," + ent(sp("minimal"), "read")) == Mode::ExternalSandbox);
    CHECK(mode_of(root_write + "," + ent(R"({"type":"special","value":{"kind":"unknown","path":"/x"}})", "deny")) ==
          Mode::ExternalSandbox);
    CHECK(mode_of(root_write + "," + ent(pa("/w"), "read") + "," + ent(pa("/w"), "write")) == Mode::ExternalSandbox);
    CHECK(mode_of(root_write + "," + ent(sp("slash_tmp"), "read") + "," + ent(pa("/tmp"), "write")) ==
          Mode::ExternalSandbox);
    CHECK(mode_of(root_write + "," + ent(R"({"type":"glob_pattern","pattern":"/w/*.txt"})", "read")) ==
          Mode::ExternalSandbox);
    CHECK(parse(managed(root_write, "enabled")).network == Network::Full);
    // Narrowing entries: an ordinary entry list.
    for (const std::string& narrowing :
         {ent(pa("/w/docs"), "read"), ent(pa("/w/secret"), "deny"), ent(pa("/w"), "none"), ent(sp("root"), "deny"),
          ent(R"({"type":"glob_pattern","pattern":"/w/**/*.env"})", "deny"), ent(sp("tmpdir"), "read"),
          ent(sp("project_roots"), "read"),
          // deny beats write at the same place
          ent(pa("/w"), "deny") + "," + ent(pa("/w"), "write")}) {
        const PolicyInput in = parse(managed(root_write + "," + narrowing));
        CHECK_FALSE(in.mode);
        CHECK(in.entries.has_value());
    }
}

TEST_CASE("profile: every accepted shape (section 3.1)") {
    SECTION("access values, and none as an alias of deny") {
        CHECK(entries_of(parse(with(ent(pa("/x"), "read"))))[1].access == R);
        CHECK(entries_of(parse(with(ent(pa("/x"), "write"))))[1].access == W);
        CHECK(entries_of(parse(with(ent(pa("/x"), "deny"))))[1].access == D);
        CHECK(entries_of(parse(with(ent(pa("/x"), "none"))))[1].access == D);
    }
    SECTION("missing_path_behavior: absent, null or skip, without effect") {
        CHECK(entries_of(parse(with(ent(pa("/x"), "read", R"(,"missing_path_behavior":"skip")"))))[1] == path("/x", R));
        CHECK(entries_of(parse(with(ent(pa("/x"), "read", R"(,"missing_path_behavior":null)"))))[1] == path("/x", R));
    }
    SECTION("paths are normalised lexically") {
        CHECK(entries_of(parse(with(ent(pa("/w/sub/../sub/"), "write"))))[1] == path("/w/sub", W));
        CHECK(entries_of(parse(with(ent(pa("//tmp"), "read"))))[1] == path("/tmp", R));
        CHECK(entries_of(parse(with(ent(pa("/.."), "read"))))[1] == path("/", R));
        CHECK(entries_of(parse(with(ent(pa("/a/./b"), "read"))))[1] == path("/a/b", R));
    }
    SECTION("every special kind") {
        CHECK(entries_of(parse(with(ent(sp("minimal"), "read"))))[1] == special(K::Minimal, R));
        CHECK(entries_of(parse(with(ent(sp("tmpdir"), "write"))))[1] == special(K::TmpDir, W));
        CHECK(entries_of(parse(with(ent(sp("slash_tmp"), "write"))))[1] == special(K::SlashTmp, W));
        CHECK(entries_of(parse(with(ent(sp("project_roots"), "write"))))[1] == entry(K::ProjectRoots, "", W));
        CHECK(entries_of(parse(with(ent(sp("current_working_directory"), "write"))))[1] ==
              entry(K::ProjectRoots, "", W));
        auto sub = [](const std::string& kind, const std::string& subpath) {
            return R"({"type":"special","value":{"kind":")" + kind + R"(","subpath":)" + subpath + "}}";
        };
        CHECK(entries_of(parse(with(ent(sub("project_roots", R"("docs")"), "read"))))[1] ==
              entry(K::ProjectRoots, "docs", R));
        CHECK(entries_of(parse(with(ent(sub("project_roots", R"("a/../b/")"), "read"))))[1] ==
              entry(K::ProjectRoots, "b", R));
        CHECK(entries_of(parse(with(ent(sub("project_roots", R"("../out")"), "write"))))[1] ==
              entry(K::ProjectRoots, "../out", W));
        CHECK(entries_of(parse(with(ent(sub("project_roots", R"(".")"), "write"))))[1] ==
              entry(K::ProjectRoots, "", W));
        CHECK(entries_of(parse(with(ent(sub("project_roots", R"("")"), "write"))))[1] == entry(K::ProjectRoots, "", W));
        CHECK(entries_of(parse(with(ent(sub("project_roots", "null"), "write"))))[1] == entry(K::ProjectRoots, "", W));
        CHECK(entries_of(parse(with(ent(sub("current_working_directory", R"("x")"), "read"))))[1] ==
              entry(K::ProjectRoots, "x", R));
        CHECK(entries_of(parse(with(ent(R"({"type":"special","value":{"kind":"unknown","path":"/opt/thing"}})",
                                        "read"))))[1] == entry(K::Unknown, "/opt/thing", R));
        CHECK(entries_of(parse(with(ent(R"({"type":"special","value":{"kind":"unknown","path":"rel","subpath":"y"}})",
                                        "read"))))[1] == entry(K::Unknown, "rel", R));
    }
    SECTION("glob patterns: absolute, or relative to --sandbox-policy-cwd") {
        auto glob = [](const std::string& p) { return R"({"type":"glob_pattern","pattern":")" + p + R"("})"; };
        CHECK(entries_of(parse(with(ent(glob("/home/u/proj/**/*.env"), "deny"))))[1] ==
              entry(K::Glob, "/home/u/proj/**/*.env", D));
        CHECK(entries_of(parse(with(ent(glob("**/*.env"), "deny"))))[1] == entry(K::Glob, "/home/u/proj/**/*.env", D));
        CHECK(entries_of(parse(with(ent(glob("secrets/[ab]?.key"), "deny"))))[1] ==
              entry(K::Glob, "/home/u/proj/secrets/[ab]?.key", D));
        CHECK(entries_of(parse(with(ent(glob(""), "deny"))))[1] == entry(K::Glob, kCwd, D));
    }
    SECTION("glob_scan_max_depth: absent, null, or a whole number >= 1") {
        CHECK_FALSE(parse(managed(kRootRead)).glob_scan_max_depth);
        CHECK_FALSE(parse(managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":null)")).glob_scan_max_depth);
        CHECK(parse(managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":1)")).glob_scan_max_depth == 1u);
        CHECK(parse(managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":18446744073709551615)"))
                  .glob_scan_max_depth == 4294967295u);
    }
    SECTION("unknown keys are ignored at every level of the tagged shapes") {
        const PolicyInput in =
            parse(R"({"type":"managed","x":1,"file_system":{"type":"restricted","y":[],"entries":[)"
                  R"({"path":{"type":"special","value":{"kind":"root","z":1},"w":2},"access":"read","v":3},)"
                  R"({"path":{"type":"path","path":"/w","q":true},"access":"write"}]},"network":"restricted"})");
        CHECK(entries_of(in) == std::vector<FsEntry>{special(K::Root, R), path("/w", W)});
        CHECK(parse(R"({"type":"disabled","network":"bogus","file_system":5})").mode == Mode::DangerFullAccess);
        CHECK(parse(R"({"type":"external","network":"enabled","file_system":5})").mode == Mode::ExternalSandbox);
        CHECK(
            parse(R"({"type":"managed","file_system":{"type":"unrestricted","entries":7},"network":"enabled"})").mode ==
            Mode::ExternalSandbox);
    }
    SECTION("a relative --sandbox-policy-cwd: project_roots and relative globs resolve to nothing") {
        const PolicyInput in = parse(
            with(ent(sp("project_roots"), "write") + "," + ent(R"({"type":"glob_pattern","pattern":"*.env"})", "deny") +
                 "," + ent(R"({"type":"glob_pattern","pattern":"/abs/*.env"})", "deny")),
            "rel/dir");
        CHECK(entries_of(in) == std::vector<FsEntry>{special(K::Root, R), entry(K::Glob, "/abs/*.env", D)});
        CHECK_FALSE(in.workspace);
    }
}

TEST_CASE("profile: the older untagged shape (section 3.3)") {
    SECTION("empty: managed, restricted network, zero entries") {
        const PolicyInput in = parse("{}");
        CHECK(entries_of(in).empty());
        CHECK(in.network == Network::Restricted);
        CHECK_FALSE(in.mode);
    }
    SECTION("network") {
        CHECK(parse(R"({"network":{"enabled":true}})").network == Network::Full);
        CHECK(parse(R"({"network":{"enabled":false}})").network == Network::Restricted);
        CHECK(parse(R"({"network":{"enabled":null}})").network == Network::Restricted);
        CHECK(parse(R"({"network":{}})").network == Network::Restricted);
        CHECK(parse(R"({"network":null})").network == Network::Restricted);
        CHECK(parse(R"({"network":{"enabled":true,"foo":1}})").network == Network::Full);  // ignored there
    }
    SECTION("file_system with entries") {
        const PolicyInput in = parse(R"({"file_system":{"entries":[)" + kRootRead + R"(],"glob_scan_max_depth":2}})");
        CHECK(entries_of(in) == std::vector<FsEntry>{special(K::Root, R)});
        CHECK(in.glob_scan_max_depth == 2u);
        CHECK(entries_of(parse(R"({"file_system":{}})")).empty());
        CHECK(entries_of(parse(R"({"file_system":null})")).empty());
        CHECK(parse(R"({"file_system":{"glob_scan_max_depth":2}})").glob_scan_max_depth == 2u);
    }
    SECTION("file_system with read and write lists") {
        const PolicyInput in = parse(R"({"file_system":{"read":["/"],"write":["/w/","/x/../y"]}})");
        CHECK(entries_of(in) == std::vector<FsEntry>{path("/", R), path("/w", W), path("/y", W)});
        CHECK(entries_of(parse(R"({"file_system":{"read":null}})")).empty());
        CHECK(entries_of(parse(R"({"file_system":{"read":["/"],"write":null}})")) ==
              std::vector<FsEntry>{path("/", R)});
    }
}

TEST_CASE("profile: every rejected shape (sections 3.1 and 3.3), with one line naming the key") {
    struct Case {
        std::string json;
        std::string names;  // a part of the message
    };
    const std::vector<Case> cases = {
        // syntax
        {"", "invalid permission profile JSON"},
        {"x", "invalid permission profile JSON"},
        {R"({"type":)", "invalid permission profile JSON"},
        {R"({"type":"disabled","type":"disabled"})", "duplicate key 'type'"},
        // top level
        {"[]", "expected a JSON object"},
        {"null", "expected a JSON object"},
        {R"("x")", "expected a JSON object"},
        {R"({"type":"Managed","file_system":{"type":"unrestricted"},"network":"enabled"})", "key 'type'"},
        {R"({"type":"external-sandbox"})", "key 'type'"},
        {R"({"type":null})", "key 'type'"},
        {R"({"type":"external"})", "key 'network': missing"},
        {R"({"type":"managed","file_system":{"type":"restricted","entries":[]}})", "key 'network': missing"},
        {R"({"type":"managed","file_system":{"type":"restricted","entries":[]},"network":null})", "key 'network'"},
        {R"({"type":"managed","network":"restricted"})", "key 'file_system': missing"},
        {R"({"type":"managed","file_system":null,"network":"restricted"})", "key 'file_system'"},
        // network values
        {R"({"type":"external","network":"Enabled"})", "key 'network'"},
        {R"({"type":"external","network":"full"})", "key 'network'"},
        {R"({"type":"external","network":true})", "key 'network'"},
        // file_system
        {R"({"type":"managed","file_system":{"type":"restricted"},"network":"enabled"})",
         "key 'file_system.entries': missing"},
        {R"({"type":"managed","file_system":{"type":"restricted","entries":null},"network":"enabled"})",
         "key 'file_system.entries'"},
        {R"({"type":"managed","file_system":{"type":"external-sandbox"},"network":"enabled"})",
         "key 'file_system.type'"},
        {R"({"type":"managed","file_system":{"entries":[]},"network":"enabled"})", "key 'file_system.type': missing"},
        {managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":0)"), "key 'file_system.glob_scan_max_depth'"},
        {managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":-1)"), "key 'file_system.glob_scan_max_depth'"},
        {managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":2.0)"), "key 'file_system.glob_scan_max_depth'"},
        {managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":"2")"), "key 'file_system.glob_scan_max_depth'"},
        {managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":18446744073709551616)"),
         "key 'file_system.glob_scan_max_depth'"},
        // entries
        {with("5"), "key 'file_system.entries[1]'"},
        {with(R"({"access":"read"})"), "key 'file_system.entries[1].path': missing"},
        {with(R"({"path":null,"access":"read"})"), "key 'file_system.entries[1].path'"},
        {with(R"({"path":"/tmp","access":"read"})"), "key 'file_system.entries[1].path'"},
        {with(R"({"path":{"type":"path","path":"/tmp"}})"), "key 'file_system.entries[1].access': missing"},
        {with(ent(pa("/tmp"), "Write")), "key 'file_system.entries[1].access'"},
        {with(ent(pa("/tmp"), "None")), "key 'file_system.entries[1].access'"},
        {with(ent(pa("/tmp"), "rw")), "key 'file_system.entries[1].access'"},
        {with(R"({"path":{"type":"path","path":"/tmp"},"access":null})"), "key 'file_system.entries[1].access'"},
        {with(ent(pa("/tmp"), "read", R"(,"missing_path_behavior":"error")")),
         "key 'file_system.entries[1].missing_path_behavior'"},
        {with(ent(pa("/tmp"), "read", R"(,"missing_path_behavior":"Skip")")),
         "key 'file_system.entries[1].missing_path_behavior'"},
        {with(ent(pa("/tmp"), "read", R"(,"missing_path_behavior":5)")),
         "key 'file_system.entries[1].missing_path_behavior'"},
        // paths
        {with(ent(pa("tmp"), "read")), "key 'file_system.entries[1].path.path': \"tmp\" is not an absolute path"},
        {with(ent(pa(""), "read")), "key 'file_system.entries[1].path.path'"},
        {with(ent(pa("~/x"), "read")), "key 'file_system.entries[1].path.path'"},
        {with(ent(pa("file:///tmp"), "read")), "key 'file_system.entries[1].path.path'"},
        {with(ent(R"({"type":"path","path":5})", "read")), "key 'file_system.entries[1].path.path'"},
        {with(ent(R"({"type":"path"})", "read")), "key 'file_system.entries[1].path.path': missing"},
        {with(ent(R"({"type":"Path","path":"/tmp"})", "read")), "key 'file_system.entries[1].path.type'"},
        {with(ent(R"({"path":"/tmp"})", "read")), "key 'file_system.entries[1].path.type': missing"},
        // special values
        {with(ent(R"({"type":"special"})", "read")), "key 'file_system.entries[1].path.value': missing"},
        {with(ent(R"({"type":"special","value":null})", "read")), "key 'file_system.entries[1].path.value'"},
        {with(ent(R"({"type":"special","value":"root"})", "read")), "key 'file_system.entries[1].path.value'"},
        {with(ent(R"({"type":"special","value":{}})", "read")), "key 'file_system.entries[1].path.value.kind'"},
        {with(ent(sp("Root"), "read")), "key 'file_system.entries[1].path.value.kind'"},
        {with(ent(sp("workspace_roots"), "read")), "key 'file_system.entries[1].path.value.kind'"},
        {with(ent(sp("home"), "read")), "key 'file_system.entries[1].path.value.kind'"},
        {with(ent(R"({"type":"special","value":{"kind":"project_roots","subpath":3}})", "read")),
         "key 'file_system.entries[1].path.value.subpath'"},
        {with(ent(sp("unknown"), "read")), "key 'file_system.entries[1].path.value.path': missing"},
        {with(ent(R"({"type":"special","value":{"kind":"unknown","path":null}})", "read")),
         "key 'file_system.entries[1].path.value.path'"},
        {with(ent(R"({"type":"special","value":{"kind":"unknown","path":3}})", "read")),
         "key 'file_system.entries[1].path.value.path'"},
        // globs
        {with(ent(R"({"type":"glob_pattern"})", "deny")), "key 'file_system.entries[1].path.pattern': missing"},
        {with(ent(R"({"type":"glob_pattern","pattern":null})", "deny")), "key 'file_system.entries[1].path.pattern'"},
        {with(ent(R"({"type":"glob_pattern","pattern":3})", "deny")), "key 'file_system.entries[1].path.pattern'"},
        // the older shape: unknown keys at its top level and in file_system
        {R"({"foo":1})", "key 'foo': unknown key"},
        {R"({"file_system":{"read":["/"]},"type2":null})", "key 'type2': unknown key"},
        {R"({"file_system":{"foo":1}})", "key 'file_system.foo': unknown key"},
        {R"({"file_system":{"entries":[],"read":["/"]}})", "key 'file_system.entries': unknown key"},
        {R"({"file_system":{"entries":[],"write":[]}})", "key 'file_system.entries': unknown key"},
        {R"({"file_system":{"read":["/"],"glob_scan_max_depth":2}})", "key 'file_system.glob_scan_max_depth'"},
        {R"({"file_system":{"type":"restricted","entries":[]}})", "key 'file_system.type': unknown key"},
        {R"({"file_system":{"entries":null}})", "key 'file_system.entries'"},
        {R"({"file_system":{"entries":[],"glob_scan_max_depth":0}})", "key 'file_system.glob_scan_max_depth'"},
        {R"({"file_system":{"read":["tmp"]}})", "key 'file_system.read[0]'"},
        {R"({"file_system":{"read":[3]}})", "key 'file_system.read[0]'"},
        {R"({"file_system":{"read":"/"}})", "key 'file_system.read'"},
        {R"({"file_system":5})", "key 'file_system'"},
        {R"({"network":{"enabled":"yes"}})", "key 'network.enabled'"},
        {R"({"network":"enabled"})", "key 'network'"},
        {R"({"network":true})", "key 'network'"},
    };
    for (const Case& c : cases) {
        INFO(c.json);
        const std::string message = error_of(c.json);
        CHECK(message.rfind("--permission-profile: ", 0) == 0);
        CHECK(message.find(c.names) != std::string::npos);
        CHECK(message.find('\n') == std::string::npos);
        INFO(message);
    }
    // Codex's own reason stays in the message of a shape error.
    CHECK(error_of(R"({"type":"external"})").find("data did not match any variant") != std::string::npos);
    CHECK(error_of("x").find("JSON: ") != std::string::npos);
}

// Section 7: each captured argv's JSON, with $CWS = /home/u/proj,
// EXTRA = /srv/extra, FX = /srv/fx.
TEST_CASE("profile: the captured examples of section 7") {
    const std::string root = kRootRead;
    const std::string cws_w = ent(pa("/home/u/proj"), "write");
    const std::string slash_tmp = ent(sp("slash_tmp"), "write");
    const std::string tmpdir = ent(sp("tmpdir"), "write");
    auto skip = [](const std::string& p) { return ent(pa(p), "read", R"(,"missing_path_behavior":"skip")"); };
    auto skips = [&](const std::vector<std::string>& roots) {
        std::string out;
        for (const char* name : {".git", ".agents", ".codex", ".aws"})
            for (const auto& r : roots) out += "," + skip(r + "/" + name);
        return out;
    };
    auto protect = [](const std::vector<std::string>& roots) {
        std::vector<FsEntry> out;
        for (const char* name : {".git", ".agents", ".codex", ".aws"})
            for (const auto& r : roots) out.push_back(path(r + "/" + name, R));
        return out;
    };
    auto cat = [](std::vector<FsEntry> a, const std::vector<FsEntry>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    const std::vector<FsEntry> ws_entries =
        cat({special(K::Root, R), path("/home/u/proj", W), special(K::SlashTmp, W), special(K::TmpDir, W)},
            protect({"/home/u/proj"}));
    auto check_sandboxed = [](const PolicyInput& in, const std::vector<FsEntry>& expected, Network net,
                              const std::string& cwd = kCwd) {
        CHECK_FALSE(in.mode);
        CHECK(in.network == net);
        CHECK(entries_of(in) == expected);
        REQUIRE(in.workspace);
        CHECK(in.workspace->path == cwd);
        CHECK(in.entries_source == "--permission-profile");
    };

    // 1. read-only
    check_sandboxed(parse(managed(root)), {special(K::Root, R)}, Network::Restricted);
    // 2, 3 (TMPDIR changes nothing in the argv) and 9 (--use-legacy-landlock: same JSON)
    const std::string ex2 = managed(root + "," + cws_w + "," + slash_tmp + "," + tmpdir + skips({"/home/u/proj"}));
    check_sandboxed(parse(ex2), ws_entries, Network::Restricted);
    // 4. writable_roots = ["/srv/extra"]: the root twice, and its protections
    const std::string extra_w = ent(pa("/srv/extra"), "write");
    check_sandboxed(parse(managed(root + "," + cws_w + "," + extra_w + "," + slash_tmp + "," + tmpdir + "," + extra_w +
                                  skips({"/home/u/proj", "/srv/extra"}))),
                    cat({special(K::Root, R), path("/home/u/proj", W), path("/srv/extra", W), special(K::SlashTmp, W),
                         special(K::TmpDir, W), path("/srv/extra", W)},
                        protect({"/home/u/proj", "/srv/extra"})),
                    Network::Restricted);
    // 5. network_access = true
    check_sandboxed(
        parse(managed(root + "," + cws_w + "," + slash_tmp + "," + tmpdir + skips({"/home/u/proj"}), "enabled")),
        ws_entries, Network::Full);
    // 6. exclude_slash_tmp
    check_sandboxed(
        parse(managed(root + "," + cws_w + "," + tmpdir + skips({"/home/u/proj"}))),
        cat({special(K::Root, R), path("/home/u/proj", W), special(K::TmpDir, W)}, protect({"/home/u/proj"})),
        Network::Restricted);
    // 7. exclude_tmpdir_env_var
    check_sandboxed(
        parse(managed(root + "," + cws_w + "," + slash_tmp + skips({"/home/u/proj"}))),
        cat({special(K::Root, R), path("/home/u/proj", W), special(K::SlashTmp, W)}, protect({"/home/u/proj"})),
        Network::Restricted);
    // 8. both exclusions
    check_sandboxed(parse(managed(root + "," + cws_w + skips({"/home/u/proj"}))),
                    cat({special(K::Root, R), path("/home/u/proj", W)}, protect({"/home/u/proj"})),
                    Network::Restricted);
    // 10. -C /srv/fx/ws/sub: both cwd flags and every cwd path
    const std::string sub = "/srv/fx/ws/sub";
    check_sandboxed(
        parse(managed(root + "," + ent(pa(sub), "write") + "," + slash_tmp + "," + tmpdir + skips({sub})), sub),
        cat({special(K::Root, R), path(sub, W), special(K::SlashTmp, W), special(K::TmpDir, W)}, protect({sub})),
        Network::Restricted, sub);
    // 11. custom profile p1
    check_sandboxed(parse(managed(ent(pa("/srv/fx/deny"), "deny") + "," + ent(pa("/srv/fx/deny/open"), "write") + "," +
                                  ent(R"({"type":"glob_pattern","pattern":"/home/u/proj/**/*.env"})", "deny") + "," +
                                  cws_w + "," + ent(pa("/home/u/proj/docs"), "read") + "," + root)),
                    {path("/srv/fx/deny", D), path("/srv/fx/deny/open", W), entry(K::Glob, "/home/u/proj/**/*.env", D),
                     path("/home/u/proj", W), path("/home/u/proj/docs", R), special(K::Root, R)},
                    Network::Restricted);
    // 12. custom profile p2: minimal, no root, glob_scan_max_depth, network enabled
    {
        const std::string arg0 = "/home/u/.codex/tmp/arg0-linux/codex-arg0BQHpDn";
        const PolicyInput in =
            parse(managed(ent(sp("minimal"), "read") + "," + cws_w + "," + ent(pa("/home/u/proj/secrets"), "deny") +
                              "," + slash_tmp + "," + tmpdir + "," + ent(pa(arg0), "read"),
                          "enabled", R"(,"glob_scan_max_depth":3)"));
        check_sandboxed(in,
                        {special(K::Minimal, R), path("/home/u/proj", W), path("/home/u/proj/secrets", D),
                         special(K::SlashTmp, W), special(K::TmpDir, W), path(arg0, R)},
                        Network::Full);
        CHECK(in.glob_scan_max_depth == 3u);
    }
    // 13. custom profile p3
    check_sandboxed(parse(managed(extra_w + "," + root + "," + ent(pa("/home/u/.ssh"), "deny"))),
                    {path("/srv/extra", W), special(K::Root, R), path("/home/u/.ssh", D)}, Network::Restricted);
    // 14. custom profile p4 (extends :workspace)
    check_sandboxed(
        parse(managed(ent(pa("/srv/fx/deny"), "deny") + "," + root + "," + slash_tmp + "," + tmpdir + "," + cws_w)),
        {path("/srv/fx/deny", D), special(K::Root, R), special(K::SlashTmp, W), special(K::TmpDir, W),
         path("/home/u/proj", W)},
        Network::Restricted);
    // 15. p5: the profile is an ordinary one (the helper refuses --managed-network)
    check_sandboxed(parse(managed(root + "," + slash_tmp + "," + tmpdir + "," + cws_w, "enabled")),
                    {special(K::Root, R), special(K::SlashTmp, W), special(K::TmpDir, W), path("/home/u/proj", W)},
                    Network::Full);
    // 16. danger-full-access: Codex does not start the helper; the profile
    // that means the same is "disabled".
    CHECK(parse(R"({"type":"disabled"})").mode == Mode::DangerFullAccess);
}

TEST_CASE("profile: sbx's own sources refuse the keys Codex's helper ignores") {
    auto strict = [](const std::string& text) {
        return test::error_of([&] { input_from_permission_profile(text, kCwd, "--policy-json", UnknownKeys::Refuse); });
    };
    const std::string ws = managed(kRootRead + "," + ent(pa("/home/u/proj"), "write"));
    CHECK(strict(ws).empty());
    CHECK(strict(with(ent(pa("/home/u/proj/.git"), "read", R"(,"missing_path_behavior":"skip")"))).empty());
    CHECK(
        strict(with(ent(R"({"type":"special","value":{"kind":"project_roots","subpath":"docs"}})", "write"))).empty());
    CHECK(
        strict(with(ent(R"({"type":"special","value":{"kind":"unknown","path":"x","subpath":"y"}})", "read"))).empty());
    CHECK(strict(managed(kRootRead, "restricted", R"(,"glob_scan_max_depth":2)")).empty());
    CHECK(strict(R"({"type":"disabled"})").empty());
    CHECK(strict(R"({"type":"external","network":"enabled"})").empty());
    CHECK(strict(R"({"type":"managed","file_system":{"type":"unrestricted"},"network":"enabled"})").empty());

    struct Case {
        std::string json;
        std::string key;
    };
    const std::vector<Case> cases = {
        {R"({"type":"disabled","network":"enabled"})", "network"},
        {R"({"type":"external","network":"enabled","file_system":{"type":"unrestricted"}})", "file_system"},
        {R"({"type":"managed","x":1,"file_system":{"type":"unrestricted"},"network":"enabled"})", "x"},
        {R"({"type":"managed","file_system":{"type":"unrestricted","entries":[]},"network":"enabled"})",
         "file_system.entries"},
        {managed(kRootRead, "restricted", R"(,"y":2)"), "file_system.y"},
        {with(ent(pa("/x"), "read", R"(,"w":4)")), "file_system.entries[1].w"},
        {with(ent(R"({"type":"path","path":"/x","v":5})", "read")), "file_system.entries[1].path.v"},
        {with(ent(R"({"type":"glob_pattern","pattern":"/x/*","path":"/x"})", "deny")),
         "file_system.entries[1].path.path"},
        {with(ent(R"({"type":"special","value":{"kind":"root"},"z":3})", "read")), "file_system.entries[1].path.z"},
        {with(ent(R"({"type":"special","value":{"kind":"root","subpath":"a"}})", "read")),
         "file_system.entries[1].path.value.subpath"},
        {with(ent(R"({"type":"special","value":{"kind":"project_roots","path":"/a"}})", "read")),
         "file_system.entries[1].path.value.path"},
    };
    for (const auto& c : cases) {
        INFO(c.json);
        const std::string message = strict(c.json);
        CHECK_THAT(message,
                   Catch::StartsWith("--policy-json: invalid permission profile: key '" + c.key + "': unknown key"));
        // Codex's own words are the helper's, not sbx's.
        CHECK_THAT(message, !Catch::Contains("untagged enum"));
        CHECK(message.find('\n') == std::string::npos);
        // The helper takes the same profile, ignoring the key, as Codex's does.
        CHECK(error_of(c.json).empty());
    }
    // A value Codex rejects is named the same way, without Codex's words.
    CHECK(strict(with(ent(sp("root"), "Write"))) ==
          "--policy-json: invalid permission profile: key 'file_system.entries[1].access': \"Write\" is not one of "
          "\"read\", \"write\", \"deny\", \"none\"");
}

TEST_CASE("profile: told from the other documents by its type") {
    CHECK(is_permission_profile(nlohmann::json::parse(R"({"type":"managed"})")));
    CHECK(is_permission_profile(nlohmann::json::parse(R"({"type":"disabled"})")));
    CHECK(is_permission_profile(nlohmann::json::parse(R"({"type":"external","network":"enabled"})")));
    CHECK_FALSE(is_permission_profile(nlohmann::json::parse(R"({"type":"external-sandbox"})")));
    CHECK_FALSE(is_permission_profile(nlohmann::json::parse(R"({"type":"read-only"})")));
    CHECK_FALSE(is_permission_profile(nlohmann::json::parse(R"({"mode":"read-only"})")));
    CHECK_FALSE(is_permission_profile(nlohmann::json::parse(R"({"type":1})")));
    CHECK_FALSE(is_permission_profile(nlohmann::json::parse(R"(["managed"])")));
}
