// Which sandbox a plan runs the command under.  Header-only: the report
// module names it in the JSON result without linking the platform module.
#pragma once

#include <string_view>

namespace sbx {

enum class SandboxKind { None, Linux, MacosSeatbelt };

// The name in the JSON result, the events and $SBX_SANDBOX: "none", "linux",
// "macos-seatbelt".
constexpr std::string_view to_string(SandboxKind k) {
    switch (k) {
        case SandboxKind::Linux: return "linux";
        case SandboxKind::MacosSeatbelt: return "macos-seatbelt";
        case SandboxKind::None: break;
    }
    return "none";
}

}  // namespace sbx
