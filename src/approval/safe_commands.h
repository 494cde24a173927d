// Commands that `untrusted` runs without asking: plain readers that cannot
// write files, run other programs or change the system, whatever their
// arguments (or with the few dangerous options of each excluded).
#pragma once

#include <string>
#include <vector>

namespace sbx::approval {

// True for a known-safe argv.  argv[0] must be a bare name (a path such as
// ./ls or /tmp/ls is never known); a {bash, -lc, SCRIPT} form is safe when
// SCRIPT is plain (shell.h) and every command in it is safe.
bool is_known_safe_command(const std::vector<std::string>& argv);

}  // namespace sbx::approval
