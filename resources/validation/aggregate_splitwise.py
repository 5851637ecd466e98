#!/usr/bin/env python3
"""Aggregate the Splitwise artifact's measured batch runs into
splitwise_h100_llama2_70b.csv (see README.md in this folder).

Usage: aggregate_splitwise.py PERF_MODEL_CSV > splitwise_h100_llama2_70b.csv
where PERF_MODEL_CSV is data/perf_model.csv of github.com/Mutinifni/splitwise-sim
at the commit named in README.md, e.g.
  git -C splitwise-sim show 8f99e7dc9b407f4ce2488d03dd44c0b8b946dab0:data/perf_model.csv > perf_model.csv

Keeps model llama2-70b on hardware h100-80gb (the uncapped DGX-H100), drops
exact duplicate lines (the point prompt 512 / batch 1 / 128 tokens appears
in each of the artifact's three sweeps with the same five lines), and writes
one line per (tensor_parallel, prompt_size, batch_size, token_size): the
number of repeats and the mean, sample standard deviation, minimum and
maximum of prompt_time, token_time and e2e_time (milliseconds, as measured).
Standard library only; output is sorted and formatted deterministically.
"""
import csv
import statistics
import sys


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    seen = set()
    points = {}
    for r in rows:
        if r["model"] != "llama2-70b" or r["hardware"] != "h100-80gb":
            continue
        key_line = tuple(r[k] for k in sorted(r))
        if key_line in seen:
            continue
        seen.add(key_line)
        key = (int(r["tensor_parallel"]), int(r["prompt_size"]), int(r["batch_size"]), int(r["token_size"]))
        points.setdefault(key, []).append(r)
    out = csv.writer(sys.stdout, lineterminator="\n")
    cols = ["tensor_parallel", "prompt_size", "batch_size", "token_size", "repeats"]
    for m in ("prompt_time", "token_time", "e2e_time"):
        cols += [m + "_ms_mean", m + "_ms_sd", m + "_ms_min", m + "_ms_max"]
    out.writerow(cols)
    for key in sorted(points):
        rs = points[key]
        line = list(key) + [len(rs)]
        for m in ("prompt_time", "token_time", "e2e_time"):
            v = [float(r[m]) for r in rs]
            sd = statistics.stdev(v) if len(v) > 1 else 0.0
            line += ["%.3f" % statistics.fmean(v), "%.3f" % sd, "%.3f" % min(v), "%.3f" % max(v)]
        out.writerow(line)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
