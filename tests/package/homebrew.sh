#!/usr/bin/env bash
# The Homebrew formula as a release makes it: scripts/source-archive's
# tarball of HEAD and packaging/homebrew/sbx.rb.in rendered with its URL and
# sha256.  Checked on Linux: the tarball is HEAD's tree in one directory
# sbx-VERSION/, made again it has the same bytes (what a formula's sha256
# needs), it configures with the formula's meson arguments; the formula is
# valid Ruby (ruby -c; SKIP without ruby), names the tarball's URL, version
# and sha256, and its dependencies are the macOS build's (meson.build).  The
# formula is loaded by Ruby against a stand-in for Homebrew's Formula class
# that records what it declares and what its install method runs; its test
# block and the build itself only run on a Mac, and never have
# (docs/homebrew.md).  TAP on stdout.
# Usage: tests/package/homebrew.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/integration/lib.sh"
cd "$root" || exit 1

d=$(scratch)
version=$(meson introspect --projectinfo meson.build | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
name=sbx-$version
url_base=file:///releases/v$version  # any base: the formula must name it
ok "scripts/source-archive makes $name.tar.gz, its sha256 and sbx.rb" \
    env SBX_RELEASE_URL="$url_base" SBX_HOMEPAGE=https://example.org/sbx scripts/source-archive "$d/out"
tarball=$d/out/$name.tar.gz formula=$d/out/sbx.rb
ok "its sha256 file checks the tarball" sh -c "cd '$d/out' && sha256sum -c --quiet $name.tar.gz.sha256"
is "the tarball holds HEAD's files in $name/" \
    "$(git ls-tree -r --name-only HEAD | sed "s|^|$name/|")" \
    "$(tar -tzf "$tarball" | grep -v '/$' | LC_ALL=C sort)"
ok "made again from HEAD, it has the same bytes" sh -c \
    "scripts/source-archive '$d/again' >/dev/null 2>&1 && cmp '$tarball' '$d/again/$name.tar.gz'"
# Read as text (no Ruby needed): the lines a release fills in.
is "the formula's url and sha256 lines name the tarball at SBX_RELEASE_URL and its sha256" \
    "  url \"$url_base/$name.tar.gz\"|  sha256 \"$(sha256sum "$tarball" | cut -d' ' -f1)\"" \
    "$(grep -E '^  (url|sha256) ' "$formula" | paste -sd'|')"

if command -v ruby >/dev/null; then
    ok "packaging/homebrew/sbx.rb.in is valid Ruby (ruby -c)" ruby -c packaging/homebrew/sbx.rb.in
    ok "the rendered formula is valid Ruby (ruby -c)" ruby -c "$formula"
    # A stand-in for Homebrew's Formula: the class methods the formula calls
    # record their arguments, and install's `system` records each command.
    cat >"$d/stand-in.rb" <<'RUBY'
require "json"
class Formula
  DECLARED = { "depends_on" => [] }
  class << self
    %w[desc homepage url sha256 license].each do |m|
      define_method(m) { |value| DECLARED[m] = value }
    end
    def depends_on(spec)
      spec = spec.to_a.first if spec.is_a?(Hash)
      name, kind = spec.is_a?(Array) ? spec : [spec, :run]
      DECLARED["depends_on"] << { "name" => name.to_s, "kind" => kind.to_s, "symbol" => name.is_a?(Symbol) }
    end
    def test(&block)
      DECLARED["test"] = !block.nil?
    end
  end
  def std_meson_args
    ["--prefix=#{ENV.fetch("PREFIX")}", "--libdir=#{ENV.fetch("PREFIX")}/lib", "--buildtype=release", "--wrap-mode=nofallback"]
  end
  def system(*argv)
    (DECLARED["install"] ||= []) << argv
  end
end
load ARGV.fetch(0)
Sbx.new.install
puts JSON.generate(Formula::DECLARED)
RUBY
    if PREFIX=$d/prefix ruby "$d/stand-in.rb" "$formula" >"$d/declared.json" 2>"$d/load.log"; then
        _tap_result ok "the formula loads as class Sbx < Formula and its install method runs (stand-in Formula)"
    else
        _tap_result fail "the formula loads as class Sbx < Formula and its install method runs (stand-in Formula)" "$(cat "$d/load.log")"
    fi
    declared() { python3 -c "import json, sys; d = json.load(open('$d/declared.json')); $1" 2>&1; }
    is "its url is SBX_RELEASE_URL/$name.tar.gz (the version meson.build's project() says)" \
        "$url_base/$name.tar.gz" "$(declared 'print(d["url"])')"
    is "its sha256 is the tarball's" "$(sha256sum "$tarball" | cut -d' ' -f1)" "$(declared 'print(d["sha256"])')"
    is "its license is meson.build's" \
        "$(sed -n "s/^ *license *: *'\\([^']*\\)'.*/\\1/p" meson.build | head -n 1)" \
        "$(declared 'print(d["license"])')"
    is "it has a test block" True "$(declared 'print(d.get("test"))')"
    # Homebrew's name of each library, and meson's (dependency('NAME') in
    # meson.build's native branch; its Linux-only ones are in linux-helper/).
    # Not catch2: the tests are disabled (Homebrew's Catch2 is 3, they need 2).
    is "its libraries are the macOS build's meson dependencies but catch2, each at build time only" \
        "$(meson introspect --scan-dependencies meson.build | python3 -c '
import json, sys
print(sorted({d["name"] for d in json.load(sys.stdin) if d["name"] != "catch2"}))')" \
        "$(declared '
meson_name = {"cli11": "CLI11", "fmt": "fmt", "nlohmann-json": "nlohmann_json"}
tools = {"meson", "ninja", "pkg-config"}
libs = [x for x in d["depends_on"] if not x["symbol"] and x["name"] not in tools]
assert all(x["kind"] == "build" for x in libs), libs
print(sorted(meson_name.get(x["name"], "unknown formula " + x["name"]) for x in libs))')"
    is "its build tools are meson, ninja and pkg-config; it needs macOS" "['meson', 'ninja', 'pkg-config'] ['macos']" \
        "$(declared '
tools = sorted(x["name"] for x in d["depends_on"] if x["name"] in ("meson", "ninja", "pkg-config") and x["kind"] == "build")
print(tools, [x["name"] for x in d["depends_on"] if x["symbol"]])')"
    is "install runs meson setup (-Dtests=disabled and Homebrew's arguments), compile, install" \
        "setup build -Dtests=disabled --prefix=$d/prefix|compile -C build --verbose|install -C build" \
        "$(declared 'print("|".join(" ".join(c[1:5 if c[1] == "setup" else None]) for c in d["install"]))')"
    # What can be run here: the tarball configures with those arguments
    # (meson setup alone, on Linux: the tarball has every file meson reads).
    setup_args=$(declared 'print("\n".join(c for c in d["install"][0][1:]))')
    mkdir -p "$d/src" && tar -xzf "$tarball" -C "$d/src"
    if (cd "$d/src/$name" && mapfile -t args <<<"$setup_args" && meson "${args[@]}") >"$d/setup.log" 2>&1; then
        _tap_result ok "the tarball configures with the formula's meson setup arguments (on Linux)"
    else
        _tap_result fail "the tarball configures with the formula's meson setup arguments (on Linux)" "$(tail -n 20 "$d/setup.log")"
    fi
else
    for c in "packaging/homebrew/sbx.rb.in is valid Ruby" "the rendered formula is valid Ruby" \
        "the formula loads and its install method runs" "its url, sha256, license, test block" \
        "its dependencies" "its install method's commands" "the tarball configures with them"; do
        skip "$c" "no ruby (Debian: apt-get install ruby)"
    done
fi
done_testing
