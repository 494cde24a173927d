// The process table on macOS, from libproc (exec/process.h).
#include <libproc.h>
#include <sys/proc.h>
#include <sys/proc_info.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "exec/process.h"

namespace sbx::exec {

std::vector<ProcEntry> process_table() {
    std::vector<ProcEntry> entries;
    // proc_listallpids answers with the count; room for a few more that start meanwhile.
    const int count = ::proc_listallpids(nullptr, 0);
    if (count <= 0) return entries;
    std::vector<pid_t> pids(static_cast<std::size_t>(count) + 64);
    const int got = ::proc_listallpids(pids.data(), static_cast<int>(pids.size() * sizeof(pid_t)));
    for (int i = 0; i < got && i < static_cast<int>(pids.size()); ++i) {
        if (pids[i] <= 0) continue;
        proc_bsdinfo info{};
        if (::proc_pidinfo(pids[i], PROC_PIDTBSDINFO, 0, &info, sizeof info) != static_cast<int>(sizeof info))
            continue;  // gone, or not this user's to see
        const char state = info.pbi_status == SZOMB ? 'Z' : info.pbi_status == SSTOP ? 'T' : 'R';
        entries.push_back(
            ProcEntry{pids[i], static_cast<pid_t>(info.pbi_ppid), state, static_cast<pid_t>(info.pbi_pgid),
                      static_cast<std::uint64_t>(info.pbi_start_tvsec) * 1'000'000 + info.pbi_start_tvusec});
    }
    return entries;
}

// macOS shows no process's pending signals: a process woken by ^Z that has
// not yet stopped is not waited for (docs/macos.md).
bool stop_signal_in_flight(pid_t) { return false; }

// Opening /dev/fd/N on macOS duplicates the fd (the same file description,
// whose O_NONBLOCK would be the caller's too): none, and writes block.
Fd nonblocking_copy(int) { return Fd(); }

// libproc lists a process's fds, but a pipe's there is not known to match
// what fstat says of it: streams given to the command are not drained by
// looking, so none is given (the supervisor reads its pipes instead).
bool open_files_visible() { return false; }
bool has_open(pid_t, const struct stat&) { return true; }

// The Linux helper alone needs it.
bool still_runs(pid_t, const std::string&) { return false; }

}  // namespace sbx::exec
