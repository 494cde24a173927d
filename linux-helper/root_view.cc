// A stub until the view without the host's root (root_view.cc of the
// root-view branch) is merged: a policy without a readable "/" is refused.
#include "root_view.h"

#include "util.h"

namespace sbx::helper {

void enter_entries_root(const CanonicalPolicy&) {
    fail("mounts", "a view without the root is not built yet", "add a ':root' read entry (drop --minimal)");
}

}  // namespace sbx::helper
