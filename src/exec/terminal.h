// The pseudo-terminal sbx relays to a command run at a terminal: a new pty
// pair made on the host's /dev/ptmx, the user's terminal in raw mode while
// the relay runs (restored by the destructor on every way out), and the
// window size passed on.  The user's terminal itself never reaches the
// command: it gets the pty's slave on its stdin, stdout (and stderr).
#pragma once

#include <termios.h>

#include "util/fd.h"

namespace sbx::exec {

// A new pty pair: the master (O_CLOEXEC, O_NONBLOCK) and the slave
// (O_CLOEXEC, O_NOCTTY), the slave set up with the termios and window size
// of `like` (the user's terminal).  Throws Error.
struct PtyPair {
    Fd master;
    Fd slave;
};
PtyPair open_pty(int like);

// The window size of `from` set on the pty through its master (the kernel
// then sends SIGWINCH to the pty's foreground group).  Best effort.
void copy_window_size(int from, int master);

// The user's terminal (fd) in raw mode while this lives, unless sbx's
// process group is not in the foreground there (then left alone: sbx was
// started or continued in the background).  pause() restores the mode the
// terminal had (before sbx stops, before a prompt), resume() makes it raw
// again (taking the mode it has then as the one to restore).
class RawTerminal {
public:
    explicit RawTerminal(int fd);
    ~RawTerminal() { pause(); }
    RawTerminal(const RawTerminal&) = delete;
    RawTerminal& operator=(const RawTerminal&) = delete;

    void pause();
    // Raw again when sbx's group has the terminal's foreground; whether it is.
    bool resume();
    bool raw() const { return raw_; }

private:
    int fd_;
    termios saved_{};  // the mode before raw
    bool raw_ = false;
};

}  // namespace sbx::exec
