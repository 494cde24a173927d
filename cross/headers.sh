#!/bin/sh
# cross/headers.sh ROOT DIR: DIR holds links to the header-only dependencies'
# folders under ROOT (CLI, nlohmann, fmt, catch2) and nothing else, for the
# macOS cross build's -isystem (meson.build): ROOT itself (/usr/include) would
# put Linux's headers before the macOS SDK's.
set -eu
root=$1 dir=$2
mkdir -p "$dir"
for d in CLI nlohmann fmt catch2; do
    if [ ! -d "$root/$d" ]; then
        echo "sbx: cross/headers.sh: no $root/$d (install libcli11-dev nlohmann-json3-dev libfmt-dev catch2, or set sbx_header_root in the cross file)" >&2
        exit 1
    fi
    ln -sfn "$root/$d" "$dir/$d"
done
