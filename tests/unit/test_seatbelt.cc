// The macOS Seatbelt profile, tested on any OS.
//
// sandbox-exec itself only exists on macOS and is not run here.  Instead each
// generated profile goes through a checker written for these tests: a reader
// for the SBPL syntax (TinyScheme strings, #"regex" literals, comments) that
// requires balanced parentheses, closed strings, known operations and filters,
// and a -D parameter for every (param "X"); and a small evaluator of the
// allow/deny rules (deny default, last matching rule wins) that answers
// whether an operation on a path or address would be allowed, so the
// carve-outs and network levels are checked by their effect on the rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_fs.h"
#include "platform/plan.h"
#include "platform/seatbelt.h"

using namespace sbx;

namespace {

// ---------------------------------------------------------------------------
// Reader

struct Sexp {
    enum class Kind { List, Symbol, String, Regex };
    Kind kind = Kind::List;
    std::string text;         // symbol name, decoded string, regex source
    std::vector<Sexp> items;  // for lists
    int line = 0;

    bool is_list(std::string_view head) const {
        return kind == Kind::List && !items.empty() && items[0].kind == Kind::Symbol && items[0].text == head;
    }
};

struct SbplError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Reader {
public:
    explicit Reader(std::string_view text) : text_(text) {}

    std::vector<Sexp> read_all() {
        std::vector<Sexp> forms;
        while (true) {
            skip_blank();
            if (pos_ >= text_.size()) return forms;
            if (text_[pos_] == ')') fail("unbalanced ')'");
            forms.push_back(read());
        }
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw SbplError("line " + std::to_string(line_) + ": " + why);
    }

    void skip_blank() {
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == '\n') {
                ++line_;
                ++pos_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (c == ';') {
                while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
            } else {
                return;
            }
        }
    }

    static int hex_value(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    }

    // A "..." string as TinyScheme reads it: \xHH (exactly two hex digits),
    // \n \t \r, and a backslash before any other character stands for that
    // character.  A raw newline is refused: our profiles never have one, so
    // it can only mean a string that was not closed where it should be.
    Sexp read_string() {
        Sexp s{Sexp::Kind::String, {}, {}, line_};
        ++pos_;  // opening quote
        while (true) {
            if (pos_ >= text_.size()) fail("string not closed");
            const char c = text_[pos_++];
            if (c == '"') return s;
            if (c == '\n') fail("newline inside a string (string not closed?)");
            if (c != '\\') {
                s.text += c;
                continue;
            }
            if (pos_ >= text_.size()) fail("string not closed");
            const char e = text_[pos_++];
            if (e == 'x' || e == 'X') {
                if (pos_ + 2 > text_.size()) fail("string not closed");
                const int hi = hex_value(text_[pos_]), lo = hex_value(text_[pos_ + 1]);
                if (hi < 0 || lo < 0) fail("bad \\x escape");
                s.text += static_cast<char>(hi * 16 + lo);
                pos_ += 2;
            } else if (e == 'n') {
                s.text += '\n';
            } else if (e == 't') {
                s.text += '\t';
            } else if (e == 'r') {
                s.text += '\r';
            } else {
                s.text += e;
            }
        }
    }

    // #"..." regex literal: backslashes are kept for the regex engine.
    Sexp read_regex() {
        Sexp s{Sexp::Kind::Regex, {}, {}, line_};
        pos_ += 2;
        while (true) {
            if (pos_ >= text_.size()) fail("regex not closed");
            const char c = text_[pos_++];
            if (c == '"') return s;
            if (c == '\n') fail("newline inside a regex (not closed?)");
            s.text += c;
            if (c == '\\') {
                if (pos_ >= text_.size()) fail("regex not closed");
                s.text += text_[pos_++];
            }
        }
    }

    Sexp read() {
        skip_blank();
        if (pos_ >= text_.size()) fail("unexpected end: unbalanced '('");
        const char c = text_[pos_];
        if (c == '(') {
            Sexp list{Sexp::Kind::List, {}, {}, line_};
            ++pos_;
            while (true) {
                skip_blank();
                if (pos_ >= text_.size()) fail("unbalanced '(' opened on line " + std::to_string(list.line));
                if (text_[pos_] == ')') {
                    ++pos_;
                    return list;
                }
                list.items.push_back(read());
            }
        }
        if (c == '"') return read_string();
        if (c == '#' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') return read_regex();
        Sexp sym{Sexp::Kind::Symbol, {}, {}, line_};
        while (pos_ < text_.size()) {
            const char d = text_[pos_];
            if (d == ' ' || d == '\t' || d == '\n' || d == '\r' || d == '(' || d == ')' || d == ';' || d == '"') break;
            sym.text += d;
            ++pos_;
        }
        if (sym.text.empty()) fail(std::string("unexpected character '") + c + "'");
        return sym;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    int line_ = 1;
};

std::string decode_string_literal(const std::string& literal) {
    std::vector<Sexp> forms = Reader(literal).read_all();
    if (forms.size() != 1 || forms[0].kind != Sexp::Kind::String) throw SbplError("not one string literal");
    return forms[0].text;
}

// ---------------------------------------------------------------------------
// Well-formedness

// Seatbelt operation names (macOS 10.15 to 15), the ones sbx may use and their
// neighbours.  A name outside this list is a typo that would make sandbox-exec
// refuse the whole profile.
const std::set<std::string>& known_operations() {
    static const std::set<std::string> ops{"default",
                                           "file*",
                                           "file-chroot",
                                           "file-clone",
                                           "file-ioctl",
                                           "file-issue-extension",
                                           "file-link",
                                           "file-map-executable",
                                           "file-mknod",
                                           "file-mount",
                                           "file-read*",
                                           "file-read-data",
                                           "file-read-metadata",
                                           "file-read-xattr",
                                           "file-revoke",
                                           "file-search",
                                           "file-test-existence",
                                           "file-unmount",
                                           "file-write*",
                                           "file-write-acl",
                                           "file-write-create",
                                           "file-write-data",
                                           "file-write-flags",
                                           "file-write-mode",
                                           "file-write-owner",
                                           "file-write-setugid",
                                           "file-write-times",
                                           "file-write-unlink",
                                           "file-write-xattr",
                                           "iokit*",
                                           "iokit-get-properties",
                                           "iokit-open",
                                           "iokit-set-properties",
                                           "ipc*",
                                           "ipc-posix*",
                                           "ipc-posix-sem",
                                           "ipc-posix-shm",
                                           "ipc-posix-shm*",
                                           "ipc-posix-shm-read*",
                                           "ipc-posix-shm-read-data",
                                           "ipc-posix-shm-read-metadata",
                                           "ipc-posix-shm-write*",
                                           "ipc-posix-shm-write-create",
                                           "ipc-posix-shm-write-data",
                                           "ipc-posix-shm-write-unlink",
                                           "ipc-sysv*",
                                           "ipc-sysv-msg",
                                           "ipc-sysv-sem",
                                           "ipc-sysv-shm",
                                           "mach*",
                                           "mach-bootstrap",
                                           "mach-host*",
                                           "mach-host-exception-port-set",
                                           "mach-host-special-port-set",
                                           "mach-lookup",
                                           "mach-per-user-lookup",
                                           "mach-priv*",
                                           "mach-priv-host-port",
                                           "mach-priv-task-port",
                                           "mach-register",
                                           "mach-task-name",
                                           "network*",
                                           "network-bind",
                                           "network-inbound",
                                           "network-outbound",
                                           "process*",
                                           "process-exec",
                                           "process-exec*",
                                           "process-exec-interpreter",
                                           "process-fork",
                                           "process-info*",
                                           "process-info-codesignature",
                                           "process-info-dirtycontrol",
                                           "process-info-listpids",
                                           "process-info-pidinfo",
                                           "process-info-pidfdinfo",
                                           "process-info-pidfileportinfo",
                                           "process-info-rusage",
                                           "process-info-setcontrol",
                                           "pseudo-tty",
                                           "signal",
                                           "sysctl*",
                                           "sysctl-read",
                                           "sysctl-write",
                                           "system*",
                                           "system-fsctl",
                                           "system-info",
                                           "system-socket",
                                           "user-preference*",
                                           "user-preference-read",
                                           "user-preference-write"};
    return ops;
}

struct CheckedProfile {
    std::vector<Sexp> rules;       // the allow and deny forms, in order
    std::set<std::string> params;  // every (param "X") used
    bool open_default = false;     // starts with (allow default) (external-sandbox's network-only profile)
};

void check_string_arg(const Sexp& f, std::size_t n_args = 1) {
    if (f.items.size() != n_args + 1)
        throw SbplError("line " + std::to_string(f.line) + ": (" + f.items[0].text + ") takes " +
                        std::to_string(n_args) + " argument(s)");
}

void check_filter(const Sexp& f, std::set<std::string>& params);

void check_path_arg(const Sexp& f, std::set<std::string>& params) {
    check_string_arg(f);
    const Sexp& a = f.items[1];
    if (a.kind == Sexp::Kind::String) return;
    if (a.is_list("param") && a.items.size() == 2 && a.items[1].kind == Sexp::Kind::String) {
        params.insert(a.items[1].text);
        return;
    }
    throw SbplError("line " + std::to_string(f.line) + ": (" + f.items[0].text +
                    ") wants a string or (param \"NAME\")");
}

void check_filter(const Sexp& f, std::set<std::string>& params) {
    const std::string where = "line " + std::to_string(f.line) + ": ";
    if (f.kind != Sexp::Kind::List || f.items.empty() || f.items[0].kind != Sexp::Kind::Symbol)
        throw SbplError(where + "a filter must be a list that starts with a name");
    const std::string& head = f.items[0].text;
    auto all_strings = [&] {
        check_string_arg(f);
        if (f.items[1].kind != Sexp::Kind::String) throw SbplError(where + "(" + head + ") wants a string");
    };
    if (head == "literal" || head == "subpath" || head == "prefix" || head == "path") {
        check_path_arg(f, params);
    } else if (head == "regex") {
        check_string_arg(f);
        const Sexp& a = f.items[1];
        if (a.is_list("param") && a.items.size() == 2 && a.items[1].kind == Sexp::Kind::String) {
            params.insert(a.items[1].text);  // its value is checked by the Evaluator
        } else if (a.kind == Sexp::Kind::Regex) {
            // throws on a malformed regex, in either dialect
            (void)std::regex(a.text);
            (void)std::regex(a.text, std::regex::extended);
        } else {
            throw SbplError(where + "(regex) wants a #\"...\" literal or (param \"NAME\")");
        }
    } else if (head == "require-all" || head == "require-any") {
        if (f.items.size() < 2) throw SbplError(where + "(" + head + ") is empty");
        for (std::size_t i = 1; i < f.items.size(); ++i) check_filter(f.items[i], params);
    } else if (head == "require-not") {
        if (f.items.size() != 2) throw SbplError(where + "(require-not) takes one filter");
        check_filter(f.items[1], params);
    } else if (head == "global-name" || head == "local-name" || head == "sysctl-name" || head == "sysctl-name-prefix" ||
               head == "iokit-registry-entry-class" || head == "ipc-posix-name" || head == "ipc-posix-name-prefix" ||
               head == "extension") {
        all_strings();
    } else if (head == "ipc-posix-name-regex") {
        check_string_arg(f);
        if (f.items[1].kind != Sexp::Kind::Regex) throw SbplError(where + "(ipc-posix-name-regex) wants #\"...\"");
        (void)std::regex(f.items[1].text, std::regex::extended);
    } else if (head == "ioctl-command") {
        // The request names sbx uses; a name sandbox-exec does not know is refused.
        static const std::set<std::string> known{"TIOCSTI"};
        check_string_arg(f);
        if (f.items[1].kind != Sexp::Kind::Symbol || !known.contains(f.items[1].text))
            throw SbplError(where + "(ioctl-command) wants a known request name");
    } else if (head == "socket-domain") {
        static const std::set<std::string> domains{"AF_SYSTEM", "AF_UNIX", "AF_ROUTE", "AF_INET", "AF_INET6"};
        check_string_arg(f);
        if (f.items[1].kind != Sexp::Kind::Symbol || !domains.contains(f.items[1].text))
            throw SbplError(where + "(socket-domain) wants an AF_ name");
    } else if (head == "socket-protocol") {
        check_string_arg(f);
        if (f.items[1].kind != Sexp::Kind::Symbol ||
            f.items[1].text.find_first_not_of("0123456789") != std::string::npos)
            throw SbplError(where + "(socket-protocol) wants a number");
    } else if (head == "target") {
        check_string_arg(f);
        static const std::set<std::string> targets{"self", "same-sandbox", "children"};
        if (f.items[1].kind != Sexp::Kind::Symbol || !targets.contains(f.items[1].text))
            throw SbplError(where + "(target) wants self, same-sandbox or children");
    } else if (head == "vnode-type") {
        check_string_arg(f);
        static const std::set<std::string> types{"REGULAR-FILE", "DIRECTORY", "SYMLINK", "CHARACTER-DEVICE",
                                                 "BLOCK-DEVICE", "SOCKET",    "FIFO"};
        if (f.items[1].kind != Sexp::Kind::Symbol || !types.contains(f.items[1].text))
            throw SbplError(where + "(vnode-type) wants a vnode type");
    } else if ((head == "local" || head == "remote") && f.items.size() == 2 && f.items[1].kind == Sexp::Kind::Symbol &&
               f.items[1].text == "unix-socket") {
        // (remote unix-socket): every pathname socket
    } else if (head == "local" || head == "remote") {
        check_string_arg(f, 2);
        static const std::set<std::string> protos{"ip", "tcp", "udp"};
        if (f.items[1].kind != Sexp::Kind::Symbol || !protos.contains(f.items[1].text))
            throw SbplError(where + "(" + head + ") wants ip, tcp or udp");
        // Seatbelt accepts only "*" or "localhost" as the host, and "*" or a number as the port.
        static const std::regex address(R"(^(\*|localhost):(\*|[0-9]+)$)");
        if (f.items[2].kind != Sexp::Kind::String || !std::regex_match(f.items[2].text, address))
            throw SbplError(where + "(" + head + ") wants \"localhost:*\"-style address");
    } else {
        throw SbplError(where + "unknown filter (" + head + ")");
    }
}

// Parses and checks a profile; `defined` are the -D parameters it will get.
CheckedProfile check_profile(const std::string& profile, const std::vector<std::string>& defined_params) {
    CheckedProfile out;
    std::vector<Sexp> forms = Reader(profile).read_all();
    if (forms.empty() || !forms[0].is_list("version") || forms[0].items.size() != 2 || forms[0].items[1].text != "1")
        throw SbplError("the profile must start with (version 1)");
    bool closed = false;
    for (std::size_t i = 1; i < forms.size(); ++i) {
        const Sexp& form = forms[i];
        const std::string where = "line " + std::to_string(form.line) + ": ";
        if (!form.is_list("allow") && !form.is_list("deny"))
            throw SbplError(where + "only (allow ...) and (deny ...) follow (version 1)");
        std::size_t k = 1;
        for (; k < form.items.size() && form.items[k].kind == Sexp::Kind::Symbol; ++k)
            if (!known_operations().contains(form.items[k].text))
                throw SbplError(where + "unknown operation " + form.items[k].text);
        if (k == 1) throw SbplError(where + "a rule names at least one operation");
        for (; k < form.items.size(); ++k) check_filter(form.items[k], out.params);
        if (form.items.size() == 2 && form.items[1].text == "default") {
            if (i != 1) throw SbplError(where + "(deny default) or (allow default) must be the first rule");
            closed = form.is_list("deny");
            out.open_default = !closed;
        }
        out.rules.push_back(form);
    }
    if (!closed && !out.open_default)
        throw SbplError("the profile must start with (deny default), or (allow default) for a network-only one");

    std::set<std::string> defined;
    for (const std::string& p : defined_params) {
        const auto eq = p.find('=');
        if (!p.starts_with("-D") || eq == std::string::npos || eq == 2) throw SbplError("malformed parameter " + p);
        if (!defined.insert(p.substr(2, eq - 2)).second) throw SbplError("parameter defined twice: " + p);
    }
    for (const std::string& used : out.params)
        if (!defined.contains(used)) throw SbplError("(param \"" + used + "\") has no -D parameter");
    for (const std::string& name : defined)
        if (!out.params.contains(name)) throw SbplError("-D" + name + " is never used");
    return out;
}

// ---------------------------------------------------------------------------
// Evaluator: a model of Seatbelt's rule matching for the filters sbx uses.

struct Query {
    std::string op;
    std::optional<std::string> path;  // files, and pathname sockets for network ops
    std::string vnode = "REGULAR-FILE";
    std::optional<std::string> remote_ip, local_ip;  // "127.0.0.1", "::1", "10.0.0.1"
    std::optional<std::string> name;                 // sysctl, mach service, POSIX IPC name
    std::optional<std::string> ioctl;                // file-ioctl request: "TIOCSTI", "TIOCGETA", ...
    std::optional<std::string> socket_domain;        // system-socket: "AF_SYSTEM", ...
    std::optional<std::string> socket_protocol;      // system-socket: "2"
};

Query op_only(std::string op) {
    Query q;
    q.op = std::move(op);
    return q;
}
Query on_file(std::string op, std::string path, std::string vnode = "REGULAR-FILE") {
    Query q = op_only(std::move(op));
    q.path = std::move(path);
    q.vnode = std::move(vnode);
    return q;
}
Query to_remote(std::string op, std::string ip) {
    Query q = op_only(std::move(op));
    q.remote_ip = std::move(ip);
    return q;
}
Query on_local(std::string op, std::string ip) {
    Query q = op_only(std::move(op));
    q.local_ip = std::move(ip);
    return q;
}
Query named(std::string op, std::string name) {
    Query q = op_only(std::move(op));
    q.name = std::move(name);
    return q;
}
Query ioctl_on(std::string path, std::string request) {
    Query q = on_file("file-ioctl", std::move(path), "CHARACTER-DEVICE");
    q.ioctl = std::move(request);
    return q;
}
Query system_socket(std::string domain, std::string protocol) {
    Query q = op_only("system-socket");
    q.socket_domain = std::move(domain);
    q.socket_protocol = std::move(protocol);
    return q;
}

bool path_within(const std::string& path, const std::string& root) {
    if (root == "/") return true;
    return path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/');
}

class Evaluator {
public:
    Evaluator(const std::string& profile, const std::vector<std::string>& params)
        : rules_(check_profile(profile, params).rules) {
        for (const std::string& p : params) {
            const auto eq = p.find('=');
            values_[p.substr(2, eq - 2)] = p.substr(eq + 1);
        }
    }

    bool allowed(const Query& q) const {
        bool allow = false;  // (deny default); the last matching rule decides
        for (const Sexp& rule : rules_) {
            bool op_matches = false;
            std::size_t k = 1;
            for (; k < rule.items.size() && rule.items[k].kind == Sexp::Kind::Symbol; ++k)
                op_matches = op_matches || operation_matches(rule.items[k].text, q.op);
            if (!op_matches) continue;
            bool any_filter = k == rule.items.size();  // no filter: matches every query
            for (; k < rule.items.size(); ++k) any_filter = any_filter || filter_matches(rule.items[k], q);
            if (any_filter) allow = rule.items[0].text == "allow";
        }
        return allow;
    }

    bool write(const std::string& path) const { return allowed(on_file("file-write-create", path)); }
    bool read(const std::string& path) const { return allowed(on_file("file-read-data", path)); }
    bool list(const std::string& dir) const { return allowed(on_file("file-read-data", dir, "DIRECTORY")); }
    bool stat(const std::string& path) const { return allowed(on_file("file-read-metadata", path)); }
    bool rename_dir(const std::string& dir) const { return allowed(on_file("file-write-unlink", dir, "DIRECTORY")); }

private:
    static bool operation_matches(const std::string& rule_op, const std::string& op) {
        if (rule_op == "default" || rule_op == op) return true;
        // the older name of the whole shared-memory family
        if (rule_op == "ipc-posix-shm") return op.starts_with("ipc-posix-shm");
        return rule_op.ends_with('*') && op.starts_with(rule_op.substr(0, rule_op.size() - 1));
    }

    std::string value(const Sexp& arg) const {
        if (arg.kind == Sexp::Kind::String) return arg.text;
        return values_.at(arg.items[1].text);
    }

    static bool loopback(const std::string& ip) { return ip == "127.0.0.1" || ip == "::1"; }

    bool filter_matches(const Sexp& f, const Query& q) const {
        const std::string& head = f.items[0].text;
        if (head == "require-all")
            return std::all_of(f.items.begin() + 1, f.items.end(), [&](const Sexp& s) { return filter_matches(s, q); });
        if (head == "require-any")
            return std::any_of(f.items.begin() + 1, f.items.end(), [&](const Sexp& s) { return filter_matches(s, q); });
        if (head == "require-not") return !filter_matches(f.items[1], q);
        if (head == "subpath") return q.path && path_within(*q.path, value(f.items[1]));
        if (head == "literal" || head == "path") return q.path && *q.path == value(f.items[1]);
        if (head == "prefix") return q.path && q.path->starts_with(value(f.items[1]));
        if (head == "regex") {
            if (!q.path) return false;
            // Seatbelt's regexes are POSIX extended ones; the generated ones
            // must read the same as ECMAScript, or the model proves nothing.
            const std::string rx = f.items[1].kind == Sexp::Kind::Regex ? f.items[1].text : value(f.items[1]);
            const bool ecma = std::regex_search(*q.path, std::regex(rx));
            if (ecma != std::regex_search(*q.path, std::regex(rx, std::regex::extended)))
                throw SbplError("regex " + rx + " reads differently as POSIX extended and ECMAScript on " + *q.path);
            return ecma;
        }
        if (head == "vnode-type") return q.path && q.vnode == f.items[1].text;
        if ((head == "remote" || head == "local") && f.items[1].text == "unix-socket")
            return q.path && q.op.starts_with("network") && !q.remote_ip && !q.local_ip;
        if (head == "remote" || head == "local") {
            const auto& ip = head == "remote" ? q.remote_ip : q.local_ip;
            if (!ip) return false;
            const std::string host = f.items[2].text.substr(0, f.items[2].text.find(':'));
            return host == "*" || loopback(*ip);
        }
        if (head == "global-name" || head == "local-name" || head == "sysctl-name" ||
            head == "iokit-registry-entry-class")
            return q.name && *q.name == f.items[1].text;
        if (head == "sysctl-name-prefix") return q.name && q.name->starts_with(f.items[1].text);
        if (head == "ipc-posix-name") return q.name && q.op.starts_with("ipc-posix") && *q.name == f.items[1].text;
        if (head == "ipc-posix-name-prefix")
            return q.name && q.op.starts_with("ipc-posix") && q.name->starts_with(f.items[1].text);
        if (head == "ipc-posix-name-regex")
            return q.name && q.op.starts_with("ipc-posix") &&
                   std::regex_search(*q.name, std::regex(f.items[1].text, std::regex::extended));
        if (head == "ioctl-command") return q.ioctl && *q.ioctl == f.items[1].text;
        if (head == "socket-domain") return q.socket_domain && *q.socket_domain == f.items[1].text;
        if (head == "socket-protocol") return q.socket_protocol && *q.socket_protocol == f.items[1].text;
        return false;  // target, extensions: not modelled, never matched
    }

    std::vector<Sexp> rules_;
    std::map<std::string, std::string> values_;
};

// ---------------------------------------------------------------------------
// Policies

const std::vector<std::string> kNames{".git", ".sbx", ".codex", ".agents"};

WritableRoot root_with_protected(const std::string& path) {
    WritableRoot r{path, {}};
    for (const std::string& n : kNames) r.protected_paths.push_back(path + "/" + n);
    return r;
}

// A policy as resolve() gives it on a Mac: fixed paths, so the profile and
// parameters are the same on every machine.
CanonicalPolicy mac_policy(Mode mode, Network network) {
    CanonicalPolicy p;
    p.mode = mode;
    p.network = network;
    p.workspace = "/Users/dev/project";
    p.protected_names = kNames;
    p.readable = {"/"};
    p.entries = {FsEntry{{FsTarget::Kind::Root, ""}, FsAccess::Read, "preset"}};
    if (mode == Mode::ReadOnly) {
        p.writable = {{"/dev/null", {}}};
    } else if (mode == Mode::WorkspaceWrite) {
        p.writable = {root_with_protected("/Users/dev/project"),
                      root_with_protected("/private/tmp"),
                      root_with_protected("/private/var/folders/zz/abc123/T"),
                      {"/dev/null", {}}};
    } else {
        p.writable = {{"/", {}}};
        p.entries = {FsEntry{{FsTarget::Kind::Root, ""}, FsAccess::Write, "preset"}};
    }
    return p;
}

std::string mode_slug(Mode m) { return std::string(to_string(m)); }

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> dash_d(const std::vector<std::pair<std::string, std::string>>& kv) {
    std::vector<std::string> out;
    for (const auto& [k, v] : kv) out.push_back("-D" + k + "=" + v);
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------

// After a deliberate change to the profile, regenerate the golden files with
// SBX_UPDATE_GOLDEN=1 BUILD/tests/unit/test_seatbelt and review the diff line by line.
TEST_CASE("seatbelt: golden profile for every mode and network level") {
    const bool update = std::getenv("SBX_UPDATE_GOLDEN") != nullptr;
    for (Mode mode : {Mode::ReadOnly, Mode::WorkspaceWrite, Mode::ExternalSandbox}) {
        for (Network net : {Network::Restricted, Network::Limited, Network::Full}) {
            const std::string name = "seatbelt-" + mode_slug(mode) + "-" + std::string(to_string(net)) + ".sbpl";
            const std::string file = std::string(SBX_GOLDEN_DIR) + "/" + name;
            CAPTURE(name);
            const CanonicalPolicy policy = mac_policy(mode, net);
            if (seatbelt_runs_unsandboxed(policy)) {  // external-sandbox, full network: no sandbox-exec
                CHECK_THROWS_AS(seatbelt_profile(policy), Error);
                CHECK(read_text(file).empty());
                continue;
            }
            const std::string profile = seatbelt_profile(policy);
            if (update) std::ofstream(file, std::ios::binary) << profile;
            const std::string golden = read_text(file);
            REQUIRE_FALSE(golden.empty());
            CHECK(profile == golden);
            // Every generated profile is well formed, and deterministic.
            CHECK_NOTHROW(check_profile(profile, seatbelt_parameters(policy)));
            CHECK(seatbelt_profile(mac_policy(mode, net)) == profile);
            CHECK(seatbelt_parameters(mac_policy(mode, net)) == seatbelt_parameters(policy));
        }
    }
}

TEST_CASE("seatbelt: the profile is the embedded base file followed by the generated rules") {
    const std::string base = read_text(std::string(SBX_SOURCE_ROOT) + "/macos/base.sbpl");
    REQUIRE_FALSE(base.empty());
    for (Network net : {Network::Restricted, Network::Limited, Network::Full}) {
        const std::string profile = seatbelt_profile(mac_policy(Mode::WorkspaceWrite, net));
        CHECK(profile.starts_with(base));
        const std::string network_file =
            read_text(std::string(SBX_SOURCE_ROOT) + "/macos/network_" + std::string(to_string(net)) + ".sbpl");
        REQUIRE_FALSE(network_file.empty());
        // the network file, then the last rule: no TIOCSTI
        const std::string tail =
            "\n; Last: no TIOCSTI on any terminal (it would type into the user's shell).\n"
            "(deny file-ioctl (ioctl-command TIOCSTI))\n";
        CHECK(profile.ends_with(network_file + tail));
    }
    const std::string profile = seatbelt_profile(mac_policy(Mode::ReadOnly, Network::Restricted));
    CHECK(profile.find("(deny default)") < profile.find("(allow process-exec)"));
    CHECK(profile.find("(allow signal (target same-sandbox))") != std::string::npos);
    CHECK(profile.find("(allow file-read* file-map-executable)") != std::string::npos);
}

TEST_CASE("seatbelt: parameters for several roots, protected paths and /private aliases") {
    CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    p.writable = {
        {"/Users/dev/project",
         {"/Users/dev/project/.git", "/Users/dev/project/.sbx", "/Users/dev/main/.git/worktrees/x"}},
        {"/Users/dev/cache", {"/Users/dev/cache/.git"}},
        {"/tmp", {"/tmp/.git", "/tmp/.codex"}},
        {"/private/var/folders/zz/T", {}},
        {"/Users/dev/cache", {"/Users/dev/cache/.agents"}},  // a duplicate root: merged
        {"/dev/null", {}},
    };
    // Shallowest path first; at one depth read, write, deny, then by path (so
    // that the order of the entries changes nothing).  The duplicate
    // root is one rule; /tmp and /var get their /private aliases; the gitdir
    // target lies in no writable root, so "/" already makes it read-only and
    // it has no rule.  Then the names renames may not move.
    const std::vector<std::string> expected = dash_d({
        {"WRITE_0", "/tmp"},
        {"READ_0", "/tmp/.codex"},
        {"READ_1", "/tmp/.git"},
        {"WRITE_1", "/private/tmp"},
        {"READ_2", "/private/tmp/.codex"},
        {"READ_3", "/private/tmp/.git"},
        {"WRITE_2", "/Users/dev/cache"},
        {"WRITE_3", "/Users/dev/project"},
        {"READ_4", "/Users/dev/cache/.agents"},
        {"READ_5", "/Users/dev/cache/.git"},
        {"READ_6", "/Users/dev/project/.git"},
        {"READ_7", "/Users/dev/project/.sbx"},
        {"WRITE_4", "/var/folders/zz/T"},
        {"WRITE_5", "/private/var/folders/zz/T"},
        {"FIXED_0", "/Users/dev/cache"},
        {"FIXED_1", "/Users/dev/project"},
        {"FIXED_2", "/private/tmp"},
        {"FIXED_3", "/tmp"},
    });
    CHECK(seatbelt_parameters(p) == expected);
    CHECK_NOTHROW(check_profile(seatbelt_profile(p), expected));

    SECTION("the whole argv: sandbox-exec by its absolute path, profile, parameters, --, command") {
        const std::vector<std::string> argv = seatbelt_argv(p, {"make", "-j2", "--", "x y"}, "/usr/bin/sandbox-exec");
        REQUIRE(argv.size() == 3 + expected.size() + 1 + 4);
        CHECK(argv[0] == "/usr/bin/sandbox-exec");
        CHECK(argv[1] == "-p");
        CHECK(argv[2] == seatbelt_profile(p));
        CHECK(std::vector<std::string>(argv.begin() + 3, argv.begin() + 3 + expected.size()) == expected);
        CHECK(argv[3 + expected.size()] == "--");
        CHECK(std::vector<std::string>(argv.end() - 4, argv.end()) ==
              std::vector<std::string>{"make", "-j2", "--", "x y"});
    }
    SECTION("refusals") {
        CHECK_THROWS_AS(seatbelt_argv(p, {"true"}, "sandbox-exec"), Error);
        CHECK_THROWS_AS(seatbelt_argv(p, {}, "/usr/bin/sandbox-exec"), Error);
        CHECK_THROWS_AS(seatbelt_profile(mac_policy(Mode::DangerFullAccess, Network::Full)), Error);
        CHECK_THROWS_AS(seatbelt_parameters(mac_policy(Mode::DangerFullAccess, Network::Full)), Error);
        CanonicalPolicy relative = p;
        relative.writable[1].path = "cache";
        CHECK_THROWS_AS(seatbelt_parameters(relative), Error);
        CanonicalPolicy bad_deny = p;
        bad_deny.denied = {"secret"};
        CHECK_THROWS_AS(seatbelt_parameters(bad_deny), Error);
    }
}

TEST_CASE("seatbelt: carve-outs, by the effect of the rules") {
    CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    p.writable = {root_with_protected("/Users/dev/project"),
                  {"/Users/dev", {"/Users/dev/.git"}},  // a root around the workspace
                  root_with_protected("/tmp"),
                  {"/dev/null", {}}};
    const Evaluator e(seatbelt_profile(p), seatbelt_parameters(p));

    CHECK(e.write("/Users/dev/project/src/main.c"));
    CHECK(e.write("/Users/dev/notes.txt"));
    // the root directory itself cannot be renamed or removed (mv project /tmp/p
    // would carry .git away from the name the rule holds), its contents can,
    // and so can its own attributes (touch ., chmod, tar x of ./)
    CHECK(e.allowed(on_file("file-write-times", "/Users/dev/project", "DIRECTORY")));
    CHECK_FALSE(e.allowed(on_file("file-write-unlink", "/Users/dev/project", "DIRECTORY")));
    CHECK(e.allowed(on_file("file-write-unlink", "/Users/dev/project/src", "DIRECTORY")));
    // protected names stay read-only, whether or not they exist yet
    CHECK_FALSE(e.write("/Users/dev/project/.git"));
    CHECK_FALSE(e.write("/Users/dev/project/.git/hooks/pre-commit"));
    CHECK_FALSE(e.write("/Users/dev/project/.sbx"));
    CHECK_FALSE(e.write("/Users/dev/project/.codex/config.toml"));
    CHECK_FALSE(e.write("/Users/dev/project/.agents/x"));
    CHECK(e.write("/Users/dev/project/.github/workflows/ci.yml"));
    CHECK(e.write("/Users/dev/project/sub/.git/config"));  // only the top of each root is protected
    // the enclosing root does not reopen what the inner root protects
    CHECK_FALSE(e.write("/Users/dev/project/.git/config"));
    CHECK_FALSE(e.write("/Users/dev/.git/HEAD"));
    // /tmp as written in the policy and as macOS resolves it
    CHECK(e.write("/tmp/build.o"));
    CHECK(e.write("/private/tmp/build.o"));
    CHECK_FALSE(e.write("/private/tmp/.git/x"));
    CHECK_FALSE(e.write("/tmp/.sbx"));
    // outside every root
    CHECK_FALSE(e.write("/Users/other/x"));
    CHECK_FALSE(e.write("/Users/devil/x"));
    CHECK_FALSE(e.write("/etc/passwd"));
    CHECK_FALSE(e.write("/private/var/tmp/x"));
    CHECK_FALSE(e.allowed(on_file("file-write-unlink", "/usr/bin/true")));
    // /dev/null: data writes on the device, nothing else
    CHECK(e.allowed(on_file("file-write-data", "/dev/null", "CHARACTER-DEVICE")));
    CHECK_FALSE(e.allowed(on_file("file-write-unlink", "/dev/null", "CHARACTER-DEVICE")));
    CHECK_FALSE(e.allowed(on_file("file-write-data", "/dev/disk0", "BLOCK-DEVICE")));
    // reads everywhere
    CHECK(e.allowed(on_file("file-read-data", "/Users/dev/project/.git/config")));
    CHECK(e.allowed(on_file("file-read-data", "/etc/passwd")));
    CHECK(e.allowed(on_file("file-map-executable", "/opt/homebrew/lib/libz.dylib")));

    SECTION("read-only: nothing but the devices") {
        const CanonicalPolicy ro = mac_policy(Mode::ReadOnly, Network::Restricted);
        const Evaluator r(seatbelt_profile(ro), seatbelt_parameters(ro));
        CHECK(seatbelt_parameters(ro).empty());
        CHECK_FALSE(r.write("/Users/dev/project/a"));
        CHECK_FALSE(r.write("/tmp/a"));
        CHECK_FALSE(r.write("/private/tmp/a"));
        CHECK(r.allowed(on_file("file-write-data", "/dev/null", "CHARACTER-DEVICE")));
        CHECK(r.allowed(on_file("file-read-data", "/Users/dev/project/a")));
    }
    SECTION("external-sandbox: the filesystem is left alone") {
        const CanonicalPolicy ext = mac_policy(Mode::ExternalSandbox, Network::Restricted);
        const Evaluator x(seatbelt_profile(ext), seatbelt_parameters(ext));
        CHECK(seatbelt_parameters(ext).empty());
        CHECK(x.write("/etc/hosts"));
        CHECK(x.allowed(on_file("file-write-unlink", "/Users/dev/project/.git")));
        CHECK_FALSE(x.allowed(to_remote("network-outbound", "1.1.1.1")));
        CHECK(seatbelt_parameters(ext, SeatbeltContext{{"/dev/ttys003"}}).empty());  // (allow default) covers it
    }
}

TEST_CASE("seatbelt: network levels, by the effect of the rules") {
    auto eval = [](Network n) {
        const CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, n);
        return Evaluator(seatbelt_profile(p), seatbelt_parameters(p));
    };
    const Query connect_out = to_remote("network-outbound", "93.184.216.34");
    const Query connect_lo = to_remote("network-outbound", "127.0.0.1");
    const Query connect_lo6 = to_remote("network-outbound", "::1");
    const Query bind_lo = on_local("network-bind", "127.0.0.1");
    const Query bind_any = on_local("network-bind", "0.0.0.0");
    const Query docker = on_file("network-outbound", "/private/var/run/docker.sock", "SOCKET");
    const Query bind_unix = on_file("network-bind", "/Users/dev/project/sock", "SOCKET");
    const Query resolver = named("mach-lookup", "com.apple.SystemConfiguration.configd");

    const Evaluator restricted = eval(Network::Restricted);
    for (const Query& q : {connect_out, connect_lo, connect_lo6, bind_lo, bind_any, docker, bind_unix, resolver})
        CHECK_FALSE(restricted.allowed(q));

    const Evaluator limited = eval(Network::Limited);
    CHECK(limited.allowed(connect_lo));
    CHECK(limited.allowed(connect_lo6));
    CHECK(limited.allowed(bind_lo));
    Query accept_lo = to_remote("network-inbound", "127.0.0.1");
    accept_lo.local_ip = "127.0.0.1";
    CHECK(limited.allowed(accept_lo));
    CHECK_FALSE(limited.allowed(connect_out));
    CHECK_FALSE(limited.allowed(bind_any));
    CHECK_FALSE(limited.allowed(docker));
    CHECK_FALSE(limited.allowed(bind_unix));
    CHECK_FALSE(limited.allowed(resolver));

    const Evaluator full = eval(Network::Full);
    for (const Query& q : {connect_out, connect_lo, bind_any, docker, resolver}) CHECK(full.allowed(q));
    CHECK(full.allowed(named("sysctl-read", "net.link.generic.system.ifcount")));
    CHECK_FALSE(restricted.allowed(named("sysctl-read", "net.link.generic.system.ifcount")));

    // What every level shares: user lookups, sysctls, and nothing unlisted.
    for (const Evaluator* e : {&restricted, &limited, &full}) {
        CHECK(e->allowed(named("mach-lookup", "com.apple.system.opendirectoryd.libinfo")));
        CHECK(e->allowed(named("sysctl-read", "hw.ncpu")));
        CHECK(e->allowed(named("sysctl-read", "hw.optional.arm.FEAT_LSE")));
        CHECK_FALSE(e->allowed(named("sysctl-write", "kern.hostname")));
        CHECK_FALSE(e->allowed(named("mach-lookup", "com.apple.windowserver.active")));
        CHECK_FALSE(e->allowed(op_only("mach-priv-host-port")));
        CHECK(e->allowed(op_only("ipc-posix-sem")));
        CHECK(e->allowed(op_only("process-fork")));
        // without an inherited terminal (none given): /dev/tty, the controlling
        // terminal, takes termios ioctls but no TIOCSTI; no /dev/ttysN is
        // reachable (a pty opened in the sandbox has its own rule, with the
        // extension, not modelled here)
        CHECK_FALSE(e->allowed(on_file("file-write-data", "/dev/ttys003", "CHARACTER-DEVICE")));
        CHECK(e->allowed(on_file("file-write-data", "/dev/tty", "CHARACTER-DEVICE")));
        CHECK_FALSE(e->allowed(on_file("file-ioctl", "/dev/ttys003", "CHARACTER-DEVICE")));
        CHECK(e->allowed(ioctl_on("/dev/tty", "TIOCGETA")));
        CHECK_FALSE(e->allowed(ioctl_on("/dev/tty", "TIOCSTI")));
        CHECK(e->allowed(on_file("file-ioctl", "/dev/ptmx", "CHARACTER-DEVICE")));
        CHECK_FALSE(e->allowed(on_file("file-write-unlink", "/dev/ttys003", "CHARACTER-DEVICE")));
    }
}

TEST_CASE("seatbelt: string literals are escaped and read back unchanged") {
    CHECK(sbpl_quote("/Users/dev/project") == "\"/Users/dev/project\"");
    CHECK(sbpl_quote("/a b/c") == "\"/a b/c\"");
    CHECK(sbpl_quote("/we\"ird") == "\"/we\\\"ird\"");
    CHECK(sbpl_quote("C:\\dir") == "\"C:\\\\dir\"");
    CHECK(sbpl_quote("/caf\xC3\xA9") == "\"/caf\\xC3\\xA9\"");
    CHECK(sbpl_quote("/a\nb\tc\x7f") == "\"/a\\x0Ab\\x09c\\x7F\"");
    CHECK(sbpl_quote("") == "\"\"");

    std::string every_byte;
    for (int b = 1; b < 256; ++b) every_byte += static_cast<char>(b);
    const std::vector<std::string> nasty{"/Users/dev/my project",
                                         "/Users/dev/\"quoted\"",
                                         "/Users/dev/back\\slash\\",
                                         "/Users/dev/\xE6\x97\xA5\xE6\x9C\xAC",
                                         "/x\") (allow default) (\"",
                                         "/x\n(allow default)\n",
                                         "/\xF0\x9F\x93\x81 folder/\xC3\xBC\\\"",
                                         every_byte};
    for (const std::string& s : nasty) {
        const std::string quoted = sbpl_quote(s);
        CAPTURE(quoted);
        CHECK(decode_string_literal(quoted) == s);
        // only printable ASCII in the quoted form, so nothing can end a comment line
        CHECK(std::all_of(quoted.begin(), quoted.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
    }
}

TEST_CASE("seatbelt: hostile paths reach the profile only as parameters or escaped comments") {
    const std::string hostile = "/Users/dev/we\"ird (allow default)\n(allow file-write* (subpath \"/\"))\\ \xC3\xA9";
    CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    p.writable = {root_with_protected(hostile), {"/dev/null", {}}};
    const std::string profile = seatbelt_profile(p);
    const std::vector<std::string> params = seatbelt_parameters(p);
    CHECK(params.front() == "-DWRITE_0=" + hostile);
    const Evaluator e(profile, params);
    CHECK(e.write(hostile + "/file"));
    CHECK_FALSE(e.write(hostile + "/.git/config"));
    CHECK_FALSE(e.write("/etc/hosts"));
    CHECK_FALSE(e.allowed(to_remote("network-outbound", "10.0.0.1")));
    // The same profile as for a plain path, but for the escaped comment line.
    CanonicalPolicy plain = p;
    plain.writable = {root_with_protected("/plain"), {"/dev/null", {}}};
    std::string a = profile, b = seatbelt_profile(plain);
    const auto strip_comments = [](const std::string& text) {
        std::string out;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);)
            if (!line.starts_with(";")) out += line + "\n";
        return out;
    };
    CHECK(strip_comments(a) == strip_comments(b));
}

TEST_CASE("seatbelt: the checker rejects what sandbox-exec would reject") {
    const std::string head = "(version 1)\n(deny default)\n";
    CHECK_NOTHROW(check_profile(head + "(allow file-read*)\n", {}));
    CHECK_THROWS_AS(check_profile(head + "(allow file-read*\n", {}), SbplError);                      // unbalanced
    CHECK_THROWS_AS(check_profile(head + "(allow file-read*))\n", {}), SbplError);                    // unbalanced
    CHECK_THROWS_AS(check_profile(head + "(allow mach-lookup (global-name \"x))\n", {}), SbplError);  // open string
    CHECK_THROWS_AS(check_profile(head + "(allow file-reed*)\n", {}), SbplError);                 // unknown operation
    CHECK_THROWS_AS(check_profile(head + "(allow file-read* (subdir \"/\"))\n", {}), SbplError);  // unknown filter
    CHECK_THROWS_AS(check_profile(head + "(allow file-write* (subpath (param \"X\")))\n", {}), SbplError);
    CHECK_NOTHROW(check_profile(head + "(allow file-write* (subpath (param \"X\")))\n", {"-DX=/x"}));
    CHECK_THROWS_AS(check_profile(head + "(allow file-read*)\n", {"-DX=/x"}), SbplError);  // unused parameter
    CHECK_THROWS_AS(check_profile("(version 1)\n(allow file-read*)\n", {}), SbplError);    // not closed by default
    CHECK_THROWS_AS(check_profile(head + "(allow network* (remote ip \"example.com:*\"))\n", {}), SbplError);
    CHECK_THROWS_AS(check_profile(head + "(allow file-read* (regex #\"^/dev/[\"))\n", {}), std::exception);
    CHECK_THROWS_AS(check_profile(head + "(allow)\n", {}), SbplError);
}

TEST_CASE("seatbelt: a policy resolved on a Mac-shaped filesystem") {
    // /tmp and /var are symlinks into /private, as on macOS; $TMPDIR is the
    // per-user directory under /var/folders.  The workspace has a .git file
    // pointing at a worktree directory of another repository.
    sbx::test::FakeFs fs;
    fs.dir("/private/tmp")
        .dir("/private/var/folders/zz/abc/T")
        .dir("/private/etc")
        .dir("/dev")
        .dir("/Users/dev/project/src")
        .dir("/Users/dev/main/.git/worktrees/project");
    fs.file("/dev/null").file("/Users/dev/project/.git", "gitdir: /Users/dev/main/.git/worktrees/project\n");
    fs.link("/tmp", "private/tmp").link("/var", "private/var").link("/etc", "private/etc");
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.network = Network::Limited;
    in.writable_roots = {{"/Users/dev/main", "--writable-root"}};
    const CanonicalPolicy p = resolve(in, fs.env("/Users/dev/project", "/var/folders/zz/abc/T/"));
    const std::string profile = seatbelt_profile(p);
    const std::vector<std::string> params = seatbelt_parameters(p);
    const Evaluator e(profile, params);
    CAPTURE(params);
    CHECK(std::find(params.begin(), params.end(), "-DWRITE_3=/Users/dev/project") != params.end());
    CHECK(e.write("/Users/dev/project/src/a.c"));
    CHECK_FALSE(e.write("/Users/dev/project/.git"));
    CHECK_FALSE(e.write("/Users/dev/project/.sbx/x"));
    CHECK(e.write("/Users/dev/main/README"));
    CHECK_FALSE(e.write("/Users/dev/main/.git/config"));
    CHECK_FALSE(e.write("/Users/dev/main/.git/worktrees/project/HEAD"));
    for (const char* path : {"/private/tmp/x", "/tmp/x", "/private/var/folders/zz/abc/T/x", "/var/folders/zz/abc/T/x"})
        CHECK(e.write(path));
    CHECK_FALSE(e.write("/private/tmp/.git/hooks/x"));
    CHECK_FALSE(e.write("/private/var/folders/zz/other"));
    CHECK_FALSE(e.write("/private/etc/hosts"));
    CHECK(e.allowed(on_file("file-write-data", "/dev/null", "CHARACTER-DEVICE")));
    CHECK(e.allowed(to_remote("network-outbound", "127.0.0.1")));
    CHECK_FALSE(e.allowed(to_remote("network-outbound", "192.168.1.1")));
}

TEST_CASE("seatbelt: the protected names above a workspace nested in /tmp (issue 29)") {
    // The workspace two levels down in /private/tmp: /private/tmp/a and
    // /private/tmp/a/b hold the protected names, as the tops do, whether
    // they exist or not; the rest of those directories stays writable.
    sbx::test::FakeFs fs;
    fs.dir("/private/tmp/a/b/ws").dir("/private/tmp/a/.git/hooks").dir("/dev").dir("/Users/dev/elsewhere");
    fs.file("/dev/null");
    fs.link("/tmp", "private/tmp");
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    const Environment env = fs.env("/private/tmp/a/b/ws");
    const CanonicalPolicy p = resolve(in, env);
    const Evaluator e(seatbelt_profile(p), seatbelt_parameters(p));
    CHECK(e.write("/private/tmp/a/b/ws/src.c"));
    CHECK(e.write("/private/tmp/a/notes"));
    CHECK(e.write("/private/tmp/a/b/.gitignore"));
    for (const char* path :
         {"/private/tmp/a/b/.git", "/private/tmp/a/b/.git/config", "/private/tmp/a/.git/config",
          "/private/tmp/a/.git/hooks/post-checkout", "/private/tmp/a/.sbx", "/private/tmp/a/b/.codex",
          "/private/tmp/a/b/.agents/x", "/private/tmp/a/.aws", "/private/tmp/a/b/ws/.git"}) {
        CAPTURE(path);
        CHECK_FALSE(e.write(path));
    }
    CHECK_NOTHROW(check_seatbelt_roots(p, env));
    // A protected name that is a symlink there is refused, as at the top.
    fs.link("/private/tmp/a/.codex", "/Users/dev/elsewhere");
    CHECK_THROWS_WITH(check_seatbelt_roots(resolve(in, env), env),
                      Catch::StartsWith("/private/tmp/a/.codex is a symlink (to /Users/dev/elsewhere) in "
                                        "/private/tmp/a, on the way from the writable root /private/tmp down to "
                                        "/private/tmp/a/b/ws;") &&
                          Catch::Contains("--unprotect .codex"));
}

TEST_CASE("seatbelt: no rename moves a protected path out of its rule") {
    // A workspace deep inside another writable root: renaming any directory on
    // the way from the outer root to the workspace's .git would move it.
    CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    p.writable = {root_with_protected("/Users/dev/a/b/project"), {"/Users/dev", {}}, {"/dev/null", {}}};
    const std::vector<std::string> params = seatbelt_parameters(p);
    // The inner root is inside the outer one: its rule would add nothing.
    CHECK(params == dash_d({
                        {"WRITE_0", "/Users/dev"},
                        {"READ_0", "/Users/dev/a/b/project/.agents"},
                        {"READ_1", "/Users/dev/a/b/project/.codex"},
                        {"READ_2", "/Users/dev/a/b/project/.git"},
                        {"READ_3", "/Users/dev/a/b/project/.sbx"},
                        {"FIXED_0", "/Users/dev"},
                        {"FIXED_1", "/Users/dev/a"},
                        {"FIXED_2", "/Users/dev/a/b"},
                        {"FIXED_3", "/Users/dev/a/b/project"},
                    }));
    const Evaluator e(seatbelt_profile(p), params);
    for (const char* dir : {"/Users/dev/a", "/Users/dev/a/b", "/Users/dev/a/b/project"}) {
        CAPTURE(dir);
        CHECK_FALSE(e.allowed(on_file("file-write-unlink", dir, "DIRECTORY")));
        CHECK(e.allowed(on_file("file-write-mode", dir, "DIRECTORY")));  // chmod, touch: not a rename
    }
    CHECK_FALSE(e.write("/Users/dev/a/b/project/.git/hooks/x"));
    CHECK(e.write("/Users/dev/a/notes"));
    CHECK(e.write("/Users/dev/a/b/project/src/x.c"));
    CHECK(e.allowed(on_file("file-write-unlink", "/Users/dev/other", "DIRECTORY")));
    // nor the outer root itself, whose rename would carry the workspace along
    CHECK_FALSE(e.allowed(on_file("file-write-unlink", "/Users/dev", "DIRECTORY")));
}

// ---------------------------------------------------------------------------
// Entries: deny, read-only carve-outs, writable holes, the minimal base, deny
// globs (issue 14).

namespace {

FsEntry fs_entry(FsTarget::Kind kind, std::string value, FsAccess access) {
    return FsEntry{{kind, std::move(value)}, access, "test"};
}

// The shapes of issue 14 as resolve() gives them on a Mac (fixed paths): the
// entries, and the derived sets the profile is built from.
CanonicalPolicy shape(const std::string& name) {
    using K = FsTarget::Kind;
    if (name == "hide-ssh") {  // sbx run --deny ~/.ssh (read-only)
        CanonicalPolicy p = mac_policy(Mode::ReadOnly, Network::Restricted);
        p.entries.push_back(fs_entry(K::Path, "/Users/dev/.ssh", FsAccess::Deny));
        p.denied = {"/Users/dev/.ssh"};
        return p;
    }
    if (name == "workspace-read-only-docs") {  // -p workspace-write --read docs
        CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
        p.entries.push_back(fs_entry(K::Path, "/Users/dev/project/docs", FsAccess::Read));
        p.readable.push_back("/Users/dev/project/docs");
        p.writable[0].protected_paths.push_back("/Users/dev/project/docs");
        return p;
    }
    if (name == "denied-dir-writable-hole") {  // D deny, D/open write
        CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
        p.entries.push_back(fs_entry(K::Path, "/Users/dev/secret", FsAccess::Deny));
        p.entries.push_back(fs_entry(K::Path, "/Users/dev/secret/open", FsAccess::Write));
        p.writable = {root_with_protected("/Users/dev/secret/open"), {"/dev/null", {}}};
        p.denied = {"/Users/dev/secret"};
        return p;
    }
    if (name == "minimal-workspace") {  // -p workspace-write --minimal --exclude-tmpdir-env-var
        CanonicalPolicy p;
        p.mode = Mode::WorkspaceWrite;
        p.workspace = "/Users/dev/project";
        p.protected_names = kNames;
        p.entries = {fs_entry(K::Minimal, "", FsAccess::Read), fs_entry(K::ProjectRoots, "", FsAccess::Write),
                     fs_entry(K::SlashTmp, "", FsAccess::Write)};
        p.readable = {"/bin", "/sbin", "/usr", "/private/etc", "/dev"};
        p.writable = {
            root_with_protected("/Users/dev/project"), root_with_protected("/private/tmp"), {"/dev/null", {}}};
        p.resolved = {
            ResolvedEntry{.path = "/private/etc",
                          .given = "/etc",
                          .access = FsAccess::Read,
                          .exists = true,
                          .directory = true,
                          .rule = "entry :minimal"},
            ResolvedEntry{.path = "/private/tmp",
                          .given = "/tmp",
                          .access = FsAccess::Write,
                          .exists = true,
                          .directory = true,
                          .rule = "entry :slash_tmp"},
        };
        return p;
    }
    if (name == "deny-glob") {  // -p workspace-write --deny-glob '**/*.env'
        CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
        p.entries.push_back(fs_entry(K::Glob, "/Users/dev/project/**/*.env", FsAccess::Deny));
        p.denied = {"/Users/dev/project/.env", "/Users/dev/project/config/prod.env"};
        return p;
    }
    throw std::logic_error("no shape " + name);
}

const std::vector<std::string> kShapes{"hide-ssh", "workspace-read-only-docs", "denied-dir-writable-hole",
                                       "minimal-workspace", "deny-glob"};

Evaluator eval(const CanonicalPolicy& p) { return Evaluator(seatbelt_profile(p), seatbelt_parameters(p)); }

// A policy that reads "/" with these entries (the derived sets as given).
CanonicalPolicy with_entries(std::vector<std::string> readable, std::vector<WritableRoot> writable,
                             std::vector<std::string> denied) {
    CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    readable.insert(readable.begin(), "/");
    p.readable = std::move(readable);
    p.writable = std::move(writable);
    p.denied = std::move(denied);
    return p;
}

std::string param_value(const CanonicalPolicy& p, const std::string& name) {
    for (const std::string& d : seatbelt_parameters(p))
        if (d.starts_with("-D" + name + "=")) return d.substr(name.size() + 3);
    return {};
}

}  // namespace

// Regenerate with SBX_UPDATE_GOLDEN=1 as above.
TEST_CASE("seatbelt: golden profile for every entry shape") {
    const bool update = std::getenv("SBX_UPDATE_GOLDEN") != nullptr;
    for (const std::string& name : kShapes) {
        const std::string file = std::string(SBX_GOLDEN_DIR) + "/seatbelt-" + name + ".sbpl";
        CAPTURE(name);
        const CanonicalPolicy policy = shape(name);
        const std::string profile = seatbelt_profile(policy);
        if (update) std::ofstream(file, std::ios::binary) << profile;
        const std::string golden = read_text(file);
        REQUIRE_FALSE(golden.empty());
        CHECK(profile == golden);
        CHECK_NOTHROW(check_profile(profile, seatbelt_parameters(policy)));
        CHECK(seatbelt_profile(shape(name)) == profile);
    }
}

TEST_CASE("seatbelt: a denied directory under the readable root (hide ~/.ssh)") {
    const Evaluator e = eval(shape("hide-ssh"));
    CHECK_FALSE(e.read("/Users/dev/.ssh/id_ed25519"));
    CHECK_FALSE(e.list("/Users/dev/.ssh"));
    CHECK_FALSE(e.stat("/Users/dev/.ssh/id_ed25519"));
    CHECK_FALSE(e.allowed(on_file("file-map-executable", "/Users/dev/.ssh/x.dylib")));
    CHECK_FALSE(e.allowed(on_file("file-test-existence", "/Users/dev/.ssh/config")));
    CHECK_FALSE(e.write("/Users/dev/.ssh/authorized_keys"));
    CHECK_FALSE(e.rename_dir("/Users/dev/.ssh"));
    // a name that merely starts the same is another path
    CHECK(e.read("/Users/dev/.sshrc"));
    CHECK(e.read("/Users/dev/.bashrc"));
    CHECK(e.list("/Users/dev"));
    CHECK_FALSE(e.write("/Users/dev/.bashrc"));
    CHECK(e.allowed(on_file("file-write-data", "/dev/null", "CHARACTER-DEVICE")));
}

TEST_CASE("seatbelt: a read-only carve-out inside the workspace") {
    const Evaluator e = eval(shape("workspace-read-only-docs"));
    CHECK(e.write("/Users/dev/project/src/main.c"));
    CHECK(e.read("/Users/dev/project/docs/index.md"));
    CHECK(e.list("/Users/dev/project/docs"));
    CHECK_FALSE(e.write("/Users/dev/project/docs/index.md"));
    CHECK_FALSE(e.write("/Users/dev/project/docs/new.md"));
    CHECK_FALSE(e.write("/Users/dev/project/docs"));  // nor re-created after a removal
    CHECK_FALSE(e.rename_dir("/Users/dev/project/docs"));
    CHECK_FALSE(e.rename_dir("/Users/dev/project"));  // which would carry docs/ away
    CHECK(e.write("/Users/dev/project/docs2/x"));
    CHECK_FALSE(e.write("/Users/dev/project/.git/config"));
}

TEST_CASE("seatbelt: a writable hole in a denied directory") {
    const Evaluator e = eval(shape("denied-dir-writable-hole"));
    const std::string d = "/Users/dev/secret";
    CHECK_FALSE(e.read(d + "/secret.txt"));
    CHECK_FALSE(e.list(d));
    CHECK_FALSE(e.write(d + "/new"));
    CHECK_FALSE(e.rename_dir(d));
    // traverse-only, as the Linux view's mode 0111 directory: its metadata
    // (stat, realpath's getattrlist), never its listing; nothing else in it
    CHECK(e.stat(d));
    CHECK_FALSE(e.stat(d + "/secret.txt"));
    // the hole: fully usable, but for its protected names
    CHECK(e.read(d + "/open/notes.txt"));
    CHECK(e.list(d + "/open"));
    CHECK(e.write(d + "/open/notes.txt"));
    CHECK(e.allowed(on_file("file-map-executable", d + "/open/lib.dylib")));
    CHECK_FALSE(e.write(d + "/open/.git/HEAD"));
    CHECK(e.read(d + "/open/.git/HEAD"));
    CHECK_FALSE(e.rename_dir(d + "/open"));
    CHECK(e.read("/Users/dev/other"));
}

TEST_CASE("seatbelt: the minimal base") {
    const CanonicalPolicy p = shape("minimal-workspace");
    const std::string profile = seatbelt_profile(p);
    const std::string runtime = read_text(std::string(SBX_SOURCE_ROOT) + "/macos/restricted_read.sbpl");
    REQUIRE_FALSE(runtime.empty());
    CHECK(profile.find(runtime) != std::string::npos);
    CHECK(profile.find("(allow file-read* file-map-executable)\n") == std::string::npos);
    // every preset profile reads "/" and has no runtime file
    CHECK(seatbelt_profile(mac_policy(Mode::WorkspaceWrite, Network::Restricted)).find(runtime) == std::string::npos);

    const Evaluator e = eval(p);
    // what any process needs: the loader, the system libraries and frameworks
    CHECK(e.read("/usr/lib/dyld"));
    CHECK(e.allowed(on_file("file-map-executable", "/usr/lib/libobjc.A.dylib")));
    CHECK(e.allowed(
        on_file("file-map-executable", "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation")));
    CHECK(e.read("/System/Volumes/Preboot/Cryptexes/OS/System/Library/dyld/dyld_shared_cache_arm64e"));
    CHECK(e.read("/private/var/db/dyld/dyld_shared_cache_x86_64h"));
    CHECK(e.read("/private/var/db/timezone/zoneinfo/Europe/Paris"));
    CHECK(e.read("/dev/urandom"));
    CHECK(e.allowed(on_file("file-read-data", "/", "DIRECTORY")));
    // the :minimal entries (their /private form, and the symlink that led there)
    CHECK(e.read("/bin/sh"));
    CHECK(e.read("/usr/bin/make"));
    CHECK(e.read("/private/etc/zshenv"));
    CHECK(e.stat("/etc"));
    // the workspace and /tmp
    CHECK(e.write("/Users/dev/project/a.c"));
    CHECK(e.read("/Users/dev/project/a.c"));
    CHECK(e.write("/private/tmp/x"));
    CHECK(e.write("/tmp/x"));
    CHECK_FALSE(e.write("/Users/dev/project/.git/config"));
    CHECK(e.read("/Users/dev/project/.git/config"));
    // the directories on the way: metadata, no listing
    CHECK(e.stat("/Users"));
    CHECK(e.stat("/Users/dev"));
    CHECK_FALSE(e.list("/Users"));
    CHECK_FALSE(e.list("/Users/dev"));
    // nothing else: home, other users, the data volume behind /System, caches
    CHECK_FALSE(e.read("/Users/dev/.ssh/id_ed25519"));
    CHECK_FALSE(e.stat("/Users/dev/.ssh"));
    CHECK_FALSE(e.read("/Users/other/notes"));
    CHECK_FALSE(e.read("/System/Volumes/Data/Users/dev/.ssh/id_ed25519"));
    CHECK_FALSE(e.read("/Library/Keychains/System.keychain"));
    CHECK_FALSE(e.read("/private/var/folders/zz/abc/T/x"));
    CHECK_FALSE(e.read("/Applications/Mail.app/Contents/Info.plist"));
    CHECK_FALSE(e.read("/opt/homebrew/bin/python3"));

    SECTION("without :minimal, no platform commands") {
        CanonicalPolicy bare = p;
        bare.readable = {"/dev"};
        bare.resolved.clear();
        const Evaluator b = eval(bare);
        CHECK_FALSE(b.read("/bin/sh"));
        CHECK_FALSE(b.read("/private/etc/passwd"));
        CHECK(b.read("/usr/lib/dyld"));
        CHECK(b.write("/Users/dev/project/a.c"));
    }
}

TEST_CASE("seatbelt: deny globs also deny what is created later") {
    const CanonicalPolicy p = shape("deny-glob");
    CHECK(param_value(p, "DENY_GLOB_0") == R"(^/Users/dev/project/(.*/)?[^/]*\.env(/.*)?$)");
    const Evaluator e = eval(p);
    CHECK_FALSE(e.read("/Users/dev/project/.env"));
    CHECK_FALSE(e.read("/Users/dev/project/config/prod.env"));
    CHECK_FALSE(e.read("/Users/dev/project/a/b/c/later.env"));  // not there at start
    CHECK_FALSE(e.write("/Users/dev/project/new.env"));
    CHECK_FALSE(e.allowed(on_file("file-write-unlink", "/Users/dev/project/.env")));
    CHECK(e.read("/Users/dev/project/env"));
    CHECK(e.read("/Users/dev/project/x.envrc"));
    CHECK(e.write("/Users/dev/project/src/main.c"));
    CHECK(e.read("/Users/dev/other/.env"));
    // the directory of a match that existed at start keeps its name
    CHECK_FALSE(e.rename_dir("/Users/dev/project/config"));
}

TEST_CASE("seatbelt: glob patterns as regexes") {
    struct Case {
        std::string pattern, path;
        bool denied;
    };
    const std::vector<Case> cases{
        {"/w/*.key", "/w/a.key", true},
        {"/w/*.key", "/w/.key", true},
        {"/w/*.key", "/w/sub/a.key", false},
        {"/w/*.key", "/w/a.keys", false},
        {"/w/*.key", "/w/a.key/inside", true},  // a matched directory, all below it
        {"/w/a?c", "/w/abc", true},
        {"/w/a?c", "/w/a/c", false},
        {"/w/a?c", "/w/ac", false},
        {"/w/**", "/w/x/y/z", true},
        {"/w/**", "/wx", false},
        {"/w/**/s", "/w/s", true},
        {"/w/**/s", "/w/a/b/s", true},
        {"/w/**/s", "/w/as", false},
        {"/w/a**b", "/w/axxb", true},
        {"/w/a**b", "/w/a/b", false},
        {"/w/[ab]c", "/w/bc", true},
        {"/w/[ab]c", "/w/cc", false},
        {"/w/[a-c]x", "/w/bx", true},
        {"/w/[a-c]x", "/w/dx", false},
        {"/w/[!a]x", "/w/bx", true},
        {"/w/[!a]x", "/w/ax", false},
        {"/w/[!a]x", "/w//x", false},
        {"/w/[]\\^-]x", "/w/\\x", true},
        {"/w/[]\\^-]x", "/w/]x", true},
        {"/w/[]\\^-]x", "/w/^x", true},
        {"/w/[]\\^-]x", "/w/-x", true},
        {"/w/[]\\^-]x", "/w/ax", false},
        {"/w/[x", "/w/[x", true},  // not closed: a literal '['
        {"/w/a.b", "/w/a.b", true},
        {"/w/a.b", "/w/axb", false},
        {"/w/(a)+{1}$|^.b", "/w/(a)+{1}$|^.b", true},
        {"/w/(a)+{1}$|^.b", "/w/aa1b", false},
        {"/w/\\*", "/w/*", true},
        {"/w/\\*", "/w/x", false},
        {"/w/caf\xC3\xA9/*", "/w/caf\xC3\xA9/menu", true},
    };
    for (const Case& c : cases) {
        CAPTURE(c.pattern, c.path);
        CanonicalPolicy p = mac_policy(Mode::ReadOnly, Network::Restricted);
        p.entries.push_back(fs_entry(FsTarget::Kind::Glob, c.pattern, FsAccess::Deny));
        const Evaluator e = eval(p);
        CHECK(e.read(c.path) == !c.denied);
    }
    SECTION("a relative pattern is below the workspace; /tmp patterns get their /private alias") {
        CanonicalPolicy p = mac_policy(Mode::ReadOnly, Network::Restricted);
        p.entries.push_back(fs_entry(FsTarget::Kind::Glob, "secrets/*", FsAccess::Deny));
        p.entries.push_back(fs_entry(FsTarget::Kind::Glob, "/tmp/*.pem", FsAccess::Deny));
        p.entries.push_back(fs_entry(FsTarget::Kind::Glob, "/w/*.key", FsAccess::Read));  // no effect
        const Evaluator e = eval(p);
        CHECK_FALSE(e.read("/Users/dev/project/secrets/a"));
        CHECK_FALSE(e.read("/tmp/k.pem"));
        CHECK_FALSE(e.read("/private/tmp/k.pem"));
        CHECK(e.read("/w/a.key"));
        CHECK(seatbelt_parameters(p).size() == 3);
    }
    SECTION("what cannot be said the same way in both regex dialects is refused") {
        for (const char* pattern : {"/w/[!]]x", "/w/[!\\\\]x", "/w/[!-]x", "/w/[+-/]x", "/w/[\xC3\xA9]"}) {
            CAPTURE(pattern);
            CanonicalPolicy p = mac_policy(Mode::ReadOnly, Network::Restricted);
            p.entries.push_back(fs_entry(FsTarget::Kind::Glob, pattern, FsAccess::Deny));
            CHECK_THROWS_WITH(seatbelt_profile(p), Catch::StartsWith("seatbelt: deny glob"));
        }
        CanonicalPolicy p = mac_policy(Mode::ReadOnly, Network::Restricted);
        p.entries.push_back(fs_entry(FsTarget::Kind::Glob, "/w/[/]", FsAccess::Deny));  // matches nothing
        CHECK(seatbelt_parameters(p).empty());
    }
    SECTION("a hostile pattern reaches the profile only as a parameter") {
        const std::string hostile = "/w/\") (allow default)\n(allow file-write* (subpath \"/\"))*";
        CanonicalPolicy p = mac_policy(Mode::ReadOnly, Network::Restricted);
        p.entries.push_back(fs_entry(FsTarget::Kind::Glob, hostile, FsAccess::Deny));
        const Evaluator e = eval(p);
        CHECK_FALSE(e.write("/etc/hosts"));
        CHECK(e.read("/w/x"));
        CHECK_FALSE(e.read("/w/\") (allow default)\n(allow file-write* (subpath \"/\"))zz"));
    }
}

TEST_CASE("seatbelt: the most specific entry wins, whatever the order of the entries") {
    // CODEX-HELPER.md section 4.3, the nesting table, each under "/" read.
    SECTION("D write, D/sub deny") {
        const Evaluator e = eval(with_entries({}, {{"/d", {}}}, {"/d/sub"}));
        CHECK(e.write("/d/x"));
        CHECK_FALSE(e.read("/d/sub/x"));
        CHECK_FALSE(e.list("/d/sub"));
        CHECK_FALSE(e.write("/d/sub/x"));
        CHECK_FALSE(e.rename_dir("/d/sub"));
        CHECK_FALSE(e.rename_dir("/d"));
    }
    SECTION("D write, D/sub read") {
        const Evaluator e = eval(with_entries({"/d/sub"}, {{"/d", {"/d/sub"}}}, {}));
        CHECK(e.write("/d/x"));
        CHECK(e.read("/d/sub/x"));
        CHECK_FALSE(e.write("/d/sub/x"));
    }
    SECTION("D deny, D/open write, D/open/x deny, D/open/x/y write: alternating depth") {
        const Evaluator e = eval(with_entries({}, {{"/d/open", {}}, {"/d/open/x/y", {}}}, {"/d", "/d/open/x"}));
        CHECK_FALSE(e.read("/d/f"));
        CHECK(e.write("/d/open/f"));
        CHECK_FALSE(e.read("/d/open/x/f"));
        CHECK_FALSE(e.list("/d/open/x"));
        CHECK(e.stat("/d/open/x"));
        CHECK(e.write("/d/open/x/y/f"));
        CHECK(e.read("/d/open/x/y/f"));
        CHECK_FALSE(e.rename_dir("/d/open"));
    }
    SECTION("write and deny on the same path: deny") {
        const Evaluator e = eval(with_entries({}, {{"/d", {}}}, {"/d"}));
        CHECK_FALSE(e.read("/d/x"));
        CHECK_FALSE(e.write("/d/x"));
    }
    SECTION("read and write on the same path: write") {
        const Evaluator e = eval(with_entries({"/d"}, {{"/d", {}}}, {}));
        CHECK(e.write("/d/x"));
    }
    SECTION("a denied file, its siblings untouched") {
        const Evaluator e = eval(with_entries({}, {{"/d", {}}}, {"/d/.env"}));
        CHECK_FALSE(e.read("/d/.env"));
        CHECK_FALSE(e.write("/d/.env"));
        CHECK(e.write("/d/.envrc"));
        CHECK(e.read("/d/a"));
    }
    SECTION("nested writable roots keep their own protected names") {
        const Evaluator e = eval(with_entries({}, {root_with_protected("/w"), root_with_protected("/w/sub")}, {}));
        CHECK(e.write("/w/sub/x"));
        CHECK_FALSE(e.write("/w/.git/x"));
        CHECK_FALSE(e.write("/w/sub/.git/x"));
    }
    SECTION("the order of the entries does not change the profile") {
        std::vector<std::string> readable{"/w/docs", "/a/b"};
        std::vector<WritableRoot> writable{root_with_protected("/w"), {"/a/b/c", {}}, {"/d/open", {}}};
        std::vector<std::string> denied{"/d", "/a", "/w/docs/private", "/w/.env"};
        const std::string profile = seatbelt_profile(with_entries(readable, writable, denied));
        std::reverse(readable.begin(), readable.end());
        std::reverse(writable.begin(), writable.end());
        std::rotate(denied.begin(), denied.begin() + 1, denied.end());
        CHECK(seatbelt_profile(with_entries(readable, writable, denied)) == profile);
        const Evaluator e = eval(with_entries(readable, writable, denied));
        CHECK_FALSE(e.read("/a/x"));
        CHECK(e.read("/a/b/x"));
        CHECK_FALSE(e.write("/a/b/x"));
        CHECK(e.write("/a/b/c/x"));
        CHECK_FALSE(e.read("/w/docs/private/x"));
        CHECK_FALSE(e.write("/w/docs/x"));
        CHECK(e.read("/w/docs/x"));
        CHECK_FALSE(e.read("/w/.env"));
        CHECK(e.write("/d/open/x"));
    }
}

TEST_CASE("seatbelt: resolved policies, the profile agrees with decide_path on every probe") {
    // A Mac-shaped filesystem (/tmp, /var, /etc into /private) with a
    // workspace, secrets and a denied directory with a hole.
    sbx::test::FakeFs fs;
    fs.dir("/private/tmp")
        .dir("/private/var/folders/zz/abc/T")
        .dir("/private/etc")
        .dir("/dev")
        .dir("/usr/bin")
        .dir("/bin")
        .dir("/sbin")
        .dir("/Users/dev/project/src")
        .dir("/Users/dev/project/docs")
        .dir("/Users/dev/project/config")
        .dir("/Users/dev/.ssh")
        .dir("/Users/dev/secret/open/sub")
        .dir("/Users/other/pub");
    for (const char* f :
         {"/dev/null", "/Users/dev/.ssh/id_ed25519", "/Users/dev/project/.env", "/Users/dev/project/config/prod.env",
          "/Users/dev/project/src/a.c", "/Users/dev/project/docs/index.md", "/Users/dev/secret/s.txt",
          "/Users/dev/secret/open/n.txt", "/Users/dev/secret/open/sub/r.txt", "/Users/other/notes",
          "/Users/other/pub/readme", "/Users/dev/.bashrc", "/private/etc/hosts", "/usr/bin/make", "/bin/sh"})
        fs.file(f);
    fs.link("/tmp", "private/tmp").link("/var", "private/var").link("/etc", "private/etc");
    const Environment env = fs.env("/Users/dev/project", "/var/folders/zz/abc/T");
    using K = FsTarget::Kind;

    std::vector<std::pair<std::string, PolicyInput>> inputs;
    {
        PolicyInput in;  // workspace-write with every flag
        in.mode = Mode::WorkspaceWrite;
        in.writable_roots = {{"/Users/dev/secret/open", "--writable-root"}};
        in.extra_entries = {fs_entry(K::Path, "/Users/dev/.ssh", FsAccess::Deny),
                            fs_entry(K::Path, "/Users/dev/project/docs", FsAccess::Read),
                            fs_entry(K::Path, "/Users/dev/secret", FsAccess::Deny),
                            fs_entry(K::Glob, "/Users/dev/project/**/*.env", FsAccess::Deny)};
        inputs.emplace_back("workspace-write with --deny, --read, a hole and --deny-glob", in);
    }
    {
        PolicyInput in;  // read-only --minimal
        in.mode = Mode::ReadOnly;
        in.read_base = ReadBase::Minimal;
        inputs.emplace_back("read-only --minimal", in);
    }
    {
        PolicyInput in;  // workspace-write --minimal
        in.mode = Mode::WorkspaceWrite;
        in.read_base = ReadBase::Minimal;
        in.extra_entries = {fs_entry(K::Path, "/Users/dev/project/docs", FsAccess::Read)};
        inputs.emplace_back("workspace-write --minimal", in);
    }
    {
        PolicyInput in;  // a permission profile's list
        in.entries = std::vector<FsEntry>{
            fs_entry(K::Root, "", FsAccess::Read),
            fs_entry(K::ProjectRoots, "", FsAccess::Write),
            fs_entry(K::Path, "/Users/dev/secret", FsAccess::Deny),
            fs_entry(K::Path, "/Users/dev/secret/open", FsAccess::Write),
            fs_entry(K::Path, "/Users/dev/secret/open/sub", FsAccess::Read),
            fs_entry(K::Path, "/Users/other", FsAccess::Deny),
            fs_entry(K::Path, "/Users/other/pub", FsAccess::Read),  // not reopened
            fs_entry(K::Path, "/Users/dev/project/src", FsAccess::Deny),
            fs_entry(K::Path, "/Users/dev/project/src", FsAccess::Write),  // deny wins
        };
        in.entries_source = "profile";
        inputs.emplace_back("a permission profile", in);
    }
    const std::vector<std::string> probes{"/Users/dev/.ssh/id_ed25519",
                                          "/Users/dev/.bashrc",
                                          "/Users/dev/project/.env",
                                          "/Users/dev/project/config/prod.env",
                                          "/Users/dev/project/src/a.c",
                                          "/Users/dev/project/new.c",
                                          "/Users/dev/project/docs/index.md",
                                          "/Users/dev/project/.git/config",
                                          "/Users/dev/project/.sbx/x",
                                          "/Users/dev/secret/s.txt",
                                          "/Users/dev/secret/open/n.txt",
                                          "/Users/dev/secret/open/sub/r.txt",
                                          "/Users/dev/secret/open/.git/HEAD",
                                          "/Users/other/notes",
                                          "/Users/other/pub/readme",
                                          "/private/etc/hosts",
                                          "/usr/bin/make",
                                          "/bin/sh",
                                          "/private/tmp/x",
                                          "/private/var/folders/zz/abc/T/x",
                                          "/private/var/folders/zz/other/x",
                                          "/Library/Keychains/login.keychain-db",
                                          "/opt/homebrew/bin/gh",
                                          "/dev/null"};
    std::map<std::string, std::string> seen;  // what each policy decided, to show that the probes differ
    for (const auto& [what, in] : inputs) {
        CAPTURE(what);
        const CanonicalPolicy p = resolve(in, env);
        const Evaluator e = eval(p);
        for (const std::string& path : probes) {
            const FsDecision d = decide_path(p, path);
            seen[what] += d.access ? std::string(to_string(*d.access)).substr(0, 1) : "-";
        }
        for (const std::string& path : probes) {
            CAPTURE(path);
            const FsDecision d = decide_path(p, path);
            if (path == "/dev/null") {  // the device: data writes only, in the base policy
                CHECK(e.allowed(on_file("file-write-data", path, "CHARACTER-DEVICE")));
                continue;
            }
            CHECK(e.read(path) == (d.access == FsAccess::Read || d.access == FsAccess::Write));
            CHECK(e.write(path) == (d.access == FsAccess::Write));
        }
    }
    // The probes above, in order: r(ead) w(rite) d(eny) -(no entry).
    CHECK(seen["workspace-write with --deny, --read, a hole and --deny-glob"] == "drddwwrrrdwwrrrrrrwwrrrw");
    CHECK(seen["read-only --minimal"] == "---------------rrr-----w");
    CHECK(seen["a permission profile"] == "rrwwdwwrrdwrrddrrrrrrrrw");
}

// ---------------------------------------------------------------------------
// The profiles held against Codex's own Seatbelt policies (issue 16): each
// section is one rule where sbx was looser or stricter than Codex's
// seatbelt_base_policy.sbpl, seatbelt_network_policy.sbpl, network_only.rs
// or seatbelt.rs.  These sections use only the policy, so they also run
// against the profiles from before the change (where each one failed).

TEST_CASE("seatbelt: held against Codex, looser rules closed") {
    auto eval_at = [](Mode m, Network n) { return eval(mac_policy(m, n)); };
    const Evaluator restricted = eval_at(Mode::WorkspaceWrite, Network::Restricted);
    const Evaluator limited = eval_at(Mode::WorkspaceWrite, Network::Limited);
    const Evaluator full = eval_at(Mode::WorkspaceWrite, Network::Full);

    SECTION("POSIX shared memory: libomp's registration names and cfprefs reads only") {
        for (const Evaluator* e : {&restricted, &limited, &full}) {
            for (const char* op :
                 {"ipc-posix-shm-read-data", "ipc-posix-shm-write-create", "ipc-posix-shm-write-unlink"})
                CHECK(e->allowed(named(op, "/__KMP_REGISTERED_LIB_4242")));
            CHECK(e->allowed(named("ipc-posix-shm-read-data", "apple.cfprefs.501.plist")));
            CHECK_FALSE(e->allowed(named("ipc-posix-shm-write-data", "apple.cfprefs.501.plist")));
            CHECK_FALSE(e->allowed(named("ipc-posix-shm-write-create", "/__KMP_REGISTERED_LIB_x")));
            // another process's segment: neither read, written nor unlinked
            for (const char* op : {"ipc-posix-shm-read-data", "ipc-posix-shm-write-data", "ipc-posix-shm-write-unlink"})
                CHECK_FALSE(e->allowed(named(op, "/psm_app_segment")));
            CHECK(e->allowed(named("ipc-posix-sem", "/mp-abc123")));  // SemLock, as Codex
        }
    }
    SECTION("terminals: no write to a terminal the command did not inherit") {
        for (const Evaluator* e : {&restricted, &limited, &full}) {
            CHECK_FALSE(e->allowed(on_file("file-write-data", "/dev/ttys009", "CHARACTER-DEVICE")));
            CHECK_FALSE(e->allowed(on_file("file-ioctl", "/dev/ttys009", "CHARACTER-DEVICE")));
            CHECK_FALSE(e->allowed(ioctl_on("/dev/ttys009", "TIOCSTI")));
        }
    }
    SECTION("system sockets under full network: AF_SYSTEM protocol 2 (and AF_UNIX) only") {
        CHECK(full.allowed(system_socket("AF_SYSTEM", "2")));
        CHECK(full.allowed(system_socket("AF_UNIX", "0")));
        CHECK_FALSE(full.allowed(system_socket("AF_SYSTEM", "1")));  // kernel events
        CHECK_FALSE(full.allowed(system_socket("AF_ROUTE", "0")));   // watching and changing routes
        CHECK_FALSE(restricted.allowed(system_socket("AF_SYSTEM", "2")));
    }
    SECTION("no mach-host* operation") {
        for (const Evaluator* e : {&restricted, &limited, &full}) {
            CHECK_FALSE(e->allowed(op_only("mach-host-special-port-set")));
            CHECK_FALSE(e->allowed(op_only("mach-host-exception-port-set")));
        }
    }
    SECTION("no write or ioctl on /dev/dtracehelper") {
        for (const Evaluator* e : {&restricted, &limited, &full}) {
            CHECK_FALSE(e->allowed(on_file("file-write-data", "/dev/dtracehelper", "CHARACTER-DEVICE")));
            CHECK_FALSE(e->allowed(on_file("file-ioctl", "/dev/dtracehelper", "CHARACTER-DEVICE")));
        }
    }
    SECTION("dirhelper and opendirectoryd's membership service only with a network") {
        for (const char* service : {"com.apple.bsd.dirhelper", "com.apple.system.opendirectoryd.membership"}) {
            CAPTURE(service);
            CHECK_FALSE(restricted.allowed(named("mach-lookup", service)));
            CHECK(limited.allowed(named("mach-lookup", service)));
            CHECK(full.allowed(named("mach-lookup", service)));
        }
        CHECK(restricted.allowed(named("mach-lookup", "com.apple.system.opendirectoryd.libinfo")));
    }
}

TEST_CASE("seatbelt: held against Codex, stricter rules that broke tools opened") {
    const Evaluator restricted = eval(mac_policy(Mode::WorkspaceWrite, Network::Restricted));
    const Evaluator limited = eval(mac_policy(Mode::WorkspaceWrite, Network::Limited));
    const Evaluator read_only = eval(mac_policy(Mode::ReadOnly, Network::Restricted));

    SECTION("kern.sysv.semmns (python's ProcessPoolExecutor) and net.routetable (getifaddrs) in every mode") {
        for (const Evaluator* e : {&restricted, &limited, &read_only}) {
            CHECK(e->allowed(named("sysctl-read", "kern.sysv.semmns")));
            CHECK(e->allowed(named("sysctl-read", "net.routetable.0.0.3.0")));
            CHECK_FALSE(e->allowed(named("sysctl-read", "kern.sysv.shmmax")));
        }
    }
    SECTION("termios ioctls on the controlling terminal, never TIOCSTI") {
        for (const Evaluator* e : {&restricted, &limited, &read_only}) {
            CHECK(e->allowed(ioctl_on("/dev/tty", "TIOCGETA")));   // tcgetattr
            CHECK(e->allowed(ioctl_on("/dev/tty", "TIOCSETAW")));  // tcsetattr: raw mode for a REPL or less
            CHECK(e->allowed(ioctl_on("/dev/tty", "TIOCSPGRP")));  // job control
            CHECK(e->allowed(on_file("file-read-data", "/dev/tty", "CHARACTER-DEVICE")));  // a password prompt
            CHECK_FALSE(e->allowed(ioctl_on("/dev/tty", "TIOCSTI")));
            CHECK_FALSE(e->allowed(ioctl_on("/dev/ptmx", "TIOCSTI")));
        }
    }
    SECTION("a writable root's own directory: everything but unlink (rename, rmdir)") {
        const std::string root = "/Users/dev/project";
        for (const char* op : {"file-write-times", "file-write-mode", "file-write-xattr", "file-write-flags"})
            CHECK(restricted.allowed(on_file(op, root, "DIRECTORY")));
        CHECK_FALSE(restricted.allowed(on_file("file-write-unlink", root, "DIRECTORY")));
        // the protected names inside it stay closed, the name itself included
        CHECK_FALSE(restricted.allowed(on_file("file-write-create", root + "/.codex", "DIRECTORY")));  // mkdir .codex
        CHECK_FALSE(restricted.allowed(on_file("file-write-create", root + "/.git", "REGULAR-FILE")));
        CHECK_FALSE(restricted.allowed(on_file("file-write-times", root + "/.git", "DIRECTORY")));
    }
}

TEST_CASE("seatbelt: held against Codex, external-sandbox is network-only") {
    SECTION("restricted: (allow default) but no IP or UNIX-socket network") {
        const CanonicalPolicy p = mac_policy(Mode::ExternalSandbox, Network::Restricted);
        const std::string profile = seatbelt_profile(p);
        CHECK(check_profile(profile, {}).open_default);
        const Evaluator x(profile, seatbelt_parameters(p));
        CHECK(x.allowed(named("mach-lookup", "com.apple.windowserver.active")));  // nothing but the network
        CHECK(x.allowed(named("sysctl-read", "kern.sysv.semmns")));
        CHECK(x.allowed(on_file("file-write-unlink", "/Users/dev/project/.git")));
        for (const char* ip : {"93.184.216.34", "127.0.0.1"}) {
            CHECK_FALSE(x.allowed(to_remote("network-outbound", ip)));
            CHECK_FALSE(x.allowed(on_local("network-bind", ip)));
        }
        CHECK_FALSE(x.allowed(on_file("network-outbound", "/private/var/run/docker.sock", "SOCKET")));
        CHECK_FALSE(x.allowed(on_file("network-bind", "/Users/dev/project/sock", "SOCKET")));
        CHECK_FALSE(x.allowed(ioctl_on("/dev/tty", "TIOCSTI")));
    }
    SECTION("limited: loopback only") {
        const CanonicalPolicy p = mac_policy(Mode::ExternalSandbox, Network::Limited);
        const Evaluator x(seatbelt_profile(p), seatbelt_parameters(p));
        CHECK(x.allowed(to_remote("network-outbound", "127.0.0.1")));
        CHECK(x.allowed(on_local("network-bind", "::1")));
        CHECK_FALSE(x.allowed(to_remote("network-outbound", "93.184.216.34")));
        CHECK_FALSE(x.allowed(on_local("network-bind", "0.0.0.0")));
        CHECK_FALSE(x.allowed(on_file("network-outbound", "/private/var/run/docker.sock", "SOCKET")));
    }
    SECTION("full: no profile, the command runs without sandbox-exec") {
        const CanonicalPolicy p = mac_policy(Mode::ExternalSandbox, Network::Full);
        CHECK_THROWS_AS(seatbelt_profile(p), Error);
    }
}

// What only the new interface can say (the terminal the command inherited,
// the plan without sandbox-exec, the refusal of symlinked protected names).
TEST_CASE("seatbelt: the inherited terminal, by its device") {
    const CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    const SeatbeltContext ctx{{"/dev/ttys003", "/dev/ttys003", "/dev/tty"}};  // stdin, stdout, one alias
    const std::vector<std::string> params = seatbelt_parameters(p, ctx);
    CHECK(std::count(params.begin(), params.end(), "-DTERMINAL_0=/dev/ttys003") == 1);
    CHECK(
        std::none_of(params.begin(), params.end(), [](const std::string& d) { return d.starts_with("-DTERMINAL_1"); }));
    const Evaluator e(seatbelt_profile(p, ctx), params);
    CHECK(e.allowed(on_file("file-write-data", "/dev/ttys003", "CHARACTER-DEVICE")));
    CHECK(e.allowed(on_file("file-read-data", "/dev/ttys003", "CHARACTER-DEVICE")));
    CHECK(e.allowed(ioctl_on("/dev/ttys003", "TIOCGWINSZ")));
    CHECK(e.allowed(ioctl_on("/dev/ttys003", "TIOCSETAW")));
    CHECK_FALSE(e.allowed(ioctl_on("/dev/ttys003", "TIOCSTI")));
    CHECK_FALSE(e.allowed(on_file("file-write-unlink", "/dev/ttys003", "CHARACTER-DEVICE")));
    CHECK_FALSE(e.allowed(on_file("file-write-data", "/dev/ttys004", "CHARACTER-DEVICE")));
    // the terminal rule survives a --minimal policy (no readable root)
    const CanonicalPolicy minimal = shape("minimal-workspace");
    const Evaluator m(seatbelt_profile(minimal, ctx), seatbelt_parameters(minimal, ctx));
    CHECK(m.allowed(on_file("file-read-data", "/dev/ttys003", "CHARACTER-DEVICE")));
    CHECK_THROWS_AS(seatbelt_parameters(p, SeatbeltContext{{"ttys003"}}), Error);
}

TEST_CASE("seatbelt: the macOS plan of external-sandbox with a full network has no sandbox-exec") {
    CommandSpec cmd;
    cmd.argv = {"make", "-j2"};
    cmd.cwd = "/Users/dev/project";
    const ExecPlan full = plan(mac_policy(Mode::ExternalSandbox, Network::Full), cmd, TargetOs::MacOs, {});
    CHECK(full.argv == cmd.argv);
    CHECK(full.sandbox == SandboxKind::None);
    const ExecPlan restricted = plan(mac_policy(Mode::ExternalSandbox, Network::Restricted), cmd, TargetOs::MacOs, {});
    REQUIRE(restricted.argv.size() == 6);
    CHECK(restricted.argv[0] == "/usr/bin/sandbox-exec");
    CHECK(restricted.argv[2].find("(allow default)") != std::string::npos);
    CHECK(restricted.sandbox == SandboxKind::MacosSeatbelt);
}

TEST_CASE("seatbelt: a protected name that is a symlink is refused on macOS") {
    sbx::test::FakeFs fs;
    fs.dir("/Users/dev/project/src").dir("/Users/dev/elsewhere").dir("/Users/dev/other");
    fs.link("/Users/dev/project/.codex", "/Users/dev/elsewhere");
    CanonicalPolicy p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    p.writable = {
        root_with_protected("/Users/dev/project"), root_with_protected("/Users/dev/other"), {"/dev/null", {}}};
    const Environment env = fs.env("/Users/dev/project", std::nullopt);
    try {
        check_seatbelt_roots(p, env);
        FAIL("no refusal");
    } catch (const Error& e) {
        const std::string what = e.what();
        CHECK(what.find("/Users/dev/project/.codex is a symlink (to /Users/dev/elsewhere)") != std::string::npos);
        CHECK(what.find("--unprotect .codex") != std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
    }
    p.writable = {root_with_protected("/Users/dev/other"), {"/dev/null", {}}};
    CHECK_NOTHROW(check_seatbelt_roots(p, env));
    // a symlink elsewhere in the root is not a protected name
    fs.link("/Users/dev/other/latest", "/Users/dev/other/src");
    CHECK_NOTHROW(check_seatbelt_roots(p, env));
    // --unprotect .codex lifts it
    p = mac_policy(Mode::WorkspaceWrite, Network::Restricted);
    p.protected_names = {".git", ".sbx", ".agents"};
    p.writable = {{"/Users/dev/project", {}}, {"/dev/null", {}}};
    CHECK_NOTHROW(check_seatbelt_roots(p, env));
}
