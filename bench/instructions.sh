#!/usr/bin/env bash
# Instructions per I/O of storlab's worker loop, counted by valgrind (callgrind): a figure that
# does not depend on how loaded the machine is, to compare two builds of storlab. Each case is a
# job with a fixed number of I/Os (io_limit) and one interval, so start-up, shutdown and the
# per-interval work cost the same whatever the speed under valgrind. Prints, per case and build:
# I/Os; instructions per I/O of the whole process (user space only: callgrind does not see the
# kernel) and of `worker::run` with everything it calls; and how many sleeps (null engine) and
# io_uring_enter calls each I/O took, which must match for the two builds to be comparable.
#
#   bench/instructions.sh OLD_BINARY target/release/storlab
#   CASES="closed uring-qd1" DIR=/var/tmp/storlab-instructions bench/instructions.sh A B
#
# Needs valgrind, callgrind_annotate, a C compiler and python3; DIR must be on a real disk
# (the io_uring cases use O_DIRECT).
set -euo pipefail
DIR=${DIR:-/var/tmp/storlab-instructions}
CASES=${CASES:-closed closed-write open-behind open-paced uring uring-qd1}
mkdir -p "$DIR"
# Under valgrind, rustix reads the host's auxiliary vector with prctl(PR_GET_AUXV) and faults on
# the host's vDSO address; with that prctl failing (a seccomp filter), it reads
# /proc/self/auxv, which valgrind virtualises.
cat >"$DIR/noauxv.c" <<'C'
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef PR_GET_AUXV
#define PR_GET_AUXV 0x41555856
#endif
int main(int argc, char **argv) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_GET_AUXV, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog p = {.len = sizeof f / sizeof f[0], .filter = f};
  if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p)) {
    perror("noauxv");
    return 1;
  }
  execvp(argv[1], argv + 1);
  perror("noauxv: exec");
  return 1;
}
C
cc -O2 -o "$DIR/noauxv" "$DIR/noauxv.c"

# job NAME QUEUE_DEPTH IOS [EXTRA] [READ]: 4 KiB random I/O of one 64 MiB file, READ of it reads
# (default 100%; the rest writes, each sector sealed with a fresh payload).
job() {
  cat >"$DIR/$1.toml" <<EOF
duration = "10m"
ramp = "0s"
interval = "10m"
[[target]]
name = "f"
path = "$DIR/f.dat"
size = "64MiB"
[[worker]]
name = "w"
queue_depth = $2
io_limit = $3
${4:-}
[[worker.access]]
class = "io"
block_size = "4k"
read = "${5:-100%}"
random = "100%"
EOF
}
job closed 32 400000
job open-behind 32 400000 'rate_iops = 100000000'
job open-paced 32 10000 'rate_iops = 500'
job uring 32 100000
job uring-qd1 1 20000
job closed-write 32 400000 '' 0%
engine() { case $1 in uring*) echo io_uring ;; *) echo null ;; esac; }

first=$1
[ -e "$DIR/f.dat" ] || "$first" run --target "$DIR/f.dat" --size 64MiB --duration 1ms -q \
  -o "$DIR/prepare.json" >/dev/null 2>&1
printf '%-12s %-40s %7s %9s %9s %9s %9s\n' case build I/Os "Ir/I/O" "loop/I/O" "sleeps" "enters"
for c in $CASES; do
  n=0
  for bin in "$@"; do
    n=$((n + 1))
    out="$DIR/cg.$c.$n"
    "$DIR/noauxv" valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" run "$DIR/$c.toml" \
      --engine "$(engine "$c")" -q -o "$DIR/$c.$n.json" >"$DIR/$c.$n.log" 2>&1
    python3 - "$out" "$DIR/$c.$n.json" "$c" "$bin" <<'PY'
import json, re, subprocess, sys
cg, results, case, build = sys.argv[1:]
totals = json.load(open(results))["totals"]
ops = totals["read"]["ops"] + totals["write"]["ops"]
def annotate(*args):
    return subprocess.run(["callgrind_annotate", "--threshold=100", *args, cg],
                          capture_output=True, text=True).stdout.splitlines()
def ir(line):
    return int(re.match(r"\s*([\d,]+)", line).group(1).replace(",", ""))
total = next(ir(l) for l in annotate() if "PROGRAM TOTALS" in l)
loop = next(ir(l) for l in annotate("--inclusive=yes")
            if re.search(r":storlab::engine::worker::run( |$)", l))
def calls(pattern, lines=annotate("--tree=caller")):
    return sum(int(re.findall(r"\(([\d,]+)x\)", l)[0].replace(",", ""))
               for l in lines if re.search(pattern, l))
sleeps = calls(r"< .*std::thread::functions::sleep \(")
enters = calls(r"< .*io_uring::submit::Submitter::submit(_with_args)? \(")
print(f"{case:12} {build[-40:]:40} {ops:7} {total / ops:9.1f} {loop / ops:9.1f}"
      f" {sleeps / ops:9.3f} {enters / ops:9.3f}")
PY
  done
done
