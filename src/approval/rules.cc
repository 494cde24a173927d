#include "approval/rules.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "approval/shell.h"
#include "util/error.h"
#include "util/json_error.h"
#include "util/path.h"

namespace sbx::approval {
namespace {

using nlohmann::json;

int strictness(RuleDecision d) { return static_cast<int>(d); }

// The stricter of two optional matches; the first wins a tie.
std::optional<RuleMatch> stricter(std::optional<RuleMatch> a, std::optional<RuleMatch> b) {
    if (!a) return b;
    if (!b) return a;
    return strictness(b->decision) > strictness(a->decision) ? b : a;
}

std::string type_name(const json& j) { return j.type_name(); }

Rule parse_rule(const json& j, const std::string& source, std::size_t index) {
    auto fail = [&](const std::string& what) -> Error {
        return Error(fmt::format("--rules {}: rule {}: {}", source, index, what));
    };
    if (!j.is_object()) throw fail(fmt::format("expected an object, got {}", type_name(j)));
    Rule rule;
    rule.source = source;
    rule.index = index;
    bool have_pattern = false, have_decision = false;
    for (const auto& [key, value] : j.items()) {
        if (key == "pattern") {
            if (!value.is_array()) throw fail(fmt::format("'pattern' must be an array, got {}", type_name(value)));
            if (value.empty()) throw fail("'pattern' is empty");
            std::size_t pos = 0;
            for (const auto& element : value) {
                ++pos;
                std::vector<std::string> alternatives;
                if (element.is_string()) {
                    alternatives.push_back(element.get<std::string>());
                } else if (element.is_array()) {
                    if (element.empty()) throw fail(fmt::format("pattern element {} is an empty list", pos));
                    for (const auto& alt : element) {
                        if (!alt.is_string())
                            throw fail(fmt::format("pattern element {}: alternatives must be strings, got {}", pos,
                                                   type_name(alt)));
                        alternatives.push_back(alt.get<std::string>());
                    }
                } else {
                    throw fail(fmt::format("pattern element {} must be a string or a list of strings, got {}", pos,
                                           type_name(element)));
                }
                rule.pattern.push_back(std::move(alternatives));
            }
            have_pattern = true;
        } else if (key == "decision") {
            if (!value.is_string()) throw fail(fmt::format("'decision' must be a string, got {}", type_name(value)));
            const auto word = value.get<std::string>();
            if (word == "allow") rule.decision = RuleDecision::Allow;
            else if (word == "prompt") rule.decision = RuleDecision::Prompt;
            else if (word == "forbidden") rule.decision = RuleDecision::Forbidden;
            else throw fail(fmt::format("unknown decision '{}' (expected allow, prompt or forbidden)", word));
            have_decision = true;
        } else if (key == "justification") {
            if (!value.is_string())
                throw fail(fmt::format("'justification' must be a string, got {}", type_name(value)));
            rule.justification = value.get<std::string>();
        } else {
            throw fail(fmt::format("unknown key '{}' (expected pattern, decision, justification)", key));
        }
    }
    if (!have_pattern) throw fail("missing 'pattern'");
    if (!have_decision) throw fail("missing 'decision'");
    return rule;
}

}  // namespace

std::string_view to_string(RuleDecision d) {
    switch (d) {
        case RuleDecision::Allow: return "allow";
        case RuleDecision::Prompt: return "prompt";
        case RuleDecision::Forbidden: return "forbidden";
    }
    return "forbidden";
}

namespace {

// The directories where a program named by path is taken to be the program
// of that name: /bin/rm is rm, /home/u/bin/rm is not.
constexpr std::array<std::string_view, 6> kStandardDirs{"/bin/",  "/usr/bin/",  "/usr/local/bin/",
                                                        "/sbin/", "/usr/sbin/", "/usr/local/sbin/"};

// argv[0] as a rule sees it: normalised lexically (//, ., ..), the bare name
// for a path in a standard directory, anything else as given.
std::string program_name(std::string_view argv0) {
    if (argv0.find('/') == std::string_view::npos) return std::string(argv0);
    const std::string path = argv0.front() == '/' ? join_path("/", std::string(argv0.substr(1))) : std::string(argv0);
    for (auto dir : kStandardDirs) {
        if (path.size() > dir.size() && path.starts_with(dir)) {
            const auto rest = std::string_view(path).substr(dir.size());
            if (rest.find('/') == std::string_view::npos) return std::string(rest);
        }
    }
    return path;
}

bool has_glob(std::string_view w) { return w.find_first_of("*?[") != std::string_view::npos; }

// A word of the command against a pattern word.  In broad matching (prompt
// and forbidden rules) a word with glob characters (from a shell script:
// /bin/r[m], r?) matches every pattern word the shell could expand it to.
bool word_matches(std::string_view alt, std::string_view word, bool broad) {
    if (alt == word) return true;
    return broad && has_glob(word) && ::fnmatch(std::string(word).c_str(), std::string(alt).c_str(), 0) == 0;
}

// The program element: a pattern word with a / is compared as a normalised
// path, a bare word also matches that name in a standard directory.
bool program_matches(std::string_view alt, std::string_view argv0, bool broad = false) {
    if (alt == argv0) return true;
    const std::string name = program_name(argv0);
    if (alt.find('/') != std::string_view::npos) return broad && program_name(alt) == name;
    if (word_matches(alt, name, broad)) return true;
    // A glob with directories (/usr/*/rm): any standard path of the name.
    if (!broad || !has_glob(argv0) || argv0.find('/') == std::string_view::npos) return false;
    for (auto dir : kStandardDirs)
        if (::fnmatch(std::string(argv0).c_str(), (std::string(dir) + std::string(alt)).c_str(), 0) == 0) return true;
    return false;
}

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A group of short flags: one dash, then one or more letters ("-r", "-rf").
bool is_short_flags(std::string_view w) {
    if (w.size() < 2 || w[0] != '-') return false;
    for (std::size_t i = 1; i < w.size(); ++i)
        if (!is_letter(w[i])) return false;
    return true;
}

// Letters as a bit set: a-z are bits 0-25, A-Z bits 26-51.
std::uint64_t letters_of(std::string_view flags) {
    std::uint64_t set = 0;
    for (char c : flags.substr(1)) set |= std::uint64_t{1} << (c >= 'a' ? c - 'a' : 26 + (c - 'A'));
    return set;
}

// Exact positional matching (allow rules): argv starts with the pattern.
bool matches_exactly(const Rule& rule, const std::vector<std::string>& argv) {
    const auto& pattern = rule.pattern;
    if (argv.size() < pattern.size()) return false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        bool any = false;
        for (const auto& alt : pattern[i]) any = any || (i == 0 ? program_matches(alt, argv[0]) : alt == argv[i]);
        if (!any) return false;
    }
    return true;
}

// Broad matching (prompt and forbidden rules).  The arguments before a "--"
// that are groups of short flags are pooled into one set of letters; every
// other argument is an operand.  A pattern word that is a group of short
// flags matches when the pool holds all its letters; any other pattern word
// matches the next operand, in order.
bool matches_broadly(const Rule& rule, const std::vector<std::string>& argv) {
    if (argv.empty()) return false;
    bool program = false;
    for (const auto& alt : rule.pattern[0]) program = program || program_matches(alt, argv[0], true);
    if (!program) return false;
    std::uint64_t pool = 0;
    std::vector<std::string_view> operands;
    bool options_end = false;
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string_view w = argv[i];
        if (!options_end && w == "--") {
            options_end = true;
            operands.push_back(w);
        } else if (!options_end && is_short_flags(w)) {
            pool |= letters_of(w);
        } else {
            operands.push_back(w);
        }
    }
    // Elements with alternatives that mix flags and words: try each choice.
    auto match_from = [&](auto&& self, std::size_t element, std::size_t next) -> bool {
        if (element == rule.pattern.size()) return true;
        for (const auto& alt : rule.pattern[element]) {
            if (is_short_flags(alt)) {
                const auto want = letters_of(alt);
                if ((pool & want) == want && self(self, element + 1, next)) return true;
            } else if (next < operands.size() && word_matches(alt, operands[next], true) &&
                       self(self, element + 1, next + 1)) {
                return true;
            }
        }
        return false;
    };
    return match_from(match_from, 1, 0);
}

}  // namespace

bool Rule::matches(const std::vector<std::string>& argv) const {
    if (pattern.empty() || argv.empty()) return false;
    return decision == RuleDecision::Allow ? matches_exactly(*this, argv) : matches_broadly(*this, argv);
}

nlohmann::json to_json(const RuleMatch& m) {
    json j{{"decision", to_string(m.decision)}, {"file", m.source}, {"rule", m.index}};
    if (m.justification) j["justification"] = *m.justification;
    return j;
}

void RuleSet::add_text(std::string_view text, const std::string& source) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for huge numbers
        throw Error(fmt::format("--rules {}: not valid JSON: {}", source, json_error_message(e)));
    }
    if (!doc.is_object())
        throw Error(fmt::format("--rules {}: expected an object with \"rules\", got {}", source, type_name(doc)));
    for (const auto& [key, value] : doc.items()) {
        if (key != "rules") throw Error(fmt::format("--rules {}: unknown key '{}' (expected rules)", source, key));
    }
    if (!doc.contains("rules")) throw Error(fmt::format("--rules {}: missing \"rules\"", source));
    const auto& list = doc["rules"];
    if (!list.is_array())
        throw Error(fmt::format("--rules {}: \"rules\" must be an array, got {}", source, type_name(list)));
    std::vector<Rule> parsed;
    std::size_t index = 0;
    for (const auto& r : list) parsed.push_back(parse_rule(r, source, ++index));
    for (auto& r : parsed) rules_.push_back(std::move(r));
}

void RuleSet::add_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(fmt::format("--rules {}: cannot read the file", path));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw Error(fmt::format("--rules {}: cannot read the file", path));
    add_text(text.str(), path);
}

std::optional<RuleMatch> RuleSet::match_words(const std::vector<std::string>& argv) const {
    std::optional<RuleMatch> best;
    for (const auto& rule : rules_) {
        if (!rule.matches(argv)) continue;
        best = stricter(best, RuleMatch{rule.decision, rule.justification, rule.source, rule.index});
    }
    return best;
}

namespace {

// Programs that run their arguments as a command, with the options each
// takes before it (those that take a value, as separate words).
struct Wrapper {
    std::string_view name;
    std::vector<std::string_view> options_with_value;
    bool leading_operand = false;  // an operand before the command: timeout's DURATION, chrt's PRIORITY
};

const std::vector<Wrapper>& wrappers() {
    static const std::vector<Wrapper> list{
        {"env", {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}},
        {"command", {}},
        {"exec", {"-a"}},
        {"nice", {"-n", "--adjustment"}},
        {"nohup", {}},
        {"setsid", {}},
        {"stdbuf", {"-i", "-o", "-e"}},
        {"time", {"-f", "--format", "-o", "--output"}},
        {"timeout", {"-k", "--kill-after", "-s", "--signal"}, true},
        {"busybox", {}},
        {"xargs",
         {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs",
          "--max-chars", "--max-lines", "--replace", "--eof"}},
        {"chrt", {}, true},
        {"ionice", {"-c", "-n", "-p", "-t"}},
    };
    return list;
}

// The command a wrapper's argv runs (env -i FOO=1 rm -rf x -> rm -rf x), or
// nullopt when argv[0] is no wrapper or runs nothing.  Options are skipped
// generously: a word that looks like an option never counts as the program.
std::optional<Words> unwrap(const Words& argv) {
    const std::string name = program_name(argv[0]);
    for (const auto& w : wrappers()) {
        if (w.name != name) continue;
        std::size_t i = 1;
        bool operand_taken = !w.leading_operand;
        while (i < argv.size()) {
            const std::string_view word = argv[i];
            if (word == "--") {
                ++i;
                break;
            }
            if (word.size() > 1 && word.front() == '-') {
                const bool takes_value = std::find(w.options_with_value.begin(), w.options_with_value.end(), word) !=
                                         w.options_with_value.end();
                i += takes_value ? 2 : 1;
                continue;
            }
            if (name == "env" && word.find('=') != std::string_view::npos) {  // NAME=value
                ++i;
                continue;
            }
            if (!operand_taken) {
                operand_taken = true;
                ++i;
                continue;
            }
            break;
        }
        if (i >= argv.size()) return std::nullopt;
        return Words(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
    }
    return std::nullopt;
}

}  // namespace

std::optional<RuleMatch> RuleSet::match(const std::vector<std::string>& argv, const std::string& program) const {
    auto m = match_command(argv, 0);
    // The program that will run, found through PATH with its symlinks
    // resolved (a link named ./x to /usr/bin/rm is rm): prompt and forbidden
    // rules see it too.
    if (!argv.empty() && !program.empty() && program != argv[0]) {
        Words real = argv;
        real[0] = program;
        m = stricter(m, strict_only(match_command(real, 0)));
    }
    return m;
}

std::optional<RuleMatch> RuleSet::strict_only(std::optional<RuleMatch> m) {
    if (m && m->decision == RuleDecision::Allow) return std::nullopt;
    return m;
}

std::optional<RuleMatch> RuleSet::match_command(const std::vector<std::string>& argv, int depth) const {
    auto direct = match_words(argv);
    // What a wrapper runs (env rm, command rm, busybox rm, timeout 5 rm)
    // meets prompt and forbidden rules as if it were the command; an allow
    // rule must match the command as given.
    if (!argv.empty() && depth < kMaxShellDepth)
        if (const auto inner = unwrap(argv)) direct = stricter(direct, strict_only(match_command(*inner, depth + 1)));
    // A shell inside a shell (bash -c "sh -c '...'") is followed a few levels.
    if (argv.empty() || depth >= kMaxShellDepth) return direct;
    // The shell named by any standard path is the shell (/usr/local/bin/bash).
    auto as_named = argv;
    as_named[0] = program_name(argv[0]);
    const auto script = shell_script_of(as_named);
    if (!script) return direct;
    const auto parts = parse_plain_script(*script);
    if (!parts) {
        // Not plain: forbidden and prompt rules look inside, at a rough
        // guess of the commands (splitting wrongly only ever asks or forbids
        // more); allow rules do not.
        std::optional<RuleMatch> strict;
        for (const auto& command : rough_commands(*script))
            strict = stricter(strict, strict_only(match_command(command, depth + 1)));
        return stricter(direct, strict);
    }
    // A prompt or forbidden part decides whatever the other parts are; allow
    // needs every part: one unmatched part leaves the script unmatched.
    std::optional<RuleMatch> combined;
    bool all_matched = true;
    for (const auto& part : *parts) {
        auto m = match_command(part, depth + 1);
        if (!m) all_matched = false;
        combined = stricter(combined, std::move(m));
    }
    if (!all_matched && combined && combined->decision == RuleDecision::Allow) combined.reset();
    return stricter(direct, combined);
}

}  // namespace sbx::approval
