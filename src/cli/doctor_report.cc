// The part of sbx doctor both platforms print (cli/doctor_report.h).
#include "cli/doctor_report.h"

#include <fmt/core.h>

namespace sbx::cli {

int print_doctor_report(const DoctorReport& report, bool json) {
    bool all = true;
    for (const auto& p : report.probes) all = all && p.enforced;
    if (json) {
        nlohmann::json doc = report.facts;
        doc["probes"] = nlohmann::json::array();
        for (const auto& p : report.probes) doc["probes"].push_back(probes::to_json(p));
        doc["enforced"] = all;
        fmt::print("{}\n", doc.dump(2));
    } else {
        fmt::print("{}", report.facts_text);
        for (const auto& p : report.probes) fmt::print("{}", probes::to_text(p));
        fmt::print("{}\n", all ? "every mode is enforced" : "some modes are NOT enforced");
    }
    return all ? 0 : 1;
}

}  // namespace sbx::cli
