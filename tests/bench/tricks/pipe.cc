// The output pipe: a command writing through a pipe of the default size
// (64 KiB) against one enlarged with F_SETPIPE_SZ to 1 MiB, as the
// supervisor does when it reads the output itself.  The writer writes 128
// KiB at a time (as cat does); the reader polls and reads up to 256 KiB (the
// supervisor's kReadBuffer).
//   pipe ROUNDS MIB_PER_SAMPLE
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench.h"

namespace {

struct Reads {
    long reads = 0, mib = 0;
    double per_mib() const { return static_cast<double>(reads) / static_cast<double>(mib); }
};

double transfer(int mib, int pipe_size, Reads& reads) {
    reads.mib += mib;
    int ends[2];
    if (pipe(ends) != 0) std::exit(1);
    if (pipe_size > 0 && fcntl(ends[0], F_SETPIPE_SZ, pipe_size) < 0) std::perror("F_SETPIPE_SZ");
    const double t0 = tricks::now_us();
    const pid_t pid = fork();
    if (pid == 0) {
        close(ends[0]);
        std::vector<char> chunk(128 * 1024, 'x');
        for (long left = static_cast<long>(mib) << 20; left > 0; left -= static_cast<long>(chunk.size()))
            if (write(ends[1], chunk.data(), chunk.size()) < 0) _exit(1);
        _exit(0);
    }
    close(ends[1]);
    std::vector<char> buf(256 * 1024);
    long got = 0;
    for (;;) {
        pollfd p{ends[0], POLLIN, 0};
        if (poll(&p, 1, -1) < 0) std::exit(1);
        const ssize_t n = read(ends[0], buf.data(), buf.size());
        if (n <= 0) break;
        got += n;
        ++reads.reads;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    close(ends[0]);
    if (got != static_cast<long>(mib) << 20 || status != 0) std::exit(1);
    return (tricks::now_us() - t0) / mib;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    const int rounds = std::atoi(argv[1]), mib = std::atoi(argv[2]);
    Reads reads[2];
    std::vector<tricks::Variant> v{
        {"default pipe (64 KiB)", [&reads](int b) { return transfer(b, 0, reads[0]); }},
        {"F_SETPIPE_SZ 1 MiB", [&reads](int b) { return transfer(b, 1 << 20, reads[1]); }},
    };
    std::printf("  %d MiB through a pipe (%d rounds, median us per MiB):\n", mib, rounds);
    const auto m = tricks::interleave(v, rounds, mib);
    tricks::print_medians(v, m);
    tricks::print_saving("the larger pipe", m[0], m[1], "us", "MiB");
    std::printf("    reads (the reader's wakeups) per MiB: %.1f with the default pipe, %.1f with 1 MiB\n",
                reads[0].per_mib(), reads[1].per_mib());
    return 0;
}
