// The helper's seccomp filter (network restricted, the default): built by
// libseccomp at run time against loading the program seccomp-gen built at
// build time; and the kernel's cost per system call under the binary tree
// (SCMP_FLTATR_CTL_OPTIMIZE 2, what seccomp-gen asks for) and under
// libseccomp's default layout (1).  The rules are linux-helper/seccomp_gen.cc's
// own: this file includes it (its main renamed).  A filter cannot be
// unloaded, so each measurement runs in a fresh child.
//   seccomp ROUNDS INSTALLS_PER_ROUND CHILDREN_PER_ROUND CALLS_PER_CHILD
#define main seccomp_gen_main
#include "../../../linux-helper/seccomp_gen.cc"
#undef main

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>

#include "bench.h"

namespace {

// The program of a context, in a given layout (exported through a pipe).
std::vector<sock_filter> export_layout(Network network, int optimize) {
    Ctx ctx = build(network);
    if (seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, static_cast<std::uint32_t>(optimize)) < 0)
        fail("cannot set the layout", EINVAL);
    int ends[2];
    if (::pipe(ends) != 0) fail("pipe", errno);
    if (seccomp_export_bpf(ctx.get(), ends[1]) < 0) fail("export", EINVAL);
    ::close(ends[1]);
    std::vector<sock_filter> prog(4096);
    const ssize_t n = ::read(ends[0], prog.data(), prog.size() * sizeof(sock_filter));
    ::close(ends[0]);
    if (n <= 0) fail("read", errno);
    prog.resize(static_cast<std::size_t>(n) / sizeof(sock_filter));
    return prog;
}

void load(const std::vector<sock_filter>& prog) {
    sock_fprog fprog{static_cast<unsigned short>(prog.size()), const_cast<sock_filter*>(prog.data())};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) _exit(3);
}

// Runs `work` in `batch` fresh children (each under no_new_privs, as the
// helper's command is); returns the mean of what each reports, in us.
double in_children(int batch, const std::function<double()>& work) {
    double sum = 0;
    for (int i = 0; i < batch; ++i) {
        int ends[2];
        if (::pipe(ends) != 0) fail("pipe", errno);
        const pid_t pid = fork();
        if (pid == 0) {
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(2);
            const double us = work();
            if (write(ends[1], &us, sizeof us) != sizeof us) _exit(2);
            _exit(0);
        }
        ::close(ends[1]);
        double us = 0;
        int status = 0;
        const ssize_t got = read(ends[0], &us, sizeof us);
        if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0 || got != sizeof us)
            throw std::runtime_error("seccomp: a measuring child failed (wait status " + std::to_string(status) + ")");
        ::close(ends[0]);
        sum += us;
    }
    return sum / batch;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) return 2;
    const int rounds = std::atoi(argv[1]), batch = std::atoi(argv[2]), children = std::atoi(argv[3]);
    const long calls = std::atol(argv[4]);
    // Without seccomp-gen's seccomp_api_set(5): libseccomp at run time
    // probes the kernel (and with level 5 forced, its seccomp_load fails
    // here).  The programs come out the same at either level.
    const auto tree = export_layout(Network::Restricted, 2);
    const auto linear = export_layout(Network::Restricted, 1);

    std::vector<tricks::Variant> start{
        {"libseccomp at run time (tree)",
         [&](int b) {
             return in_children(b, [] {
                 const double t0 = tricks::now_us();
                 Ctx ctx = build(Network::Restricted);
                 if (seccomp_load(ctx.get()) != 0) _exit(3);
                 return tricks::now_us() - t0;
             });
         }},
        {"prebuilt, default layout",
         [&](int b) {
             return in_children(b, [&] {
                 const double t0 = tricks::now_us();
                 load(linear);
                 return tricks::now_us() - t0;
             });
         }},
        {"prebuilt binary tree (sbx)",
         [&](int b) {
             return in_children(b, [&] {
                 const double t0 = tricks::now_us();
                 load(tree);
                 return tricks::now_us() - t0;
             });
         }},
    };
    std::printf(
        "  installing the restricted filter (%zu instructions as a tree, %zu in the default layout; "
        "%d rounds of %d children, median us per install):\n",
        tree.size(), linear.size(), rounds, batch);
    auto m = tricks::interleave(start, rounds, batch);
    tricks::print_medians(start, m);
    tricks::print_saving("prebuilt tree over libseccomp at run time", m[0], m[2]);
    tricks::print_saving("tree over default layout, loading", m[1], m[2]);

    // getppid is allowed whatever its arguments, so the kernel's action
    // cache lets it through without running the filter; openat (the rules on
    // O_CREAT and the mode) and ioctl (the terminal requests) have argument
    // rules, so each of those runs the filter.  openat of "" fails at once
    // (ENOENT), ioctl of fd -1 too (EBADF).
    struct Call {
        const char* name;
        long nr, a0, a1, a2;
    };
    for (const Call call : {Call{"getppid", SYS_getppid, 0, 0, 0},
                            Call{"openat", SYS_openat, AT_FDCWD, reinterpret_cast<long>(""), O_RDONLY},
                            Call{"ioctl", SYS_ioctl, -1, FIONREAD, 0}}) {
        auto per_call = [calls, call](const std::vector<sock_filter>* prog) {
            return [calls, call, prog](int b) {
                return in_children(b, [calls, call, prog] {
                    if (prog != nullptr) load(*prog);
                    const double t0 = tricks::now_us();
                    for (long i = 0; i < calls; ++i) syscall(call.nr, call.a0, call.a1, call.a2);
                    return (tricks::now_us() - t0) / static_cast<double>(calls);
                });
            };
        };
        std::vector<tricks::Variant> each{
            {"no filter", per_call(nullptr)},
            {"default layout", per_call(&linear)},
            {"binary tree (sbx)", per_call(&tree)},
        };
        std::printf("  %ld %s() calls per child (%d rounds of %d children, median ns per call):\n", calls, call.name,
                    rounds, children);
        m = tricks::interleave(each, rounds, children);
        tricks::print_medians(each, m, "ns");
        tricks::print_saving("tree over default layout", m[1], m[2], "ns", "call");
    }
    return 0;
}
