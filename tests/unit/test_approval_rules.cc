// Approvals: the plain-word shell reader, prefix rules (parsing and
// matching) and the known-safe command table.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "approval/rules.h"
#include "approval/safe_commands.h"
#include "approval/shell.h"
#include "policy/policy.h"

using namespace sbx;
using namespace sbx::approval;
using Cmds = std::vector<std::vector<std::string>>;

TEST_CASE("plain scripts split into commands", "[approval][shell]") {
    CHECK(parse_plain_script("ls") == Cmds{{"ls"}});
    CHECK(parse_plain_script("  ls   -la  src ") == Cmds{{"ls", "-la", "src"}});
    CHECK(parse_plain_script("ls && pwd") == Cmds{{"ls"}, {"pwd"}});
    CHECK(parse_plain_script("ls&&pwd||echo no;wc -l a|head") ==
          Cmds{{"ls"}, {"pwd"}, {"echo", "no"}, {"wc", "-l", "a"}, {"head"}});
    CHECK(parse_plain_script("ls\npwd\n") == Cmds{{"ls"}, {"pwd"}});
    CHECK(parse_plain_script("ls;") == Cmds{{"ls"}});
    // Quotes without expansions.
    CHECK(parse_plain_script("echo 'a b' \"c d\"") == Cmds{{"echo", "a b", "c d"}});
    CHECK(parse_plain_script("echo '$HOME; rm -rf /'") == Cmds{{"echo", "$HOME; rm -rf /"}});
    CHECK(parse_plain_script("grep -e 'x|y' f") == Cmds{{"grep", "-e", "x|y", "f"}});
    CHECK(parse_plain_script("echo a'b'\"c\"d") == Cmds{{"echo", "abcd"}});
    CHECK(parse_plain_script("echo '' x") == Cmds{{"echo", "", "x"}});
    CHECK(parse_plain_script("git log --format=%H@x,y:z+1") ==
          Cmds{{"git", "log", "--format=%H@x,y:z+1"}});
}

TEST_CASE("anything but plain words is not plain", "[approval][shell]") {
    for (const char* script : {
             "",              "   ",          "echo $HOME",     "echo \"$HOME\"",  "echo `id`",
             "echo $(id)",    "ls > out",     "cat < in",       "ls 2>&1",         "sleep 1 &",
             "(ls)",          "{ ls; }",      "ls *.c",         "ls ?",            "ls [ab]",
             "cd ~",          "ls # c",       "echo a\\ b",     "echo 'open",      "echo \"open",
             "echo \"a\\\"\"", "echo \"hi!\"", "&& ls",         "ls &&",           "ls ||",
             "ls |",          "ls | | pwd",   "; ls",           "ls;;pwd",         "ls && && pwd",
             "if true; then ls; fi",          "for x in a; do ls; done",           "x=1; echo $x",
             "ls |& cat",     "echo a=b >f",
         }) {
        INFO("script: " << script);
        CHECK_FALSE(parse_plain_script(script));
    }
}

TEST_CASE("shell -c forms", "[approval][shell]") {
    CHECK(shell_script_of({"bash", "-lc", "ls"}) == "ls");
    CHECK(shell_script_of({"sh", "-c", "ls"}) == "ls");
    CHECK(shell_script_of({"zsh", "-lc", "ls"}) == "ls");
    CHECK(shell_script_of({"/bin/bash", "-c", "ls"}) == "ls");
    CHECK(shell_script_of({"/usr/bin/zsh", "-lc", "ls"}) == "ls");
    CHECK_FALSE(shell_script_of({"bash", "-lc", "ls", "extra"}));
    CHECK_FALSE(shell_script_of({"bash", "-x", "ls"}));
    CHECK_FALSE(shell_script_of({"python3", "-c", "print()"}));
    CHECK_FALSE(shell_script_of({"./bash", "-c", "ls"}));
    CHECK_FALSE(shell_script_of({"/tmp/bash", "-c", "ls"}));
    CHECK_FALSE(shell_script_of({"bash"}));
}

namespace {

RuleSet rules_of(const char* text) {
    RuleSet r;
    r.add_text(text, "r.json");
    return r;
}

std::string decision_of(const RuleSet& r, const std::vector<std::string>& argv) {
    const auto m = r.match(argv);
    return m ? std::string(to_string(m->decision)) : "none";
}

const char* kRules = R"({"rules": [
    {"pattern": ["git", ["status", "diff", "log"]], "decision": "allow"},
    {"pattern": ["ls"], "decision": "allow"},
    {"pattern": ["pwd"], "decision": "allow"},
    {"pattern": ["git", "push"], "decision": "prompt", "justification": "pushes leave the machine"},
    {"pattern": ["rm", "-rf"], "decision": "forbidden", "justification": "no recursive deletes"},
    {"pattern": ["git"], "decision": "prompt"}
]})";

}  // namespace

TEST_CASE("rules match argv prefixes; the strictest wins", "[approval][rules]") {
    const auto r = rules_of(kRules);
    CHECK(r.rules().size() == 6);
    CHECK(decision_of(r, {"ls"}) == "allow");
    CHECK(decision_of(r, {"ls", "-la", "/"}) == "allow");
    CHECK(decision_of(r, {"lsblk"}) == "none");                 // words, not string prefixes
    CHECK(decision_of(r, {"/bin/ls"}) == "none");               // argv[0] as given
    CHECK(decision_of(r, {"rm", "-rf", "/tmp/x"}) == "forbidden");
    CHECK(decision_of(r, {"rm", "-r", "-f", "x"}) == "none");
    CHECK(decision_of(r, {"rm"}) == "none");                    // shorter than the pattern
    // git status matches the allow rule and the ["git"] prompt rule: prompt wins.
    CHECK(decision_of(r, {"git", "status"}) == "prompt");
    const auto push = r.match({"git", "push", "origin"});
    REQUIRE(push);
    CHECK(push->decision == RuleDecision::Prompt);
    CHECK(push->justification == "pushes leave the machine");  // first of equals
    CHECK(push->index == 4);
    CHECK(push->source == "r.json");

    const auto only_allow = rules_of(
        R"({"rules":[{"pattern":["git",["status","diff"]],"decision":"allow"}]})");
    CHECK(decision_of(only_allow, {"git", "status"}) == "allow");
    CHECK(decision_of(only_allow, {"git", "diff", "HEAD"}) == "allow");
    CHECK(decision_of(only_allow, {"git", "log"}) == "none");
}

TEST_CASE("rules on shell scripts: every part must match", "[approval][rules]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["ls"], "decision": "allow"},
        {"pattern": ["pwd"], "decision": "allow"},
        {"pattern": ["git", "push"], "decision": "prompt"},
        {"pattern": ["rm", "-rf"], "decision": "forbidden"}]})");
    CHECK(decision_of(r, {"bash", "-lc", "ls && pwd"}) == "allow");
    CHECK(decision_of(r, {"sh", "-c", "ls -la | pwd; ls"}) == "allow");
    CHECK(decision_of(r, {"bash", "-lc", "ls && git push"}) == "prompt");
    CHECK(decision_of(r, {"bash", "-lc", "ls && rm -rf / || git push"}) == "forbidden");
    // One unmatched part leaves the whole script unmatched.
    CHECK(decision_of(r, {"bash", "-lc", "ls && cat x"}) == "none");
    CHECK(decision_of(r, {"bash", "-lc", "rm -rf x && cat y"}) == "none");
    // Not plain: unmatched, even when it starts with an allowed word.
    CHECK(decision_of(r, {"bash", "-lc", "ls $(rm -rf /)"}) == "none");
    CHECK(decision_of(r, {"bash", "-lc", "ls > /etc/passwd"}) == "none");
    CHECK(decision_of(r, {"bash", "-lc", "ls *"}) == "none");
    // A rule on the shell itself still applies.
    const auto b = rules_of(R"({"rules": [
        {"pattern": ["bash"], "decision": "forbidden"},
        {"pattern": ["ls"], "decision": "allow"}]})");
    CHECK(decision_of(b, {"bash", "-lc", "ls"}) == "forbidden");
    CHECK(decision_of(b, {"bash", "-lc", "echo $x"}) == "forbidden");
    CHECK(decision_of(b, {"sh", "-c", "ls"}) == "allow");
}

TEST_CASE("malformed rules name the file and the rule", "[approval][rules]") {
    auto error_of = [](const char* text) {
        try {
            RuleSet r;
            r.add_text(text, "team.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of("{"), Catch::StartsWith("--rules team.json: not valid JSON: "));
    CHECK(error_of("[]") == "--rules team.json: expected an object with \"rules\", got array");
    CHECK(error_of("{}") == "--rules team.json: missing \"rules\"");
    CHECK(error_of(R"({"rules": {}})") == "--rules team.json: \"rules\" must be an array, got object");
    CHECK(error_of(R"({"rules": [], "extra": 1})") ==
          "--rules team.json: unknown key 'extra' (expected rules)");
    const std::string ok = R"({"pattern":["ls"],"decision":"allow"})";
    auto second = [&](const std::string& rule) {
        return error_of(("{\"rules\": [" + ok + ", " + rule + "]}").c_str());
    };
    CHECK(second("3") == "--rules team.json: rule 2: expected an object, got number");
    CHECK(second(R"({"pattern":[],"decision":"allow"})") == "--rules team.json: rule 2: 'pattern' is empty");
    CHECK(second(R"({"decision":"allow"})") == "--rules team.json: rule 2: missing 'pattern'");
    CHECK(second(R"({"pattern":["ls"]})") == "--rules team.json: rule 2: missing 'decision'");
    CHECK(second(R"({"pattern":"ls","decision":"allow"})") ==
          "--rules team.json: rule 2: 'pattern' must be an array, got string");
    CHECK(second(R"({"pattern":["ls",[]],"decision":"allow"})") ==
          "--rules team.json: rule 2: pattern element 2 is an empty list");
    CHECK(second(R"({"pattern":["ls",[1]],"decision":"allow"})") ==
          "--rules team.json: rule 2: pattern element 2: alternatives must be strings, got number");
    CHECK(second(R"({"pattern":[null],"decision":"allow"})") ==
          "--rules team.json: rule 2: pattern element 1 must be a string or a list of strings, got null");
    CHECK(second(R"({"pattern":["ls"],"decision":"deny"})") ==
          "--rules team.json: rule 2: unknown decision 'deny' (expected allow, prompt or forbidden)");
    CHECK(second(R"({"pattern":["ls"],"decision":true})") ==
          "--rules team.json: rule 2: 'decision' must be a string, got boolean");
    CHECK(second(R"({"pattern":["ls"],"decision":"allow","why":"x"})") ==
          "--rules team.json: rule 2: unknown key 'why' (expected pattern, decision, justification)");
    CHECK(second(R"({"pattern":["ls"],"decision":"allow","justification":5})") ==
          "--rules team.json: rule 2: 'justification' must be a string, got number");
    // A bad file adds nothing.
    RuleSet r;
    CHECK_THROWS(r.add_text("{\"rules\": [" + ok + ", 3]}", "x"));
    CHECK(r.empty());
}

TEST_CASE("rules files are read from disk", "[approval][rules]") {
    char dir[] = "/tmp/sbx-rules-XXXXXX";
    REQUIRE(::mkdtemp(dir));
    const std::string path = std::string(dir) + "/rules.json";
    std::ofstream(path) << R"({"rules":[{"pattern":["make"],"decision":"allow"}]})";
    RuleSet r;
    r.add_file(path);
    CHECK(decision_of(r, {"make", "test"}) == "allow");
    std::ofstream(path) << R"({"rules":[{"pattern":["make"],"decision":"maybe"}]})";
    CHECK_THROWS_WITH(r.add_file(path), "--rules " + path +
                                            ": rule 1: unknown decision 'maybe' (expected allow, "
                                            "prompt or forbidden)");
    std::remove(path.c_str());
    ::rmdir(dir);
}

TEST_CASE("known-safe commands", "[approval][safe]") {
    using V = std::vector<std::string>;
    for (const V& argv : std::vector<V>{
             {"ls"}, {"ls", "-la", "/etc"}, {"cat", "README.md"}, {"head", "-n", "5", "f"},
             {"tail", "-f", "log"}, {"grep", "-rn", "TODO", "."}, {"wc", "-l", "f"}, {"pwd"},
             {"echo", "hi"}, {"true"}, {"which", "git"}, {"stat", "f"}, {"find", ".", "-name", "*.c"},
             {"rg", "-n", "x"}, {"sort", "-u", "f"}, {"git", "status"}, {"git", "log", "--oneline"},
             {"git", "diff", "HEAD~1"}, {"git", "show", "HEAD"}, {"git", "branch"},
             {"git", "branch", "-a", "-v"}, {"git", "branch", "--list", "feat*"},
             {"git", "branch", "--show-current"}, {"bash", "-lc", "ls && pwd"},
             {"sh", "-c", "git status; git diff | head -n 20"}, {"bash", "-lc", "echo 'a > b'"},
         }) {
        INFO("argv[0..]: " << argv[0] << " " << (argv.size() > 1 ? argv[1] : ""));
        CHECK(is_known_safe_command(argv));
    }
    for (const V& argv : std::vector<V>{
             {}, {"rm", "x"}, {"rm", "-rf", "/"}, {"cp", "a", "b"}, {"mv", "a", "b"}, {"touch", "x"},
             {"tee", "f"}, {"dd", "if=/dev/zero"}, {"python3", "-c", "1"}, {"env", "ls"},
             {"/bin/ls"}, {"./ls"}, {"sed", "-i", "s/a/b/", "f"}, {"date", "-s", "now"},
             {"find", ".", "-delete"}, {"find", ".", "-exec", "rm", "{}", ";"},
             {"find", ".", "-execdir", "x", ";"}, {"find", ".", "-fprint", "out"},
             {"rg", "--pre", "sh", "x"}, {"rg", "-z", "x"}, {"rg", "-iz", "x"},
             {"sort", "-o", "out", "f"}, {"sort", "--output=out", "f"}, {"sort", "-uo", "out"},
             {"git"}, {"git", "push"}, {"git", "commit", "-m", "x"}, {"git", "-c", "x=y", "status"},
             {"git", "diff", "--output=/etc/x"}, {"git", "log", "--ext-diff"},
             {"git", "branch", "new"}, {"git", "branch", "-D", "main"}, {"git", "branch", "-m", "a"},
             {"bash", "-lc", "ls > out"}, {"bash", "-lc", "ls && rm -rf /"},
             {"bash", "-lc", "cat $(which ls)"}, {"bash", "-lc", "ls *"}, {"bash", "ls"},
             {"bash", "-lc", "ls", "extra"}, {"bash", "-lc", "FOO=1 ls"},
         }) {
        INFO("argv: " << (argv.empty() ? "" : argv[0]) << " " << (argv.size() > 1 ? argv[1] : ""));
        CHECK_FALSE(is_known_safe_command(argv));
    }
}
