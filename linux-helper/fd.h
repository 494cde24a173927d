// The helper's name for the shared owned-fd type.
#pragma once

#include "util/fd.h"

namespace sbx::helper {
using Fd = ::sbx::Fd;
}  // namespace sbx::helper
