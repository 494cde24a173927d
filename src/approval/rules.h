// Prefix rules (--rules FILE):
//   {"rules": [{"pattern": ["git", ["status", "diff"]], "decision": "allow"},
//              {"pattern": ["rm", "-rf"], "decision": "forbidden",
//               "justification": "..."}]}
// A pattern element is a word or a list of alternative words.  The strictest
// matching rule wins (forbidden > prompt > allow).  How a rule matches argv:
//   - the first element is the program: it matches argv[0], or, when the
//     pattern word has no '/', argv[0] that names it in /bin, /usr/bin,
//     /usr/local/bin, /sbin, /usr/sbin or /usr/local/sbin (/bin/rm is rm,
//     and so is /usr/bin//rm);
//   - allow rules: argv's next words are the pattern's next elements, each
//     compared exactly ("-rf" is not "-fr");
//   - prompt and forbidden rules match more, the safe direction for them:
//     the arguments before a "--" that are groups of short flags (one dash
//     and letters only: -r, -fr, -rfv) pool their letters; a pattern word
//     that is such a group matches when the pool holds all its letters
//     (["rm","-rf"] matches rm -fr, rm -r -f, rm -r x -f, rm -rfv), and the
//     other pattern words match the other arguments in order.
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

    // Pure: this rule alone against one command's words (no shell splitting).
    bool matches(const std::vector<std::string>& argv) const;
};

// The rule that decided: the strictest one, and the first of equals.
struct RuleMatch {
    RuleDecision decision;
    std::optional<std::string> justification;
    std::string source;
    std::size_t index = 0;
    bool operator==(const RuleMatch&) const = default;
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
    // (the shell bare or in a standard directory) whose SCRIPT is plain
    // (shell.h), each part is matched: a forbidden part forbids and a prompt
    // part prompts whatever the other parts are (the strictest part
    // decides); allow needs every part allowed, so one unmatched part leaves
    // the script unmatched unless some part is forbidden or prompts.  In a
    // script that is not plain only forbidden and prompt rules apply, to the
    // commands rough_commands (shell.h) guesses; allow leaves it unmatched.
    // A part that is itself a shell -c script is matched the same way (up
    // to kMaxShellDepth levels).  A rule on the shell's own argv (e.g.
    // ["bash"]) applies too; the stricter of the two results wins.
    //
    // Prompt and forbidden rules match what will run, not its spelling: the
    // program normalised (/usr/bin//rm, /bin/./rm), a glob in a script as
    // every word it could expand to (/bin/r[m]), the command that a wrapper
    // runs (env, command, exec, nice, nohup, setsid, stdbuf, time, timeout,
    // busybox, xargs, chrt, ionice), and `program`, argv[0] as it will be
    // found (absolute, symlinks resolved; "" when unknown).  Where these
    // disagree the strictest wins, so a forbidden or prompt rule wins over
    // allow; an allow rule matches only the command as given.
    std::optional<RuleMatch> match(const std::vector<std::string>& argv, const std::string& program = "") const;

    bool empty() const { return rules_.empty(); }
    const std::vector<Rule>& rules() const { return rules_; }

private:
    static constexpr int kMaxShellDepth = 8;
    std::optional<RuleMatch> match_words(const std::vector<std::string>& argv) const;
    std::optional<RuleMatch> match_command(const std::vector<std::string>& argv, int depth) const;
    static std::optional<RuleMatch> strict_only(std::optional<RuleMatch>);  // allow dropped
    std::vector<Rule> rules_;
};

}  // namespace sbx::approval
