// macOS: Seatbelt's denials as the unified log reports them, followed with
// `log stream` (denial/seatbelt_log.h) for the length of a run under
// --record-denials.  The stream goes to an unlinked temporary file, read once
// the run has ended; only the lines of the run's processes are kept (the
// supervisor's note of them: exec/process.h, remember_descendants).
//
// Reviewed, not run here (no Mac): `log stream` prints a header line when it
// is attached; the watch waits for it (at most 2 s) before the command
// starts, and after the run for the file to stop growing (at most 1 s: the
// log delivers with a small delay) before it stops the stream.
#include "cli/denial_watch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "denial/seatbelt_log.h"
#include "exec/spawn.h"
#include "util/fd.h"

namespace sbx::cli {

namespace {

using namespace std::chrono_literals;

off_t size_of(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 ? st.st_size : 0;
}

// Polls `fd`'s size every 20 ms until `done` says so or `limit` passes.
template <class Done>
void wait_for(int fd, std::chrono::milliseconds limit, Done done) {
    const auto until = exec::Clock::now() + limit;
    off_t last = size_of(fd);
    while (exec::Clock::now() < until) {
        std::this_thread::sleep_for(20ms);
        const off_t now = size_of(fd);
        if (done(last, now)) return;
        last = now;
    }
}

}  // namespace

struct DenialWatch::State {
    Fd file;                         // the stream's output, unlinked
    std::optional<exec::Child> log;  // the `log stream` process
};

DenialWatch::DenialWatch(bool record) : state_(std::make_unique<State>()) {
    if (!record || ::access("/usr/bin/log", X_OK) != 0) return;
    const char* tmp = std::getenv("TMPDIR");
    std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/sbx-seatbelt-log.XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) return;
    ::unlink(name.c_str());
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    state_->file = Fd(fd);
    const Fd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    // Prepared before the child starts: it makes only async-signal-safe calls.
    std::vector<std::string> words = seatbelt_log_argv();
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    const int out = state_->file.get(), in = null.get();
    auto run_log = [&]() -> int {
        ::setpgid(0, 0);
        if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(in, 2) < 0) ::_exit(126);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    };
    try {
        state_->log.emplace(exec::spawn("log stream", run_log));
    } catch (const std::exception&) {
        state_->file.reset();
        return;
    }
    // Attached once its header line is out.
    wait_for(out, 2000ms, [](off_t, off_t now) { return now > 0; });
}

DenialWatch::~DenialWatch() = default;  // a log still running is killed with its group (exec::Child)

std::vector<Denial> DenialWatch::collect(bool failed, const std::set<long>& pids, const std::string&) {
    if (!state_->log || !state_->file.valid()) return {};
    // Late lines: until the file stops growing for 100 ms (a failed run
    // waits up to 1 s, a successful one 200 ms).
    wait_for(state_->file.get(), failed ? 1000ms : 200ms, [](off_t last, off_t now) { return now == last; });
    ::kill(state_->log->pid(), SIGTERM);
    state_->log->wait_until(exec::Clock::now() + 1s);
    std::string text;
    char chunk[65536];
    ssize_t n;
    ::lseek(state_->file.get(), 0, SEEK_SET);
    while ((n = ::read(state_->file.get(), chunk, sizeof chunk)) > 0) text.append(chunk, static_cast<std::size_t>(n));
    // No process noted: nothing of the log can be told to be the run's.
    if (pids.empty()) return {};
    return seatbelt_denials(text, pids);
}

}  // namespace sbx::cli
