// Layer 3 under git_write (sbx run --git-write): the view of a repository's
// .git in which git can commit, while nothing git executes or takes its
// configuration from can change on the host.
//
// In pid 1, where the view would bind a protected .git directory read-only
// (mounts.h step 5), a private tmpfs (nosuid, nodev; the host's mode and
// owner) goes over it instead, holding:
//   - objects/, refs/, logs/, reftable/ and lfs/: the host's, writable (the
//     writable root's own directories, bound: objects and refs a commit
//     makes are on the host at once, as git itself writes them);
//   - every other directory (hooks/, info/, modules/, worktrees/,
//     rebase-merge/, ...): the host's, read-only;
//   - config, config.worktree, commondir and gitdir: the host's, read-only;
//   - every other regular file (index, HEAD, ORIG_HEAD, packed-refs, ...): a
//     copy, writable; a symlink: the same symlink.
// So git's lock-and-rename of the index and HEAD works, on the copies, and a
// name made at the top (commondir, config.worktree, hooks/) exists only in
// the sandbox.
//
// In pid 1 once the command and every other process of the sandbox have
// ended (write_back): of the copies, only the files git keeps its state in
// (kGitStateFiles, policy/policy.h) go back to the host, each the way git writes it: into
// NAME.lock, created exclusively (a git at work on the host keeps its own),
// only where the host's NAME is still the one copied at the start (else it is
// left as it is, with a warning), renamed over NAME; a removed one is
// removed.  Checked before: an index must be whole, no split index, and stage
// no gitlink the host's index did not have (a repository the command made,
// which the host's `git status` would run `git status` in, with that
// repository's configuration); HEAD must name a ref under refs/ or an object
// id.  Everything else stays behind (rebase-merge/ and sequencer/, whose todo
// lists can hold exec lines; a commondir made at the top).
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "util/fd.h"

namespace sbx::helper {

class GitView {
public:
    // Mounts the view over name (".git", a directory) in dir, the protected
    // path path.
    GitView(const Fd& dir, const std::string& name, const std::string& path);

    // Whether name in dir is a git directory this user can read (a HEAD
    // file and an objects directory in it): not a placeholder, not an empty
    // or foreign directory, which stay bound read-only as they are.
    static bool is_repository(const Fd& dir, const std::string& name);

    // Writes back what git changed (above); never throws: what cannot be
    // written back is told on stderr, one line each.
    void write_back() const;

private:
    struct Copy {
        std::string name;
        bool on_host = false;  // the host had it at the start
        struct stat host {};   // the host's, as copied
        struct stat view {};   // the copy's, as made
    };

    void populate(const std::string& name, const struct stat& st);
    void copy_file(const std::string& name, const struct stat& st);
    void write_one(const Copy& copy) const;
    // Why bytes (the sandbox's NAME) may not reach the host; "" when they may.
    std::string refusal(const std::string& name, const std::string& bytes) const;

    std::string path_;
    Fd host_;  // the host's .git, under the view
    Fd view_;  // the tmpfs over it
    std::vector<Copy> copies_;
    std::vector<std::string> gitlinks_;  // the host's index's, at the start
};

}  // namespace sbx::helper
