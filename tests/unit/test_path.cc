#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "util/path.h"

using namespace sbx;

TEST_CASE("path: join_path normalises lexically") {
    CHECK(join_path("/a", "b/./c/../d") == "/a/b/d");
    CHECK(join_path("/a/b", "/x//y/") == "/x/y");  // an absolute rel replaces the base
    CHECK(join_path("/", "..") == "/");
    CHECK(join_path("/a", "../../..") == "/");
    CHECK(join_path("/", ".") == "/");
}

TEST_CASE("path: child, parent and base name") {
    CHECK(child_path("/", "x") == "/x");
    CHECK(child_path("/a", "x") == "/a/x");
    CHECK(parent_path("/a/b") == "/a");
    CHECK(parent_path("/a") == "/");
    CHECK(parent_path("/") == "/");
    CHECK(parent_path("name") == "/");
    CHECK(base_name("/a/b/c") == "c");
    CHECK(base_name("c") == "c");
    CHECK(base_name("/") == "");
    CHECK(base_name("/a/") == "");
}

TEST_CASE("path: containment is component-wise") {
    CHECK(path_within("/a/b", "/a/b"));
    CHECK(path_within("/a/b/c", "/a/b"));
    CHECK_FALSE(path_within("/a/bc", "/a/b"));
    CHECK_FALSE(path_within("/a", "/a/b"));
    CHECK(path_within("/anything", "/"));
    CHECK(path_within("/", "/"));
    CHECK_FALSE(path_within("relative", "/"));
    CHECK(path_below("/a/b/c", "/a/b"));
    CHECK_FALSE(path_below("/a/b", "/a/b"));
    CHECK_FALSE(path_below("/", "/"));
    CHECK(path_below("/x", "/"));
}

TEST_CASE("path: components, depth and the PATH search") {
    std::vector<std::string> parts;
    for_each_component("/a//./b/../c/", [&](std::string_view p) { parts.emplace_back(p); });
    CHECK(parts == std::vector<std::string>{"a", "b", "..", "c"});
    parts.clear();
    for_each_component("/a/b/c", [&](std::string_view p) {
        parts.emplace_back(p);
        return p != "b";  // stops after b
    });
    CHECK(parts == std::vector<std::string>{"a", "b"});
    CHECK(path_depth("/") == 0);
    CHECK(path_depth("/a/b") == 2);
    CHECK(exec_candidates("./x", "/bin") == std::vector<std::string>{"./x"});
    CHECK(exec_candidates("ls", "/usr/bin::/bin") == std::vector<std::string>{"/usr/bin/ls", "./ls", "/bin/ls"});
    CHECK(exec_candidates("", "/bin").empty());
}

TEST_CASE("path: sbx's state directory") {
    CHECK(sbx_state_directory("/s/", "/h") == "/s/sbx");
    CHECK(sbx_state_directory("relative", "/h//u") == "/h/u/.local/state/sbx");
    CHECK(sbx_state_directory(nullptr, "/h") == "/h/.local/state/sbx");
    CHECK(sbx_state_directory("", "x").empty());
    CHECK(sbx_state_directory(nullptr, nullptr).empty());
}
