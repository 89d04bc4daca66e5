#!/usr/bin/env python3
"""storlab's CPU per I/O against fio's on the same paced job, at several rates per worker.

    bench/paced-cost.py                        # RATES="30 300 3000" ROUNDS=5 DURATION=10
    ROUNDS=7 RATES="30 3000" bench/paced-cost.py
    STORLAB=target/release/storlab bench/paced-cost.py

The job (issue 43's): 32 KiB random I/O, 60 % reads, O_DIRECT, io_uring, WORKERS workers (4)
at queue depth 4, each paced at RATE I/Os a second (storlab: --rate RATE per worker; fio:
--rate_iops=0.6*RATE,0.4*RATE per job, its reads and writes each capped, so a job's I/Os add
up to RATE a second as storlab's), on one file prepared once by storlab on the real disk
(SCRATCH, never tmpfs); fio reads and writes that same file. The tools take turns going first
(odd rounds storlab, even rounds fio).

CPU is each child process's user + system time (getrusage of the waited-for child: every thread,
io_uring's workers included), divided by the I/Os it reports (storlab: the results file's
ramp and measured I/Os with --ramp 0s; fio: its JSON's total_ios of every job). Each case
prints the medians of CPU µs per I/O with their range, the ratio storlab / fio of the medians,
and a 95 % bootstrap interval of that ratio. Goal: at most 1.5 x fio's at every rate.
Run it on a quiet machine; machine.txt in RESULTS says what the machine was doing.
"""

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROUNDS = int(os.environ.get("ROUNDS", "5"))
DURATION = int(os.environ.get("DURATION", "10"))
RATES = [int(r) for r in os.environ.get("RATES", "30 300 3000").split()]
WORKERS = int(os.environ.get("WORKERS", "4"))
QD = int(os.environ.get("QD", "4"))
SCRATCH = Path(os.environ.get("SCRATCH", "/var/tmp/storlab-paced-cost"))
REPO = Path(__file__).resolve().parent.parent
STORLAB = os.environ.get("STORLAB", str(REPO / "target/release/storlab"))
RESULTS = Path(
    os.environ.get("RESULTS", SCRATCH / time.strftime("results-%Y%m%dT%H%M%SZ", time.gmtime()))
)
TARGET = SCRATCH / "paced.dat"
SIZE = "1GiB"


def child_cpu(cmd, **kw):
    """Runs cmd; returns (CPU seconds of the child, its exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 4):
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {p.stderr.decode(errors='replace')}")
    return cpu


def run_storlab(rate, out):
    cmd = [
        STORLAB, "run", "--target", str(TARGET), "--size", SIZE, "--bs", "32k", "--read", "60",
        "--random", "100", "--qd", str(QD), "--workers", str(WORKERS), "--rate", str(rate),
        "--duration", f"{DURATION}s", "--ramp", "0s", "-q", "-o", str(out),
    ]
    cpu = child_cpu(cmd)
    r = json.loads(out.read_text())
    ios = sum(r["cost"][p]["ios"] for p in ("measure", "ramp") if p in r["cost"])
    return cpu, ios


def run_fio(rate, out):
    cmd = [
        "fio", "--name=paced", f"--filename={TARGET}", "--allow_file_create=0",
        "--ioengine=io_uring", "--direct=1", "--rw=randrw", "--rwmixread=60", "--bs=32k",
        f"--iodepth={QD}", f"--numjobs={WORKERS}", f"--runtime={DURATION}", "--time_based",
        f"--rate_iops={rate * 0.6:g},{rate * 0.4:g}", "--output-format=json",
        f"--output={out}",
    ]
    cpu = child_cpu(cmd)
    j = json.loads(out.read_text())
    ios = sum(job["read"]["total_ios"] + job["write"]["total_ios"] for job in j["jobs"])
    return cpu, ios


def bootstrap(a, b, n=2000):
    """95 % interval of median(a) / median(b), resampling each."""
    rng = random.Random(1)
    ratios = sorted(
        statistics.median(rng.choices(a, k=len(a))) / statistics.median(rng.choices(b, k=len(b)))
        for _ in range(n)
    )
    return ratios[int(0.025 * n)], ratios[int(0.975 * n) - 1]


def main():
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "machine.txt", "w") as m:
        m.write(f"storlab: {STORLAB}\n")
        m.write(subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout)
        m.write(f"load average before: {os.getloadavg()}\n")
        m.write(f"ROUNDS={ROUNDS} DURATION={DURATION} RATES={RATES} WORKERS={WORKERS} QD={QD}\n")
    if not TARGET.exists():
        # storlab creates and fills the file once (a short run at a low rate).
        run_storlab(10, RESULTS / "prepare.json")
    rows = []
    for rate in RATES:
        per = {"storlab": [], "fio": []}
        for rnd in range(ROUNDS):
            order = ["storlab", "fio"] if rnd % 2 == 0 else ["fio", "storlab"]
            for tool in order:
                out = RESULTS / f"{tool}-{rate}-{rnd}.json"
                cpu, ios = (run_storlab if tool == "storlab" else run_fio)(rate, out)
                per[tool].append(cpu / max(ios, 1) * 1e6)
        s, f = per["storlab"], per["fio"]
        lo, hi = bootstrap(s, f)
        rows.append((rate, s, f, statistics.median(s) / statistics.median(f), lo, hi))
    with open(RESULTS / "machine.txt", "a") as m:
        m.write(f"load average after: {os.getloadavg()}\n")
    print(f"CPU per I/O, µs (median, range over {ROUNDS} rounds); {WORKERS} workers x qd {QD}")
    print("rate/worker  storlab                 fio                     storlab/fio  95% interval  goal <= 1.5")
    for rate, s, f, ratio, lo, hi in rows:
        cell = lambda v: f"{statistics.median(v):7.1f} ({min(v):.1f}-{max(v):.1f})"
        verdict = "ok" if hi <= 1.5 else ("MISS" if lo > 1.5 else "within noise of 1.5")
        print(f"{rate:>11}  {cell(s):<22}  {cell(f):<22}  {ratio:11.2f}  {lo:.2f}-{hi:.2f}     {verdict}")
    print(f"(results in {RESULTS})")


if __name__ == "__main__":
    main()
