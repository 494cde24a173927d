#include "denial/denial.h"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/ascii.h"

namespace sbx {

namespace {

// EROFS, from the sandbox's read-only mounts: always about a file.
constexpr const char* kReadOnly = "read-only file system";
constexpr std::array kMessages{
    "operation not permitted", "permission denied", kReadOnly, "seccomp", "sandbox", "landlock",
};

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Audit prints an untrusted string quoted, or hex-encoded (unquoted) when it
// has spaces, quotes or control characters.
std::string audit_string(std::string_view v) {
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return std::string(v.substr(1, v.size() - 2));
    if (v.size() % 2 != 0 || v.empty()) return std::string(v);
    std::string out;
    for (std::size_t i = 0; i < v.size(); i += 2) {
        const int hi = hex_digit(v[i]), lo = hex_digit(v[i + 1]);
        if (hi < 0 || lo < 0) return std::string(v);
        out.push_back(static_cast<char>(hi * 16 + lo));
    }
    return out;
}

// key=value fields of a record's text (after "audit(...): ").
std::map<std::string, std::string> fields(std::string_view text) {
    if (const auto p = text.find("): "); text.rfind("audit(", 0) == 0 && p != std::string_view::npos)
        text.remove_prefix(p + 3);
    std::map<std::string, std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        const auto eq = text.find('=', i);
        if (eq == std::string_view::npos) break;
        const std::string key(text.substr(i, eq - i));
        std::size_t end;
        if (eq + 1 < text.size() && text[eq + 1] == '"') {
            end = text.find('"', eq + 2);
            end = end == std::string_view::npos ? text.size() : end + 1;
        } else {
            end = text.find(' ', eq + 1);
            if (end == std::string_view::npos) end = text.size();
        }
        out[key] = std::string(text.substr(eq + 1, end - eq - 1));
        i = end;
    }
    return out;
}

// Only the untrusted-string fields are ever hex-encoded; a number such as
// dest=8080 must stay as it is.
std::string field(const std::map<std::string, std::string>& f, const std::string& key) {
    const auto it = f.find(key);
    if (it == f.end()) return {};
    for (const char* s : {"path", "exe", "comm", "ocomm", "name"})
        if (key == s) return audit_string(it->second);
    return it->second;
}

int record_type(std::string_view t) {
    if (t == "LANDLOCK_ACCESS") return kAuditLandlockAccess;
    if (t == "LANDLOCK_DOMAIN") return kAuditLandlockDomain;
    if (t.rfind("UNKNOWN[", 0) == 0) t = t.substr(8);
    int n = 0;
    for (char c : t) {
        if (c < '0' || c > '9') break;
        n = n * 10 + (c - '0');
    }
    return n;
}

}  // namespace

std::optional<std::string> find_denial_message(std::string_view text) {
    const std::string l = ascii_lower(text);
    for (const char* m : kMessages)
        if (l.find(m) != std::string::npos) return std::string(m);
    return std::nullopt;
}

std::string path_near_denial_message(std::string_view text) {
    const std::string l = ascii_lower(text);
    std::size_t at = std::string::npos;
    const char* message = nullptr;
    for (const char* m : kMessages)
        if (const auto p = l.find(m); p < at) at = p, message = m;
    if (at == std::string::npos) return {};
    const auto begin = text.rfind('\n', at);
    const std::size_t from = begin == std::string_view::npos ? 0 : begin + 1;
    const auto end = text.find('\n', at);
    const std::string_view line = text.substr(from, (end == std::string_view::npos ? text.size() : end) - from);
    // The absolute paths on the line.  The one the message is about is the
    // last before it ("cannot copy 'TEMPLATE' to 'TARGET': ..."), but for a
    // symlink's target ("'LINK' -> 'TARGET'"); else the first after it.
    std::string_view first, last_before;
    const std::size_t message_at = at - from;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] != '/' || (i > 0 && line[i - 1] != ' ' && line[i - 1] != '\'' && line[i - 1] != '"' &&
                               line[i - 1] != '`' && line[i - 1] != '('))
            continue;
        std::size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\'' && line[j] != '"' && line[j] != ':' &&
               line[j] != ')')
            ++j;
        if (j <= i + 1) continue;
        const std::string_view path = line.substr(i, j - i);
        if (first.empty()) first = path;
        const std::string_view lead = line.substr(0, i);
        if (i < message_at && !lead.ends_with("-> ") && !lead.ends_with("-> '")) last_before = path;
        i = j;
    }
    if (!last_before.empty()) return std::string(last_before);
    if (!first.empty()) return std::string(first);
    // No absolute path: a relative one, only where the message can only be
    // about a file (EROFS), in the two usual shapes "... PATH: Read-only file
    // system" (sh, touch, git) and "Read-only file system: 'PATH'" (Python).
    if (std::string_view(message) != kReadOnly) return {};
    auto bare = [](std::string_view s) {
        constexpr std::string_view kQuotes[] = {"'", "\"", "`", "\u2018", "\u2019"};
        for (bool again = true; again && !s.empty();) {
            again = false;
            for (auto q : kQuotes) {
                if (s.starts_with(q)) s.remove_prefix(q.size()), again = true;
                if (s.ends_with(q)) s.remove_suffix(q.size()), again = true;
            }
        }
        return s;
    };
    std::string_view before = line.substr(0, message_at);
    if (before.ends_with(": ")) {
        before.remove_suffix(2);
        const auto space = before.find_last_of(' ');
        const std::string_view token = bare(space == std::string_view::npos ? before : before.substr(space + 1));
        if (!token.empty() && token.find(':') == std::string_view::npos) return std::string(token);
    }
    std::string_view after = line.substr(message_at + std::strlen(message));
    if (after.starts_with(": ")) {
        after.remove_prefix(2);
        const std::string_view token = bare(after.substr(0, after.find(' ')));
        if (!token.empty()) return std::string(token);
    }
    return {};
}

DenialAnalysis analyze_denial(const RunOutcome& r, bool sandboxed) {
    DenialAnalysis a;
    if (!sandboxed) return a;
    if (r.signal && *r.signal == SIGSYS) {
        a.sandbox_denied = true;
        a.reason = "SIGSYS";
        return a;
    }
    switch (r.exit_code) {
        case 0:
        case 124:
        case 126:
        case 127: return a;
        default: break;
    }
    if (r.timed_out) return a;
    // The shown text is what sbx kept; the message is most often near the end.
    for (const auto* s : {&r.err.tail, &r.err.shown, &r.out.tail, &r.out.shown}) {
        if (auto m = find_denial_message(*s)) {
            // Status 2 is sh's for a redirection it could not make, but also
            // ls's and grep's for trouble of their own: only a read-only file
            // system (the sandbox's mounts) counts there.
            if (r.exit_code == 2 && *m != kReadOnly) return a;
            a.sandbox_denied = true;
            a.reason = *m;
            a.path = path_near_denial_message(*s);
            return a;
        }
    }
    return a;
}

DenialAnalysis analyze_recorded(const RunOutcome& r, const HelperStatus& helper, const std::vector<Denial>& audit) {
    DenialAnalysis a;
    a.recorded = true;
    a.denials = merge_denials(helper.denied, audit);
    a.omitted = helper.denied_omitted;
    if (r.signal && *r.signal == SIGSYS) {
        a.sandbox_denied = true;
        a.reason = "SIGSYS";
        return a;
    }
    if (r.exit_code == 0 || r.timed_out || r.exit_code == 124 || a.denials.empty()) return a;
    a.sandbox_denied = true;
    a.reason = "recorded";
    return a;
}

void add_recorded_network(DenialAnalysis& a, const RunOutcome& r, const HelperStatus& helper) {
    if (helper.denied.empty()) return;
    a.denials = merge_denials(helper.denied, a.denials);
    a.omitted = helper.denied_omitted;
    if (r.exit_code == 0 || r.timed_out || r.exit_code == 124 || a.sandbox_denied) return;
    a.sandbox_denied = true;
    a.reason = "recorded";
}

std::string unresolved_host(std::string_view output) {
    // Each phrase is followed by the name (after optional quotes).
    static constexpr std::string_view kPhrases[] = {
        "could not resolve host: ",         "could not resolve hostname ", "getaddrinfo eai_again ",
        "getaddrinfo enotfound ",           "failed to resolve '",         "host='",
        "unable to resolve host address '", "dial tcp: lookup ",           "resolving ",
    };
    const std::string l = ascii_lower(output);
    std::size_t best = std::string::npos;
    std::string name;
    for (const auto phrase : kPhrases) {
        const auto at = l.find(phrase);
        if (at == std::string::npos || at >= best) continue;
        std::size_t i = at + phrase.size(), j = i;
        while (j < l.size() && (std::isalnum(static_cast<unsigned char>(l[j])) || l[j] == '.' || l[j] == '-')) ++j;
        std::string candidate = l.substr(i, j - i);
        while (!candidate.empty() && candidate.back() == '.') candidate.pop_back();
        // A host name: a dot inside, not all digits and dots (an address).
        if (candidate.find('.') == std::string::npos || candidate.find_first_not_of("0123456789.") == std::string::npos)
            continue;
        best = at;
        name = std::move(candidate);
    }
    return name;
}

void name_lookups(DenialAnalysis& a, const RunOutcome& r) {
    std::string host;
    bool looked = false;
    for (auto& d : a.denials) {
        if (!d.address.ends_with(":53") || !d.host.empty()) continue;
        // The kept copy (--json, --events) or, streaming, the last bytes.
        if (!looked)
            host = unresolved_host(fmt::format("{}\n{}\n{}\n{}", r.err.shown, r.err.tail, r.out.shown, r.out.tail)),
            looked = true;
        d.host = host;
    }
}

std::vector<AuditRecord> parse_audit_log(std::string_view text) {
    std::vector<AuditRecord> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        const auto t = line.find("type=");
        if (t == std::string_view::npos) continue;
        const auto sp = line.find(' ', t);
        if (sp == std::string_view::npos) continue;
        const int type = record_type(line.substr(t + 5, sp - t - 5));
        if (type != kAuditLandlockAccess && type != kAuditLandlockDomain) continue;
        std::string_view rest = line.substr(sp + 1);
        if (rest.rfind("msg=", 0) == 0) rest.remove_prefix(4);
        out.push_back(AuditRecord{type, std::string(rest)});
    }
    return out;
}

std::vector<Denial> landlock_denials(const std::vector<AuditRecord>& records, std::string_view creator_exe) {
    std::set<std::string> domains;
    for (const auto& r : records) {
        if (r.type != kAuditLandlockDomain) continue;
        const auto f = fields(r.text);
        if (field(f, "status") != "allocated") continue;
        if (creator_exe.empty() || field(f, "exe") == creator_exe) domains.insert(field(f, "domain"));
    }
    std::vector<Denial> out;
    for (const auto& r : records) {
        if (r.type != kAuditLandlockAccess) continue;
        const auto f = fields(r.text);
        if (domains.count(field(f, "domain")) == 0) continue;
        Denial d;
        d.operation = field(f, "blockers");
        d.path = field(f, "path");
        if (const auto daddr = field(f, "daddr"); !daddr.empty())
            d.address = fmt::format("{}:{}", daddr, field(f, "dest"));
        else if (const auto saddr = field(f, "saddr"); !saddr.empty())
            d.address = fmt::format("{}:{}", saddr, field(f, "src"));
        if (const auto opid = field(f, "opid"); !opid.empty())
            d.target = fmt::format("pid {} ({})", opid, field(f, "ocomm"));
        if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(std::move(d));
    }
    return out;
}

nlohmann::json to_json(const Denial& d) {
    nlohmann::json j{{"operation", d.operation}};
    if (!d.path.empty()) j["path"] = d.path;
    if (!d.address.empty()) j["address"] = d.address;
    if (!d.host.empty()) j["host"] = d.host;
    if (!d.target.empty()) j["target"] = d.target;
    if (d.pid != 0) j["pid"] = d.pid;
    if (!d.program.empty()) j["program"] = d.program;
    if (d.fix && !d.fix->rule.empty()) j["rule"] = d.fix->rule;
    if (d.fix) j["fix"] = d.fix->text();
    if (d.fix && !d.fix->change.empty()) j["change"] = to_json(d.fix->change);
    return j;
}

std::vector<Denial> merge_denials(const std::vector<RecordedDenial>& recorded, const std::vector<Denial>& audit) {
    std::vector<Denial> out;
    for (const auto& r : recorded) out.push_back(Denial{r.op, r.path, r.address, {}, r.pid, r.program});
    const std::size_t seen = out.size();
    for (const auto& d : audit) {
        const bool known =
            std::any_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(seen), [&](const Denial& r) {
                return (!d.path.empty() && r.path == d.path) || (!d.address.empty() && r.address == d.address);
            });
        if (!known) out.push_back(d);
    }
    return out;
}

std::string denied_what(const Denial& d) {
    if (!d.path.empty()) return fmt::format("{} {}", d.operation, d.path);
    if (!d.address.empty() && !d.host.empty())
        return fmt::format("{} {}, the lookup of {}", d.operation, d.address, d.host);
    if (!d.address.empty()) return fmt::format("{} {}", d.operation, d.address);
    if (!d.target.empty()) return fmt::format("{} to {}", d.operation, d.target);
    return d.operation;
}

}  // namespace sbx
