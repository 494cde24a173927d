// The supervisor on real processes: exit statuses, caps, the deadline, the
// kill of every descendant, the environment, the cwd and stdin.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "exec/backend.h"
#include "exec/process.h"
#include "exec/supervisor.h"

using namespace sbx;
using namespace std::chrono_literals;

namespace {

ExecPlan sh(const std::string& script) {
    ExecPlan p;
    p.argv = {"/bin/sh", "-c", script};
    p.cwd = "/";
    p.sandbox = SandboxKind::None;
    p.stdin_mode = StdinMode::Null;
    return p;
}

SuperviseOptions capture(std::uint64_t bytes = 0, std::uint64_t lines = 0, Keep keep = Keep::Head) {
    SuperviseOptions o;
    o.passthrough = false;
    o.capture = true;
    o.caps = OutputCaps{bytes, lines, keep};
    return o;
}

std::string temp_dir() {
    std::string tmpl = "/tmp/sbx-test-exec.XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    return tmpl;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

// Whether pid has ended: gone, or a zombie.
bool ended(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), {});
    const auto paren = stat.rfind(')');
    return paren == std::string::npos || stat.compare(paren + 2, 1, "Z") == 0;
}

// Whether a process the supervisor killed is dead: reaped (the Linux
// backend, a subreaper, reaps its orphans), or at least a zombie where
// another process adopted it (the portable backend: whoever reaps orphans
// here, launchd on macOS, does so in its own time).
bool killed(pid_t pid) { return std::string_view(exec::kSupervisorBackend) == "linux" ? !alive(pid) : ended(pid); }

// Polls cond until it holds; false after the bound, which only limits how
// long a failure takes to show (no loaded machine comes near it).
template <typename Cond>
bool eventually(Cond cond, std::chrono::seconds bound = 30s) {
    const auto until = std::chrono::steady_clock::now() + bound;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST_CASE("the command's own exit status") {
    auto r = supervise(sh("echo hi; echo err >&2; exit 3"), capture());
    CHECK(r.exit_code == 3);
    CHECK_FALSE(r.signal);
    CHECK_FALSE(r.timed_out);
    CHECK(r.out.shown == "hi\n");
    CHECK(r.err.shown == "err\n");
    CHECK(r.out.bytes == 3);
}

TEST_CASE("killed by a signal gives 128+N") {
    auto r = supervise(sh("kill -USR1 $$"), capture());
    CHECK(r.exit_code == 128 + SIGUSR1);
    REQUIRE(r.signal);
    CHECK(*r.signal == SIGUSR1);
}

TEST_CASE("not found gives 127, not executable 126, with the reason on stderr") {
    ExecPlan p = sh("");
    p.argv = {"sbx-no-such-command-xyz"};
    auto r = supervise(p, capture());
    CHECK(r.exit_code == 127);
    REQUIRE(r.exec_error);
    CHECK(r.err.shown.find("No such file or directory") != std::string::npos);

    const auto dir = temp_dir();
    const auto file = dir + "/not-exec";
    std::ofstream(file) << "#!/bin/sh\necho no\n";
    ::chmod(file.c_str(), 0644);
    p.argv = {file};
    r = supervise(p, capture());
    CHECK(r.exit_code == 126);
    CHECK(r.out.shown.empty());
    CHECK(r.err.shown.find("Permission denied") != std::string::npos);
    std::remove(file.c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("an unusable cwd is sbx's own failure") {
    ExecPlan p = sh("true");
    p.cwd = "/nonexistent-sbx-dir";
    CHECK_THROWS_WITH(supervise(p, capture()), Catch::Contains("cannot change to directory"));
}

TEST_CASE("caps are exact at the byte and line limits, and the rest is counted") {
    auto r = supervise(sh("i=0; while [ $i -lt 1000 ]; do echo line$i; i=$((i+1)); done"), capture(0, 3));
    CHECK(r.out.shown == "line0\nline1\nline2\n");
    CHECK(r.out.truncated);
    CHECK(r.out.shown_lines == 3);
    CHECK(r.out.bytes > 5000);

    r = supervise(sh("printf 'abcdefghij'; printf 'klmnop'"), capture(12, 0));
    CHECK(r.out.shown == "abcdefghijkl");
    CHECK(r.out.bytes == 16);
    CHECK(r.out.truncated);

    r = supervise(sh("printf 'one\\ntwo'"), capture(0, 2));
    CHECK(r.out.shown == "one\ntwo");
    CHECK_FALSE(r.out.truncated);
}

TEST_CASE("head and tail: the captured text, the tail's events after the omission's") {
    std::string events;
    SuperviseOptions o = capture(0, 4, Keep::Both);
    o.on_output = [&](Stream, std::string_view d) {
        events += "[" + std::string(d) + "]";
        return std::string();
    };
    o.on_omitted = [&](Stream, std::uint64_t bytes, std::uint64_t lines) {
        events += "<" + std::to_string(bytes) + " " + std::to_string(lines) + ">";
        return std::string();
    };
    auto r = supervise(sh("i=0; while [ $i -lt 1000 ]; do echo line$i; i=$((i+1)); done"), o);
    CHECK(r.out.shown == "line0\nline1\nline998\nline999\n");
    CHECK(r.out.omitted_lines == 996);
    CHECK(r.out.omitted_bytes == r.out.bytes - 28);
    CHECK(r.out.shown_lines == 4);
    CHECK(events.ends_with("<" + std::to_string(r.out.omitted_bytes) + " 996>[line998\nline999\n]"));
    CHECK(events.starts_with("[line0\n"));
}

TEST_CASE("a large output is drained while capped: the command never blocks") {
    auto r = supervise(sh("head -c 50000000 /dev/zero"), capture(100, 0));
    CHECK(r.exit_code == 0);
    CHECK(r.out.bytes == 50000000);
    CHECK(r.out.shown.size() == 100);
}

TEST_CASE("binary output passes byte for byte") {
    auto r = supervise(sh("printf '\\000\\001\\377\\376\\n\\000'"), capture());
    CHECK(r.out.shown == std::string("\0\1\xff\xfe\n\0", 6));
}

TEST_CASE("text mode, with nothing that needs the bytes, the command writes to the target fd itself") {
    const auto dir = temp_dir();
    const auto file = dir + "/out";
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    SuperviseOptions o;  // the default caps: they bound what is kept, not what is shown
    o.stdout_fd = fd;
    o.stderr_fd = fd;
    auto r = supervise(sh("head -c 3000000 /dev/urandom | od -An -tx1 | head -c 5000000; echo end; "
                          "readlink /proc/self/fd/1 /proc/self/fd/2"),
                       o);
    ::close(fd);
    CHECK(r.exit_code == 0);
    if (std::string_view(exec::kSupervisorBackend) == "linux") {
        CHECK(r.out.bytes == 0);  // not seen by sbx
        CHECK(slurp(file).size() == 5000004 + 2 * (file.size() + 1));
        CHECK(slurp(file).substr(5000000) == "end\n" + file + "\n" + file + "\n");
    } else {
        // No subreaper: the drain could not find who still holds the fd,
        // so the command writes to pipes that sbx reads.
        CHECK(r.out.bytes == slurp(file).size());
        CHECK(slurp(file).substr(5000000, 9) == "end\npipe:");
    }
    // Anything that needs the bytes keeps the pipe.
    o.tail_bytes = 16;
    const int again = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    REQUIRE(again >= 0);
    o.stdout_fd = o.stderr_fd = again;
    r = supervise(sh("readlink /proc/self/fd/1"), o);
    ::close(again);
    CHECK(slurp(file).starts_with("pipe:"));
    CHECK(r.out.bytes == slurp(file).size());
    std::remove(file.c_str());
    ::rmdir(dir.c_str());
}

namespace {

// Runs script in text mode with stdout and stderr going to files of their
// own; the files' contents.
struct TextRun {
    ExecResult result;
    std::string out, err;
};

TextRun text_run(const std::string& script, SuperviseOptions o) {
    const auto dir = temp_dir();
    const auto out = dir + "/out", err = dir + "/err";
    const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(out_fd >= 0);
    REQUIRE(err_fd >= 0);
    o.stdout_fd = out_fd;
    o.stderr_fd = err_fd;
    TextRun run{supervise(sh(script), o), slurp(out), slurp(err)};
    ::close(out_fd);
    ::close(err_fd);
    std::remove(out.c_str());
    std::remove(err.c_str());
    ::rmdir(dir.c_str());
    return run;
}

std::string seq(int n) {
    std::string s;
    for (int i = 1; i <= n; ++i) s += std::to_string(i) + "\n";
    return s;
}

}  // namespace

TEST_CASE("text mode shows every byte live, whatever the caps, also when the bytes are read") {
    SuperviseOptions o;
    o.caps = OutputCaps{100, 5, Keep::Both};
    o.tail_bytes = 16;  // as when sandboxed: every byte is read, and written on
    auto r = text_run("seq 1 100000; seq 1 100000 >&2; head -c 3000000 /dev/zero", o);
    CHECK(r.result.exit_code == 0);
    CHECK(r.out == seq(100000) + std::string(3000000, '\0'));
    CHECK(r.err == seq(100000));  // and no note
    CHECK(r.result.out.bytes == r.out.size());
    CHECK(r.result.out.tail == std::string(16, '\0'));
    CHECK(r.result.err.tail == seq(100000).substr(seq(100000).size() - 16));
    CHECK_FALSE(r.result.out.truncated);  // nothing was kept, so nothing was cut
}

TEST_CASE("text mode, only the tail looked at: the tail is the stream's end, every byte shown") {
    // Large writes: all but the end of what the pipe holds is spliced.
    SuperviseOptions o;
    o.tail_bytes = 4096;
    const std::string want = seq(1000000);
    for (int round = 0; round < 3; ++round) {
        auto r = text_run("seq 1 1000000; seq 1 1000000 >&2", o);
        CHECK(r.out == want);
        CHECK(r.err == want);
        CHECK(r.result.out.tail == want.substr(want.size() - 4096));
        CHECK(r.result.err.tail == want.substr(want.size() - 4096));
        CHECK(r.result.out.bytes == want.size());
    }
}

TEST_CASE("text mode, only the tail looked at, to a reader slower than the command: every byte in order") {
    // sbx's stream fills: splices stop short, reads wait for it; neither
    // may overtake the other.  On stdout (a larger pipe) and stderr.
    SuperviseOptions o;
    o.tail_bytes = 4096;
    const std::string want = seq(1000000);
    const auto dir = temp_dir();
    const auto file = dir + "/seq";
    std::ofstream(file, std::ios::binary) << want;
    for (const Stream stream : {Stream::Stdout, Stream::Stderr}) {
        for (int round = 0; round < 3; ++round) {
            int fds[2];
            REQUIRE(::pipe(fds) == 0);
            for (int fd : fds) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
            (stream == Stream::Stdout ? o.stdout_fd : o.stderr_fd) = fds[1];
            std::string got;
            std::thread reader([&] {
                char buf[65536];
                for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
                    got.append(buf, static_cast<std::size_t>(n));
            });
            // cat writes in large pieces
            auto r = supervise(sh("cat " + file + (stream == Stream::Stderr ? " >&2" : "")), o);
            ::close(fds[1]);
            reader.join();
            ::close(fds[0]);
            o.stdout_fd = 1;
            o.stderr_fd = 2;
            CHECK(r.exit_code == 0);
            CHECK(got.size() == want.size());
            CHECK(got == want);
            CHECK((stream == Stream::Stdout ? r.out : r.err).tail == want.substr(want.size() - 4096));
        }
    }
    std::remove(file.c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("text mode with a capture: everything live, the capture capped") {
    SuperviseOptions o;
    o.capture = true;
    o.caps = OutputCaps{0, 4, Keep::Both};
    auto r = text_run("seq 1 10", o);
    CHECK(r.out == seq(10));
    CHECK(r.err.empty());
    CHECK(r.result.out.shown == "1\n2\n9\n10\n");
    CHECK(r.result.out.truncated);
    CHECK(r.result.out.omitted_lines == 6);
    CHECK(r.result.out.bytes == 21);
}

TEST_CASE("cap_live: the live stream capped, the note on stderr at the omission point") {
    SuperviseOptions o;
    o.cap_live = true;
    o.caps = OutputCaps{0, 4, Keep::Both};
    auto r = text_run("seq 1 10; printf 'a\nb\nc\nd\ne' >&2", o);
    CHECK(r.out == "1\n2\n9\n10\n");
    // stderr's head live; at the end each stream's note, before its tail.
    CHECK(r.err ==
          "a\nb\n"
          "sbx: stdout: omitted 6 lines (12 bytes) here; to see all output run without --cap-live\n"
          "sbx: stderr: omitted 1 line (2 bytes) here; to see all output run without --cap-live\n"
          "d\ne");
    CHECK(r.result.out.truncated);
    CHECK(r.result.stderr_mid_line);
    // Uncapped, nothing to cut: handed over as without cap_live (where
    // anything is: the Linux backend).
    o.caps = OutputCaps{0, 0};
    r = text_run("readlink /proc/self/fd/1", o);
    CHECK(r.out.starts_with("pipe:") == (std::string_view(exec::kSupervisorBackend) != "linux"));
}

TEST_CASE("a stream given to the command itself: a note after it starts a line where a file tells") {
    auto r = text_run("printf 'no newline' >&2", SuperviseOptions{});
    CHECK(r.err == "no newline");
    CHECK(r.result.stderr_mid_line);
    r = text_run("echo line >&2", SuperviseOptions{});
    CHECK_FALSE(r.result.stderr_mid_line);
    r = text_run("true", SuperviseOptions{});
    CHECK_FALSE(r.result.stderr_mid_line);
}

TEST_CASE("the callback sees exactly the shown chunks") {
    std::string seen_out, seen_err;
    SuperviseOptions o = capture(7, 0, Keep::Head);
    o.on_output = [&](Stream s, std::string_view d) {
        (s == Stream::Stdout ? seen_out : seen_err).append(d);
        return std::string();
    };
    auto r = supervise(sh("echo 12345678901; echo e >&2"), o);
    CHECK(seen_out == "1234567");
    CHECK(seen_err == "e\n");
    CHECK(r.out.shown == seen_out);
}

namespace {

// The command's output goes to a pipe whose reader reads nothing until the
// command's heartbeat (a process it started) has died: both must die at the
// 300 ms deadline all the same, and everything shown must reach the reader
// once it reads.
void stalled_reader(SuperviseOptions o, std::size_t more_than = 65536) {
    const auto dir = temp_dir();
    const auto beat = dir + "/beat";
    int fds[2];
    REQUIRE(::pipe(fds) == 0);  // macOS has no pipe2
    for (int fd : fds) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    o.stdout_fd = fds[1];
    o.caps = OutputCaps{0, 0};
    o.timeout = 300ms;
    std::string got;
    bool beat_died_first = false;
    std::thread reader([&] {
        beat_died_first = eventually([&] {
            const pid_t pid = std::atoi(slurp(beat).c_str());
            return pid > 0 && ended(pid);
        });
        char buf[65536];
        for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    });
    auto r = supervise(sh("sh -c 'echo $$ > " + beat + "; while :; do sleep 0.02; done' & exec yes"), o);
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    CHECK(r.timed_out);
    CHECK(beat_died_first);
    CHECK(got.size() > more_than);
    CHECK(got.find_first_not_of("y\n") == std::string::npos);
    std::remove(beat.c_str());
    ::rmdir(dir.c_str());
}

}  // namespace

TEST_CASE("a reader that stops reading does not hold off the deadline: text mode") {
    SuperviseOptions o;
    o.tail_bytes = 64;  // read and written, as when sandboxed
    stalled_reader(o);
    stalled_reader(SuperviseOptions{}, 65535);  // the command writes to the pipe itself: it fills it
}

TEST_CASE("a reader that stops reading does not hold off the deadline: event lines") {
    SuperviseOptions o;
    o.passthrough = false;
    o.on_output = [](Stream, std::string_view d) { return std::string(d); };
    stalled_reader(o);
}

TEST_CASE("timeout kills a setsid grandchild that ignores SIGTERM and holds the pipes") {
    const auto dir = temp_dir();
    const auto pidfile = dir + "/pid";
    // The grandchild leaves the process group (setsid), ignores TERM and
    // keeps stdout/stderr open; its parent exits at once.
    const std::string script =
        "setsid sh -c 'trap \"\" TERM; echo $$ > " + pidfile + "; while :; do sleep 1; done' & sleep 30";
    SuperviseOptions o = capture();
    o.timeout = 500ms;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = supervise(sh(script), o);
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    CHECK(r.timed_out);
    CHECK(r.exit_code == 124);
    // Not before the deadline; and far before the command's own 30 s (a
    // bound no load comes near).
    CHECK(elapsed >= 500ms);
    CHECK(elapsed < 15s);
    const pid_t grandchild = std::atoi(slurp(pidfile).c_str());
    REQUIRE(grandchild > 0);
    CHECK(killed(grandchild));
    CHECK(r.survivors == 0);
    CHECK(exec::descendants_of(::getpid()).empty());
    std::remove(pidfile.c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("after the command exits, the pipes drain for 2 s and then what is left is killed") {
    const auto dir = temp_dir();
    const auto pidfile = dir + "/pid";
    // The command ends once its background process has written its pid.
    const std::string bg_up = "while [ ! -s " + pidfile + " ]; do sleep 0.01; done";
    const auto t0 = std::chrono::steady_clock::now();
    auto r = supervise(sh("sh -c 'echo $$ > " + pidfile + "; exec sleep 30' & " + bg_up + "; echo done"), capture());
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    CHECK(r.exit_code == 0);
    CHECK(r.out.shown == "done\n");
    // The drain is a 2 s timer; the upper bound only rules out waiting for
    // the holder's own 30 s.
    CHECK(elapsed >= 2s);
    CHECK(elapsed < 20s);
    const pid_t bg = std::atoi(slurp(pidfile).c_str());
    REQUIRE(bg > 0);
    CHECK(killed(bg));

    // A background process that does not hold the pipes is killed at once:
    // under the 2 s that the drain's timer cannot undercut (the run itself
    // takes some 20 ms).
    std::remove(pidfile.c_str());
    const auto t1 = std::chrono::steady_clock::now();
    r = supervise(sh("sh -c 'echo $$ > " + pidfile + "; exec sleep 30' >/dev/null 2>&1 & " + bg_up), capture());
    CHECK(std::chrono::steady_clock::now() - t1 < 2s);
    const pid_t bg2 = std::atoi(slurp(pidfile).c_str());
    REQUIRE(bg2 > 0);
    CHECK(killed(bg2));
    std::remove(pidfile.c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("environment: clear, remove, add") {
    ::setenv("SBX_TEST_KEEP_ME", "yes", 1);
    ::setenv("SBX_TEST_REMOVE_ME", "yes", 1);
    ExecPlan p =
        sh("echo \"k=${SBX_TEST_KEEP_ME-unset} r=${SBX_TEST_REMOVE_ME-unset} a=${SBX_TEST_ADDED-unset} "
           "p=${PATH:+set}\"");
    p.env_remove = {"SBX_TEST_REMOVE_ME"};
    p.env_add = {{"SBX_TEST_ADDED", "v=1"}};
    auto r = supervise(p, capture());
    CHECK(r.out.shown == "k=yes r=unset a=v=1 p=set\n");
    p.clear_env = true;
    r = supervise(p, capture());
    CHECK(r.out.shown == "k=unset r=unset a=v=1 p=set\n");
    ::unsetenv("SBX_TEST_KEEP_ME");
    ::unsetenv("SBX_TEST_REMOVE_ME");
}

TEST_CASE("PATH search uses the command's PATH") {
    const auto dir = temp_dir();
    const auto tool = dir + "/sbx-test-tool";
    std::ofstream(tool) << "#!/bin/sh\necho found-it\n";
    ::chmod(tool.c_str(), 0755);
    ExecPlan p = sh("");
    p.argv = {"sbx-test-tool"};
    p.env_add = {{"PATH", "/nonexistent:" + dir}};
    auto r = supervise(p, capture());
    CHECK(r.exit_code == 0);
    CHECK(r.out.shown == "found-it\n");
    std::remove(tool.c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("cwd and stdin null") {
    ExecPlan p = sh("pwd; cat; echo rc=$?");
    p.cwd = "/usr";
    auto r = supervise(p, capture());
    CHECK(r.out.shown == "/usr\nrc=0\n");
}

TEST_CASE("only fds 0..2 reach the command") {
    const int extra = ::open("/dev/null", O_RDONLY);  // not CLOEXEC on purpose
    REQUIRE(extra >= 3);
    auto r = supervise(sh("ls /proc/self/fd | sort -n | tr '\\n' ' '"), capture());
    ::close(extra);
    // 0, 1, 2 and ls's own directory fd
    CHECK(r.out.shown == "0 1 2 3 ");
}

TEST_CASE("the command runs in its own process group") {
    auto r = supervise(sh("ps -o pgid= -p $$ | tr -d ' '; echo $$"), capture());
    const auto nl = r.out.shown.find('\n');
    REQUIRE(nl != std::string::npos);
    CHECK(r.out.shown.substr(0, nl) + "\n" == r.out.shown.substr(nl + 1));
}

TEST_CASE("orphans that die during the run are reaped at once, not piled up as zombies") {
    // Each ( ... & ) orphans a short-lived sh, reparented to the supervisor.
    // Once all 30 have run (each leaves a file as it ends), the count of
    // zombies falls to 0 while the command still runs; it would stay up if
    // none were reaped before the end.  (The waits are bounded by 60 s.)
    const auto dir = temp_dir();
    auto r =
        supervise(sh("d=" + dir +
                     "; i=0; while [ $i -lt 30 ]; do (sh -c \"touch $d/$i\" &); i=$((i+1)); done; "
                     "i=0; while [ \"$(ls $d | wc -l)\" -lt 30 ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done; "
                     "i=0; while [ \"$(ps -o stat= --ppid $PPID | grep -c Z)\" != 0 ] && [ $i -lt 6000 ]; do "
                     "sleep 0.01; i=$((i+1)); done; ps -o stat= --ppid $PPID | grep -c Z; rm -r $d"),
                  capture());
    CHECK(r.out.shown == "0\n");
}

TEST_CASE("--clear-env keeps exactly the documented variables") {
    CHECK(exec::kept_env_names() == std::vector<std::string>{"PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR"});
}

TEST_CASE("child environment: base, clear_env keeps only the kept names, remove, add") {
    const char* base[] = {"PATH=/bin", "HOME=/root", "SECRET=x", "SBX_SANDBOX=forged", "NOEQUALS", nullptr};
    ExecPlan p;
    p.env_remove = {"HOME"};
    p.env_add = {{"SBX_SANDBOX", "linux"}, {"NEW", "1"}};
    CHECK(exec::child_environment(p, base) ==
          std::vector<std::string>{"PATH=/bin", "SECRET=x", "NOEQUALS", "NEW=1", "SBX_SANDBOX=linux"});
    p.clear_env = true;
    p.env_remove.clear();
    CHECK(exec::child_environment(p, base) ==
          std::vector<std::string>{"PATH=/bin", "HOME=/root", "NEW=1", "SBX_SANDBOX=linux"});
    // Defaults: only where nothing set the name.
    p.clear_env = false;
    p.env_default = {{"SECRET", "default"}, {"NEW", "default"}, {"RETRIES", "0"}};
    CHECK(exec::child_environment(p, base) == std::vector<std::string>{"PATH=/bin", "HOME=/root", "SECRET=x",
                                                                       "NOEQUALS", "NEW=1", "SBX_SANDBOX=linux",
                                                                       "RETRIES=0"});
}

TEST_CASE("exec candidates follow the child's PATH") {
    CHECK(exec::exec_candidates("/bin/ls", {"PATH=/x"}) == std::vector<std::string>{"/bin/ls"});
    CHECK(exec::exec_candidates("./run", {}) == std::vector<std::string>{"./run"});
    CHECK(exec::exec_candidates("ls", {"PATH=/a::/b"}) == std::vector<std::string>{"/a/ls", "./ls", "/b/ls"});
    CHECK(exec::exec_candidates("ls", {}) == std::vector<std::string>{"/usr/local/bin/ls", "/usr/bin/ls", "/bin/ls"});
}
