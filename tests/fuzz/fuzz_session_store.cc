// libFuzzer target for the --session file (parse_session_store,
// src/approval/session_store.cc): any text either fails with sbx::Error or
// yields approvals that, written as FileSessionStore::add writes them, read
// back equal.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "approval/session_store.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto keys = sbx::approval::parse_session_store(text, "fuzz.json");
        nlohmann::json doc{{"version", 1}, {"approvals", nlohmann::json::array()}};
        for (const auto& k : keys) doc["approvals"].push_back(sbx::approval::to_json(k));
        if (sbx::approval::parse_session_store(doc.dump(2) + "\n", "fuzz.json") != keys) std::abort();
    } catch (const sbx::Error&) {
        // A refusal with a message is the expected outcome for bad input.
    }
    return 0;
}
