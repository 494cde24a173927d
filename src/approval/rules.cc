#include "approval/rules.h"

#include <fstream>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "approval/shell.h"
#include "policy/policy.h"

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
            if (!value.is_array())
                throw fail(fmt::format("'pattern' must be an array, got {}", type_name(value)));
            if (value.empty()) throw fail("'pattern' is empty");
            std::size_t pos = 0;
            for (const auto& element : value) {
                ++pos;
                std::vector<std::string> alternatives;
                if (element.is_string()) {
                    alternatives.push_back(element.get<std::string>());
                } else if (element.is_array()) {
                    if (element.empty())
                        throw fail(fmt::format("pattern element {} is an empty list", pos));
                    for (const auto& alt : element) {
                        if (!alt.is_string())
                            throw fail(fmt::format(
                                "pattern element {}: alternatives must be strings, got {}", pos,
                                type_name(alt)));
                        alternatives.push_back(alt.get<std::string>());
                    }
                } else {
                    throw fail(fmt::format(
                        "pattern element {} must be a string or a list of strings, got {}", pos,
                        type_name(element)));
                }
                rule.pattern.push_back(std::move(alternatives));
            }
            have_pattern = true;
        } else if (key == "decision") {
            if (!value.is_string())
                throw fail(fmt::format("'decision' must be a string, got {}", type_name(value)));
            const auto word = value.get<std::string>();
            if (word == "allow") rule.decision = RuleDecision::Allow;
            else if (word == "prompt") rule.decision = RuleDecision::Prompt;
            else if (word == "forbidden") rule.decision = RuleDecision::Forbidden;
            else
                throw fail(fmt::format(
                    "unknown decision '{}' (expected allow, prompt or forbidden)", word));
            have_decision = true;
        } else if (key == "justification") {
            if (!value.is_string())
                throw fail(
                    fmt::format("'justification' must be a string, got {}", type_name(value)));
            rule.justification = value.get<std::string>();
        } else {
            throw fail(fmt::format(
                "unknown key '{}' (expected pattern, decision, justification)", key));
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

bool Rule::matches_prefix(const std::vector<std::string>& argv) const {
    if (argv.size() < pattern.size()) return false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        bool any = false;
        for (const auto& alt : pattern[i]) any = any || alt == argv[i];
        if (!any) return false;
    }
    return true;
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
    } catch (const json::parse_error& e) {
        // e.what() is "[json.exception.parse_error.101] parse error at ...".
        std::string what = e.what();
        if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
        throw Error(fmt::format("--rules {}: not valid JSON: {}", source, what));
    }
    if (!doc.is_object())
        throw Error(fmt::format("--rules {}: expected an object with \"rules\", got {}", source,
                                type_name(doc)));
    for (const auto& [key, value] : doc.items()) {
        if (key != "rules")
            throw Error(fmt::format("--rules {}: unknown key '{}' (expected rules)", source, key));
    }
    if (!doc.contains("rules"))
        throw Error(fmt::format("--rules {}: missing \"rules\"", source));
    const auto& list = doc["rules"];
    if (!list.is_array())
        throw Error(fmt::format("--rules {}: \"rules\" must be an array, got {}", source,
                                type_name(list)));
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
        if (!rule.matches_prefix(argv)) continue;
        best = stricter(best, RuleMatch{rule.decision, rule.justification, rule.source, rule.index});
    }
    return best;
}

std::optional<RuleMatch> RuleSet::match(const std::vector<std::string>& argv) const {
    auto direct = match_words(argv);
    const auto script = shell_script_of(argv);
    if (!script) return direct;
    const auto parts = parse_plain_script(*script);
    if (!parts) return direct;
    std::optional<RuleMatch> combined;
    for (const auto& part : *parts) {
        auto m = match_words(part);
        if (!m) return direct;  // one unmatched part: the script is unmatched
        combined = stricter(combined, m);
    }
    return stricter(direct, combined);
}

}  // namespace sbx::approval
