#include "denial/seatbelt_log.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace sbx {

namespace {

// The words of s, split at spaces.
std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') ++i;
        const std::size_t start = i;
        while (i < s.size() && s[i] != ' ') ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

// "NAME(PID)" into its name and pid (a name may hold parentheses: the pid is
// in the last pair); false when it is not that shape.
bool process_word(std::string_view w, std::string& name, long& pid) {
    if (w.size() < 4 || w.back() != ')') return false;
    const auto open = w.rfind('(');
    if (open == std::string_view::npos || open == 0 || open + 2 > w.size() - 1) return false;
    const std::string_view digits = w.substr(open + 1, w.size() - open - 2);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return false;
    name = std::string(w.substr(0, open));
    pid = std::strtol(std::string(digits).c_str(), nullptr, 10);
    return true;
}

// One line's denial, if it holds one.
bool parse_line(std::string_view line, Denial& out) {
    constexpr std::string_view kMark = "Sandbox: ";
    const auto at = line.find(kMark);
    if (at == std::string_view::npos) return false;
    // NAME(PID) deny(N) OPERATION [TARGET...]; "NAME(PID) System Policy:
    // deny(N) ..." is the platform's own policy, not the sandbox's.  NAME
    // may hold spaces: the process is all before " deny(".
    const std::string_view rest = line.substr(at + kMark.size());
    const auto deny = rest.find(" deny(");
    if (deny == std::string_view::npos) return false;
    Denial d;
    if (!process_word(rest.substr(0, deny), d.program, d.pid)) return false;
    const auto w = words(rest.substr(deny + 1));
    if (w.size() < 2) return false;
    d.operation = std::string(w[1]);
    std::string target;
    for (std::size_t i = 2; i < w.size(); ++i) target += (target.empty() ? "" : " ") + std::string(w[i]);
    if (d.operation.starts_with("network")) d.address = target;
    else if (d.operation.starts_with("file") || (!target.empty() && target.front() == '/')) d.path = target;
    else d.target = target;
    out = std::move(d);
    return true;
}

}  // namespace

std::vector<std::string> seatbelt_log_argv() {
    return {"/usr/bin/log", "stream",      "--style",
            "compact",      "--predicate", R"(sender == "Sandbox" AND eventMessage CONTAINS "deny(")"};
}

std::vector<Denial> seatbelt_denials(std::string_view text, const std::set<long>& pids) {
    std::vector<Denial> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        Denial d;
        if (!parse_line(line, d) || (!pids.empty() && pids.count(d.pid) == 0)) continue;
        const bool seen = std::any_of(out.begin(), out.end(), [&](const Denial& o) {
            return o.operation == d.operation && o.path == d.path && o.address == d.address && o.target == d.target;
        });
        if (!seen) out.push_back(std::move(d));
    }
    return out;
}

}  // namespace sbx
