// sbx's one exception type, shared by sbx and the helper.
#pragma once

#include <stdexcept>

namespace sbx {

// Every refusal in sbx is an Error whose message is one line, without the
// leading "sbx: " (the boundary adds it): "<file/flag>: <what is wrong>".
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace sbx
