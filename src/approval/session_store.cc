#include "approval/session_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/core.h>

#include "util/error.h"
#include "util/fd.h"
#include "util/path.h"
#include "util/private_dirs.h"
#include "util/replace_file.h"

namespace sbx::approval {
namespace {

using nlohmann::json;

// Holds flock(LOCK_EX) on an open file until destroyed.
class FileLock {
public:
    explicit FileLock(int fd) : fd_(fd) {}
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    ~FileLock() { ::flock(fd_, LOCK_UN); }

private:
    int fd_;
};

std::string errno_text(int err) { return std::strerror(err); }

// The whole file, or nullopt when it does not exist.
std::optional<std::string> read_whole(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
        if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
        throw Error(fmt::format("session file {}: cannot open: {}", path, errno_text(errno)));
    }
    std::string data;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(fmt::format("session file {}: cannot read: {}", path, errno_text(errno)));
        }
        if (n == 0) break;
        data.append(buf, static_cast<std::size_t>(n));
    }
    return data;
}

}  // namespace

std::vector<ApprovalKey> parse_session_store(const std::string& text, const std::string& path) {
    auto corrupt = [&](const std::string& what) {
        return Error(
            fmt::format("session file {} is corrupt: {}; fix it or delete it to forget its approvals", path, what));
    };
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception&) {  // parse_error, and out_of_range for huge numbers
        throw corrupt("not valid JSON");
    }
    if (!doc.is_object()) throw corrupt("expected an object");
    if (!doc.contains("version") || doc["version"] != 1) throw corrupt("expected \"version\": 1");
    if (!doc.contains("approvals") || !doc["approvals"].is_array()) throw corrupt("expected an \"approvals\" array");
    std::vector<ApprovalKey> keys;
    std::size_t index = 0;
    for (const auto& entry : doc["approvals"]) {
        ++index;
        auto bad = [&](const char* what) { return corrupt(fmt::format("approval {}: {}", index, what)); };
        if (!entry.is_object()) throw bad("expected an object");
        ApprovalKey key;
        if (entry.contains("network")) {
            const auto& n = entry["network"];
            if (entry.size() != 1 || !n.is_object() || n.size() != 2 || !n.contains("host") || !n["host"].is_string() ||
                n["host"].get<std::string>().empty() || !n.contains("port") || !n["port"].is_number_unsigned() ||
                n["port"].get<std::uint64_t>() == 0 || n["port"].get<std::uint64_t>() > 65535)
                throw bad("a network approval is {\"network\": {\"host\": NAME, \"port\": 1..65535}} alone");
            key.network = NetworkTarget{n["host"].get<std::string>(), n["port"].get<std::uint16_t>()};
            keys.push_back(std::move(key));
            continue;
        }
        if (!entry.contains("command") || !entry["command"].is_array())
            throw bad("\"command\" must be an array of strings");
        for (const auto& w : entry["command"]) {
            if (!w.is_string()) throw bad("\"command\" must be an array of strings");
            key.command.push_back(w.get<std::string>());
        }
        if (!entry.contains("cwd") || !entry["cwd"].is_string()) throw bad("\"cwd\" must be a string");
        key.cwd = entry["cwd"].get<std::string>();
        if (!entry.contains("policy") || !entry["policy"].is_object()) throw bad("\"policy\" must be an object");
        key.policy = entry["policy"];
        if (!entry.contains("unsandboxed") || !entry["unsandboxed"].is_boolean())
            throw bad("\"unsandboxed\" must be true or false");
        key.unsandboxed = entry["unsandboxed"].get<bool>();
        keys.push_back(std::move(key));
    }
    return keys;
}

nlohmann::json to_json(const ApprovalKey& k) {
    if (k.network) return json{{"network", {{"host", k.network->host}, {"port", k.network->port}}}};
    return json{{"command", k.command}, {"cwd", k.cwd}, {"policy", k.policy}, {"unsandboxed", k.unsandboxed}};
}

bool MemorySessionStore::contains(const ApprovalKey& key) const {
    return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

void MemorySessionStore::add(const ApprovalKey& key) {
    if (!contains(key)) keys_.push_back(key);
}

FileSessionStore::FileSessionStore(std::string path) : path_(std::move(path)), lock_path_(path_ + ".lock") {
    // Read once, now, before anything runs: a corrupt file refuses, and
    // nothing the command writes while it runs is ever consulted.
    keys_ = load_locked();
}

std::vector<ApprovalKey> FileSessionStore::load_locked() const {
    // Writers replace the file by rename, so a read without the lock sees
    // either the old or the new version, never a mix.
    const auto text = read_whole(path_);
    if (!text) return {};
    return parse_session_store(*text, path_);
}

bool FileSessionStore::contains(const ApprovalKey& key) const {
    return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

void FileSessionStore::add(const ApprovalKey& key) {
    const std::string dir = parent_path(path_);
    make_private_directories(dir, "--session");
    Fd lock_fd(::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!lock_fd.valid()) throw Error(fmt::format("session lock {}: cannot open: {}", lock_path_, errno_text(errno)));
    while (::flock(lock_fd.get(), LOCK_EX) != 0) {
        if (errno != EINTR) throw Error(fmt::format("session lock {}: cannot lock: {}", lock_path_, errno_text(errno)));
    }
    FileLock held(lock_fd.get());

    if (std::find(keys_.begin(), keys_.end(), key) == keys_.end()) keys_.push_back(key);
    auto keys = load_locked();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
    keys.push_back(key);
    json doc{{"version", 1}, {"approvals", json::array()}};
    for (const auto& k : keys) doc["approvals"].push_back(to_json(k));
    const std::string text = doc.dump(2) + "\n";

    replace_file(path_, text, 0600, "session file");
}

void check_session_name(const std::string& name) {
    auto bad = [&](const char* why) {
        return Error(fmt::format("--session: bad name '{}': {} (use letters, digits, '-', '_', '.')", name, why));
    };
    if (name.empty()) throw bad("it is empty");
    if (name.size() > 128) throw bad("it is longer than 128 bytes");
    if (name == "." || name == "..") throw bad("it is not a file name");
    if (name.front() == '.' || name.front() == '-') throw bad("it starts with '.' or '-'");
    for (const unsigned char c : name) {
        if (c == '/') throw bad("it contains '/'");
        if (c < 0x20 || c == 0x7f) throw bad("it contains a control character");
    }
}

std::string sessions_directory() {
    // No passwd lookup: sbx is a static executable, and glibc's NSS would
    // load shared modules into it.
    const std::string state = sbx_state_directory(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
    if (state.empty()) throw Error("--session: HOME is not an absolute directory; set HOME or XDG_STATE_HOME");
    return state + "/sessions";
}

namespace {

// dir with the symlinks of its longest existing part resolved (the rest
// appended as it is): where the store's files would be.
std::string real_directory(const std::string& dir) {
    std::string existing = dir, rest;
    for (;;) {
        std::unique_ptr<char, decltype(&std::free)> real(::realpath(existing.c_str(), nullptr), &std::free);
        if (real) return rest.empty() ? std::string(real.get()) : join_path(real.get(), rest);
        if (existing == "/" || existing.empty()) return dir;
        const std::string name = base_name(existing);
        rest = rest.empty() ? name : name + "/" + rest;
        existing = parent_path(existing);
    }
}

}  // namespace

std::unique_ptr<SessionStore> open_session_store(const std::optional<std::string>& name,
                                                 const std::vector<std::string>& writable_roots) {
    if (!name) return std::make_unique<MemorySessionStore>();
    check_session_name(*name);
    const std::string dir = sessions_directory();
    const std::string real = real_directory(dir);
    for (const auto& root : writable_roots) {
        if (path_within(real, root))
            throw Error(fmt::format(
                "--session: the session store {} lies in {}, which the sandboxed command may write, so it could "
                "approve itself; set XDG_STATE_HOME to a directory outside every writable root",
                real, root));
    }
    return std::make_unique<FileSessionStore>(dir + "/" + *name + ".json");
}

}  // namespace sbx::approval
