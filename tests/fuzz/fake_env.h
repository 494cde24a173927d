// A filesystem for the fuzz targets where every absolute path exists and is a
// directory, so that resolution runs to the end without touching the disk;
// the directories less than four levels deep hold three names (for globs).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace sbx::fuzz {

inline Environment fake_environment() {
    Environment env;
    env.cwd = "/work";
    env.tmpdir = "/var/tmp";
    env.realpath = [](const std::string& p) -> std::optional<std::string> {
        if (p.empty() || p.front() != '/') return std::nullopt;
        return p;
    };
    env.is_directory = [](const std::string& p) { return p != "/dev/null"; };
    env.lexists = [](const std::string&) { return false; };
    env.readlink = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    env.read_file = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    env.list_directory = [](const std::string& p) -> std::vector<std::string> {
        if (std::count(p.begin(), p.end(), '/') >= 4) return {};
        return {"a", "b.env", ".git"};
    };
    return env;
}

}  // namespace sbx::fuzz
