// Signal sets by their members, and a set blocked for a while: what sbx's
// supervisor (both backends, exec/backend.h) and the helper's pid 1
// (linux-helper/process.cc) do with signal sets.  On Linux both read theirs
// through util/signal_fd.h.  POSIX, header only.
#pragma once

#include <signal.h>

#include <initializer_list>
#include <span>

namespace sbx {

// The set of these signals.
inline sigset_t signal_set(std::span<const int> signals) {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : signals) sigaddset(&set, sig);
    return set;
}
inline sigset_t signal_set(std::initializer_list<int> signals) {
    return signal_set(std::span<const int>(signals.begin(), signals.size()));
}

// Blocks set until destroyed, then restores the mask as it was.
class BlockedSignals {
public:
    explicit BlockedSignals(const sigset_t& set) { ::sigprocmask(SIG_BLOCK, &set, &old_); }
    ~BlockedSignals() { ::sigprocmask(SIG_SETMASK, &old_, nullptr); }
    BlockedSignals(const BlockedSignals&) = delete;
    BlockedSignals& operator=(const BlockedSignals&) = delete;

private:
    sigset_t old_;
};

}  // namespace sbx
