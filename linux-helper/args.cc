#include "args.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "step_error.h"
#include "wire/helper_wire.h"

namespace sbx::helper {
namespace {

namespace option = wire::option;

constexpr const char* kUsage =
    "usage: codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] "
    "(--permission-profile JSON | --sandbox-policy JSON) [--no-proc] [--] CMD...";

constexpr const char* kHelp =
    "usage: codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR]\n"
    "                           --permission-profile JSON [--use-legacy-landlock]\n"
    "                           [--managed-network JSON [--transparent-tcp]] [--no-proc]\n"
    "                           [--inherit-pid-namespace] [--status-fd N]\n"
    "                           [--private-terminal]\n"
    "                           [--] CMD [ARG...]\n"
    "       codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR]\n"
    "                           --sandbox-policy JSON [--no-proc] [--] CMD [ARG...]\n"
    "       codex-linux-sandbox DIR JSON -- CMD [ARG...]\n"
    "\n"
    "Applies the sandbox the policy describes to itself, then runs CMD.\n"
    "\n"
    "  --sandbox-policy-cwd DIR      the base of :project_roots entries, relative globs\n"
    "                                and relative paths (the workspace)\n"
    "  --command-cwd DIR             the directory CMD starts in, by its real path (PWD\n"
    "                                names it where DIR has a symlink; default: the\n"
    "                                current directory)\n"
    "  --permission-profile JSON     Codex's permission profile (Codex 0.169 and later)\n"
    "  --sandbox-policy JSON         sbx's canonical policy, or Codex's older SandboxPolicy\n"
    "  --use-legacy-landlock         accepted; the sandbox is the same without it\n"
    "  --managed-network JSON        Codex's proxy-only network: a private network whose\n"
    "                                127.0.0.1:PORT, for each of loopbackPorts, reaches\n"
    "                                the host's 127.0.0.1:PORT (Codex's proxy) and nothing\n"
    "                                else; needs HTTP_PROXY or the like set to one of them\n"
    "  --transparent-tcp             with --managed-network (or --proxy-fd): TCP to any\n"
    "                                address goes through the proxy's SOCKS5 listener\n"
    "                                (ALL_PROXY=socks5h://127.0.0.1:PORT), names through\n"
    "                                the sandbox's resolver on 127.0.0.53\n"
    "  --no-proc                     no fresh /proc: /proc is an empty read-only directory\n"
    "  --inherit-pid-namespace       accepted; the sandbox keeps a pid namespace of its own\n"
    "  --status-fd N                 report failures as JSON lines on descriptor N, not on\n"
    "                                stderr (see codex-linux-sandbox(1))\n"
    "  --record-denials              report each write the sandbox refuses (and each\n"
    "                                connect it refuses) as a status line\n"
    "  --record-network              report each connect the sandbox refuses, with its\n"
    "                                destination: under network restricted every connect\n"
    "                                or send (refused at once), under limited one that\n"
    "                                leaves the sandbox's loopback\n"
    "  --private-terminal            the controlling terminal, and any terminal on\n"
    "                                stdin, stdout or stderr, is one the caller made\n"
    "                                for this sandbox alone (sbx's pty relay): the\n"
    "                                command may resize it (TIOCSWINSZ)\n"
    "  --learn                       a learning run (sbx learn): every write lands in a\n"
    "                                throwaway layer, and each operation the policy\n"
    "                                refuses is recorded instead (as --record-denials)\n"
    "  --learn-reads                 with --learn, the policy need not read every file:\n"
    "                                the view reads them all, and each file opened and\n"
    "                                program run that the policy cannot read is recorded\n"
    "  --mask-file N:PATH            (repeatable) show what descriptor N holds (read\n"
    "                                to its end, at most 1 MiB) in place of the file\n"
    "                                PATH, read-only (sbx's masked secrets; a hard\n"
    "                                link elsewhere still shows the file: sbx refuses\n"
    "                                such files)\n"
    "  --proxy-fd N                  with allow_domains (network limited), or --learn\n"
    "                                under network limited: send the listening socket\n"
    "                                of 127.0.0.1:3128 in the sandbox's network to\n"
    "                                sbx's allowlist proxy on socket N\n"
    "  -h, --help                    this text\n"
    "\n"
    "Options may be written --option=VALUE; each may be given once.  Exit status:\n"
    "the command's own, 125 when the arguments are wrong or the sandbox cannot be\n"
    "applied, 126/127 when CMD cannot be executed or is not found.\n";

}  // namespace

std::string_view help_text() { return kHelp; }

void usage_error(const std::string& reason) { fail("arguments", reason, kUsage); }

namespace {

// A descriptor number: digits only, 3 or more (0, 1 and 2 are the command's).
int descriptor(const std::string& text, std::string_view option) {
    int fd = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), fd);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || fd < 3)
        usage_error(std::string(option) + ": '" + text + "' is not a descriptor number of 3 or more");
    return fd;
}

// --mask-file N:PATH: a descriptor of 3 or more, an absolute PATH (after the
// first ':'), at most kMaxMaskFiles of them.
constexpr std::size_t kMaxMaskFiles = 64;
std::pair<int, std::string> mask_file(const std::string& value, std::size_t before) {
    if (before >= kMaxMaskFiles) usage_error("--mask-file: more than 64");
    const auto colon = value.find(':');
    if (colon == std::string::npos) usage_error("--mask-file: '" + value + "' is not N:PATH");
    std::string path = value.substr(colon + 1);
    if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos)
        usage_error("--mask-file: '" + path + "' is not an absolute path");
    return {descriptor(value.substr(0, colon), "--mask-file"), std::move(path)};
}

// The options of CODEX-HELPER.md section 2, and what each does here.
enum class Opt {
    PolicyCwd,
    CommandCwd,
    PermissionProfile,
    SandboxPolicy,
    ManagedNetwork,
    TransparentTcp,
    LegacyLandlock,
    NoProc,
    InheritPid,
    StatusFd,
    ProxyFd,
    RecordDenials,
    RecordNetwork,
    PrivateTerminal,
    Learn,
    LearnReads,
    MaskFile,
    Help,
    InnerStage,
};
struct OptionSpec {
    std::string_view name;
    Opt opt;
    bool value;
};
constexpr OptionSpec kOptions[] = {
    {option::kPolicyCwd, Opt::PolicyCwd, true},
    {option::kCommandCwd, Opt::CommandCwd, true},
    {option::kPermissionProfile, Opt::PermissionProfile, true},
    {option::kSandboxPolicy, Opt::SandboxPolicy, true},
    {option::kManagedNetwork, Opt::ManagedNetwork, true},
    {option::kTransparentTcp, Opt::TransparentTcp, false},
    {option::kLegacyLandlock, Opt::LegacyLandlock, false},
    {option::kNoProc, Opt::NoProc, false},
    {option::kInheritPidNamespace, Opt::InheritPid, false},
    {option::kStatusFd, Opt::StatusFd, true},
    {option::kRecordDenials, Opt::RecordDenials, false},
    {option::kRecordNetwork, Opt::RecordNetwork, false},
    {option::kProxyFd, Opt::ProxyFd, true},
    {option::kPrivateTerminal, Opt::PrivateTerminal, false},
    {option::kLearn, Opt::Learn, false},
    {option::kLearnReads, Opt::LearnReads, false},
    {option::kMaskFile, Opt::MaskFile, true},
    {"--help", Opt::Help, false},
    {"-h", Opt::Help, false},
    // Codex's helper runs itself again inside its sandbox with these.
    {"--apply-seccomp-then-exec", Opt::InnerStage, false},
    {"--proxy-route-spec", Opt::InnerStage, true},
    {"--verify-fd-mount", Opt::InnerStage, true},
};

}  // namespace

std::vector<std::string_view> option_names() {
    std::vector<std::string_view> out;
    for (const auto& o : kOptions)
        if (o.opt != Opt::InnerStage) out.push_back(o.name);
    return out;
}

// The older form takes two positional arguments, DIR and JSON, first.
Args parse_args(int argc, char** argv) {
    Args args;
    std::optional<std::string> cwd;
    std::vector<std::string_view> seen;
    int i = 1;
    if (argc > 2 && argv[1][0] != '-') {
        // The older form: DIR JSON first.
        cwd = argv[1];
        args.policy_json = argv[2];
        i = 3;
    }
    for (; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg.size() < 2 || arg[0] != '-') break;  // the command, without a "--"
        const std::string_view name = arg.substr(0, arg.find('='));
        const OptionSpec* spec = nullptr;
        for (const auto& o : kOptions)
            if (o.name == name) spec = &o;
        if (spec == nullptr) usage_error("unknown option '" + std::string(name) + "'");
        std::optional<std::string> value;
        if (name.size() < arg.size()) {
            if (!spec->value) usage_error(std::string(name) + " takes no value");
            value = std::string(arg.substr(name.size() + 1));
        } else if (spec->value) {
            if (i + 1 >= argc) usage_error(std::string(name) + " needs a value");
            value = std::string(argv[++i]);
        }
        const bool repeatable = spec->opt == Opt::MaskFile;
        if ((!repeatable && std::find(seen.begin(), seen.end(), spec->name) != seen.end()) ||
            (spec->opt == Opt::PolicyCwd && cwd) || (spec->opt == Opt::SandboxPolicy && args.policy_json))
            usage_error(std::string(name) + " given more than once");
        seen.push_back(spec->name);
        switch (spec->opt) {
            case Opt::PolicyCwd: cwd = value; break;
            case Opt::CommandCwd: args.command_cwd = value; break;
            case Opt::PermissionProfile: args.profile_json = value; break;
            case Opt::SandboxPolicy: args.policy_json = value; break;
            case Opt::NoProc: args.no_proc = true; break;
            // One pipeline here: with or without it, the same sandbox.
            case Opt::LegacyLandlock: break;
            // The sandbox keeps its own pid namespace and /proc (stricter).
            case Opt::InheritPid: break;
            case Opt::StatusFd: args.status_fd = descriptor(*value, name); break;
            case Opt::ProxyFd: args.proxy_fd = descriptor(*value, name); break;
            case Opt::RecordDenials: args.record_denials = true; break;
            case Opt::RecordNetwork: args.record_network = true; break;
            case Opt::PrivateTerminal: args.private_terminal = true; break;
            case Opt::Learn: args.learn = true; break;
            case Opt::LearnReads: args.learn_reads = true; break;
            case Opt::MaskFile: args.mask_files.push_back(mask_file(*value, args.mask_files.size())); break;
            case Opt::Help: write_all(STDOUT_FILENO, help_text()); std::exit(0);
            case Opt::ManagedNetwork: args.managed_network = parse_managed_network(*value); break;
            case Opt::TransparentTcp: args.transparent_tcp = true; break;
            case Opt::InnerStage:
                usage_error(std::string(name) + " is an inner stage of Codex's own helper, not for callers");
        }
    }
    if (args.policy_json && args.profile_json)
        usage_error("--sandbox-policy and --permission-profile together: give one policy");
    if (!cwd) usage_error("missing --sandbox-policy-cwd");
    if (!args.policy_json && !args.profile_json) usage_error("missing --permission-profile (or --sandbox-policy)");
    if (i >= argc) usage_error("missing the command");
    args.policy_cwd = *cwd;
    args.command = argv + i;
    return args;
}

}  // namespace sbx::helper
