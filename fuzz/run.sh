#!/usr/bin/env bash
# Builds the fuzz targets (libFuzzer, coverage instrumentation without a sanitizer: stable Rust)
# and runs each for SECONDS (default 20) on its committed corpus (fuzz/corpus/TARGET), with
# libFuzzer's limits: inputs up to 1 MiB, 256 MiB of memory, 10 s per input (60 s in the
# unoptimised `quick` profile, FUZZ_TIMEOUT to set another). New inputs go to a
# scratch corpus under fuzz/target (the committed one is only read); a crash, a timeout or an
# input over the memory limit stops with the input in fuzz/artifacts/TARGET/ and exit 1.
#
#   fuzz/run.sh                    # every target, 20 s each
#   SECONDS_EACH=3600 fuzz/run.sh job_toml results_json   # longer runs of some targets
#   FUZZ_PROFILE=quick SECONDS_EACH=3 JOBS=2 fuzz/run.sh  # what CI runs: unoptimised, quick
#                                                          # to build, two targets at a time
#                                                          # (FUZZ_STEP: build, run or all)
#
# LLVM's libFuzzer (Debian: libclang-rt-dev), or a C++ compiler to build it (Debian: g++).
# Printed per target: executions, coverage (`cov`, edges) and features (`ft`), from libFuzzer's
# final statistics.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${SECONDS_EACH:-20}
profile=${FUZZ_PROFILE:-release}
# The limit a hang or a time that grows faster than its input runs into. Unoptimised code with
# coverage counters is several times slower than the release build, and CI runs it beside the
# test suite on two cores: there the largest seeds took 3 s (report_rows, 20,000 calibration
# points) and 7 s (import_shapes, 4,096 DiskSpd targets) on a quiet machine, and over 10 s
# beside the tests.
timeout=${FUZZ_TIMEOUT:-$([ "$profile" = quick ] && echo 60 || echo 10)}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(job_toml fio_job iometer_icf vdbench_job diskspd_profile diskspd_args import_shapes results_json timeseries trace block_sample report_rows)
fi
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
-Cllvm-args=-sanitizer-coverage-stack-depth \
-Cdebug-assertions -Coverflow-checks"
# libFuzzer itself: LLVM's own build of it where Debian's libclang-rt-dev installed one (it comes
# with libclang-dev, which the `mpi` feature's bindings need), else libfuzzer-sys compiles its
# copy of the C++ sources (23 s of a CPU, the longest step of the build after storlab itself).
if [ -z "${CUSTOM_LIBFUZZER_PATH:-}" ]; then
  for a in /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-"$(uname -m)".a; do
    [ -f "$a" ] && export CUSTOM_LIBFUZZER_PATH=$a
  done
fi
# With an explicit --target, RUSTFLAGS instrument the targets only, not build scripts and
# procedural macros (which run on the host without libFuzzer's runtime).
host=$(rustc -vV | sed -n 's/^host: //p')
# Not --locked: fuzz/Cargo.lock pins what it has, and storlab's dependencies added since are
# resolved as the build needs them (the fuzz crate is not part of storlab's lock).
# FUZZ_STEP=build builds and stops, FUZZ_STEP=run runs what was built (.ci/run builds at the
# lowest priority from its start, in the time its other steps leave a CPU idle, and runs once
# the tests start); both by default.
step=${FUZZ_STEP:-all}
if [ "$step" != run ]; then
  cargo build --profile "$profile" --target "$host" --target-dir target --bins
fi
if [ "$step" = build ]; then
  exit 0
fi
# Targets run JOBS at a time (default 1; CI runs one per CPU once the tests are done, when
# fuzzing is all that is left), each with its own log; the results are printed in order.
jobs=${JOBS:-1}
run_one() {
  local t=$1 work=target/corpus/$1
  mkdir -p "$work" "artifacts/$t"
  local code=0
  "target/$host/$profile/$t" -max_total_time="$seconds" -max_len=1048576 -rss_limit_mb=256 \
      -timeout="$timeout" -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
      "$work" "corpus/$t" > "target/$t.log" 2>&1 || code=$?
  echo "$code" > "target/$t.status"
}
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  run_one "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
  log=target/$t.log
  if [ "$(cat "target/$t.status")" != 0 ]; then
    echo "$t: FAILED (the input is in fuzz/artifacts/$t/):"
    tail -40 "$log"
    status=1
    continue
  fi
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  last=$(grep -E '#[0-9]+.*(cov|ft):' "$log" | tail -1 || true)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' || echo 'cov: ?')
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' || echo 'ft: ?')
  echo "$t: ${runs} executions in ${seconds} s, ${cov}, ${ft}, no crash, none over ${timeout} s, under 256 MiB"
done
exit $status
