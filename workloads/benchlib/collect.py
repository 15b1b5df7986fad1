"""Collecting a results folder: each boot's plan, availability and host
load, each run's meta.txt, raw workload output and counters, parsed into
the dict that report.py writes as results.json."""
import json
import os
import re
import subprocess

from .defs import DBENCH_WORKLOADS, PARSERS, WORKLOADS, wl_base, wl_clients


def read_kv(path):
    """{key: value} of a file of "key value" lines; {} when it cannot be
    read."""
    kv = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition(" ")
                if k:
                    kv[k] = v.strip()
    except OSError:
        pass
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


CREATE_RATE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "create-rate.awk")


def create_rate(fmt, text):
    """(value, extra dict, error or None) of fio's JSON or fs_mark's table
    (@fmt "fio" or "fs_mark"), by create-rate.awk: the guest sizes its
    create runs with the same program."""
    out = subprocess.run(["awk", "-v", "fmt=" + fmt, "-f", CREATE_RATE], input=text,
                         capture_output=True, text=True, check=True).stdout
    status, _, rest = out.strip().partition(" ")
    if status != "ok":
        return None, {}, rest
    value, _, extra = rest.partition(" ")
    return float(value), json.loads(extra), None


def parse_output(workload, text):
    """(value, extra dict, error or None) from a workload's raw output, by
    its parser (a workload of wl/ names one in its description)."""
    workload = PARSERS.get(workload, workload)
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
    if workload == "create-own":
        # twig-create; results from before it ran fio (below)
        m = re.search(r"creates (\d+) unlinks (\d+) seconds ([\d.]+) files_per_sec ([\d.]+)",
                      text)
        if m:
            if float(m.group(3)) <= 0:
                return None, {}, "zero runtime"
            return float(m.group(4)), {"files": int(m.group(1)), "unlinks": int(m.group(2)),
                                       "create_seconds": float(m.group(3))}, None
        if "{" not in text:
            return None, {}, "no twig-create summary"
    if workload in ("create-own", "create-shared"):
        return create_rate("fio", text)
    if workload in ("fsmark-own", "fsmark-shared"):
        return create_rate("fs_mark", text)
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
