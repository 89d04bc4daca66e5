#!/usr/bin/env bash
# How well the default data (no [data]) that a build of storlab writes compresses: two runs of
# BIN over one 64 MiB file in DIR (two sequential passes of 128 KiB writes at queue depth 4,
# then 65,536 random 4 KiB I/Os, half reads, at queue depth 8), after each the file's ratio
# with deflate (zlib 6), zstd (3) and lz4 in units of 4, 8, 32, 128 KiB and as a stream.
# Needs Debian's python3-zstandard and python3-lz4. docs/performance.md, "Fresh payloads".
#
#   bench/stream-ratio.sh target/release/storlab /var/tmp/storlab-ratio
set -euo pipefail
BIN=$1; DIR=$2; mkdir -p "$DIR"; cd "$DIR"; rm -f d.dat* r.json
cat > seq.toml <<T
duration = "10m"
ramp = "0s"
[[target]]
path = "d.dat"
size = "64MiB"
[[worker]]
queue_depth = 4
io_limit = 1024
[[worker.access]]
block_size = "128k"
read = 0
random = 0
T
cat > mixed.toml <<T
duration = "10m"
ramp = "0s"
[[target]]
path = "d.dat"
size = "64MiB"
[[worker]]
queue_depth = 8
io_limit = 65536
[[worker.access]]
block_size = "4k"
read = 50
random = 100
T
ratios() {
python3 - "$1" <<'PY'
import sys, zlib, zstandard, lz4.block, lz4.frame
d = open(sys.argv[1], 'rb').read()
z = zstandard.ZstdCompressor(level=3)
for name, f, whole in [('deflate', lambda b: len(zlib.compress(b, 6)), None), ('zstd', lambda b: len(z.compress(b)), None), ('lz4', lambda b: len(lz4.block.compress(b, store_size=False)), lambda b: len(lz4.frame.compress(b)))]:
    row = [len(d) / sum(f(d[i:i + u]) for i in range(0, len(d), u)) for u in (4096, 8192, 32768, 131072)]
    row.append(len(d) / (whole or f)(d))
    print(f"  {name:8}" + " ".join(f"{x:7.3f}" for x in row))
PY
}
"$BIN" run seq.toml -q -o r.json
echo "after 2 sequential passes of 128 KiB writes at queue depth 4 (4 KiB 8 KiB 32 KiB 128 KiB stream):"; ratios d.dat
"$BIN" run mixed.toml -q -o r.json
echo "then 65536 random 4 KiB I/Os, half reads, queue depth 8:"; ratios d.dat
