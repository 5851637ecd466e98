#!/usr/bin/env python3
"""Break PASCAL's blocking latency (</think> -> first scheduled again) down.

Reads one run folder written by `servelab-cli run SCENARIO --out DIR`
(requests.csv, decisions.csv, timeseries.csv) and, optionally, the
kv_transfers.csv of `servelab-cli reproduce pascal-kv-transfer` for the
same setting (copy time per request). Prints, for the requests with the
largest blocking latency and for all of them:

  - what the boundary decision did (migrate / stayed: adaptive / same / ...),
  - for migrated requests: copy time, waiting for room at the destination
    (migrating_s - copy), and waiting after arrival (blocking_s - migrating_s),
  - for requests that stayed: the whole blocking is time not scheduled on
    their own instance (preempted or not re-admitted),
  - where boundary migrations went (share per destination instance) and the
    destination's KV use at the probe before the decision.

Used for docs/fidelity.md, "PASCAL Fig. 13". Standard library only.
"""
import csv
import sys
from collections import Counter, defaultdict


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def main(run_dir, transfers_csv=None, rate=None):
    reqs = {int(r["id"]): r for r in csv.DictReader(open(f"{run_dir}/requests.csv"))}
    boundary = {}
    for d in csv.DictReader(open(f"{run_dir}/decisions.csv")):
        if d["kind"] == "boundary":
            boundary[int(d["request_id"])] = d
    copy = {}
    if transfers_csv:
        for t in csv.DictReader(open(transfers_csv)):
            if t["dataset"] == "alpaca-reasoning" and (rate is None or float(t["rate_rps"]) == rate):
                copy[int(t["request_id"])] = float(t["latency_s"])
    # GPU / CPU KV blocks per instance at each probe (timeseries.csv: iN_gpu_blocks, iN_cpu_blocks)
    kv = defaultdict(list)
    for row in csv.DictReader(open(f"{run_dir}/timeseries.csv")):
        i = 0
        while f"i{i}_gpu_blocks" in row:
            kv[i].append((float(row["time_s"]), int(row[f"i{i}_gpu_blocks"]), int(row[f"i{i}_cpu_blocks"])))
            i += 1

    def kv_at(inst, t):
        best = None
        for (tt, g, c) in kv.get(inst, []):
            if tt <= t:
                best = (g, c)
            else:
                break
        return best

    rows = []
    for rid, r in reqs.items():
        if r["finished"] != "1" or float(r["reasoning_tokens"]) <= 0:
            continue
        d = boundary.get(rid)
        action = d["action"] if d else "-"
        blocking = float(r["blocking_s"])
        migrating = float(r["migrating_s"])
        c = copy.get(rid, 0.0) if action == "migrate" else 0.0
        rows.append({
            "id": rid, "action": action, "blocking": blocking, "migrating": migrating,
            "copy": c, "wait_room": max(0.0, migrating - c) if action == "migrate" else 0.0,
            "after": blocking - migrating if action == "migrate" else blocking,
            "dst": int(d["chosen"]) if d else -1, "t": float(r["reasoning_end_s"]),
        })
    n = len(rows)
    p99 = pct([x["blocking"] for x in rows], 0.99)
    tail = [x for x in rows if x["blocking"] >= p99]
    print(f"{run_dir}: {n} reasoning requests, blocking p50 {pct([x['blocking'] for x in rows], .5):.3f} s,"
          f" p99 {p99:.3f} s, max {max(x['blocking'] for x in rows):.3f} s")
    print("boundary actions:", dict(Counter(x["action"] for x in rows)))
    for name, group in (("all", rows), (f"tail (blocking >= p99, {len(tail)} requests)", tail)):
        print(f"-- {name}")
        for act in sorted(set(x["action"] for x in group)):
            g = [x for x in group if x["action"] == act]
            s = sum(x["blocking"] for x in g)
            line = f"   {act:>22}: {len(g):4d} requests, blocking sum {s:9.2f} s, mean {s / len(g):.3f} s"
            if act == "migrate":
                line += (f"; copy {sum(x['copy'] for x in g):.2f} s, wait for room at dst "
                         f"{sum(x['wait_room'] for x in g):.2f} s, after arrival {sum(x['after'] for x in g):.2f} s")
            print(line)
    mig = [x for x in rows if x["action"] == "migrate"]
    if mig:
        dst = Counter(x["dst"] for x in mig)
        print("boundary migrations by destination:",
              ", ".join(f"{i}: {c} ({100 * c / len(mig):.0f} %)" for i, c in sorted(dst.items())))
        if kv:
            cap = max(g for series in kv.values() for (_, g, _) in series)
            use = [kv_at(x["dst"], x["t"]) for x in mig]
            use = [u for u in use if u is not None]
            if use:
                print(f"destination at the probe before the decision (GPU blocks as a share of the largest seen,"
                      f" {cap}): p50 {pct([g / cap for g, _ in use], .5):.2f}, p90 {pct([g / cap for g, _ in use], .9):.2f};"
                      f" destinations holding swapped (CPU) blocks: {sum(1 for _, c in use if c > 0)} of {len(use)}")

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: pascal_blocking.py RUN_DIR [KV_TRANSFERS_CSV RATE]")
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None,
         float(sys.argv[3]) if len(sys.argv) > 3 else None)
