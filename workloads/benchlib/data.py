"""Queries over collected results (results.json as a dict): the values of
one configuration, the configurations and workloads present, the
baseline, counters summed over tree levels, where a run's time went,
sweep points and kernel generations."""
import re

from .collect import num
from .defs import BASELINE, CONFIG_ORDER, FALLBACK_BASELINE, wl_base
from .stats import mean, mean_ci


# A lock_stats table cell as read_stats names it: "<level>_<mode>_<column>".
LEVEL_KEY = re.compile(r"^(root|internal|leaf)_(read|write)_[a-z_]+$")


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


# /sys/fs/twigfs/<dev>/ files that hold mount settings, not counters: every
# writable one of fs/super.c and lock=.
MOUNT_SETTINGS = {"commit", "commit_hold", "fail_after", "lock", "negative_dentries", "spin"}


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
