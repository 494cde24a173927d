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

TEST_CASE("recorder: writes outside the writable roots are refused, inside allowed") {
    const CanonicalPolicy p = workspace_write();
    CHECK(policy_refuses(p, "create", "/etc/x"));
    CHECK(policy_refuses(p, "write", "/etc/passwd"));
    CHECK(policy_refuses(p, "chmod", "/etc/passwd"));
    CHECK(policy_refuses(p, "remove", "/etc/hostname"));
    CHECK_FALSE(policy_refuses(p, "create", "/work/repo/f"));
    CHECK_FALSE(policy_refuses(p, "write", "/work/repo/sub/f"));
    CHECK_FALSE(policy_refuses(p, "create", "/tmp/x"));
    CHECK_FALSE(policy_refuses(p, "write", "/dev/null"));
}

TEST_CASE("recorder: protected names are refused, also where they do not exist yet") {
    const CanonicalPolicy p = workspace_write();
    CHECK(policy_refuses(p, "create", "/work/repo/.git/hooks/x"));
    CHECK(policy_refuses(p, "write", "/work/repo/.git/config"));
    CHECK(policy_refuses(p, "create", "/work/repo/.sbx"));
    CHECK(policy_refuses(p, "remove", "/work/repo/.git"));
    CHECK_FALSE(policy_refuses(p, "create", "/work/repo/.gitignore"));
}

TEST_CASE("recorder: a namespace change needs its parent; a content change only the object") {
    const CanonicalPolicy p = workspace_write();
    // The writable root itself: its contents may change, not its name.
    CHECK_FALSE(policy_refuses(p, "write", "/work/repo"));
    CHECK_FALSE(policy_refuses(p, "chmod", "/work/repo"));
    CHECK(policy_refuses(p, "remove", "/work/repo"));
    CHECK(policy_refuses(p, "rename", "/work/repo"));
    CHECK(policy_refuses(p, "create", "/"));
}

TEST_CASE("recorder: read-only refuses every write but /dev/null") {
    sbx::test::FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").file("/dev/null");
    const CanonicalPolicy p = resolve(PolicyInput{}, fs.env("/work/repo"));
    CHECK(policy_refuses(p, "create", "/work/repo/f"));
    CHECK(policy_refuses(p, "create", "/tmp/f"));
    CHECK_FALSE(policy_refuses(p, "write", "/dev/null"));
}
