// The message of the sbx::Error (the helper's StepError among them) that a
// call throws, or "" when it throws none: for tests that check a refusal's
// exact words.
#pragma once

#include <string>

#include "util/error.h"

namespace sbx::test {

template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace sbx::test
