"""Run every issue-16 benchmark and print one table (each figure with its same-run baseline and goal).

Run: .venv/bin/python bench/all.py [--quick] [--only poll layout ...] [--markdown]

Each benchmark runs as its own process with `--json` (so one cannot warm or disturb the next),
its own output goes to stderr as it runs, and its `BENCH {...}` lines are collected. `--quick`
uses smaller sizes (2,000 torrents, 5,000 files, a 20,000-download history, fewer rounds) for a
run of a few minutes; without it the sizes are the issue's (10,000 torrents, 50,000 files,
100,000 downloads: the history is generated once and cached, the torrents take a while to add).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

FULL = {
    "mqtt_roundtrip": ["--downloads", "1000", "--requests", "1000"],
    "layout": ["--files", "5000", "50000", "--rounds", "5"],
    "completion": ["--rounds", "10"],
    "poll": ["--torrents", "2000", "10000", "--cycles", "20"],
    "history": ["--downloads", "100000", "--small", "10000"],
    "file_layout": ["--rounds", "3", "--review-rounds", "2"],
}
QUICK = {
    "mqtt_roundtrip": ["--downloads", "300", "--requests", "300"],
    "layout": ["--files", "5000", "--rounds", "3"],
    "completion": ["--rounds", "6"],
    "poll": ["--torrents", "2000", "--cycles", "10"],
    "history": ["--downloads", "20000", "--small", "5000", "--idle", "3"],
    "file_layout": ["--rounds", "1", "--review-rounds", "1", "--review-files", "10"],
}


def run_one(name: str, args: list[str]) -> tuple[list[dict], str | None, float]:
    """Run bench/<name>.py with --json; its rows, an error (None = ok) and the seconds it took."""
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent),
                                                                      os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, str(HERE / f"{name}.py"), *args, "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    rows: list[dict] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("BENCH "):
            rows.append(json.loads(line[6:]))
        else:
            sys.stderr.write(line)
    code = proc.wait()
    return rows, (f"exit code {code}" if code else None), time.monotonic() - started


def figure(value: float | None, unit: str) -> str:
    """A value with its unit, in a readable precision."""
    if value is None:
        return "-"
    return f"{value:.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"


def table(rows: list[dict], markdown: bool) -> str:
    """The rows as a Markdown table, or aligned plain text."""
    head = ["measure", "now", "baseline", "ratio", "goal", "met", "note"]
    lines = []
    for row in rows:
        ratio = row.get("ratio")
        met = {True: "yes", False: "NO", None: "-"}[row.get("met")]
        baseline = (f"{row['baseline_name']} {figure(row.get('baseline'), row['unit'])}"
                    if row.get("baseline") is not None else "")
        shown = f"{ratio:.2f}x" if ratio is not None else "-"
        lines.append([row["measure"], figure(row["value"], row["unit"]), baseline, shown,
                      row.get("goal", ""), met, row.get("note", "")])
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        out += ["| " + " | ".join(cell.replace("|", "/") for cell in line) + " |" for line in lines]
        return "\n".join(out)
    widths = [max(len(head[i]), *(len(line[i]) for line in lines)) if lines else len(head[i])
              for i in range(len(head) - 1)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=False)) + "  note"]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=False)) + "  " + line[-1]
            for line in lines]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen benchmarks in turn and print the table; non-zero if one failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, a few minutes in all")
    parser.add_argument("--only", nargs="+", choices=list(FULL), help="run only these benchmarks")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    rows: list[dict] = []
    failed: list[str] = []
    before = os.getloadavg()
    for name in args.only or list(plan):
        sys.stderr.write(f"\n===== bench/{name}.py {' '.join(plan[name])}\n")
        found, error, seconds = run_one(name, plan[name])
        rows += found
        if error or not found:
            failed.append(f"{name}: {error or 'no BENCH rows'}")
        sys.stderr.write(f"===== {name}: {len(found)} rows in {seconds:.0f} s\n")
    after = os.getloadavg()
    print(table(rows, args.markdown))
    print(f"\nmachine: {os.cpu_count()} cores, load average {before[0]:.1f} at the start and {after[0]:.1f} "
          f"at the end (15 min {after[2]:.1f})")
    for line in failed:
        print(f"FAILED {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
