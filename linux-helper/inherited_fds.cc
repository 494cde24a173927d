#include "inherited_fds.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "mount_ops.h"
#include "step_error.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "stdio";
constexpr const char* kNames[] = {"stdin", "stdout", "stderr"};
// The status flags that a reopened description keeps.
constexpr int kKeptFlags = O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT;

struct Inherited {
    struct stat st {};
    std::string path;  // as /proc/self/fd names it
    int flags = 0;
    int shares = -1;  // an earlier descriptor of the same description
};

std::string link_of(int fd) {
    char proc[32], target[PATH_MAX];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(proc, target, sizeof target);
    if (n <= 0 || static_cast<std::size_t>(n) >= sizeof target)
        fail_errno(kStep, std::string("readlink ") + proc, "mount /proc");
    return std::string(target, static_cast<std::size_t>(n));
}

// Whether descriptors a and b share one open file description (`>log 2>&1`).
bool same_description(int a, int b) {
    const pid_t self = ::getpid();
    const long same = ::syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);
    if (same >= 0) return same == 0;
    // Without kcmp: the same file, status flags and offset.
    struct stat x {
    }, y{};
    return ::fstat(a, &x) == 0 && ::fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino &&
           ::fcntl(a, F_GETFL) == ::fcntl(b, F_GETFL) && ::lseek(a, 0, SEEK_CUR) == ::lseek(b, 0, SEEK_CUR);
}

[[noreturn]] void refuse(int fd, const Inherited& in, const std::string& why) {
    const bool writing = (in.flags & O_ACCMODE) != O_RDONLY;
    fail(kStep,
         std::string(kNames[fd]) + " is " + in.path + ", which cannot be opened again inside the sandbox's view" +
             (writing ? " for writing" : "") + " (" + why + ")",
         writing ? "write it through a pipe (... | cat > FILE), or make its directory writable"
                 : "pass it through a pipe (cat FILE | ...)");
}

Fd reopen(int fd, const Inherited& in) {
    int flags = (in.flags & O_PATH) ? O_PATH : (in.flags & (O_ACCMODE | kKeptFlags)) | O_NOCTTY;
    if (S_ISDIR(in.st.st_mode)) flags |= O_DIRECTORY;
    // A FIFO's open waits for the other end: not here.
    if (S_ISFIFO(in.st.st_mode)) flags |= O_NONBLOCK;
    Fd again = open_exact(in.path, flags);
    if (!again.valid()) refuse(fd, in, std::strerror(errno));
    struct stat st {};
    if (::fstat(again.get(), &st) != 0 || st.st_dev != in.st.st_dev || st.st_ino != in.st.st_ino)
        refuse(fd, in, "another file is at that path now");
    if (S_ISFIFO(in.st.st_mode) && !(in.flags & O_NONBLOCK) &&
        ::fcntl(again.get(), F_SETFL, flags & ~O_NONBLOCK & kKeptFlags) != 0)
        fail_errno(kStep, std::string("fcntl of ") + kNames[fd]);
    if (S_ISREG(in.st.st_mode) || S_ISDIR(in.st.st_mode)) {
        const off_t offset = ::lseek(fd, 0, SEEK_CUR);
        if (offset > 0 && ::lseek(again.get(), offset, SEEK_SET) != offset)
            fail_errno(kStep, std::string("carrying over the offset of ") + kNames[fd]);
    }
    return again;
}

// A regular file open for writing.
bool writable_file(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && !(flags & O_PATH) && (flags & O_ACCMODE) != O_RDONLY;
}

// The first of stdin, stdout and stderr that is a terminal.
std::optional<int> first_terminal() {
    for (int fd = 0; fd < 3; ++fd)
        if (::isatty(fd) == 1) return fd;
    return std::nullopt;
}

}  // namespace

bool reaches_host_terminal(bool private_ctty) {
    const Fd tty(::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC));
    // ENXIO: no controlling terminal; ENOENT: no /dev/tty to open it by.
    if (!tty.valid()) return (errno != ENXIO && errno != ENOENT) || first_terminal().has_value();
    if (!private_ctty) return true;
    // tcgetsid answers only for the caller's controlling terminal (ENOTTY
    // for any other).
    for (int fd = 0; fd < 3; ++fd)
        if (::isatty(fd) == 1 && ::tcgetsid(fd) < 0) return true;
    return false;
}

Fd clone_inherited_terminal() {
    const auto fd = first_terminal();
    if (!fd) return Fd();
    struct stat want {};
    if (::fstat(*fd, &want) != 0 || !S_ISCHR(want.st_mode)) return Fd();
    const std::string path = link_of(*fd);
    const Fd node = open_exact(path, O_PATH);
    struct stat st {};
    if (!node.valid() || ::fstat(node.get(), &st) != 0 || st.st_dev != want.st_dev || st.st_ino != want.st_ino)
        return Fd();
    Fd tree(::open_tree(node.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    if (!tree.valid())
        fail_errno(kStep, "open_tree " + path, "the kernel needs the new mount API (Linux 5.12 or later)");
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
    if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
        fail_errno(kStep, "making the clone of " + path + " read-only");
    return tree;
}

OutputRelays::OutputRelays(bool view) {
    if (!view) return;
    const bool relay_out = writable_file(STDOUT_FILENO);
    const bool relay_err = writable_file(STDERR_FILENO);
    if (!relay_out && !relay_err) return;
    auto add = [&](std::vector<int> targets) {
        int ends[2];
        if (::pipe2(ends, O_CLOEXEC) != 0) fail_errno(kStep, "pipe for " + std::string(kNames[targets[0]]));
        relays_.push_back({Fd(ends[0]), Fd(ends[1]), std::move(targets)});
    };
    if (relay_out && relay_err && same_description(STDOUT_FILENO, STDERR_FILENO)) {
        add({STDOUT_FILENO, STDERR_FILENO});
        return;
    }
    if (relay_out) add({STDOUT_FILENO});
    if (relay_err) add({STDERR_FILENO});
}

void OutputRelays::attach() const {
    for (const auto& relay : relays_)
        for (int target : relay.targets)
            if (::dup2(relay.write.get(), target) < 0) fail_errno(kStep, std::string("dup2 onto ") + kNames[target]);
}

void OutputRelays::close_write_ends() {
    for (auto& relay : relays_) relay.write.reset();
}

bool OutputRelays::pump(std::size_t i) const {
    char buf[65536];
    const ssize_t n = ::read(relays_[i].read.get(), buf, sizeof buf);
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    write_all(relays_[i].targets.front(), std::string_view(buf, static_cast<std::size_t>(n)));
    return true;
}

void OutputRelays::drain() const {
    for (std::size_t i = 0; i < relays_.size(); ++i)
        while (pump(i)) {
        }
}

void reopen_stdio_in_view() {
    std::array<std::optional<Inherited>, 3> inherited;
    for (int fd = 0; fd < 3; ++fd) {
        Inherited in;
        if (::fstat(fd, &in.st) != 0) continue;  // closed
        // Sockets and anonymous inodes (mode without a type) are on no mount;
        // a file with no name left (a large heredoc's, a memfd) leads to no
        // other file, and linking it back in is a link across mounts (EXDEV).
        if (S_ISSOCK(in.st.st_mode) || (in.st.st_mode & S_IFMT) == 0 || in.st.st_nlink == 0) continue;
        in.path = link_of(fd);
        if (in.path.empty() || in.path[0] != '/') continue;  // pipe:[N], anon_inode:[...]
        // A terminal's node is in the view at kTerminalInView (root_view.h).
        struct stat view {};
        if (S_ISCHR(in.st.st_mode) && ::isatty(fd) == 1 && ::stat(kTerminalInView, &view) == 0 &&
            view.st_dev == in.st.st_dev && view.st_ino == in.st.st_ino)
            in.path = kTerminalInView;
        in.flags = ::fcntl(fd, F_GETFL);
        if (in.flags < 0) fail_errno(kStep, std::string("fcntl of ") + kNames[fd]);
        for (int earlier = 0; earlier < fd && in.shares < 0; ++earlier)
            if (inherited[earlier] && same_description(earlier, fd)) in.shares = earlier;
        inherited[fd] = std::move(in);
    }
    for (int fd = 0; fd < 3; ++fd) {
        if (!inherited[fd]) continue;
        const Inherited& in = *inherited[fd];
        if (in.shares >= 0) {
            if (::dup2(in.shares, fd) < 0) fail_errno(kStep, std::string("dup2 onto ") + kNames[fd]);
            continue;
        }
        if (::isatty(fd) == 1 && in.path != kTerminalInView)
            fail(kStep,
                 std::string(kNames[fd]) + " is the terminal " + in.path + ", not the one the view has at " +
                     kTerminalInView + " (only the first terminal among stdin, stdout and stderr is carried in)",
                 "give the command one terminal: pass the others through a pipe (... | cat)");
        Fd again = reopen(fd, in);
        if (::dup2(again.get(), fd) < 0) fail_errno(kStep, std::string("dup2 onto ") + kNames[fd]);
    }
}

}  // namespace sbx::helper
