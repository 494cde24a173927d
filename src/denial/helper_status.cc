#include "denial/helper_status.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sbx {

HelperStatus parse_helper_status(std::string_view report) {
    HelperStatus status;
    std::size_t start = 0;
    while (start < report.size()) {
        std::size_t end = report.find('\n', start);
        if (end == std::string_view::npos) end = report.size();
        const nlohmann::json line = nlohmann::json::parse(report.substr(start, end - start), nullptr, false);
        start = end + 1;
        if (!line.is_object()) continue;
        if (auto e = line.find("error");
            e != line.end() && e->is_object() && e->contains("message") && (*e)["message"].is_string()) {
            status.error = (*e)["message"].get<std::string>();
        }
        if (auto x = line.find("exec_error"); x != line.end() && x->is_object()) {
            ExecFailure f;
            f.argv0 = x->value("argv0", std::string());
            f.err = x->value("errno", 0);
            if (x->contains("path") && (*x)["path"].is_string()) f.path = (*x)["path"].get<std::string>();
            if (x->contains("mode") && (*x)["mode"].is_number_unsigned()) f.mode = (*x)["mode"].get<unsigned>();
            status.exec = std::move(f);
        }
        if (auto d = line.find("denied"); d != line.end() && d->is_object()) {
            RecordedDenial r;
            r.op = d->value("op", std::string());
            r.path = d->value("path", std::string());
            r.address = d->value("address", std::string());
            r.pid = d->value("pid", 0L);
            r.program = d->value("program", std::string());
            if (!r.op.empty()) status.denied.push_back(std::move(r));
        }
        if (auto o = line.find("denied_omitted"); o != line.end() && o->is_number_unsigned())
            status.denied_omitted += o->get<std::uint64_t>();
        if (auto n = line.find("not_enforced"); n != line.end() && n->is_object()) {
            status.not_enforced_reason = n->value("reason", std::string());
            if (n->contains("items") && (*n)["items"].is_array())
                for (const auto& item : (*n)["items"])
                    if (item.is_string()) status.not_enforced.push_back(item.get<std::string>());
        }
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
