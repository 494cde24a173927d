// sbx's one error boundary: every refusal becomes one "sbx: " line and exit 125.
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/cli.h"
#include "util/error.h"

int main(int argc, char** argv) {
    try {
        return sbx::cli::main(argc, argv);
    } catch (const sbx::Error& e) {
        fmt::print(stderr, "sbx: {}\n", e.what());
    } catch (const std::exception& e) {
        fmt::print(stderr, "sbx: internal error: {}\n", e.what());
    }
    std::fflush(stdout);
    return 125;
}
