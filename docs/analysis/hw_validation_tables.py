#!/usr/bin/env python3
"""Markdown tables of docs/validation.md from a hw-validation output folder.

  build/app/servelab-cli reproduce hw-validation --out out/repro
  python3 docs/analysis/hw_validation_tables.py out/repro/hw-validation

prints the summary table, the t_step_us sweep table and the per-row table
exactly as docs/validation.md shows them, so the page can be refreshed
after a change of the cost model's defaults by pasting, not retyping.
Standard library only.
"""
import csv
import sys


def read(folder, name):
    with open(f"{folder}/{name}", newline="") as f:
        return list(csv.DictReader(f))


def pct(v):
    return f"{float(v):.1f} %"


def main(folder):
    summary = read(folder, "error_summary.csv")
    by = {(r["tp"], r["metric"]): r for r in summary}
    tps = [t for t in dict.fromkeys(r["tp"] for r in summary)]
    print("| rows | TTFT median / mean \\|error\\| | TPOT median / mean \\|error\\| | e2e median / mean \\|error\\| |")
    print("|---|---|---|---|")
    for tp in tps:
        n = " / ".join(by[(tp, m)]["n"] for m in ("ttft", "tpot", "e2e"))
        label = "all" if tp == "all" else f"TP {tp}"
        cells = [f"{pct(by[(tp, m)]['median_abs_err_pct'])} / {pct(by[(tp, m)]['mean_abs_err_pct'])}"
                 for m in ("ttft", "tpot", "e2e")]
        print(f"| {label} ({n}) | " + " | ".join(cells) + " |")
    print()

    sweep = read(folder, "step_overhead_sweep.csv")
    cell = {(r["t_step_us"], r["tp"], r["metric"]): r for r in sweep}
    steps = list(dict.fromkeys(r["t_step_us"] for r in sweep))
    tp_list = [t for t in tps if t != "all"]
    print("| t_step_us | TPOT median \\|error\\| all rows | " + " | ".join(f"TP {t}" for t in tp_list) +
          " | TTFT median \\|error\\| | e2e median \\|error\\| |")
    print("|---" * (4 + len(tp_list)) + "|")
    for s in steps:
        default = cell[(s, "all", "tpot")]["is_default"] == "yes"
        line = [f"{int(s):,}".replace(",", " ") + (" (default)" if default else ""),
                pct(cell[(s, "all", "tpot")]["median_abs_err_pct"])]
        line += [pct(cell[(s, t, "tpot")]["median_abs_err_pct"]) for t in tp_list]
        line += [pct(cell[(s, "all", m)]["median_abs_err_pct"]) for m in ("ttft", "e2e")]
        print("| " + " | ".join(line) + " |")
    print()

    print("| TP | prompt | batch | tokens | TTFT meas | TTFT ServeLab | err % | TPOT meas | TPOT ServeLab | err % "
          "| e2e meas | e2e ServeLab | err % | compared | note |")
    print("|---" * 15 + "|")
    for r in read(folder, "table.csv"):
        keys = ["tp", "prompt", "batch", "tokens", "ttft_meas_ms", "ttft_pred_ms", "ttft_err_pct", "tpot_meas_ms",
                "tpot_pred_ms", "tpot_err_pct", "e2e_meas_ms", "e2e_pred_ms", "e2e_err_pct", "compared", "note"]
        print("| " + " | ".join(r[k] for k in keys) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
