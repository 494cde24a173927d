// A deliberately small shell reader: it understands scripts made only of
// plain words joined by &&, ||, ; and |, and refuses everything else, so the
// rule matcher and the safe-command table never guess what a shell would do.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sbx::approval {

using Words = std::vector<std::string>;

// The commands of a plain script, each as its list of words, or nullopt when
// the script has anything but plain words and the four operators:
//   - a word is made of unquoted characters from [A-Za-z0-9_./:=+,@%^-],
//     single-quoted text (anything but a single quote), and double-quoted
//     text without $, `, \ or !; pieces join into one word ("a'b'c" is abc);
//   - &&, ||, ; and | separate commands (newline counts as ;); a trailing ;
//     is fine, an empty command elsewhere is not;
//   - anything else ($, backticks, redirections, &, subshells, braces, globs,
//     ~, #, backslashes, an unclosed quote) makes the script not plain.
std::optional<std::vector<Words>> parse_plain_script(std::string_view script);

// For a script that is not plain: a rough, over-eager guess at the simple
// commands in it, for forbidden rules only (splitting more, or wrongly, only
// ever forbids more).  Commands end at ;, &, |, (, ), {, }, `, newline and
// $( -- also inside double quotes, whose text is otherwise read as if
// unquoted; single-quoted text is one literal piece; a backslash takes the
// next character literally; # at a word's start comments to the line's end;
// a redirection (<, >, with a leading fd number) drops itself and its target
// word; leading reserved words (if, then, do, !, ...) and NAME=value words
// are dropped.  Never nullopt: an empty or unclosed script gives what was read.
std::vector<Words> rough_commands(std::string_view script);

// For argv of the form {SHELL, FLAG, SCRIPT} with SHELL one of sh, bash,
// zsh, dash (bare, or in /bin or /usr/bin) and FLAG -c or -lc: the script.
std::optional<std::string> shell_script_of(const Words& argv);

}  // namespace sbx::approval
