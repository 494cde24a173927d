// Ubuntu's AppArmor restriction of unprivileged user namespaces
// (kernel.apparmor_restrict_unprivileged_userns=1: Ubuntu 23.10 and later,
// GitHub's ubuntu-24.04 runners): whether it applies, whether sbx's profile
// for the helper (apparmor/sbx-helper.in: `userns` granted, unconfined
// otherwise) is loaded and covers this helper, and the fix that keeps the
// restriction for every other program.  The decision is pure, fed the
// files' contents (tests/unit/test_apparmor.cc); read_userns_facts() reads
// them.  Header-only: the helper links the policy module alone.
#pragma once

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sbx::apparmor {

// The profile's name, as /sys/kernel/security/apparmor/profiles and the
// helper's own label show it.
inline constexpr std::string_view kProfileName = "sbx-helper";
inline constexpr const char* kRestrictSysctl = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns";
inline constexpr const char* kProfilesList = "/sys/kernel/security/apparmor/profiles";

// What the files said; nullopt where a file is absent or unreadable.
struct UsernsFacts {
    std::optional<std::string> restrict_userns;  // the sysctl: "1" restricts
    std::optional<std::string> profiles;         // "name (mode)" a line; only root may read it
    std::optional<std::string> label;            // the helper's own (/proc/self/attr/current), when it asks
    std::optional<std::string> profile_text;     // the installed profile file
    // What else refuses user namespaces, where the restriction does not:
    std::optional<std::string> max_user_namespaces;        // /proc/sys/user/max_user_namespaces ("0": none)
    std::optional<std::string> unprivileged_userns_clone;  // Debian's kernel.unprivileged_userns_clone ("0": root only)
    std::optional<std::string> container;                  // what shows a container (platform/container.h sign)
};

enum class Known { Yes, No, Unknown };

struct UsernsRestriction {
    bool restricted = false;              // the sysctl reads 1
    Known loaded = Known::Unknown;        // the profile is in the kernel's list
    Known confined = Known::Unknown;      // the helper runs under it (its label)
    Known installed_covers = Known::No;   // the profile file attaches to this helper's path (No: no file)
    std::optional<std::string> attaches;  // the path the installed file attaches to
    std::string unrestricted_fix;         // without the restriction: the fix for what refuses them
};

// Without AppArmor's restriction: the fix for what refuses user namespaces,
// as far as the facts tell (a sysctl, a container's seccomp profile).
inline std::string unrestricted_userns_fix(const UsernsFacts& facts) {
    auto is_zero = [](const std::optional<std::string>& value) {
        return value && std::string_view(*value).substr(0, value->find_first_of(" \n")) == "0";
    };
    if (is_zero(facts.max_user_namespaces))
        return "allow user namespaces, which user.max_user_namespaces=0 turns off for everyone (sysctl "
               "user.max_user_namespaces=15000)";
    if (is_zero(facts.unprivileged_userns_clone))
        return "allow unprivileged user namespaces, which kernel.unprivileged_userns_clone=0 keeps to root (sysctl "
               "kernel.unprivileged_userns_clone=1)";
    if (facts.container)
        return "sbx runs in a container (" + *facts.container +
               ") whose seccomp profile or capabilities refuse new namespaces: give the container a seccomp profile "
               "that allows unshare and clone of user namespaces (Docker's default allows them only with "
               "CAP_SYS_ADMIN; the rest of it can stay) and, under AppArmor, a profile that allows mount";
    return "find what refuses unprivileged user namespaces here (sbx doctor tells what it sees)";
}

// The first word of a label or a profiles line: "sbx-helper (unconfined)" ->
// "sbx-helper"; "unconfined" -> "unconfined".
inline std::string_view label_name(std::string_view line) {
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\0')) line.remove_suffix(1);
    const auto paren = line.find(" (");
    return paren == std::string_view::npos ? line : line.substr(0, paren);
}

// A label or profile name that is sbx's profile, alone or stacked
// ("sbx-helper//&unprivileged_userns").
inline bool is_sbx_profile(std::string_view name) {
    return name == kProfileName ||
           (name.size() > kProfileName.size() && name.substr(0, kProfileName.size()) == kProfileName &&
            (name.substr(kProfileName.size(), 2) == "//"));
}

// The attachment of "profile sbx-helper PATH flags=(...) {" in a profile
// file: PATH (unquoted), or nullopt without such a line.
inline std::optional<std::string> profile_attachment(std::string_view text) {
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
        const std::string prefix = "profile " + std::string(kProfileName) + " ";
        if (line.substr(0, prefix.size()) != prefix) continue;
        line.remove_prefix(prefix.size());
        while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (!line.empty() && line.front() == '"') {
            const auto close = line.find('"', 1);
            if (close == std::string_view::npos) return std::nullopt;
            return std::string(line.substr(1, close - 1));
        }
        const auto stop = line.find_first_of(" \t{");
        return std::string(line.substr(0, stop));
    }
    return std::nullopt;
}

inline UsernsRestriction assess(const UsernsFacts& facts, std::string_view helper_path) {
    UsernsRestriction r;
    r.restricted = facts.restrict_userns && label_name(*facts.restrict_userns) == "1";
    if (!r.restricted) r.unrestricted_fix = unrestricted_userns_fix(facts);
    if (facts.profiles) {
        r.loaded = Known::No;
        std::string_view list = *facts.profiles;
        std::size_t at = 0;
        while (at < list.size()) {
            const std::size_t end = std::min(list.find('\n', at), list.size());
            const std::string_view name = label_name(list.substr(at, end - at));
            if (name == kProfileName || name == helper_path) r.loaded = Known::Yes;
            at = end + 1;
        }
    }
    if (facts.label) r.confined = is_sbx_profile(label_name(*facts.label)) ? Known::Yes : Known::No;
    if (r.confined == Known::Yes) r.loaded = Known::Yes;
    if (facts.profile_text) {
        r.attaches = profile_attachment(*facts.profile_text);
        r.installed_covers = r.attaches && *r.attaches == helper_path ? Known::Yes : Known::No;
    }
    return r;
}

// The fix for user namespaces refused to the helper at helper_path, whose
// profile file is profile_file: without the restriction, the generic one;
// with it, the profile first (it keeps the restriction for every other
// program), the sysctl only last.
inline std::string userns_fix(const UsernsRestriction& r, std::string_view helper_path, std::string_view profile_file) {
    if (!r.restricted) return r.unrestricted_fix;
    const std::string file(profile_file), helper(helper_path), name(kProfileName);
    const std::string sysctl_last =
        " (lifting the restriction, sysctl kernel.apparmor_restrict_unprivileged_userns=0, would lift it "
        "for every program)";
    const std::string restricted =
        "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)";
    if (r.confined == Known::Yes)
        return restricted + " and refuses them to this helper under its profile " + name + ": check that " + file +
               " grants 'userns,' and load it again: sudo apparmor_parser -r " + file + sysctl_last;
    if (r.installed_covers == Known::No && r.attaches)
        return restricted + "; " + file + " attaches to " + *r.attaches + ", not to this helper " + helper + ": put " +
               helper + " in it and load it: sudo apparmor_parser -r " + file + sysctl_last;
    if (r.loaded == Known::Yes)
        return restricted + "; the profile " + name + " is loaded but does not cover " + helper +
               " (it attaches by path): name " + helper + " in " + file +
               " and load it again: sudo apparmor_parser -r " + file + sysctl_last;
    const std::string install = r.installed_covers == Known::Yes
                                    ? ""
                                    : " (installed by sbx's Debian package and by meson install; the release "
                                      "archive holds it in share/sbx/apparmor)";
    return restricted + (r.loaded == Known::No ? " and sbx's profile " + name + " is not loaded" : "") +
           ": allow them to this helper alone by loading its profile: sudo apparmor_parser -r " + file + install +
           sysctl_last;
}

// A small file's contents, or nullopt (absent, unreadable, or empty where a
// read fails).
inline std::optional<std::string> read_text(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string text;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > (1u << 20)) break;
    }
    ::close(fd);
    return text;
}

// The facts of this machine; the caller's own label when own_label (the
// helper asks about itself; sbx, which is not the helper, does not); the
// container is the caller's finding.
inline UsernsFacts read_userns_facts(const char* profile_file, bool own_label,
                                     std::optional<std::string> container = std::nullopt) {
    UsernsFacts facts;
    facts.max_user_namespaces = read_text("/proc/sys/user/max_user_namespaces");
    facts.unprivileged_userns_clone = read_text("/proc/sys/kernel/unprivileged_userns_clone");
    facts.container = std::move(container);
    facts.restrict_userns = read_text(kRestrictSysctl);
    if (!facts.restrict_userns || label_name(*facts.restrict_userns) != "1") return facts;
    facts.profiles = read_text(kProfilesList);
    if (own_label) {
        // The AppArmor-specific file where LSMs are stacked (Linux 5.8 and
        // later), else the shared one.
        facts.label = read_text("/proc/self/attr/apparmor/current");
        if (!facts.label) facts.label = read_text("/proc/self/attr/current");
    }
    facts.profile_text = read_text(profile_file);
    return facts;
}

// The fix for the helper itself, which is refused user namespaces: its own
// path and label.  With only_if_restricted, empty without the restriction.
// Keeps errno.
inline std::string userns_fix_for_this_helper(const char* profile_file, bool only_if_restricted = false,
                                              std::optional<std::string> container = std::nullopt) {
    const int saved = errno;
    std::string self(PATH_MAX, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size());
    self.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    const UsernsRestriction r = assess(read_userns_facts(profile_file, true, std::move(container)), self);
    std::string fix = only_if_restricted && !r.restricted ? std::string() : userns_fix(r, self, profile_file);
    errno = saved;
    return fix;
}

}  // namespace sbx::apparmor
