// The message of a nlohmann/json exception without its "[json.exception.
// parse_error.101] " prefix, for the one-line refusals that quote it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sbx {

inline std::string json_error_message(const nlohmann::json::exception& e) {
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what.erase(0, pos + 2);
    return what;
}

}  // namespace sbx
