#!/usr/bin/python3
"""Host-side tests of workloads/report.py on synthetic results.

    /usr/bin/python3 workloads/tests/test_report.py

Prints a PASS or FAIL line per test and "N passed, M failed" last; exits 1
on any failure.
"""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import passfail  # noqa: E402
import report  # noqa: E402
from benchlib import collect, data, defs, formatting, sections, stats  # noqa: E402

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "samples")


def run(workload, config, value, side="A", rep=1, status="ok", **extra):
    r = {"run": 0, "boot": 1, "side": side, "kernel": side, "workload": workload,
         "config": config, "rep": rep, "status": status, "value": value,
         "unit": defs.WORKLOADS[workload][1], "kernel_version": "6.1.192",
         "patches": "0001-x.patch", "config_hash": "abc", "vcpus": "2",
         "mem_mib": "2048", "accel": "tcg", "twigfs_commit": "deadbeef",
         "host_load_start": 1.0, "host_load_end": 1.5}
    r.update(extra)
    return r


def synthetic(mode="bench"):
    """dbench: spin512 about 2x the baseline (claim reproduced), mutex-owner
    equal (noise); creates: spin512 +10% with a tight spread (not
    reproduced); lookup: rwsem 3x; mutex-osq unavailable."""
    runs = []
    table = {
        ("dbench", "mutex-nospin"): [50, 52, 48],
        ("dbench", "spin512"): [100, 98, 103],
        ("dbench", "mutex-owner"): [45, 60, 52],
        ("dbench", "rwsem"): [70, 71, 69],
        ("dbench", "ext4"): [90, 91, 89],
        ("create-shared", "mutex-nospin"): [1000, 1002, 998],
        ("create-shared", "spin512"): [1100, 1101, 1099],
        ("create-shared", "mutex-owner"): [1000, 1010, 995],
        ("lookup", "mutex-nospin"): [1000, 1100, 900],
        ("lookup", "rwsem"): [3000, 3100, 2900],
    }
    for (w, c), xs in table.items():
        for i, x in enumerate(xs):
            stats = {"lock_stats/write_root_contended": 10.0 * (i + 1),
                     "lock_stats/write_leaf_contended": 5.0,
                     "lock_stats/read_root_wait_max_ns": 100.0 + i}
            runs.append(run(w, c, float(x), rep=i + 1, twigfs_stats=stats,
                            mutex_stats={"spins": 3.0}, max_latency_ms=10.0))
    for w in ("dbench", "create-shared", "lookup"):
        runs.append(run(w, "mutex-osq", None, status="unavailable"))
    runs.append(run("dbench", "btrfs", None, status="failed: exit 1"))
    boots = [{"boot": 1, "kernel": "A", "dir": "boot-1-A", "status": "0",
              "guest": {"uname": "6.1.192", "knob": "present", "cpu_model": "QEMU"},
              "available": {"mutex-osq": {"available": False, "note": "kernel refused osq"},
                            "mutex-nospin": {"available": True, "note": ""}},
              "host_load_start": 1.0, "host_load_end": 2.0}]
    host = {"mode": mode, "date": "2026-01-01", "twigfs_commit": "deadbeef", "vcpus": "2",
            "mem_mib": "2048", "accel": "tcg", "repeat": "3", "duration": "20",
            "clients": "50", "njobs": "50", "nfiles": "100"}
    return {"host": host, "mode": mode, "boots": boots, "runs": runs}


def synthetic_aa():
    runs = []
    for i, (a, b) in enumerate([(100, 101), (102, 99), (98, 100), (100, 100)]):
        runs.append(run("dbench", "ext4", float(a), side="A", rep=i + 1))
        runs.append(run("dbench", "ext4", float(b), side="B", rep=i + 1))
    return {"host": {"mode": "aa"}, "mode": "aa", "boots": [], "runs": runs}


class Stats(unittest.TestCase):
    def test_t_quantiles(self):
        for df, q in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (10, 2.2281), (30, 2.0423)):
            self.assertAlmostEqual(stats.t_ppf(0.975, df), q, places=3)
        self.assertAlmostEqual(stats.t_ppf(0.975, float("inf")), 1.95996, places=3)

    def test_mean_ci(self):
        m, s, lo, hi = stats.mean_ci([1.0, 2.0, 3.0])
        self.assertAlmostEqual(m, 2.0)
        self.assertAlmostEqual(s, 1.0)
        self.assertAlmostEqual(hi - m, 4.3027 / 3 ** 0.5, places=3)
        self.assertIsNone(stats.mean_ci([5.0])[2])

    def test_fieller_brackets_ratio(self):
        r, lo, hi = stats.ratio_ci([100, 102, 98], [150, 155, 145])
        self.assertAlmostEqual(r, 1.5)
        self.assertTrue(lo < 1.5 < hi)
        self.assertTrue(1.3 < lo and hi < 1.7)

    def test_fieller_unbounded(self):
        r, lo, hi = stats.ratio_ci([1, 100, 2], [50, 51, 49])
        self.assertIsNone(lo)

    def test_fieller_clips_at_zero(self):
        # b's mean is not distinguishable from 0 at 1 degree of freedom:
        # the raw Fieller bound is negative, a throughput ratio cannot be
        r, lo, hi = stats.ratio_ci([100, 102], [10, 200])
        self.assertAlmostEqual(r, 105 / 101)
        self.assertEqual(lo, 0.0)
        self.assertTrue(hi > r)

    def test_fieller_zero_spread(self):
        self.assertEqual(stats.ratio_ci([2, 2], [4, 4]), (2.0, 2.0, 2.0))

    def test_detectable(self):
        d95, d80 = stats.detectable([100, 102, 98], [100, 101, 99])
        self.assertTrue(0 < d95 < d80 < 0.2)

    def test_welch_p_known_value(self):
        # means 2 and 5, both variances 1, n=3: t = 3.674, df = 4
        self.assertAlmostEqual(stats.welch_p([1, 2, 3], [4, 5, 6]), 0.02131, places=4)
        self.assertIsNone(stats.welch_p([1], [2, 3]))
        self.assertEqual(stats.welch_p([2, 2], [2, 2]), 1.0)

    def test_power_is_eighty_percent_at_d80(self):
        a, b = [100, 102, 98, 101], [100, 101, 99, 97]
        d95, d80 = stats.detectable(a, b)
        va = stats.sd(a) ** 2 / 4
        vb = stats.sd(b) ** 2 / 4
        se = (va + vb) ** 0.5 / stats.mean(a)
        df = stats.welch_df(va, 4, vb, 4)
        self.assertAlmostEqual(stats.welch_power(d80, se, df), 0.8, places=6)
        # a difference of one half-width is seen only about half the time
        self.assertAlmostEqual(stats.welch_power(d95, se, df), 0.5, delta=0.05)
        # the normal approximation (t_a + t_b) * se is close to the exact one
        approx = (stats.t_ppf(0.975, df) + stats.t_ppf(0.8, df)) * se
        self.assertAlmostEqual(d80 / approx, 1.0, delta=0.1)

    def test_bootstrap_ratio(self):
        lo, hi = stats.bootstrap_ratio_ci([100, 102, 98], [150, 155, 145])
        self.assertTrue(1.4 < lo < 1.5 < hi < 1.6)
        self.assertEqual(stats.bootstrap_ratio_ci([100, 102, 98], [150, 155, 145]), (lo, hi))
        self.assertEqual(stats.bootstrap_ratio_ci([1, 2], [3, 4]), (None, None))

    def test_judge(self):
        claim = (1.5, 2.5)
        self.assertEqual(stats.judge(2.0, 1.8, 2.2, claim), "reproduced")
        self.assertEqual(stats.judge(1.1, 1.05, 1.15, claim), "not reproduced")
        self.assertEqual(stats.judge(0.8, 0.7, 0.9, claim), "not reproduced")
        self.assertEqual(stats.judge(1.2, 0.9, 1.6, claim), "not distinguishable from noise")
        # no difference seen, but a 1.5x gain is outside the interval
        self.assertEqual(stats.judge(0.96, 0.81, 1.14, claim), "not reproduced")
        self.assertEqual(stats.judge(1.0, 0.9, 1.1, (1.0, float("inf"))),
                         "not distinguishable from noise")
        self.assertEqual(stats.judge(1.2, None, None, claim), "not distinguishable from noise")


class ConfigTable(unittest.TestCase):
    def test_shell_and_python_read_the_same_table(self):
        """configs.sh (bench.sh, the guest) and defs.py (the report) are
        the table's two readers: same rows, same order, a "#B" copy is its
        configuration, a name not in it is unknown."""
        wl = os.path.dirname(defs.WL_DIR)
        script = ('config_table=$1/configs.txt; . "$1/configs.sh"; config_rows; '
                  'config_def spin512#B; config_def nope; config_names twigfs; echo')
        out = subprocess.run(["sh", "-c", script, "sh", wl], check=True,
                             capture_output=True, text=True).stdout.splitlines()
        rows = [tuple(line.split()[:3]) for line in out[:-3]]
        self.assertEqual(rows, defs.CONFIG_TABLE)
        self.assertEqual(out[-3:], ["twigfs mutex 512 none", "unknown - - -",
                                    " ".join(defs.TWIG_CONFIGS) + " "])


class Parsing(unittest.TestCase):
    def test_dbench(self):
        v, extra, err = collect.parse_output(
            "dbench", "junk\nThroughput 47.328 MB/sec  50 clients  50 procs  "
            "max_latency=2321.897 ms\n")
        self.assertEqual((v, extra["max_latency_ms"], err), (47.328, 2321.897, None))

    def test_dbench_xattr(self):
        """dbench --xattr prints dbench's summary: parsed the same way."""
        v, extra, err = collect.parse_output(
            "dbench-xattr", "Throughput 31.5 MB/sec  50 clients  50 procs  "
            "max_latency=1800.5 ms\n")
        self.assertEqual((v, extra["max_latency_ms"], err), (31.5, 1800.5, None))
        self.assertIn("warm-up", collect.parse_output(
            "dbench-xattr", "Throughput 0 MB/sec  50 clients  50 procs  "
            "max_latency=1.0 ms\n")[2])

    def test_dbench_xattr_table(self):
        """Its table has dbench's max latency column and ratios to the baseline."""
        data = synthetic()
        data["runs"] += [run("dbench-xattr", "mutex-nospin", x, max_latency_ms=10.0,
                             rep=i + 1) for i, x in enumerate((50, 52, 48))]
        data["runs"] += [run("dbench-xattr", "spin512", x, max_latency_ms=20.0,
                             rep=i + 1) for i, x in enumerate((100, 98, 103))]
        lines = sections.bench_table(data, "dbench-xattr", "A")
        self.assertIn("max latency ms", lines[0])
        spin = [ln for ln in lines if ln.startswith("| spin512 ")][0]
        self.assertRegex(spin, r"\| 2\.0\d* \[")
        self.assertTrue(spin.rstrip().endswith("20 |"), spin)

    def test_workloads_of_their_own(self):
        """workloads/wl/: each <name>.sh guest driver has its <name>.txt, and
        the description is what the collector and the report use."""
        names = sorted(os.listdir(defs.WL_DIR))
        drivers = {n[:-3] for n in names if n.endswith(".sh")}
        self.assertEqual(drivers, set(defs.DESCRIBED))
        self.assertIn("dbench-xattr", drivers)
        for w, d in defs.DESCRIBED.items():
            self.assertEqual(defs.WORKLOADS[w][:2], (d["title"], d["unit"]))
            # whether bench.sh may put it in a switchback run
            self.assertIn(d.get("switchback"), ("yes", "no"), w)
        self.assertIn("dbench-xattr", defs.DBENCH_WORKLOADS)
        tmp = tempfile.mkdtemp()
        try:
            with open(os.path.join(tmp, "mine.txt"), "w") as f:
                f.write("# a comment\ntitle My load\nunit ops/s\nparser lookup\n")
            self.assertEqual(defs.described_workloads(tmp),
                             {"mine": {"title": "My load", "unit": "ops/s", "parser": "lookup"}})
            # a described workload's output goes to the parser it names
            defs.PARSERS["mine"] = "lookup"
            text = "lookups 5000 readdirs 70 seconds 10.0 ops_per_sec 507.0\n"
            self.assertEqual(collect.parse_output("mine", text)[0],
                             collect.parse_output("lookup", text)[0])
        finally:
            defs.PARSERS.pop("mine", None)
            shutil.rmtree(tmp)

    def test_fio(self):
        """create-shared's fio JSON; create-own's in results from before twig-create."""
        doc = {"jobs": [{"error": 0, "job_runtime": 2000, "write": {"total_ios": 100}},
                        {"error": 0, "job_runtime": 4000, "write": {"total_ios": 100}}]}
        for w in ("create-shared", "create-own"):
            v, extra, err = collect.parse_output(w, "fio: note\n" + json.dumps(doc))
            self.assertEqual((v, err), (50.0, None))

    def test_fio_recorded_sample(self):
        # fio 3.33 (the guest's), create-shared.fio with NJOBS=3 NFILES=50:
        # create-rate.awk's scanner reads what a JSON reader reads
        with open(os.path.join(SAMPLES, "fio-3.33-create-shared.txt")) as f:
            text = f.read()
        doc = json.loads(text)
        files = sum(j["write"]["total_ios"] for j in doc["jobs"])
        secs = max(j["job_runtime"] for j in doc["jobs"]) / 1000.0
        v, extra, err = collect.parse_output("create-shared", text)
        self.assertEqual((v, extra, err), (files / secs, {"files": files, "fio_seconds": secs},
                                           None))
        self.assertEqual(files, 150)

    def test_fio_failures(self):
        doc = {"jobs": [{"error": 0, "job_runtime": 2000, "write": {"total_ios": 100}},
                        {"error": 5, "job_runtime": 4000, "write": {"total_ios": 100}}]}
        text = json.dumps(doc, indent=2)
        self.assertEqual(collect.parse_output("create-shared", text)[2], "fio job error")
        self.assertEqual(collect.parse_output("create-shared", '{"jobs": []}')[2],
                         "fio job error")
        self.assertIn("bad fio JSON", collect.parse_output("create-shared", text[:200])[2])
        self.assertEqual(collect.parse_output("create-shared", "fio: no such file\n"),
                         (None, {}, "no fio JSON"))
        doc["jobs"] = [{"error": 0, "job_runtime": 0, "write": {"total_ios": 0}}]
        self.assertEqual(collect.parse_output("create-shared", json.dumps(doc))[2],
                         "zero runtime")

    def test_create_rate_in_the_guest(self):
        """The guest sizes its create runs with create-rate.awk under
        busybox awk: the same line as the host's awk, to the last digit."""
        if not shutil.which("busybox"):
            self.skipTest("no busybox on this host")
        for name, fmt in (("fio-3.33-create-shared.txt", "fio"), ("fs_mark-3.3.txt", "fs_mark")):
            lines = [subprocess.run(awk + ["-v", "fmt=" + fmt, "-f", collect.CREATE_RATE,
                                           os.path.join(SAMPLES, name)], check=True,
                                    capture_output=True, text=True).stdout
                     for awk in (["awk"], ["busybox", "awk"])]
            self.assertEqual(lines[0], lines[1])
            self.assertTrue(lines[0].startswith("ok "), lines[0])

    def test_twig_create(self):
        v, extra, err = collect.parse_output(
            "create-own", "prefill files 10000 seconds 4.210 sync_seconds 2.001\n"
            "creates 71234 unlinks 71234 seconds 20.004 files_per_sec 3560.9\n")
        self.assertEqual((v, extra["files"], extra["unlinks"], err), (3560.9, 71234, 71234, None))
        self.assertEqual(collect.parse_output("create-own", "prefill files 3 seconds 1 "
                                              "sync_seconds 0\n")[2], "no twig-create summary")

    def test_lookup(self):
        v, _, err = collect.parse_output(
            "lookup", "lookups 120319 readdirs 1862 seconds 5.221 ops_per_sec 23400.1\n")
        self.assertEqual((v, err), (23400.1, None))

    def test_fs_mark_recorded_sample(self):
        # Debian fsmark 3.3, `fs_mark -d DIR -t 2 -n 100 -s 4096 -S 0 -k -L 2`
        with open(os.path.join(SAMPLES, "fs_mark-3.3.txt")) as f:
            text = f.read()
        for w in ("fsmark-own", "fsmark-shared"):
            v, extra, err = collect.parse_output(w, text)
            self.assertIsNone(err)
            self.assertEqual(extra["fsmark_loops"], [8394.0, 8911.5])
            self.assertAlmostEqual(v, (8394.0 + 8911.5) / 2)

    def test_perf_lock_contention_recorded_sample(self):
        # perf 6.1.192 in the guest: perf lock contention -E 10 -k wait_total
        # on perf lock record -a of dbench 50, mutex-nospin
        with open(os.path.join(SAMPLES, "perf-lock-contention-6.1.txt")) as f:
            rows = collect.parse_perf_lock(f.read())
        self.assertEqual(len(rows), 10)
        self.assertEqual(rows[0], {"contended": 13660, "wait_total_ns": 1.44 * 60e9,
                                   "wait_max_ns": 174.79e6, "wait_avg_ns": 6.34e6,
                                   "type": "mutex", "caller": "twig_search_slot+0xe9"})
        self.assertEqual(rows[5]["type"], "rwsem:R")
        self.assertEqual(rows[5]["caller"], "iterate_dir+0x4f")
        self.assertAlmostEqual(rows[1]["wait_total_ns"], 23.5e9)
        self.assertEqual(collect.parse_perf_lock("contended   total wait\n\nno samples\n"), [])

    def test_perf_stat_recorded_sample(self):
        with open(os.path.join(SAMPLES, "perf-stat-6.1.txt")) as f:
            st = collect.parse_perf_stat(f.read())
        self.assertEqual(st, {"context-switches": 30192.0, "cpu-migrations": 2800.0,
                              "task-clock": 31454.78})

    def test_fs_mark_failures(self):
        v, _, err = collect.parse_output("fsmark-own", "fs_mark: bad option\n")
        self.assertEqual((v, err), (None, "no fs_mark table"))
        v, _, err = collect.parse_output(
            "fsmark-own", "FSUse%        Count         Size    Files/sec     App Overhead\n"
            "Error in unlink of /mnt/x : No space left on device\n")
        self.assertEqual((v, err), (None, "fs_mark printed no loop"))

    def test_lock_stats_table(self):
        path = os.path.join(tempfile.mkdtemp(), "twigfs-stats.txt")
        with open(path, "w") as f:
            f.write("== lock\nmutex\n== commit\n30\n== lock_stats\nstrategy mutex\n"
                    "class mode acquired contended max_wait_ns\n"
                    "root read 10 2 7\nleaf read 5 1 9\nroot write 3 0 1\n"
                    "== mutex_stats_like\nspins 4\n")
        s = collect.read_stats(path)
        shutil.rmtree(os.path.dirname(path))
        self.assertEqual(s["root_read_acquired"], 10)
        self.assertEqual(s["spins"], 4)
        c = data.collapse_stats(s)
        self.assertEqual((c["read_acquired"], c["read_max_wait_ns"], c["write_acquired"]),
                         (15, 9, 3))
        self.assertNotIn("commit", c)   # the commit= interval is a setting

    def test_mount_settings_are_not_counters(self):
        # every writable file of /sys/fs/twigfs/<dev>/ (fs/super.c) is a
        # setting: spin512's spin=512 is not a count of anything
        c = data.collapse_stats({"spin": 512.0, "fail_after": 0.0, "commit_hold": 0.0,
                                 "negative_dentries": 1.0, "lock": 0.0, "commit": 30.0,
                                 "root_read_acquired": 10.0})
        self.assertEqual(c, {"read_acquired": 10.0})

    def test_dbench_zero_is_no_measurement(self):
        v, _, err = collect.parse_output(
            "dbench", "Throughput 0 MB/sec  50 clients  50 procs  max_latency=929.029 ms\n")
        self.assertIsNone(v)
        self.assertIn("warm-up", err)

    def test_failure(self):
        self.assertIsNotNone(collect.parse_output("dbench", "Segmentation fault")[2])


class Render(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_usage_errors(self):
        """No folder, or a folder and --render at once: usage, status 2."""
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(report.main(["report.py"]), 2)
            self.assertEqual(report.main(["report.py", self.dir, "--render", "x.json"]), 2)
            self.assertEqual(report.main(["report.py", "--bogus"]), 2)
        self.assertIn("usage: report.py", err.getvalue())

    def render(self, data):
        path = os.path.join(self.dir, "results.json")
        with open(path, "w") as f:
            json.dump(data, f)
        self.assertEqual(report.main(["report.py", "--render", path, "--no-plots"]), 0)
        with open(os.path.join(self.dir, "report.md")) as f:
            return f.read()

    def test_bench_report(self):
        md = self.render(synthetic())
        self.assertIn("| spin512 | 3 | 100 |", md)
        self.assertIn("unavailable: kernel refused osq", md)
        self.assertIn("failed: exit 1", md)
        self.assertRegex(md, r"## Runs left out\n\n.*\n\n- boot 1, run \d+: \S+ btrfs rep \d: failed: exit 1")
        dbench = re.search(r"dbench: 2009 claim.*", md).group(0)
        self.assertRegex(dbench, r"spin512/mutex-nospin = 2\.0\d* .*\*\*reproduced\*\*")
        self.assertRegex(dbench, r"mutex-owner/mutex-nospin .*\*\*not reproduced\*\* \(no difference")
        creates = re.search(r"create-shared: 2009 claim.*", md).group(0)
        self.assertRegex(creates, r"spin512/mutex-nospin = 1\.1 .*\*\*not reproduced\*\*")
        # mutex-osq is unavailable here: mutex-nospin is the only control
        self.assertRegex(md, r"lookup: Shared read locks: rwsem/mutex-nospin = 3 .*rwsem is faster")
        # lock statistics, levels summed: write contended = 10*i + 5
        self.assertRegex(md, r"\| write_contended \| 25 \|")
        self.assertIn("Fieller", md)

    def test_two_generations(self):
        """KERNELS="6.1 6.12": a table and a verdict per generation, each
        against its own baseline, and the generations side by side."""
        data = synthetic()
        later = []
        for r in data["runs"]:
            r2 = dict(r, kernel="B", boot=2)
            if r2["value"] is not None:
                # 6.12: spin512 no faster than its baseline on dbench
                r2["value"] = (r2["value"] / 2 if (r["workload"], r["config"]) ==
                               ("dbench", "spin512") else r2["value"] * 1.5)
            later.append(r2)
        data["runs"] += later
        b2 = dict(data["boots"][0], boot=2, kernel="B", dir="boot-2-B",
                  guest=dict(data["boots"][0]["guest"], uname="6.12.118"))
        data["boots"].append(b2)
        data["host"].update({"kernel_A_generation": "6.1", "kernel_B_generation": "6.12"})
        md = self.render(data)
        self.assertIn("### Linux 6.1\n", md)
        self.assertIn("### Linux 6.12\n", md)
        self.assertIn("| kernel B: Linux 6.12 | 6.12.118;", md)
        self.assertRegex(md, r"dbench, Linux 6\.1: 2009 claim.*spin512/mutex-nospin = 2\.0\d* "
                         r".*\*\*reproduced\*\*")
        # 6.12: spin512 = 50, baseline 75: a ratio of 2/3 in its own boot
        self.assertRegex(md, r"dbench, Linux 6\.12: 2009 claim.*spin512/mutex-nospin = 0\.66")
        # side by side: mutex-nospin 50 on 6.1, 75 on 6.12 -> 1.5
        self.assertRegex(md, r"\| mutex-nospin \| 50 \[[^]]*\] \| 75 \[[^]]*\] \| 1\.5 \[")

    def test_bench_noise_floor_from_baseline_copy(self):
        data = synthetic()
        # the baseline's second copy, a little apart from the first
        for i, x in enumerate((51, 49, 53)):
            data["runs"].append(run("dbench", "mutex-nospin", float(x), side="B", rep=i + 1))
        md = self.render(data)
        floor = re.search(r"\*\*Noise floor of this run\.\*\* (.*)", md).group(1)
        a, b = [50, 52, 48], [51, 49, 53]
        d95, d80 = stats.detectable(a, b)
        self.assertIn("mutex-nospin' / mutex-nospin = 1.02 ", floor)
        self.assertIn("%s%% (95%% CI half-width), %s%% at 80%% power"
                      % (formatting.fmt(100 * d95, 2), formatting.fmt(100 * d80, 2)), floor)
        # the copy is not a configuration of its own in the main table
        table = md[md.index("## dbench"):md.index("**Verdict.**")]
        self.assertEqual(table.count("| mutex-nospin |"), 1)
        self.assertIn("| mutex-nospin | 3 | 50 |", table)
        # and no floor is claimed where there is no copy
        self.assertEqual(md.count("Noise floor of this run"), 1)

    def test_lookup_control_is_mutex_osq(self):
        runs = [{"workload": "lookup", "config": c, "side": "A", "status": "ok", "value": v}
                for c, vs in (("mutex-nospin", (10, 11, 9)), ("mutex-osq", (20, 21, 19)),
                              ("rwsem", (20, 19, 21))) for v in vs]
        text = sections.verdict({"runs": runs, "boots": []}, "lookup", "A")
        self.assertRegex(text, r"^Shared read locks: rwsem/mutex-osq = 1 .*not distinguishable "
                         r"from noise; against mutex-nospin, .*rwsem/mutex-nospin = 2 .*rwsem is faster")

    def test_where_the_time_goes(self):
        data = synthetic()
        for r in data["runs"]:
            if r["workload"] != "dbench" or r["status"] != "ok":
                continue
            if r["config"] not in defs.TWIG_CONFIGS:
                r["twigfs_stats"] = {}
                continue
            # 10 s, 50 clients: 500 client-seconds; root read wait 5 s = 1%
            r["seconds"] = 10.0
            fsyncs = 100.0 if r["config"] == "spin512" else 2000.0
            r["twigfs_stats"] = {"commits": 100.0, "fsyncs": fsyncs, "commit_ns": 2e9,
                                 "commit_blocked_ns": 0.5e9,
                                 "join_wait_ns": 60e9 if r["config"] == "rwsem" else 0.0,
                                 "root_read_wait_ns": 5e9, "leaf_write_wait_ns": 0.0,
                                 "log_syncs": fsyncs - 100.0, "log_fallbacks": 1.0,
                                 "handle_io_wait_ns": 0.0}
        md = self.render(data)
        self.assertIn("Where the time goes", md)
        # root 1%, commit 2 s of 10 s = 20% (0.5 s blocking: 5%), 20
        # fsyncs per commit
        self.assertRegex(md, r"\| mutex-nospin \| 3 \| 1% \[1, 1\] \| 0% \[0, 0\] \| "
                         r"0% \[0, 0\] \| 0% \[0, 0\] \| 20% \[20, 20\] \| 5% \[5, 5\] \| 20 \| "
                         r"1\.9k / 1 / 0 \|")
        verdict = re.search(r"\*\*Commit-bound\.\*\*.*", md).group(0)
        self.assertIn("spin512: 1 fsyncs per commit", verdict)
        self.assertIn("rwsem: join wait 12% of client time", verdict)
        self.assertNotIn("mutex-nospin", verdict)
        # reference filesystems have no commit_stats: no row
        self.assertNotRegex(md, r"\| ext4 \| 3 \| .*%")

    def test_csv_one_row_per_run(self):
        data = synthetic()
        self.render(data)
        with open(os.path.join(self.dir, "results.csv")) as f:
            rows = f.read().splitlines()
        self.assertEqual(len(rows), len(data["runs"]) + 1)
        for col in ("kernel_version", "patches", "config_hash", "vcpus", "mem_mib",
                    "accel", "host_load_start", "host_load_end", "twigfs_commit"):
            self.assertIn(col, rows[0])

    def test_no_baseline(self):
        data = synthetic()
        data["runs"] = [r for r in data["runs"] if r["config"] != "mutex-nospin"]
        md = self.render(data)
        self.assertIn("cannot be tested", md)

    def test_aa_report(self):
        md = self.render(synthetic_aa())
        self.assertRegex(md, r"ext4: B/A = 1 .*not distinguishable from noise; "
                             r"smallest detectable difference [\d.]+% ")

    def test_aa_floor_target_and_host_noise(self):
        data = synthetic_aa()
        # a dbench A/A with a floor above the 3% target; the calibration
        # loop varies 10%
        vals = {"A": [100, 104, 96, 100], "B": [103, 97, 100, 100]}
        for r, ms in zip(data["runs"], (900, 1100) * 4):
            r["calib_ms"] = ms
            r["value"] = float(vals[r["side"]][r["rep"] - 1])
        md = self.render(data)
        d95, _ = stats.detectable(vals["A"], vals["B"])
        self.assertGreater(100 * d95, 3)
        cv = 100 * stats.sd([900, 1100] * 4) / stats.mean([900, 1100] * 4)
        self.assertRegex(md, r"Target: ≤3%%, \*\*not met\*\*: the runs of "
                             r"this workload vary more than that allows at n=4; the host's "
                             r"own variation, a fixed CPU-bound loop before every run: CV %s%% "
                             r"over 8 runs\." % re.escape(formatting.fmt(cv, 2)))
        # a tight A/A meets it
        for r in data["runs"]:
            r["value"] = 100.0 + (0.1 if r["rep"] % 2 else -0.1)
        self.assertIn("Target: ≤3%, met;", self.render(data))

    def test_profile_section(self):
        with open(os.path.join(SAMPLES, "perf-lock-contention-6.1.txt")) as f:
            rows = collect.parse_perf_lock(f.read())
        data = synthetic()
        data["profiles"] = [{"boot": 1, "workload": "dbench", "config": "spin512",
                             "status": "ok", "value": 85.3, "perf_lock": rows,
                             "perf_lock_error": "",
                             "perf_stat": {"context-switches": 30192.0},
                             "twigfs_stats": {"root_read_contended": 19040.0,
                                              "root_read_wait_ns": 127.2e9,
                                              "root_read_max_wait_ns": 178.7e6,
                                              "leaf_read_contended": 0.0}}]
        md = self.render(data)
        sec = md[md.index("### Profile"):]
        sec = sec[:sec.index("\n## ")]
        self.assertIn("**spin512** (boot 1, ok, 85.3 MB/s): context switches 30.2k", sec)
        self.assertIn("| 1 | `twig_search_slot+0xe9` | mutex | 13660 | 86.4 s | 175 ms | 6.34 ms |",
                      sec)
        self.assertEqual(sec.count("| mutex |") + sec.count("| rwsem:R |"), 10)
        self.assertIn("| root | read | 19k | 127 s | 179 ms |", sec)
        self.assertNotIn("| leaf |", sec)
        # a profiled run never enters the throughput table
        self.assertIn("| spin512 | 3 | 100 |", md)

    def sweep_data(self):
        runs = []
        for c, per in (("mutex-nospin", 100.0), ("spin512", 120.0)):
            for n in (1, 2, 4):
                for rep in (1, 2):
                    # wait_ns: 10% of 10 s for each of n clients
                    stats = {"leaf_write_wait_ns": 0.1 * 10 * 1e9 * n,
                             "leaf_write_max_wait_ns": 5e9, "commit": 30.0}
                    runs.append(run("dbench", c, per * n + rep, rep=rep, twigfs_stats=stats,
                                    seconds=10.0, clients=n))
                    runs[-1]["workload"] = "dbench@%d" % n
        return {"host": {"mode": "bench", "sweep": "clients"}, "mode": "bench",
                "boots": [], "runs": runs}

    def test_sweep_table(self):
        md = self.render(self.sweep_data())
        sec = md[md.index("## Scaling: clients / jobs"):]
        self.assertIn("| configuration | n=1 | n=2 | n=4 |", sec)
        # spin512 at n=4: mean of 481 and 482, wait share 10%
        self.assertRegex(sec, r"\| spin512 \| .* \| 482 \[[^]]+\]; wait 10% \|")
        self.assertEqual(defs.wl_base("dbench@4"), "dbench")
        self.assertEqual(defs.wl_clients("dbench@4"), 4)
        self.assertIsNone(defs.wl_clients("dbench"))

    def test_sweep_plot(self):
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot")
        path = os.path.join(self.dir, "results.json")
        with open(path, "w") as f:
            json.dump(self.sweep_data(), f)
        report.main(["report.py", "--render", path])
        self.assertTrue(os.path.getsize(os.path.join(self.dir, "sweep-dbench.png")) > 1000)

    def test_plots(self):
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot")
        data = synthetic()
        path = os.path.join(self.dir, "results.json")
        with open(path, "w") as f:
            json.dump(data, f)
        report.main(["report.py", "--render", path])
        for w in ("dbench", "create-shared", "lookup"):
            self.assertTrue(os.path.getsize(os.path.join(self.dir, w + ".png")) > 1000)


if __name__ == "__main__":
    sys.exit(passfail.main(sys.modules[__name__], "report"))
