#include "policy/secrets.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include <fmt/format.h>

#include "net/domain.h"
#include "util/path.h"

namespace sbx {

std::string_view to_string(Secret::Kind k) { return k == Secret::Kind::Env ? "env" : "file"; }

namespace {

bool env_name(const std::string& n) {
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n.front()))) return false;
    return std::all_of(n.begin(), n.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The secret's name checked and made absolute (a file), its hosts normalised.
Secret checked(const PolicyInput::SourcedSecret& given, const Environment& env) {
    Secret s = given.secret;
    const std::string& source = given.source;
    if (s.kind == Secret::Kind::Env) {
        if (!env_name(s.name))
            throw Error(fmt::format("{}: '{}' is not an environment variable's name", source, s.name));
        if (!s.extract.empty())
            throw Error(fmt::format("{}: extract is for files; a variable's whole value is its secret", source));
    } else {
        if (s.name.empty() || s.name.find('\0') != std::string::npos)
            throw Error(fmt::format("{}: a file's path is empty", source));
        const std::string expanded = expand_home(s.name, env, source);
        s.name = expanded.starts_with('/') ? join_path("/", expanded) : join_path(env.cwd, expanded);
    }
    for (auto& h : s.hosts) h = net::normalize_pattern(h, source);
    if (!s.extract.empty()) {
        try {
            if (std::regex(s.extract).mark_count() == 0)
                throw Error(fmt::format("{}: extract '{}' has no group: group 1 is the secret", source, s.extract));
        } catch (const std::regex_error& e) {
            throw Error(fmt::format("{}: extract '{}' is not a regular expression: {}", source, s.extract, e.what()));
        }
    }
    return s;
}

// A masked secret's hosts must be reachable: each admitted by the allowlist,
// where the filesystem is sandboxed (else the command could read the value
// from the file or from sbx's own process).
void check_masked(const Secret& s, const std::string& source, const CanonicalPolicy& p, ResolveScope scope) {
    if (!p.sandboxed_filesystem())
        throw Error(fmt::format(
            "{}: {} leaves the filesystem open, where the command could read the secret from the {} or sbx's own "
            "process; mask secrets under -p read-only or -p workspace-write",
            source, to_string(p.mode), s.kind == Secret::Kind::Env ? "environment" : "file"));
    if (scope == ResolveScope::OneDocument) return;  // the merged allowlist decides
    for (const auto& h : s.hosts) {
        const auto [host, port] = net::sample_of(h);
        if (!net::decide_host({p.allow_domains, p.deny_domains}, host, port).allowed)
            throw Error(
                fmt::format("{}: the secret {} may reach {}, which the allowlist does not admit; add --allow-domain {}",
                            source, s.name, h, h));
    }
}

void merge_into(std::vector<Secret>& list, Secret s, const std::string& source) {
    const auto same =
        std::find_if(list.begin(), list.end(), [&](const Secret& o) { return o.kind == s.kind && o.name == s.name; });
    if (same == list.end()) {
        list.push_back(std::move(s));
        return;
    }
    if (!same->masked() || !s.masked()) {  // withheld wins
        same->hosts.clear();
        same->extract.clear();
        return;
    }
    if (same->extract != s.extract)
        throw Error(fmt::format("{}: the file {} is given twice with different extract patterns", source, s.name));
    for (auto& h : s.hosts)
        if (std::find(same->hosts.begin(), same->hosts.end(), h) == same->hosts.end()) same->hosts.push_back(h);
}

}  // namespace

void resolve_secrets(PolicyInput& in, const Environment& env, CanonicalPolicy& p, ResolveScope scope) {
    for (const auto& given : in.secrets) {
        Secret s = checked(given, env);
        if (s.masked()) check_masked(s, given.source, p, scope);
        merge_into(p.secrets, std::move(s), given.source);
    }
    for (const auto& s : p.secrets) {
        if (s.masked() || s.kind != Secret::Kind::File) continue;
        if (!p.sandboxed_filesystem())
            throw Error(
                fmt::format("secret file {}: {} leaves the filesystem open, so it cannot be withheld; use "
                            "-p read-only or -p workspace-write",
                            s.name, to_string(p.mode)));
        in.extra_entries.push_back({{FsTarget::Kind::Path, s.name}, FsAccess::Deny, "secret file " + s.name});
    }
    for (const auto& t : in.tls_passthrough) {
        std::string n = net::normalize_pattern(t.path, t.source);
        if (std::find(p.tls_passthrough.begin(), p.tls_passthrough.end(), n) == p.tls_passthrough.end())
            p.tls_passthrough.push_back(std::move(n));
    }
}

Secret parse_secret_flag(Secret::Kind kind, const std::string& value, const std::string& flag) {
    // A variable's name has no '@'; a path may: its hosts follow the last one.
    const auto at = kind == Secret::Kind::Env ? value.find('@') : value.rfind('@');
    Secret s{kind, value.substr(0, at), {}};
    if (s.name.empty())
        throw Error(fmt::format("{}: '{}' names no {}", flag, value, kind == Secret::Kind::Env ? "variable" : "file"));
    if (at == std::string::npos) return s;
    const std::string hosts = value.substr(at + 1);
    for (std::size_t from = 0;;) {
        const auto comma = hosts.find(',', from);
        std::string h = hosts.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        if (h.empty())
            throw Error(
                fmt::format("{}: '{}' has an empty host (write NAME@HOST,HOST; NAME alone withholds it)", flag, value));
        s.hosts.push_back(std::move(h));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    return s;
}

}  // namespace sbx
