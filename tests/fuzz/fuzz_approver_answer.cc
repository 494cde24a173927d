// libFuzzer target for the parse of an --approver program's answer
// (parse_approver_output, src/approval/approver.cc): any stdout either is
// one decision or none, and never throws.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "approval/approver.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    (void)sbx::approval::parse_approver_output(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
