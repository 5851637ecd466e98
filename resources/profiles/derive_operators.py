#!/usr/bin/env python3
"""Derives resources/profiles/<gpu>-operators.csv from public per-operator
GPU profiles (read from bare git mirrors; nothing of them is copied here but
the derived medians this script prints):

  microsoft/vidur (MIT, Copyright (c) Microsoft Corporation)
    data/profiling/compute/<gpu>/<model>/mlp.csv           (h100, a100)
  casys-kaist/LLMServingSim (MIT, Copyright (c) 2024, CASYS Lab at KAIST)
    profiler/v0/perf_models/H100/meta-llama/Llama-3.1-{8B,70B}/tp*/layers.csv
    profiler/v0/perf_models/H100/meta-llama/Llama-3.1-70B/tp4/attention.csv
    (H100 only: the project has no A100 profiles)

vidur's a100 folder is an A100 SXM4 80GB (vidur/config/device_sku_config.py:
A100DeviceSKUConfig, 312 TFLOPS fp16, 80 GB): ServeLab's a100-80g preset.

What the source columns time (read from each project's profiler code):
- vidur mlp.csv: one transformer block built from Sarathi's (vLLM-derived)
  tensor-parallel layers in float16, the shapes of ONE rank of
  num_tensor_parallel_workers; torch profiler record_function scopes, the sum
  of the CUDA kernel durations of each scope, in milliseconds; columns
  time_stats.<op>.median over 20 active steps. attn_pre_proj = QKV GEMM,
  attn_post_proj = O GEMM, mlp_up_proj = gate+up GEMM, mlp_down_proj = down
  GEMM; input_layernorm, post_attention_layernorm (fused RMSNorm), attn_rope,
  mlp_act (SiLU-and-mul), add (residual) are the small per-layer kernels.
  Several runs of the same shape: the median of their medians is kept.
- LLMServingSim layers.csv: one HuggingFace Llama layer, float16, one rank of
  tp_size, record_function CUDA kernel time, the median of 30 repeats, in
  nanoseconds (latency(ns)); q/k/v/o/gate/up/down_proj are the GEMMs. Only
  the GEMMs are used (its norms and rope are HuggingFace's unfused eager ops,
  not what a serving engine runs).
- LLMServingSim attention.csv: flash_attn_varlen_func (FlashAttention-2,
  causal), float16, heads of one rank of tp 4; kernel time in milliseconds
  (median column). batch_size sequences; prefill rows: prefill_chunk_size
  query tokens and kv_cache_size key tokens in total, split evenly over the
  sequences (so the cached context before the chunk is kv − chunk); decode
  rows: one query token per sequence and kv_cache_size key tokens in total.

Output columns (one row per operator group and shape; seconds per layer on
one GPU of tp): see docs/calibration.md "Per-operator profiles".

Usage: derive_operators.py h100 VIDUR_GIT_DIR LLMSERVINGSIM_GIT_DIR > h100-operators.csv
       derive_operators.py a100 VIDUR_GIT_DIR > a100-operators.csv
"""
import csv
import io
import math
import statistics
import subprocess
import sys

VIDUR_MODELS = [
    # (vidur path, id used in the output); phi-2 is left out: its MLP is not
    # gated (GELU, two matrices) and ServeLab's linear count assumes SwiGLU.
    ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
    ("internlm/internlm-20b", "internlm-20b"),
    ("codellama/CodeLlama-34b-Instruct-hf", "codellama-34b"),
    ("meta-llama/Llama-2-70b-hf", "llama-2-70b"),
    ("Qwen/Qwen-72B", "qwen-72b"),
]
# Profiled for the a100 only.
VIDUR_MODELS_A100 = VIDUR_MODELS + [
    ("meta-llama/Meta-Llama-3-8B", "llama-3-8b"),
    ("meta-llama/Meta-Llama-3-70B", "llama-3-70b"),
]
GPUS = {"h100": VIDUR_MODELS, "a100": VIDUR_MODELS_A100}
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
MISC_MAX_TOKENS = 64  # small kernels are latency-bound up to here (docs/calibration.md)
GEMMS_VIDUR = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"]
MISC_VIDUR = ["input_layernorm", "post_attention_layernorm", "attn_rope", "mlp_act", "add"]
GEMMS_LSS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# Published HuggingFace configs (hidden, heads, kv heads, head dim, intermediate).
LSS_MODELS = {
    "Llama-3.1-8B": ("llama-3.1-8b", 4096, 32, 8, 128, 14336, [1, 2]),
    "Llama-3.1-70B": ("llama-3.1-70b", 8192, 64, 8, 128, 28672, [1, 2, 4]),
}
LSS_BASE = "profiler/v0/perf_models/H100/meta-llama"

HEADER = ["source", "model", "group", "tp", "tokens", "seqs", "context", "hidden", "q_heads",
          "kv_heads", "head_dim", "intermediate", "dtype_bytes", "seconds"]


def git_show(gitdir, path):
    return subprocess.run(["git", "-C", gitdir, "show", "HEAD:" + path], check=True,
                          capture_output=True, text=True).stdout


def head_commit(gitdir):
    return subprocess.run(["git", "-C", gitdir, "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def g(v):
    return "%.6g" % v


def vidur_rows(gpu, gitdir, out):
    for path, mid in GPUS[gpu]:
        rows = list(csv.DictReader(io.StringIO(
            git_show(gitdir, "data/profiling/compute/%s/%s/mlp.csv" % (gpu, path)))))
        by = {}
        for r in rows:
            key = (int(r["num_tensor_parallel_workers"]), int(r["num_tokens"]))
            by.setdefault(key, []).append(r)
        first = rows[0]
        hidden, qh = int(first["n_embd"]), int(first["n_head"])
        kvh, inter = int(first["n_kv_head"]), int(first["n_expanded_embd"])
        arch = [hidden, qh, kvh, hidden // qh, inter, 2]
        for (tp, n) in sorted(by):
            if n not in TOKENS:
                continue
            group_rows = by[(tp, n)]

            def med(ops):
                return statistics.median(
                    sum(float(r["time_stats.%s.median" % op]) for op in ops) for r in group_rows) * 1e-3

            src = "vidur:" + path
            out.append([src, mid, "linear", tp, n, 0, 0] + arch + [g(med(GEMMS_VIDUR))])
            if n <= MISC_MAX_TOKENS:
                out.append([src, mid, "layer_misc", tp, n, 0, 0] + arch + [g(med(MISC_VIDUR))])


def lss_layer_rows(gitdir, out):
    for name, (mid, hidden, qh, kvh, hd, inter, tps) in LSS_MODELS.items():
        for tp in tps:
            path = "%s/%s/tp%d/layers.csv" % (LSS_BASE, name, tp)
            by = {}
            for r in csv.DictReader(io.StringIO(git_show(gitdir, path))):
                if int(r["kv_cache"]) != 0 or r["layer_name"] not in GEMMS_LSS:
                    continue
                by.setdefault(int(r["input"]), {})[r["layer_name"]] = float(r["latency(ns)"]) * 1e-9
            for n in TOKENS:
                if n not in by or len(by[n]) != len(GEMMS_LSS):
                    continue
                out.append(["llmservingsim:" + path, mid, "linear", tp, n, 0, 0,
                            hidden, qh, kvh, hd, inter, 2, g(sum(by[n].values()))])


def pick_log_spaced(values, per_octave=1):
    """The available values nearest to 2^(k/per_octave), each kept once."""
    values = sorted(set(values))
    if not values:
        return []
    lo, hi = math.log2(values[0]), math.log2(values[-1])
    picks = []
    k = math.floor(lo * per_octave)
    while k <= math.ceil(hi * per_octave):
        target = 2 ** (k / per_octave)
        best = min(values, key=lambda v: abs(math.log2(v) - math.log2(target)))
        if best not in picks:
            picks.append(best)
        k += 1
    return picks


def lss_attention_rows(gitdir, out):
    path = "%s/Llama-3.1-70B/tp4/attention.csv" % LSS_BASE
    rows = list(csv.DictReader(io.StringIO(git_show(gitdir, path))))
    arch = [8192, 64, 8, 128, 28672, 2]
    src = "llmservingsim:" + path
    prefill, decode = {}, {}
    for r in rows:
        b, chunk, kv = int(r["batch_size"]), int(r["prefill_chunk_size"]), int(r["kv_cache_size"])
        if r["is_prefill"] == "True":
            if b == 1 and kv >= chunk:
                prefill.setdefault(chunk, {})[kv] = float(r["time_stats.attn_prefill.median"]) * 1e-3
        else:
            decode.setdefault(b, {})[kv] = float(r["time_stats.attn_decode.median"]) * 1e-3
    for chunk in pick_log_spaced(prefill.keys(), 2):
        for kv in pick_log_spaced(prefill[chunk].keys(), 1):
            out.append([src, "llama-3.1-70b", "prefill_attn", 4, chunk, 1, kv - chunk] + arch +
                       [g(prefill[chunk][kv])])
    for b in [1, 2, 4, 8, 16, 32, 64, 128, 256]:
        if b not in decode:
            continue
        for kv in pick_log_spaced(decode[b].keys(), 1):
            if kv < b:
                continue
            # Whole tokens per sequence, as the profiler split them.
            ctx = (kv // b) * b
            out.append([src, "llama-3.1-70b", "decode_attn", 4, b, b, ctx] + arch + [g(decode[b][kv])])


def main():
    args = sys.argv[1:]
    if not args or args[0] not in GPUS or len(args) != (3 if args[0] == "h100" else 2):
        sys.exit(__doc__)
    gpu, vidur = args[0], args[1]
    lss = args[2] if gpu == "h100" else None
    out = []
    vidur_rows(gpu, vidur, out)
    if lss:
        lss_layer_rows(lss, out)
        lss_attention_rows(lss, out)
    w = sys.stdout
    w.write("# Derived per-operator %s medians (seconds per layer on one GPU of tp) "
            "see resources/profiles/README.md\n" % gpu.upper())
    w.write("# microsoft/vidur@%s (MIT; Copyright (c) Microsoft Corporation)\n" % head_commit(vidur))
    if lss:
        w.write("# casys-kaist/LLMServingSim@%s (MIT; Copyright (c) 2024 CASYS Lab at KAIST)\n" %
                head_commit(lss))
    w.write(",".join(HEADER) + "\n")
    for r in out:
        w.write(",".join(str(x) for x in r) + "\n")


if __name__ == "__main__":
    main()
