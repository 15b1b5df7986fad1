#!/usr/bin/python3
"""Build the bench report from a results folder (python3 with scipy).

    report.py <results dir>            collect raw outputs -> results.json,
                                       then results.csv, report.md, *.png
    report.py --render <results.json>  [--no-plots]  only the second step

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
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

import numpy
import scipy.optimize
import scipy.stats

BASELINE = "mutex-nospin"
FALLBACK_BASELINE = "mutex-osq"


def read_config_table(path=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "configs.txt")):
    """The configurations of workloads/configs.txt: (name, fs, lock) rows."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, fs, lock = line.split()[:3]
                rows.append((name, fs, lock))
    return rows


CONFIG_TABLE = read_config_table()
TWIG_CONFIGS = [n for n, fs, _ in CONFIG_TABLE if fs == "twigfs"]
REF_CONFIGS = [n for n, fs, _ in CONFIG_TABLE if fs != "twigfs"]
CONFIG_ORDER = TWIG_CONFIGS + REF_CONFIGS
# the spinning variants of the baseline's lock object
SPIN_CONFIGS = [n for n, fs, lock in CONFIG_TABLE
                if fs == "twigfs" and lock == "mutex" and n != BASELINE]
WORKLOADS = {
    # name: (title, unit, 2009 claim as a ratio range or None, claim text)
    "dbench": ("dbench", "MB/s", (1.5, 2.5), "spinning about 2x faster than a sleeping mutex"),
    "create-own": ("4 KiB creates, one directory per process", "files/s", (1.3, 1.5),
                   "spinning 30-50% faster"),
    "create-shared": ("4 KiB creates, one shared directory", "files/s", (1.3, 1.5),
                      "spinning 30-50% faster"),
    "fsmark-own": ("fs_mark 4 KiB creates, one directory per thread", "files/s", (1.3, 1.5),
                   "spinning 30-50% faster"),
    "fsmark-shared": ("fs_mark 4 KiB creates, one shared directory", "files/s", (1.3, 1.5),
                      "spinning 30-50% faster"),
    "lookup": ("lookups and readdir of a shared directory", "ops/s", None, None),
    # no 2009 claim: Samba's xattr traffic was not in it
    "dbench-xattr": ("dbench --xattr (Samba's extended attributes)", "MB/s", None, None),
}
# Parsed and reported as dbench (throughput, max latency, commit-bound check).
DBENCH_WORKLOADS = ("dbench", "dbench-xattr")


def wl_base(workload):
    """A sweep's "dbench@8" is dbench with 8 clients."""
    return workload.split("@")[0]


def wl_clients(workload):
    """N of "workload@N", None without one."""
    _, _, n = workload.partition("@")
    return int(n) if n.isdigit() else None


# ---------------------------------------------------------------- statistics

def mean(xs):
    return sum(xs) / len(xs)


def sd(xs):
    if len(xs) < 2:
        return float("nan")
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def t_ppf(p, df):
    """Quantile of Student's t; df may be fractional or infinite."""
    if math.isinf(df):
        return float(scipy.stats.norm.ppf(p))
    return float(scipy.stats.t.ppf(p, df))


def mean_ci(xs, level=0.95):
    """(mean, sd, lo, hi) with a Student-t interval; lo/hi None if n < 2."""
    m = mean(xs)
    if len(xs) < 2:
        return m, float("nan"), None, None
    s = sd(xs)
    h = t_ppf(0.5 + level / 2.0, len(xs) - 1) * s / math.sqrt(len(xs))
    return m, s, m - h, m + h


def welch_df(va, na, vb, nb):
    den = 0.0
    if na > 1:
        den += va * va / (na - 1)
    if nb > 1:
        den += vb * vb / (nb - 1)
    return float("inf") if den == 0 else (va + vb) ** 2 / den


def ratio_ci(a, b, level=0.95):
    """Ratio mean(b)/mean(a) and its Fieller interval.

    Returns (ratio, lo, hi); lo/hi are None when either side has fewer than
    two values or the interval is unbounded (mean(a) not distinguishable
    from zero).  Throughputs are never negative, so when mean(b) is not
    distinguishable from zero (two noisy runs, 1 degree of freedom) the
    lower bound is clipped at 0 instead of reporting a negative ratio."""
    ma, mb = mean(a), mean(b)
    r = mb / ma if ma else float("nan")
    if len(a) < 2 or len(b) < 2 or not ma:
        return r, None, None
    va, vb = sd(a) ** 2 / len(a), sd(b) ** 2 / len(b)
    df = welch_df(r * r * va, len(a), vb, len(b))
    t = t_ppf(0.5 + level / 2.0, df)
    qa = ma * ma - t * t * va
    qb = ma * mb
    qc = mb * mb - t * t * vb
    if qa <= 0:
        return r, None, None
    disc = max(qb * qb - qa * qc, 0.0)
    return r, max((qb - math.sqrt(disc)) / qa, 0.0), (qb + math.sqrt(disc)) / qa


def welch_power(delta, se, df, level=0.95):
    """Power of the two-sided Welch t-test to see a true difference delta
    when the difference of means has standard error se (noncentral t)."""
    tc = t_ppf(0.5 + level / 2.0, df)
    nc = delta / se
    if math.isinf(df):
        norm = scipy.stats.norm
        return float(norm.sf(tc - nc) + norm.cdf(-tc - nc))
    nct = scipy.stats.nct
    return float(nct.sf(tc, df, nc) + nct.cdf(-tc, df, nc))


def detectable(a, b, level=0.95, power=0.8):
    """Smallest relative difference (fraction of mean(a)) the two samples
    could detect: (95% CI half-width of the difference, the difference the
    Welch t-test would find with the given power).  None if either side has
    fewer than two values."""
    if len(a) < 2 or len(b) < 2 or not mean(a):
        return None, None
    va, vb = sd(a) ** 2 / len(a), sd(b) ** 2 / len(b)
    se = math.sqrt(va + vb) / abs(mean(a))
    if se == 0:
        return 0.0, 0.0
    df = welch_df(va, len(a), vb, len(b))
    half = t_ppf(0.5 + level / 2.0, df) * se
    hi = half * 4
    while welch_power(hi, se, df, level) < power:
        hi *= 2
    d80 = scipy.optimize.brentq(lambda d: welch_power(d, se, df, level) - power,
                                0.0, hi, xtol=1e-9)
    return half, float(d80)


def welch_p(a, b):
    """Two-sided p value of Welch's t-test (None with fewer than 2 each)."""
    if len(a) < 2 or len(b) < 2:
        return None
    if sd(a) == 0 and sd(b) == 0:
        return 0.0 if mean(a) != mean(b) else 1.0
    return float(scipy.stats.ttest_ind(a, b, equal_var=False).pvalue)


def bootstrap_ratio_ci(a, b, level=0.95, resamples=4999, seed=1):
    """Percentile bootstrap interval of mean(b)/mean(a), resampling each
    side independently; (lo, hi), or (None, None) with fewer than 3 runs a
    side, where resampling can only repeat the data."""
    if len(a) < 3 or len(b) < 3 or not mean(a):
        return None, None
    res = scipy.stats.bootstrap(
        (list(a), list(b)), lambda x, y, axis=-1: y.mean(axis=axis) / x.mean(axis=axis),
        vectorized=True, paired=False, confidence_level=level,
        n_resamples=resamples, method="percentile",
        random_state=numpy.random.default_rng(seed))
    lo, hi = res.confidence_interval
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None, None
    return float(lo), float(hi)


def judge(r, lo, hi, claim):
    """Verdict word on a claimed speed-up range (lo_claim, hi_claim) from the
    ratio's interval [lo, hi]: it excludes the claim (lies below it, or below
    1) -> not reproduced, even when it also holds 1; it holds both 1 and the
    claim -> noise; it lies above 1 and overlaps the claim -> reproduced."""
    if lo is None:
        return "not distinguishable from noise"
    if hi < 1.0 or (claim and hi < claim[0]):
        return "not reproduced"
    if lo <= 1.0:
        return "not distinguishable from noise"
    if claim and lo <= claim[1]:
        return "reproduced"
    return "not reproduced"


# ---------------------------------------------------------------- collecting

def read_kv(path):
    kv = {}
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition(" ")
                if k:
                    kv[k] = v.strip()
    return kv


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def parse_output(workload, text):
    """(value, extra dict, error or None) from a workload's raw output."""
    if workload in DBENCH_WORKLOADS:
        m = re.search(r"Throughput ([\d.]+) MB/sec\s+(\d+) clients.*?max_latency=([\d.]+) ms",
                      text)
        if not m:
            return None, {}, "no Throughput line"
        if float(m.group(1)) == 0:
            # dbench 4.00 measures only after its warm-up; a run that ends
            # first prints 0 MB/s, which is no measurement at all.
            return None, {}, "dbench measured nothing (the run ended in its warm-up: raise DURATION)"
        return float(m.group(1)), {"max_latency_ms": float(m.group(3))}, None
    if workload in ("create-own", "create-shared"):
        i = text.find("{")
        if i < 0:
            return None, {}, "no fio JSON"
        try:
            doc, _ = json.JSONDecoder().raw_decode(text[i:])
        except ValueError as e:
            return None, {}, "bad fio JSON: %s" % e
        jobs = doc.get("jobs", [])
        if not jobs or any(j.get("error") for j in jobs):
            return None, {}, "fio job error"
        files = sum(j["write"]["total_ios"] for j in jobs)
        secs = max(j["job_runtime"] for j in jobs) / 1000.0
        if secs <= 0:
            return None, {}, "zero runtime"
        return files / secs, {"files": files, "fio_seconds": secs}, None
    if workload in ("fsmark-own", "fsmark-shared"):
        # After fs_mark's header line, one row per loop:
        # FSUse% Count Size Files/sec App-Overhead
        head = re.search(r"^FSUse%\s+Count\s+Size\s+Files/sec", text, re.M)
        if not head:
            return None, {}, "no fs_mark table"
        loops = []
        for line in text[head.end():].splitlines()[1:]:
            f = line.split()
            if len(f) != 5 or any(num(x) is None for x in f):
                break
            loops.append(float(f[3]))
        if not loops:
            return None, {}, "fs_mark printed no loop"
        return mean(loops), {"fsmark_loops": loops}, None
    if workload == "lookup":
        m = re.search(r"lookups (\d+) readdirs (\d+) seconds ([\d.]+) ops_per_sec ([\d.]+)", text)
        if not m:
            return None, {}, "no twig-lookup summary"
        return float(m.group(4)), {"lookups": int(m.group(1)),
                                   "readdirs": int(m.group(2))}, None
    return None, {}, "unknown workload"


def parse_stats_block(name, lines, stats):
    """One statistics file: a single value, "name value" lines, or a table
    whose header line names the numeric columns ("class mode acquired ...");
    table rows become "<row words>_<column>"."""
    rows = [ln.split() for ln in lines if ln.strip()]
    if len(rows) == 1 and len(rows[0]) == 1 and num(rows[0][0]) is not None:
        stats[name] = num(rows[0][0])
        return
    header = None
    for r in rows:
        nums = [num(t) for t in r]
        if not any(x is not None for x in nums):
            if len(r) >= 3:
                header = r
            continue
        if len(r) == 2 and nums[1] is not None and nums[0] is None:
            stats[r[0]] = nums[1]
        elif header and len(r) == len(header):
            words = [t for t, x in zip(r, nums) if x is None]
            for col, t, x in zip(header, r, nums):
                if x is not None:
                    stats["_".join(words + [col])] = x


PERF_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
PERF_LOCK_ROW = re.compile(
    r"^[ \t]*(\d+)\s+([\d.]+)\s*(h|m|s|ms|us|ns)\s+([\d.]+)\s*(h|m|s|ms|us|ns)"
    r"\s+([\d.]+)\s*(h|m|s|ms|us|ns)\s+(\S+)\s+(\S.*?)\s*$", re.M)


def parse_perf_lock(text):
    """Rows of `perf lock contention` (6.1, default fields): contended,
    total wait, max wait, avg wait (perf's units, turned into ns), type,
    caller; in perf's order (sorted by the -k key).  perf aggregates by
    call stack, so one caller can head several rows, as perf prints them."""
    rows = []
    for line in text.splitlines():
        m = PERF_LOCK_ROW.match(line)
        if not m:
            continue
        g = m.groups()
        rows.append({"contended": int(g[0]),
                     "wait_total_ns": float(g[1]) * PERF_UNITS[g[2]],
                     "wait_max_ns": float(g[3]) * PERF_UNITS[g[4]],
                     "wait_avg_ns": float(g[5]) * PERF_UNITS[g[6]],
                     "type": g[7], "caller": g[8]})
    return rows


def parse_perf_stat(text):
    """`perf stat -x,` output: {event: value} (task-clock in msec)."""
    out = {}
    for line in text.splitlines():
        f = line.split(",")
        if line.startswith("#") or len(f) < 3:
            continue
        v = num(f[0])
        if v is not None and f[2]:
            out[f[2]] = v
    return out


def read_profiles(bdir, boot):
    """The profiled runs of a boot (profile.txt, raw outputs in profile/)."""
    out = []
    for line in read_text(os.path.join(bdir, "profile.txt")).splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        idx, workload, config, rep = parts
        rdir = os.path.join(bdir, "profile", "%03d-%s-%s-r%s" % (int(idx), workload, config, rep))
        if not os.path.isdir(rdir):
            continue
        meta = read_kv(os.path.join(rdir, "meta.txt"))
        value, _, err = parse_output(wl_base(workload),
                                     read_text(os.path.join(rdir, "output.txt")))
        lock_text = read_text(os.path.join(rdir, "perf-lock.txt"))
        out.append({"boot": boot, "workload": workload, "config": config,
                    "status": "ok" if meta.get("status") == "0" and not err
                    else "failed: " + (err or "exit %s" % meta.get("status", "none")),
                    "value": value,
                    "perf_lock": parse_perf_lock(lock_text),
                    "perf_lock_error": ("" if PERF_LOCK_ROW.search(lock_text) or
                                        not lock_text.strip() else lock_text.strip()),
                    "perf_stat": parse_perf_stat(read_text(os.path.join(rdir, "perf-stat.txt"))),
                    "twigfs_stats": read_stats(os.path.join(rdir, "twigfs-stats.txt"))})
    return out


# A lock_stats table cell as read_stats names it: "<level>_<mode>_<column>".
LEVEL_KEY = re.compile(r"^(root|internal|leaf)_(read|write)_[a-z_]+$")


def fmt_ns(ns):
    for unit, base in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= base:
            return "%.3g %s" % (ns / base, unit)
    return "%.0f ns" % ns


def profile_section(data, workload):
    """Per configuration: perf stat counters, the top 10 contended locks of
    perf lock contention, and twigfs's own lock counters per tree level,
    from one profiled run that no throughput figure counts."""
    profs = [p for p in data.get("profiles", []) if p["workload"] == workload]
    if not profs:
        return []
    L = ["### Profile (PROFILE=1: separate runs, not counted in any figure above)", ""]
    for p in profs:
        st = p["perf_stat"]
        L += ["**%s** (boot %s, %s%s): context switches %s, cpu migrations %s, "
              "task-clock %s ms." %
              (p["config"], p["boot"], p["status"],
               ", %s %s" % (fmt(p["value"]), WORKLOADS.get(wl_base(workload), ("", ""))[1])
               if p["value"] is not None else "",
               fmt_count(st.get("context-switches")), fmt_count(st.get("cpu-migrations")),
               fmt_count(st.get("task-clock"))), ""]
        if p["perf_lock"]:
            L += ["| # | caller | type | contended | total wait | max wait | avg wait |",
                  "|---:|---|---|---:|---:|---:|---:|"]
            for i, r in enumerate(p["perf_lock"][:10]):
                L.append("| %d | `%s` | %s | %d | %s | %s | %s |" %
                         (i + 1, r["caller"], r["type"], r["contended"],
                          fmt_ns(r["wait_total_ns"]), fmt_ns(r["wait_max_ns"]),
                          fmt_ns(r["wait_avg_ns"])))
            L.append("")
        else:
            L += ["perf lock contention: no rows%s." %
                  (" (%s)" % p["perf_lock_error"].splitlines()[-1]
                   if p["perf_lock_error"] else ""), ""]
        st = p["twigfs_stats"]
        rows = []
        for level in ("root", "internal", "leaf"):
            for mode in ("read", "write"):
                k = "%s_%s_" % (level, mode)
                if st.get(k + "contended"):
                    rows.append("| %s | %s | %s | %s | %s |" % (
                        level, mode, fmt_count(st.get(k + "contended")),
                        fmt_ns(st.get(k + "wait_ns", 0)), fmt_ns(st.get(k + "max_wait_ns", 0))))
        if rows:
            L += ["twigfs lock_stats of that run:", "",
                  "| tree level | mode | contended | total wait | max wait |",
                  "|---|---|---:|---:|---:|"] + rows + [""]
    return L


def read_stats(path):
    """Counters from a twigfs-stats.txt ("== file" sections) or a plain
    "name value" file such as mutex_stats."""
    stats = {}
    name, block = None, []
    for line in read_text(path).splitlines():
        if line.startswith("== "):
            if block:
                parse_stats_block(name, block, stats)
            name, block = line[3:].strip(), []
        else:
            block.append(line)
    if block:
        parse_stats_block(name or os.path.basename(path), block, stats)
    return stats


def collect(outdir):
    host = read_kv(os.path.join(outdir, "host-info.txt"))
    mode = host.get("mode", "bench")
    boots, runs, profiles = [], [], []
    for name in sorted(os.listdir(outdir)):
        m = re.match(r"boot-(\d+)-(\w+)$", name)
        if not m:
            continue
        bdir = os.path.join(outdir, name)
        label = m.group(2)
        guest = read_kv(os.path.join(bdir, "guest-info.txt"))
        avail = {}
        for line in read_text(os.path.join(bdir, "available.txt")).splitlines():
            parts = line.split(" ", 2)
            if len(parts) >= 2:
                avail[parts[0]] = {"available": parts[1] == "yes",
                                   "note": parts[2] if len(parts) > 2 else ""}
        hostload = {}
        ends = []
        for line in read_text(os.path.join(bdir, "hostload.txt")).splitlines():
            parts = line.split()
            if len(parts) >= 3:
                hostload[parts[0]] = num(parts[2])
                ends.append(parts[0])
        status = read_text(os.path.join(bdir, "status")).strip()
        boots.append({"boot": int(m.group(1)), "kernel": label, "dir": name,
                      "guest": guest, "available": avail,
                      "status": status or "none",
                      "host_load_start": hostload.get("start"),
                      "host_load_end": hostload.get("end")})
        kconf = "kernel_%s_" % label
        # switchback runs (config "switchback:<secs>") are switchback.py's
        plan = [line.split() for line in read_text(os.path.join(bdir, "plan.txt")).splitlines()
                if len(line.split()) == 4 and not line.split()[2].startswith("switchback:")]
        profiles.extend(read_profiles(bdir, int(m.group(1))))
        for k, (idx, workload, config, rep) in enumerate(plan):
            base, _, side = config.partition("#")
            side = side or (label if mode == "compare" else "A")
            nxt = plan[k + 1][0] if k + 1 < len(plan) else "end"
            run = {"run": int(idx), "boot": int(m.group(1)), "side": side,
                   "kernel": label, "workload": workload, "config": base,
                   "rep": int(rep), "kernel_version": guest.get("uname", ""),
                   "patches": host.get(kconf + "patches", ""),
                   "config_hash": host.get(kconf + "config_hash", ""),
                   "vcpus": guest.get("cpus", host.get("vcpus", "")),
                   "clients": wl_clients(workload),
                   "mem_mib": host.get("mem_mib", ""),
                   "accel": host.get("accel", ""),
                   "twigfs_commit": host.get("twigfs_commit", ""),
                   "host_load_start": hostload.get(idx),
                   "host_load_end": hostload.get(nxt, hostload.get("end")),
                   "value": None, "unit": WORKLOADS.get(wl_base(workload), ("", ""))[1]}
            rdir = os.path.join(bdir, "raw", "%03d-%s-%s-r%s" % (int(idx), workload, config, rep))
            a = avail.get(base)
            if a is not None and not a["available"]:
                run["status"] = "unavailable"
            elif not os.path.isdir(rdir):
                run["status"] = "missing"
            else:
                meta = read_kv(os.path.join(rdir, "meta.txt"))
                run.update({"fs": meta.get("fs"), "lock": meta.get("lock"),
                            "spin_policy": meta.get("policy"),
                            "fsck": meta.get("fsck"),
                            "calib_ms": num(meta.get("calib_ms"))})
                t0, t1 = num(meta.get("start")), num(meta.get("end"))
                run["seconds"] = round(t1 - t0, 2) if t0 is not None and t1 is not None else None
                value, extra, err = parse_output(wl_base(workload),
                                                 read_text(os.path.join(rdir, "output.txt")))
                run.update(extra)
                if meta.get("status") != "0":
                    run["status"] = "failed: exit %s" % meta.get("status", "none")
                elif err:
                    run["status"] = "failed: " + err
                else:
                    run["status"] = "ok"
                    run["value"] = value
                run["twigfs_stats"] = read_stats(os.path.join(rdir, "twigfs-stats.txt"))
                run["mutex_stats"] = read_stats(os.path.join(rdir, "mutex-stats.txt"))
            runs.append(run)
    return {"host": host, "mode": mode, "boots": boots, "runs": runs, "profiles": profiles}


# ---------------------------------------------------------------- rendering

def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if abs(x) >= 1000 or abs(x) >= 10 ** digits:
        return "%.0f" % x
    return "%.*g" % (digits, x)


def fmt_ci(lo, hi, digits=3):
    if lo is None:
        return "—"
    return "%s – %s" % (fmt(lo, digits), fmt(hi, digits))


def fmt_count(x):
    if x is None:
        return "—"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return "%.3g%s" % (x / div, suffix)
    return "%.3g" % x


def values(runs, workload, config, side):
    return [r["value"] for r in runs if r["workload"] == workload
            and r["config"] == config and r["side"] == side and r["status"] == "ok"]


def configs_in(data):
    seen = {r["config"] for r in data["runs"]}
    return [c for c in CONFIG_ORDER if c in seen] + sorted(seen - set(CONFIG_ORDER))


def workloads_in(data):
    seen = []
    for r in data["runs"] + data.get("profiles", []):
        if r["workload"] not in seen:
            seen.append(r["workload"])
    return seen


def availability(data):
    """config -> (available in every boot, note)."""
    out = {}
    for b in data["boots"]:
        for c, a in b["available"].items():
            ok, note = out.get(c, (True, ""))
            out[c] = (ok and a["available"], note or a["note"])
    return out


def baseline_for(data, workload, side):
    for c in (BASELINE, FALLBACK_BASELINE):
        if len(values(data["runs"], workload, c, side)) >= 1:
            return c
    return None

# /sys/fs/twigfs/<dev>/ files that hold mount settings, not counters.
MOUNT_SETTINGS = {"commit", "lock"}


def collapse_stats(stats):
    """Sum twigfs lock counters over tree levels (max for maxima): a key
    naming a level (root, internal, leaf) and a mode (read, write) becomes
    "<mode>_<rest>"."""
    out = {}
    levels, modes = {"root", "internal", "leaf"}, {"read", "write"}
    for k, v in stats.items():
        if k in MOUNT_SETTINGS:
            continue
        toks = re.split(r"[_/]", k)
        mode = [t for t in toks if t in modes]
        if mode and any(t in levels for t in toks):
            rest = [t for t in toks if t not in levels and t not in modes
                    and t not in ("lock", "stats")]
            key = "_".join(mode[:1] + rest)
        else:
            key = k
        if "max" in key:
            out[key] = max(out.get(key, 0.0), v)
        else:
            out[key] = out.get(key, 0.0) + v
    return out


def stats_table(data, workload, side, field, collapse):
    cols = [c for c in configs_in(data)
            if any(r.get(field) for r in data["runs"]
                   if r["config"] == c and r["workload"] == workload and r["side"] == side
                   and r["status"] == "ok")]
    if not cols:
        return []
    per = {}
    for c in cols:
        rows = [collapse(r.get(field) or {}) for r in data["runs"]
                if r["config"] == c and r["workload"] == workload
                and r["side"] == side and r["status"] == "ok"]
        keys = set().union(*rows) if rows else set()
        per[c] = {k: mean([row.get(k, 0.0) for row in rows]) for k in keys}
    keys = sorted(k for k in set().union(*per.values()) if any(per[c].get(k) for c in cols))
    if not keys:
        return []
    lines = ["| counter (mean per run) | " + " | ".join(cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for k in keys:
        lines.append("| %s | %s |" % (k, " | ".join(fmt_count(per[c].get(k)) for c in cols)))
    return lines


def verdict(data, workload, side):
    title, unit, claim, text = WORKLOADS.get(wl_base(workload), (workload, "", None, None))
    runs = data["runs"]
    base = values(runs, workload, BASELINE, side)
    avail = availability(data)
    if workload == "lookup":
        # rwsem runs under the osq policy: mutex-osq is the control that
        # differs only in shared vs exclusive locks; against mutex-nospin
        # the ratio also holds whatever spinning alone gives.
        rw = values(runs, workload, "rwsem", side)
        controls = [c for c in (FALLBACK_BASELINE, BASELINE)
                    if values(runs, workload, c, side)]
        if not controls or not rw:
            why = avail.get("rwsem" if not rw else FALLBACK_BASELINE, (False, "no runs"))[1]
            return ("Shared read locks (rwsem vs an exclusive mutex) cannot be judged in "
                    "this run: %s." % (why or "no successful runs"))
        parts = []
        for c in controls:
            base = values(runs, workload, c, side)
            r, lo, hi = ratio_ci(base, rw)
            word = judge(r, lo, hi, (1.0, float("inf")))
            word = {"reproduced": "rwsem is faster",
                    "not reproduced": "rwsem is slower"}.get(word, word)
            parts.append("rwsem/%s = %s (95%% CI %s, n=%d/%d): %s"
                         % (c, fmt(r), fmt_ci(lo, hi), len(rw), len(base), word))
        text = "Shared read locks: " + parts[0]
        if len(parts) > 1:
            text += ("; against %s, which also differs in spinning: %s"
                     % (controls[1], parts[1]))
        return text + "."
    if claim is None:
        return ""
    if not base:
        why = avail.get(BASELINE, (False, "no successful runs"))[1]
        return ("The 2009 claim (%s) cannot be tested in this run: %s is unavailable (%s)."
                % (text, BASELINE, why or "no successful runs"))
    parts = []
    for c in SPIN_CONFIGS:
        xs = values(runs, workload, c, side)
        if not xs:
            continue
        r, lo, hi = ratio_ci(base, xs)
        word = judge(r, lo, hi, claim)
        if word == "not reproduced" and lo <= 1.0 <= hi:
            word += "** (no difference from %s, and the interval excludes the claim)" % BASELINE
        else:
            word += "**"
        parts.append("%s/%s = %s (95%% CI %s, n=%d/%d): **%s"
                     % (c, BASELINE, fmt(r), fmt_ci(lo, hi), len(xs), len(base), word))
    if not parts:
        return ("The 2009 claim (%s) cannot be tested: no spinning configuration ran."
                % text)
    return ("2009 claim (%s, i.e. a ratio of %s–%s): %s."
            % (text, fmt(claim[0]), fmt(claim[1]), "; ".join(parts)))


# The lab's targets for the smallest detectable difference (95% CI
# half-width, %): dbench 3, every other workload 5.
FLOOR_TARGET = {"dbench": 3.0}


def floor_note(data, workload, d95, n):
    """Whether @d95 meets the workload's target, and the host's own run-to-
    run variation (the calibration loop before each run) beside it."""
    target = FLOOR_TARGET.get(wl_base(workload), 5.0)
    calib = [r["calib_ms"] for r in data["runs"] if r.get("calib_ms")]
    host = ""
    if len(calib) >= 2:
        host = ("; the host's own variation, a fixed CPU-bound loop before every run: "
                "CV %s%% over %d runs" % (fmt(100 * sd(calib) / mean(calib), 2), len(calib)))
    if d95 is None:
        return ""
    if 100 * d95 <= target:
        return " Target: ≤%s%%, met%s." % (fmt(target), host)
    return (" Target: ≤%s%%, **not met**: the runs of this workload vary "
            "more than that allows at n=%d%s." % (fmt(target), n, host))


def noise_floor(data, workload):
    """The baseline's second, interleaved copy (side B of a bench run)
    against the first: what this run could tell apart.  "" if absent."""
    runs = data["runs"]
    a = values(runs, workload, BASELINE, "A")
    b = values(runs, workload, BASELINE, "B")
    if len(a) < 2 or len(b) < 2:
        return ""
    r, lo, hi = ratio_ci(a, b)
    d95, d80 = detectable(a, b)
    return ("%s' / %s = %s (95%% CI %s, n=%d/%d); smallest difference this run could "
            "detect: %s%% (95%% CI half-width), %s%% at 80%% power.%s"
            % (BASELINE, BASELINE, fmt(r), fmt_ci(lo, hi), len(b), len(a),
               fmt(100 * d95, 2), fmt(100 * d80, 2),
               floor_note(data, workload, d95, min(len(a), len(b)))))


def bench_table(data, workload, side):
    runs = data["runs"]
    unit = WORKLOADS.get(wl_base(workload), ("", ""))[1]
    base = baseline_for(data, workload, side)
    bvals = values(runs, workload, base, side) if base else []
    avail = availability(data)
    head = "ratio vs %s [95%% CI]" % (base or BASELINE)
    if base and base != BASELINE:
        head += " (%s unavailable)" % BASELINE
    lines = ["| configuration | n | mean %s | sd | 95%% CI | %s | bootstrap 95%% CI "
             "| Welch p |%s" % (unit, head, " max latency ms |" if workload in DBENCH_WORKLOADS else ""),
             "|---|---:|---:|---:|---:|---:|---:|---:|" +
             ("---:|" if workload in DBENCH_WORKLOADS else "")]
    for c in configs_in(data):
        xs = values(runs, workload, c, side)
        if not xs:
            a = avail.get(c)
            why = ("unavailable: " + a[1]) if a and not a[0] else "no successful run"
            failed = [r["status"] for r in runs if r["workload"] == workload and r["config"] == c
                      and r["side"] == side and r["status"].startswith("failed")]
            if failed:
                why = failed[0]
            lines.append("| %s | 0 | %s | | | | | |%s" %
                         (c, why, " |" if workload in DBENCH_WORKLOADS else ""))
            continue
        m, s, lo, hi = mean_ci(xs)
        boot, pval = "—", "—"
        if bvals and c != base:
            r, rlo, rhi = ratio_ci(bvals, xs)
            ratio = "%s [%s]" % (fmt(r), fmt_ci(rlo, rhi))
            boot = fmt_ci(*bootstrap_ratio_ci(bvals, xs))
            p = welch_p(bvals, xs)
            pval = fmt(p) if p is not None else "—"
        elif c == base:
            ratio = "1 (baseline)"
        else:
            ratio = "—"
        lat = ""
        if workload in DBENCH_WORKLOADS:
            lats = [r.get("max_latency_ms") for r in runs if r["workload"] == workload
                    and r["config"] == c and r["side"] == side and r["status"] == "ok"]
            lat = " %s |" % fmt(mean([x for x in lats if x is not None])) if any(lats) else " — |"
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s |%s" %
                     (c, len(xs), fmt(m), fmt(s), fmt_ci(lo, hi), ratio, boot, pval, lat))
    return lines


def two_side_table(data, workload):
    """Kernel B vs kernel A (compare) or side B vs side A (A/A)."""
    runs = data["runs"]
    unit = WORKLOADS.get(wl_base(workload), ("", ""))[1]
    lines = ["| configuration | A mean %s (n) | A 95%% CI | B mean %s (n) | B 95%% CI "
             "| B/A [95%% CI] | bootstrap 95%% CI | Welch p "
             "| detectable ±%% (95%% CI / 80%% power) |" % (unit, unit),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    sentences = []
    for c in configs_in(data):
        a, b = values(runs, workload, c, "A"), values(runs, workload, c, "B")
        if not a or not b:
            lines.append("| %s | %d runs | | %d runs | | — | — | — | — |" % (c, len(a), len(b)))
            continue
        ma, _, alo, ahi = mean_ci(a)
        mb, _, blo, bhi = mean_ci(b)
        r, lo, hi = ratio_ci(a, b)
        d95, d80 = detectable(a, b)
        det = "%s / %s" % (fmt(100 * d95, 2), fmt(100 * d80, 2)) if d95 is not None else "—"
        p = welch_p(a, b)
        lines.append("| %s | %s (%d) | %s | %s (%d) | %s | %s [%s] | %s | %s | %s |" %
                     (c, fmt(ma), len(a), fmt_ci(alo, ahi), fmt(mb), len(b),
                      fmt_ci(blo, bhi), fmt(r), fmt_ci(lo, hi),
                      fmt_ci(*bootstrap_ratio_ci(a, b)), fmt(p) if p is not None else "—",
                      det))
        word = judge(r, lo, hi, (1.0, float("inf")))
        word = {"reproduced": "B is faster", "not reproduced": "B is slower"}.get(word, word)
        sentences.append("%s: B/A = %s (95%% CI %s), %s; smallest detectable difference "
                         "%s%% (95%% CI half-width), %s%% at 80%% power.%s" %
                         (c, fmt(r), fmt_ci(lo, hi), word,
                          fmt(100 * d95, 2) if d95 is not None else "—",
                          fmt(100 * d80, 2) if d80 is not None else "—",
                          floor_note(data, workload, d95, min(len(a), len(b)))
                          if data["mode"] == "aa" else ""))
    return lines, sentences


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
        "set terminal pngcairo size 900,500" if _has_cairo(gp) else "set terminal png size 900,500",
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
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        sys.stderr.write("report.py: gnuplot failed for %s: %s\n" % (workload, r.stderr[-300:]))
        return None
    return png


def lock_wait_share(run, clients):
    """Share of the clients' time spent waiting for twigfs tree locks: the
    wait_ns of every level and mode over clients x run seconds (None
    without counters or a duration).  @clients counts a run without @N."""
    st = run.get("twigfs_stats") or {}
    wait = sum(v for k, v in st.items() if LEVEL_KEY.match(k) and k.endswith("_wait_ns")
               and not k.endswith("max_wait_ns"))
    secs = run.get("seconds")
    n = run.get("clients") or clients
    if not st or not secs:
        return None
    return wait / (secs * 1e9 * n)


LEVELS = ("root", "internal", "leaf")


def time_shares(run, clients):
    """Where a twigfs run's time went, as shares: tree-lock wait per level
    and join wait over the clients' time (clients x run seconds), commit
    time and its blocking part (joiners kept out) over wall time; plus fsyncs per commit and the handle I/O wait.
    None for a run without commit_stats (a reference filesystem, or an
    older module)."""
    st = run.get("twigfs_stats") or {}
    secs = run.get("seconds")
    n = run.get("clients") or clients
    if "commits" not in st or not secs or not n:
        return None
    client_ns = secs * 1e9 * n
    out = {}
    for lvl in LEVELS:
        out[lvl] = sum(st.get("%s_%s_wait_ns" % (lvl, m), 0.0)
                       for m in ("read", "write")) / client_ns
    out["join"] = st.get("join_wait_ns", 0.0) / client_ns
    out["commit"] = st.get("commit_ns", 0.0) / (secs * 1e9)
    # the part of the commits that kept joiners out (older modules: None)
    out["blocking"] = (st["commit_blocked_ns"] / (secs * 1e9)
                       if "commit_blocked_ns" in st else None)
    commits = st.get("commits", 0.0)
    out["fsyncs_per_commit"] = st.get("fsyncs", 0.0) / commits if commits else None
    out["log_syncs"] = st.get("log_syncs", 0.0)
    out["log_fallbacks"] = st.get("log_fallbacks", 0.0)
    out["handle_io_wait_ns"] = st.get("handle_io_wait_ns", 0.0)
    return out


def fmt_share(xs):
    """Mean share in percent with its 95% interval."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "—"
    m, _, lo, hi = mean_ci(xs)
    if lo is None:
        return "%.2g%%" % (100 * m)
    return "%.2g%% [%.2g, %.2g]" % (100 * m, 100 * max(lo, 0.0), 100 * hi)


def time_section(data, workload, side):
    """The "where the time goes" table and the lab-fidelity checks of one
    workload: is the workload bound on the tree locks or on the commit?"""
    clients = num(data["host"].get("njobs" if wl_base(workload).startswith(("create", "fsmark"))
                                   else "clients")) or 0
    rows, problems = [], []
    for c in configs_in(data):
        shares = [time_shares(r, clients) for r in data["runs"]
                  if r["config"] == c and r["workload"] == workload and r["side"] == side
                  and r["status"] == "ok"]
        shares = [s for s in shares if s]
        if not shares:
            continue
        col = {k: [s[k] for s in shares] for k in shares[0]}
        fpc = [x for x in col["fsyncs_per_commit"] if x is not None]
        rows.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            c, len(shares), " | ".join(fmt_share(col[lvl]) for lvl in LEVELS),
            fmt_share(col["join"]), fmt_share(col["commit"]), fmt_share(col["blocking"]),
            fmt(mean(fpc)) if fpc else "—",
            "%s / %s / %s" % (fmt_count(mean(col["log_syncs"])),
                              fmt_count(mean(col["log_fallbacks"])),
                              fmt_count(mean(col["handle_io_wait_ns"])))))
        if wl_base(workload) in DBENCH_WORKLOADS or wl_base(workload).startswith("create"):
            # a workload without fsync commits only on the timer
            if fpc and 0 < mean(fpc) < 10:
                problems.append("%s: %.3g fsyncs per commit (want >= 10)" % (c, mean(fpc)))
            if mean(col["join"]) >= 0.10:
                problems.append("%s: join wait %.2g%% of client time (want < 10%%)"
                                % (c, 100 * mean(col["join"])))
            if any(col["handle_io_wait_ns"]):
                problems.append("%s: a handle waited for data I/O" % c)
    if not rows:
        return []
    L = ["Where the time goes (twigfs commit_stats and lock_stats; tree-lock and join "
         "wait as a share of the clients' time, clients x run seconds; commit, and the "
         "part of it that kept new handles out (the rest runs beside the next "
         "transaction), as a share of wall time; mean [95% CI]):", "",
         "| configuration | n | root lock wait | internal lock wait | leaf lock wait "
         "| join wait | commit | commit blocking | fsyncs per commit "
         "| log syncs / fallbacks / handle I/O wait ns |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows + [""]
    if problems:
        L += ["**Commit-bound.** This workload measures the transaction commit more than "
              "the tree locks: " + "; ".join(problems) + ".", ""]
    elif wl_base(workload) in DBENCH_WORKLOADS or wl_base(workload).startswith("create"):
        L += ["**Not commit-bound.** Every configuration has >= 10 fsyncs per commit "
              "(or no fsync), join wait under 10% of client time and no handle I/O "
              "wait.", ""]
    return L


def sweep_points(data, base, config):
    """[(x, mean, lo, hi, mean lock-wait share)] of one configuration in a
    sweep over clients (workload@N) or vCPUs (one boot each)."""
    by_x = {}
    for r in data["runs"]:
        if r["config"] != config or wl_base(r["workload"]) != base or r["status"] != "ok":
            continue
        x = r.get("clients") if data["host"].get("sweep") == "clients" else num(r.get("vcpus"))
        if x is not None:
            by_x.setdefault(int(x), []).append(r)
    out = []
    for x in sorted(by_x):
        rs = by_x[x]
        m, _, lo, hi = mean_ci([r["value"] for r in rs])
        clients = num(data["host"].get("clients")) or 50
        shares = [v for v in (lock_wait_share(r, clients) for r in rs) if v is not None]
        out.append((x, m, lo, hi, mean(shares) if shares else None))
    return out


def sweep_section(data, outdir, plots=True):
    """SWEEP=clients|vcpus: throughput and tree-lock wait share per
    configuration against the swept quantity, as a table and a two-panel
    plot (log2 x axis, 95% CI bars)."""
    host = data["host"]
    sweep = host.get("sweep", "none")
    if sweep not in ("clients", "vcpus"):
        return []
    xname = "clients / jobs" if sweep == "clients" else "vCPUs"
    L = ["## Scaling: %s" % xname, ""]
    bases = []
    for w in workloads_in(data):
        if wl_base(w) not in bases:
            bases.append(wl_base(w))
    for base in bases:
        title, unit = WORKLOADS.get(base, (base, ""))[:2]
        cfgs = [c for c in configs_in(data) if sweep_points(data, base, c)]
        if not cfgs:
            continue
        L += ["### %s (%s)" % (title, unit), "",
              "| configuration | " + " | ".join(
                  "%s=%d" % ("n" if sweep == "clients" else "vCPUs", x)
                  for x, *_ in sweep_points(data, base, cfgs[0])) + " |",
              "|---|" + "---:|" * len(sweep_points(data, base, cfgs[0]))]
        for c in cfgs:
            L.append("| %s | %s |" % (c, " | ".join(
                "%s [%s]%s" % (fmt(m), fmt_ci(lo, hi),
                               "; wait %s%%" % fmt(100 * sh, 2) if sh is not None else "")
                for _, m, lo, hi, sh in sweep_points(data, base, c))))
        L += ["", "Cells: mean [95% CI]; wait: the share of the clients' time spent "
              "waiting for tree locks (lock_stats wait_ns / (clients x run seconds))."]
        if sweep == "vcpus":
            L += ["On this 2-core host, more vCPUs than cores are oversubscribed: a "
                  "spinner may burn the very host CPU its lock owner needs, so spinning "
                  "looks worse here than it would on real cores."]
        L.append("")
        if plots:
            png = sweep_plot(data, base, cfgs, outdir, xname, unit, title)
            if png:
                L += ["![%s scaling](%s)" % (base, png), ""]
    return L


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
        "set terminal pngcairo size 900,800" if _has_cairo(gp) else "set terminal png size 900,800",
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
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        sys.stderr.write("report.py: gnuplot failed for the %s sweep: %s\n" % (base, r.stderr[-300:]))
        return None
    return png


def _has_cairo(gp):
    r = subprocess.run([gp, "-e", "set terminal"], text=True, capture_output=True)
    return "pngcairo" in (r.stdout + r.stderr)


CSV_FIELDS = ["run", "boot", "side", "kernel", "kernel_version", "patches", "config_hash",
              "vcpus", "mem_mib", "accel", "host_load_start", "host_load_end",
              "twigfs_commit", "workload", "config", "fs", "lock", "spin_policy", "rep",
              "status", "value", "unit", "max_latency_ms", "seconds", "fsck"]


def write_csv(data, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in data["runs"]:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in CSV_FIELDS})


def detail_sections(data, w, side):
    """Counters, the time table and profiles of one workload and side."""
    L = []
    for field, name, collapse in (("twigfs_stats", "twigfs lock statistics "
                                   "(/sys/fs/twigfs/<dev>/, levels summed)", collapse_stats),
                                  ("mutex_stats", "kernel mutex statistics "
                                   "(/sys/kernel/debug/mutex_stats)", lambda s: s)):
        t = stats_table(data, w, side, field, collapse)
        if t:
            L += ["%s%s:" % (name[0].upper(), name[1:]), ""] + t + [""]
    L += time_section(data, w, side)
    L += profile_section(data, w)
    return L


def one_side_section(data, w, outdir, plots, tag=""):
    """A bench run's table, verdict, noise floor, plot and details of one
    workload: (lines, verdict)."""
    L = bench_table(data, w, "A") + [""]
    v = verdict(data, w, "A")
    floor = noise_floor(data, w)
    if floor:
        L += ["**Noise floor of this run.** " + floor, ""]
        v = (v + " " if v else "") + "(" + floor + ")"
    if v:
        L += ["**Verdict.** " + v, ""]
    if plots:
        png = plot(data, w, outdir, ["A"], tag)
        if png:
            L += ["![%s](%s)" % (w, png), ""]
    return L + detail_sections(data, w, "A"), v


def generations(data):
    """[(kernel label, generation)] of a KERNELS= bench run, in boot order."""
    host, out = data["host"], []
    for b in data["boots"]:
        gen = host.get("kernel_%s_generation" % b["kernel"])
        if gen and (b["kernel"], gen) not in out:
            out.append((b["kernel"], gen))
    return out


def generation_data(data, label):
    boots = [b for b in data["boots"] if b["kernel"] == label]
    nums = {b["boot"] for b in boots}
    return dict(data, runs=[r for r in data["runs"] if r["kernel"] == label], boots=boots,
                profiles=[p for p in data.get("profiles", []) if p["boot"] in nums])


def generations_table(data, w, gens):
    """Each configuration's mean per generation side by side, and the
    ratio of the later generation to the first (different kernels, so
    figures of different boots: a guide, not a verdict)."""
    cfgs = configs_in(data)
    subs = [(gen, generation_data(data, k)) for k, gen in gens]
    unit = WORKLOADS.get(wl_base(w), ("", ""))[1]
    L = ["Generations side by side (mean %s [95%% CI]; last column: %s / %s):" %
         (unit, subs[-1][0], subs[0][0]), "",
         "| configuration | " + " | ".join("Linux %s" % g for g, _ in subs) +
         " | ratio [95% CI] |",
         "|---|" + "---:|" * (len(subs) + 1)]
    for c in cfgs:
        cols, first, last = [], None, None
        for g, sub in subs:
            xs = values(sub["runs"], w, c, "A")
            if xs:
                m, _, lo, hi = mean_ci(xs)
                cols.append("%s [%s]" % (fmt(m), fmt_ci(lo, hi)))
            else:
                cols.append("—")
            first = xs if first is None else first
            last = xs
        ratio = "—"
        if first and last and len(subs) > 1:
            r, lo, hi = ratio_ci(first, last)
            ratio = "%s [%s]" % (fmt(r), fmt_ci(lo, hi))
        L.append("| %s | %s | %s |" % (c, " | ".join(cols), ratio))
    return L + [""]


def render(data, outdir, plots=True):
    host, mode = data["host"], data["mode"]
    write_csv(data, os.path.join(outdir, "results.csv"))
    runs = data["runs"]
    ok = [r for r in runs if r["status"] == "ok"]
    L = []
    title = {"bench": "twigfs lock benchmark", "aa": "twigfs A/A noise check",
             "compare": "twigfs kernel comparison"}.get(mode, "twigfs benchmark")
    L += ["# %s — %s" % (title, host.get("date", "")), ""]
    g = data["boots"][0]["guest"] if data["boots"] else {}
    L += ["## What produced these numbers", "",
          "| | |", "|---|---|",
          "| twigfs commit | %s |" % host.get("twigfs_commit", "?"),
          "| kernel | %s |" % (g.get("uname", "?")),
          "| kernel A config hash / patches | %s / %s |" %
          (host.get("kernel_A_config_hash", "?"), host.get("kernel_A_patches", "") or "none")]
    if mode == "compare":
        L.append("| kernel B config hash / patches | %s / %s |" %
                 (host.get("kernel_B_config_hash", "?"), host.get("kernel_B_patches", "")))
    gens = generations(data)
    if len(gens) > 1:
        unames = {b["kernel"]: b["guest"].get("uname", "?") for b in data["boots"]}
        L += ["| kernel %s: Linux %s | %s; config hash %s; patches %s |" %
              (k, gen, unames.get(k, "?"), host.get("kernel_%s_config_hash" % k, "?"),
               host.get("kernel_%s_patches" % k, "") or "none") for k, gen in gens]
    L += ["| guest | %s vCPUs, %s MiB, accelerator %s, CPU %s |" %
          (host.get("vcpus", "?"), host.get("mem_mib", "?"), host.get("accel", "?"),
           g.get("cpu_model", "?")),
          "| host | %s CPUs (%s); load average at start %s, at end %s |" %
          (host.get("host_cpus", "?"), host.get("host_cpu_model", "?"),
           host.get("host_load_start", "?"), host.get("host_load_end", "?")),
          "| twigfs node size | %s |" % host.get("nodesize", "16K (default)"),
          "| mutex spin knob / mutex stats | %s / %s |" %
          (g.get("knob", "?"), g.get("mutex_stats", "?")),
          "| boots | %d (%s); wall time %s s |" %
          (len(data["boots"]), ", ".join("%d:%s status %s" % (b["boot"], b["kernel"], b["status"])
                                        for b in data["boots"]),
           host.get("wall_seconds", "?")),
          "| runs | %d planned, %d ok, %d unavailable, %d failed or missing |" %
          (len(runs), len(ok), sum(r["status"] == "unavailable" for r in runs),
           sum(r["status"] not in ("ok", "unavailable") for r in runs)),
          "",
          "Workloads (every run on a freshly made filesystem; configurations "
          "interleaved round-robin, %s repetitions%s):" %
          (host.get("repeat", "?"), " per boot" if mode == "compare" else ""), "",
          "- `dbench`: dbench %s with Debian's client.txt, `-t %s`; dbench 4.00 "
          "adds its own warm-up of at least %s s (a fifth of -t) before the measured "
          "period; throughput and max latency from its summary line." %
          (host.get("clients", "?"), host.get("duration", "?"),
           fmt(num(host.get("duration")) / 5 if num(host.get("duration")) else None)),
          "- `create-own` / `create-shared`: fio, %s processes each creating %s files of "
          "4 KiB (own directory each / one shared directory)%s; files/s = files / the "
          "slowest job's runtime." %
          (host.get("njobs", "?"), g.get("nfiles", host.get("nfiles", "?")),
           (", sized by the warm-up pass for about %s s of creating on %s"
            % (host.get("create_secs", "?"), BASELINE))
           if host.get("nfiles") == "auto" else ""),
          "- `fsmark-own` / `fsmark-shared`: fs_mark, %s threads creating 4 KiB files "
          "(no fsync, files kept) in %s loops, a directory per thread / one shared "
          "directory, the same number of files per thread as the fio creates; "
          "files/s = the mean of fs_mark's per-loop Files/sec." %
          (host.get("njobs", "?"), host.get("fsmark_loops", "?")),
          "- `dbench-xattr`: the same dbench with `--xattr` (each file's DOS attributes "
          "in a user. extended attribute, read and set as Samba does), when run; "
          "not in the default workloads.",
          "- `lookup`: twig-lookup, %s processes for %s s stat()ing never-seen names "
          "(dcache misses: a read-only tree search each) in a directory of %s files, "
          "reading the whole directory every 64th operation; ops/s." %
          (host.get("lookup_procs", "?"), host.get("lookup_secs", "?"),
           host.get("lookup_files", "?")),
          ""]
    avail = availability(data)
    if avail:
        L += ["Configurations:", "", "| configuration | available | note |", "|---|---|---|"]
        for c in configs_in(data):
            a = avail.get(c)
            L.append("| %s | %s | %s |" % (c, "?" if a is None else ("yes" if a[0] else "**no**"),
                                           a[1] if a else ""))
        L.append("")
    L += sweep_section(data, outdir, plots)
    sides = sorted({r["side"] for r in runs}) or ["A"]
    if mode == "bench":
        # Side B of a bench run is the second copy of the baseline only.
        sides = ["A"]
    verdicts = []
    for w in workloads_in(data):
        wt, unit = WORKLOADS.get(wl_base(w), (w, ""))[:2]
        L += ["## %s (`%s`, %s)" % (wt, w, unit), ""]
        if not any(r["workload"] == w for r in runs):
            # make profile: profiled runs only
            L += profile_section(data, w)
            continue
        if mode in ("compare", "aa") and len(sides) > 1:
            lines, sentences = two_side_table(data, w)
            L += lines + [""]
            for s in sentences:
                L += ["- " + s]
            L.append("")
            verdicts += ["%s — %s" % (w, s) for s in sentences]
            if mode == "compare":
                for s in sides:
                    L += ["Kernel %s alone:" % s, ""] + bench_table(data, w, s) + [""]
            if plots:
                png = plot(data, w, outdir, sides)
                if png:
                    L += ["![%s](%s)" % (w, png), ""]
            L += detail_sections(data, w, sides[0])
        elif len(gens) > 1:
            # KERNELS="6.1 6.12": each generation against its own baseline.
            for k, gen in gens:
                sub = generation_data(data, k)
                L += ["### Linux %s" % gen, ""]
                lines, v = one_side_section(sub, w, outdir, plots, "-" + gen)
                L += lines
                if v:
                    verdicts.append("%s, Linux %s: %s" % (w, gen, v))
            L += generations_table(data, w, gens)
        else:
            lines, v = one_side_section(data, w, outdir, plots)
            L += lines
            if v:
                verdicts.append("%s: %s" % (w, v))
    if verdicts:
        L += ["## Verdicts", ""] + ["- " + v for v in verdicts] + [""]
    failed = [r for r in data["runs"] if r["status"] not in ("ok", "unavailable")]
    if failed:
        L += ["## Runs left out", "",
              "Not counted in any figure above (raw outputs under boot-<n>-<kernel>/raw/):", ""]
        L += ["- boot %s, run %s: %s %s rep %s: %s" % (r.get("boot"), r.get("run"),
                                                     r["workload"], r["config"], r["rep"],
                                                     r["status"]) for r in failed]
        L += [""]
    L += ["## Method", "",
          "- Each figure: mean of the runs, sample standard deviation, 95% confidence "
          "interval of the mean from Student's t with n-1 degrees of freedom.",
          "- Ratios: mean(config)/mean(%s) from runs of the same boot; the 95%% interval "
          "is Fieller's, for independent samples with unequal variances, degrees of "
          "freedom by Welch-Satterthwaite; \"—\" when it is unbounded or n < 2." % BASELINE,
          "- Verdicts: *not reproduced* when the ratio's interval excludes the claimed "
          "range (dbench 1.5–2.5, creates 1.3–1.5) from below or lies below 1, even if it "
          "also contains 1; *not distinguishable from noise* when it contains both 1 and "
          "part of the claim; *reproduced* when it lies above 1 and overlaps the claim; "
          "*not reproduced* also for a gain above the claimed range.",
          "- Bootstrap: a percentile interval of the same ratio from 4999 resamples of "
          "each side (fixed seed); Welch p: two-sided Welch t-test of the two samples.",
          "- Detectable difference (noise floor, A/A, compare): the 95%% CI half-width of "
          "the difference of means, relative to A's mean, and the true difference that "
          "Welch's test would find with 80%% power (noncentral t).  In a bench run the "
          "baseline runs as two interleaved copies (%s and %s'): that pair gives "
          "the run's own floor." % (BASELINE, BASELINE),
          "- Order: within each repetition of each workload the configurations run in a "
          "random order from seed %s (host-info.txt)." % host.get("seed", "?"),
          "- TCG guests are slow and noisy and the host load moves figures 2-4x; compare "
          "only within one results folder.  Raw outputs are under boot-*/raw/.", ""]
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(L))


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
        render(data, os.path.dirname(os.path.abspath(a.render)), not a.no_plots)
        return 0
    data = collect(a.results)
    with open(os.path.join(a.results, "results.json"), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    render(data, a.results, not a.no_plots)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
