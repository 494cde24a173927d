// libFuzzer target for the --rules file (src/approval/rules.cc): any input
// either fails with sbx::Error or yields rules that can be matched against
// commands, including shell scripts.  The input is also matched as a
// `bash -lc SCRIPT` against fixed rules, which drives the shell splitter
// (src/approval/shell.cc) with arbitrary scripts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "approval/rules.h"
#include "util/error.h"

namespace {

using Argv = std::vector<std::string>;

const std::vector<Argv>& commands() {
    static const std::vector<Argv> list = {
        {"git", "status"},
        {"/usr/bin/rm", "-r", "x", "-f"},
        {"rm", "-fr", "--", "-rf"},
        {"bash", "-lc", "ls && rm -rf build; git push | cat"},
        {"sh", "-c", "bash -c 'bash -c \"rm -rf /\"'"},
        {},
        {""},
    };
    return list;
}

const sbx::approval::RuleSet& fixed_rules() {
    static const sbx::approval::RuleSet rules = [] {
        sbx::approval::RuleSet r;
        r.add_text(R"({"rules": [
            {"pattern": ["git", ["status", "diff"]], "decision": "allow"},
            {"pattern": ["ls"], "decision": "allow"},
            {"pattern": ["git", "push"], "decision": "prompt"},
            {"pattern": ["rm", "-rf"], "decision": "forbidden", "justification": "no"}]})",
                   "fixed.json");
        return r;
    }();
    return rules;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)fixed_rules().match({"bash", "-lc", text});
    try {
        sbx::approval::RuleSet rules;
        rules.add_text(text, "fuzz.json");
        for (const Argv& argv : commands()) (void)rules.match(argv);
    } catch (const sbx::Error&) {
        // A refusal with a message is the expected outcome for bad input.
    }
    return 0;
}
