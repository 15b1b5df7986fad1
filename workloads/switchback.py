#!/usr/bin/python3
"""Analyse the switchback runs of a results folder again (another settle, a
changed analysis): summary.txt (also printed), switchback.md,
switchback.json and the stationarity files, from benchlib/switchback.py
(its docstring has the method).  workloads/report.py writes the same
summary.txt beside report.md.

    switchback.py <results> [--settle MS] [--out DIR]
"""
import argparse
import os
import sys


def main(argv=None):
    from benchlib.switchback import build
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--settle", type=float, help="settle time in ms (default: meta.txt's "
                    "settle_ms when a number, else the workload's: benchlib/defs.py)")
    ap.add_argument("--out", help="output folder (default: the results folder)")
    a = ap.parse_args(argv)
    summary = build(a.results, a.out, a.settle)
    if summary is None:
        print("switchback.py: no switchback runs under %s (no boot-*/switchback/*/switch.log)"
              % a.results)
        return 0
    sys.stdout.write(summary)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
