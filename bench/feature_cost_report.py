#!/usr/bin/env python3
"""The table of bench/feature-cost.sh: storlab's CPU per I/O with each feature, against the
same engine without it, and the base cases against fio.

    python3 bench/feature_cost_report.py RESULTS_DIR
"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio_report import load  # noqa: E402  (one reader of both tools' files)


def main(res):
    figures = {}
    for path in glob.glob(os.path.join(res, "*.*.*.json")):
        engine, feature, _round, _ = os.path.basename(path).split(".")
        tool = "fio" if feature == "fio" else "storlab"
        ops = load(path, tool)["ops_per_cpu_s"]
        if ops:
            figures.setdefault((engine, feature), []).append(ops)
    machine = os.path.join(res, "machine.txt")
    if os.path.exists(machine):
        print(open(machine).read().rstrip())
    print(f"{'engine':<11} {'feature':<14} {'n':>2} {'ops/CPU-s':>10} {'ns/I/O':>8} "
          f"{'+ns vs base':>11} {'x fio':>6}")
    for engine in ("null", "page-cache"):
        base = figures.get((engine, "base"))
        fio = figures.get((engine, "fio"))
        base_ns = 1e9 / statistics.median(base) if base else None
        fio_ops = statistics.median(fio) if fio else None
        order = sorted((f for e, f in figures if e == engine),
                       key=lambda f: (f != "base", f == "fio", f))
        for feature in order:
            ops = statistics.median(figures[(engine, feature)])
            ns = 1e9 / ops
            delta = f"{ns - base_ns:+.1f}" if base_ns and feature not in ("base", "fio") else ""
            vs = f"{ops / fio_ops:.2f}" if fio_ops and feature != "fio" else ""
            print(f"{engine:<11} {feature:<14} {len(figures[(engine, feature)]):>2} "
                  f"{ops / 1e6:>9.2f}M {ns:>8.1f} {delta:>11} {vs:>6}")
    print("medians over rounds; ns/I/O = 1e9 / (ops per CPU-second): storlab's user + system"
          " CPU per I/O (fio's for fio)")


if __name__ == "__main__":
    main(sys.argv[1])
