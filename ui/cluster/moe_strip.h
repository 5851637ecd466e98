#pragma once
// An MoE instance on its card (issue 47 item 4): the expert-parallel layout
// in one line ("EP8 · DP attn · zipf 0.8 · EPLB +16") and a heat strip of
// the load of each expert-parallel rank over the instance's last steps:
// one column per rank, one row per step the GUI saw (newest at the bottom;
// in a new run the steps seen so far share the strip's height),
// colour = the rank's expected token-expert pairs / the mean over ranks
// (InstanceSnapshot::moe.rankPairs); the busiest rank of the newest step is
// outlined, and the straggler estimate (moe.stragglerPairs / mean) is
// written beside the strip.
//
// The snapshot has only an instance's latest step, so the history is kept
// here, on the GUI side: a MoeHistory object, a child of the cluster view,
// fed one frame at a time by record(). The layout line comes from the
// Scenario the GUI loaded (run/run.h makeMoeDeployment: the deployment the
// cost model was given). Dense models have no rank loads: nothing is drawn.
// Compact cards and tiles draw nothing of it (their tooltip stays as it is).
#include <QColor>
#include <QFont>
#include <QObject>
#include <QPainter>
#include <QRect>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/snapshot.h"
#include "scenario/spec.h"

class QWidget;

namespace sl::ui {

struct LiveFrame;

namespace moestrip {

/// Steps kept per instance (rows of the strip).
inline constexpr int kRows = 8;

/// The deployment in words, longest first: "EP8 · DP attn · zipf 0.8 · EPLB +16",
/// "EP8 · DP · zipf 0.8 · +16", "EP8 DP z0.8 +16" (run/run.h
/// makeMoeDeployment of `s`). Empty when the deployment cannot be built (a
/// routing file that does not read). The card shows it only for instances
/// whose snapshot has rank loads (an MoE model).
QStringList layoutForms(const Scenario& s);

/// Each rank's pairs over the mean pairs of all ranks (all 0 when the step
/// had no tokens; empty for a dense model).
std::vector<double> loadRatios(const MoeStepSnapshot& m);
/// The straggler estimate over the mean rank load (0 without tokens).
double stragglerRatio(const MoeStepSnapshot& m);
/// The colour of a cell at `ratio` = pairs / mean: pale blue below the mean,
/// near white at it, orange to deep red above it (saturated at 2×).
QColor heatColor(double ratio);

/// One instance's last steps, oldest first.
struct InstanceRows {
  std::deque<std::vector<double>> ratios;  // per step: loadRatios
  double straggler = 0;                    // the newest step's stragglerRatio
  double tokens = 0;                       // the newest step's tokens
  int busiest = -1;                        // the newest step's busiest rank
  std::int64_t produced = -1;              // tokensProduced at the newest row
};

/// The history of the cluster view's MoE instances (a child QObject of the
/// view, created on the first record()).
class MoeHistory : public QObject {
  Q_OBJECT
public:
  using QObject::QObject;
  /// Add frame `f`'s steps: a row per instance whose step changed since its
  /// last row (an idle instance adds none). A new generation (load, reset)
  /// starts over and takes the layout from `s`.
  void record(const LiveFrame& f, const Scenario& s);
  const QStringList& layout() const { return layout_; }
  /// Instance `i`'s rows (null: none recorded, e.g. a dense model).
  const InstanceRows* rows(int i) const;
  /// Where instance `i`'s strip (label and cells) was last painted (empty: not drawn).
  QRect stripRect(int i) const;
  /// Cell (row, rank) of instance `i`'s strip as last painted; row kRows − 1 is the newest.
  QRect cellRect(int i, int row, int rank) const;
  /// Painting records where it drew: `rows` of cells (kRows, or 1: the newest step only).
  void setPainted(int i, const QRect& strip, const QRect& cells, int ranks, int rows);

private:
  int generation_ = -1;
  QStringList layout_;
  std::vector<InstanceRows> rows_;
  struct Painted {
    QRect strip, cells;
    int ranks = 0, rows = 0;
  };
  std::vector<Painted> painted_;
};

/// The history object of `view` (created when `create`; else null if none).
MoeHistory* history(QWidget* view, bool create = false);
const MoeHistory* history(const QWidget* view);
/// Feed `view`'s history with a frame (the main window does this as it
/// hands the frame to the view).
void record(QWidget* view, const LiveFrame& f, const Scenario& s);

/// What paintOnCard drew: the strip's rect (null: nothing) and its tooltip.
struct Painted {
  QRect rect;
  QString tip;
};
/// On a full card: the layout line and the strip in `c`'s width from `y`,
/// when the frame's `index`-th instance is an MoE one with rows and the card
/// keeps room under it for a row of queue chips (`minBelow` pixels); else
/// nothing. The strip's text is in `small` (the card's bar labels).
Painted paintOnCard(QPainter& p, QWidget& view, const QRect& c, int y, int index, const QFont& small, int minBelow);

}  // namespace moestrip
}  // namespace sl::ui
