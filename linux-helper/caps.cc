#include "caps.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "util.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "capabilities";

struct CapSets {
    std::uint64_t effective = 0, permitted = 0, inheritable = 0;
};

CapSets get_caps() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &header, data) != 0) fail_errno(kStep, "capget");
    auto join = [](std::uint32_t lo, std::uint32_t hi) {
        return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(hi) << 32);
    };
    return {join(data[0].effective, data[1].effective), join(data[0].permitted, data[1].permitted),
            join(data[0].inheritable, data[1].inheritable)};
}

}  // namespace

void drop_capabilities() {
    const bool have_setpcap = (get_caps().effective >> CAP_SETPCAP) & 1;
    if (have_setpcap) {
        // uid 0 gets no capabilities back on execve, and nothing can change that.
        const unsigned long bits =
            SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) fail_errno(kStep, "PR_SET_SECUREBITS");
        for (unsigned long cap = 0; cap < 64; ++cap) {
            if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
                if (errno == EINVAL) break;  // past the kernel's last capability
                fail_errno(kStep, "PR_CAPBSET_DROP");
            }
        }
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        fail_errno(kStep, "clearing the ambient set");
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capset, &header, data) != 0) fail_errno(kStep, "capset");
    const CapSets after = get_caps();
    if (after.effective || after.permitted || after.inheritable)
        fail(kStep, "capabilities remain after dropping them", "report this kernel to the sbx authors");
}

void set_no_new_privs() {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_errno("no_new_privs", "PR_SET_NO_NEW_PRIVS");
}

}  // namespace sbx::helper
