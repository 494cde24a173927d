// A small in-memory filesystem for testing resolution without touching disk.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace sbx::test {

struct FakeFs {
    std::set<std::string> dirs{"/"};
    std::map<std::string, std::string> files;     // path -> contents
    std::map<std::string, std::string> symlinks;  // path -> target (absolute or relative)

    FakeFs& dir(const std::string& p) {
        // Parents too.
        std::string cur;
        std::istringstream in(p);
        std::string part;
        while (std::getline(in, part, '/')) {
            if (part.empty()) continue;
            cur += "/" + part;
            dirs.insert(cur);
        }
        return *this;
    }
    FakeFs& file(const std::string& p, const std::string& text = "") {
        files[p] = text;
        return *this;
    }
    FakeFs& link(const std::string& p, const std::string& target) {
        symlinks[p] = target;
        return *this;
    }

    // Resolve every component, following symlinks (at most 40).
    std::optional<std::string> realpath(const std::string& path) const {
        std::vector<std::string> todo;
        std::istringstream in(path);
        std::string part;
        while (std::getline(in, part, '/'))
            if (!part.empty()) todo.push_back(part);
        std::reverse(todo.begin(), todo.end());
        std::string cur;
        int hops = 0;
        while (!todo.empty()) {
            std::string name = todo.back();
            todo.pop_back();
            if (name == ".") continue;
            if (name == "..") {
                auto pos = cur.rfind('/');
                cur = pos == std::string::npos ? "" : cur.substr(0, pos);
                continue;
            }
            std::string next = cur + "/" + name;
            if (auto it = symlinks.find(next); it != symlinks.end()) {
                if (++hops > 40) return std::nullopt;
                std::string target = it->second;
                if (target.front() == '/') cur.clear();
                std::vector<std::string> parts;
                std::istringstream tin(target);
                while (std::getline(tin, part, '/'))
                    if (!part.empty()) parts.push_back(part);
                for (auto r = parts.rbegin(); r != parts.rend(); ++r) todo.push_back(*r);
                continue;
            }
            if (!dirs.count(next) && !files.count(next)) return std::nullopt;
            cur = next;
        }
        return cur.empty() ? "/" : cur;
    }

    Environment env(const std::string& cwd, std::optional<std::string> tmpdir = std::nullopt) const {
        Environment e;
        e.cwd = cwd;
        e.tmpdir = std::move(tmpdir);
        e.realpath = [this](const std::string& p) { return realpath(p); };
        e.is_directory = [this](const std::string& p) { return dirs.count(p) > 0; };
        e.lexists = [this](const std::string& p) {
            return dirs.count(p) > 0 || files.count(p) > 0 || symlinks.count(p) > 0;
        };
        e.readlink = [this](const std::string& p) -> std::optional<std::string> {
            auto it = symlinks.find(p);
            if (it == symlinks.end()) return std::nullopt;
            return it->second;
        };
        e.list_directory = [this](const std::string& p) {
            std::set<std::string> names;
            const std::string prefix = p == "/" ? "/" : p + "/";
            auto add = [&](const std::string& path) {
                if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                    path.find('/', prefix.size()) == std::string::npos)
                    names.insert(path.substr(prefix.size()));
            };
            for (const auto& d : dirs) add(d);
            for (const auto& [f, _] : files) add(f);
            for (const auto& [l, _] : symlinks) add(l);
            return std::vector<std::string>(names.begin(), names.end());
        };
        e.read_file = [this](const std::string& p) -> std::optional<std::string> {
            auto it = files.find(p);
            if (it == files.end()) return std::nullopt;
            return it->second;
        };
        e.read_git_index = e.read_file;
        return e;
    }
};

}  // namespace sbx::test
