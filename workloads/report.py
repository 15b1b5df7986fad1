#!/usr/bin/python3
"""Build the bench report from a results folder (python3 with scipy).

    report.py <results dir>            collect raw outputs -> results.json,
                                       then summary.txt (also printed) and
                                       switchback.md from the switchback
                                       runs and results.json, then
                                       results.csv, report.md (summary.txt
                                       first), *.png
    report.py --render <results.json>  [--no-plots]  only the last step
                                       (with the folder's summary.txt)

Statistics: mean, sample standard deviation, 95% confidence interval of the
mean from Student's t; the ratio of two means (a configuration against
mutex-nospin, or kernel B against kernel A) with a 95% interval from
Fieller's theorem for independent samples with unequal variances and
Welch-Satterthwaite degrees of freedom, beside a percentile bootstrap
interval of the same ratio; the smallest detectable difference at 95%
confidence and, from the noncentral t, at 80% power.  The distributions come
from scipy.stats (Debian's python3-scipy).
"""
import argparse
import json
import os
import sys

# The work is done in benchlib/ (its __init__.py lists the modules):
# collect reads the folder, switchback writes summary.txt, render writes
# report.md, results.csv and plots.
from benchlib.collect import collect
from benchlib.render import render
from benchlib.switchback import build


def main(argv):
    ap = argparse.ArgumentParser(prog=os.path.basename(argv[0]),
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("results", nargs="?", help="a results folder: collect, then render")
    ap.add_argument("--render", metavar="RESULTS_JSON",
                    help="render an existing results.json only")
    ap.add_argument("--no-plots", action="store_true", help="skip the gnuplot plots")
    try:
        a = ap.parse_args(argv[1:])
    except SystemExit as e:
        return e.code
    if (a.results is None) == (a.render is None):
        ap.print_usage(sys.stderr)
        return 2
    if a.render:
        with open(a.render) as f:
            data = json.load(f)
        outdir = os.path.dirname(os.path.abspath(a.render))
        summary = None
        if os.path.exists(os.path.join(outdir, "summary.txt")):
            with open(os.path.join(outdir, "summary.txt")) as f:
                summary = f.read()
        render(data, outdir, not a.no_plots, summary)
        return 0
    data = collect(a.results)
    with open(os.path.join(a.results, "results.json"), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    summary = build(a.results, separate=data)
    render(data, a.results, not a.no_plots, summary)
    if summary:
        sys.stdout.write(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
