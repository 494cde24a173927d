#include "policy/check.h"

#include <arpa/inet.h>

#include <algorithm>

#include <fmt/format.h>

#include "net/domain.h"

namespace sbx {

namespace {

// The path as the kernel would reach it: every symlink followed (dangling ones
// too), and what does not exist yet appended as it is.
std::string resolve_path(const std::string& target, const Environment& env) {
    std::vector<std::string> todo;  // components still to walk, last first
    auto push = [&todo](std::string_view path) {
        const auto first = todo.size();
        for_each_component(path, [&todo](std::string_view part) { todo.emplace_back(part); });
        std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(first), todo.end());
    };
    push(target.front() == '/' ? target : env.cwd + "/" + target);
    std::string cur;  // "" is "/"
    int hops = 0;
    while (!todo.empty()) {
        std::string name = std::move(todo.back());
        todo.pop_back();
        if (name == ".") continue;
        if (name == "..") {
            cur = parent_path(cur);
            if (cur == "/") cur.clear();
            continue;
        }
        std::string next = cur + "/" + name;
        if (auto link = env.readlink(next); link && hops++ < 40) {
            if (link->front() == '/') cur.clear();
            push(*link);
            continue;
        }
        cur = next;
    }
    return cur.empty() ? "/" : cur;
}

bool is_loopback(const std::string& host) {
    if (host == "localhost" || host == "::1") return true;
    in_addr a{};
    if (inet_pton(AF_INET, host.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
    return false;
}

Verdict check_connect(const CanonicalPolicy& p, const std::string& target) {
    std::string host, port;
    if (target.starts_with('[')) {
        auto close = target.find(']');
        if (close == std::string::npos || close + 1 >= target.size() || target[close + 1] != ':')
            throw Error(fmt::format("--connect: '{}' is not HOST:PORT", target));
        host = target.substr(1, close - 1);
        port = target.substr(close + 2);
    } else {
        auto colon = target.rfind(':');
        if (colon == std::string::npos) throw Error(fmt::format("--connect: '{}' is not HOST:PORT", target));
        host = target.substr(0, colon);
        port = target.substr(colon + 1);
    }
    if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
        std::stoul(port) > 65535)
        throw Error(fmt::format("--connect: '{}' is not HOST:PORT", target));
    Verdict v{false, target, ""};
    switch (p.network) {
        case Network::Full:
            v.allowed = true;
            v.rule = "network full: the host's network";
            break;
        case Network::Restricted: v.rule = "network restricted: no sockets except AF_UNIX socketpair"; break;
        case Network::Limited:
            if (p.by_name() && !is_loopback(host)) {
                const net::Decision d = net::decide_host({p.allow_domains, p.deny_domains}, host,
                                                         static_cast<std::uint16_t>(std::stoul(port)));
                v.allowed = d.allowed;
                v.rule = d.allowed ? d.rule + ", through sbx's proxy (HTTP_PROXY, ALL_PROXY)" +
                                         (net::parse_address(host) ? std::string()
                                                                   : "; refused when it resolves to a loopback, "
                                                                     "private or link-local address not allowed")
                                   : d.rule;
                break;
            }
            // The sandbox's loopback is its own: a connect there reaches only
            // what the command itself listens on, never the host's service at
            // that port, which is what the question is about (issue 35).
            v.rule = is_loopback(host) ? "network limited: the host's " + target +
                                             " is out of reach (the sandbox's loopback is its own: only what the "
                                             "command itself listens on answers there)"
                                       : "network limited: only the sandbox's own loopback";
            break;
    }
    return v;
}

}  // namespace

std::string_view to_string(Access a) {
    switch (a) {
        case Access::Read: return "read";
        case Access::Write: return "write";
        case Access::Exec: return "exec";
        case Access::Connect: return "connect";
    }
    return "?";
}

Verdict check_access(const CanonicalPolicy& p, Access access, const std::string& target, const Environment& env) {
    if (access == Access::Connect) return check_connect(p, target);
    if (target.empty()) throw Error(fmt::format("--{}: empty path", to_string(access)));
    // ~ and ~/ as the policy flags expand them (a quoted '~/.cache' too).
    const std::string path = expand_home(target, env, "--" + std::string(to_string(access)));
    Verdict v{false, resolve_path(path, env), ""};
    if (p.mode == Mode::DangerFullAccess) {
        v.allowed = true;
        v.rule = "danger-full-access: no sandbox";
        return v;
    }
    if (p.mode == Mode::ExternalSandbox) {
        v.allowed = true;
        v.rule = "external-sandbox: the filesystem is left to the outside sandbox";
        return v;
    }
    if (p.private_dev_shm() && path_within(v.subject, "/dev/shm")) {
        v.rule =
            "sbx: /dev/shm is the sandbox's own, private and empty (the host's is out of reach; an entry for "
            "/dev/shm makes it the host's)";
        return v;
    }
    const FsDecision d = decide_path(p, v.subject);
    const bool wants_write = access == Access::Write;
    if (d.access && (*d.access == FsAccess::Write || (*d.access == FsAccess::Read && !wants_write))) {
        v.allowed = true;
        v.rule = d.entry->rule;
        return v;
    }
    if (!d.access) {
        v.rule = "no entry covers it: the policy reads only its entries";
        return v;
    }
    if (*d.access == FsAccess::Deny) {
        v.rule = d.entry->rule;
        return v;
    }
    // A write where the deciding entry gives read access.
    if (d.entry->protection && p.git_write && wants_write && git_write_opens(p, v.subject)) {
        v.allowed = true;
        v.rule = fmt::format("git's state in {} (--git-write)", d.entry->path);
    } else if (d.entry->protection) {
        v.rule = d.entry->rule;
    } else if (p.mode == Mode::ReadOnly) {
        v.rule = fmt::format("{}: nothing is writable but /dev/null", d.entry->rule);
    } else if (d.entry->path == "/" || d.entry->given == "/") {
        v.rule = "not under a writable root";
    } else {
        v.rule = fmt::format("{}: read-only", d.entry->rule);
    }
    return v;
}

}  // namespace sbx
