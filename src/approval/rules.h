// Prefix rules (--rules FILE):
//   {"rules": [{"pattern": ["git", ["status", "diff"]], "decision": "allow"},
//              {"pattern": ["rm", "-rf"], "decision": "forbidden",
//               "justification": "..."}]}
// A pattern element is a word or a list of alternative words; a rule matches
// when the command's argv starts with the pattern.  The strictest matching
// rule wins (forbidden > prompt > allow).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sbx::approval {

enum class RuleDecision { Allow, Prompt, Forbidden };  // in order of strictness

std::string_view to_string(RuleDecision);

struct Rule {
    std::vector<std::vector<std::string>> pattern;  // each element: its alternatives
    RuleDecision decision = RuleDecision::Prompt;
    std::optional<std::string> justification;
    std::string source;     // the file it came from
    std::size_t index = 0;  // 1-based position in that file's "rules"

    bool matches_prefix(const std::vector<std::string>& argv) const;
};

// The rule that decided: the strictest one, and the first of equals.
struct RuleMatch {
    RuleDecision decision;
    std::optional<std::string> justification;
    std::string source;
    std::size_t index = 0;
};

// {"decision": ..., "file": ..., "rule": N[, "justification": ...]}
nlohmann::json to_json(const RuleMatch&);

class RuleSet {
public:
    // Throws Error("--rules FILE: rule N: ...") (or "--rules FILE: ..." for
    // the document itself) on bad JSON, an unknown key, a wrong type, an
    // empty pattern or alternative list, or an unknown decision.
    void add_text(std::string_view text, const std::string& source);
    void add_file(const std::string& path);

    // The decision for a command.  For {sh|bash|zsh|dash, -c|-lc, SCRIPT}
    // whose SCRIPT is plain (shell.h), every part must match: the strictest
    // part decides and an unmatched part leaves the script unmatched; a
    // script that is not plain is unmatched.  A rule on the shell's own argv
    // (e.g. ["bash"]) applies too; the stricter of the two results wins.
    std::optional<RuleMatch> match(const std::vector<std::string>& argv) const;

    bool empty() const { return rules_.empty(); }
    const std::vector<Rule>& rules() const { return rules_; }

private:
    std::optional<RuleMatch> match_words(const std::vector<std::string>& argv) const;
    std::vector<Rule> rules_;
};

}  // namespace sbx::approval
