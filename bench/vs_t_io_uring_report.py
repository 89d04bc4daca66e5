#!/usr/bin/env python3
"""Tables of bench/vs-t-io_uring.sh results: IOPS and CPU per I/O of storlab, t/io_uring and fio.

    python3 bench/vs_t_io_uring_report.py RESULTS_DIR

Reads RESULTS_DIR/CASE.TOOL.ROUND.cpu (the wrapper's `user=S sys=S wall=S rc=N`: getrusage of
the whole process) and each run's own count of its I/Os: storlab's results file
(CASE.storlab.ROUND.json, totals.read.ops of the measured phase), fio's JSON
(CASE.fio.ROUND.json, jobs[0].read.total_ios) and t/io_uring's output (CASE.t_io_uring.ROUND.out,
the sum of its once-a-second `IOPS=` lines). CPU per I/O = (user + sys) / I/Os.

Prints Markdown (to paste into docs/performance.md): per case and tool the median and
[min–max] of IOPS and of CPU µs per I/O; per case the ratios storlab ÷ t/io_uring and
storlab ÷ fio of the medians with a 95 % bootstrap interval (the rounds both tools ran,
resampled with replacement, 2000 times, fixed seed), and the verdict: CPU per I/O ≤ 1.15 ×
t/io_uring's, and on the device-bound cases (all but buffered) IOPS ≥ 1.0 × t/io_uring's,
a PASS when the interval includes or exceeds 1.0. Exits 0 when the files parse; a missed
target is a FAIL in the table, not an error.
"""

import glob
import json
import os
import random
import re
import statistics
import sys

TOOLS = ["storlab", "t_io_uring", "fio"]
TOOL_NAMES = {"storlab": "storlab", "t_io_uring": "t/io_uring", "fio": "fio"}
KINDS = ["direct", "buffered", "poll", "sqpoll", "passthru"]
KIND_TITLES = {
    "direct": "O_DIRECT",
    "buffered": "page cache",
    "poll": "O_DIRECT, polled",
    "sqpoll": "O_DIRECT, SQPOLL",
    "passthru": "NVMe passthrough",
}
# Cases whose IOPS the device bounds: there storlab must reach t/io_uring's IOPS too.
DEVICE_BOUND = {"direct", "poll", "sqpoll", "passthru"}
CPU_TARGET = 1.15
IOPS_TARGET = 1.0
RESAMPLES = 2000
SEED = 36

RUN_FILE = re.compile(r"^(?P<case>(?P<kind>[a-z]+)-qd(?P<qd>\d+))\.(?P<tool>storlab|t_io_uring|fio)"
                      r"\.(?P<round>\d+)\.cpu$")
IOPS_LINE = re.compile(r"^IOPS=([0-9.]+)([KM]?),")


def read_cpu(path):
    """user, sys, wall seconds, exit status, and (t/io_uring) how many IOPS= lines to count."""
    fields = dict(kv.split("=", 1) for kv in open(path).read().split())
    return (float(fields["user"]), float(fields["sys"]), float(fields["wall"]),
            int(fields["rc"]), int(fields.get("lines", 0)))


def load_json(path):
    """A JSON file, skipping anything a tool printed before it (fio's notes)."""
    text = open(path).read()
    return json.loads(text[text.index("{"):])


def storlab_ios(base, _lines):
    d = load_json(base + ".json")
    read = d["totals"]["read"]
    notes = list(d.get("engine", {}).get("notes") or [])
    reason = d.get("engine", {}).get("fallback_reason")
    if reason:
        notes.append(f"fallback: {reason}")
    return read["ops"], d["measured_ms"] / 1000, notes


def fio_ios(base, _lines):
    job = load_json(base + ".json")["jobs"][0]
    if job.get("error"):
        raise ValueError(f"fio job error {job['error']}")
    return job["read"]["total_ios"], job["job_runtime"] / 1000, []


def t_io_uring_ios(base, want):
    """The sum of t/io_uring's first `want` `IOPS=` lines (one a second; 1.22M, 991.42K, 86416).

    The wrapper stopped it (SIGINT) on seeing line `want`: a line after it is an echo of the
    last one that its signal handler's printf can cause, not another second.
    """
    ios, lines = 0.0, 0
    for line in open(base + ".out"):
        m = IOPS_LINE.match(line)
        if m:
            if want and lines == want:
                continue
            ios += float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6}[m.group(2)]
            lines += 1
        elif "IO errors" in line or "unexpected ret" in line:
            # "N: M IO errors" at its end; "io: unexpected ret=-95" for each failed I/O of some
            # kinds (polled I/O where the device has no poll queues)
            raise ValueError(line.strip())
    if not lines or lines < want:
        raise ValueError(f"{lines} IOPS= lines, {want} expected")
    return ios, float(lines), []


IOS = {"storlab": storlab_ios, "fio": fio_ios, "t_io_uring": t_io_uring_ios}


def load(res):
    """{case: {tool: {round: run}}}, the failed runs, and each case's kind and qd."""
    runs, failed, cases = {}, [], {}
    for path in glob.glob(os.path.join(res, "*.cpu")):
        m = RUN_FILE.match(os.path.basename(path))
        if not m:
            continue
        case, tool, rnd = m.group("case"), m.group("tool"), int(m.group("round"))
        cases[case] = (m.group("kind"), int(m.group("qd")))
        base = path[:-len(".cpu")]
        try:
            user, sys_, wall, rc, lines = read_cpu(path)
            if rc != 0:
                raise ValueError(f"exit status {rc}")
            ios, measured, notes = IOS[tool](base, lines)
            if ios <= 0:
                raise ValueError("no I/Os")
        except (OSError, ValueError, KeyError, IndexError) as e:
            label = f"{case} {TOOL_NAMES[tool]} round {rnd}: {e}"
            failed.append((case, TOOLS.index(tool), rnd, label))
            continue
        runs.setdefault(case, {}).setdefault(tool, {})[rnd] = {
            "iops": ios / measured,
            "cpu_us": (user + sys_) / ios * 1e6,
            "cores": (user + sys_) / wall if wall else 0.0,
            "outside": wall - measured,
            "notes": notes,
        }
    order = sorted(cases, key=lambda c: (KINDS.index(cases[c][0]) if cases[c][0] in KINDS
                                         else len(KINDS), cases[c][1]))
    failed.sort(key=lambda f: (order.index(f[0]), f[1], f[2]))
    return runs, [f[3] for f in failed], order, cases


def fmt_n(v):
    """Three significant figures: 86.4k, 1.22M, 991k."""
    for div, unit in ((1e6, "M"), (1e3, "k"), (1, "")):
        if abs(v) >= div or div == 1:
            x = v / div
            return f"{x:.2f}{unit}" if x < 10 else f"{x:.1f}{unit}" if x < 100 else f"{x:.0f}{unit}"
    return f"{v:.0f}"


def fmt_us(v):
    return f"{v:.2f}" if v < 100 else f"{v:.0f}"


def spread(values, fmt):
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}–{fmt(max(values))}]"


def ratio_with_interval(a, b, key):
    """Ratio of medians a/b over the rounds both ran, and its 95 % bootstrap interval."""
    rounds = sorted(set(a) & set(b))
    if not rounds:
        return None
    xs = [a[r][key] for r in rounds]
    ys = [b[r][key] for r in rounds]
    point = statistics.median(xs) / statistics.median(ys)
    rng = random.Random(SEED)
    ratios = []
    for _ in range(RESAMPLES):
        pick = [rng.randrange(len(rounds)) for _ in rounds]
        ratios.append(statistics.median(xs[i] for i in pick)
                      / statistics.median(ys[i] for i in pick))
    ratios.sort()
    lo = ratios[int(0.025 * RESAMPLES)]
    hi = ratios[int(0.975 * RESAMPLES) - 1]
    return point, lo, hi, len(rounds)


def fmt_ratio(r):
    if r is None:
        return "–"
    point, lo, hi, _ = r
    return f"{point:.3f} [{lo:.3f}–{hi:.3f}]"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    res = sys.argv[1]
    runs, failed, order, cases = load(res)

    machine = os.path.join(res, "machine.txt")
    batch, seconds = "8", "?"
    if os.path.exists(machine):
        text = open(machine).read().rstrip()
        batch = (re.search(r"batch: (\d+)", text) or [None, batch])[1]
        seconds = (re.search(r"duration: (\d+)s", text) or [None, seconds])[1]
        print("```")
        print(text)
        print("```")
        print()

    print(f"4 KiB random reads, one thread per tool, submitted and completed in batches of "
          f"min(qd, {batch}), {seconds} s a run; medians of the rounds [min–max]. CPU per I/O: "
          "user + system CPU of the whole process (getrusage) over the I/Os of its measured "
          "seconds; cores: that CPU over the run's wall time; outside: wall seconds beyond the "
          "measured ones (start-up, exit).")
    print()
    print("| case | tool | runs | IOPS | CPU µs per I/O | cores | outside s |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for case in order:
        kind, qd = cases[case]
        first = True
        for tool in TOOLS:
            rs = list(runs.get(case, {}).get(tool, {}).values())
            if not rs:
                continue
            label = f"{KIND_TITLES.get(kind, kind)} qd {qd}" if first else ""
            first = False
            print(f"| {label} | {TOOL_NAMES[tool]} | {len(rs)} "
                  f"| {spread([r['iops'] for r in rs], fmt_n)} "
                  f"| {spread([r['cpu_us'] for r in rs], fmt_us)} "
                  f"| {statistics.median(r['cores'] for r in rs):.2f} "
                  f"| {statistics.median(r['outside'] for r in rs):.2f} |")
    print()

    print(f"storlab ÷ each reference: the ratio of the medians, with 95 % bootstrap intervals "
          f"({RESAMPLES} resamples of the rounds both ran). Verdict against t/io_uring: "
          f"CPU per I/O ≤ {CPU_TARGET:.2f} ×; on device-bound cases (all but page cache) "
          f"IOPS ≥ {IOPS_TARGET:.1f} × (the interval includes or exceeds 1.0).")
    print()
    print("| case | CPU per I/O ÷ t/io_uring | IOPS ÷ t/io_uring | CPU per I/O ÷ fio "
          "| IOPS ÷ fio | verdict |")
    print("|---|--:|--:|--:|--:|---|")
    passed = total = 0
    for case in order:
        kind, qd = cases[case]
        by_tool = runs.get(case, {})
        s = by_tool.get("storlab", {})
        t = by_tool.get("t_io_uring", {})
        f = by_tool.get("fio", {})
        cpu_t = ratio_with_interval(s, t, "cpu_us")
        iops_t = ratio_with_interval(s, t, "iops")
        cpu_f = ratio_with_interval(s, f, "cpu_us")
        iops_f = ratio_with_interval(s, f, "iops")
        if not s:
            verdict = "– (no storlab runs)"
        elif cpu_t is None:
            verdict = "– (no t/io_uring runs)" if not t else "– (no round with both)"
        else:
            total += 1
            parts = [f"CPU {'PASS' if cpu_t[0] <= CPU_TARGET else 'FAIL'}"]
            ok = cpu_t[0] <= CPU_TARGET
            if kind in DEVICE_BOUND:
                iops_ok = iops_t[2] >= IOPS_TARGET
                parts.append(f"IOPS {'PASS' if iops_ok else 'FAIL'}")
                ok = ok and iops_ok
            passed += ok
            verdict = ", ".join(parts)
        print(f"| {KIND_TITLES.get(kind, kind)} qd {qd} | {fmt_ratio(cpu_t)} | {fmt_ratio(iops_t)} "
              f"| {fmt_ratio(cpu_f)} | {fmt_ratio(iops_f)} | {verdict} |")
    print()
    print(f"{passed} of {total} cases PASS against t/io_uring.")

    notes = {}
    for case in order:
        for r in runs.get(case, {}).get("storlab", {}).values():
            for n in r["notes"]:
                notes.setdefault(n, []).append(case)
    if notes:
        print()
        print("storlab's engine notes (fast paths used or not):")
        for n, where in notes.items():
            print(f"- {n} ({', '.join(sorted(set(where), key=order.index))})")
    if failed:
        print()
        print(f"Failed runs, left out of the medians ({len(failed)}):")
        for line in failed:
            print(f"- {line}")


if __name__ == "__main__":
    main()
