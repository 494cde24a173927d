#include "status.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

#include "step_error.h"
#include "util/path.h"
#include "wire/helper_wire.h"

namespace sbx::helper {
namespace {

namespace key = wire::status;

// A path or argv that is not UTF-8 (an exec of /tmp/\xff) is reported with
// U+FFFD in its place rather than aborting the helper (JSON holds UTF-8 only).
constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

struct Found {
    std::string path;
    mode_t mode = 0;
};

// The file execvp would have tried for argv0: the first of its candidates
// that exists (execvp's search path is glibc's default without PATH).
std::optional<Found> find_executable(const std::string& argv0) {
    const char* env = std::getenv("PATH");
    for (const auto& path : exec_candidates(argv0, env != nullptr ? env : "/bin:/usr/bin")) {
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0) return Found{path, st.st_mode};
    }
    return std::nullopt;
}

}  // namespace

void Status::use_fd(int fd) {
    if (fd < 0 || ::fcntl(fd, F_GETFD) < 0)
        fail("arguments", std::string(wire::option::kStatusFd) + " " + std::to_string(fd) + ": not an open descriptor",
             "open it for writing before running the helper");
    fd_ = fd;
}

void Status::emit(const std::string& json_line, std::string_view stderr_text) const {
    if (fd_ >= 0) {
        write_all(fd_, json_line + "\n");
    } else {
        report_error(stderr_text);
    }
}

void Status::error(const std::exception& e) const {
    nlohmann::json detail{{key::kMessage, e.what()}};
    if (const auto* step = dynamic_cast<const StepError*>(&e)) {
        detail[key::kStep] = step->step;
        detail[key::kReason] = step->reason;
        if (!step->fix.empty()) detail[key::kFix] = step->fix;
    }
    emit(nlohmann::json{{key::kError, detail}}.dump(-1, ' ', false, kReplace), e.what());
}

void Status::exec_failed(char* const* argv, int err) const {
    const std::string argv0 = argv[0];
    nlohmann::json detail{{key::kArgv0, argv0}, {key::kErrno, err}, {key::kErrorText, std::strerror(err)}};
    if (auto found = find_executable(argv0)) {
        detail[key::kPath] = found->path;
        detail[key::kMode] = found->mode;
    }
    emit(nlohmann::json{{key::kExecError, detail}}.dump(-1, ' ', false, kReplace),
         "exec " + argv0 + ": " + std::strerror(err));
}

void Status::not_enforced(std::string_view reason, const std::vector<std::string>& items) const {
    std::string text = "note: ";
    text.append(reason).append("; not enforced: ");
    for (std::size_t i = 0; i < items.size(); ++i) text.append(i ? ", " : "").append(items[i]);
    emit(nlohmann::json{{key::kNotEnforced, {{key::kReason, reason}, {key::kItems, items}}}}.dump(-1, ' ', false,
                                                                                                  kReplace),
         text);
}

std::size_t Status::denied(std::string_view op, std::string_view path, std::string_view address, long pid,
                           std::string_view program) const {
    nlohmann::json detail{{key::kOp, op}, {key::kPid, pid}, {key::kProgram, program}};
    if (!path.empty()) detail[key::kPath] = path;
    if (!address.empty()) detail[key::kAddress] = address;
    const std::string line = nlohmann::json{{key::kDenied, detail}}.dump(-1, ' ', false, kReplace);
    std::string text = "denied ";
    text.append(op).append(" ").append(path.empty() ? address : path);
    emit(line, text);
    return line.size() + 1;
}

std::size_t Status::room(std::size_t wanted) const {
    if (fd_ < 0) return wanted;
    int size = ::fcntl(fd_, F_GETPIPE_SZ);
    if (size < 0) return wanted;  // not a pipe
    if (static_cast<std::size_t>(size) < wanted && ::fcntl(fd_, F_SETPIPE_SZ, static_cast<int>(wanted)) > 0)
        size = ::fcntl(fd_, F_GETPIPE_SZ);
    return std::min(wanted, static_cast<std::size_t>(std::max(size, 0)));
}

void Status::denied_omitted(std::uint64_t count) const {
    emit(nlohmann::json{{key::kDeniedOmitted, count}}.dump(), "denied " + std::to_string(count) + " more operations");
}

}  // namespace sbx::helper
