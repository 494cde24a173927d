// The recorder's verdict (linux-helper/recorder.h): which operations on which
// paths the policy refuses.  The notifications themselves are tested end to
// end in tests/integration/recorder.sh.
#include <catch2/catch.hpp>

#include "fake_fs.h"
#include "recorder.h"

using namespace sbx;
using sbx::helper::policy_refuses;

namespace {

CanonicalPolicy workspace_write() {
    sbx::test::FakeFs fs;
    fs.dir("/work/repo/.git").dir("/tmp").dir("/dev/shm").dir("/etc").file("/dev/null");
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    return resolve(in, fs.env("/work/repo"));
}

}  // namespace

struct Case {
    const char* op;
    const char* path;
    bool refused;
};

TEST_CASE("recorder: workspace-write refuses writes outside the writable roots and to protected names") {
    const CanonicalPolicy p = workspace_write();
    const Case cases[] = {
        {"create", "/etc/x", true},
        {"write", "/etc/passwd", true},
        {"chmod", "/etc/passwd", true},
        {"remove", "/etc/hostname", true},
        {"create", "/work/repo/f", false},
        {"write", "/work/repo/sub/f", false},
        {"create", "/tmp/x", false},
        {"write", "/dev/null", false},
        // Protected names, also where they do not exist yet.
        {"create", "/work/repo/.git/hooks/x", true},
        {"write", "/work/repo/.git/config", true},
        {"create", "/work/repo/.sbx", true},
        {"remove", "/work/repo/.git", true},
        {"create", "/work/repo/.gitignore", false},
        // A namespace change needs the parent too: the writable root's
        // contents may change, not its name.
        {"write", "/work/repo", false},
        {"chmod", "/work/repo", false},
        {"remove", "/work/repo", true},
        {"rename", "/work/repo", true},
        {"create", "/", true},
    };
    for (const Case& c : cases) {
        INFO(c.op << " " << c.path);
        CHECK(policy_refuses(p, c.op, c.path) == c.refused);
    }
}

TEST_CASE("recorder: read-only refuses every write but /dev/null") {
    sbx::test::FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").file("/dev/null");
    const CanonicalPolicy p = resolve(PolicyInput{}, fs.env("/work/repo"));
    CHECK(policy_refuses(p, "create", "/work/repo/f"));
    CHECK(policy_refuses(p, "create", "/tmp/f"));
    CHECK_FALSE(policy_refuses(p, "write", "/dev/null"));
}

TEST_CASE("recorder: exec is refused only where the policy gives no read access") {
    sbx::test::FakeFs fs;
    fs.dir("/work/repo").dir("/opt/tools/bin").dir("/usr/bin").dir("/etc").file("/dev/null");
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    in.extra_entries.push_back({{FsTarget::Kind::Path, "/opt/tools"}, FsAccess::Deny, "--deny"});
    const CanonicalPolicy p = resolve(in, fs.env("/work/repo"));
    CHECK(policy_refuses(p, "exec", "/opt/tools/bin/x"));
    CHECK_FALSE(policy_refuses(p, "exec", "/usr/bin/ls"));        // read-only is executable
    CHECK_FALSE(policy_refuses(p, "exec", "/work/repo/run.sh"));  // so is writable
    in.extra_entries.clear();
    in.read_base = ReadBase::Minimal;
    const CanonicalPolicy minimal = resolve(in, fs.env("/work/repo"));
    CHECK(policy_refuses(minimal, "exec", "/opt/tools/bin/x"));  // no entry covers it
    CHECK_FALSE(policy_refuses(minimal, "exec", "/usr/bin/ls"));
}

TEST_CASE("recorder: a read is refused where an exec is (sbx learn --reads)") {
    sbx::test::FakeFs fs;
    fs.dir("/work/repo").dir("/opt/tool/share").dir("/opt/secret").dir("/usr/bin").dir("/etc").file("/dev/null");
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    in.read_base = ReadBase::Minimal;
    in.extra_entries.push_back({{FsTarget::Kind::Path, "/opt/secret"}, FsAccess::Deny, "--deny"});
    const CanonicalPolicy p = resolve(in, fs.env("/work/repo"));
    CHECK(policy_refuses(p, "read", "/opt/tool/share/data"));  // no entry covers it
    CHECK(policy_refuses(p, "read", "/opt/tool/share"));       // nor its listing
    CHECK(policy_refuses(p, "read", "/opt/secret/key"));       // denied
    CHECK_FALSE(policy_refuses(p, "read", "/etc/passwd"));     // --minimal's set
    CHECK_FALSE(policy_refuses(p, "read", "/work/repo/f"));    // the workspace
    CHECK_FALSE(policy_refuses(p, "read", "/dev/null"));
    CHECK_FALSE(policy_refuses(p, "read", "/proc/self/status"));
}
