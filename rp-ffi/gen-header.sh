#!/usr/bin/env bash
# Regenerates include/rp.h from rp-ffi/src with the pinned cbindgen.
#
#   rp-ffi/gen-header.sh          write include/rp.h
#   rp-ffi/gen-header.sh --check  fail, showing the diff, if include/rp.h is stale
#
# The header is committed, so its text must not depend on who generated it:
# the cbindgen version is pinned. When the cbindgen on PATH is another
# version, the pinned one is installed under the workspace target directory
# (never over the user's own).
set -euo pipefail

readonly CBINDGEN_VERSION=0.29.4

ffi_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$ffi_dir/.." && pwd)"
header="$root/include/rp.h"

mode=write
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  *)
    echo "usage: $0 [--check]" >&2
    exit 2
    ;;
esac

cbindgen_version() {
  "$1" --version 2>/dev/null | awk '{ print $2 }'
}

find_cbindgen() {
  if command -v cbindgen >/dev/null && [[ "$(cbindgen_version cbindgen)" == "$CBINDGEN_VERSION" ]]; then
    command -v cbindgen
    return
  fi
  local target_dir tool_root
  target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
  tool_root="$target_dir/tools/cbindgen-$CBINDGEN_VERSION"
  if [[ ! -x "$tool_root/bin/cbindgen" ]]; then
    echo "gen-header: installing cbindgen $CBINDGEN_VERSION into $tool_root" >&2
    cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --root "$tool_root" --quiet >&2
  fi
  echo "$tool_root/bin/cbindgen"
}

cbindgen="$(find_cbindgen)"

generate() {
  "$cbindgen" --config "$ffi_dir/cbindgen.toml" --crate rp-ffi --output "$1" "$ffi_dir"
}

if [[ "$mode" == write ]]; then
  mkdir -p "$(dirname "$header")"
  generate "$header"
  echo "gen-header: wrote $header"
else
  fresh="$(mktemp)"
  trap 'rm -f "$fresh"' EXIT
  generate "$fresh"
  if ! diff -u --label "include/rp.h (committed)" --label "include/rp.h (generated)" "$header" "$fresh"; then
    echo "gen-header: include/rp.h is stale; run rp-ffi/gen-header.sh and commit the result" >&2
    exit 1
  fi
  echo "gen-header: include/rp.h is up to date"
fi
