#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "error_of.h"
#include "fake_fs.h"
#include "policy/check.h"
#include "policy/git_index.h"
#include "policy/policy.h"

using namespace sbx;
using sbx::test::error_of;
using sbx::test::FakeFs;

namespace {

void put32(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += char((v >> shift) & 0xff);
}

// A version-2 index with SHA-1 ids: (path, mode) per entry, then a "link"
// extension naming a shared index when shared is not empty.
std::string index_v2(const std::vector<std::pair<std::string, std::uint32_t>>& entries,
                     const std::string& shared = "") {
    std::string out = "DIRC";
    put32(out, 2);
    put32(out, std::uint32_t(entries.size()));
    for (const auto& [path, mode] : entries) {
        const std::size_t start = out.size();
        out.append(24, '\0');  // ctime, mtime, dev, ino
        put32(out, mode);
        out.append(12, '\0');  // uid, gid, size
        out.append(20, '\x11');
        out += char(0);
        out += char(std::min<std::size_t>(path.size(), 0xfff));
        out += path;
        do out += '\0';
        while ((out.size() - start) % 8 != 0);
    }
    if (!shared.empty()) {
        out += "link";
        put32(out, 20);
        out += shared;
    }
    out.append(20, '\x22');  // the checksum (not verified)
    return out;
}

std::string read_whole(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

bool have_git() { return std::system("git --version >/dev/null 2>&1") == 0; }

// Runs a shell command with the repository as cwd and no user or system
// configuration.
void sh(const std::string& dir, const std::string& command) {
    const std::string full = "cd '" + dir +
                             "' && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
                             "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t " +
                             command + " >/dev/null 2>&1";
    REQUIRE(std::system(full.c_str()) == 0);
}

struct TempDir {
    std::string path;
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "sbx-git-index-XXXXXX").string();
        REQUIRE(::mkdtemp(t.data()) != nullptr);
        path = t;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("a git index: its gitlinks and its shared index") {
    const auto index = parse_git_index(index_v2({{"a", 0100644}, {"lib/sub", 0160000}, {"z", 0120000}}));
    REQUIRE(index);
    CHECK(index->version == 2);
    CHECK(index->hash_size == 20);
    CHECK(index->entries == 3);
    CHECK(index->gitlinks == std::vector<std::string>{"lib/sub"});
    CHECK(index->shared_index.empty());

    const auto split = parse_git_index(index_v2({{"s", 0160000}}, std::string(20, '\xab')));
    REQUIRE(split);
    CHECK(split->shared_index == "abababababababababababababababababababab");
    CHECK(split->gitlinks == std::vector<std::string>{"s"});
}

TEST_CASE("what is not a whole index is refused") {
    const std::string good = index_v2({{"a", 0100644}, {"s", 0160000}});
    CHECK_FALSE(parse_git_index(""));
    CHECK_FALSE(parse_git_index("DIRC"));
    CHECK_FALSE(parse_git_index(good.substr(0, good.size() - 1)));  // cut
    CHECK_FALSE(parse_git_index(good + "x"));                       // trailing bytes
    std::string v5 = good;
    v5[7] = 5;
    CHECK_FALSE(parse_git_index(v5));
    std::string more = good;
    more[11] = 3;  // counts an entry that is not there
    CHECK_FALSE(parse_git_index(more));
    std::string other = good;
    other[0] = 'X';
    CHECK_FALSE(parse_git_index(other));
}

TEST_CASE("gitlink paths git would write") {
    CHECK(plain_index_path("sub"));
    CHECK(plain_index_path("lib/sub-1"));
    CHECK_FALSE(plain_index_path(""));
    CHECK_FALSE(plain_index_path("/abs"));
    CHECK_FALSE(plain_index_path("a//b"));
    CHECK_FALSE(plain_index_path("a/"));
    CHECK_FALSE(plain_index_path("../up"));
    CHECK_FALSE(plain_index_path("a/./b"));
    CHECK_FALSE(plain_index_path("a/.git"));
    CHECK_FALSE(plain_index_path(".GIT/x"));
}

TEST_CASE("indexes git itself wrote: versions 2 to 4, split, SHA-256", "[git]") {
    if (!have_git()) {
        WARN("SKIP: no git");
        return;
    }
    TempDir t;
    const std::string r = t.path + "/r";
    std::filesystem::create_directories(r);
    sh(r,
       "git init -q . && echo x >f && git add f && git commit -q -m one && "
       "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),deep/er/sub && "
       "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub2");
    for (const char* version : {"2", "3", "4"}) {
        sh(r, std::string("git update-index --index-version ") + version +
                  (std::string(version) == "3" ? " && git update-index --skip-worktree f" : ""));
        const auto index = parse_git_index(read_whole(r + "/.git/index"));
        INFO("version " << version);
        REQUIRE(index);
        CHECK(index->version == unsigned(std::stoi(version)));
        CHECK(index->entries == 3);
        CHECK(index->gitlinks == std::vector<std::string>{"deep/er/sub", "sub2"});
    }
    sh(r, "git update-index --split-index");
    const auto split = parse_git_index(read_whole(r + "/.git/index"));
    REQUIRE(split);
    REQUIRE(split->shared_index.size() == 40);
    CHECK(std::filesystem::exists(r + "/.git/sharedindex." + split->shared_index));
    const auto shared = parse_git_index(read_whole(r + "/.git/sharedindex." + split->shared_index));
    REQUIRE(shared);
    CHECK(shared->gitlinks == std::vector<std::string>{"deep/er/sub", "sub2"});

    const std::string s = t.path + "/s";
    std::filesystem::create_directories(s);
    sh(s,
       "git init -q --object-format=sha256 . && echo x >f && git add f && git commit -q -m one && "
       "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub");
    const auto sha256 = parse_git_index(read_whole(s + "/.git/index"));
    REQUIRE(sha256);
    CHECK(sha256->hash_size == 32);
    CHECK(sha256->gitlinks == std::vector<std::string>{"sub"});
}

TEST_CASE("a submodule's .git is protected with the repository's, and so on down") {
    FakeFs fs;
    fs.dir("/w/.git/modules/sub/modules/inner").dir("/w/sub/inner").dir("/tmp").dir("/dev/shm");
    fs.file("/dev/null");
    fs.file("/w/.git/index", index_v2({{"f", 0100644}, {"sub", 0160000}, {"../up", 0160000}, {"gone", 0160000}}));
    fs.file("/w/sub/.git", "gitdir: ../.git/modules/sub\n");
    fs.file("/w/.git/modules/sub/index", index_v2({{"inner", 0160000}}));
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    const CanonicalPolicy p = resolve(in, fs.env("/w"));
    std::vector<std::string> prot;
    for (const auto& w : p.writable)
        if (w.path == "/w") prot = w.protected_paths;
    auto held = [&](const std::string& path) { return std::find(prot.begin(), prot.end(), path) != prot.end(); };
    CHECK(held("/w/.git"));
    CHECK(held("/w/sub/.git"));
    CHECK(held("/w/sub/inner/.git"));  // the submodule's own submodule
    CHECK(held("/w/gone/.git"));       // not checked out: held (a placeholder) all the same
    CHECK_FALSE(held("/up/.git"));
    CHECK_FALSE(held("/w/../up/.git"));

    SECTION("--unprotect .git lifts them with it") {
        PolicyInput un = in;
        un.unprotect = {".git"};
        const CanonicalPolicy q = resolve(un, fs.env("/w"));
        for (const auto& w : q.writable)
            if (w.path == "/w")
                CHECK(std::find(w.protected_paths.begin(), w.protected_paths.end(), "/w/sub/.git") ==
                      w.protected_paths.end());
    }
}

TEST_CASE("git_write: only with workspace-write and a protected .git; in the JSON only when set") {
    FakeFs fs;
    fs.dir("/w/.git").dir("/tmp").dir("/dev/shm");
    fs.file("/dev/null");
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.git_write = true;
    const CanonicalPolicy p = resolve(in, fs.env("/w"));
    CHECK(p.git_write);
    CHECK(to_json(p).at("git_write") == true);
    CHECK(parse_sandbox_policy_text(to_json_text(p), "t", fs.env("/w")) == p);
    // sbx check says what the view does.
    const Verdict index = check_access(p, Access::Write, "/w/.git/index.lock", fs.env("/w"));
    CHECK(index.allowed);
    CHECK(index.rule == "git's state in /w/.git (--git-write)");
    CHECK(check_access(p, Access::Write, "/w/.git/refs/heads/main", fs.env("/w")).allowed);
    CHECK_FALSE(check_access(p, Access::Write, "/w/.git/config", fs.env("/w")).allowed);
    CHECK_FALSE(check_access(p, Access::Write, "/w/.git/hooks/pre-commit", fs.env("/w")).allowed);
    in.git_write.reset();
    CHECK_FALSE(to_json(resolve(in, fs.env("/w"))).contains("git_write"));

    PolicyInput ro;
    ro.mode = Mode::ReadOnly;
    ro.git_write = true;
    CHECK(error_of([&] { resolve(ro, fs.env("/w")); })
              .find("--git-write: git's writable parts of .git need -p "
                    "workspace-write (the policy is read-only") == 0);
    PolicyInput open = in;
    open.git_write = true;
    open.unprotect = {".git"};
    CHECK(error_of([&] { resolve(open, fs.env("/w")); }).find("--git-write and an unprotected .git together") == 0);
}
