// The host watch (linux-helper/host_watch.h): the directories watched for a
// covered path, and a real watch killing a real process when a name appears.
#include "host_watch.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "error_of.h"

using sbx::helper::HostWatch;
using sbx::helper::watch_points;
using sbx::helper::WatchPoint;
using sbx::test::error_of;

TEST_CASE("every directory on a covered path's way is watched for the next name, each pair once") {
    CHECK(watch_points({"/ws/a/.env"}) == std::vector<WatchPoint>{{"/", "ws", "/ws/a/.env"},
                                                                  {"/ws", "a", "/ws/a/.env"},
                                                                  {"/ws/a", ".env", "/ws/a/.env"}});
    CHECK(watch_points({"/ws/.env", "/ws/.git"}) ==
          std::vector<WatchPoint>{{"/", "ws", "/ws/.env"}, {"/ws", ".env", "/ws/.env"}, {"/ws", ".git", "/ws/.git"}});
    CHECK(watch_points({}).empty());
}

namespace {

namespace fs = std::filesystem;

// A child that waits on a pipe until killed (or until the pipe closes).
struct Waiter {
    pid_t pid = -1;
    int hold = -1;  // the pipe's write end, in the parent
    Waiter() {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(fds[1]);
            char c;
            [[maybe_unused]] const ssize_t n = ::read(fds[0], &c, 1);
            ::_exit(0);
        }
        ::close(fds[0]);
        hold = fds[1];
    }
    // Its wait status once it has ended; -1 after 30 s, a bound on a failure only.
    int ended_within_30s() const {
        const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
        pollfd p{pidfd, POLLIN, 0};
        const int ready = ::poll(&p, 1, 30000);
        ::close(pidfd);
        if (ready != 1) return -1;
        int status = 0;
        ::waitpid(pid, &status, 0);
        return status;
    }
    void release() const { ::close(hold); }
};

fs::path scratch() {
    std::string dir = (fs::temp_directory_path() / "sbx-host-watch.XXXXXX").string();
    REQUIRE(::mkdtemp(dir.data()) != nullptr);
    return dir;
}

void write(const fs::path& p, const char* text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("a file renamed over a covered path kills the watched process; finish names the path", "[no-qemu]") {
    const fs::path dir = scratch();
    write(dir / ".env", "old");
    HostWatch watch({(dir / ".env").string()});
    const Waiter waiter;
    watch.start(waiter.pid);
    write(dir / "new", "new");
    fs::rename(dir / "new", dir / ".env");
    const int status = waiter.ended_within_30s();
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    CHECK(error_of([&] { watch.finish(); }).find("the host replaced " + (dir / ".env").string()) != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("writes in place and other names leave the watched process alone", "[no-qemu]") {
    const fs::path dir = scratch();
    write(dir / ".env", "old");
    HostWatch watch({(dir / ".env").string()});
    const Waiter waiter;
    watch.start(waiter.pid);
    write(dir / ".env", "new, in place");
    write(dir / "other", "x");
    fs::rename(dir / "other", dir / "moved");
    waiter.release();
    const int status = waiter.ended_within_30s();
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK_NOTHROW(watch.finish());
    fs::remove_all(dir);
}

TEST_CASE("a name appearing after the process ended still counts") {
    const fs::path dir = scratch();
    HostWatch watch({(dir / "missing").string()});
    write(dir / "missing", "made");
    CHECK(error_of([&] { watch.finish(); }).find("missing") != std::string::npos);
    fs::remove_all(dir);
}
