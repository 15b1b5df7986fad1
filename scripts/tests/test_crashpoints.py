#!/usr/bin/python3
"""Host-side tests of scripts/crashpoints.py, the plan and oracle of
`make crashpoints`.

    /usr/bin/python3 scripts/tests/test_crashpoints.py

Prints a PASS or FAIL line per test and "N passed, M failed" last; exits 1
on any failure.
"""
import os
import subprocess
import sys
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "..", "workloads", "tests"))
import crashpoints as cp  # noqa: E402
import passfail  # noqa: E402

SAMPLE = os.path.join(here, "samples", "crashpoints")
CLI = os.path.join(here, "..", "crashpoints.py")

# a small log (twigfs-logwrites list): writes of the filesystem below sector 1000, marker writes
# at 1000 and past, three flushes; the "#" line gives the entry count
ENTRIES = """\
1 write 16 8
2 write 1000 1
3 flush 0 0
4 write 1001 2
5 write 40 8
6 flush,fua 0 0
7 write 1003 1
8 write 1004 1
9 flush 0 0
10 write 1005 1
# sectorsize 512 entries 10 flushes 3 writes 7 bytes 9216
""".splitlines()


class Plan(unittest.TestCase):
    def test_plan_is_seeded(self):
        self.assertEqual(cp.plan(1, 0, 0, 200), cp.plan(1, 0, 0, 200))
        self.assertNotEqual(cp.plan(1, 0, 0, 200), cp.plan(2, 0, 0, 200))
        self.assertNotEqual(cp.plan(1, 0, 0, 200), cp.plan(1, 1, 0, 200))
        self.assertNotEqual(cp.plan(1, 0, 0, 200), cp.plan(1, 0, 1, 200))

    def test_plan_has_ops_changes_of_every_kind(self):
        p = cp.plan(1, 2, 0, 2000)
        self.assertEqual(len(p), 2000)
        self.assertEqual({op for op, _, _, _ in p}, set("watnruxlkFsd"))

    def test_writer_stays_in_its_directory_and_the_shared_one(self):
        for op, f, a, _ in cp.plan(3, 1, 0, 2000):
            paths = [f, a] if op in "rlk" else [f]
            for path in paths:
                self.assertRegex(path, r"^crash/(w1|shared)/[fnL]1-\d+(\.h)?$")
            if op in "rl":
                # renames and links cross to the other directory
                self.assertNotEqual(os.path.dirname(f), os.path.dirname(a))

    def test_a_link_is_dropped_only_after_it_was_made(self):
        made = set()
        for op, f, a, _ in cp.plan(5, 0, 0, 2000):
            if op == "l":
                made.add((f, a))
            if op == "k":
                self.assertIn((f, a), made)

    def test_offsets_and_sizes_in_range(self):
        for op, _, a, b in cp.plan(7, 0, 1, 2000):
            if op in "wxd":
                self.assertLess(a, 48 * 4096 + 4096)
                self.assertTrue(1 <= b <= 32768)
            if op in "Fd":
                self.assertEqual(a % 4096, 0)
                self.assertEqual(b % 4096, 0)
            if op == "t":
                self.assertLess(a, 200000)


class States(unittest.TestCase):
    def test_entries(self):
        entries, nr = cp.parse_entries(ENTRIES)
        self.assertEqual(nr, 10)
        self.assertEqual(len(entries), 10)
        self.assertEqual(cp.flushes(entries), [3, 6, 9])
        self.assertEqual(cp.markers(entries, 1000),
                         [(1000, 2), (1001, 4), (1002, 4), (1003, 7), (1004, 8), (1005, 10)])
        self.assertEqual(cp.parse_entries(ENTRIES[:-1])[1], 0)

    def test_states_torn_only_where_writes_follow(self):
        self.assertEqual(cp.states([3, 4, 9], 10, 1),
                         [(0, 3, 0), (0, 3, 1), (3, 4, 0), (4, 9, 0), (4, 9, 1),
                          (9, 11, 0), (9, 11, 1)])
        self.assertEqual(cp.states([3, 4, 9], 10, 0),
                         [(0, 3, 0), (3, 4, 0), (4, 9, 0), (9, 11, 0)])
        self.assertEqual(cp.states([], 5, 1), [(0, 6, 0), (0, 6, 1)])

    def test_sample_is_seeded_ordered_and_of_k(self):
        st = cp.states(range(2, 400, 2), 400, 1)
        s = cp.sample(st, 1, 30)
        self.assertEqual(len(s), 30)
        self.assertEqual(s, sorted(s, key=st.index))
        self.assertEqual(s, cp.sample(st, 1, 30))
        self.assertNotEqual(s, cp.sample(st, 2, 30))
        self.assertEqual(cp.sample(st, 1, 0), st)
        self.assertEqual(cp.sample(st, 1, len(st)), st)

    def test_duplicate_markers(self):
        self.assertEqual(cp.duplicates([(1000, 2), (1001, 4), (1000, 7)]), [1000])
        self.assertEqual(cp.duplicates([(1000, 2), (1001, 4)]), [])

    def test_abort(self):
        entries, nr = cp.parse_entries(ENTRIES)
        marks = cp.markers(entries, 1000)
        st = cp.states(cp.flushes(entries), nr, 1)
        # marker 1003 at entry 7: the state after flush 6 and its torn
        # state span it, the states after flush 9 are past it
        self.assertEqual(cp.abort(marks, st, 1003), (7, 2, 2))
        self.assertIsNone(cp.abort(marks, st, 1999))


class Expect(unittest.TestCase):
    marks = [(1000, 2), (1001, 4), (1002, 4), (1003, 7), (1004, 8)]

    def test_last_durable_record_per_path(self):
        rec = cp.parse_records([
            "B 1000 - crash/w0/f0-1",
            "S 1001 10:1:ab:- crash/w0/f0-1",   # durable from entry 5 on
            "S 1002 0:1:00:- crash/shared/f0-2",
            "B 1003 - crash/w0/f0-1",           # changing again from 8
            "G 1004 - crash/shared/f0-2",       # removed, from 9
        ])
        self.assertEqual(cp.expect(self.marks, rec, 3), [])
        self.assertEqual(cp.expect(self.marks, rec, 5),
                         ["S 1002 0:1:00:- crash/shared/f0-2",
                          "S 1001 10:1:ab:- crash/w0/f0-1"])
        # f0-1 begun again: not checked; f0-2 still the S of entry 4
        self.assertEqual(cp.expect(self.marks, rec, 8),
                         ["S 1002 0:1:00:- crash/shared/f0-2"])
        self.assertEqual(cp.expect(self.marks, rec, 9),
                         ["G 1004 - crash/shared/f0-2"])

    def test_a_record_without_a_logged_marker_is_not_a_promise(self):
        rec = cp.parse_records(["S 1500 1:1:1:- crash/w0/f0-0",
                                "Z 1001 5000 crash/cases/tail"])
        self.assertEqual(cp.expect(self.marks, rec, 100),
                         ["Z 1001 5000 crash/cases/tail"])


class RecordedRun(unittest.TestCase):
    """samples/crashpoints: the log and records of a real run (SEED=1
    WRITERS=2 OPS=8, with its abort), and the markers, states and expect
    lines the oracle wrote when it was awk inside test-crashpoints.sh."""

    def load(self, name):
        with open(os.path.join(SAMPLE, name)) as fh:
            return fh.read().splitlines()

    def test_markers_and_states_as_before(self):
        entries, nr = cp.parse_entries(self.load("entries"))
        self.assertEqual(nr, 1710)
        marks = cp.markers(entries, 128 * 2048)
        self.assertEqual(["%d %d" % m for m in marks], self.load("markers"))
        self.assertEqual(["%d %d %d" % s for s in cp.states(cp.flushes(entries), nr, 1)],
                         self.load("states"))
        self.assertEqual(cp.duplicates(marks), [])
        st = cp.states(cp.flushes(entries), nr, 1)
        self.assertEqual(cp.abort(marks, st, 128 * 2048 + 2 * 65536 + 65000), (1709, 1, 2))

    def test_expect_as_before(self):
        entries, _ = cp.parse_entries(self.load("entries"))
        marks = cp.markers(entries, 128 * 2048)
        records = cp.parse_records(self.load("records"))
        want = {}
        for line in self.load("expect"):
            if line.startswith("== "):
                nx = int(line[3:])
                want[nx] = []
            else:
                want[nx].append(line)
        self.assertEqual(len(want), 8)
        for nx, lines in want.items():
            self.assertEqual(cp.expect(marks, records, nx), lines, "next flush %d" % nx)


def run(*args):
    return subprocess.run([sys.executable, CLI] + list(args), check=True,
                          capture_output=True, text=True).stdout


class Cli(unittest.TestCase):
    def test_states_abort_expect_through_files(self):
        with tempfile.TemporaryDirectory() as work:
            with open(work + "/entries", "w") as fh:
                fh.write("\n".join(ENTRIES) + "\n")
            with open(work + "/records", "w") as fh:
                fh.write("S 1001 1:1:1:- crash/w0/a\nB 1005 - crash/w0/a\n")
            self.assertEqual(run("states", work, "1000", "1", "1", "0"), "10 0\n")
            with open(work + "/states") as fh:
                self.assertEqual(len(fh.readlines()), 8)
            with open(work + "/sample") as fh, open(work + "/states") as fs:
                self.assertEqual(fh.read(), fs.read())
            self.assertEqual(run("abort", work, "1003"), "7 2 2\n")
            self.assertEqual(run("abort", work, "1999"), "")
            self.assertEqual(run("expect", work, "6"), "S 1001 1:1:1:- crash/w0/a\n")
            self.assertEqual(run("expect", work, "11"), "")
            self.assertEqual(run("plan", "1", "0", "0", "3").count("\n"), 3)

    def test_usage(self):
        r = subprocess.run([sys.executable, CLI, "nope"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    sys.exit(passfail.main(sys.modules[__name__], "crashpoints-oracle"))
