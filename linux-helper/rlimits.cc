#include "rlimits.h"

#include <sys/resource.h>

#include <algorithm>
#include <optional>

#include "step_error.h"

namespace sbx::helper {
namespace {

void set_limit(int resource, const std::optional<std::uint64_t>& value, const char* flag) {
    if (!value) return;
    rlimit current{};
    if (::getrlimit(resource, &current) != 0) fail_errno("rlimits", std::string("getrlimit for ") + flag);
    rlim_t wanted = static_cast<rlim_t>(*value);
    if (current.rlim_max != RLIM_INFINITY) wanted = std::min(wanted, current.rlim_max);
    rlimit next{wanted, wanted};
    if (::setrlimit(resource, &next) != 0)
        fail_errno("rlimits", std::string("setrlimit for ") + flag, std::string("check ") + flag);
}

}  // namespace

void apply_rlimits(const Limits& limits) {
    set_limit(RLIMIT_AS, limits.memory, "--limit-memory");
    set_limit(RLIMIT_CPU, limits.cpu_seconds, "--limit-cpu");
    set_limit(RLIMIT_FSIZE, limits.file_size, "--limit-file-size");
    set_limit(RLIMIT_NOFILE, limits.open_files, "--limit-open-files");
}

void limit_processes_in_user_namespace(std::uint64_t processes) {
    set_limit(RLIMIT_NPROC, with_pid1(processes), "--limit-procs");
}

}  // namespace sbx::helper
