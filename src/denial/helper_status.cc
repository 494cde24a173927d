#include "denial/helper_status.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wire/helper_wire.h"

namespace sbx {

namespace {

namespace key = wire::status;

// The string at key in object, if it is one.
std::optional<std::string> string_at(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

void read_exec_error(const nlohmann::json& x, HelperStatus& status) {
    ExecFailure f;
    f.argv0 = x.value(key::kArgv0, std::string());
    f.err = x.value(key::kErrno, 0);
    f.path = string_at(x, key::kPath);
    if (x.contains(key::kMode) && x[key::kMode].is_number_unsigned()) f.mode = x[key::kMode].get<unsigned>();
    status.exec = std::move(f);
}

void read_denied(const nlohmann::json& d, HelperStatus& status) {
    RecordedDenial r;
    r.op = d.value(key::kOp, std::string());
    r.path = d.value(key::kPath, std::string());
    r.address = d.value(key::kAddress, std::string());
    r.pid = d.value(key::kPid, 0L);
    r.program = d.value(key::kProgram, std::string());
    if (!r.op.empty()) status.denied.push_back(std::move(r));
}

void read_not_enforced(const nlohmann::json& n, HelperStatus& status) {
    status.not_enforced_reason = n.value(key::kReason, std::string());
    if (n.contains(key::kItems) && n[key::kItems].is_array())
        for (const auto& item : n[key::kItems])
            if (item.is_string()) status.not_enforced.push_back(item.get<std::string>());
}

// One line of the report, into status.
void read_line(const nlohmann::json& line, HelperStatus& status) {
    if (auto e = line.find(key::kError); e != line.end() && e->is_object()) {
        if (auto message = string_at(*e, key::kMessage)) status.error = std::move(message);
    }
    if (auto x = line.find(key::kExecError); x != line.end() && x->is_object()) read_exec_error(*x, status);
    if (auto d = line.find(key::kDenied); d != line.end() && d->is_object()) read_denied(*d, status);
    if (auto o = line.find(key::kDeniedOmitted); o != line.end() && o->is_number_unsigned())
        status.denied_omitted += o->get<std::uint64_t>();
    if (auto n = line.find(key::kNotEnforced); n != line.end() && n->is_object()) read_not_enforced(*n, status);
}

}  // namespace

HelperStatus parse_helper_status(std::string_view report) {
    HelperStatus status;
    std::size_t start = 0;
    while (start < report.size()) {
        std::size_t end = report.find('\n', start);
        if (end == std::string_view::npos) end = report.size();
        const nlohmann::json line = nlohmann::json::parse(report.substr(start, end - start), nullptr, false);
        start = end + 1;
        if (line.is_object()) read_line(line, status);
    }
    return status;
}

std::string describe_exec_failure(const ExecFailure& f, const CanonicalPolicy* policy, const std::string& cwd) {
    const std::string head = fmt::format("cannot run '{}': {}", f.argv0, std::strerror(f.err));
    if (f.err != EACCES || !f.path || !f.mode) return head;
    if (S_ISDIR(*f.mode)) return head + ": it is a directory";
    const std::string path = f.path->starts_with('/') ? *f.path : join_path(cwd, *f.path);
    if (policy != nullptr && policy->sandboxed_filesystem()) {
        const FsDecision d = decide_path(*policy, path);
        if (!d.access || *d.access == FsAccess::Deny)
            return d.entry ? fmt::format("{}: denied by the sandbox's entry {}", head, d.entry->rule)
                           : fmt::format("{}: the sandbox gives no access to {}", head, path);
    }
    if (S_ISREG(*f.mode) && (*f.mode & 0111) == 0)
        return fmt::format(
            "{}: its mode {:04o} has no execute permission (the file's, not the sandbox's); "
            "chmod +x {}, or run it through its interpreter",
            head, *f.mode & 07777, *f.path);
    return head;
}

}  // namespace sbx
