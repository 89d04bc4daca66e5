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


def median_of(buckets):
    """The middle of the bucket holding the median (µs)."""
    total = sum(n for _, _, n in buckets)
    if total == 0:
        return float("nan")
    seen = 0
    for lo, hi, n in buckets:
        seen += n
        if seen * 2 >= total:
            return (lo + hi) / 2
    return float("nan")


def tool_figures(tool, path):
    j = json.load(open(path, encoding="utf-8"))
    if tool == "storlab":
        r = j["totals"]["read"]
        lat = r["latency_ns"]
        return r["iops"], r["ops"], lat["mean"] / 1e3, lat["p50"] / 1e3, None
    r = j["jobs"][0]["read"]
    return (
        r["iops"],
        r["total_ios"],
        r["lat_ns"]["mean"] / 1e3,
        r["lat_ns"]["percentile"]["50.000000"] / 1e3,
        r["clat_ns"]["mean"] / 1e3,
    )


def main(out):
    rows = []
    for tool in ("storlab", "fio"):
        figures = []
        for path in sorted(glob.glob(os.path.join(out, f"{tool}.*.json"))):
            rnd = path.rsplit(".", 2)[-2]
            scalars, hists = bt(os.path.join(out, f"{tool}.{rnd}.bt.txt"))
            iops, ios, mean, p50, clat_mean = tool_figures(tool, path)
            figures.append(
                {
                    "iops": iops,
                    "mean": mean,
                    "p50": p50,
                    "clat_mean": clat_mean,
                    "per_call": ios / max(scalars.get("enter_calls", 0), 1),
                    "uring_mean": scalars.get("sq_to_cqe_mean_us", float("nan")),
                    "uring_p50": median_of(hists.get("sq_to_cqe_us", [])),
                    "dev_mean": scalars.get("device_mean_us", float("nan")),
                    "dev_p50": median_of(hists.get("device_us", [])),
                }
            )
        if figures:
            med = {k: statistics.median(f[k] for f in figures if f[k] is not None)
                   if any(f[k] is not None for f in figures) else None
                   for k in figures[0]}
            rows.append((tool, len(figures), med))
    print(f"{'tool':8} {'n':>2} {'IOPS':>8} {'I/Os/enter':>10} {'own mean':>9} {'own p50':>8}"
          f" {'SQE→CQE mean':>13} {'p50':>6} {'device mean':>12} {'p50':>6}")
    for tool, n, m in rows:
        print(f"{tool:8} {n:>2} {m['iops']:>8.0f} {m['per_call']:>10.1f} {m['mean']:>8.0f}µ"
              f" {m['p50']:>7.0f}µ {m['uring_mean']:>12.0f}µ {m['uring_p50']:>5.0f}µ"
              f" {m['dev_mean']:>11.0f}µ {m['dev_p50']:>5.0f}µ")
    print("own: storlab from before its submit call; fio lat (slat + clat, the same span)."
          " Medians over rounds; histogram p50s are bucket middles (20 µs buckets).")


if __name__ == "__main__":
    main(sys.argv[1])
