// The inspector's MoE block (moe_split.h): the latest step's split in ms
// and %, tokens, experts touched and rank loads.
#include "ui/inspector/moe_split.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

#include "ui/cluster/moe_strip.h"

namespace sl::ui::moesplit {

std::vector<Part> parts(const MoeStepSnapshot& m) {
  if (m.rankPairs.empty()) return {};
  std::vector<Part> out = {{QObject::tr("attention"), m.attentionS},
                           {QObject::tr("experts"), m.expertS},
                           {QObject::tr("all-to-all"), m.allToAllS},
                           {QObject::tr("all-reduce"), m.commS},
                           {QObject::tr("other"), m.otherS}};
  double total = 0;
  for (const Part& p : out) total += p.seconds;
  if (total > 0)
    for (Part& p : out) p.share = p.seconds / total;
  return out;
}

QString msText(double seconds) { return QString::number(seconds * 1e3, 'f', 2); }

QString html(const MoeStepSnapshot& m, const QString& layout) {
  const std::vector<Part> ps = parts(m);
  if (ps.empty()) return {};
  double total = 0;
  for (const Part& p : ps) total += p.seconds;
  const QString muted = QStringLiteral("<span style='color:#6B7280'>%1</span>");
  QString h = "<p style='margin-top:4px; margin-bottom:0'>" +
              muted.arg(QObject::tr("MoE, latest step") + (layout.isEmpty() ? QString() : " · " + layout)) +
              "</p><table cellspacing='0' cellpadding='1'>";
  for (const Part& p : ps)
    h += QStringLiteral("<tr><td>%1</td><td align='right'>&nbsp;&nbsp;%2 ms</td><td align='right'>&nbsp;&nbsp;%3%</td></tr>")
             .arg(p.name, msText(p.seconds), QString::number(p.share * 100.0, 'f', 1));
  h += QStringLiteral("<tr><td><b>%1</b></td><td align='right'>&nbsp;&nbsp;<b>%2 ms</b></td><td></td></tr>")
           .arg(QObject::tr("step"), msText(total));
  h += "</table>";
  const std::vector<double> ratios = moestrip::loadRatios(m);
  const auto busiest = std::max_element(ratios.begin(), ratios.end());
  h += "<p style='margin-top:2px; margin-bottom:0'>" +
       QObject::tr("%1 tokens in the step · %2 experts touched per MoE layer")
           .arg(QString::number(m.tokens, 'f', 0), QString::number(m.expertsTouched, 'f', 1)) +
       "<br>" +
       QObject::tr("busiest of %1 EP ranks: rank %2 at %3× the mean · straggler estimate %4×")
           .arg(ratios.size())
           .arg(busiest - ratios.begin())
           .arg(QString::number(*busiest, 'f', 2), QString::number(moestrip::stragglerRatio(m), 'f', 2)) +
       "</p>";
  return h;
}

MoeSplitLabel::MoeSplitLabel(QWidget* parent) : QLabel(parent) {
  setTextFormat(Qt::RichText);
  setWordWrap(true);
  setVisible(false);
  setToolTip(tr("The cost model's split of this instance's latest step: attention (prefill and decode), the routed "
                "experts (the busiest expert-parallel rank's), the all-to-all that carries tokens to their experts "
                "and back, the tensor-parallel all-reduce, and the rest (dense layers, sampling, overheads). Rank "
                "loads are expected token-expert pairs; the card's strip shows them over the last steps."));
}

void MoeSplitLabel::fill(const Snapshot& s, int instance, const Scenario& scenario) {
  const bool known = instance >= 0 && static_cast<std::size_t>(instance) < s.instances.size();
  const MoeStepSnapshot* m = known ? &s.instances[static_cast<std::size_t>(instance)].moe : nullptr;
  if (!m || m->rankPairs.empty()) {
    clear();
    setVisible(false);
    return;
  }
  // The layout line reads a routing file for "file" routing: worked out
  // again only when the deployment's fields change.
  const ClusterSpec& c = scenario.cluster;
  const QString key = QStringLiteral("%1|%2|%3|%4|%5|%6|%7|%8|%9")
                          .arg(c.ep).arg(c.attention_dp).arg(c.ep_redundant)
                          .arg(QString::fromStdString(c.ep_placement.value_or("-")), QString::fromStdString(c.moe_routing.kind))
                          .arg(c.moe_routing.skew)
                          .arg(QString::fromStdString(c.moe_routing.path), QString::fromStdString(scenario.base_dir),
                               QString::fromStdString(scenario.model));
  if (key != layoutKey_) {
    layoutKey_ = key;
    const QStringList forms = moestrip::layoutForms(scenario);
    layout_ = forms.isEmpty() ? QString() : forms.front();
  }
  setText(html(*m, layout_));
  setVisible(true);
}

}  // namespace sl::ui::moesplit
