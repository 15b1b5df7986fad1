"""The bench's configurations and workloads, as every part of the report
sees them: workloads/configs.txt (one table for the bench, the guest and
the report), the baseline, and each workload's title, unit and 2009 claim
(the built-in ones below, and each workload of workloads/wl/: its guest
driver <name>.sh and this side of it, <name>.txt).
"""
import os

WL_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wl")

BASELINE = "mutex-nospin"
FALLBACK_BASELINE = "mutex-osq"


def read_config_table(path=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "configs.txt")):
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
}
# The raw output's parser of each workload (benchlib/collect.py), where it
# is not the workload's own name.
PARSERS = {}


def read_description(path):
    """A workload's description, wl/<name>.txt: {key: value} of its "key
    value" lines (title, unit, parser, doc, switchback; # starts a
    comment).  bench.sh reads its switchback (yes or no) itself."""
    kv = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.strip().partition(" ")
            if k and not k.startswith("#"):
                kv[k] = v.strip()
    return kv


def described_workloads(wl_dir=WL_DIR):
    """{name: description} of the workloads of @wl_dir, in name order."""
    out = {}
    for name in sorted(os.listdir(wl_dir)) if os.path.isdir(wl_dir) else []:
        if name.endswith(".txt"):
            out[name[:-4]] = read_description(os.path.join(wl_dir, name))
    return out


DESCRIBED = described_workloads()
for _name, _d in DESCRIBED.items():
    # 2009 claims belong to the built-in workloads only
    WORKLOADS[_name] = (_d["title"], _d["unit"], None, None)
    PARSERS[_name] = _d.get("parser", _name)
# Parsed and reported as dbench (throughput, max latency, commit-bound check).
DBENCH_WORKLOADS = tuple(["dbench"] + [w for w, p in PARSERS.items() if p == "dbench"])


def wl_base(workload):
    """A sweep's "dbench@8" is dbench with 8 clients."""
    return workload.split("@")[0]


def wl_clients(workload):
    """N of "workload@N", None without one."""
    _, _, n = workload.partition("@")
    return int(n) if n.isdigit() else None


# The part of each switchback window dropped after a switch, in ms: the
# step table (switchback.md, "After a switch") showed lookup's gain
# building over its first 200 ms; dbench's and create-own's effects are
# below a step's noise, and their windows keep more at 100.
SETTLE_MS = {"lookup": 200}
DEFAULT_SETTLE_MS = 100


def settle_for(workload):
    return SETTLE_MS.get(wl_base(workload), DEFAULT_SETTLE_MS)
