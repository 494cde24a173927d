#include "caps.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "step_error.h"

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

// The effective and permitted sets both set, the inheritable one inheritable.
void set_caps(std::uint64_t set, std::uint64_t inheritable) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    for (int i = 0; i < 2; ++i) {
        const auto half = static_cast<std::uint32_t>(set >> (32 * i));
        data[i] = {half, half, static_cast<std::uint32_t>(inheritable >> (32 * i))};
    }
    if (::syscall(SYS_capset, &header, data) != 0) fail_errno(kStep, "capset");
}

}  // namespace

std::uint64_t ownership_capabilities() { return (1ULL << CAP_CHOWN) | (1ULL << CAP_FOWNER); }

void drop_capabilities(std::uint64_t keep) {
    const CapSets before = get_caps();
    const bool have_setpcap = (before.effective >> CAP_SETPCAP) & 1;
    keep &= before.permitted;
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        fail_errno(kStep, "clearing the ambient set");
    if (have_setpcap) {
        if (keep != 0) {
            // Ambient needs the capability permitted and inheritable, and
            // must be raised before SECBIT_NO_CAP_AMBIENT_RAISE is set.
            set_caps(before.permitted, keep);
            for (unsigned long cap = 0; cap < 64; ++cap)
                if (((keep >> cap) & 1) && ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0)
                    fail_errno(kStep, "raising an ambient capability");
        }
        // uid 0 gets no capabilities back on execve, and nothing can change that.
        const unsigned long bits =
            SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) fail_errno(kStep, "PR_SET_SECUREBITS");
        for (unsigned long cap = 0; cap < 64; ++cap) {
            if ((keep >> cap) & 1) continue;
            if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
                if (errno == EINVAL) break;  // past the kernel's last capability
                fail_errno(kStep, "PR_CAPBSET_DROP");
            }
        }
    } else {
        keep = 0;
    }
    set_caps(keep, keep);
    const CapSets after = get_caps();
    if (after.effective != keep || after.permitted != keep || after.inheritable != keep)
        fail(kStep, "capabilities remain after dropping them", "report this kernel to the sbx authors");
    for (unsigned long cap = 0; cap < 64; ++cap) {
        const int ambient = ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
        if (ambient < 0) break;  // past the kernel's last capability, or no ambient set
        if (ambient != static_cast<int>((keep >> cap) & 1))
            fail(kStep, "the ambient capabilities are not what was kept", "report this kernel to the sbx authors");
    }
}

void set_no_new_privs() {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_errno("no_new_privs", "PR_SET_NO_NEW_PRIVS");
}

}  // namespace sbx::helper
