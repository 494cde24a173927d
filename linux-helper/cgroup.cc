#include "cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "rlimits.h"
#include "util.h"
#include "util/path.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "limits";
constexpr const char* kFix =
    "run as another user (RLIMIT_NPROC in a user namespace keeps it then), or give root a pids cgroup "
    "(cgroup v2 with +pids in cgroup.subtree_control, or v1's pids hierarchy)";

[[noreturn]] void refuse(const std::string& why) {
    fail(kStep, "--limit-procs cannot be enforced for root (the kernel exempts uid 0 from RLIMIT_NPROC): " + why, kFix);
}

// Whether word is one of the items of a list separated by commas or white space.
bool lists(std::string_view text, std::string_view word) {
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find_first_of(", \n\t", start), text.size());
        if (text.substr(start, end - start) == word) return true;
        start = end + 1;
    }
    return false;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The directory of this process's cgroup in the hierarchy that has the pids
// controller, and whether that hierarchy is cgroup v2.
struct Place {
    std::string dir;
    bool v2 = false;
};

std::optional<Place> find_pids_cgroup() {
    // "0::/path" (v2) and "N:ctl,ctl:/path" (v1), from /proc/self/cgroup.
    std::string v2_path, v1_path;
    std::istringstream cgroups(read_text("/proc/self/cgroup"));
    for (std::string line; std::getline(cgroups, line);) {
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
        else if (lists(controllers, "pids")) v1_path = path;
    }
    // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPEROPTIONS
    std::istringstream mounts(read_text("/proc/self/mountinfo"));
    for (std::string line; std::getline(mounts, line);) {
        std::istringstream in(line);
        const std::vector<std::string> fields{std::istream_iterator<std::string>(in),
                                              std::istream_iterator<std::string>()};
        const auto dash = std::find(fields.begin(), fields.end(), "-");
        if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4) continue;
        const std::string& root = fields[3];
        const std::string& mountpoint = fields[4];
        const std::string& type = dash[1];
        const std::string& options = dash[3];
        const bool v2 = type == "cgroup2";
        const std::string& path = v2 ? v2_path : v1_path;
        if (path.empty()) continue;
        if (v2 ? !lists(read_text(mountpoint + "/cgroup.controllers"), "pids")
               : !(type == "cgroup" && lists(options, "pids")))
            continue;
        // The cgroup's path relative to the mount's root.
        std::string relative = path;
        if (root != "/") {
            if (!path_within(path, root)) continue;  // component-wise: /a/bc is not within /a/b
            relative = path.substr(root.size());
        }
        return Place{mountpoint + (relative == "/" ? "" : relative), v2};
    }
    return std::nullopt;
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
    const std::optional<Place> place = find_pids_cgroup();
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
