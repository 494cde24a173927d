// mkdir -p for sbx's own directories (its state: session approvals, the
// trust store): the directories it creates get mode 0700.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "util/error.h"

namespace sbx {

// Throws Error("<what>: cannot create DIR: reason").
inline void make_private_directories(const std::string& dir, std::string_view what) {
    std::size_t pos = 0;
    while (pos != std::string::npos) {
        pos = dir.find('/', pos + 1);
        const std::string prefix = dir.substr(0, pos);
        if (prefix.empty()) continue;
        if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
            throw Error(fmt::format("{}: cannot create {}: {}", what, prefix, std::strerror(errno)));
    }
}

}  // namespace sbx
