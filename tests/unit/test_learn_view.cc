// The view of a learning run (linux-helper/learn_view.h): a mosaic of
// overlays on the host's directories with no mount below them.
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "learn_view.h"

using namespace sbx::helper;
using Kind = LearnItem::Kind;
using Type = HostEntry::Type;

namespace {

// A host of a few directories; a directory not listed is empty.
struct Host {
    std::map<std::string, std::vector<HostEntry>> dirs;
    std::vector<std::string> listed;
    std::vector<HostEntry> operator()(const std::string& dir) {
        listed.push_back(dir);
        const auto it = dirs.find(dir);
        return it == dirs.end() ? std::vector<HostEntry>{} : it->second;
    }
};

}  // namespace

TEST_CASE("learning view: one overlay where no mount is below, never on / itself") {
    Host host;
    host.dirs["/"] = {{"etc", Type::Directory}, {"proc", Type::Directory}, {"usr", Type::Directory}};
    CHECK(plan_learning_view({"/", "/proc", "/dev", "/dev/pts", "/sys/fs/cgroup"}, std::ref(host)) ==
          std::vector<LearnItem>{{Kind::Overlay, "/etc"}, {Kind::Overlay, "/usr"}});
    CHECK(host.listed == std::vector<std::string>{"/"});
}

TEST_CASE("learning view: directories on the way to a mount, an overlay beside and on it") {
    Host host;
    host.dirs["/"] = {{"usr", Type::Directory},   {"bin", Type::Symlink, "usr/bin"}, {"home", Type::Directory},
                      {"proc", Type::Directory},  {"dev", Type::Directory},          {"sys", Type::Directory},
                      {".dockerenv", Type::Other}};
    host.dirs["/home"] = {{"a", Type::Directory}, {"b", Type::Directory}};
    const auto items = plan_learning_view({"/", "/proc", "/home/b", "/dev/shm"}, std::ref(host));
    CHECK(items == std::vector<LearnItem>{{Kind::Overlay, "/usr"},
                                          {Kind::Symlink, "/bin", "usr/bin"},
                                          {Kind::Directory, "/home"},
                                          {Kind::Overlay, "/home/a"},
                                          {Kind::Overlay, "/home/b"},
                                          {Kind::ReadOnly, "/.dockerenv"}});
    // Only the directories with a mount below them were listed.
    CHECK(host.listed == std::vector<std::string>{"/", "/home"});
}

TEST_CASE("learning view: a mount below a mount") {
    Host host;
    host.dirs["/"] = {{"mnt", Type::Directory}};
    host.dirs["/mnt"] = {{"data", Type::Directory}};
    host.dirs["/mnt/data"] = {{"cache", Type::Directory}, {"x", Type::Other}};
    const auto items = plan_learning_view({"/mnt/data", "/mnt/data/cache"}, std::ref(host));
    CHECK(items == std::vector<LearnItem>{{Kind::Directory, "/mnt"},
                                          {Kind::Directory, "/mnt/data"},
                                          {Kind::Overlay, "/mnt/data/cache"},
                                          {Kind::ReadOnly, "/mnt/data/x"}});
}

TEST_CASE("learning view: the mount points of mountinfo, escapes undone") {
    const std::string mountinfo =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "23 22 0:5 / /proc rw - proc proc rw\n"
        "40 22 0:33 / /mnt/my\\040disk rw - tmpfs tmpfs rw\n"
        "41 22 0:34 / /mnt/back\\134slash rw - tmpfs tmpfs rw\n";
    CHECK(mount_points_of(mountinfo) == std::vector<std::string>{"/", "/proc", "/mnt/my disk", "/mnt/back\\slash"});
}

TEST_CASE("learning view: a user's tops, none inside another, each layered whole") {
    CHECK(learning_tops({"/home/u/proj", "/home/u", "/tmp", "/home/u", "/var/tmp"}) ==
          std::vector<std::string>{"/home/u", "/tmp", "/var/tmp"});
    Host host;
    host.dirs["/home/u"] = {{"proj", Type::Directory}, {"mnt", Type::Directory}};
    // /home/u/mnt is a mount: the home is a directory of the view, its other
    // entries layered; /var/tmp whole.
    CHECK(plan_learning_view({"/", "/home/u/mnt", "/var/tmp/other-user-mount/x"}, std::ref(host),
                             {"/home/u", "/home/u/proj", "/tmp"}) ==
          std::vector<LearnItem>{{Kind::Directory, "/home/u"},
                                 {Kind::Overlay, "/home/u/proj"},
                                 {Kind::Overlay, "/home/u/mnt"},
                                 {Kind::Overlay, "/tmp"}});
}
