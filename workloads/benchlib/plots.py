"""The report's plots, drawn by gnuplot when it is installed."""
import os
import shutil
import subprocess
import sys

from .data import configs_in, sweep_points, values
from .defs import WORKLOADS, wl_base
from .stats import mean_ci


def plot(data, workload, outdir, sides, tag=""):
    """A PNG of mean and 95% CI per configuration; returns its file name.
    @tag names the kernel generation when a report holds several."""
    gp = shutil.which("gnuplot")
    if not gp:
        return None
    title, unit = WORKLOADS.get(wl_base(workload), (workload, ""))[:2]
    cfgs = configs_in(data)
    if not any(values(data["runs"], workload, c, s) for c in cfgs for s in sides):
        return None
    datfile = os.path.join(outdir, "plot-%s%s.dat" % (workload, tag))
    with open(datfile, "w") as f:
        for i, c in enumerate(cfgs):
            row = [str(i), c]
            for s in sides:
                xs = values(data["runs"], workload, c, s)
                if xs:
                    m, _, lo, hi = mean_ci(xs)
                    row += ["%g" % m, "%g" % (lo if lo is not None else m),
                            "%g" % (hi if hi is not None else m)]
                else:
                    row += ["NaN", "NaN", "NaN"]
            f.write(" ".join(row) + "\n")
    png = "%s%s.png" % (workload, tag)
    w = 0.8 / len(sides)
    plots = []
    for k, s in enumerate(sides):
        off = (k - (len(sides) - 1) / 2.0) * w
        col = 3 + 3 * k
        label = "" if len(sides) == 1 else (" title 'kernel %s'" % s)
        plots.append("'%s' using ($1+%g):%d:(%g) with boxes%s" % (datfile, off, col, w * 0.9,
                                                                  label or " notitle"))
        plots.append("'%s' using ($1+%g):%d:%d:%d with yerrorbars lc rgb 'black' pt 0 notitle"
                     % (datfile, off, col, col + 1, col + 2))
    script = "\n".join([
        gnuplot_terminal(gp, "900,500"),
        "set output '%s'" % os.path.join(outdir, png),
        "set title '%s%s: mean and 95%% CI per configuration'"
        % (title.replace("'", ""), (" (Linux %s)" % tag.lstrip("-")) if tag else ""),
        "set ylabel '%s'" % unit,
        "set style fill solid 0.5 border -1",
        "set yrange [0:*]",
        "set xrange [-0.6:%g]" % (len(cfgs) - 0.4),
        "set xtics (%s)" % ", ".join("'%s' %d" % (c, i) for i, c in enumerate(cfgs)),
        "set grid ytics",
        "plot " + ", ".join(plots), ""])
    return png if run_gnuplot(gp, script, "report.py", workload) else None


def sweep_plot(data, base, cfgs, outdir, xname, unit, title):
    gp = shutil.which("gnuplot")
    if not gp:
        return None
    plots, shares = [], []
    for i, c in enumerate(cfgs):
        dat = os.path.join(outdir, "sweep-%s-%s.dat" % (base, c))
        with open(dat, "w") as f:
            for x, m, lo, hi, sh in sweep_points(data, base, c):
                f.write("%d %g %g %g %s\n" % (x, m, lo if lo is not None else m,
                                              hi if hi is not None else m,
                                              "%g" % (100 * sh) if sh is not None else "NaN"))
        plots.append("'%s' using 1:2:3:4 with yerrorlines lw 2 lc %d title '%s'"
                     % (dat, i + 1, c))
        shares.append("'%s' using 1:5 with linespoints lw 2 lc %d title '%s'" % (dat, i + 1, c))
    png = "sweep-%s.png" % base
    script = "\n".join([
        gnuplot_terminal(gp, "900,800"),
        "set output '%s'" % os.path.join(outdir, png),
        "set multiplot layout 2,1",
        "set logscale x 2",
        "set grid",
        "set key outside right",
        "set title '%s: throughput (mean, 95%% CI)'" % title.replace("'", ""),
        "set ylabel '%s'" % unit,
        "set yrange [0:*]",
        "plot " + ", ".join(plots),
        "set title 'share of client time waiting for tree locks'",
        "set ylabel '%'",
        "set xlabel '%s'" % xname,
        "plot " + ", ".join(shares),
        "unset multiplot", ""])
    return png if run_gnuplot(gp, script, "report.py", "the %s sweep" % base) else None


def _has_cairo(gp):
    r = subprocess.run([gp, "-e", "set terminal"], text=True, capture_output=True)
    return "pngcairo" in (r.stdout + r.stderr)


def gnuplot_terminal(gp, size):
    """The line that makes @gp write a PNG of @size ("900,500"): pngcairo
    where this gnuplot has it."""
    return ("set terminal pngcairo size %s" if _has_cairo(gp)
            else "set terminal png size %s") % size


def run_gnuplot(gp, script, prog, what):
    """Runs @gp on @script; False, with a line on stderr naming @prog and
    @what, when it fails."""
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        sys.stderr.write("%s: gnuplot failed for %s: %s\n" % (prog, what, r.stderr[-300:]))
        return False
    return True
