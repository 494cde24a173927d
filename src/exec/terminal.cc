// The relay's pseudo-terminal (exec/terminal.h).
#include "exec/terminal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/error.h"

namespace sbx::exec {

namespace {

[[noreturn]] void fail(const char* step) {
    throw Error(fmt::format("cannot make a pseudo-terminal for the command: {}: {}", step, std::strerror(errno)));
}

// fd moved to 3 or above, so that the child's dup2 onto 0..2 never collides
// (sbx's stderr may be closed).
Fd above_stdio(Fd fd) {
    if (!fd.valid() || fd.get() > STDERR_FILENO) return fd;
    Fd moved(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
    if (!moved.valid()) fail("fcntl");
    return moved;
}

}  // namespace

PtyPair open_pty(int like) {
    PtyPair pty;
    pty.master = Fd(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!pty.master.valid()) fail("posix_openpt");
    pty.master = above_stdio(std::move(pty.master));
    if (::grantpt(pty.master.get()) != 0) fail("grantpt");
    if (::unlockpt(pty.master.get()) != 0) fail("unlockpt");
    std::array<char, 128> name{};
#ifdef __linux__
    if (::ptsname_r(pty.master.get(), name.data(), name.size()) != 0) fail("ptsname");
#else
    const char* path = ::ptsname(pty.master.get());  // sbx's one thread that makes a pty
    if (path == nullptr || std::strlen(path) >= name.size()) fail("ptsname");
    std::strcpy(name.data(), path);
#endif
    pty.slave = Fd(::open(name.data(), O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!pty.slave.valid()) fail(name.data());
    pty.slave = above_stdio(std::move(pty.slave));
    termios mode{};
    if (::tcgetattr(like, &mode) == 0) ::tcsetattr(pty.slave.get(), TCSANOW, &mode);
    copy_window_size(like, pty.master.get());
    if (::fcntl(pty.master.get(), F_SETFL, ::fcntl(pty.master.get(), F_GETFL) | O_NONBLOCK) != 0) fail("fcntl");
    return pty;
}

void copy_window_size(int from, int master) {
    winsize size{};
    if (::ioctl(from, TIOCGWINSZ, &size) == 0) ::ioctl(master, TIOCSWINSZ, &size);
}

RawTerminal::RawTerminal(int fd) : fd_(fd) { resume(); }

void RawTerminal::pause() {
    if (!raw_) return;
    ::tcsetattr(fd_, TCSANOW, &saved_);
    raw_ = false;
}

bool RawTerminal::resume() {
    if (raw_) return true;
    // In the foreground, or the terminal is not sbx's controlling one (then
    // there is no job control to wait for).
    const pid_t group = ::tcgetpgrp(fd_);
    if (group != ::getpgrp() && !(group < 0 && errno == ENOTTY)) return false;
    // The mode it has now (the user may have changed it while sbx was
    // stopped) is what pause() gives back.
    if (::tcgetattr(fd_, &saved_) != 0) return false;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    // SIGTTOU is blocked while sbx supervises, so this cannot stop it.
    raw_ = ::tcsetattr(fd_, TCSANOW, &raw) == 0;
    return raw_;
}

}  // namespace sbx::exec
