// The spawn-and-wait building block (exec/spawn.h): the exit status
// arithmetic, the poll timeout, and real children.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "exec/spawn.h"

using namespace sbx::exec;
using namespace std::chrono_literals;

namespace {

siginfo_t ended(int code, int status) {
    siginfo_t info{};
    info.si_code = code;
    info.si_status = status;
    return info;
}

}  // namespace

TEST_CASE("exit status: the code, or 128+N and the signal") {
    const ExitStatus exited = exit_status_of(ended(CLD_EXITED, 3));
    CHECK(exited.code == 3);
    CHECK_FALSE(exited.signal);
    const ExitStatus killed = exit_status_of(ended(CLD_KILLED, SIGKILL));
    CHECK(killed.code == 128 + SIGKILL);
    CHECK(killed.signal == SIGKILL);
    const ExitStatus dumped = exit_status_of(ended(CLD_DUMPED, SIGSEGV));
    CHECK(dumped.code == 128 + SIGSEGV);
    CHECK(dumped.signal == SIGSEGV);
}

TEST_CASE("poll timeout: none, passed, rounded up, bounded") {
    const auto now = Clock::now();
    CHECK(poll_timeout(now, std::nullopt) == -1);
    CHECK(poll_timeout(now, now) == 0);
    CHECK(poll_timeout(now, now - 5ms) == 0);
    CHECK(poll_timeout(now, now + 1us) == 1);
    CHECK(poll_timeout(now, now + 1500us) == 2);
    CHECK(poll_timeout(now, now + 250ms) == 250);
    CHECK(poll_timeout(now, now + std::chrono::hours(24 * 30)) == 1'000'000);
}

TEST_CASE("spawn: the child's exit status through its pidfd") {
    auto exits = [] {
        ::_exit(7);
        return 0;
    };
    Child child = spawn("a test child", exits);
    CHECK(child.pid() > 0);
    const auto info = child.wait_until(std::nullopt);
    REQUIRE(info);
    CHECK(exit_status_of(*info).code == 7);
    CHECK_FALSE(child.try_wait());  // reaped once
}

TEST_CASE("spawn: a wait until a deadline gives up, the kill ends it") {
    char sleep_path[] = "/bin/sleep";
    char seconds[] = "30";
    char* argv[] = {sleep_path, seconds, nullptr};
    auto sleeps = [&] {
        ::setpgid(0, 0);
        ::execv(argv[0], argv);
        ::_exit(127);
        return 0;
    };
    Child child = spawn("a test child", sleeps);
    const auto start = Clock::now();
    CHECK_FALSE(child.wait_until(Clock::now() + 50ms));
    CHECK(Clock::now() - start >= 50ms);
    CHECK_FALSE(child.try_wait());
    child.kill_group();
    const auto info = child.wait_until(Clock::now() + 10s);
    REQUIRE(info);
    CHECK(exit_status_of(*info).signal == SIGKILL);
}

TEST_CASE("spawn: a child left running is killed and reaped with its object") {
    char sleep_path[] = "/bin/sleep";
    char seconds[] = "30";
    char* argv[] = {sleep_path, seconds, nullptr};
    auto sleeps = [&] {
        ::execv(argv[0], argv);
        ::_exit(127);
        return 0;
    };
    pid_t pid = 0;
    {
        Child child = spawn("a test child", sleeps);
        pid = child.pid();
    }
    CHECK(::waitpid(pid, nullptr, WNOHANG) < 0);  // gone, and reaped already
    CHECK(errno == ECHILD);
}
