// The inherited descriptors: stdin, stdout and stderr.  The helper closes
// every other one at start (main.cc); these three cross into the sandbox.
// One that refers to a file, directory or device was opened on the host's
// mounts, not the sandbox's view: through it (fchmod, futimens, fsetxattr,
// or a path under /proc/self/fd/N, `..` included) the command would reach
// the host's writable mounts, past the read-only view and the protected
// paths.  So:
//   - stdout and stderr that are regular files open for writing (`>log`)
//     reach the command as a pipe, whose other end the helper, outside the
//     sandbox, copies to the file through the caller's own description (its
//     offset and O_APPEND as before; `>log 2>&1` share one pipe): the
//     command gets the writes and nothing else (OutputRelays);
//   - every other one that refers to a file, directory or device is opened
//     again by its path inside the view, in the command's process after the
//     capabilities are dropped and before Landlock, with the same access
//     mode, checked to be the same file, and put in its place; the offset is
//     carried over (the command gets a description of its own: its reads no
//     longer move the caller's offset).  One that cannot be opened so (a
//     file outside the writable roots open for reading and writing, a name
//     since removed of a file that has others) is refused.
// A terminal is the exception to "by its path": its path names a pty of the
// host's devpts, which the view replaces with one of its own.  The view has
// the inherited terminal's node (the first among the three; stdin, stdout or
// stderr on a second, different terminal is refused) as a read-only mount
// at /dev/console, as containers show theirs, and the terminal is opened
// again there: ttyname() names /dev/console, and the same tty (its session,
// foreground group and settings) is behind it.
// Pipes, sockets, anonymous inodes and files with no name left (a large
// heredoc's) lead nowhere else and are passed as they are.
#pragma once

#include <cstddef>
#include <vector>

#include "util/fd.h"

namespace sbx::helper {

class OutputRelays {
public:
    // In the helper, before the namespaces: a pipe for each of stdout and
    // stderr that is a regular file open for writing (none where the command
    // gets no view: !view).
    explicit OutputRelays(bool view);

    // In the command's process: the pipes' write ends become its stdout and
    // stderr.
    void attach() const;
    // In the helper once pid 1 runs: its own copies of the write ends go, so
    // that a pipe ends when the sandbox does.
    void close_write_ends();

    std::size_t size() const { return relays_.size(); }
    int read_end(std::size_t i) const { return relays_[i].read.get(); }
    // Copies what the pipe holds to the file; false once the pipe has ended.
    bool pump(std::size_t i) const;
    // Once the sandbox has ended: everything left in the pipes.
    void drain() const;

private:
    struct Relay {
        Fd read, write;
        std::vector<int> targets;  // 1, 2, or both (one description): the caller's file
    };
    std::vector<Relay> relays_;
};

void reopen_stdio_in_view();

// Whether the process reaches a terminal of the host's: one of stdin, stdout
// and stderr is a terminal, or it has a controlling terminal (/dev/tty
// opens).  private_ctty (--private-terminal): the controlling terminal is
// the caller's own for this sandbox, not the host's; a terminal on stdin,
// stdout or stderr is then the host's unless it is that one.
bool reaches_host_terminal(bool private_ctty);

// Where the view has the inherited terminal.
inline constexpr const char* kTerminalInView = "/dev/console";

// In pid 1, before the view covers the host's /dev/pts: a detached
// read-only clone of the node of the first terminal among stdin, stdout and
// stderr, opened by its path and checked to be the same file; none (an
// invalid Fd) where none is a terminal or its node is out of reach.
Fd clone_inherited_terminal();

}  // namespace sbx::helper
