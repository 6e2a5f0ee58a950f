#!/usr/bin/env bash
# A profile-guided release build of `lore` (BENCHMARKS.md, thirty-eighth round).
#
#   scripts/pgo-build.sh            # writes target/pgo/release/lore
#
# 1. builds an instrumented binary (its own target folder, target/pgo-generate);
# 2. trains it on a full `lore bench --scale 1` run (ingest, reads, edits, deletions) on a
#    database in the temp folder, which the run removes;
# 3. merges the profile with the toolchain's `llvm-profdata` (rustup's `llvm-tools` component:
#    the script adds it when it is missing) and builds the release binary with it.
#
# The plain `cargo build --release` stays the default build; this one is the same code and the
# same tests, only compiled with the profile's branch and call counts.
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
sysroot=$(rustc --print sysroot)
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [[ ! -x "$profdata" ]]; then
    echo "pgo-build: adding rustup's llvm-tools component (for llvm-profdata)" >&2
    rustup component add llvm-tools
fi
[[ -x "$profdata" ]] || { echo "pgo-build: no llvm-profdata at $profdata" >&2; exit 1; }

data=$(mktemp -d "${TMPDIR:-/tmp}/lore-pgo.XXXXXX")
trap 'rm -rf "$data"' EXIT

echo "pgo-build: 1/3 instrumented build" >&2
CARGO_TARGET_DIR=target/pgo-generate RUSTFLAGS="-Cprofile-generate=$data/raw" \
    cargo build --release -p lore-cli --locked

# The build scripts the instrumented build ran wrote profiles of their own: only the training's
# are kept.
rm -rf "$data/raw"
echo "pgo-build: 2/3 training on lore bench --scale 1" >&2
target/pgo-generate/release/lore bench --scale 1 > "$data/bench.txt"

echo "pgo-build: 3/3 optimized build" >&2
"$profdata" merge -o "$data/lore.profdata" "$data/raw"
CARGO_TARGET_DIR=target/pgo RUSTFLAGS="-Cprofile-use=$data/lore.profdata" \
    cargo build --release -p lore-cli --locked
echo "pgo-build: target/pgo/release/lore" >&2
