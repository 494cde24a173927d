#include "git_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>

#include "mount_ops.h"
#include "policy/git_index.h"
#include "policy/policy.h"
#include "root_view.h"
#include "step_error.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "git view";

template <std::size_t N>
bool among(const std::string_view (&names)[N], const std::string& name) {
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// A regular file's bytes through dir; nullopt (errno set) when it cannot be
// read or is not a regular file.
std::optional<std::string> read_at(const Fd& dir, const std::string& name) {
    Fd fd(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (!fd.valid()) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return std::nullopt;
    }
    std::string out;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) return out;
        out.append(buf, static_cast<std::size_t>(n));
    }
}

bool same_file(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
           a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// HEAD as git writes it: "ref: refs/..." or an object id, one line.
bool plain_head(std::string_view head) {
    if (!head.ends_with('\n')) return false;
    head.remove_suffix(1);
    auto hex = [](std::string_view s) {
        return (s.size() == 40 || s.size() == 64) &&
               std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    };
    if (hex(head)) return true;
    if (!head.starts_with("ref: refs/")) return false;
    const std::string_view ref = head.substr(5);
    return ref.find("..") == std::string_view::npos && !ref.ends_with('/') && !ref.ends_with(".lock") &&
           std::all_of(ref.begin(), ref.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                      c == '.' || c == '_' || c == '-';
           });
}

void warn(const std::string& message) { report_error("git: " + message); }

}  // namespace

bool GitView::is_repository(const Fd& dir, const std::string& name) {
    const Fd git(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat head {
    }, objects{};
    return git.valid() && ::fstatat(git.get(), "HEAD", &head, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(head.st_mode) &&
           ::fstatat(git.get(), "objects", &objects, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(objects.st_mode);
}

GitView::GitView(const Fd& dir, const std::string& name, const std::string& path) : path_(path) {
    host_ = Fd(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!host_.valid()) fail_errno(kStep, "open " + path);
    struct stat top {};
    if (::fstat(host_.get(), &top) != 0) fail_errno(kStep, "fstat " + path);
    if (auto index = read_at(host_, "index"))
        if (auto parsed = parse_git_index(*index)) gitlinks_ = parsed->gitlinks;

    // The tmpfs goes on first: a mount can be attached only below one that is.
    view_ = new_filesystem("tmpfs", {{"mode", "0700"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, path);
    attach_at(view_, dir, name, path);

    std::unique_ptr<DIR, int (*)(DIR*)> listing(::fdopendir(::dup(host_.get())), ::closedir);
    if (!listing) fail_errno(kStep, "read " + path);
    std::vector<std::pair<std::string, struct stat>> entries;
    while (const dirent* d = ::readdir(listing.get())) {
        const std::string entry = d->d_name;
        if (entry == "." || entry == "..") continue;
        struct stat st {};
        if (::fstatat(host_.get(), entry.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        entries.emplace_back(entry, st);
    }
    for (const auto& [entry, st] : entries) populate(entry, st);

    // The host's mode and owner, as git checks them (safe.directory).
    Fd root(::openat(view_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid()) fail_errno(kStep, "open the view of " + path);
    (void)::fchown(root.get(), top.st_uid, top.st_gid);  // unmapped owner: pid 1's
    if (::fchmod(root.get(), top.st_mode & 07777) != 0) fail_errno(kStep, "chmod the view of " + path);
}

void GitView::populate(const std::string& name, const struct stat& st) {
    const std::string path = path_ + "/" + name;
    if (S_ISDIR(st.st_mode)) {
        if (::mkdirat(view_.get(), name.c_str(), 0700) != 0) fail_errno(kStep, "mkdir " + path + " in the view");
        Fd tree = clone_at(host_, name, path, AT_RECURSIVE);
        if (!among(kGitWritableDirectories, name)) set_readonly(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE);
        attach_at(tree, view_, name, path);
    } else if (S_ISREG(st.st_mode) && among(kGitConfigurationFiles, name)) {
        Fd point(::openat(view_.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        if (!point.valid()) fail_errno(kStep, "create " + path + " in the view");
        Fd tree = clone_at(host_, name, path, 0);
        set_readonly(tree.get(), "", AT_EMPTY_PATH);
        attach_at(tree, view_, name, path);
    } else if (S_ISREG(st.st_mode)) {
        copy_file(name, st);
    } else if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        const ssize_t n = ::readlinkat(host_.get(), name.c_str(), target, sizeof target - 1);
        if (n < 0) fail_errno(kStep, "readlink " + path);
        target[n] = '\0';
        if (::symlinkat(target, view_.get(), name.c_str()) != 0) fail_errno(kStep, "symlink " + path + " in the view");
    }
    // Anything else (a socket, a fifo) is not git's: left out.
}

void GitView::copy_file(const std::string& name, const struct stat& st) {
    const std::string path = path_ + "/" + name;
    Fd in(::openat(host_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!in.valid()) fail_errno(kStep, "open " + path);
    Copy copy{name, true, {}, {}};
    if (::fstat(in.get(), &copy.host) != 0 || !S_ISREG(copy.host.st_mode)) fail(kStep, path + " changed meanwhile");
    Fd out(::openat(view_.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 0777));
    if (!out.valid()) fail_errno(kStep, "create " + path + " in the view");
    for (off_t left = copy.host.st_size; left > 0;) {
        const ssize_t n = ::sendfile(out.get(), in.get(), nullptr, static_cast<std::size_t>(left));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail_errno(kStep, "copy " + path + " into the view");
        if (n == 0) break;  // shorter meanwhile: the copy is what was there
        left -= n;
    }
    (void)::fchown(out.get(), st.st_uid, st.st_gid);
    if (::fstat(out.get(), &copy.view) != 0) fail_errno(kStep, "fstat " + path + " in the view");
    copies_.push_back(std::move(copy));
}

std::string GitView::refusal(const std::string& name, const std::string& bytes) const {
    if (name == "HEAD" && !plain_head(bytes)) return "it names neither a ref under refs/ nor an object id";
    if (name != "index") return "";
    const auto index = parse_git_index(bytes);
    if (!index) return "it is not a whole git index";
    if (!index->shared_index.empty())
        return "it is a split index, whose shared part stays in the sandbox (git update-index --no-split-index "
               "on the host turns that off)";
    for (const auto& link : index->gitlinks)
        if (std::find(gitlinks_.begin(), gitlinks_.end(), link) == gitlinks_.end())
            return "it stages " + link +
                   " as a new submodule (a gitlink), and the host's git status would run git in it with the "
                   "configuration the sandbox gave it; add submodules outside the sandbox";
    return "";
}

void GitView::write_one(const Copy& copy) const {
    const std::string path = path_ + "/" + copy.name;
    struct stat now {};
    const bool in_view = ::fstatat(view_.get(), copy.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0;
    if (in_view && copy.on_host && same_file(now, copy.view)) return;  // unchanged
    if (!in_view && !copy.on_host) return;                             // never there
    std::string bytes;
    if (in_view) {
        auto read = read_at(view_, copy.name);
        if (!read) return warn(path + " was not written back: the sandbox left no regular file there");
        bytes = std::move(*read);
        if (const std::string why = refusal(copy.name, bytes); !why.empty())
            return warn(path + " was not written back: " + why);
    }
    // As git does: NAME.lock, made exclusively, is the right to change NAME.
    const std::string lock_name = copy.name + ".lock";
    Fd lock(::openat(host_.get(), lock_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                     in_view ? (now.st_mode & 0777) : 0600));
    if (!lock.valid())
        return warn(path + " was not written back: " + lock_name + ": " + std::strerror(errno) +
                    " (a git on the host is at work there); the sandbox's commits are in the refs");
    auto drop_lock = [&] { ::unlinkat(host_.get(), lock_name.c_str(), 0); };
    struct stat host {};
    const bool on_host = ::fstatat(host_.get(), copy.name.c_str(), &host, AT_SYMLINK_NOFOLLOW) == 0;
    if (on_host != copy.on_host || (on_host && !same_file(host, copy.host))) {
        drop_lock();
        return warn(path +
                    " was not written back: it changed on the host during the run; the sandbox's commits "
                    "are in the refs");
    }
    if (!in_view) {
        if (::unlinkat(host_.get(), copy.name.c_str(), 0) != 0) warn("removing " + path + ": " + std::strerror(errno));
        drop_lock();
        return;
    }
    if (!write_all(lock.get(), bytes) ||
        ::renameat(host_.get(), lock_name.c_str(), host_.get(), copy.name.c_str()) != 0) {
        warn(path + " was not written back: " + std::strerror(errno));
        drop_lock();
    }
}

void GitView::write_back() const {
    for (const std::string_view state : kGitStateFiles) {
        const std::string name(state);
        const auto copied = std::find_if(copies_.begin(), copies_.end(), [&](const Copy& c) { return c.name == name; });
        try {
            write_one(copied != copies_.end() ? *copied : Copy{name, false, {}, {}});
        } catch (const std::exception& e) {
            warn(path_ + "/" + name + " was not written back: " + e.what());
        }
    }
}

}  // namespace sbx::helper
