#include "approval/safe_commands.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "approval/shell.h"

namespace sbx::approval {
namespace {

using Args = std::vector<std::string>;

// Readers that are safe with any arguments.
constexpr std::array<std::string_view, 37> kAlwaysSafe{
    "basename", "cat",      "cd",     "cmp",   "comm",     "cut",      "df",    "diff",    "dirname",   "du",
    "echo",     "egrep",    "expr",   "false", "fgrep",    "grep",     "head",  "id",      "ls",        "md5sum",
    "nl",       "printenv", "printf", "pwd",   "readlink", "realpath", "seq",   "sha1sum", "sha256sum", "stat",
    "tail",     "tr",       "true",   "uname", "wc",       "which",    "whoami"};

bool starts_with_any(std::string_view arg, std::initializer_list<std::string_view> prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return arg.starts_with(p); });
}

bool safe_find(const Args& argv) {
    // Actions that run programs, delete, or write files.
    constexpr std::array<std::string_view, 9> unsafe{"-exec", "-execdir", "-ok",      "-okdir",  "-delete",
                                                     "-fls",  "-fprint",  "-fprint0", "-fprintf"};
    for (std::size_t i = 1; i < argv.size(); ++i)
        if (std::find(unsafe.begin(), unsafe.end(), argv[i]) != unsafe.end()) return false;
    return true;
}

bool safe_rg(const Args& argv) {
    // --pre runs a program per file; -z runs decompressors; --hostname-bin runs one.
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string_view a = argv[i];
        if (a == "-z" || a == "--search-zip" || starts_with_any(a, {"--pre", "--hostname-bin"})) return false;
        // A short-option cluster with z (e.g. -iz).
        if (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('z') != std::string_view::npos) return false;
    }
    return true;
}

bool safe_sort(const Args& argv) {
    // -o/--output writes a file; --compress-program runs one.
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string_view a = argv[i];
        if (starts_with_any(a, {"--output", "--compress-program"})) return false;
        if (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('o') != std::string_view::npos) return false;
    }
    return true;
}

bool safe_git(const Args& argv) {
    if (argv.size() < 2) return false;  // global options (-c, -C, ...) come before: not known
    const std::string_view sub = argv[1];
    if (sub == "status" || sub == "log" || sub == "diff" || sub == "show") {
        for (std::size_t i = 2; i < argv.size(); ++i) {
            // --output writes a file; --ext-diff and --textconv run configured programs.
            if (starts_with_any(argv[i], {"--output", "--ext-diff", "--textconv", "--exec"})) return false;
        }
        return true;
    }
    if (sub == "branch") {
        // Listing only: creating, deleting, moving, copying or configuring a
        // branch takes other options or a bare name.
        constexpr std::array<std::string_view, 12> listing{"-a",         "--all",   "-r",        "--remotes",
                                                           "-v",         "-vv",     "--verbose", "--show-current",
                                                           "--no-color", "--color", "-l",        "--list"};
        bool list_mode = false;
        bool positional = false;
        for (std::size_t i = 2; i < argv.size(); ++i) {
            const std::string_view a = argv[i];
            if (a.starts_with("-")) {
                if (std::find(listing.begin(), listing.end(), a) == listing.end()) return false;
                if (a == "-l" || a == "--list") list_mode = true;
            } else {
                positional = true;  // a branch name, or a pattern with --list
            }
        }
        return !positional || list_mode;
    }
    return false;
}

bool safe_simple(const Args& argv) {
    if (argv.empty()) return false;
    const std::string_view name = argv[0];
    if (name.empty() || name.find('/') != std::string_view::npos) return false;
    if (std::find(kAlwaysSafe.begin(), kAlwaysSafe.end(), name) != kAlwaysSafe.end()) return true;
    if (name == "find") return safe_find(argv);
    if (name == "rg") return safe_rg(argv);
    if (name == "sort") return safe_sort(argv);
    if (name == "git") return safe_git(argv);
    return false;
}

}  // namespace

bool is_known_safe_command(const std::vector<std::string>& argv) {
    if (const auto script = shell_script_of(argv)) {
        const auto parts = parse_plain_script(*script);
        if (!parts) return false;
        return std::all_of(parts->begin(), parts->end(), safe_simple);
    }
    return safe_simple(argv);
}

}  // namespace sbx::approval
