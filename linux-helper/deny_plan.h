// Step 6 of the view (mounts.h), planned: which denied paths get a cover,
// and which writable roots are holes in a denied directory.  Pure: what the
// view holds at each path comes in as data (DenyFacts, which mounts.cc
// gathers just before, in the view, without following a symlink), so the
// plan is unit-tested (tests/unit/test_deny_plan.cc).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sbx::helper {

// What the view holds at a denied path before any cover.
enum class DeniedKind {
    Missing,     // nothing (its parent missing, or not a directory)
    Directory,   //
    Other,       // a file, a device, a socket, a fifo
    Symlink,     // a symlink, at the path or on its way (refused: it changed after resolve)
    Unopenable,  // its parent could not be opened (error)
};

struct DeniedPathFact {
    std::string path;
    DeniedKind kind = DeniedKind::Missing;
    int error = 0;  // Unopenable: the errno of opening the parent
};

// The facts the plan is made from.
struct DenyFacts {
    std::vector<DeniedPathFact> denied;     // every denied path of the policy, in any order
    std::vector<std::string> placeholders;  // the host's placeholders: what lies inside one is hidden already
    std::vector<std::string> roots;         // the writable roots that exist, parents first
    std::vector<bool> root_is_directory;    // for each of roots (a root that went away counts as one)
};

// For a denied directory with writable holes: each hole's path relative to
// it, and whether the hole is a directory.
using Skeleton = std::vector<std::pair<std::string, bool>>;

// A denied path that exists and is not hidden already, to be covered.
struct DenyPlan {
    std::string path;
    bool dir = false;
    std::vector<std::size_t> holes;  // indexes in DenyFacts::roots: the outermost writable roots below it
    std::size_t skeleton = 0;        // with holes: its index in DenyPlans::skeletons
};

struct DenyPlans {
    std::vector<DenyPlan> covers;  // parents first
    std::vector<Skeleton> skeletons;
};

// Each denied path that exists, parents first; one below a denied directory
// is left out (hidden already) unless it lies in a hole of it, and so is one
// inside a placeholder.  Refuses (StepError) a deny of "/", a denied path
// reached through a symlink and one whose parent cannot be opened, when it
// is not hidden already.
DenyPlans plan_denials(const DenyFacts&);

// Refuses a denied path with a symlink on its way now.
[[noreturn]] void refuse_symlink_on_way(const std::string& path);

}  // namespace sbx::helper
