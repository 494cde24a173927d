// approved_for_session answers: in memory for this run, or persisted in
// $XDG_STATE_HOME/sbx/sessions/NAME.json (--session NAME), safe under
// concurrent sbx processes (flock on NAME.json.lock around every
// read-modify-write; the file itself is replaced atomically by rename).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "approval/types.h"

namespace sbx::approval {

// What an approval is for: this argv, in this cwd, under this canonical
// policy, run with or without the sandbox.  An approval to run a command
// under the sandbox never answers a request to run it without one.  Or,
// with `network` set and nothing else: connections to that host and port
// (ApprovalKind::Network), from any command of the session.
struct ApprovalKey {
    std::vector<std::string> command;
    std::string cwd;
    nlohmann::json policy;  // canonical JSON
    bool unsandboxed = false;
    std::optional<NetworkTarget> network{};
    bool operator==(const ApprovalKey&) const = default;
};

nlohmann::json to_json(const ApprovalKey&);

class SessionStore {
public:
    virtual ~SessionStore() = default;
    virtual bool contains(const ApprovalKey&) const = 0;
    virtual void add(const ApprovalKey&) = 0;
    // True when contains() is known to answer false for every key, so that a
    // caller may skip building keys; false when it cannot tell cheaply.
    virtual bool known_empty() const { return false; }
};

// For this run only.
class MemorySessionStore final : public SessionStore {
public:
    bool contains(const ApprovalKey&) const override;
    void add(const ApprovalKey&) override;
    bool known_empty() const override { return keys_.empty(); }

private:
    std::vector<ApprovalKey> keys_;
};

// One JSON file:
//   {"version": 1, "approvals": [{"command": [...], "cwd": "...",
//     "policy": {...}, "unsandboxed": false},
//     {"network": {"host": "...", "port": N}}, ...]}
// Opening reads and checks it, once: a corrupt file throws Error (and is
// never rewritten), and contains() answers from what was read then (and
// what this run added), never from what the command may have written to the
// file since.  add() merges into the file as it is now, under the lock.
class FileSessionStore final : public SessionStore {
public:
    explicit FileSessionStore(std::string path);
    bool contains(const ApprovalKey&) const override;
    void add(const ApprovalKey&) override;
    const std::string& path() const { return path_; }

private:
    std::vector<ApprovalKey> load_locked() const;  // the caller holds the lock
    std::string path_;
    std::string lock_path_;
    std::vector<ApprovalKey> keys_;  // read when opened, plus this run's
};

// Pure: the approvals in a session file's text (the format above).  Throws
// Error("session file PATH is corrupt: ...") on anything else.
std::vector<ApprovalKey> parse_session_store(const std::string& text, const std::string& path);

// A session name is a safe file name: 1..128 bytes, printable, no '/', not
// "." or "..", not starting with '.' or '-'.  Throws Error otherwise.
void check_session_name(const std::string& name);

// $XDG_STATE_HOME/sbx/sessions (when it is absolute), else
// $HOME/.local/state/sbx/sessions; neither set is an Error.
std::string sessions_directory();

// The store for --session NAME (created directories 0700), or an in-memory
// one without it.  Refused (Error) when the store's directory, symlinks
// resolved, lies in one of `writable_roots`: the command could write its own
// approvals there.
std::unique_ptr<SessionStore> open_session_store(const std::optional<std::string>& name,
                                                 const std::vector<std::string>& writable_roots = {});

}  // namespace sbx::approval
