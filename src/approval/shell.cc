#include "approval/shell.h"

#include <array>
#include <cstddef>

namespace sbx::approval {
namespace {

bool is_plain_char(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '_':
        case '.':
        case '/':
        case ':':
        case '=':
        case '+':
        case ',':
        case '@':
        case '%':
        case '^':
        case '-': return true;
        default: return false;
    }
}

// Words that start compound commands (if/for/while/case/...) when they come
// first: such a script is not a list of simple commands.
bool is_reserved_word(std::string_view w) {
    static constexpr std::array<std::string_view, 15> reserved{"if",   "then",  "else",     "elif",   "fi",
                                                               "for",  "while", "until",    "do",     "done",
                                                               "case", "esac",  "function", "select", "time"};
    for (auto r : reserved)
        if (w == r) return true;
    return false;
}

}  // namespace

std::optional<std::vector<Words>> parse_plain_script(std::string_view s) {
    std::vector<Words> commands;
    Words current;
    std::string word;
    bool in_word = false;  // a word has started (possibly empty, as in '')

    auto end_word = [&] {
        if (in_word) current.push_back(std::move(word));
        word.clear();
        in_word = false;
    };
    // An operator ends the current command; an empty one is refused.
    auto end_command = [&]() -> bool {
        end_word();
        if (current.empty() || is_reserved_word(current.front())) return false;
        commands.push_back(std::move(current));
        current.clear();
        return true;
    };

    std::size_t i = 0;
    bool trailing_separator = false;  // the last thing seen was ; or newline
    while (i < s.size()) {
        const char c = s[i];
        if (c == ' ' || c == '\t') {
            end_word();
            ++i;
            continue;
        }
        if (c == '\n' || c == ';') {
            if (!end_command()) return std::nullopt;
            trailing_separator = true;
            ++i;
            continue;
        }
        if (c == '&' || c == '|') {
            const bool doubled = i + 1 < s.size() && s[i + 1] == c;
            if (c == '&' && !doubled) return std::nullopt;  // background job
            if (!end_command()) return std::nullopt;
            trailing_separator = false;
            i += doubled ? 2 : 1;
            // The next command must exist: checked when it ends or at the end.
            if (i >= s.size()) return std::nullopt;
            continue;
        }
        trailing_separator = false;
        if (c == '\'') {
            const auto close = s.find('\'', i + 1);
            if (close == std::string_view::npos) return std::nullopt;
            word.append(s.substr(i + 1, close - i - 1));
            in_word = true;
            i = close + 1;
            continue;
        }
        if (c == '"') {
            std::size_t j = i + 1;
            for (; j < s.size() && s[j] != '"'; ++j) {
                const char d = s[j];
                if (d == '$' || d == '`' || d == '\\' || d == '!') return std::nullopt;
            }
            if (j >= s.size()) return std::nullopt;
            word.append(s.substr(i + 1, j - i - 1));
            in_word = true;
            i = j + 1;
            continue;
        }
        if (!is_plain_char(c)) return std::nullopt;
        word.push_back(c);
        in_word = true;
        ++i;
    }
    end_word();
    if (current.empty()) {
        // Nothing after the last operator: fine after ; or newline only, and
        // only when there was a command at all.
        if (commands.empty() || !trailing_separator) return std::nullopt;
    } else {
        if (is_reserved_word(current.front())) return std::nullopt;
        commands.push_back(std::move(current));
    }
    return commands;
}

std::vector<Words> rough_commands(std::string_view s) {
    std::vector<Words> commands;
    Words current;
    std::string word;
    bool in_word = false;
    bool in_double = false;
    bool skip_target = false;  // the next word is a redirection's target

    auto end_word = [&] {
        if (in_word) {
            if (skip_target) skip_target = false;
            else current.push_back(std::move(word));
        }
        word.clear();
        in_word = false;
    };
    auto end_command = [&] {
        end_word();
        skip_target = false;
        // Leading reserved words, ! and NAME=value assignments run nothing.
        std::size_t first = 0;
        auto is_assignment = [](const std::string& w) {
            const auto eq = w.find('=');
            if (eq == 0 || eq == std::string::npos) return false;
            for (std::size_t i = 0; i < eq; ++i) {
                const char c = w[i];
                const bool ok =
                    c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
                if (!ok) return false;
            }
            return true;
        };
        while (first < current.size() &&
               (is_reserved_word(current[first]) || current[first] == "!" || is_assignment(current[first])))
            ++first;
        if (first < current.size())
            commands.emplace_back(current.begin() + static_cast<std::ptrdiff_t>(first), current.end());
        current.clear();
    };

    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '\\') {
            if (i + 1 < s.size()) {
                if (s[i + 1] != '\n') word.push_back(s[i + 1]);  // \newline joins lines
                in_word = true;
                ++i;
            }
            continue;
        }
        if (c == '"') {  // an empty "" is no word here
            in_double = !in_double;
            continue;
        }
        if (c == '\'' && !in_double) {
            const auto close = s.find('\'', i + 1);
            const auto end = close == std::string_view::npos ? s.size() : close;
            word.append(s.substr(i + 1, end - i - 1));
            in_word = true;
            i = end;
            continue;
        }
        if (c == ' ' || c == '\t') {
            end_word();
            continue;
        }
        if (c == '#' && !in_word && !in_double) {
            end_command();
            while (i < s.size() && s[i] != '\n') ++i;
            continue;
        }
        if (c == '$' && i + 1 < s.size() && s[i + 1] == '(') {
            end_command();
            ++i;
            continue;
        }
        if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '{' || c == '}' || c == '`' || c == '\n') {
            end_command();
            continue;
        }
        if (c == '<' || c == '>') {
            bool fd = in_word && !word.empty();
            for (char d : word) fd = fd && d >= '0' && d <= '9';
            if (fd) {
                word.clear();
                in_word = false;
            } else {
                end_word();
            }
            while (i + 1 < s.size() && (s[i + 1] == '<' || s[i + 1] == '>' || s[i + 1] == '&' || s[i + 1] == '|'))
                ++i;  // <<, >>, >&, &>... (the fd after >& is its target), >|
            skip_target = true;
            continue;
        }
        word.push_back(c);
        in_word = true;
    }
    end_command();
    return commands;
}

std::optional<std::string> shell_script_of(const Words& argv) {
    if (argv.size() != 3) return std::nullopt;
    static constexpr std::array<std::string_view, 4> shells{"sh", "bash", "zsh", "dash"};
    std::string_view name = argv[0];
    for (std::string_view dir : {"/bin/", "/usr/bin/"}) {
        if (name.starts_with(dir)) {
            name.remove_prefix(dir.size());
            break;
        }
    }
    bool known = false;
    for (auto shell : shells) known = known || name == shell;
    if (!known) return std::nullopt;
    if (argv[1] != "-c" && argv[1] != "-lc") return std::nullopt;
    return argv[2];
}

}  // namespace sbx::approval
