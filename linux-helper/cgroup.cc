#include "cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rlimits.h"
#include "step_error.h"
#include "util/pids_cgroup.h"

namespace sbx::helper {
namespace {

using cgroup::lists;
using cgroup::read_text;

constexpr const char* kStep = "limits";
constexpr const char* kFix =
    "run as another user (RLIMIT_NPROC in a user namespace keeps it then), or give root a pids cgroup "
    "(cgroup v2 with +pids in cgroup.subtree_control, or v1's pids hierarchy)";

[[noreturn]] void refuse(const std::string& why) {
    fail(kStep, "--limit-procs cannot be enforced for root (the kernel exempts uid 0 from RLIMIT_NPROC): " + why, kFix);
}

void write_file(const std::string& path, std::string_view text) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.valid() || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        refuse("writing '" + std::string(text) + "' to " + path + ": " + std::strerror(errno));
}

// The cgroups of helpers that were killed (pid 1 cannot remove the cgroup
// it is in): an empty one whose helper is gone is removed; one still in use
// is not empty and stays (rmdir fails with EBUSY).
void remove_abandoned(const std::string& dir) {
    std::unique_ptr<DIR, int (*)(DIR*)> listing(::opendir(dir.c_str()), ::closedir);
    if (!listing) return;
    while (const dirent* entry = ::readdir(listing.get())) {
        const std::string_view name = entry->d_name;
        if (!name.starts_with("sbx-")) continue;
        const std::string pid(name.substr(4));
        if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (::kill(std::stoi(pid), 0) == 0 || errno != ESRCH) continue;
        (void)::rmdir((dir + "/" + std::string(name)).c_str());
    }
}

}  // namespace

PidsCgroup::PidsCgroup(std::uint64_t processes) {
    const std::optional<cgroup::Place> place = cgroup::find_pids_cgroup();
    if (!place) refuse("no cgroup hierarchy with the pids controller is mounted");
    if (place->v2 && !lists(read_text(place->dir + "/cgroup.subtree_control"), "pids"))
        write_file(place->dir + "/cgroup.subtree_control", "+pids");
    remove_abandoned(place->dir);
    const std::string path = place->dir + "/sbx-" + std::to_string(::getpid());
    if (::mkdir(path.c_str(), 0755) != 0) refuse("mkdir " + path + ": " + std::strerror(errno));
    path_ = path;  // from here on the destructor's, should the rest fail
    try {
        write_file(path + "/pids.max", std::to_string(with_pid1(processes)));
        procs_ = Fd(::open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
        if (!procs_.valid()) refuse("open " + path + "/cgroup.procs: " + std::strerror(errno));
    } catch (...) {
        ::rmdir(path.c_str());
        throw;
    }
}

PidsCgroup::~PidsCgroup() {
    if (!path_.empty()) (void)::rmdir(path_.c_str());
}

void PidsCgroup::enter() const {
    if (::write(procs_.get(), "0", 1) != 1) fail_errno(kStep, "joining the pids cgroup " + path_);
}

}  // namespace sbx::helper
