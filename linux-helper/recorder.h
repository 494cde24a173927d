// The denial recorder (issue 15): which operations of the command the
// sandbox refused, observed without audit and as an unprivileged user.
//
// Decisions (seccomp_unotify(2), Linux 6.18 here):
//
// - It observes; it never decides.  The write-class file syscalls reach pid 1
//   as seccomp user notifications, and pid 1 answers every one of them with
//   SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel then runs the syscall as if
//   nothing had happened, and Landlock and the read-only mounts decide.  The
//   man page is explicit that a listener cannot make a security decision on a
//   pointer argument: between the moment pid 1 reads the path and the moment
//   the kernel reads it, another thread of the command (or a process sharing
//   the memory) may rewrite it (TOCTOU).  So a path read here is only ever a
//   record, never a permission.  The answers that are not CONTINUE are
//   refusals: EPERM for a mode with the setuid or setgid bit, which the BPF
//   program refuses anyway (should libseccomp order an overlapping rule the
//   other way, the recorder still fails closed); EPERM for the filter's fixed
//   refusals (seccomp_rules.h: ptrace, the mount family, io_uring, the
//   keyrings, the terminal ioctls; and bind, listen, accept under
//   restricted), which the recorded filters send here instead of refusing in
//   BPF, so that they can be named (no answer leaves them refused too:
//   ENOSYS); and the network's (restricted): never CONTINUE.
// - What notifies: the BPF program (seccomp_gen.cc, the "recorded" filters)
//   sends open/openat only with O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or
//   O_TMPFILE (tested in BPF: a read never leaves the kernel), creat,
//   mkdir(at), mknod(at), unlink(at), rmdir, rename(at, at2), link(at),
//   symlink(at), chmod/fchmodat(2), chown/lchown/fchownat, truncate,
//   utime/utimes/futimesat, and utimensat with a path (utimensat(fd, NULL)
//   is futimens: the descriptor's opening was already seen); execve and
//   execveat, recorded when the policy gives the file no read access (a
//   --deny, or outside --minimal's set: Landlock's execute right goes with
//   read).  For that pid 1 starts the command without CLONE_VFORK when it
//   records (about 50 us more: the page tables are copied), since the
//   command's own execve would otherwise come while pid 1 is suspended
//   waiting for it, and nobody could answer it.
// - Reads (--learn-reads, sbx learn --reads; its own filters, "...Reads" in
//   seccomp_gen.cc, so that no other run pays for it): every open and
//   openat notifies, whatever its flags; one that writes nothing is a
//   "read" (a directory opened to be listed too), recorded when the policy
//   gives the file no read access (as exec; a missing file only under a
//   --deny entry, whose cover empties it).  Not recorded: an O_PATH open
//   (no access to the file), and what needs no open (stat, access,
//   readlink, a path walked through), though under the policy's own view
//   such a file is missing (sbx(1) says so).  A read of a symlink the
//   policy reads is judged by where it leads (one lstat on each read the
//   policy allows).
// - Reading the path: process_vm_readv from pid 1 (pid 1 is not under the
//   filter; it has CAP_SYS_PTRACE in the sandbox's user namespace, or is
//   root), in page-sized remote pieces so that a string that ends just
//   before an unmapped page is still read.  After reading, and after reading
//   /proc/PID/cwd or /proc/PID/fd/N, SECCOMP_IOCTL_NOTIF_ID_VALID checks that
//   the notification is still pending: otherwise the pid may have been reused
//   and what was read belongs to another process, so it is dropped.
// - Relative paths: from dirfd (AT_FDCWD: /proc/PID/cwd; else
//   /proc/PID/fd/N), read while the caller is blocked in the syscall.  Pid 1
//   shares the command's root (the view's pivot_root is pid 1's), so the
//   links read as the command would see them.
// - Classification: the path is joined lexically and judged against the
//   canonical policy with decide_path() (the data the Landlock rules and the
//   mounts are built from): content changes (write, truncate, chmod, chown,
//   utimes) need write access to the object; namespace changes (create,
//   remove, rename, link) need it on the object and its parent.  Only when
//   that says "denied" are the symlinks resolved (walk_path, in the view;
//   /proc/self and /dev/std* taken as the caller's), and the verdict is made
//   again on the real path: a record is never a guess.  The cost of the
//   other direction (a symlink inside a writable root that leads out of it)
//   would be a walk on every allowed operation: such a denial is missed, and
//   sbx's output heuristic remains the fallback for it.  A mode-bit or owner
//   refusal of an allowed path is not the sandbox's and is not recorded.
// - Network (restricted, with the recorder or --record-network alone, which
//   sbx always passes): socket(AF_INET, AF_INET6) notifies, and pid 1 makes
//   the socket in an empty network namespace of its own (made on the first
//   such call, so a command that never tries the network pays nothing; no
//   device up) and installs it in the caller (SECCOMP_ADDFD_FLAG_SEND).  Its
//   connect, and a sendto with an address, notify: pid 1 records the
//   destination and answers ECONNREFUSED at once, so a resolver or a client
//   fails in microseconds instead of timing out.  Nothing can leave an empty
//   namespace (a sendmsg, whose address BPF cannot read, finds no route), and
//   bind/listen/accept, raw sockets and every other family stay refused by
//   the filter or by pid 1.  The command stays in the host's network
//   namespace, as without the recorder: no namespace is made at launch.
// - The listener's death: the filter stays on the command; a notifying
//   syscall with no listener left fails with ENOSYS (seccomp_unotify(2):
//   "if the listener is closed, the target's syscall fails with ENOSYS").
//   Nothing runs unobserved in a way that widens the sandbox: the kernel's
//   layers still decide every file operation, and network calls fail.  Pid 1
//   is the listener and the command's reaper: if it dies the kernel kills the
//   whole pid namespace (tests/integration/recorder.sh kills it).
// - The wake-up cost: SECCOMP_IOCTL_NOTIF_SET_FLAGS with
//   SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6) makes the kernel switch
//   to the waiting listener and back on the same CPU instead of a remote
//   wake-up; set when the kernel has it, ignored when not.
// - Bounds: the first 256 distinct denials (operation and path or address)
//   are reported, one JSON line each on --status-fd, in at most 48 KiB (less
//   where the status pipe is smaller: nothing reads it before the run ends,
//   so pid 1 must never block on it); the rest are only counted, and the
//   count is reported when the command ends ({"denied_omitted": N}).
//   Memory: at most 256 keys.  In a learning run 4096 and 768 KiB, the
//   status pipe grown to hold them (F_SETPIPE_SZ; a user over
//   fs.pipe-user-pages-soft gets less, and the rest is counted), since it
//   is to learn everything in one run, and a tool reads many files
//   (--learn-reads): each distinct path once (a read of it again is the
//   same key), and sbx groups them (denial/read_groups.h).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "network.h"
#include "policy/policy.h"
#include "status.h"
#include "util/fd.h"

struct seccomp_notif;

namespace sbx::helper {

// One denied operation, as reported on --status-fd.
struct DeniedOp {
    std::string op;       // write, create, remove, rename, chmod, chown, exec, read, connect, socket
    std::string path;     // absolute, or empty
    std::string address;  // "1.2.3.4:443", "[::1]:80", or empty
    pid_t pid = 0;
    std::string program;  // the caller's comm
};

// Pure: whether `policy` refuses operation `op` on the absolute, normalised
// path (see the classification above).  Unit-tested.
bool policy_refuses(const sbx::CanonicalPolicy& policy, const std::string& op, const std::string& path);

// The recorder of pid 1: classifies observed calls and reports denials.
class Recorder {
public:
    static constexpr std::size_t kMaxListed = 256;
    static constexpr std::size_t kMaxBytes = 48 * 1024;
    // A learning run's (--learn): it is to learn everything in one run, and
    // with --learn-reads a tool may read hundreds of files the policy does
    // not (its own install directory, its modules).
    static constexpr std::size_t kMaxListedLearning = 4096;
    static constexpr std::size_t kMaxBytesLearning = 768 * 1024;

    // The report's budget: kMaxBytes, less where the status pipe is smaller
    // (a user over fs.pipe-user-pages-soft gets small pipes): what pid 1
    // writes must never block it, since sbx reads the pipe when the run ends.
    // files: the write-class file calls and exec are notified
    // (--record-denials); else only the network attempts (--record-network).
    // learning (--learn): the larger bounds.
    Recorder(const sbx::CanonicalPolicy& policy, const Status& status, bool files, bool learning = false);

    // policy_refuses() for this policy: the lexical verdict.
    bool refuses(const std::string& op, const std::string& path) const;
    // A file operation the caller made on the lexically absolute `path`;
    // open_existing: a create that opens the file if it exists (O_CREAT
    // without O_EXCL).
    void file_op(const std::string& op, const std::string& path, pid_t pid, bool open_existing = false);
    // A call the filter refuses whatever its path (a connect under
    // restricted, ptrace, mount, bind, ioctl TIOCSTI), with its address if any.
    void call_op(const std::string& op, const std::string& address, pid_t pid);
    // An execve of the lexically absolute `path`.
    void exec_op(const std::string& path, pid_t pid);
    bool records_files() const { return files_; }
    sbx::Network network() const { return policy_.network; }
    // The end of the command: the count of what was not listed.
    void finish();

private:
    void record(DeniedOp d);

    const sbx::CanonicalPolicy& policy_;
    const Status& status_;
    bool files_;
    std::size_t max_listed_;
    std::set<std::string> seen_;
    std::size_t bytes_ = 0;
    std::size_t budget_ = 0;  // for the listed lines; the rest of the pipe for the others
    std::uint64_t omitted_ = 0;
};

// The seccomp listener of pid 1: receives each notification and hands it to
// the connect mediator (network limited) or the recorder.
class NotificationServer {
public:
    // host_unix_sockets, transparent: the UnixMediator's (network.h).
    NotificationServer(Fd listener, Recorder* recorder, bool host_unix_sockets = false,
                       const TransparentTcp* transparent = nullptr);
    // Poll this for POLLIN, then call handle().
    int fd() const { return listener_.get(); }
    // One notification, answered.  Throws Error only when the listener fails.
    void handle();

private:
    void observe(const seccomp_notif&);
    void make_socket(const seccomp_notif&);

    Fd listener_;
    bool own_network_ = false;  // pid 1 has left for an empty network namespace of its own (make_socket)
    Recorder* recorder_;
    std::optional<UnixMediator> mediator_;
    std::size_t notif_size_ = 0;
    std::size_t resp_size_ = 0;
};

}  // namespace sbx::helper
