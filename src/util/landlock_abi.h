// The Landlock ABI the running kernel offers (0: none), for the helper and
// for doctor alike.
#pragma once

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sbx {

inline int landlock_abi() {
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : static_cast<int>(abi);
}

}  // namespace sbx
