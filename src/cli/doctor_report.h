// What sbx doctor shows on either platform (doctor.cc, doctor_macos.cc):
// the platform's facts, then a live probe per mode and the verdict.  Only
// the facts differ between the platforms; the rest is printed here.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/probes.h"

namespace sbx::cli {

struct DoctorReport {
    nlohmann::json facts;    // --json's keys besides "probes" and "enforced"
    std::string facts_text;  // the text form's lines before the probes
    std::vector<probes::Probe> probes;
};

// Prints the report as JSON or as text; returns doctor's exit status: 0
// when every probe found its mode enforced, else 1.
int print_doctor_report(const DoctorReport& report, bool json);

}  // namespace sbx::cli
