"""report.md and results.csv of collected results: provenance, each
workload's section, the verdicts, the runs left out and the method."""
import csv
import os

from .collect import num
from .data import availability, configs_in, generation_data, generations, workloads_in
from .defs import BASELINE, DESCRIBED, FALLBACK_BASELINE, WORKLOADS, wl_base
from .formatting import fmt
from .plots import plot
from .sections import (detail_sections, generations_table, one_side_section,
                       profile_section, sweep_section, two_side_table, bench_table)


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


def render(data, outdir, plots=True, summary=None):
    """Writes report.md, results.csv and the plots of @data into @outdir;
    @summary: summary.txt's text (benchlib.switchback.build()), shown first
    so that the two never differ."""
    host, mode = data["host"], data["mode"]
    write_csv(data, os.path.join(outdir, "results.csv"))
    runs = data["runs"]
    ok = [r for r in runs if r["status"] == "ok"]
    L = []
    title = {"bench": "twigfs lock benchmark", "aa": "twigfs A/A noise check",
             "compare": "twigfs kernel comparison"}.get(mode, "twigfs benchmark")
    L += ["# %s — %s" % (title, host.get("date", "")), ""]
    if summary:
        L += ["## Summary", "",
              "summary.txt: the switchback runs (details in [switchback.md](switchback.md)) "
              "and the separate runs, each against %s (else %s, as below)." % (
                  BASELINE, FALLBACK_BASELINE), "",
              "```"] + summary.rstrip("\n").split("\n") + ["```", ""]
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
          "in a seeded random order in each repetition, %s repetitions%s):" %
          (host.get("repeat", "?"), " per boot" if mode == "compare" else ""), "",
          "- `dbench`: dbench %s with Debian's client.txt, `-t %s`; dbench 4.00 "
          "adds its own warm-up of at least %s s (a fifth of -t) before the measured "
          "period; throughput and max latency from its summary line." %
          (host.get("clients", "?"), host.get("duration", "?"),
           fmt(num(host.get("duration")) / 5 if num(host.get("duration")) else None)),
          ("- `create-own`: twig-create, %s processes each in its own directory of %s "
           "files of 4 KiB (filled before the run, not timed), for %s s creating a file "
           "and removing the oldest, so the directories stay the same size (no negative "
           "dentries kept); files/s = files created / the run's seconds." %
           (host.get("njobs", "?"), host.get("create_keep", "?"),
            host.get("create_secs", "?")))
          if host.get("create_keep") else
          "- `create-own`: fio, %s processes each creating %s files of 4 KiB in its own "
          "directory; files/s = files / the slowest job's runtime." %
          (host.get("njobs", "?"), g.get("nfiles", host.get("nfiles", "?"))),
          "- `create-shared`: fio, %s processes each creating %s files of "
          "4 KiB in one shared directory%s; files/s = files / the "
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
          ] + ["- `%s`: %s" % (w, d["doc"]) for w, d in DESCRIBED.items() if d.get("doc")] + [
          "- `lookup`: twig-lookup, %s processes for %s s stat()ing never-seen names "
          "(dcache misses: a read-only tree search each%s) in a directory of %s files, "
          "reading the whole directory every 64th operation; ops/s." %
          (host.get("lookup_procs", "?"), host.get("lookup_secs", "?"),
           "; twigfs keeps no negative dentries for the run, so the dcache does not grow"
           if "lookup" in host.get("negative_dentries_off", "").split() else "",
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
