// src/cli/options.cc's parse of `sbx run -p workspace-write -- true`, with
// its argv pre-filter (class Wanted: only the options whose names appear in
// argv are added to CLI11) and without it (tricks.sh compiles a copy of
// options.cc whose filter wants every option, in namespace sbx::cli_all).
//   cli ROUNDS BATCH
#include <cstdio>
#include <cstdlib>

#include "bench.h"

namespace sbx::cli {
int main(int argc, char** argv);
}
namespace sbx::cli_all {
int main(int argc, char** argv);
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    const int rounds = std::atoi(argv[1]), batch = std::atoi(argv[2]);
    char* line[] = {const_cast<char*>("sbx"),
                    const_cast<char*>("run"),
                    const_cast<char*>("-p"),
                    const_cast<char*>("workspace-write"),
                    const_cast<char*>("--"),
                    const_cast<char*>("true"),
                    nullptr};
    auto timed = [&line](int (*parse)(int, char**)) {
        return [&line, parse](int b) {
            const double t0 = tricks::now_us();
            for (int i = 0; i < b; ++i)
                if (parse(6, line) != 0) std::abort();
            return (tricks::now_us() - t0) / b;
        };
    };
    std::vector<tricks::Variant> v{
        {"every option added to CLI11", timed(sbx::cli_all::main)},
        {"only the wanted ones (Wanted)", timed(sbx::cli::main)},
    };
    std::printf("  parsing `sbx run -p workspace-write -- true` in process (%d rounds of %d, median us per parse):\n",
                rounds, batch);
    const auto m = tricks::interleave(v, rounds, batch);
    tricks::print_medians(v, m);
    tricks::print_saving("the pre-filter", m[0], m[1]);
    return 0;
}
