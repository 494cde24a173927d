#include "deny_plan.h"

#include <algorithm>

#include "step_error.h"
#include "util/path.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "mounts";

// Covered already: at or below a planned denied path, and in none of its holes.
bool hidden(const std::vector<DenyPlan>& plans, const std::vector<std::string>& roots, const std::string& path) {
    return std::any_of(plans.begin(), plans.end(), [&](const DenyPlan& p) {
        return (path == p.path || path_below(path, p.path)) &&
               std::none_of(p.holes.begin(), p.holes.end(), [&](std::size_t h) { return path_below(path, roots[h]); });
    });
}

// The outermost writable roots below the directory path (inner ones come
// with their clones).
std::vector<std::size_t> holes_in(const std::vector<std::string>& roots, const std::string& path) {
    std::vector<std::size_t> holes;
    for (std::size_t i = 0; i < roots.size(); ++i) {
        if (!path_below(roots[i], path)) continue;
        if (std::any_of(holes.begin(), holes.end(), [&](std::size_t h) { return path_below(roots[i], roots[h]); }))
            continue;
        holes.push_back(i);
    }
    return holes;
}

}  // namespace

DenyPlans plan_denials(const DenyFacts& facts) {
    std::vector<const DeniedPathFact*> denied;
    for (const auto& fact : facts.denied) denied.push_back(&fact);
    std::stable_sort(denied.begin(), denied.end(),
                     [](const auto* a, const auto* b) { return a->path.size() < b->path.size(); });
    DenyPlans out;
    for (const DeniedPathFact* fact : denied) {
        const std::string& path = fact->path;
        if (path == "/")
            fail(kStep, "a deny entry for / would hide the whole filesystem",
                 "deny the paths below / that must be hidden");
        const bool in_placeholder = std::any_of(facts.placeholders.begin(), facts.placeholders.end(),
                                                [&](const std::string& p) { return path_within(path, p); });
        if (hidden(out.covers, facts.roots, path) || in_placeholder) continue;
        switch (fact->kind) {
            case DeniedKind::Missing: continue;  // nothing there to hide
            case DeniedKind::Symlink: refuse_symlink_on_way(path);
            case DeniedKind::Unopenable: fail_errno(kStep, "open " + parent_path(path), {}, fact->error);
            case DeniedKind::Directory:
            case DeniedKind::Other: break;
        }
        DenyPlan plan{path, fact->kind == DeniedKind::Directory, {}, 0};
        if (plan.dir) plan.holes = holes_in(facts.roots, path);
        if (!plan.holes.empty()) {
            Skeleton skeleton;
            for (const std::size_t h : plan.holes)
                skeleton.emplace_back(facts.roots[h].substr(path.size() + 1), facts.root_is_directory[h]);
            plan.skeleton = out.skeletons.size();
            out.skeletons.push_back(std::move(skeleton));
        }
        out.covers.push_back(std::move(plan));
    }
    return out;
}

void refuse_symlink_on_way(const std::string& path) {
    fail(kStep,
         "cannot enforce the denied path " + path + ": a symlink is on its way now (it changed after it was resolved)",
         "name the path without the symlink, or remove the symlink");
}

}  // namespace sbx::helper
