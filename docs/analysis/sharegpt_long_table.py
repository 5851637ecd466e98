#!/usr/bin/env python3
"""Builds resources/workloads/sharegpt-long.json (the `sharegpt-long` preset).

Inputs (the project's shared public traces, ../shared/traces):
  sharegpt/sharegpt_8k_filtered_stats_llama2_tokenizer.csv  (Apache-2.0)
      ShareGPT conversations, Llama-2 tokenizer, total <= 8K, output <= 1024.
  mooncake/conversation_trace.jsonl                           (Apache-2.0)
      one hour of Kimi conversation traffic; prompts to 126 K tokens.

Method (docs/workloads.md, "sharegpt-long"):
  input  = mixture: with weight 1 - w the ShareGPT prompt lengths (all <= 8K),
           with weight w the Mooncake conversation prompt lengths above 8192,
           where w = Mooncake's own share of prompts above 8192 (0.4498);
           prompts above 131072 would be discarded (none are);
  output = ShareGPT decode lengths (<= 1024); no reasoning.
Quantiles are exact order statistics of the weighted mixture (the table's
interpolation between levels is linear, as for every built-in table).

Usage: python3 docs/analysis/sharegpt_long_table.py ../shared/traces > resources/workloads/sharegpt-long.json
"""
import csv
import json
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "../shared/traces"
CUT = 8192
MAX_CONTEXT = 131072

sg = list(csv.DictReader(open(f"{root}/sharegpt/sharegpt_8k_filtered_stats_llama2_tokenizer.csv")))
sg_in = sorted(int(r["num_prefill_tokens"]) for r in sg)
sg_out = sorted(int(r["num_decode_tokens"]) for r in sg)
mc = [json.loads(line) for line in open(f"{root}/mooncake/conversation_trace.jsonl")]
mc_in = [int(r["input_length"]) for r in mc]
w = sum(1 for x in mc_in if x > CUT) / len(mc_in)
tail = sorted(x for x in mc_in if CUT < x <= MAX_CONTEXT)

levels = [round(0.005 * i, 3) for i in range(1, 200)] + [0.999]


def mixture_quantile(u):
    # P(X <= x) = (1 - w) F_sg(x) + w F_tail(x); F_sg = 1 at CUT, F_tail = 0 below it.
    if u <= 1 - w:
        v = u / (1 - w)
        return sg_in[min(len(sg_in) - 1, int(v * len(sg_in)))]
    v = (u - (1 - w)) / w
    return tail[min(len(tail) - 1, int(v * len(tail)))]


def quantile(a, u):
    return a[min(len(a) - 1, int(u * len(a)))]


in_q = [float(mixture_quantile(u)) for u in levels]
out_q = [float(quantile(sg_out, u)) for u in levels]
mean_in = (1 - w) * sum(sg_in) / len(sg_in) + w * sum(tail) / len(tail)
doc = {
    "id": "sharegpt-long",
    "description": "ShareGPT-like conversations with the long-context tail (to 128K): ShareGPT prompts below 8K, "
                   "Mooncake conversation prompts above, ShareGPT answers",
    "source": "ShareGPT 8K-filtered lengths (Llama-2 tokenizer; vidur's sharegpt_8k_filtered_stats) and the "
              "Mooncake conversation trace (FAST'25 release), both Apache-2.0, in ServeLab's shared/traces",
    "license": "Apache-2.0 (both sources). Derived quantiles only.",
    "method": "docs/analysis/sharegpt_long_table.py: input = (1-w) ShareGPT prompts (<= 8192) + w Mooncake "
              "prompts > 8192, w = %.4f (Mooncake's share above 8192); prompts > 131072 discarded (none); "
              "output = ShareGPT decode lengths; reasoning 0" % w,
    "requests_represented": len(sg) + len(tail),
    "quantile_levels": levels,
    "input_tokens": {"mean": mean_in, "tail_bounds": {"min": 1.0, "max": float(max(tail))}, "quantiles": in_q},
    "output_tokens": {"mean": sum(sg_out) / len(sg_out), "tail_bounds": {"min": 1.0, "max": float(sg_out[-1])},
                      "quantiles": out_q},
    "reason_ratio": {"mean": 0.0, "tail_bounds": {"min": 0.0, "max": 0.0}, "quantiles": [0.0] * len(levels)},
}
print(json.dumps(doc, indent=1))
