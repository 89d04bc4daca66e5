#!/usr/bin/env python3
"""The table of bench/latency-breakdown.sh: per tool, medians over rounds of its own latency
and of what the kernel saw (io_uring SQE -> CQE, block issue -> complete).

    python3 bench/latency_breakdown_report.py RESULTS_DIR
"""
import glob
import json
import os
import re
import statistics
import sys


def bt(path):
    """Scalars and linear histograms of one bpftrace output."""
    scalars, hists, current = {}, {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^@(\w+): (\d+)$", line.strip())
        if m:
            scalars[m.group(1)] = int(m.group(2))
            current = None
            continue
        m = re.match(r"^@(\w+):\s*$", line.strip())
        if m:
            current = hists.setdefault(m.group(1), [])
            continue
        m = re.match(r"^\[(\d+), (\d+)\)\s+(\d+)", line.strip())
        if m and current is not None:
            current.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return scalars, hists


def percentile_of(buckets, q):
    """The middle of the bucket holding the q-th percentile (µs)."""
    total = sum(n for _, _, n in buckets)
    if total == 0:
        return float("nan")
    seen = 0
    for lo, hi, n in buckets:
        seen += n
        if seen * 100 >= total * q:
            return (lo + hi) / 2
    return float("nan")


def tool_figures(tool, path):
    j = json.load(open(path, encoding="utf-8"))
    if tool == "storlab":
        r = j["totals"]["read"]
        lat = r["latency_ns"]
        return r["iops"], r["ops"], lat["mean"] / 1e3, [lat[k] / 1e3 for k in ("p50", "p90", "p99")]
    r = j["jobs"][0]["read"]
    perc = r["lat_ns"]["percentile"]
    return (
        r["iops"],
        r["total_ios"],
        r["lat_ns"]["mean"] / 1e3,
        [perc[k] / 1e3 for k in ("50.000000", "90.000000", "99.000000")],
    )


def main(out):
    rows = []
    for tool in ("storlab", "fio"):
        figures = []
        for path in sorted(glob.glob(os.path.join(out, f"{tool}.*.json"))):
            rnd = path.rsplit(".", 2)[-2]
            scalars, hists = bt(os.path.join(out, f"{tool}.{rnd}.bt.txt"))
            iops, ios, mean, (p50, p90, p99) = tool_figures(tool, path)
            uring = hists.get("sq_to_cqe_us", [])
            device = hists.get("device_us", [])
            figures.append(
                {
                    "iops": iops,
                    "per_call": ios / max(scalars.get("enter_calls", 0), 1),
                    "mean": mean, "p50": p50, "p90": p90, "p99": p99,
                    "uring_mean": scalars.get("sq_to_cqe_mean_us", float("nan")),
                    "uring_p50": percentile_of(uring, 50),
                    "uring_p90": percentile_of(uring, 90),
                    "uring_p99": percentile_of(uring, 99),
                    "dev_mean": scalars.get("device_mean_us", float("nan")),
                    "dev_p50": percentile_of(device, 50),
                    "dev_p90": percentile_of(device, 90),
                    "dev_p99": percentile_of(device, 99),
                }
            )
        if figures:
            med = {k: statistics.median(f[k] for f in figures if f[k] is not None)
                   if any(f[k] is not None for f in figures) else None
                   for k in figures[0]}
            rows.append((tool, len(figures), med))
    print("the same I/Os three ways, µs: the tool's own latency; io_uring, SQE submitted to CQE"
          " posted; the device, block issue to block complete")
    print(f"{'tool':8} {'n':>2} {'IOPS':>8} {'I/Os/enter':>10} {'view':<9} {'mean':>6} {'p50':>6}"
          f" {'p90':>6} {'p99':>6}")
    for tool, n, m in rows:
        lead = [f"{tool:8} {n:>2} {m['iops']:>8.0f} {m['per_call']:>10.1f}", " " * 31, " " * 31]
        for first, (view, key) in zip(lead, (("own", ""), ("io_uring", "uring_"), ("device", "dev_"))):
            print(f"{first} {view:<9} {m[key + 'mean']:>6.0f} {m[key + 'p50']:>6.0f}"
                  f" {m[key + 'p90']:>6.0f} {m[key + 'p99']:>6.0f}")
    print("own: storlab from before its submit call; fio lat (slat + clat, the same span)."
          " Medians over rounds; kernel percentiles are the middles of 20 µs buckets.")


if __name__ == "__main__":
    main(sys.argv[1])
