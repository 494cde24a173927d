// `sbx check`: whether a canonical policy allows one operation, and which rule
// decided.  Pure: the filesystem's answers come from Environment.
#pragma once

#include <string>

#include "policy/policy.h"

namespace sbx {

enum class Access { Read, Write, Exec, Connect };

struct Verdict {
    bool allowed = false;
    std::string subject;  // the resolved path, or host:port
    std::string rule;     // the rule that decided, in words
};

// target: a path (relative ones against env.cwd) or HOST:PORT for Connect.
// Throws Error on a malformed HOST:PORT.
Verdict check_access(const CanonicalPolicy&, Access, const std::string& target, const Environment&);

std::string_view to_string(Access);

}  // namespace sbx
