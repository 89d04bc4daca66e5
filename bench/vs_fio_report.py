#!/usr/bin/env python3
"""Table of bench/vs-fio.sh results: medians per case and tool, ratios, PASS/FAIL.

    python3 bench/vs_fio_report.py RESULTS_DIR

Reads RESULTS_DIR/CASE.TOOL.ROUND.json (storlab results files and fio --output-format=json
files) and RESULTS_DIR/rss.DURATION.time.txt (/usr/bin/time -v). Always exits 0 when the
files parse; a missed target is a FAIL line, not an error.
"""

import glob
import json
import os
import random
import re
import statistics
import sys

# case id, title, tools in order, main metric ("iops" or "ops_per_cpu_s")
CASES = [
    ("null", "1. null engine, 4 KiB randread, qd 32", ["storlab", "fio", "fio-thread"],
     "ops_per_cpu_s"),
    ("direct", "2. 4 KiB randread, O_DIRECT, io_uring qd 32", ["storlab", "fio"], "iops"),
    ("buf-psync", "3a. 4 KiB randread, page cache, psync qd 1", ["storlab", "fio"], "iops"),
    ("buf-uring", "3b. 4 KiB randread, page cache, io_uring qd 32", ["storlab", "fio"], "iops"),
    ("mixed", "4. 8 KiB randrw 35% read, O_DIRECT, io_uring 4 x qd 8", ["storlab", "fio"],
     "iops"),
]


def storlab_figures(d):
    t = d["totals"]
    cpu = d["host_cpu"]["process_user_pct"] + d["host_cpu"]["process_system_pct"]
    iops = t["read"]["iops"] + t["write"]["iops"]
    return {
        "iops": iops,
        "r50": t["read"]["latency_ns"]["p50"] if t["read"]["ops"] else None,
        "r99": t["read"]["latency_ns"]["p99"] if t["read"]["ops"] else None,
        "w50": t["write"]["latency_ns"]["p50"] if t["write"]["ops"] else None,
        "w99": t["write"]["latency_ns"]["p99"] if t["write"]["ops"] else None,
        "cpu": cpu,
        "ops_per_cpu_s": iops / (cpu / 100) if cpu > 0 else None,
        "seconds": d["measured_ms"] / 1000,
    }


def fio_pct(side, kind, p):
    perc = side.get(kind, {}).get("percentile")
    return perc.get(p) if perc else None


def fio_cpu_pct(job):
    """User+sys CPU of one fio job entry, percent of one CPU over the wall time.

    With group_reporting, fio's usr_cpu/sys_cpu are per-job averages (CPU time summed over
    the jobs divided by their summed job_runtime), so they are scaled back to the group:
    CPU-seconds = (usr+sys)/100 * job_runtime, wall seconds = ios / iops.
    """
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    iops = job["read"]["iops"] + job["write"]["iops"]
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1000
    wall_s = ios / iops if iops else job["job_runtime"] / 1000
    return cpu_s / wall_s * 100 if wall_s else 0.0


def fio_figures(d):
    jobs = d["jobs"]
    j = jobs[0]
    iops = sum(x["read"]["iops"] + x["write"]["iops"] for x in jobs)
    cpu = sum(fio_cpu_pct(x) for x in jobs)
    r, w = j["read"], j["write"]
    return {
        "iops": iops,
        "r50": fio_pct(r, "clat_ns", "50.000000") if r["total_ios"] else None,
        "r99": fio_pct(r, "clat_ns", "99.000000") if r["total_ios"] else None,
        "w50": fio_pct(w, "clat_ns", "50.000000") if w["total_ios"] else None,
        "w99": fio_pct(w, "clat_ns", "99.000000") if w["total_ios"] else None,
        # submit-to-completion (only when the job ran with lat_percentiles=1)
        "rl50": fio_pct(r, "lat_ns", "50.000000") if r["total_ios"] else None,
        "rl99": fio_pct(r, "lat_ns", "99.000000") if r["total_ios"] else None,
        "wl50": fio_pct(w, "lat_ns", "50.000000") if w["total_ios"] else None,
        "wl99": fio_pct(w, "lat_ns", "99.000000") if w["total_ios"] else None,
        "cpu": cpu,
        "ops_per_cpu_s": iops / (cpu / 100) if cpu > 0 else None,
        "seconds": j["job_runtime"] / 1000,
    }


def load(path, tool):
    with open(path) as f:
        d = json.load(f)
    return storlab_figures(d) if tool == "storlab" else fio_figures(d)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_n(v):
    if v is None:
        return "-"
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.2f}{unit}"
    return f"{v:.0f}"


def fmt_ns(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f}ms"
    if v >= 1e3:
        return f"{v / 1e3:.1f}µs"
    return f"{v:.0f}ns"


def fmt_pct(v):
    return "-" if v is None else f"{v:.1f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def bootstrap_ratio(a, b, n=10000, seed=1):
    """95% interval of median(a) / median(b) by resampling each tool's rounds."""
    a = [v for v in a if v is not None]
    b = [v for v in b if v is not None]
    if not a or not b:
        return None, None
    rng = random.Random(seed)
    ratios = []
    for _ in range(n):
        ma = statistics.median(rng.choices(a, k=len(a)))
        mb = statistics.median(rng.choices(b, k=len(b)))
        if mb:
            ratios.append(ma / mb)
    ratios.sort()
    return ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]


def interval(bounds):
    lo, hi = bounds
    return "-" if lo is None else f"{lo:.2f}..{hi:.2f}"


def matrix(res):
    """The real-device parity matrix (CASES=matrix): one line per case."""
    cases = sorted({os.path.basename(f).split(".")[0]
                    for f in glob.glob(os.path.join(res, "m-*.storlab.*.json"))})
    if not cases:
        return
    print()
    print("matrix: O_DIRECT io_uring, storlab vs fio alternated; medians of the rounds, IOPS range,")
    print("ratio with its 95% bootstrap interval; latency: storlab's (from before submit) over fio's")
    print("lat (submit included), of reads (writes when a case has none)")
    print("(each latency ratio with its own 95% bootstrap interval: a miss whose interval reaches")
    print("below 1.05 is inside the rounds' noise)")
    head = (f"{'case':<34} {'n':>2} {'storlab IOPS':>12} {'range':>15} {'fio IOPS':>10} {'range':>15} "
            f"{'ratio':>6} {'95% interval':>13} {'p50 ratio':>9} {'interval':>11} {'p99 ratio':>9} "
            f"{'interval':>11}  verdict")
    print(head)
    print("-" * len(head))
    passed = failed = 0
    for case in cases:
        runs = {}
        for tool in ("storlab", "fio"):
            files = sorted(glob.glob(os.path.join(res, f"{case}.{tool}.*.json")))
            runs[tool] = [load(f, tool) for f in files]
        s_runs, f_runs = runs["storlab"], runs["fio"]
        if not s_runs or not f_runs:
            continue
        si = [r["iops"] for r in s_runs]
        fi = [r["iops"] for r in f_runs]
        r = ratio(median(si), median(fi))
        lo, hi = bootstrap_ratio(si, fi)
        reads = any(x["r50"] for x in s_runs)
        s50 = [x["r50" if reads else "w50"] for x in s_runs]
        f50 = [x["rl50" if reads else "wl50"] for x in f_runs]
        s99 = [x["r99" if reads else "w99"] for x in s_runs]
        f99 = [x["rl99" if reads else "wl99"] for x in f_runs]
        p50, p99 = ratio(median(s50), median(f50)), ratio(median(s99), median(f99))
        i50, i99 = bootstrap_ratio(s50, f50), bootstrap_ratio(s99, f99)
        ok = (hi is not None and hi >= 1.0 and p50 is not None and p50 <= 1.05
              and p99 is not None and p99 <= 1.05)
        passed += ok
        failed += not ok
        print(f"{case:<34} {len(s_runs):>2} {fmt_n(median(si)):>12} "
              f"{fmt_n(min(si)) + '..' + fmt_n(max(si)):>15} {fmt_n(median(fi)):>10} "
              f"{fmt_n(min(fi)) + '..' + fmt_n(max(fi)):>15} "
              f"{r:>6.3f} {f'{lo:.3f}..{hi:.3f}':>13} "
              f"{'-' if p50 is None else f'{p50:.3f}':>9} {interval(i50):>11} "
              f"{'-' if p99 is None else f'{p99:.3f}':>9} {interval(i99):>11}  "
              f"{'PASS' if ok else 'FAIL'}")
    print(f"matrix: {passed} PASS, {failed} FAIL (IOPS interval reaches 1.0, p50 and p99 within 5%)")


def scaling(res):
    """IOPS, CPU and ops per CPU-second as workers grow (CASES=scaling), for both tools."""
    rows = {}
    for path in glob.glob(os.path.join(res, "scale-*.json")):
        name = os.path.basename(path)
        m = re.match(r"scale-(null|buf)-w(\d+)\.(storlab|fio)\.\d+\.json$", name)
        if m:
            rows.setdefault((m.group(1), int(m.group(2)), m.group(3)), []).append(load(path, m.group(3)))
    if not rows:
        return
    cpus = os.cpu_count() or 1
    print()
    print(f"scaling: medians of the rounds; efficiency = IOPS / (IOPS with 1 worker x min(workers, {cpus} CPUs))")
    header = (f"{'case':<10} {'workers':>7} {'tool':<8} {'IOPS':>8} {'CPU%':>6} {'ops/CPU-s':>10} "
              f"{'efficiency':>10} {'ops/CPU-s storlab / fio':>24}")
    print(header)
    print("-" * len(header))
    for kind in ("null", "buf"):
        for n in sorted({k[1] for k in rows if k[0] == kind}):
            per_tool = {}
            for tool in ("storlab", "fio"):
                runs = rows.get((kind, n, tool))
                if not runs:
                    continue
                per_tool[tool] = {k: median([r.get(k) for r in runs]) for k in ("iops", "cpu", "ops_per_cpu_s")}
            for tool, m in per_tool.items():
                one = rows.get((kind, 1, tool))
                base = median([r["iops"] for r in one]) if one else None
                eff = m["iops"] / (base * min(n, cpus)) if base else None
                r = ratio(per_tool.get("storlab", {}).get("ops_per_cpu_s"),
                          per_tool.get("fio", {}).get("ops_per_cpu_s")) if tool == "storlab" else None
                print(f"{kind:<10} {n:>7} {tool:<8} {fmt_n(m['iops']):>8} {fmt_pct(m['cpu']):>6} "
                      f"{fmt_n(m['ops_per_cpu_s']):>10} {(f'{eff:.2f}' if eff else '-'):>10} "
                      f"{(f'{r:.2f}' if r else ''):>24}")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    res = sys.argv[1]
    machine = os.path.join(res, "machine.txt")
    if os.path.exists(machine):
        print(open(machine).read().rstrip())
        print()

    med = {}
    header = (f"{'case':<54} {'tool':<11} {'n':>2} {'IOPS':>8} {'IOPS min..max':>16} "
              f"{'r p50':>8} {'r p99':>8} {'w p50':>8} {'w p99':>8} {'CPU%':>6} {'ops/CPU-s':>10}")
    print(header)
    print("-" * len(header))
    for case, title, tools, _metric in CASES:
        for tool in tools:
            files = sorted(glob.glob(os.path.join(res, f"{case}.{tool}.*.json")))
            runs = [load(f, tool) for f in files]
            if not runs:
                continue
            m = {k: median([r.get(k) for r in runs]) for k in runs[0]}
            med[(case, tool)] = m
            iops = [r["iops"] for r in runs]
            spread = f"{fmt_n(min(iops))}..{fmt_n(max(iops))}"
            print(f"{title if tool == tools[0] else '':<54} {tool:<11} {len(runs):>2} "
                  f"{fmt_n(m['iops']):>8} {spread:>16} {fmt_ns(m['r50']):>8} {fmt_ns(m['r99']):>8} "
                  f"{fmt_ns(m['w50']):>8} {fmt_ns(m['w99']):>8} {fmt_pct(m['cpu']):>6} "
                  f"{fmt_n(m['ops_per_cpu_s']):>10}")
            if tool != "storlab" and m.get("rl50") is not None:
                print(f"{'':<54} {'':<11} {'':>2} {'':>8} {'fio lat (submit incl.):':>16} "
                      f"{fmt_ns(m['rl50']):>8} {fmt_ns(m['rl99']):>8}")
    print()
    print("medians of each tool's runs; latency: storlab from before the submit call, fio clat")
    print("from after it; CPU%: user+sys, percent of one CPU; ops/CPU-s = IOPS / (CPU% / 100)")
    print()

    checks = []

    def check(label, value, ok, target):
        checks.append((label, value, ok, target))

    def get(case, tool, key):
        m = med.get((case, tool))
        return m.get(key) if m else None

    for ref in ("fio", "fio-thread"):
        r = ratio(get("null", "storlab", "ops_per_cpu_s"), get("null", ref, "ops_per_cpu_s"))
        check(f"1. null: ops/CPU-s storlab / {ref}", r, r is not None and r >= 1.5, ">= 1.50")
    r = ratio(get("direct", "storlab", "iops"), get("direct", "fio", "iops"))
    check("2. O_DIRECT qd 32: IOPS storlab / fio", r, r is not None and r >= 0.97, ">= 0.97")
    for p in ("r50", "r99"):
        r = ratio(get("direct", "storlab", p), get("direct", "fio", p))
        check(f"2. O_DIRECT qd 32: {p[1:]}th pct latency storlab / fio (clat)", r,
              r is not None and abs(r - 1) <= 0.10, "0.90..1.10")
    for p in ("r50", "r99"):
        r = ratio(get("direct", "storlab", p), get("direct", "fio", "rl" + p[1:]))
        if r is not None:
            check(f"   {p[1:]}th pct against fio lat (submit included, informative)", r,
                  abs(r - 1) <= 0.10,
                  "0.90..1.10")
    for case, label in (("buf-psync", "3a. page cache psync qd 1"),
                        ("buf-uring", "3b. page cache io_uring qd 32")):
        r = ratio(get(case, "storlab", "iops"), get(case, "fio", "iops"))
        check(f"{label}: IOPS storlab / fio", r, r is not None and r >= 1.0, ">= 1.00")
    r = ratio(get("mixed", "storlab", "iops"), get("mixed", "fio", "iops"))
    check("4. mixed 4 x qd 8: total IOPS storlab / fio", r, r is not None and r >= 0.97, ">= 0.97")

    print(f"{'target':<62} {'measured':>9} {'target':>11}  verdict")
    for label, value, ok, target in checks:
        if value is None:
            print(f"{label:<62} {'-':>9} {target:>11}  not run")
            continue
        print(f"{label:<62} {value:>9.3f} {target:>11}  {'PASS' if ok else 'FAIL'}")

    matrix(res)
    scaling(res)

    rss = []
    for f in glob.glob(os.path.join(res, "rss.*.time.txt")):
        dur = os.path.basename(f)[len("rss."):-len(".time.txt")]
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(f).read())
        secs = json.load(open(os.path.join(res, f"rss.{dur}.json")))["measured_ms"] / 1000
        if m:
            rss.append((secs, dur, int(m.group(1))))
    rss.sort()
    if len(rss) >= 2:
        (s0, d0, k0), (s1, d1, k1) = rss[0], rss[-1]
        grow = k1 - k0
        per_min = grow / ((s1 - s0) / 60) if s1 > s0 else 0
        # allocator noise allowance: 5% of the short run's peak
        ok = grow <= 0.05 * k0
        print(f"{'5. peak RSS, null engine: ' + d0 + ' ' + str(k0) + ' KiB, ' + d1 + ' ' + str(k1) + ' KiB':<62} "
              f"{grow:>+6} KiB {'<= +5%':>11}  {'PASS' if ok else 'FAIL'}")
        print(f"   growth {per_min:.0f} KiB per extra minute of run")


if __name__ == "__main__":
    main()
