#include "cli/hard_links.h"

#include <sys/stat.h>

#include <filesystem>

#include <fmt/core.h>

#include "util/error.h"
#include "util/path.h"
#include "util/shell_word.h"

namespace sbx::cli {
namespace {

namespace fs = std::filesystem;

// A --deny entry, or a read entry that a writable root contains.
bool withholds(const CanonicalPolicy& p, const ResolvedEntry& e) {
    if (e.protection || !e.exists) return false;
    if (e.access == FsAccess::Deny) return true;
    if (e.access != FsAccess::Read) return false;
    for (const auto& root : p.writable)
        if (path_below(e.path, root.path)) return true;
    return false;
}

void check_file(const std::string& path, const struct stat& st, const ResolvedEntry& e, LinkedFiles& out) {
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) out.files.push_back({path, e.rule, st.st_nlink});
}

}  // namespace

LinkedFiles linked_files(const CanonicalPolicy& policy, std::size_t max_entries) {
    LinkedFiles out;
    std::size_t seen = 0;
    if (!policy.sandboxed_filesystem()) return out;
    for (const auto& e : policy.resolved) {
        if (!withholds(policy, e)) continue;
        struct stat st {};
        if (::lstat(e.path.c_str(), &st) != 0) continue;
        ++seen;
        if (!S_ISDIR(st.st_mode)) {
            check_file(e.path, st, e, out);
            continue;
        }
        const dev_t device = st.st_dev;
        std::error_code ec;
        fs::recursive_directory_iterator it(e.path, fs::directory_options::skip_permission_denied, ec), end;
        for (; !ec && it != end; it.increment(ec)) {
            if (++seen > max_entries) {
                out.truncated = true;
                return out;
            }
            const std::string path = it->path().string();
            struct stat entry {};
            if (::lstat(path.c_str(), &entry) != 0) continue;
            if (S_ISDIR(entry.st_mode) && entry.st_dev != device) it.disable_recursion_pending();
            check_file(path, entry, e, out);
        }
    }
    return out;
}

void refuse_linked_files(const CanonicalPolicy& policy) {
    const LinkedFiles found = linked_files(policy);
    if (found.files.empty()) return;
    const LinkedFile& f = found.files.front();
    const nlink_t others = f.links - 1;
    throw Error(fmt::format(
        "{} has {} other hard link{}, which the entry '{}' does not cover (the sandbox "
        "withholds paths, not files); find {} with 'find / -xdev -samefile {}' and remove {}{}",
        f.path, others, others == 1 ? "" : "s", f.entry, others == 1 ? "it" : "them", shell_word(f.path),
        others == 1 ? "it" : "them",
        found.files.size() > 1 ? fmt::format(" ({} more such files under the entries)", found.files.size() - 1) : ""));
}

}  // namespace sbx::cli
