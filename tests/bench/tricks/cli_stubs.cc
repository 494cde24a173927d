// The commands that src/cli/options.cc hands its parsed structs to, as
// stubs: tricks.sh measures only the parse.  Compiled twice, like
// options.cc (once with -Dcli=cli_all for its unfiltered copy).
#include <cstdlib>

#include "cli/options.h"

namespace sbx::cli {

int run_command(const RunArgs& args) {
    // The command line the benchmark parses, or the parse went wrong.
    if (args.command.argv.size() != 1 || args.command.argv[0] != "true" ||
        args.policy.flags.mode != Mode::WorkspaceWrite)
        std::abort();
    return 0;
}
int policy_command(const PolicyCommandArgs&) { std::abort(); }
int check_command(const CheckArgs&) { std::abort(); }
int doctor_command(const DoctorArgs&) { std::abort(); }

}  // namespace sbx::cli
