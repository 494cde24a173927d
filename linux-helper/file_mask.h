// A file of the sandbox's view shown with other content (sbx's
// --mask-file N:PATH, for its masked secrets, issue 36; and the sandbox's own
// /etc/resolv.conf of transparent TCP): a read-only tmpfs holding one file,
// mounted over the path, in pid 1's mount namespace once the view is built
// and before the layers.  Reading the path gives the content; writing,
// renaming or removing it fails (EROFS, EBUSY), inside a writable root too;
// the file beneath is out of reach through the path and /proc/self/root.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sbx::helper {

struct FileMask {
    std::string path;  // absolute, as given
    std::string content;
};

// The content of each --mask-file descriptor, read to its end (at most
// 1 MiB) and closed.  Throws StepError ("mask file").
std::vector<FileMask> read_file_masks(const std::vector<std::pair<int, std::string>>& given);

// content over the regular file at path (its symlinks resolved in the
// view), on a read-only mount (writes fail with EROFS).  Throws StepError
// naming step.
void mount_content_over(const std::string& path, std::string_view content, std::string_view step, std::string_view fix);

}  // namespace sbx::helper
