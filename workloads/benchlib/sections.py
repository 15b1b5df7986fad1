"""The parts of report.md about one workload: the tables, verdicts and
noise floor, counters, where the time went, profiles, sweeps and kernel
generations side by side."""
from .collect import num
from .data import (LEVELS, availability, baseline_for, collapse_stats, configs_in,
                   generation_data, sweep_points, time_shares, values, workloads_in)
from .defs import (BASELINE, DBENCH_WORKLOADS, FALLBACK_BASELINE, SPIN_CONFIGS, WORKLOADS,
                   wl_base)
from .formatting import fmt, fmt_ci, fmt_count, fmt_ns, fmt_share
from .plots import plot, sweep_plot
from .stats import (bootstrap_ratio_ci, detectable, judge, mean, mean_ci, ratio_ci, sd,
                    welch_p)


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
