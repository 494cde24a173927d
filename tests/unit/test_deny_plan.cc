// plan_denials (linux-helper/deny_plan.h): step 6 of the view, which denied
// paths get a cover and which writable roots are holes in them, from facts
// given as data.
#include <cerrno>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "deny_plan.h"
#include "error_of.h"

using namespace sbx;
using helper::DeniedKind;
using helper::DenyFacts;
using helper::DenyPlans;
using helper::plan_denials;

namespace {

std::vector<std::string> covered(const DenyPlans& plans) {
    std::vector<std::string> out;
    for (const auto& p : plans.covers) out.push_back(p.path + (p.dir ? "/" : ""));
    return out;
}

}  // namespace

TEST_CASE("deny plan: parents first, what a denied directory holds is hidden already, missing paths skipped") {
    DenyFacts facts;
    facts.denied = {{"/home/u/.ssh/id_rsa", DeniedKind::Other},
                    {"/home/u/.ssh", DeniedKind::Directory},
                    {"/home/u/.aws", DeniedKind::Missing},
                    {"/etc/shadow", DeniedKind::Other}};
    const DenyPlans plans = plan_denials(facts);
    CHECK(covered(plans) == std::vector<std::string>{"/etc/shadow", "/home/u/.ssh/"});
    CHECK(plans.skeletons.empty());
    CHECK(plans.covers[1].holes.empty());
}

TEST_CASE("deny plan: the outermost writable roots below a denied directory are its holes, with a skeleton") {
    DenyFacts facts;
    facts.roots = {"/w", "/w/secret/out", "/w/secret/out/in", "/w/secret/log"};
    facts.root_is_directory = {true, true, true, false};
    facts.denied = {{"/w/secret", DeniedKind::Directory},
                    {"/w/secret/other", DeniedKind::Directory},  // hidden: in no hole
                    {"/w/secret/out/key", DeniedKind::Other},    // in a hole: covered again
                    {"/w/plain", DeniedKind::Directory}};
    const DenyPlans plans = plan_denials(facts);
    CHECK(covered(plans) == std::vector<std::string>{"/w/plain/", "/w/secret/", "/w/secret/out/key"});
    const auto& secret = plans.covers[1];
    CHECK(secret.holes == std::vector<std::size_t>{1, 3});  // not the inner /w/secret/out/in
    REQUIRE(plans.skeletons.size() == 1);
    CHECK(secret.skeleton == 0);
    CHECK(plans.skeletons[0] == helper::Skeleton{{"out", true}, {"log", false}});
    CHECK(plans.covers[0].holes.empty());
    CHECK(plans.covers[2].holes.empty());
}

TEST_CASE("deny plan: a denied file has no holes, whatever roots lie below its path") {
    DenyFacts facts;
    facts.roots = {"/w/f/x"};
    facts.root_is_directory = {true};
    facts.denied = {{"/w/f", DeniedKind::Other}};
    const DenyPlans plans = plan_denials(facts);
    REQUIRE(plans.covers.size() == 1);
    CHECK_FALSE(plans.covers[0].dir);
    CHECK(plans.covers[0].holes.empty());
}

TEST_CASE("deny plan: a path inside a placeholder is hidden already") {
    DenyFacts facts;
    facts.placeholders = {"/w/.codex"};
    facts.denied = {{"/w/.codex", DeniedKind::Directory}, {"/w/.codex/auth.json", DeniedKind::Symlink}};
    CHECK(plan_denials(facts).covers.empty());
}

TEST_CASE("deny plan: refusals, only for a path not hidden already") {
    DenyFacts root;
    root.denied = {{"/", DeniedKind::Directory}};
    CHECK(test::error_of([&] { plan_denials(root); }) ==
          "mounts: a deny entry for / would hide the whole filesystem; deny the paths below / that must be hidden");

    DenyFacts link;
    link.denied = {{"/w/link/secret", DeniedKind::Symlink}};
    CHECK_THAT(test::error_of([&] { plan_denials(link); }),
               Catch::StartsWith("mounts: cannot enforce the denied path /w/link/secret: a symlink is on its way"));
    link.denied.push_back({"/w", DeniedKind::Directory});
    CHECK(covered(plan_denials(link)) == std::vector<std::string>{"/w/"});

    DenyFacts unopenable;
    unopenable.denied = {{"/w/d/x", DeniedKind::Unopenable, EACCES}};
    CHECK(test::error_of([&] { plan_denials(unopenable); }) == "mounts: open /w/d: Permission denied");
}
