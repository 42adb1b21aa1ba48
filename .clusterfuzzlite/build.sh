#!/bin/bash -eu
# Builds every fuzz target of ge-conformance for ClusterFuzzLite / OSS-Fuzz and packs the seed
# corpus each target gets from the case tables, with the dictionary written from the options
# table. Runs inside the image of the Dockerfile beside it, from $SRC/ge-conformance; the
# builder sets $OUT and the sanitizer flags.
cd "$SRC/ge-conformance"

# The fuzz targets, with the builder's sanitizer (address) and optimisations.
cargo fuzz build -O --fuzz-dir fuzz
release=fuzz/target/x86_64-unknown-linux-gnu/release

# The seed corpora come from the case tables, written by the suite's own command. It is built
# without the fuzzing flags, into its own target directory.
env -u RUSTFLAGS cargo build --release -p ge-conformance --target-dir target/seed-tool
seeds=$(mktemp -d)
target/seed-tool/release/ge-conformance corpus --out "$seeds"

for target in $(cargo fuzz list --fuzz-dir fuzz); do
    cp "$release/$target" "$OUT/"
    # The dictionary written from the options table (none for the baselines `empty` and
    # `floor`, which read no input); the service uses `$OUT/<target>.dict`.
    if [ -f "$seeds/$target.dict" ]; then
        cp "$seeds/$target.dict" "$OUT/"
    fi
    if [ -d "$seeds/$target" ]; then
        (cd "$seeds/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
    fi
    # Fixed findings are replayed as seeds too, so a regression shows up at once.
    if [ -d "fuzz/regressions/$target" ]; then
        (cd "fuzz/regressions/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
    fi
done
