#!/usr/bin/python3
"""The analysis of "switchback" benchmark runs and summary.txt: one long
workload run whose lock configuration the guest controller twig-switch
changes every WINDOW, in randomized blocks that hold every configuration
once (and a second copy of the baseline, "<baseline>#B", the A/A control).

build() finds every <results>/boot-*/switchback/*/switch.log and writes
switchback.md, switchback.json, stationarity-*.csv/.png and summary.txt (a
table to paste into a commit message: the switchback runs and the separate
runs of results.json, against report.md's baseline).  Its commands:
workloads/report.py (report.md and summary.txt together) and
workloads/switchback.py (this analysis again, e.g. at another settle).

Method.  A window's settled part runs from the first sample at or after
its start + SETTLE (per workload by default: benchlib/defs.py) to the last
sample before its end.  Blocks that lack a window (the last one, usually)
are dropped; a window that completed nothing counts as nothing.  Each
label's estimate is its operations summed over its settled parts, over
their seconds, against the baseline's in the same blocks; its standard
error comes from a circular block bootstrap over the sequence of blocks
(block length round(n^(1/3)), 4000 resamples, seed 26) and its 95%
interval from Student's t for the resampled runs of blocks; stars are
Holm's over the run's labels (family-wise 5%).  Beside it: a regression of
the windows' log throughput on label dummies and a smooth time trend
(Legendre polynomials) with Newey-West (HAC) errors, the effect by quarter
of the run and its slope on time (drift), and whether the effect still
moves after the settle.  Runs of one workload in several boots are
combined by random effects (DerSimonian-Laird, Hartung-Knapp interval).
The A/A label's half-width says what the run cannot resolve.
"""
import json
import math
import os
import re
import shutil
import sys
import textwrap

import numpy
import scipy.stats

from .collect import read_kv
from .data import baseline_for, configs_in, values
from .defs import BASELINE, settle_for
from .plots import gnuplot_terminal, run_gnuplot
from .stats import (detectable_change, holm, mean, mean_ci, random_effects, ratio_ci,
                             t_ppf, welch_p)

SETTLES_MS = (0, 100, 200, 500, 1000)
MAX_STEPS = 10
ACF_LAGS_S = (1, 2, 5, 10)
NBOOT = 4000
SEED = 26
AA_SUFFIX = "#B"


# ------------------------------------------------------------------ parsing

def parse_log(text):
    """Parse a twig-switch log (the text, not the path).

    Returns a dict: params (name -> string), configs (label -> list of
    settings, in file order), samples (list of [t_us, count]), windows
    (list of dicts t_us, block, label, pre: the index in samples of the
    last sample taken before the W line, or None), end_us (None when the
    log has no E line), baseline (param baseline, else the label L that has
    an L#B, else the first label), labels (config labels, else W labels,
    in order of first appearance), errors (the text of twig-switch's
    "X <t_us> <why>" lines: why it stopped), drains_us (each "D" line's time
    to write a window's settings, in order).  Unknown or malformed lines
    are ignored.
    """
    log = {"params": {}, "configs": {}, "samples": [], "windows": [], "end_us": None,
           "end_pre": None, "errors": [], "drains_us": []}
    for line in text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        try:
            if f[0] == "param" and len(f) >= 3:
                log["params"][f[1]] = " ".join(f[2:])
            elif f[0] == "config" and len(f) >= 2:
                log["configs"][f[1]] = f[2:]
            elif f[0] == "S" and len(f) >= 3:
                log["samples"].append([int(f[1]), int(f[2])])
            elif f[0] == "W" and len(f) >= 4:
                log["windows"].append({"t_us": int(f[1]), "block": int(f[2]), "label": f[3],
                                       "pre": len(log["samples"]) - 1 if log["samples"]
                                       else None})
            elif f[0] == "D" and len(f) >= 3:
                log["drains_us"].append(int(f[2]))
            elif f[0] == "X" and len(f) >= 2 and int(f[1]) >= 0:
                log["errors"].append(" ".join(f[1:]))
            elif f[0] == "E" and len(f) >= 2:
                log["end_us"] = int(f[1])
                log["end_pre"] = len(log["samples"]) - 1 if log["samples"] else None
        except ValueError:
            continue
    labels = list(log["configs"])
    for w in log["windows"]:
        if w["label"] not in labels:
            labels.append(w["label"])
    log["labels"] = labels
    base = log["params"].get("baseline")
    if not base:
        aa = [lb for lb in labels if lb.endswith(AA_SUFFIX) and lb[:-len(AA_SUFFIX)] in labels]
        base = aa[0][:-len(AA_SUFFIX)] if aa else (labels[0] if labels else None)
    log["baseline"] = base
    return log


def read_log(path):
    """parse_log() of the file at @path."""
    with open(path, errors="replace") as f:
        return parse_log(f.read())


def param_ms(log, name, default=None):
    try:
        return float(log["params"][name])
    except (KeyError, ValueError):
        return default


# ----------------------------------------------------------- window cutting

def windows(log, settle_ms):
    """The windows of @log with their settled throughput.

    Each: block, label, prev (the label of the window just before, or None),
    t_us, end_us, rate (ops/s over the settled part, None when it holds
    fewer than two samples), ops, seconds (of the settled part), t0_us and
    t1_us (the samples used), idx (indices of the samples in the settled
    part).  The sample just before the W line counts as taken at t_us.
    A window whose end is unknown (no next W and no E), or that was cut
    short (shorter than 90% of param window_ms: twig-switch stopped), has
    rate None.
    """
    S = log["samples"]
    ws = log["windows"]
    out = []
    for k, w in enumerate(ws):
        if k + 1 < len(ws):
            end_us, last = ws[k + 1]["t_us"], ws[k + 1]["pre"]
        elif log["end_us"] is not None:
            end_us, last = log["end_us"], log["end_pre"]
        else:
            end_us, last = None, None
        first = w["pre"] if w["pre"] is not None else -1
        rec = {"block": w["block"], "label": w["label"],
               "prev": ws[k - 1]["label"] if k else None,
               "t_us": w["t_us"], "end_us": end_us, "rate": None, "ops": None,
               "seconds": None, "t0_us": None, "t1_us": None, "idx": []}
        win = param_ms(log, "window_ms")
        if win is not None and end_us is not None and end_us - w["t_us"] < 900 * win:
            end_us = None
        if end_us is not None and last is not None:
            idx = []
            for i in range(max(first, 0), last + 1):
                t = max(S[i][0], w["t_us"]) if i == first else S[i][0]
                if w["t_us"] + settle_ms * 1000 <= t <= end_us:
                    idx.append(i)
            rec["idx"] = idx
            if len(idx) >= 2:
                i0, i1 = idx[0], idx[-1]
                dt = (S[i1][0] - S[i0][0]) / 1e6
                if dt > 0:
                    rec.update(ops=S[i1][1] - S[i0][1], seconds=dt, rate=(S[i1][1] - S[i0][1]) / dt,
                               t0_us=S[i0][0], t1_us=S[i1][0])
        out.append(rec)
    return out


def complete_blocks(log, wins, positive=False):
    """The block numbers in which every label has exactly one window with a
    rate, in run order.  A window that completed nothing still counts (a
    stall is part of what a configuration does; dropping its block would
    flatter the label that stalls more); @positive: only blocks whose
    every rate is above zero, for the statistics on log rates."""
    labels = set(log["labels"])
    by = {}
    for w in wins:
        by.setdefault(w["block"], []).append(w)
    good = []
    for b, bw in by.items():
        got = [w["label"] for w in bw]
        if (sorted(got) == sorted(labels) and len(set(got)) == len(got)
                and all(w["rate"] is not None and (w["rate"] > 0 or not positive)
                        for w in bw)):
            good.append(b)
    return good


def block_table(log, wins):
    """The complete blocks as arrays, in run order: (labels, ops, secs,
    t_s): @labels with the baseline first; ops[i, j] the operations of
    block i's window of label j over its settled part and secs[i, j] that
    part's length in seconds; t_s[i] the block's middle in seconds."""
    base = log["baseline"]
    labels = [base] + [lb for lb in log["labels"] if lb != base]
    col = {lb: j for j, lb in enumerate(labels)}
    good = complete_blocks(log, wins)
    row = {b: i for i, b in enumerate(good)}
    ops = numpy.zeros((len(good), len(labels)))
    secs = numpy.zeros((len(good), len(labels)))
    t = numpy.zeros((len(good), 2))
    t[:, 0] = numpy.inf
    t[:, 1] = -numpy.inf
    for w in wins:
        i = row.get(w["block"])
        if i is None:
            continue
        ops[i, col[w["label"]]] = w["ops"]
        secs[i, col[w["label"]]] = w["seconds"]
        t[i, 0] = min(t[i, 0], w["t_us"] / 1e6)
        t[i, 1] = max(t[i, 1], w["end_us"] / 1e6)
    return labels, ops, secs, t.mean(axis=1) if len(good) else numpy.zeros(0)


def block_ratios(log, wins):
    """{label: [(block, log ratio to the baseline window of that block), ...]}
    for every non-baseline label, over the complete blocks whose windows
    all completed something, in order (for the per-block statistics:
    carry-over, drift; the estimate itself is family()'s)."""
    base = log["baseline"]
    out = {lb: [] for lb in log["labels"] if lb != base}
    good = set(complete_blocks(log, wins, positive=True))
    by = {}
    for w in wins:
        if w["block"] in good:
            by.setdefault(w["block"], {})[w["label"]] = w
    for b in sorted(by):
        lb0 = math.log(by[b][base]["rate"])
        for lb in out:
            out[lb].append((b, math.log(by[b][lb]["rate"]) - lb0))
    return out


# ---------------------------------------------------------------- statistics

def block_length(n):
    """The bootstrap's block length for @n blocks: round(n^(1/3)), >= 1."""
    return max(1, int(round(n ** (1.0 / 3))))


def circular_block_indices(n, blen, nboot, seed=SEED):
    """@nboot circular block bootstrap resamples of 0..@n-1: runs of @blen
    consecutive indices (wrapping round) from random starts, cut to @n.
    Returns (indices as an nboot x n array, k runs per resample)."""
    k = -(-n // blen)
    starts = numpy.random.default_rng(seed).integers(0, n, size=(nboot, k))
    idx = (starts[:, :, None] + numpy.arange(blen)[None, None, :]).reshape(nboot, -1)[:, :n] % n
    return idx, k


def block_bootstrap_ci(x, level=0.95, nboot=NBOOT, blen=None, seed=SEED):
    """Circular block bootstrap interval for the mean of the series @x.

    Returns (mean, lo, hi, blen).  Resamples ceil(n/blen) runs of blen
    consecutive values (wrapping round), keeps the first n; the interval is
    the percentile interval of the resampled means, widened about the mean by
    sqrt(n/(n-1)) (the bootstrap's variance is the plug-in one) and by
    t(k-1)/z for the k = ceil(n/blen) resampled blocks (the percentile
    interval is a normal one, too short for a few independent blocks;
    without this, 40 blocks covered 90-93% in the tests).  n < 3
    gives (mean, None, None, blen).  A fixed @seed makes reports
    reproducible.
    """
    x = numpy.asarray(x, dtype=float)
    n = len(x)
    if blen is None:
        blen = block_length(n)
    if n == 0:
        return None, None, None, blen
    m = float(x.mean())
    if n < 3:
        return m, None, None, blen
    idx, k = circular_block_indices(n, blen, nboot, seed)
    means = x[idx].mean(axis=1)
    a = (1 - level) / 2
    lo, hi = numpy.quantile(means, [a, 1 - a])
    c = math.sqrt(n / (n - 1.0))
    if k > 1:
        c *= scipy.stats.t.ppf(1 - a, k - 1) / scipy.stats.norm.ppf(1 - a)
    return m, m + c * (float(lo) - m), m + c * (float(hi) - m), blen


def iid_ci(x, level=0.95):
    """Student's t interval for the mean of @x as if its values were
    independent: (mean, lo, hi)."""
    m, _, lo, hi = mean_ci([float(v) for v in x], level)
    return m, lo, hi


def family(log, wins, level=0.95, nboot=NBOOT, seed=SEED):
    """Every non-baseline label's ratio to the baseline over the complete
    blocks: the operations each label completed in its windows' settled
    parts, summed, over their seconds, against the baseline's in the same
    blocks (a ratio of rates from summed operations and time: a window
    that completed nothing counts as nothing, it does not drop its block).

    The standard error comes from a circular block bootstrap over the
    sequence of blocks (block length round(n^(1/3)), @nboot resamples,
    fixed @seed), widened by sqrt(n/(n-1)); the interval is the estimate
    +- Student's t with k - 1 degrees of freedom for the k resampled runs
    of blocks (a few independent runs are too few for a normal interval);
    the p value comes from the same t.  The stars are Holm's over the
    labels of the run (family-wise 5%), A/A copy included.

    Returns {label: summary} (see ratio_summary()), or {} with fewer than 3
    complete blocks."""
    labels, ops, secs, _ = block_table(log, wins)
    n = len(ops)
    if n < 3:
        return {}
    blen = block_length(n)
    idx, k = circular_block_indices(n, blen, nboot, seed)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        rate = numpy.log(ops.sum(axis=0) / secs.sum(axis=0))
        boot = numpy.log(ops[idx].sum(axis=1) / secs[idx].sum(axis=1))
    est = rate[1:] - rate[0]
    reps = boot[:, 1:] - boot[:, :1]
    out = {}
    for j, lb in enumerate(labels[1:]):
        r = reps[:, j]
        r = r[numpy.isfinite(r)]
        # resamples in which the label or the baseline completed nothing
        # have no ratio: more than 1% of them and the spread is not known
        se = (float(numpy.std(r, ddof=1) * math.sqrt(n / (n - 1.0)))
              if len(r) > 0.99 * nboot else None)
        out[lb] = ratio_summary(float(est[j]) if numpy.isfinite(est[j]) else None, se,
                                k - 1, level, len(labels) - 1)
        out[lb].update(n=n, blen=blen, rate=float(math.exp(rate[j + 1]))
                       if numpy.isfinite(rate[j + 1]) else 0.0)
    out_base = float(math.exp(rate[0])) if numpy.isfinite(rate[0]) else 0.0
    star(out)
    for r in out.values():
        r["base_rate"] = out_base
    return out


def ratio_summary(est, se, df, level=0.95, family_size=1):
    """A log ratio @est with standard error @se and @df degrees of freedom
    as the report shows it: dict log, se, df, ratio, lo, hi (None when
    not estimable), pct, pct_lo, pct_hi (% change), half (half the
    interval's width in % points), p, mde80 (the change, in %, that Holm's
    test over @family_size rows finds with at least 80% power at this se:
    a two-sided test at 5% / family_size, the step every star must pass
    when all the rows are real changes is no harder; noncentral t), sig
    (set by star())."""
    r = {"log": est, "se": se, "df": df, "ratio": None, "lo": None, "hi": None, "pct": None,
         "pct_lo": None, "pct_hi": None, "half": None, "p": None, "mde80": None, "sig": False}
    if est is None:
        return r
    r.update(ratio=math.exp(est), pct=pct(est))
    if se is None or not df or df < 1:
        return r
    t = float(scipy.stats.t.ppf(0.5 + level / 2, df))
    lo, hi = est - t * se, est + t * se
    r.update(lo=math.exp(lo), hi=math.exp(hi), pct_lo=pct(lo), pct_hi=pct(hi),
             half=50 * (math.exp(hi) - math.exp(lo)),
             p=float(2 * scipy.stats.t.sf(abs(est) / se, df)) if se > 0 else
             (0.0 if est else 1.0),
             mde80=pct(detectable_change(se, df, 1 - (1 - level) / max(1, family_size))))
    return r


def star(ratios):
    """Sets each summary's sig by Holm's test over all of them."""
    labels = list(ratios)
    for lb, s in zip(labels, holm([ratios[lb]["p"] for lb in labels])):
        ratios[lb]["sig"] = s
    return ratios


def hac_regression(log, wins, level=0.95):
    """Regression of the complete blocks' window log throughput on one dummy
    per non-baseline label and a Legendre polynomial trend in time (degree
    min(8, max(1, blocks // 5))), with Newey-West errors (Bartlett kernel,
    lag two blocks' worth of windows) and Student's t with blocks - 1
    degrees of freedom.  Returns {label: (log ratio, lo, hi)} and the
    degree and lag in a dict."""
    good = set(complete_blocks(log, wins, positive=True))
    ws = sorted((w for w in wins if w["block"] in good), key=lambda w: w["t_us"])
    labels = [lb for lb in log["labels"] if lb != log["baseline"]]
    nb = len(good)
    if nb < 3:
        return {}
    t = numpy.array([(w["t0_us"] + w["t1_us"]) / 2.0 for w in ws])
    u = 2 * (t - t.min()) / max(t.max() - t.min(), 1) - 1
    deg = min(8, max(1, nb // 5))
    cols = [numpy.polynomial.legendre.legval(u, numpy.eye(deg + 1)[d]) for d in range(deg + 1)]
    cols += [numpy.array([1.0 if w["label"] == lb else 0.0 for w in ws]) for lb in labels]
    X = numpy.column_stack(cols)
    y = numpy.log([w["rate"] for w in ws])
    XtX_inv = numpy.linalg.pinv(X.T @ X)
    beta = XtX_inv @ X.T @ y
    e = y - X @ beta
    Xe = X * e[:, None]
    lag = 2 * len(log["labels"])
    S = Xe.T @ Xe
    for j in range(1, min(lag, len(y) - 1) + 1):
        G = Xe[j:].T @ Xe[:-j]
        S += (1 - j / (lag + 1.0)) * (G + G.T)
    V = XtX_inv @ S @ XtX_inv * len(y) / max(len(y) - X.shape[1], 1)
    q = scipy.stats.t.ppf(0.5 + level / 2, nb - 1)
    out = {"degree": deg, "lag": lag, "ratios": {}}
    for i, lb in enumerate(labels):
        j = deg + 1 + i
        se = math.sqrt(max(V[j, j], 0))
        out["ratios"][lb] = (float(beta[j]), float(beta[j] - q * se), float(beta[j] + q * se))
    return out


def gapped_acf(t_s, x, lags=ACF_LAGS_S, tol=0.5):
    """Autocorrelation of a series with gaps: for each lag L (seconds), the
    mean product of deviations (from the overall mean) over the pairs whose
    times differ by L +- @tol, over the overall variance.  Returns
    {L: [r or None, pairs]}."""
    t = numpy.asarray(t_s, dtype=float)
    x = numpy.asarray(x, dtype=float)
    out = {}
    if len(x) < 3 or x.var() == 0:
        return {L: [None, 0] for L in lags}
    d = x - x.mean()
    diff = t[None, :] - t[:, None]
    for L in lags:
        i, j = numpy.nonzero(numpy.abs(diff - L) < tol)
        out[L] = [float((d[i] * d[j]).mean() / x.var()) if len(i) >= 3 else None, int(len(i))]
    return out


def window_steps(log, w):
    """The sample steps of window @w (from windows(log, 0)): [(t0_us,
    t1_us, ops)], the sample just before the W line counted as taken at
    the switch."""
    S = log["samples"]
    t = [max(S[i][0], w["t_us"]) for i in w["idx"]]
    c = [S[i][1] for i in w["idx"]]
    return [(t[k], t[k + 1], c[k + 1] - c[k]) for k in range(len(t) - 1)]


def per_second(log, blocks, ratio):
    """The run's throughput per second over the complete @blocks: every
    sample step of their windows (no settle) divided by @ratio[its window's
    label] (the estimated ratio to the baseline, so all are in baseline
    units), summed into whole seconds of the run by each step's midpoint;
    a second counts when its steps cover at least 3/4 of it (windows may
    be shorter or longer than a second; blocks left out leave gaps).
    Returns (times in s, ops/s)."""
    ops, cover = {}, {}
    for w in windows(log, 0):
        if w["block"] not in blocks or w["rate"] is None:
            continue
        r = ratio.get(w["label"], 1.0)
        for t0, t1, n in window_steps(log, w):
            if t1 <= t0:
                continue
            sec = int((t0 + t1) // 2000000)
            ops[sec] = ops.get(sec, 0.0) + n / r
            cover[sec] = cover.get(sec, 0.0) + (t1 - t0) / 1e6
    ts = [float(k) for k in sorted(ops) if cover[k] >= 0.75]
    return ts, [ops[int(k)] / cover[int(k)] for k in ts]


def carryover(log, wins, alpha=0.05):
    """Each non-baseline label's log ratios split by the label of the window
    just before its own.  Returns {label: {"by_prev": {prev: {n, ratio, lo,
    hi} with a 95% t interval}, "p": one-way ANOVA p over the groups with
    n >= 2, "flag": p below alpha / labels (Bonferroni)}}.  (Disjoint
    intervals were tried as a flag: with a dozen groups they disagree by
    chance too often.)"""
    good = set(complete_blocks(log, wins))
    lr = block_ratios(log, wins)
    prev = {(w["block"], w["label"]): w["prev"] or "start" for w in wins if w["block"] in good}
    out = {}
    for lb, xs in lr.items():
        groups = {}
        for b, v in xs:
            groups.setdefault(prev[(b, lb)], []).append(v)
        by = {}
        for p, v in sorted(groups.items()):
            m, lo, hi = iid_ci(v)
            by[p] = {"n": len(v), "ratio": math.exp(m),
                     "lo": math.exp(lo) if lo is not None else None,
                     "hi": math.exp(hi) if hi is not None else None}
        ok = [v for v in groups.values() if len(v) >= 2]
        p = None
        if len(ok) >= 2 and sum(len(v) for v in ok) > len(ok):
            with numpy.errstate(all="ignore"):
                p = float(scipy.stats.f_oneway(*ok).pvalue)
            if math.isnan(p):
                p = None
        flag = bool(p is not None and p < alpha / max(1, len(lr)))
        out[lb] = {"by_prev": by, "p": p, "flag": flag}
    return out


def transition(log, steps=MAX_STEPS):
    """How fast a switch takes effect: for each sample step after the
    switch (step k spans k..k+1 sample intervals from the W line, the
    sample just before it counted as taken then) each non-baseline label's
    log ratio of that step's rate to the baseline's same step in the same
    complete block, as a % change with a 95% t interval over blocks.
    A ratio that still moves over the first steps means the settle is too
    short for this workload: the settled part mixes in the previous
    configuration (dilution, not noise, so the A/A floor does not show it).
    Returns {"step_ms": sample_ms, "steps": n, "labels": {label: [{pct, lo,
    hi, n}, ...]}} (at most @steps steps)."""
    wins = windows(log, 0)
    good = set(complete_blocks(log, wins))
    by = {}
    for w in wins:
        if w["block"] not in good or len(w["idx"]) < 2:
            continue
        by.setdefault(w["block"], {})[w["label"]] = [
            n / ((t1 - t0) / 1e6) if t1 > t0 else 0.0
            for t0, t1, n in window_steps(log, w)[:steps]]
    base = log["baseline"]
    n = min((len(r) for b in by.values() for r in b.values()), default=0)
    out = {}
    for lb in log["labels"]:
        if lb == base:
            continue
        rows = []
        for k in range(n):
            v = [math.log(b[lb][k] / b[base][k]) for b in by.values()
                 if b.get(lb) and b.get(base) and b[lb][k] > 0 and b[base][k] > 0]
            m, lo, hi = iid_ci(v) if v else (None, None, None)
            rows.append({"n": len(v), "pct": pct(m), "lo": pct(lo), "hi": pct(hi)})
        out[lb] = rows
    return {"step_ms": param_ms(log, "sample_ms"), "steps": n, "labels": out}


def read_hoststat(path):
    """bench.sh's hoststat.txt: (epoch seconds, cumulative steal ticks,
    cumulative total ticks, cumulative idle + iowait ticks, the boot's
    QEMU's cumulative ticks or None when the file predates that column)
    as arrays, or None without the file."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                v = line.split()
                if len(v) >= 9 and not line.startswith("#"):
                    try:
                        x = [float(a) for a in v[:9]]
                    except ValueError:
                        continue
                    qemu = float(v[10]) if len(v) >= 11 else math.nan
                    rows.append((x[0], x[8], sum(x[1:9]), x[4] + x[5], qemu))
    except OSError:
        return None
    if len(rows) < 2:
        return None
    a = numpy.array(rows)
    qemu = None if numpy.isnan(a[:, 4]).any() else a[:, 4]
    return a[:, 0], a[:, 1], a[:, 2], a[:, 3], qemu


# A host busy beside the guest: processes other than the boot's QEMU
# took this share of the host's CPU time under the run (mean %), or,
# where hoststat.txt predates QEMU's own column, the host had less idle
# than this.  The guest alone left 5-21% idle on this 2-core host; the
# one run seen at 0% (a845991, SEED=51, lookup in boot 1, beside another
# engineer's work) read spin512 -6% where its eight other boots read
# +45 to +69%: a preempted lock holder's vCPU turns spinning into waste.
HOST_OTHERS_PCT = 10.0
HOST_BUSY_IDLE_PCT = 2.0


def host_steal(log, wins, hs):
    """The host's steal time under a run: for each complete block its
    share of the host's CPU time stolen (from @hs, read_hoststat()'s
    arrays, mapped onto the log by its param realtime_us), the run's mean
    and worst block, and per label the slope of the block's log ratio on
    that share (% change per point of steal, 95% t interval): whether the
    host's neighbours move the effect.  None when the log or the host
    lacks what it takes."""
    r0 = param_ms(log, "realtime_us")
    if hs is None or r0 is None:
        return None
    t, steal, total = hs[:3]
    idle = hs[3] if len(hs) > 3 else None
    qemu = hs[4] if len(hs) > 4 else None
    good = complete_blocks(log, wins, positive=True)
    span = {}
    for w in wins:
        if w["block"] in good:
            a, b = span.get(w["block"], (math.inf, -math.inf))
            span[w["block"]] = (min(a, w["t_us"]), max(b, w["end_us"]))
    share, spare, others = {}, {}, {}

    def delta(a, ea, eb):
        return numpy.interp(eb, t, a) - numpy.interp(ea, t, a)
    for blk, (a, b) in span.items():
        ea, eb = (r0 + a) / 1e6, (r0 + b) / 1e6
        if ea < t[0] or eb > t[-1]:
            continue
        dt = delta(total, ea, eb)
        if dt > 0:
            share[blk] = 100 * delta(steal, ea, eb) / dt
            if idle is not None:
                spare[blk] = 100 * delta(idle, ea, eb) / dt
            if idle is not None and qemu is not None and numpy.interp(ea, t, qemu) > 0:
                others[blk] = 100 * (dt - delta(idle, ea, eb) - delta(steal, ea, eb)
                                     - delta(qemu, ea, eb)) / dt
    if len(share) < 3:
        return None
    ratios = block_ratios(log, wins)
    out = {"blocks": len(share), "mean_pct": float(numpy.mean(list(share.values()))),
           "max_pct": float(max(share.values())), "slope": slopes(ratios, share)}
    if spare:
        out.update(idle_mean_pct=float(numpy.mean(list(spare.values()))),
                   idle_min_pct=float(min(spare.values())), idle_slope=slopes(ratios, spare))
        out["busy"] = out["idle_mean_pct"] < HOST_BUSY_IDLE_PCT
    if others:
        out.update(others_mean_pct=float(numpy.mean(list(others.values()))),
                   others_max_pct=float(max(others.values())))
        out["busy"] = out["others_mean_pct"] >= HOST_OTHERS_PCT
    return out


def slopes(ratios, x_by_block):
    """Per label, the slope of the blocks' log ratios on a per-block host
    figure (% change per point, 95% t interval); labels with fewer than
    8 blocks or a constant figure are left out."""
    out = {}
    for lb, xs in ratios.items():
        pts = [(x_by_block[b], v) for b, v in xs if b in x_by_block]
        x = numpy.array([p[0] for p in pts])
        if len(pts) < 8 or x.std() == 0:
            continue
        fit = scipy.stats.linregress(x, [p[1] for p in pts])
        tq = scipy.stats.t.ppf(0.975, len(pts) - 2)
        out[lb] = [100 * fit.slope, 100 * (fit.slope - tq * fit.stderr),
                   100 * (fit.slope + tq * fit.stderr)]
    return out


def pct(log_ratio):
    """A log ratio as a % change (None stays None)."""
    return None if log_ratio is None else 100.0 * math.expm1(log_ratio)


def aa_label(log):
    """The A/A copy's label, or None when the run has none."""
    lb = "%s%s" % (log["baseline"], AA_SUFFIX)
    return lb if lb in log["labels"] else None


def drain_summary(us):
    """{n, median_ms, p99_ms, max_ms} of the windows' settings writes (the
    D lines: with twigfs's lock= among the settings, each a drain), or
    None without any.  Percentiles by the nearest rank."""
    if not us:
        return None
    x = sorted(us)

    def rank(q):
        return x[max(0, math.ceil(q * len(x)) - 1)] / 1000.0
    return {"n": len(x), "median_ms": rank(0.5), "p99_ms": rank(0.99), "max_ms": x[-1] / 1000.0}


def ratios_at(log, settle_ms):
    """{label: family()'s summary} at @settle_ms."""
    return family(log, windows(log, settle_ms))


def drift(log, wins, quarters=4, level=0.95):
    """Does the effect stay the same over the run?  For each non-baseline
    label: its ratio (summed operations and time, as family()) in each of
    @quarters consecutive parts of the complete blocks, and the slope of
    its per-block log ratio on time (ordinary least squares over the
    blocks whose windows all completed something; blocks are close to
    independent once paired within a block) in % points per 100 s, with
    an interval Bonferroni-corrected over the labels; flag: that interval
    excludes 0.  Returns {label: {quarters: [pct], slope, lo, hi, flag}}."""
    labels, ops, secs, t = block_table(log, wins)
    lr = block_ratios(log, wins)
    tb = {}
    for w in wins:
        tb.setdefault(w["block"], []).append((w["t_us"] + (w["end_us"] or w["t_us"])) / 2e6)
    m = max(1, len(labels) - 1)
    out = {}
    parts = numpy.array_split(numpy.arange(len(ops)), quarters)
    for j, lb in enumerate(labels[1:], 1):
        q = []
        for ix in parts:
            with numpy.errstate(divide="ignore", invalid="ignore"):
                v = (math.log(ops[ix, j].sum() / secs[ix, j].sum())
                     - math.log(ops[ix, 0].sum() / secs[ix, 0].sum())) if len(ix) and \
                    ops[ix, j].sum() > 0 and ops[ix, 0].sum() > 0 else None
            q.append(pct(v))
        rec = {"quarters": q, "slope": None, "lo": None, "hi": None, "flag": False}
        pairs = lr.get(lb, [])
        if len(pairs) >= 8:
            x = numpy.array([numpy.mean(tb[b]) for b, _ in pairs])
            y = numpy.array([v for _, v in pairs])
            fit = scipy.stats.linregress(x, y)
            tq = scipy.stats.t.ppf(1 - (1 - level) / (2 * m), len(y) - 2)
            # the log ratio's slope per 100 s, in % points
            rec.update(slope=1e4 * fit.slope, lo=1e4 * (fit.slope - tq * fit.stderr),
                       hi=1e4 * (fit.slope + tq * fit.stderr), se=1e4 * fit.stderr)
            rec["flag"] = bool(rec["lo"] > 0 or rec["hi"] < 0)
        out[lb] = rec
    return out


def union_keys(dicts):
    """The labels of several runs' per-label dicts (None skipped), in
    first-seen order."""
    return list(dict.fromkeys(lb for d in dicts if d for lb in d))


def drift_pooled(drifts, level=0.95):
    """The runs' (a bench's boots') drift slopes per label combined by
    random_effects(), the interval Bonferroni-corrected over the labels:
    at 50 s a boot's own slope test, on about 25 blocks, flags noise more
    often than its level says; the boots together ask whether the effect
    moves over a run.  {label: {slope, lo, hi, k, flag}}, or None when no
    run has slopes with their standard errors."""
    labels = union_keys(drifts)
    out = {}
    for lb in labels:
        xs = [d[lb] for d in drifts if d and (d.get(lb) or {}).get("se")]
        if len(xs) < 2:
            continue
        re_ = random_effects([x["slope"] for x in xs], [x["se"] for x in xs],
                             level=1 - (1 - level) / max(1, len(labels)))
        out[lb] = {"slope": re_["mu"], "lo": re_["lo"], "hi": re_["hi"], "k": re_["k"],
                   "flag": bool(re_["lo"] > 0 or re_["hi"] < 0)}
    return out or None


def settle_check(log, settle_ms, level=0.95):
    """Does the effect still move after the settle?  With two or more
    settled sample steps per window: for each label, the first settled
    step's log ratio (to the baseline's same step in the block) minus the
    mean of the later settled steps, paired over blocks, with a t interval
    Bonferroni-corrected over the labels; moving: it excludes 0 (the
    switch had not finished acting: raise the settle).  Returns None when
    a window has fewer than two settled steps (nothing to compare), else
    {label: {pct, lo, hi, n, moving}} (the first settled step against the
    rest, in % points)."""
    step = param_ms(log, "sample_ms")
    tr = windows(log, 0)
    if not step:
        return None
    first = int(math.ceil(settle_ms / step - 1e-9))
    good = set(complete_blocks(log, tr))
    by = {}
    for w in tr:
        if w["block"] in good and len(w["idx"]) >= 2:
            by.setdefault(w["block"], {})[w["label"]] = [
                n / ((t1 - t0) / 1e6) if t1 > t0 else 0.0 for t0, t1, n in window_steps(log, w)]
    nsteps = min((len(r) for b in by.values() for r in b.values()), default=0)
    if nsteps - first < 2:
        return None
    base = log["baseline"]
    labels = [lb for lb in log["labels"] if lb != base]
    out = {}
    for lb in labels:
        d = []
        for b in by.values():
            x, y = b.get(lb), b.get(base)
            if not x or not y or min(x[first:nsteps] + y[first:nsteps]) <= 0:
                continue
            lr = [math.log(x[k] / y[k]) for k in range(first, nsteps)]
            d.append(lr[0] - numpy.mean(lr[1:]))
        out[lb] = settle_verdict(len(d), float(numpy.sum(d)),
                                 float(numpy.sum(numpy.square(d))), len(labels), level)
    return out


def settle_verdict(n, total, sumsq, nlabels, level=0.95):
    """settle_check()'s t interval from the blocks' differences given as
    their count, sum and sum of squares (kept in the record, so that the
    boots of a bench can be pooled: see settle_pooled())."""
    rec = {"n": n, "sum": total, "sumsq": sumsq, "pct": None, "lo": None, "hi": None,
           "moving": False}
    if n >= 3:
        m = total / n
        sd = math.sqrt(max(sumsq - n * m * m, 0.0) / (n - 1))
        tq = scipy.stats.t.ppf(1 - (1 - level) / (2 * nlabels), n - 1)
        h = tq * sd / math.sqrt(n)
        rec.update(pct=pct(m), lo=pct(m - h), hi=pct(m + h), moving=bool(m - h > 0 or m + h < 0))
    return rec


def settle_pooled(checks, level=0.95):
    """settle_check() over the blocks of several runs (a bench's boots),
    pooled: one boot of 50 s has about 27 blocks, too few to see a
    200 ms onset at settle 100 half the time; nine boots' 240 see it.
    None when no run had a check (or one predates the kept sums)."""
    checks = [c for c in checks if c]
    if not checks or any("sum" not in r for c in checks for r in c.values()):
        return None
    labels = union_keys(checks)
    return {lb: settle_verdict(sum(c[lb]["n"] for c in checks if lb in c),
                               sum(c[lb]["sum"] for c in checks if lb in c),
                               sum(c[lb]["sumsq"] for c in checks if lb in c),
                               len(labels), level) for lb in labels}


def settle_table(log, settles=SETTLES_MS):
    """For each settle (ms, only those below the window) the A/A copy's
    half-width (floor, % points), the blocks used and each label's ratio:
    [{settle_ms, blocks, floor, ratios: {label: family()'s summary}}]."""
    win = param_ms(log, "window_ms")
    aa = aa_label(log)
    rows = []
    for s in settles:
        if win is not None and s >= win:
            continue
        r = ratios_at(log, s)
        n = max((x["n"] for x in r.values()), default=0)
        rows.append({"settle_ms": s, "blocks": n, "floor": r[aa]["half"] if r and aa else None,
                     "ratios": r})
    return rows


def floor_table(logs, settles=SETTLES_MS):
    """Floor by (window, settle) over several runs (parsed logs):
    [{window_ms, settle_ms, runs, floor_mean, floors}] sorted by window,
    then settle; floors are the runs' A/A half-widths in % points."""
    cells = {}
    for log in logs:
        win = param_ms(log, "window_ms")
        for row in settle_table(log, settles):
            if row["floor"] is not None:
                cells.setdefault((win, row["settle_ms"]), []).append(row["floor"])
    return [{"window_ms": w, "settle_ms": s, "runs": len(f), "floor_mean": float(numpy.mean(f)),
             "floors": f} for (w, s), f in sorted(cells.items(), key=lambda kv: (kv[0][0] or 0,
                                                                               kv[0][1]))]


def analyse(log, settle_ms, ops=None):
    """Everything about one run (parsed @log; @ops: {opname: count}).

    Returns a JSON-able dict: baseline, aa_label, labels, window_ms,
    sample_ms, settle_ms, blocks_total, blocks_used, seconds_used (the
    complete blocks' wall time), baseline_rate (the baseline's operations
    over its seconds in the complete blocks, the unit of every ops/s
    figure), ratios {label: family()'s summary + iid (a t interval over
    per-block log ratios, lo/hi as ratios) + hac (from hac_regression())},
    aa (the A/A copy's half-width in % points, None without one), drift
    (see drift()), settle_check (see settle_check()), per_second {n, mean,
    cv, acf {lag: [r, pairs]}} of the per-second throughput in baseline
    units (see per_second()), carryover (see carryover()), settle_table,
    transition, stationarity (the baseline windows' t_s, block, label,
    rate), zero_windows (windows whose counter did not move: counted as
    nothing, their blocks kept), hac (the regression's degree and
    Newey-West lag in windows), ops (nonzero counts), log_errors
    (twig-switch's X lines), drain (drain_summary() of the D lines),
    error (why nothing could be estimated, or None).
    """
    win = param_ms(log, "window_ms")
    res = {"baseline": log["baseline"], "aa_label": aa_label(log), "labels": log["labels"],
           "window_ms": win, "sample_ms": param_ms(log, "sample_ms"), "settle_ms": settle_ms,
           "params": log["params"], "ops": {k: v for k, v in (ops or {}).items() if v},
           "log_errors": log["errors"], "drain": drain_summary(log.get("drains_us")),
           "error": None}
    if win is not None and settle_ms >= win:
        res["error"] = "settle %g ms is not below the window (%g ms)" % (settle_ms, win)
        return res
    wins = windows(log, settle_ms)
    good = complete_blocks(log, wins)
    res["blocks_total"] = len({w["block"] for w in wins})
    res["blocks_used"] = len(good)
    gw = [w for w in wins if w["block"] in set(good)]
    res["seconds_used"] = sum((w["end_us"] - w["t_us"]) / 1e6 for w in gw)
    res["zero_windows"] = sum(1 for w in gw if w["rate"] == 0)
    fam = family(log, wins)
    if not fam:
        res["error"] = "%d complete blocks (need 3)" % len(good)
        return res
    if not next(iter(fam.values()))["base_rate"]:
        res["error"] = "the baseline completed no operation in %d blocks" % len(good)
        return res
    base = log["baseline"]
    res["baseline_rate"] = next(iter(fam.values()))["base_rate"]
    lr = block_ratios(log, wins)
    hac = hac_regression(log, wins)
    res["hac"] = {"degree": hac.get("degree"), "lag_windows": hac.get("lag")}
    res["ratios"] = fam
    for lb, r in fam.items():
        v = [x for _, x in lr[lb]]
        _, lo, hi = iid_ci(v) if v else (None, None, None)
        r["iid"] = {"lo": math.exp(lo), "hi": math.exp(hi)} if lo is not None else None
        r["series"] = v
        h = hac.get("ratios", {}).get(lb)
        r["hac"] = {"ratio": math.exp(h[0]), "lo": math.exp(h[1]),
                    "hi": math.exp(h[2])} if h else None
    aa = res["aa_label"]
    res["aa"] = fam[aa]["half"] if aa else None
    res["drift"] = drift(log, wins)
    res["settle_check"] = settle_check(log, settle_ms)
    ts, xs = per_second(log, set(good), {lb: r["ratio"] or 1.0 for lb, r in fam.items()})
    ps = {"n": len(xs), "mean": None, "cv": None, "acf": {}}
    if len(xs) >= 2:
        ps["mean"] = float(numpy.mean(xs))
        ps["cv"] = float(numpy.std(xs, ddof=1) / numpy.mean(xs)) if numpy.mean(xs) else None
        ps["acf"] = {str(k): v for k, v in gapped_acf(ts, xs).items()}
    res["per_second"] = ps
    res["carryover"] = carryover(log, wins)
    res["settle_table"] = settle_table(log)
    res["transition"] = transition(log)
    res["stationarity"] = [{"t_s": (w["t0_us"] + w["t1_us"]) / 2e6, "block": w["block"],
                            "label": w["label"], "rate": w["rate"]}
                           for w in gw if w["label"] in (base, aa)]
    return res


# ------------------------------------------------------------------- output

def fmt_pct(x, sign=True):
    return "—" if x is None else (("%+.1f%%" if sign else "%.1f%%") % x)


def fmt_rate(x):
    if x is None:
        return "—"
    return "%.0f" % x if x >= 100 else "%.3g" % x


def machine_line(host, guest, kernel_label):
    """The summary's first line: vCPUs, accelerator, kernel, patches, twigfs
    commit, from host-info.txt and the boot's guest-info.txt (key value)."""
    patches = " ".join(re.sub(r"^(\d{4})-.*", r"\1", p).replace(".patch", "")
                       for p in host.get("kernel_%s_patches" % kernel_label, "").split()) or "none"
    line = "machine: %s vCPUs, %s, Linux %s, patches %s, twigfs %s" % (
        guest.get("cpus", host.get("vcpus", "?")) or "?", host.get("accel", "?") or "?",
        guest.get("uname", "?") or "?", patches, (host.get("twigfs_commit", "?") or "?")[:12])
    if guest.get("clocksource"):
        line += ", clock %s" % guest["clocksource"]
    if host.get("guest_cmdline"):
        line += ", cmdline %s" % host["guest_cmdline"]
    if host.get("host_cpu_model"):
        qemu = re.search(r"version (\S+)", host.get("host_qemu", ""))
        line += "\n" + "\n".join(textwrap.wrap(
            "host: %s (flags %s), Linux %s, QEMU %s, %s CPUs" % (
                host["host_cpu_model"], host.get("host_cpu_flags_hash", "?"),
                host.get("host_kernel", "?"), qemu.group(1) if qemu else "?",
                host.get("host_cpus", "?")), 100, subsequent_indent="  "))
    return line


def separate_rows(results):
    """Rows for the configurations measured in separate runs (report.py's
    results.json as a dict): {workload: [(config, n, mean, unit, pct, lo,
    hi, sig)]}, each config's mean against the baseline's in the same boots
    (Fieller interval), the baseline itself first with pct None."""
    rows = {}
    runs = [r for r in results.get("runs", []) if r.get("status") == "ok"]
    if results.get("mode") == "compare":
        # kernel B (the patch) against kernel A, per configuration
        for wl in sorted({r["workload"] for r in runs}):
            out = []
            for c in configs_in(results):
                a, b = (values(runs, wl, c, k) for k in "AB")
                if not a or not b:
                    continue
                r, lo, hi = ratio_ci(a, b)
                unit = next(x["unit"] for x in runs if x["workload"] == wl)
                out.append((c + " B/A", len(b), mean(b), unit, (r - 1) * 100,
                            None if lo is None else (lo - 1) * 100,
                            None if hi is None else (hi - 1) * 100, welch_p(a, b)))
            if out:
                rows[wl] = holm_rows(out)
        return rows
    # KERNELS="6.1 6.12": each kernel's runs against its own baseline
    kernels = sorted({r.get("kernel", "A") for r in runs})
    for k in kernels:
        for key, out in _bench_rows([r for r in runs if r.get("kernel", "A") == k],
                                    results).items():
            if len(kernels) > 1:
                ver = next((r.get("kernel_version") for r in runs if r.get("kernel") == k), "")
                key = "%s, kernel %s (Linux %s)" % (key, k, ver)
            rows[key] = out
    return rows


def _bench_rows(runs, results):
    """separate_rows() for one kernel's runs of make bench, each workload
    against report.md's baseline (baseline_for(): mutex-nospin, else
    mutex-osq)."""
    rows = {}
    for wl in sorted({r["workload"] for r in runs}):
        bcfg = baseline_for({"runs": runs}, wl, "A")
        if bcfg is None:
            continue
        base = values(runs, wl, bcfg, "A")
        unit = next(r["unit"] for r in runs if r["workload"] == wl)
        out = [(bcfg, len(base), mean(base), unit, None, None, None, None)]
        for c in configs_in(results):
            vals = values(runs, wl, c, "A")
            if c == bcfg or not vals:
                continue
            r, lo, hi = ratio_ci(base, vals)
            out.append((c, len(vals), mean(vals), unit, (r - 1) * 100,
                        None if lo is None else (lo - 1) * 100,
                        None if hi is None else (hi - 1) * 100, welch_p(base, vals)))
        # the A/A copy is mutex-nospin's
        aa = values(runs, wl, BASELINE, "B") if bcfg == BASELINE else []
        if aa:
            r, lo, hi = ratio_ci(base, aa)
            out.append((BASELINE + "#B", len(aa), mean(aa), unit, (r - 1) * 100,
                        None if lo is None else (lo - 1) * 100,
                        None if hi is None else (hi - 1) * 100, welch_p(base, aa)))
        rows[wl] = holm_rows(out)
    return rows


def holm_rows(out):
    """Rows whose last field is a p value (None: the baseline or not
    testable) with it replaced by Holm's verdict over the rows."""
    sig = holm([row[-1] for row in out])
    return [row[:-1] + (s,) for row, s in zip(out, sig)]


def separate_lines(rows):
    """The separate runs' part of summary.txt, for separate_rows()'s rows."""
    L = []
    for wl, out in rows.items():
        L += ["", "%s, separate runs (n per configuration; 95%% Fieller interval of the ratio):"
              % wl]
        for c, n, m, unit, pct, lo, hi, sig in out:
            if pct is None:
                L.append("  %-22s %3d %12s %-8s base" % (c, n, fmt_rate(m), unit))
                continue
            iv = "[%s, %s]" % (fmt_pct(lo), fmt_pct(hi)) if lo is not None else "[unbounded]"
            L.append(("  %-22s %3d %12s %-8s %9s  %-21s %s%s"
                      % (c, n, fmt_rate(m), unit, fmt_pct(pct), iv, "*" if sig else " ",
                         " (A/A)" if c.endswith(AA_SUFFIX) else "")).rstrip())
    return L


ROW = "  %-22s %10s %9s  %-21s %-3s %9s"


def ratio_row(label, rate, x, note=""):
    """One label's line of a summary table."""
    iv = "[%s, %s]" % (fmt_pct(x["pct_lo"]), fmt_pct(x["pct_hi"])) if x.get("lo") else "—"
    mde = "±%.1f%%" % x["mde80"] if x.get("mde80") is not None else "—"
    return ((ROW % (label[:22], fmt_rate(rate), fmt_pct(x.get("pct")), iv,
                    "*" if x.get("sig") else "", mde)) + note).rstrip()


def run_notes(r, alone=False):
    """The lines under a run's table: the A/A copy, drift, the settle.
    @alone: the run is one boot of several, whose combined drift and
    settle lines are the verdicts (one short boot's own tests flag more
    often than their level)."""
    what = " (this boot alone; the boots combined below decide)" if alone else ""
    L = ["  A/A %s" % ("±%.1f%%" % r["aa"] if r.get("aa") is not None else
                       "— (no A/A copy)")]
    drifting = ["%s %+.1f pts/100 s [%+.1f, %+.1f]" % (lb, d["slope"], d["lo"], d["hi"])
                for lb, d in (r.get("drift") or {}).items() if d["flag"]]
    qs = ["%s %s" % (lb, "/".join("%+.0f" % q if q is not None else "?" for q in d["quarters"]))
          for lb, d in (r.get("drift") or {}).items()]
    L += textwrap.wrap("drift: %s; by quarter (%%): %s" % (
        "DRIFTS%s: %s" % (what, ", ".join(drifting)) if drifting else "no slope excludes 0",
        "; ".join(qs)), 98, initial_indent="  ", subsequent_indent="    ")
    dr = r.get("drain")
    if dr:
        L.append("  settings writes (drains with lock=): median %.2f ms, p99 %.2f ms, "
                 "max %.2f ms, %d windows" % (dr["median_ms"], dr["p99_ms"], dr["max_ms"],
                                              dr["n"]))
    st = r.get("steal")
    if st:
        idle = ("; idle mean %.1f%%, lowest block %.1f%%" % (st["idle_mean_pct"],
                                                             st["idle_min_pct"])
                if "idle_mean_pct" in st else "")
        if "others_mean_pct" in st:
            idle += "; beside QEMU mean %.1f%%, worst block %.1f%%" % (
                st["others_mean_pct"], st["others_max_pct"])
        L += textwrap.wrap("host steal: mean %.1f%%, worst block %.1f%%%s of the host's CPU "
                           "time" % (st["mean_pct"], st["max_pct"], idle), 98,
                           initial_indent="  ", subsequent_indent="    ")
        if st.get("busy"):
            why = ("other processes took %.0f%% of the host's CPU beside the guest's QEMU"
                   % st["others_mean_pct"] if "others_mean_pct" in st else
                   "the host had no idle CPU under this run (below %g%%)" % HOST_BUSY_IDLE_PCT)
            L += textwrap.wrap(
                "WARNING: HOST BUSY: %s; a vCPU preempted while holding a lock makes "
                "spinning a waste; rerun on a quiet host" % why, 98,
                initial_indent="  ", subsequent_indent="    ")
    L += settle_lines(r.get("settle_check"), r.get("settle_ms") or 0,
                      "settle" + what if alone and any(
                          c["moving"] for c in (r.get("settle_check") or {}).values())
                      else "settle")
    return L


def settle_lines(sc, settle_ms, what="settle"):
    """The settle check's verdict, wrapped for summary.txt."""
    if sc is None:
        return ["  %s: one settled step per window, its steadiness not checked "
                "(switchback.md has the step table)" % what]
    moving = ["%s %+.1f%% [%+.1f, %+.1f]" % (lb, c["pct"], c["lo"], c["hi"])
              for lb, c in sc.items() if c["moving"]]
    return textwrap.wrap(("%s: STILL MOVING after %g ms (first settled step against the "
                          "rest): %s; raise SETTLE" % (what, settle_ms, ", ".join(moving)))
                         if moving else "%s: the settled steps agree (%g ms is enough)"
                         % (what, settle_ms), 98, initial_indent="  ",
                         subsequent_indent="    ")


def combine(runs):
    """Runs of one workload on one kernel in several boots, combined per
    label by random_effects() over the boots' log ratios; stars by Holm
    over the labels.  Returns {label: ratio_summary() of the combined
    estimate plus k, tau2, q, q_p, i2 and boots: [(boot, pct)]}, the
    baseline's ops/s over the boots (geometric mean, as the ratios), and
    the variance components: {within: median over labels and boots of a
    boot's variance of the log ratio times its seconds (per-second
    variance), between: median tau^2, seconds: mean seconds per boot}."""
    ok = [r for r in runs if not r.get("error")]
    labels = []
    for r in ok:
        labels += [lb for lb in r["ratios"] if lb not in labels]
    out = {}
    for lb in labels:
        xs = [(r.get("boot", "?"), r["ratios"][lb]) for r in ok
              if (r["ratios"].get(lb) or {}).get("se")]
        re_ = random_effects([x["log"] for _, x in xs], [x["se"] for _, x in xs])
        if re_["k"] >= 2:
            s = ratio_summary(re_["mu"], re_["se"], re_["df"], family_size=len(labels))
        else:
            s = dict(xs[0][1]) if xs else ratio_summary(None, None, None)
        s.update({key: re_[key] for key in ("k", "tau2", "q", "q_p", "i2")})
        s["boots"] = [(b, x["pct"]) for b, x in xs]
        out[lb] = s
    star(out)
    rates = [r["baseline_rate"] for r in ok if r.get("baseline_rate")]
    base = float(numpy.exp(numpy.mean(numpy.log(rates)))) if rates else None
    within = [r["ratios"][lb]["se"] ** 2 * r["seconds_used"] for r in ok for lb in labels
              if (r["ratios"].get(lb) or {}).get("se")]
    between = [x["tau2"] for x in out.values() if x.get("tau2") is not None]
    comp = {"within": float(numpy.median(within)) if within else None,
            "between": float(numpy.median(between)) if between else None,
            "seconds": float(numpy.mean([r["seconds_used"] for r in ok])) if ok else None,
            "boots": len(ok)}
    return out, base, comp


def plan_line(comp, t=(50, 120, 240), k=(3, 5, 9)):
    """What the variance components imply (Kalibera and Jones): the 95%
    half-width of the combined estimate with k boots of s seconds each,
    Student's t with k - 1 degrees of freedom times sqrt(tau^2 / k +
    within / (k s)), in % (what random_effects() reports when the boots
    agree as well as their own errors say; two boots give t with one
    degree of freedom, 12.7: not a design)."""
    if comp.get("within") is None or comp.get("between") is None:
        return None
    cells = []
    for kk in k:
        q = t_ppf(0.975, kk - 1)
        for ss in t:
            h = q * math.sqrt(comp["between"] / kk + comp["within"] / (kk * ss))
            cells.append("%dx%ds ±%.1f%%" % (kk, ss, 100 * math.expm1(h)))
    return ("variance: within a boot %.2g per s, between boots tau %.1f%%; expected "
            "half-width for boots x seconds of switching: %s" % (
                comp["within"], 100 * math.sqrt(comp["between"]), ", ".join(cells)))


def summary_table(runs, separate=None):
    """The paste-able text (<= 100 columns): for each run dict (analyse()
    plus name, workload, machine, boot), a machine line when it changes,
    then the workload's header (blocks, seconds, counted ops), the
    baseline's ops/s, each label's ops/s, % change with its 95% interval,
    Holm's star and the change detectable with 80% power; the A/A copy,
    drift and settle notes.  Runs of one workload in several boots are
    then combined (see combine()) into one table with each boot's
    estimate and the heterogeneity."""
    L = []
    machine = None
    groups = {}
    for r in runs:
        groups.setdefault((r.get("kernel", "A"), r.get("workload", "?")), []).append(r)
    ok_boots = {key: sum(1 for r in rs if not r.get("error")) for key, rs in groups.items()}
    for r in runs:
        if r.get("machine") != machine:
            machine = r.get("machine")
            if L:
                L.append("")
            L.append(machine or "machine: ?")
        L.append("")
        ops = " ".join(sorted(r.get("ops", {}))) or "?"
        L.append("%s, switchback%s: %s blocks, %.0f s, window %g ms, settle %g ms"
                 % (r.get("workload", "?"), " (boot %s)" % r["boot"] if r.get("boot") else "",
                    r.get("blocks_used", 0), r.get("seconds_used", 0),
                    r.get("window_ms") or 0, r.get("settle_ms") or 0))
        L += textwrap.wrap("ops/s counts completed VFS operations: " + ops, 98,
                           initial_indent="  ", subsequent_indent="    ")
        meta = r.get("meta") or {}
        warn = ["%s %s" % (k, meta[k]) for k in ("status", "workload_status", "fsck")
                if meta.get(k, "0") not in ("0", "ok")]
        if r.get("zero_windows"):
            warn.append("%d windows without a completed operation (counted as nothing)"
                        % r["zero_windows"])
        if r.get("blocks_total") and r.get("blocks_used", 0) < r["blocks_total"] - 1:
            warn.append("%d of %d blocks used" % (r.get("blocks_used", 0), r["blocks_total"]))
        if warn:
            L += textwrap.wrap("WARNING: " + "; ".join(warn), 98, initial_indent="  ",
                               subsequent_indent="    ")
        if r.get("error"):
            L.append("  no estimate: %s" % r["error"])
            continue
        L.append((ROW % ("config", "ops/s", "%change", "95% interval", "sig",
                         "80% power")).rstrip())
        L.append((ROW % (r["baseline"][:22], fmt_rate(r["baseline_rate"]), "base", "", "",
                         "")).rstrip())
        for lb, x in r["ratios"].items():
            L.append(ratio_row(lb, x.get("rate"), x,
                               " (A/A)" if lb == r.get("aa_label") else ""))
        L += run_notes(r, ok_boots[(r.get("kernel", "A"), r.get("workload", "?"))] >= 2)
    for (_, wl), rs in groups.items():
        # A run whose host was busy measured the host, not the locks: it
        # is left out of the combination (its own table above keeps it).
        good = [r for r in rs if not r.get("error")]
        ok = [r for r in good if not (r.get("steal") or {}).get("busy")]
        busy = [str(r.get("boot", "?")) for r in good if r not in ok]
        if len(ok) < 2:
            if busy and len(ok) + len(busy) >= 2:
                L += ["", "%s: boots not combined: HOST BUSY in boot %s, %d boot(s) left"
                      % (wl, ", ".join(busy), len(ok))]
            continue
        comb, base, comp = combine(ok)
        aa = ok[0].get("aa_label")
        L += ["", "%s, switchback, %d boots combined (random effects, Hartung-Knapp t with %d "
              "df):" % (wl, len(ok), len(ok) - 1)]
        if busy:
            L += textwrap.wrap("WARNING: HOST BUSY in boot %s (no spare host CPU under the "
                               "run): left out of this combination; rerun on a quiet host"
                               % ", ".join(busy), 98, initial_indent="  ",
                               subsequent_indent="    ")
        short = ["%s (%d boots)" % (lb, x["k"]) for lb, x in comb.items() if x["k"] < len(ok)]
        if short:
            L += textwrap.wrap("WARNING: estimated in fewer boots: " + ", ".join(short), 98,
                               initial_indent="  ", subsequent_indent="    ")
        L.append((ROW % ("config", "ops/s", "%change", "95% interval", "sig",
                         "80% power")).rstrip())
        L.append((ROW % (ok[0]["baseline"][:22], fmt_rate(base), "base", "", "", "")).rstrip())
        for lb, x in comb.items():
            L.append(ratio_row(lb, base * x["ratio"] if x.get("ratio") else None, x,
                               " (A/A)" if lb == aa else ""))
        for lb, x in comb.items():
            dis = x.get("q_p") is not None and x["q_p"] < 0.05
            L += textwrap.wrap("%s: boots %s; I2 %s, Q p %s%s" % (
                lb, ", ".join("%s %s" % (b, fmt_pct(p)) for b, p in x["boots"]),
                "%.0f%%" % (100 * x["i2"]) if x.get("i2") is not None else "—",
                "%.2f" % x["q_p"] if x.get("q_p") is not None else "—",
                ": BOOTS DISAGREE" if dis else ""), 98, initial_indent="  ",
                subsequent_indent="    ")
        pl = plan_line(comp)
        if pl:
            L += textwrap.wrap(pl, 98, initial_indent="  ", subsequent_indent="    ")
        dp = drift_pooled([r.get("drift") for r in ok])
        if dp:
            moving = [lb for lb, d in dp.items() if d["flag"]]
            L += textwrap.wrap("drift, the boots' slopes combined (pts/100 s, Bonferroni): %s%s" % (
                "; ".join("%s %+.1f [%+.1f, %+.1f]" % (lb, d["slope"], d["lo"], d["hi"])
                          for lb, d in dp.items()),
                "; DRIFTS: " + ", ".join(moving) if moving else "; no slope excludes 0"),
                98, initial_indent="  ", subsequent_indent="    ")
        pooled = settle_pooled([r.get("settle_check") for r in ok])
        if pooled:
            L += settle_lines(pooled, ok[0].get("settle_ms") or 0,
                              "settle, blocks of the %d boots pooled"
                              % sum(1 for r in ok if r.get("settle_check")))
    L += separate_lines(separate or {})
    L += ["", "ops/s: each configuration's operations summed over its settled window parts, "
          "over their", "   seconds; % change: the ratio of those to the baseline's in the "
          "same blocks.", "95% interval per row (switchback: block bootstrap over the "
          "randomized blocks; boots", "   combined: random effects; separate runs: "
          "Fieller).  *: Holm over each table's rows", "   (family-wise 5%).  80% power: "
          "the change a 5% test finds 4 times in 5 at that noise.",
          "These intervals hold for this host on this day: docs/results.md has the spread "
          "measured", "   between days."]
    return "\n".join(L) + "\n"


def stationarity_files(r, outdir, name):
    """Writes stationarity-<name>.csv (t_s, block, label, ops/s of each
    baseline window) and, when gnuplot is there, a PNG of it; returns the
    file names (PNG None without gnuplot)."""
    csvf = "stationarity-%s.csv" % name
    path = os.path.join(outdir, csvf)
    with open(path, "w") as f:
        f.write("t_s,block,label,ops_per_s\n")
        for p in r.get("stationarity", []):
            f.write("%.3f,%d,%s,%.6g\n" % (p["t_s"], p["block"], p["label"], p["rate"]))
    gp = shutil.which("gnuplot")
    if not gp or not r.get("stationarity"):
        return csvf, None
    png = "stationarity-%s.png" % name
    plots = []
    for lb in (r["baseline"], r.get("aa_label")):
        if lb:
            plots.append("'%s' skip 1 using 1:(strcol(3) eq '%s' ? $4 : 1/0) "
                         "with points pt 7 title '%s'" % (path, lb, lb))
    script = "\n".join([
        gnuplot_terminal(gp, "900,400"),
        "set output '%s'" % os.path.join(outdir, png),
        "set datafile separator ','",
        "set title '%s: baseline throughput per window'" % name.replace("'", ""),
        "set xlabel 'seconds into the run'", "set ylabel 'ops/s'", "set yrange [0:*]",
        "set grid", "plot " + ", ".join(plots), ""])
    if not run_gnuplot(gp, script, "switchback.py", name):
        return csvf, None
    return csvf, png


def markdown(runs, ftable):
    """switchback.md's text."""
    L = ["# Switchback runs", "",
         "Ratios against the baseline within each randomized block; 95%% intervals from a "
         "circular block bootstrap over blocks (block length round(n^(1/3)), seed %d); "
         "the HAC column is a regression on a Legendre time trend with Newey-West errors; "
         "iid is a t interval that ignores the dependence between blocks.  A/A is the "
         "copy's interval half-width: changes well below it are not resolvable.", ""]
    for r in runs:
        L += ["## %s" % r["name"], "", r.get("machine", ""), ""]
        L.append("Status %s; %s of %s blocks complete, %.0f s; window %g ms, sample %g ms, "
                 "settle %g ms.  The counter counts: %s." % (
                     r.get("status", "?"), r.get("blocks_used", 0), r.get("blocks_total", 0),
                     r.get("seconds_used", 0), r.get("window_ms") or 0, r.get("sample_ms") or 0,
                     r.get("settle_ms") or 0,
                     ", ".join("%s (%d)" % kv for kv in sorted(r.get("ops", {}).items())) or "?"))
        L.append("")
        for e in r.get("log_errors", []):
            L += ["twig-switch stopped: %s" % e, ""]
        if r.get("error"):
            L += ["No estimate: %s." % r["error"], ""]
            continue
        L += ["| label | ratio | 95% (block bootstrap) | 95% (HAC) | 95% (iid) | p | "
              "80% power | blocks | bootstrap block |",
              "|---|---|---|---|---|---|---|---|---|"]

        def iv(d):
            return "%.4f–%.4f" % (d["lo"], d["hi"]) if d and d.get("lo") else "—"
        for lb, x in r["ratios"].items():
            L.append("| %s | %.4f | %s | %s | %s | %s | %s | %d | %d |" % (
                lb, x["ratio"] or 0, iv(x), iv(x.get("hac")), iv(x.get("iid")),
                "%.3g" % x["p"] if x.get("p") is not None else "—",
                "±%.1f%%" % x["mde80"] if x.get("mde80") is not None else "—",
                x["n"], x["blen"]))
        L += [""] + run_notes(r) + [""]
        st = r.get("steal") or {}
        for key, what in (("slope", "steal time"), ("idle_slope", "idle time")):
            if st.get(key):
                L += ["Effect against the host's %s per block (%% change per point of "
                      "it, 95%%): %s." % (what, "; ".join(
                          "%s %+.2f [%+.2f, %+.2f]" % (lb, v[0], v[1], v[2])
                          for lb, v in st[key].items())), ""]
        L += ["### Drift: % change by quarter of the run, slope", "",
              "| label | Q1 | Q2 | Q3 | Q4 | slope, pts/100 s | 95% (Bonferroni) |",
              "|---|---|---|---|---|---|---|"]
        for lb, d in (r.get("drift") or {}).items():
            L.append("| %s | %s | %s | %s |" % (
                lb, " | ".join(fmt_pct(q) for q in d["quarters"]),
                "%+.1f" % d["slope"] if d["slope"] is not None else "—",
                "%+.1f, %+.1f%s" % (d["lo"], d["hi"], " **drifts**" if d["flag"] else "")
                if d["lo"] is not None else "—"))
        L.append("")
        ps = r["per_second"]
        if ps["cv"] is not None:
            L.append("Per second, in baseline units (%d seconds, every window's ops/s over "
                     "its configuration's ratio): mean %.1f ops/s, CV %.1f%%; "
                     "autocorrelation %s." % (ps["n"], ps["mean"], 100 * ps["cv"], ", ".join(
                         "%s s %s (%d pairs)" % (k, "—" if v[0] is None else "%.2f" % v[0], v[1])
                         for k, v in ps["acf"].items())))
            L.append("")
        L += ["### Carry-over: ratio by the preceding window", "",
              "| label | after | n | ratio | 95% (t) | ANOVA p | flag |",
              "|---|---|---|---|---|---|---|"]
        for lb, c in r["carryover"].items():
            for p, g in c["by_prev"].items():
                L.append("| %s | %s | %d | %.4f | %s | %s | %s |" % (
                    lb, p, g["n"], g["ratio"],
                    "%.4f–%.4f" % (g["lo"], g["hi"]) if g["lo"] is not None else "—",
                    "%.3g" % c["p"] if c["p"] is not None else "—",
                    "**yes**" if c["flag"] else ""))
        L += ["", "### Settle", "", "| settle ms | blocks | A/A ± | " +
              " | ".join(r["ratios"]) + " |", "|---|---|---|" + "---|" * len(r["ratios"])]
        for row in r["settle_table"]:
            L.append("| %g | %d | %s | %s |" % (
                row["settle_ms"], row["blocks"],
                "±%.2f%%" % row["floor"] if row["floor"] is not None else "—",
                " | ".join(fmt_pct(row["ratios"][lb]["pct"]) for lb in r["ratios"])))
        L.append("")
        tr = r.get("transition") or {}
        if tr.get("steps"):
            step = tr["step_ms"] or 0
            L += ["### After a switch: %% change by %g ms step" % step, "",
                  "Each step's rate against the baseline's same step in the block (95%% t "
                  "interval).  A change that still grows or shrinks over the first steps "
                  "is the switch taking effect: the settle (%g ms) should cover it." % (
                      r.get("settle_ms") or 0), "",
                  "| label | " + " | ".join("%g-%g ms" % (k * step, (k + 1) * step)
                                            for k in range(tr["steps"])) + " |",
                  "|---|" + "---|" * tr["steps"]]
            for lb, rows in tr["labels"].items():
                L.append("| %s | %s |" % (lb, " | ".join(
                    "%s ±%.1f" % (fmt_pct(x["pct"]), (x["hi"] - x["lo"]) / 2)
                    if x["lo"] is not None else fmt_pct(x["pct"]) for x in rows)))
            L.append("")
        if r.get("plot") or r.get("csv"):
            L += ["Stationarity: %s" % ", ".join(
                "[%s](%s)" % (f, f) for f in (r.get("csv"), r.get("plot")) if f), ""]
    if ftable:
        L += ["## A/A half-width by window and settle (all runs)", "",
              "| window ms | settle ms | runs | mean A/A ± |", "|---|---|---|---|"]
        for row in ftable:
            L.append("| %g | %g | %d | ±%.2f%% |" % (row["window_ms"] or 0, row["settle_ms"],
                                                     row["runs"], row["floor_mean"]))
        L.append("")
    return "\n".join(L)


def read_ops(path):
    """ops.txt: {opname: count} from "<opname> <count>" lines (not "total")."""
    ops = {}
    for k, v in read_kv(path).items():
        if k == "total":
            continue
        try:
            ops[k] = int(float(v))
        except ValueError:
            pass
    return ops


def run_settle(meta, workload, rdir):
    """The settle of a run: its meta.txt's settle_ms, or the workload's own
    (benchlib/defs.py) when that says "per-workload"; said on stderr when
    meta.txt gives neither (no meta.txt, or an older one)."""
    v = meta.get("settle_ms", "")
    try:
        return float(v)
    except ValueError:
        pass
    if v != "per-workload":
        sys.stderr.write("switchback.py: %s: no settle_ms in meta.txt; %s's own: %g ms\n"
                         % (rdir, workload, settle_for(workload)))
    return settle_for(workload)


def find_runs(results):
    """The switchback run folders under @results, sorted:
    [(boot folder name, kernel label, run folder)]."""
    out = []
    for name in sorted(os.listdir(results)):
        m = re.match(r"boot-(\d+)-(\S+)$", name)
        sb = os.path.join(results, name, "switchback")
        if not m or not os.path.isdir(sb):
            continue
        for run in sorted(os.listdir(sb)):
            if os.path.exists(os.path.join(sb, run, "switch.log")):
                out.append((name, m.group(2), os.path.join(sb, run)))
    return out


def build(results, out=None, settle_ms=None, separate=None):
    """Analyses the switchback runs under @results (at @settle_ms, else each
    run's own: run_settle()) and writes summary.txt, switchback.md,
    switchback.json and the stationarity files into @out (default:
    @results); the summary's separate runs come from @separate (the
    results.json dict), else from <results>/results.json when there is
    one.  Returns the summary's text, None when there is nothing to
    summarise (no switchback run, no separate run)."""
    found = find_runs(results)
    rpath = os.path.join(results, "results.json")
    if separate is None and os.path.exists(rpath):
        with open(rpath) as f:
            separate = json.load(f)
    if not found and separate is None:
        return None
    out = out or results
    os.makedirs(out, exist_ok=True)
    host = read_kv(os.path.join(results, "host-info.txt"))
    runs, logs = [], []
    for boot, klabel, rdir in found:
        meta = read_kv(os.path.join(rdir, "meta.txt"))
        log = read_log(os.path.join(rdir, "switch.log"))
        logs.append(log)
        wl = meta.get("workload") or re.sub(r"^\d+-", "", os.path.basename(rdir))
        settle = settle_ms if settle_ms is not None else run_settle(meta, wl, rdir)
        r = analyse(log, settle, read_ops(os.path.join(rdir, "ops.txt")))
        if not r.get("error"):
            r["steal"] = host_steal(log, windows(log, settle), read_hoststat(
                os.path.join(results, boot, "hoststat.txt")))
        name = "%s-%s" % (boot, os.path.basename(rdir))
        r.update(name=name, dir=os.path.relpath(rdir, results), workload=wl,
                 boot=boot.split("-")[1], kernel=klabel,
                 status=meta.get("status", "?"), meta=meta,
                 machine=machine_line(host, read_kv(os.path.join(results, boot,
                                                                 "guest-info.txt")), klabel))
        if not r.get("error"):
            r["csv"], r["plot"] = stationarity_files(r, out, name)
        runs.append(r)
    ftable = floor_table(logs)
    summary = summary_table(runs, separate_rows(separate) if separate is not None else {})
    if not runs:
        # separate runs only (SWITCHBACK=0, make compare): a machine line
        # per kernel from its first boot
        lines = []
        for label in "ABCDEF":
            boots = sorted(d for d in os.listdir(results) if d.endswith("-" + label)
                           and d.startswith("boot-"))
            if boots:
                lines.append(("kernel %s: " % label) + machine_line(
                    host, read_kv(os.path.join(results, boots[0], "guest-info.txt")), label))
        summary = "\n".join(lines) + "\n" + summary
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(summary)
    with open(os.path.join(out, "switchback.md"), "w") as f:
        f.write(markdown(runs, ftable))
    with open(os.path.join(out, "switchback.json"), "w") as f:
        json.dump({"runs": runs, "floor_table": ftable, "host": host}, f, indent=1)
    return summary

