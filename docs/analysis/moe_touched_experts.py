#!/usr/bin/env python3
"""Does an MoE layer's time follow the experts it touches? (docs/cost-model.md
"Mixture-of-experts models"). Fits t = a + b * activated_experts on the
measured MoE blocks of resources/profiles/rtxpro6000-qwen3-30b-moe.csv at
<= 64 tokens (where the weight read dominates) and prints the fit, its
errors and the bandwidth one expert's bf16 weights imply.

Usage: python3 docs/analysis/moe_touched_experts.py [CSV]
"""
import csv
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "resources/profiles/rtxpro6000-qwen3-30b-moe.csv"
with open(path) as f:
    rows = [(int(r["tokens"]), int(r["activated_experts"]), float(r["time_us"]))
            for r in csv.DictReader(line for line in f if not line.startswith("#"))]
small = [r for r in rows if r[0] <= 64]
n = len(small)
sx = sum(r[1] for r in small)
sy = sum(r[2] for r in small)
sxx = sum(r[1] ** 2 for r in small)
sxy = sum(r[1] * r[2] for r in small)
b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
a = (sy - b * sx) / n
err = sorted(abs((a + b * r[1]) / r[2] - 1) for r in small)
expert_bytes = 3 * 2048 * 768 * 2  # Qwen3-30B-A3B: hidden 2048, expert width 768, bf16
bw = expert_bytes / (b * 1e-6)
print(f"{n} points at <= 64 tokens: t = {a:.1f} us + {b:.3f} us per activated expert")
print(f"relative error: median {100 * err[n // 2]:.1f} %, max {100 * err[-1]:.1f} %")
print(f"one expert = {expert_bytes} B -> {bw / 1e12:.2f} TB/s, {bw / 1.792e12:.2f} of the card's 1.792 TB/s")
