#pragma once
// `servelab-cli reproduce --summary [--quick]` (docs/fidelity.md, its front
// table): each headline claim of each family's paper, run at the policies'
// default settings through the `reproduce` experiment that mirrors it, with
// the paper's number, ServeLab's, the command and a verdict. The table is
// generated, never edited by hand.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace sl::exp {

/// What one claim reads from its experiment's result.
struct ClaimReading {
  bool ok = false;          ///< the table had what the claim reads (false: "not run" with `text`)
  bool direction = false;   ///< the paper's direction holds
  std::optional<double> value;  ///< ServeLab's number, in the paper's quantity (for the size verdict)
  std::string text;         ///< ServeLab's number(s) as printed
};

struct Claim {
  std::string paper;       ///< "PASCAL", "Arrow", "CascadeInfer", "Self-scheduling"
  std::string figure;      ///< "Fig. 10"
  std::string claim;       ///< what is compared, one line
  std::string paperText;   ///< the paper's number as printed
  std::optional<double> paperValue;  ///< the same, for the size verdict (none: direction only)
  std::string experiment;  ///< reproduce id
  /// Seeds the claim is run at (each must show the direction); empty: the
  /// experiment's own (seed 1 for the full tables). --quick runs seed 1 only.
  std::vector<std::uint64_t> seeds;
  /// Reads one run's result (one per seed; the values are averaged).
  std::function<ClaimReading(const ExperimentResult&)> read;
};

/// Every claim, grouped by paper in the order of docs/fidelity.md.
const std::vector<Claim>& fidelityClaims();

/// The verdict for a reading: "not reproduced" when the direction fails;
/// "size within 2x" when the paper gives a number and ServeLab's is within
/// a factor 2 of it (same sign); else "direction only".
std::string fidelityVerdict(const Claim& c, const ClaimReading& r);

/// Runs every claim (each experiment once per seed, shared between claims)
/// and returns the table (columns paper, figure, claim, paper_value,
/// servelab_value, verdict, command) and a note per paper counting the
/// verdicts.
ExperimentResult runFidelitySummary(const ExperimentOptions& o);

}  // namespace sl::exp
