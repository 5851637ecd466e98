#!/usr/bin/env python3
"""Derive resources/collectives/nccl-allreduce-h100-dgx.json from the public
per-size NCCL all-reduce measurements of microsoft/vidur (MIT licence,
Copyright (c) Microsoft Corporation): data/profiling/network/h100_dgx/all_reduce.csv.

Usage: python3 docs/analysis/collectives_bins.py PATH/TO/all_reduce.csv COMMIT > OUT.json

The CSV holds one row per (num_workers, size) with the median kernel time of
an NCCL all-reduce (torch.distributed, fp16 buffer; `size` is in bytes, times
in ms, measured with the PyTorch profiler's kernel timer). We keep derived
numbers only: per tensor-parallel degree, the points are grouped into
half-octave bins of message size and each bin keeps the median size, the
median time and the number of points.
"""
import csv, json, math, statistics, sys, collections

path, commit = sys.argv[1], sys.argv[2]
by = collections.defaultdict(list)
for r in csv.DictReader(open(path)):
    if r["collective"] != "all_reduce" or r["devices_per_node"] != r["num_workers"]:
        continue
    by[int(r["num_workers"])].append((int(r["size"]), float(r["time_stats.all_reduce.median"]) * 1e3))

points = {}
for tp in sorted(by):
    v = sorted(by[tp])
    bins = collections.defaultdict(list)
    for size, us in v:
        bins[math.floor(2 * math.log2(size))].append((size, us))
    rows = []
    for k in sorted(bins):
        pts = bins[k]
        rows.append([int(statistics.median(s for s, _ in pts)), round(statistics.median(t for _, t in pts), 3), len(pts)])
    points[str(tp)] = rows

out = {
    "id": "nccl-allreduce-h100-dgx",
    "kind": "nccl",
    "name": "NCCL all-reduce on one 8x H100 SXM DGX node (NVLink 4 + NVSwitch)",
    "reference_link_gbps": 450,
    "regime_edges_bytes": [1048576, 16777216],
    "source": "microsoft/vidur (MIT licence, Copyright (c) Microsoft Corporation), "
              "data/profiling/network/h100_dgx/all_reduce.csv at commit " + commit +
              "; NCCL all-reduce via torch.distributed on fp16 buffers, median kernel time per size "
              "(vidur/profiling/collectives). Derived here: half-octave size bins, median size and median time "
              "of the points in each bin (docs/analysis/collectives_bins.py).",
    "columns": ["bytes", "median_us", "points"],
    "points": points,
}
json.dump(out, sys.stdout, indent=1)
print()
