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
#include "util/error.h"

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
    CHECK(parse_plain_script("git log --format=%H@x,y:z+1") == Cmds{{"git", "log", "--format=%H@x,y:z+1"}});
}

TEST_CASE("anything but plain words is not plain", "[approval][shell]") {
    for (const char* script : {
             "",
             "   ",
             "echo $HOME",
             "echo \"$HOME\"",
             "echo `id`",
             "echo $(id)",
             "ls > out",
             "cat < in",
             "ls 2>&1",
             "sleep 1 &",
             "(ls)",
             "{ ls; }",
             "ls *.c",
             "ls ?",
             "ls [ab]",
             "cd ~",
             "ls # c",
             "echo a\\ b",
             "echo 'open",
             "echo \"open",
             "echo \"a\\\"\"",
             "echo \"hi!\"",
             "&& ls",
             "ls &&",
             "ls ||",
             "ls |",
             "ls | | pwd",
             "; ls",
             "ls;;pwd",
             "ls && && pwd",
             "if true; then ls; fi",
             "for x in a; do ls; done",
             "x=1; echo $x",
             "ls |& cat",
             "echo a=b >f",
         }) {
        INFO("script: " << script);
        CHECK_FALSE(parse_plain_script(script));
    }
}

TEST_CASE("rough commands of scripts that are not plain", "[approval][shell]") {
    CHECK(rough_commands("ls > out && rm -rf x") == Cmds{{"ls"}, {"rm", "-rf", "x"}});
    CHECK(rough_commands("rm -rf \"$HOME\"") == Cmds{{"rm", "-rf", "$HOME"}});
    CHECK(rough_commands("echo \"it's\"; rm -rf x") == Cmds{{"echo", "it's"}, {"rm", "-rf", "x"}});
    CHECK(rough_commands("echo 'a; rm -rf x' >f") == Cmds{{"echo", "a; rm -rf x"}});
    CHECK(rough_commands("X=1 Y=2 rm -rf y 2>&1 </dev/null") == Cmds{{"rm", "-rf", "y"}});
    CHECK(rough_commands("if true; then rm -rf x; fi") == Cmds{{"true"}, {"rm", "-rf", "x"}});
    CHECK(rough_commands("echo `rm -rf x` $(rm -fr y)") == Cmds{{"echo"}, {"rm", "-rf", "x"}, {"rm", "-fr", "y"}});
    CHECK(rough_commands("echo \"$(rm -rf x)\"") == Cmds{{"echo"}, {"rm", "-rf", "x"}});
    CHECK(rough_commands("ls # ; rm -rf x\npwd") == Cmds{{"ls"}, {"pwd"}});
    CHECK(rough_commands("echo a\\;rm x") == Cmds{{"echo", "a;rm", "x"}});
    CHECK(rough_commands("! (cd x && rm -rf y) &") == Cmds{{"cd", "x"}, {"rm", "-rf", "y"}});
    CHECK(rough_commands("echo 'open") == Cmds{{"echo", "open"}});
    CHECK(rough_commands("").empty());
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
    CHECK(decision_of(r, {"lsblk"}) == "none");     // words, not string prefixes
    CHECK(decision_of(r, {"/bin/ls"}) == "allow");  // a standard path
    CHECK(decision_of(r, {"/tmp/ls"}) == "none");   // any other path
    CHECK(decision_of(r, {"rm", "-rf", "/tmp/x"}) == "forbidden");
    CHECK(decision_of(r, {"rm", "-r", "-f", "x"}) == "forbidden");  // flags as a set
    CHECK(decision_of(r, {"rm"}) == "none");                        // shorter than the pattern
    // git status matches the allow rule and the ["git"] prompt rule: prompt wins.
    CHECK(decision_of(r, {"git", "status"}) == "prompt");
    const auto push = r.match({"git", "push", "origin"});
    REQUIRE(push);
    CHECK(push->decision == RuleDecision::Prompt);
    CHECK(push->justification == "pushes leave the machine");  // first of equals
    CHECK(push->index == 4);
    CHECK(push->source == "r.json");

    const auto only_allow = rules_of(R"({"rules":[{"pattern":["git",["status","diff"]],"decision":"allow"}]})");
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
    // One unmatched part leaves allow unmatched, but never hides forbidden.
    CHECK(decision_of(r, {"bash", "-lc", "ls && cat x"}) == "none");
    CHECK(decision_of(r, {"bash", "-lc", "rm -rf x && cat y"}) == "forbidden");
    // Not plain: unmatched, even when it starts with an allowed word; only
    // forbidden and prompt rules look inside.
    CHECK(decision_of(r, {"bash", "-lc", "ls $(rm -rf /)"}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "ls $(git push)"}) == "prompt");
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

TEST_CASE("issue 17: forbidden rules are not bypassed", "[approval][rules][issue17]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["rm", "-rf"], "decision": "forbidden"}]})");
    // The three bypasses from the issue.
    CHECK(decision_of(r, {"bash", "-lc", "ls && rm -rf build"}) == "forbidden");
    CHECK(decision_of(r, {"rm", "-fr", "build"}) == "forbidden");
    CHECK(decision_of(r, {"/bin/rm", "-rf", "build"}) == "forbidden");
}

TEST_CASE("a forbidden or prompt part decides a script; allow needs every part", "[approval][rules][issue17]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["ls"], "decision": "allow"},
        {"pattern": ["git", "push"], "decision": "prompt"},
        {"pattern": ["rm", "-rf"], "decision": "forbidden", "justification": "no"}]})");
    CHECK(decision_of(r, {"bash", "-lc", "rm -rf x && cat y"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "cat a; echo b | rm -rf c"}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "git push && rm -rf x && cat y"}) == "forbidden");
    const auto m = r.match({"bash", "-lc", "cat y || rm -rf x"});
    REQUIRE(m);
    CHECK(m->index == 3);
    CHECK(m->justification == "no");
    // A prompt part prompts even beside an unmatched part.
    CHECK(decision_of(r, {"bash", "-lc", "cat y && git push"}) == "prompt");
    // Allow still needs every part.
    CHECK(decision_of(r, {"bash", "-lc", "ls && cat y"}) == "none");
    CHECK(decision_of(r, {"bash", "-lc", "ls && ls -la"}) == "allow");
    // The shell named by any standard path is split too.
    CHECK(decision_of(r, {"/usr/local/bin/bash", "-c", "ls && rm -rf x"}) == "forbidden");
    CHECK(decision_of(r, {"/usr/bin/dash", "-c", "ls && rm -fr x"}) == "forbidden");
    CHECK(decision_of(r, {"/opt/bash", "-c", "ls && rm -rf x"}) == "none");
    // Quoted text is not a command.
    CHECK(decision_of(r, {"bash", "-lc", "echo 'rm -rf x'"}) == "none");
}

TEST_CASE("forbidden rules look inside scripts that are not plain", "[approval][rules][issue17]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["ls"], "decision": "allow"},
        {"pattern": ["git", "push"], "decision": "prompt"},
        {"pattern": ["rm", "-rf"], "decision": "forbidden", "justification": "no"}]})");
    // Not plain: forbidden and prompt rules look at a rough split; allow
    // does not.
    CHECK(decision_of(r, {"bash", "-lc", "ls > out && rm -rf x"}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "rm -rf \"$HOME\""}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "X=1 rm -fr $d 2>&1"}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "for d in a b; do rm -r -f $d; done"}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "echo \"it's\"; rm -rf x"}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "echo 'rm -rf x' > notes"}) == "none");
    CHECK(decision_of(r, {"bash", "-lc", "ls > out; rm -rf \"$d\""}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "echo \"a; rm -rf x\" > notes"}) == "forbidden");  // over-eager
    CHECK(decision_of(r, {"bash", "-lc", "git push > log"}) == "prompt");                   // issue 29
    CHECK(decision_of(r, {"bash", "-lc", "ls > out"}) == "none");
    // A shell inside a shell is followed.
    CHECK(decision_of(r, {"sh", "-c", "bash -c 'rm -rf x'"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "ls > o; bash -c 'ls && rm -rf x'"}) == "forbidden");
    CHECK(decision_of(r, {"bash", "-lc", "sh -c ls && ls"}) == "allow");
}

TEST_CASE("a program named by a standard path matches by its name", "[approval][rules][issue17]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["rm", "-rf"], "decision": "forbidden"},
        {"pattern": ["ls"], "decision": "allow"},
        {"pattern": ["/opt/tool/run"], "decision": "prompt"}]})");
    for (const char* dir : {"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/usr/local/sbin/"}) {
        INFO("dir: " << dir);
        CHECK(decision_of(r, {std::string(dir) + "rm", "-rf", "x"}) == "forbidden");
        CHECK(decision_of(r, {std::string(dir) + "ls", "-la"}) == "allow");
    }
    // Not a standard location, or not exactly one: not the program.
    CHECK(decision_of(r, {"/home/u/bin/rm", "-rf", "x"}) == "none");
    CHECK(decision_of(r, {"./rm", "-rf", "x"}) == "none");
    CHECK(decision_of(r, {"bin/rm", "-rf", "x"}) == "none");
    CHECK(decision_of(r, {"/bin/sub/rm", "-rf", "x"}) == "none");
    CHECK(decision_of(r, {"/usr/bin/", "-rf", "x"}) == "none");
    CHECK(decision_of(r, {"/usr/bin/rmdir", "-rf"}) == "none");
    // A pattern word with a / is compared literally.
    CHECK(decision_of(r, {"/opt/tool/run"}) == "prompt");
    CHECK(decision_of(r, {"run"}) == "none");
    // Only the program: a path later in argv is a plain word.
    const auto t = rules_of(R"({"rules": [{"pattern": ["env", "rm"], "decision": "prompt"}]})");
    CHECK(decision_of(t, {"env", "/bin/rm"}) == "none");
}

TEST_CASE("issue 29: forbidden and prompt rules match what will run, not its spelling", "[approval][rules][issue29]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["rm", "-rf"], "decision": "forbidden"},
        {"pattern": ["curl"], "decision": "prompt"},
        {"pattern": ["/opt/tool/run"], "decision": "prompt"},
        {"pattern": ["env"], "decision": "allow"},
        {"pattern": ["git", "status"], "decision": "allow"}]})");
    // The path, normalised.
    CHECK(decision_of(r, {"/usr/bin//rm", "-rf", "victim"}) == "forbidden");
    CHECK(decision_of(r, {"/bin/./rm", "-rf", "victim"}) == "forbidden");
    CHECK(decision_of(r, {"/usr/lib/../bin/rm", "-rf", "victim"}) == "forbidden");
    CHECK(decision_of(r, {"//opt/tool/./run"}) == "prompt");
    // Globs in a script, as every word the shell could make of them.
    CHECK(decision_of(r, {"sh", "-c", "/bin/r[m] -rf victim"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "r? -rf victim"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "/usr/*/rm -rf victim"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "/usr/*/rmdir -rf victim"}) == "none");
    CHECK(decision_of(r, {"bash", "-lc", "cur* https://x"}) == "prompt");
    // Quoting as the shell removes it.
    CHECK(decision_of(r, {"sh", "-c", "'r'm -rf victim"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "r\\m -rf victim"}) == "forbidden");
    // Wrappers that run their arguments.
    CHECK(decision_of(r, {"env", "rm", "-rf", "victim"}) == "forbidden");
    CHECK(decision_of(r, {"env", "-i", "A=1", "-u", "B", "/bin/rm", "-rf", "victim"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "command rm -rf victim"}) == "forbidden");
    CHECK(decision_of(r, {"sh", "-c", "exec rm -rf victim"}) == "forbidden");
    CHECK(decision_of(r, {"busybox", "rm", "-rf", "victim"}) == "forbidden");
    CHECK(decision_of(r, {"timeout", "-s", "KILL", "5", "rm", "-rf", "victim"}) == "forbidden");
    CHECK(decision_of(r, {"nice", "-n", "5", "nohup", "setsid", "curl", "x"}) == "prompt");
    CHECK(decision_of(r, {"xargs", "-n", "1", "rm", "-rf"}) == "forbidden");
    CHECK(decision_of(r, {"chrt", "-f", "10", "rm", "-rf", "victim"}) == "forbidden");
    // ... and an allow rule on the wrapper does not allow what it runs.
    CHECK(decision_of(r, {"env"}) == "allow");
    CHECK(decision_of(r, {"env", "curl", "x"}) == "prompt");
    // An allow rule matches only the command as given.
    CHECK(decision_of(r, {"env", "git", "status"}) == "allow");  // the rule on env itself
    CHECK(decision_of(r, {"command", "git", "status"}) == "none");
    // The program as it will be found: a link elsewhere to rm is rm.
    CHECK(r.match({"./x", "-rf", "victim"}, "/usr/bin/rm")->decision == RuleDecision::Forbidden);
    CHECK_FALSE(r.match({"./x", "status"}, "/usr/bin/git"));  // not allowed through it
    CHECK(r.match({"git", "status"}, "/usr/bin/git")->decision == RuleDecision::Allow);
}

TEST_CASE("short flags in restrictive rules match as sets", "[approval][rules][issue17]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["rm", "-rf"], "decision": "forbidden"},
        {"pattern": ["git", "push", "-f"], "decision": "prompt"}]})");
    using V = std::vector<std::string>;
    for (const V& argv : std::vector<V>{
             {"rm", "-rf", "x"},
             {"rm", "-fr", "x"},
             {"rm", "-r", "-f", "x"},
             {"rm", "-f", "-r", "x"},
             {"rm", "-r", "--verbose", "-f", "x"},
             {"rm", "-r", "x", "-f"},
             {"rm", "-rfv", "x"},
             {"rm", "-v", "-fr"},
             {"rm", "-rf"},
             {"/usr/bin/rm", "-f", "-r", "/"},
         }) {
        INFO("argv: " << argv[1] << " " << (argv.size() > 2 ? argv[2] : ""));
        CHECK(decision_of(r, argv) == "forbidden");
    }
    for (const V& argv : std::vector<V>{
             {"rm", "-r", "x"},
             {"rm", "-f", "x"},
             {"rm", "x"},
             {"rm"},
             {"rm", "-R", "-f", "x"},
             {"rm", "--recursive", "--force", "x"},
             {"rm", "-r", "--", "-f"},
             {"rm", "--", "-rf"},
             {"rm", "--rf"},
             {"rm", "-r-f"},
             {"rmdir", "-rf"},
         }) {
        INFO("argv: " << (argv.size() > 1 ? argv[1] : "") << " " << (argv.size() > 2 ? argv[2] : ""));
        CHECK(decision_of(r, argv) == "none");
    }
    // Non-flag words keep their order, skipping short flags.
    CHECK(decision_of(r, {"git", "push", "origin", "-f"}) == "prompt");
    CHECK(decision_of(r, {"git", "push", "-vf", "origin"}) == "prompt");
    CHECK(decision_of(r, {"git", "-f", "push"}) == "prompt");
    CHECK(decision_of(r, {"git", "push", "origin"}) == "none");
    CHECK(decision_of(r, {"git", "pull", "-f"}) == "none");
    // Inside a plain script too.
    CHECK(decision_of(r, {"bash", "-lc", "ls && rm -f -r build"}) == "forbidden");
    // A single-dash long option in a pattern is read as letters: it matches
    // itself, and more (documented).
    const auto f = rules_of(R"({"rules": [{"pattern": ["find", ".", "-delete"], "decision": "forbidden"}]})");
    CHECK(decision_of(f, {"find", ".", "-delete"}) == "forbidden");
    CHECK(decision_of(f, {"find", ".", "-name", "x", "-delete"}) == "forbidden");
    CHECK(decision_of(f, {"find", ".", "-depth", "-ls"}) == "forbidden");  // d,e,l,t
    CHECK(decision_of(f, {"find", ".", "-name", "x"}) == "none");
}

TEST_CASE("allow rules compare flag words exactly", "[approval][rules][issue17]") {
    const auto r = rules_of(R"({"rules": [
        {"pattern": ["tar", "-tf"], "decision": "allow"},
        {"pattern": ["ls", "-la"], "decision": "allow"}]})");
    CHECK(decision_of(r, {"tar", "-tf", "a.tar"}) == "allow");
    CHECK(decision_of(r, {"/usr/bin/tar", "-tf", "a.tar"}) == "allow");
    CHECK(decision_of(r, {"tar", "-ft", "a.tar"}) == "none");  // -f takes "t" here
    CHECK(decision_of(r, {"tar", "-t", "-f", "a.tar"}) == "none");
    CHECK(decision_of(r, {"tar", "-tfx", "a.tar"}) == "none");
    CHECK(decision_of(r, {"ls", "-al"}) == "none");
    CHECK(decision_of(r, {"ls", "-la", "x"}) == "allow");
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
    // A number beyond a double (found by fuzz_rules): bad JSON, not an internal error.
    CHECK_THAT(error_of(R"({"rules": [1e999999]})"), Catch::StartsWith("--rules team.json: not valid JSON: "));
    CHECK(error_of("[]") == "--rules team.json: expected an object with \"rules\", got array");
    CHECK(error_of("{}") == "--rules team.json: missing \"rules\"");
    CHECK(error_of(R"({"rules": {}})") == "--rules team.json: \"rules\" must be an array, got object");
    CHECK(error_of(R"({"rules": [], "extra": 1})") == "--rules team.json: unknown key 'extra' (expected rules)");
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
             {"ls"},
             {"ls", "-la", "/etc"},
             {"cat", "README.md"},
             {"head", "-n", "5", "f"},
             {"tail", "-f", "log"},
             {"grep", "-rn", "TODO", "."},
             {"wc", "-l", "f"},
             {"pwd"},
             {"echo", "hi"},
             {"true"},
             {"which", "git"},
             {"stat", "f"},
             {"find", ".", "-name", "*.c"},
             {"rg", "-n", "x"},
             {"sort", "-u", "f"},
             {"git", "status"},
             {"git", "log", "--oneline"},
             {"git", "diff", "HEAD~1"},
             {"git", "show", "HEAD"},
             {"git", "branch"},
             {"git", "branch", "-a", "-v"},
             {"git", "branch", "--list", "feat*"},
             {"git", "branch", "--show-current"},
             {"bash", "-lc", "ls && pwd"},
             {"sh", "-c", "git status; git diff | head -n 20"},
             {"bash", "-lc", "echo 'a > b'"},
         }) {
        INFO("argv[0..]: " << argv[0] << " " << (argv.size() > 1 ? argv[1] : ""));
        CHECK(is_known_safe_command(argv));
    }
    for (const V& argv : std::vector<V>{
             {},
             {"rm", "x"},
             {"rm", "-rf", "/"},
             {"cp", "a", "b"},
             {"mv", "a", "b"},
             {"touch", "x"},
             {"tee", "f"},
             {"dd", "if=/dev/zero"},
             {"python3", "-c", "1"},
             {"env", "ls"},
             {"/bin/ls"},
             {"./ls"},
             {"sed", "-i", "s/a/b/", "f"},
             {"date", "-s", "now"},
             {"find", ".", "-delete"},
             {"find", ".", "-exec", "rm", "{}", ";"},
             {"find", ".", "-execdir", "x", ";"},
             {"find", ".", "-fprint", "out"},
             {"rg", "--pre", "sh", "x"},
             {"rg", "-z", "x"},
             {"rg", "-iz", "x"},
             {"sort", "-o", "out", "f"},
             {"sort", "--output=out", "f"},
             {"sort", "-uo", "out"},
             {"git"},
             {"git", "push"},
             {"git", "commit", "-m", "x"},
             {"git", "-c", "x=y", "status"},
             {"git", "diff", "--output=/etc/x"},
             {"git", "log", "--ext-diff"},
             {"git", "branch", "new"},
             {"git", "branch", "-D", "main"},
             {"git", "branch", "-m", "a"},
             {"bash", "-lc", "ls > out"},
             {"bash", "-lc", "ls && rm -rf /"},
             {"bash", "-lc", "cat $(which ls)"},
             {"bash", "-lc", "ls *"},
             {"bash", "ls"},
             {"bash", "-lc", "ls", "extra"},
             {"bash", "-lc", "FOO=1 ls"},
         }) {
        INFO("argv: " << (argv.empty() ? "" : argv[0]) << " " << (argv.size() > 1 ? argv[1] : ""));
        CHECK_FALSE(is_known_safe_command(argv));
    }
}
