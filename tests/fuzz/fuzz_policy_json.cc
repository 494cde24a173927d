// libFuzzer target for the policy JSON parser: any input either fails with
// sbx::Error or yields a canonical policy whose JSON parses back to itself.
//
//   CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=disabled
//   ninja -C build-fuzz tests/fuzz/fuzz_policy_json
//   build-fuzz/tests/fuzz/fuzz_policy_json -max_total_time=60 tests/fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "policy/policy.h"

namespace {

// A filesystem where every absolute path exists and is a directory, so that
// resolution runs to the end without touching the disk.
sbx::Environment fake_environment() {
    sbx::Environment env;
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
    return env;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const sbx::Environment env = fake_environment();
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
