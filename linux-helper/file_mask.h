// A file of the sandbox's view shown with other content (sbx's
// --mask-file N:PATH, for its masked secrets, issue 36; and the sandbox's own
// /etc/resolv.conf of transparent TCP): a read-only tmpfs holding one file,
// mounted over the path, in pid 1's mount namespace once the view is built
// and before the layers.  Reading the path gives the content; writing,
// renaming or removing it fails (EROFS, EBUSY), inside a writable root too;
// the file beneath is out of reach through the path and /proc/self/root.
// The file has the real one's permissions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/policy.h"

namespace sbx::helper {

struct FileMask {
    std::string path;  // absolute, as given
    std::string content;
};

// The content of each --mask-file descriptor, read to its end (at most
// 1 MiB) and closed.  Throws StepError ("mask file").
std::vector<FileMask> read_file_masks(const std::vector<std::pair<int, std::string>>& given);

// In pid 1, once the view is built: each mask's content over its file, in
// order.  Refused (StepError "mask file", naming the path and a fix): a path
// that is no regular file in the view, one under /proc, one the policy
// denies or does not let the command read, and a file covered twice (two
// paths that lead to one file).
void install_masks(const std::vector<FileMask>& masks, const CanonicalPolicy& policy);

// content over the regular file at path (its symlinks resolved in the
// view), on a read-only mount (writes fail with EROFS).  Throws StepError
// naming step.
void mount_content_over(const std::string& path, std::string_view content, std::string_view step, std::string_view fix);

}  // namespace sbx::helper
