#pragma once
// The inspector's MoE block (issue 47 item 4): for an MoE instance, its
// latest step as the cost model split it (InstanceSnapshot::moe):
// attention, routed experts, all-to-all (dispatch + combine), tensor-parallel
// all-reduce and the rest, each in ms and as a share of the step, with the
// tokens in the step, the experts it touched and the rank loads; the
// deployment's layout line (ui/cluster/moe_strip.h) above. Hidden for a
// dense model.
#include <QLabel>
#include <QString>

#include <vector>

#include "engine/snapshot.h"
#include "scenario/spec.h"

namespace sl::ui::moesplit {

/// One part of the step: its name, seconds and share of the step (0..1).
struct Part {
  QString name;
  double seconds = 0;
  double share = 0;
};
/// attention, experts, all-to-all, all-reduce, other (in that order); empty
/// for a dense model (no rank loads).
std::vector<Part> parts(const MoeStepSnapshot& m);
/// Milliseconds as the block writes them ("12.34").
QString msText(double seconds);
/// The block as HTML ("" for a dense model); `layout` heads it when not empty.
QString html(const MoeStepSnapshot& m, const QString& layout);

/// The block's label on the instance page, refilled with the page.
class MoeSplitLabel : public QLabel {
  Q_OBJECT
public:
  explicit MoeSplitLabel(QWidget* parent = nullptr);
  /// Instance `instance` of `s` (hidden when it is out of range or dense);
  /// the layout line from `scenario`'s deployment.
  void fill(const Snapshot& s, int instance, const Scenario& scenario);

private:
  QString layoutKey_;  // the deployment's fields the layout line was worked out from
  QString layout_;
};

}  // namespace sl::ui::moesplit
