// libFuzzer target for the policy JSON parser (--sandbox-policy): any input
// either fails with sbx::Error or yields a canonical policy whose JSON parses
// back to itself.  How to build and run: docs/development.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fake_env.h"
#include "policy/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const sbx::Environment env = sbx::fuzz::fake_environment();
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        sbx::CanonicalPolicy p = sbx::parse_policy_text(text, "fuzz", env);
        std::string once = sbx::to_json_text(p);
        sbx::CanonicalPolicy back = sbx::parse_policy_text(once, "fuzz", env);
        if (!(back == p) || sbx::to_json_text(back) != once) std::abort();
    } catch (const sbx::Error&) {
        // A refusal with a message is the expected outcome for bad input.
    }
    return 0;
}
