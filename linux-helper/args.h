// The helper's command line (SPEC section 6, CODEX-HELPER.md section 2):
//
//   codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] --permission-profile JSON
//                       [--use-legacy-landlock] [--managed-network JSON [--transparent-tcp]] [--no-proc]
//                       [--inherit-pid-namespace] [--] CMD...
//   codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] --sandbox-policy JSON [--] CMD...
//   codex-linux-sandbox DIR JSON -- CMD...
//
// The first is Codex 0.169's, the others the older forms; sbx adds options of
// its own (--status-fd, --record-*, --private-terminal, --proxy-fd, --mask-file).  The
// names are wire/helper_wire.h's, which sbx writes them with.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "managed_network.h"

namespace sbx::helper {

struct Args {
    std::string policy_cwd;  // as given (the permission profile keeps a relative one relative)
    std::optional<std::string> command_cwd;
    std::optional<std::string> policy_json;   // --sandbox-policy, or the older positional form
    std::optional<std::string> profile_json;  // --permission-profile
    bool no_proc = false;
    std::optional<int> status_fd;                   // --status-fd
    std::optional<int> proxy_fd;                    // --proxy-fd (sbx's allowlist proxy, network.h)
    bool record_denials = false;                    // --record-denials (recorder.h)
    bool record_network = false;                    // --record-network (recorder.h)
    std::optional<ManagedNetwork> managed_network;  // --managed-network (managed_network.h)
    bool transparent_tcp = false;                   // --transparent-tcp (transparent.h)
    bool private_terminal = false;                  // --private-terminal (inherited_fds.h)
    bool learn = false;                             // --learn (learn_view.h)
    bool learn_reads = false;                       // --learn-reads (recorder.h)
    // --mask-file N:PATH, repeatable (file_mask.h): sbx's masked secrets.
    std::vector<std::pair<int, std::string>> mask_files;
    char** command = nullptr;  // argv-style, null-terminated
};

// Options in any order, "--flag value" or "--flag=value", each at most once;
// "--" or the first argument that is not an option starts the command.
// --help prints the help and exits 0.  Throws StepError ("arguments") for
// anything else that is wrong.
Args parse_args(int argc, char** argv);

// What --help prints, and the options parse_args takes but Codex's inner
// stages (which --help does not list).
std::string_view help_text();
std::vector<std::string_view> option_names();

// A refusal of the arguments, with the usage line as its fix.
[[noreturn]] void usage_error(const std::string& reason);

}  // namespace sbx::helper
