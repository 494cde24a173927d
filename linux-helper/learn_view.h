// The view of a learning run (sbx learn, issue 34; docs/design.md): the
// host's files as they are, with every write landing in a throwaway layer,
// so that the recorder can note what the policy would refuse while the
// command goes on, and nothing on the host changes.
//
// One overlay of the host's "/" would do, but in a user namespace the kernel
// refuses it ("overlayfs: failed to clone lowerpath"): the mounts inherited
// there are locked to their parents, and overlayfs clones no lower layer with
// a locked mount below it.  An overlay of a directory with no mount below it
// works.  So the view is a mosaic, planned here from the host's mount points
// and directory listings (pure: the filesystem comes in through the lister)
// on the host's mounts, all made read-only first (build_learning_view):
//   - a directory with no mount point below it: one overlay on it (lower:
//     the host's directory; upper and work: the run's private tmpfs);
//   - a directory with a mount point below it: left as the host's,
//     read-only (a new name directly in it fails: EROFS), and each of its
//     entries planned again;
//   - a symlink there, or any other file (a regular file, a device, a
//     socket): left as the host's, read-only (planned, so that the plan says
//     what the view holds);
//   - /proc, /dev and /sys are the sandbox's own, as in every view (not
//     planned here).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace sbx::helper {

struct LearnItem {
    enum class Kind {
        Directory,  // the host's directory on the way to a mount point, read-only
        Overlay,    // the host's directory, with a throwaway upper layer
        Symlink,    // the host's symlink (to target), as it is
        ReadOnly,   // the host's file, read-only
    };
    Kind kind;
    std::string path;
    std::string target{};  // Symlink
    bool operator==(const LearnItem&) const = default;
};

// An entry of a host directory, as the lister gives it.
struct HostEntry {
    enum class Type { Directory, Symlink, Other };
    std::string name;
    Type type;
    std::string target{};  // Symlink
};

// The directories the view leaves to the sandbox's own mounts.
bool learn_view_leaves(const std::string& path);

// The items that make the view, parents first: from the host's mount points
// (absolute paths, in any order; "/" and those under /proc, /dev and /sys
// are ignored), a lister of a host directory's entries, and the tops to
// layer: "/" for root; for any other user the directories it may write in
// (learning_tops), since overlayfs in a user namespace cannot copy up a
// directory whose owner the namespace does not map (EOVERFLOW: /var/tmp,
// root's, above a project in it), and a top's own directory is never
// copied up.  Outside the tops the host's files stay read-only (EROFS),
// where such a user could not write either.
std::vector<LearnItem> plan_learning_view(const std::vector<std::string>& mount_points,
                                          const std::function<std::vector<HostEntry>(const std::string&)>& list,
                                          const std::vector<std::string>& tops = {"/"});

// A user's tops: the given directories (absolute, existing, resolved), none
// inside another, in their order.
std::vector<std::string> learning_tops(const std::vector<std::string>& writable);

// In pid 1's new mount namespace, before anything else of the view: the
// mounts made private, every mount read-only (recursively, as the policy's
// view makes them), an overlay on each planned directory (its upper layer in
// one private tmpfs, gone with the sandbox), the sandbox's own terminals and
// an empty /dev/shm of its own.  A directory on the way to a mount point is
// the host's, read-only: a new name directly in it fails (EROFS).  Throws
// StepError ("learning view").
// root: the host's root user (its tops: "/"); else the tops are the
// policy's workspace and writable roots, $HOME, $TMPDIR, /tmp and /var/tmp.
void build_learning_view(const CanonicalPolicy& policy, bool root);

// The policy a learning run's own layers (Landlock, seccomp) are made from,
// in its view: the network and limits as the policy says; every file
// readable; writable: the policy's writable roots (/dev/null among them) and
// every entry of / but /dev, /proc and /sys, where the layers are (never
// /dev: its device nodes are the host's, and a write to one is no write to
// a file).  Its denied paths are covered by the view.
CanonicalPolicy learning_layers(CanonicalPolicy policy);

// The mount points of /proc/self/mountinfo's text (its fifth field, with
// the kernel's octal escapes of space, tab, newline and backslash undone).
std::vector<std::string> mount_points_of(const std::string& text);

}  // namespace sbx::helper
