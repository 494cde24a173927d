// Ubuntu's AppArmor restriction of unprivileged user namespaces: the
// decision from the files' contents (util/apparmor_userns.h).
#include <catch2/catch.hpp>

#include "util/apparmor_userns.h"

using namespace sbx::apparmor;

namespace {

constexpr const char* kHelper = "/usr/libexec/sbx/codex-linux-sandbox";
constexpr const char* kFile = "/etc/apparmor.d/sbx-helper";

// /sys/kernel/security/apparmor/profiles as Ubuntu 24.04 lists it (an
// excerpt), with and without sbx's profile.
constexpr const char* kProfilesWithout =
    "unprivileged_userns (enforce)\n"
    "ch-run (unconfined)\n"
    "chrome (unconfined)\n"
    "/usr/bin/man (enforce)\n"
    "lsb_release (enforce)\n";
const std::string kProfilesWith = std::string(kProfilesWithout) + "sbx-helper (unconfined)\n";

// The profile file as meson installs it for /usr/libexec/sbx.
constexpr const char* kProfileText =
    "# AppArmor profile for sbx's Linux helper, codex-linux-sandbox.\n"
    "abi <abi/4.0>,\n"
    "include <tunables/global>\n"
    "\n"
    "profile sbx-helper /usr/libexec/sbx/codex-linux-sandbox flags=(unconfined) {\n"
    "  userns,\n"
    "}\n";

UsernsFacts restricted_facts() {
    UsernsFacts f;
    f.restrict_userns = "1\n";
    return f;
}

}  // namespace

TEST_CASE("no restriction: the fix for what refuses user namespaces, no AppArmor profile advice") {
    for (const auto& value : {std::optional<std::string>{}, std::optional<std::string>{"0\n"}}) {
        UsernsFacts f;
        f.restrict_userns = value;
        f.profiles = kProfilesWithout;
        auto fix_of = [&](const UsernsFacts& facts) {
            const UsernsRestriction r = assess(facts, kHelper);
            CHECK_FALSE(r.restricted);
            const std::string fix = userns_fix(r, kHelper, kFile);
            CHECK(fix.find("apparmor_restrict") == std::string::npos);
            CHECK(fix.find("sbx-helper") == std::string::npos);
            return fix;
        };
        // Nothing tells: sbx doctor, never a sysctl that may not be the cause.
        CHECK(fix_of(f).find("sysctl") == std::string::npos);
        CHECK(fix_of(f).find("sbx doctor") != std::string::npos);
        f.max_user_namespaces = "63476\n";
        f.unprivileged_userns_clone = "1\n";
        CHECK(fix_of(f).find("sysctl") == std::string::npos);
        // A container: its seccomp profile, not the host's sysctls.
        UsernsFacts in_docker = f;
        in_docker.container = "docker (/.dockerenv)";
        const std::string docker = fix_of(in_docker);
        CHECK(docker.find("container (docker (/.dockerenv))") != std::string::npos);
        CHECK(docker.find("seccomp profile that allows unshare and clone of user namespaces") != std::string::npos);
        CHECK(docker.find("sysctl") == std::string::npos);
        // A sysctl that reads 0 is the cause, container or not.
        UsernsFacts off = in_docker;
        off.max_user_namespaces = "0\n";
        CHECK(fix_of(off).find("sysctl user.max_user_namespaces=15000") != std::string::npos);
        UsernsFacts debian = f;
        debian.unprivileged_userns_clone = "0\n";
        CHECK(fix_of(debian).find("sysctl kernel.unprivileged_userns_clone=1") != std::string::npos);
    }
}

TEST_CASE("restricted, profile not loaded: load the profile first, the sysctl only after it") {
    UsernsFacts f = restricted_facts();
    f.profiles = kProfilesWithout;
    f.profile_text = kProfileText;
    const UsernsRestriction r = assess(f, kHelper);
    CHECK(r.restricted);
    CHECK(r.loaded == Known::No);
    CHECK(r.installed_covers == Known::Yes);
    const std::string fix = userns_fix(r, kHelper, kFile);
    CHECK(fix.find("sbx's profile sbx-helper is not loaded") != std::string::npos);
    const auto load = fix.find("sudo apparmor_parser -r /etc/apparmor.d/sbx-helper");
    const auto sysctl = fix.find("kernel.apparmor_restrict_unprivileged_userns=0");
    REQUIRE(load != std::string::npos);
    REQUIRE(sysctl != std::string::npos);
    CHECK(load < sysctl);
    CHECK(fix.find("every program") != std::string::npos);
    // Installed already: no word of where to get it.
    CHECK(fix.find("installed by") == std::string::npos);
}

TEST_CASE("restricted, profile file absent: where the profile comes from") {
    UsernsFacts f = restricted_facts();
    f.profiles = kProfilesWithout;
    const UsernsRestriction r = assess(f, kHelper);
    CHECK(r.installed_covers == Known::No);
    CHECK_FALSE(r.attaches);
    const std::string fix = userns_fix(r, kHelper, kFile);
    CHECK(fix.find("apparmor_parser -r /etc/apparmor.d/sbx-helper") != std::string::npos);
    CHECK(fix.find("installed by sbx's Debian package and by meson install") != std::string::npos);
    CHECK(fix.find("release archive") != std::string::npos);
}

TEST_CASE("restricted, the profiles list unreadable (not root): loaded or not is unknown") {
    UsernsFacts f = restricted_facts();
    f.profile_text = kProfileText;
    const UsernsRestriction r = assess(f, kHelper);
    CHECK(r.loaded == Known::Unknown);
    const std::string fix = userns_fix(r, kHelper, kFile);
    CHECK(fix.find("not loaded") == std::string::npos);
    CHECK(fix.find("sudo apparmor_parser -r /etc/apparmor.d/sbx-helper") != std::string::npos);
}

TEST_CASE("restricted, profile loaded: found by name or by the helper's path") {
    UsernsFacts f = restricted_facts();
    f.profiles = kProfilesWith;
    CHECK(assess(f, kHelper).loaded == Known::Yes);
    f.profiles = std::string(kProfilesWithout) + "/usr/libexec/sbx/codex-linux-sandbox (unconfined)\n";
    CHECK(assess(f, kHelper).loaded == Known::Yes);
    // Another profile whose name only begins like it is not it.
    f.profiles = std::string(kProfilesWithout) + "sbx-helper-old (unconfined)\n";
    CHECK(assess(f, kHelper).loaded == Known::No);
}

TEST_CASE("restricted, profile loaded but the helper does not run under it: the path it attaches to") {
    UsernsFacts f = restricted_facts();
    f.profiles = kProfilesWith;
    f.label = "unconfined\n";
    f.profile_text = kProfileText;
    const std::string elsewhere = "/usr/local/libexec/sbx/codex-linux-sandbox";
    const UsernsRestriction r = assess(f, elsewhere);
    CHECK(r.confined == Known::No);
    CHECK(r.installed_covers == Known::No);
    REQUIRE(r.attaches);
    CHECK(*r.attaches == kHelper);
    const std::string fix = userns_fix(r, elsewhere, kFile);
    CHECK(fix.find("attaches to /usr/libexec/sbx/codex-linux-sandbox, not to this helper " + elsewhere) !=
          std::string::npos);
    CHECK(fix.find("apparmor_parser -r") < fix.find("apparmor_restrict_unprivileged_userns=0"));

    // Loaded, but no file to read (installed elsewhere): by name.
    f.profile_text.reset();
    const std::string no_file = userns_fix(assess(f, elsewhere), elsewhere, kFile);
    CHECK(no_file.find("is loaded but does not cover " + elsewhere) != std::string::npos);
}

TEST_CASE("restricted, the helper runs under its profile and is still refused") {
    UsernsFacts f = restricted_facts();
    f.label = "sbx-helper (unconfined)\n";
    f.profile_text = kProfileText;
    const UsernsRestriction r = assess(f, kHelper);
    CHECK(r.confined == Known::Yes);
    CHECK(r.loaded == Known::Yes);  // its own label says so, though the list is unreadable
    const std::string fix = userns_fix(r, kHelper, kFile);
    CHECK(fix.find("under its profile sbx-helper") != std::string::npos);
    CHECK(fix.find("grants 'userns,'") != std::string::npos);
    // A stacked label is the profile too.
    f.label = "sbx-helper//&unprivileged_userns (enforce)";
    CHECK(assess(f, kHelper).confined == Known::Yes);
    f.label = "sbx-helperx (unconfined)";
    CHECK(assess(f, kHelper).confined == Known::No);
}

TEST_CASE("profile_attachment reads the attachment of the sbx-helper line") {
    CHECK(profile_attachment(kProfileText) == std::optional<std::string>(kHelper));
    CHECK(profile_attachment("  profile sbx-helper \"/opt/my dir/codex-linux-sandbox\" flags=(unconfined) {\n") ==
          std::optional<std::string>("/opt/my dir/codex-linux-sandbox"));
    CHECK(profile_attachment("profile sbx-helper /x/codex-linux-sandbox{\n") ==
          std::optional<std::string>("/x/codex-linux-sandbox"));
    CHECK_FALSE(profile_attachment("profile bwrap /usr/bin/bwrap flags=(unconfined) {\n"));
    CHECK_FALSE(profile_attachment("# profile sbx-helper /x\n"));
    CHECK_FALSE(profile_attachment(""));
}

TEST_CASE("label_name: the name before the mode") {
    CHECK(label_name("sbx-helper (unconfined)\n") == "sbx-helper");
    CHECK(label_name("unconfined\n") == "unconfined");
    CHECK(label_name(std::string_view("unconfined\0", 11)) == "unconfined");
    CHECK(label_name("1\n") == "1");
}
