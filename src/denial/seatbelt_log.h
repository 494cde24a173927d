// Seatbelt's denials, as macOS's unified log reports them (`log stream`),
// read into the same Denial records as Linux's audit and recorder
// (denial/denial.h).  Pure: the lines are parsed here and tested on Linux;
// only the `log` process that produces them runs on a Mac.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "denial/denial.h"

namespace sbx {

// The argv of the `log stream` that follows the sandbox's violations:
// Seatbelt's kernel messages ("Sandbox: NAME(PID) deny(N) OPERATION
// TARGET"), one a line in the compact style.
std::vector<std::string> seatbelt_log_argv();

// The denials on the lines of `text` made by the processes in `pids` (this
// run's; empty: any process).  A line is one when it holds
// "Sandbox: NAME(PID) deny(N) OPERATION" and, after it, the target: a path
// (operation file-*), an address ("1.2.3.4:443", "*:53", a socket's path
// for network-*), or another process (signal, process-*: "target"); other
// lines (System Policy denials, allows, reports of other subsystems) are
// skipped.  The same operation on the same target is listed once.
std::vector<Denial> seatbelt_denials(std::string_view text, const std::set<long>& pids);

}  // namespace sbx
