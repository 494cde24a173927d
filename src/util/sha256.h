// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: what
// `sbx trust` records of a project policy's exact bytes.  Pure; no library.
#pragma once

#include <string>
#include <string_view>

namespace sbx {

std::string sha256_hex(std::string_view bytes);

}  // namespace sbx
