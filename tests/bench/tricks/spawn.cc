// Starting a command: fork+exec against clone(CLONE_VM|CLONE_VFORK)+exec
// (sbx's supervisor and the helper's pid 1) and posix_spawn, from a process
// holding a given resident size; or posix_spawn of several executables (the
// same program linked in different ways).
//   spawn methods TARGET_RSS_MIB ROUNDS BATCH
//   spawn exes ROUNDS BATCH NAME=PATH...
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"

extern char** environ;

namespace {

double rss_mib() {
    long pages = 0, resident = 0;
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr || std::fscanf(f, "%ld %ld", &pages, &resident) != 2) std::abort();
    std::fclose(f);
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

void wait_ok(pid_t pid) {
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "spawn: the child failed\n");
        std::exit(1);
    }
}

char* const* argv_of(const char* path) {
    static thread_local char* argv[2];
    argv[0] = const_cast<char*>(path);
    argv[1] = nullptr;
    return argv;
}

double with_fork(int batch, const char* path) {
    const double t0 = tricks::now_us();
    for (int i = 0; i < batch; ++i) {
        const pid_t pid = fork();
        if (pid == 0) {
            execve(path, argv_of(path), environ);
            _exit(127);
        }
        wait_ok(pid);
    }
    return (tricks::now_us() - t0) / batch;
}

struct CloneArgs {
    const char* path;
};
int clone_child(void* p) {
    const char* path = static_cast<CloneArgs*>(p)->path;
    execve(path, argv_of(path), environ);
    _exit(127);
}

// As src/exec/supervisor.cc does it: a stack of the child's own in the
// parent's memory, the parent suspended until the child has exec'd.
double with_clone(int batch, const char* path) {
    constexpr std::size_t kStack = 64 * 1024;
    auto stack = std::make_unique<char[]>(kStack);
    CloneArgs args{path};
    const double t0 = tricks::now_us();
    for (int i = 0; i < batch; ++i)
        wait_ok(clone(clone_child, stack.get() + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &args));
    return (tricks::now_us() - t0) / batch;
}

double with_posix_spawn(int batch, const char* path) {
    const double t0 = tricks::now_us();
    for (int i = 0; i < batch; ++i) {
        pid_t pid = -1;
        if (posix_spawn(&pid, path, nullptr, nullptr, argv_of(path), environ) != 0) pid = -1;
        wait_ok(pid);
    }
    return (tricks::now_us() - t0) / batch;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 5 && std::strcmp(argv[1], "methods") == 0) {
        const double target = std::atof(argv[2]);
        const int rounds = std::atoi(argv[3]), batch = std::atoi(argv[4]);
        // Resident memory, as a larger process would hold: every page touched.
        const double extra = target - rss_mib();
        std::vector<char> ballast(extra > 0 ? static_cast<std::size_t>(extra * (1 << 20)) : 0);
        std::memset(ballast.data(), 1, ballast.size());
        const char* path = "/bin/true";
        std::vector<tricks::Variant> v{
            {"fork + exec", [&](int b) { return with_fork(b, path); }},
            {"clone(CLONE_VM|CLONE_VFORK) + exec", [&](int b) { return with_clone(b, path); }},
            {"posix_spawn", [&](int b) { return with_posix_spawn(b, path); }},
        };
        std::printf("  spawning /bin/true from a process of %.1f MiB RSS (%d rounds of %d, median us per launch):\n",
                    rss_mib(), rounds, batch);
        const auto m = tricks::interleave(v, rounds, batch);
        tricks::print_medians(v, m);
        tricks::print_saving("clone over fork", m[0], m[1]);
        return 0;
    }
    if (argc >= 5 && std::strcmp(argv[1], "exes") == 0) {
        const int rounds = std::atoi(argv[2]), batch = std::atoi(argv[3]);
        std::vector<tricks::Variant> v;
        std::vector<std::string> paths;
        for (int i = 4; i < argc; ++i) {
            const char* eq = std::strchr(argv[i], '=');
            if (eq == nullptr) return 2;
            paths.emplace_back(eq + 1);
        }
        for (int i = 4; i < argc; ++i) {
            const std::string& path = paths[static_cast<std::size_t>(i - 4)];
            v.push_back({std::string(argv[i], std::strchr(argv[i], '=')),
                         [&path](int b) { return with_posix_spawn(b, path.c_str()); }});
        }
        std::printf("  posix_spawn + wait of each (%d rounds of %d, median us per launch):\n", rounds, batch);
        const auto m = tricks::interleave(v, rounds, batch);
        tricks::print_medians(v, m);
        for (std::size_t i = 1; i < m.size(); ++i)
            tricks::print_saving((v[0].name + " over " + v[i].name).c_str(), m[i], m[0]);
        return 0;
    }
    std::fprintf(stderr, "usage: spawn methods TARGET_RSS_MIB ROUNDS BATCH | spawn exes ROUNDS BATCH NAME=PATH...\n");
    return 2;
}
