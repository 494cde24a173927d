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

// parse_plain_script's reader: one pass over the script, refusing (false)
// anything but plain words, quotes without expansions and the list operators.
class PlainReader {
public:
    explicit PlainReader(std::string_view s) : s_(s) {}

    std::optional<std::vector<Words>> read() {
        while (i_ < s_.size())
            if (!step(s_[i_])) return std::nullopt;
        return finish();
    }

private:
    bool step(char c) {
        if (c == ' ' || c == '\t') {
            end_word();
            ++i_;
            return true;
        }
        if (c == '\n' || c == ';') {
            if (!end_command()) return false;
            trailing_separator_ = true;
            ++i_;
            return true;
        }
        if (c == '&' || c == '|') return list_operator(c);
        trailing_separator_ = false;
        if (c == '\'') return single_quoted();
        if (c == '"') return double_quoted();
        if (!is_plain_char(c)) return false;
        word_.push_back(c);
        in_word_ = true;
        ++i_;
        return true;
    }

    // && and ||; a single | (a pipe) too, but not & (a background job).
    bool list_operator(char c) {
        const bool doubled = i_ + 1 < s_.size() && s_[i_ + 1] == c;
        if (c == '&' && !doubled) return false;
        if (!end_command()) return false;
        trailing_separator_ = false;
        i_ += doubled ? 2 : 1;
        // The next command must exist: checked when it ends or at the end.
        return i_ < s_.size();
    }

    bool single_quoted() {
        const auto close = s_.find('\'', i_ + 1);
        if (close == std::string_view::npos) return false;
        word_.append(s_.substr(i_ + 1, close - i_ - 1));
        in_word_ = true;
        i_ = close + 1;
        return true;
    }

    // Double quotes only without anything the shell would expand in them.
    bool double_quoted() {
        std::size_t j = i_ + 1;
        for (; j < s_.size() && s_[j] != '"'; ++j) {
            const char d = s_[j];
            if (d == '$' || d == '`' || d == '\\' || d == '!') return false;
        }
        if (j >= s_.size()) return false;
        word_.append(s_.substr(i_ + 1, j - i_ - 1));
        in_word_ = true;
        i_ = j + 1;
        return true;
    }

    void end_word() {
        if (in_word_) current_.push_back(std::move(word_));
        word_.clear();
        in_word_ = false;
    }

    // An operator ends the current command; an empty one is refused.
    bool end_command() {
        end_word();
        if (current_.empty() || is_reserved_word(current_.front())) return false;
        commands_.push_back(std::move(current_));
        current_.clear();
        return true;
    }

    std::optional<std::vector<Words>> finish() {
        end_word();
        if (current_.empty()) {
            // Nothing after the last operator: fine after ; or newline only, and
            // only when there was a command at all.
            if (commands_.empty() || !trailing_separator_) return std::nullopt;
        } else {
            if (is_reserved_word(current_.front())) return std::nullopt;
            commands_.push_back(std::move(current_));
        }
        return std::move(commands_);
    }

    std::string_view s_;
    std::size_t i_ = 0;
    std::vector<Words> commands_;
    Words current_;
    std::string word_;
    bool in_word_ = false;             // a word has started (possibly empty, as in '')
    bool trailing_separator_ = false;  // the last thing seen was ; or newline
};

}  // namespace

std::optional<std::vector<Words>> parse_plain_script(std::string_view s) { return PlainReader(s).read(); }

namespace {

// NAME=value: an assignment, which runs nothing.
bool is_assignment(const std::string& w) {
    const auto eq = w.find('=');
    if (eq == 0 || eq == std::string::npos) return false;
    for (std::size_t i = 0; i < eq; ++i) {
        const char c = w[i];
        const bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

// rough_commands' reader: one pass over the script, a character at a time.
class RoughReader {
public:
    explicit RoughReader(std::string_view s) : s_(s) {}

    std::vector<Words> read() {
        for (i_ = 0; i_ < s_.size(); ++i_) step(s_[i_]);
        end_command();
        return std::move(commands_);
    }

private:
    void step(char c) {
        if (c == '\\') return escaped();
        if (c == '"') {  // an empty "" is no word here
            in_double_ = !in_double_;
            return;
        }
        if (c == '\'' && !in_double_) return single_quoted();
        if (c == ' ' || c == '\t') return end_word();
        if (c == '#' && !in_word_ && !in_double_) {
            end_command();
            while (i_ < s_.size() && s_[i_] != '\n') ++i_;
            return;
        }
        if (c == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '(') {
            end_command();
            ++i_;
            return;
        }
        if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '{' || c == '}' || c == '`' || c == '\n')
            return end_command();
        if (c == '<' || c == '>') return redirection();
        word_.push_back(c);
        in_word_ = true;
    }

    // A backslash takes the next character literally; \newline joins lines.
    void escaped() {
        if (i_ + 1 >= s_.size()) return;
        if (s_[i_ + 1] != '\n') word_.push_back(s_[i_ + 1]);
        in_word_ = true;
        ++i_;
    }

    // Single-quoted text: one literal piece, to the closing quote or the end.
    void single_quoted() {
        const auto close = s_.find('\'', i_ + 1);
        const auto end = close == std::string_view::npos ? s_.size() : close;
        word_.append(s_.substr(i_ + 1, end - i_ - 1));
        in_word_ = true;
        i_ = end;
    }

    // <, >, <<, >>, >&, &>, >|, with a leading fd number: dropped, and so is
    // the word after it (its target; the fd after >& too).
    void redirection() {
        bool fd = in_word_ && !word_.empty();
        for (char d : word_) fd = fd && d >= '0' && d <= '9';
        if (fd) {
            word_.clear();
            in_word_ = false;
        } else {
            end_word();
        }
        while (i_ + 1 < s_.size() && (s_[i_ + 1] == '<' || s_[i_ + 1] == '>' || s_[i_ + 1] == '&' || s_[i_ + 1] == '|'))
            ++i_;
        skip_target_ = true;
    }

    void end_word() {
        if (in_word_) {
            if (skip_target_) skip_target_ = false;
            else current_.push_back(std::move(word_));
        }
        word_.clear();
        in_word_ = false;
    }

    // Leading reserved words, ! and NAME=value assignments run nothing.
    void end_command() {
        end_word();
        skip_target_ = false;
        std::size_t first = 0;
        while (first < current_.size() &&
               (is_reserved_word(current_[first]) || current_[first] == "!" || is_assignment(current_[first])))
            ++first;
        if (first < current_.size())
            commands_.emplace_back(current_.begin() + static_cast<std::ptrdiff_t>(first), current_.end());
        current_.clear();
    }

    std::string_view s_;
    std::size_t i_ = 0;
    std::vector<Words> commands_;
    Words current_;
    std::string word_;
    bool in_word_ = false;
    bool in_double_ = false;
    bool skip_target_ = false;  // the next word is a redirection's target
};

}  // namespace

std::vector<Words> rough_commands(std::string_view s) { return RoughReader(s).read(); }

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
