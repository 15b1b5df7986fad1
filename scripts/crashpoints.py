#!/usr/bin/python3
"""The workload plan and the oracle of scripts/test-crashpoints.sh: which
changes the guest's writers make, which crash states the host rebuilds
and mounts, and what each of them must show.

    crashpoints.py plan SEED WRITER ROUND OPS
        writer WRITER's changes in ROUND (0, or 1: the abort round), one a
        line "OP PATH A B"; the guest runs them in order
    crashpoints.py states WORK MARK_BASE TORN SEED SAMPLE
        reads WORK/entries (twigfs-logwrites list); writes WORK/markers
        ("SECTOR ENTRY"), WORK/flushes, WORK/states ("F NEXT TORN") and
        WORK/sample (the states mounted in guests); prints
        "NR DUPLICATE_MARKERS"
    crashpoints.py abort WORK SECTOR
        the log entry that wrote the abort marker SECTOR, the states past
        it and those spanning it: "ENTRY PAST SPANNING", nothing if none
    crashpoints.py expect WORK NEXT
        what a state whose next flush is entry NEXT must show: per path
        its last S or G record made durable before NEXT (WORK/records)

A record's marker is logged after every write and flush the guest saw
complete before the record, so a record whose marker entry comes before
NEXT was made durable by that state's flush or earlier.  A path whose
last such record is B (a change begun) is changing and is not checked.
"""
import random
import sys

SHARED = "crash/shared"


def plan(seed, writer, rnd, ops):
    """Writer @writer's changes in round @rnd: (op, path, a, b) tuples.
    Each writer works in its own directory and, 30% of the time, in the
    shared one; op is w (write B bytes at A), a (append B), t (truncate to
    A), n (a new file of B bytes), r (rename PATH to A), u (unlink), x (an
    unsynced write), l (a file of B bytes and its hard link A), k (drop the
    link A of PATH), F (fallocate or punch B bytes at A), s (an xattr of A
    bytes), d (an O_DIRECT write of B bytes at A)."""
    rng = random.Random(seed * 1000 + writer + rnd * 100)
    rand = rng.random
    own = "crash/w%d" % writer
    links = []
    out = []
    for i in range(ops):
        d = SHARED if rand() < 0.3 else own
        o = own if d == SHARED else SHARED
        f = "%s/f%d-%d" % (d, writer, int(rand() * 8))
        x = rand()
        off = int(rand() * 48) * 4096 + (int(rand() * 4096) if rand() < 0.5 else 0)
        size = int(rand() * 32768) + 1
        if x < 0.22:
            out.append(("w", f, off, size))
        elif x < 0.28:
            out.append(("a", f, 0, int(rand() * 3000) + 1))
        elif x < 0.38:
            out.append(("t", f, int(rand() * 200000), 0))
        elif x < 0.44:
            out.append(("n", "%s/n%d-%d" % (d, writer, i), 0, size))
        elif x < 0.52:
            out.append(("r", f, "%s/f%d-%d" % (o, writer, int(rand() * 8)), 0))
        elif x < 0.57:
            out.append(("u", f, 0, 0))
        elif x < 0.62:
            out.append(("x", f, off, size))
        elif x < 0.67:
            link = ("%s/L%d-%d" % (d, writer, i), "%s/L%d-%d.h" % (o, writer, i))
            out.append(("l", link[0], link[1], size))
            links.append(link)
        elif x < 0.71 and links:
            link = links[int(rand() * len(links))]
            out.append(("k", link[0], link[1], 0))
        elif x < 0.79:
            out.append(("F", f, int(rand() * 48) * 4096, (int(rand() * 8) + 1) * 4096))
        elif x < 0.86:
            out.append(("s", f, int(rand() * 300) + 1, 0))
        else:
            out.append(("d", f, int(rand() * 48) * 4096, (int(rand() * 8) + 1) * 4096))
    return out


def parse_entries(lines):
    """twigfs-logwrites list output: ([(entry, kind, sector, count)], the
    number of entries from its last "#" line, 0 without one)."""
    entries = []
    nr = 0
    for line in lines:
        w = line.split()
        if not w:
            continue
        if w[0] == "#":
            nr = int(w[4]) if len(w) > 4 else 0
            continue
        nr = 0
        sector = int(w[2]) if len(w) > 2 else 0
        count = int(w[3]) if len(w) > 3 else 0
        entries.append((int(w[0]), w[1], sector, count))
    return entries, nr


def markers(entries, base):
    """[(sector, entry)] of the writes at or past @base, the marker
    sectors, in log order."""
    return [(sector + i, e) for e, kind, sector, count in entries
            if kind == "write" and sector >= base for i in range(count)]


def duplicates(marks):
    """The marker sectors written more than once: each would make its
    record's place in the log ambiguous."""
    seen = set()
    dup = set()
    for sector, _ in marks:
        (dup if sector in seen else seen).add(sector)
    return sorted(dup)


def flushes(entries):
    return [e for e, kind, _, _ in entries if "flush" in kind]


def states(flush_entries, nr, torn):
    """The crash states, (F, NEXT, TORN): the image after flush entry F
    (the initial image counts as flushed at entry 0) and, with @torn and
    writes between F and its next flush NEXT (nr + 1 after the last), a
    torn state after it."""
    f = [0] + list(flush_entries)
    out = []
    for i, at in enumerate(f):
        nx = f[i + 1] if i + 1 < len(f) else nr + 1
        out.append((at, nx, 0))
        if torn and nx - at > 1:
            out.append((at, nx, 1))
    return out


def sample(all_states, seed, k):
    """A seeded sample of @k of @all_states in their order (selection
    sampling); all of them when @k is 0 or not below their number."""
    n = len(all_states)
    if k == 0 or k >= n:
        return list(all_states)
    rng = random.Random(seed)
    out = []
    for i, s in enumerate(all_states):
        if rng.random() < (k - len(out)) / (n - i):
            out.append(s)
    return out


def abort(marks, all_states, sector):
    """(entry, past, spanning) for the abort marker @sector: the log entry
    that wrote it, the states after it and those whose stretch holds it;
    None when the log has no such marker."""
    at = [e for s, e in marks if s == sector]
    if not at:
        return None
    ab = at[-1]
    past = sum(1 for f, _, _ in all_states if f > ab)
    spanning = sum(1 for f, nx, _ in all_states if f <= ab < nx)
    return ab, past, spanning


def parse_records(lines):
    """twig-crashcheck records "KIND SECTOR SIG PATH": [(kind, sector,
    sig, path)] in the order written."""
    out = []
    for line in lines:
        w = line.split()
        if len(w) >= 4:
            out.append((w[0], int(w[1]), w[2], w[3]))
    return out


def expect(marks, records, nx):
    """The expect lines of a state whose next flush is entry @nx: per path
    the last record whose marker was logged before @nx, unless it is a B,
    sorted by path."""
    entry = {}
    for sector, e in marks:
        entry[sector] = e
    last = {}
    for kind, sector, sig, path in records:
        if sector in entry and entry[sector] < nx:
            last[path] = (kind, sector, sig)
    return ["%s %d %s %s" % (k, s, sig, p)
            for p, (k, s, sig) in sorted(last.items()) if k != "B"]


def read_marks(work):
    with open(work + "/markers") as fh:
        return [tuple(int(v) for v in line.split()) for line in fh]


def read_states(path):
    with open(path) as fh:
        return [tuple(int(v) for v in line.split()) for line in fh]


def write_lines(path, rows):
    with open(path, "w") as fh:
        for r in rows:
            fh.write(" ".join(str(v) for v in r) + "\n")


def main(argv):
    if len(argv) == 5 and argv[0] == "plan":
        for op in plan(*(int(v) for v in argv[1:])):
            print(*op)
        return 0
    if len(argv) == 6 and argv[0] == "states":
        work = argv[1]
        base, torn, seed, k = (int(v) for v in argv[2:])
        with open(work + "/entries") as fh:
            entries, nr = parse_entries(fh)
        marks = markers(entries, base)
        fl = flushes(entries)
        st = states(fl, nr, torn)
        write_lines(work + "/markers", marks)
        write_lines(work + "/flushes", [(f,) for f in fl])
        write_lines(work + "/states", st)
        write_lines(work + "/sample", sample(st, seed, k))
        print(nr, len(duplicates(marks)))
        return 0
    if len(argv) == 3 and argv[0] == "abort":
        r = abort(read_marks(argv[1]), read_states(argv[1] + "/states"), int(argv[2]))
        if r:
            print(*r)
        return 0
    if len(argv) == 3 and argv[0] == "expect":
        with open(argv[1] + "/records") as fh:
            records = parse_records(fh)
        for line in expect(read_marks(argv[1]), records, int(argv[2])):
            print(line)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
