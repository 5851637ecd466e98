// ChartPanel in lecture mode (issue 50, "charts a room can read"): one
// chart alone on its page, as large as the page allows, with its legend,
// ticks and units, chosen from a tour step's text or from a chooser at the
// tabs' right end. Out of lecture mode every chart is back in its grid.
#include <QComboBox>
#include <QGridLayout>
#include <QRegularExpression>
#include <QTabWidget>

#include <utility>
#include <vector>

#include "ui/charts/chart_panel.h"

namespace sl::ui {

namespace {

// How a text names each chart: its title and the words tour texts use for
// it. Generic words ("throughput", "KV") name a chart only with "chart".
const std::vector<std::pair<QString, QStringList>>& chartPhrases() {
  static const std::vector<std::pair<QString, QStringList>> phrases = {
      {"ttft_vs_reasoning", {"ttft vs reasoning", "ttft-vs-reasoning", "ttft vs. reasoning"}},
      {"ttft", {"ttft, rolling", "rolling ttft", "ttft chart"}},
      {"tpot", {"tpot, rolling", "rolling tpot", "tpot chart"}},
      {"qoe_slo", {"qoe violations · slo", "qoe · slo", "slo chart", "qoe chart", "slo attainment chart"}},
      {"throughput", {"throughput chart", "throughput, rolling"}},
      {"kv_usage", {"kv usage per", "kv usage chart", "kv chart"}},
      {"ttft_cdf", {"ttft distribution", "distributions (cdf)", "cdf chart", "distributions tab"}},
      {"tpot_cdf", {"tpot distribution"}},
      {"e2e_cdf", {"end-to-end latency (cdf)", "e2e distribution"}},
      {"policy", {"policy chart", "published by the policy"}},
      {"tpot_vs_load", {"tpot vs load", "tpot-vs-load", "speculation chart", "speculation tab"}},
  };
  return phrases;
}

}  // namespace

QString ChartPanel::chartNamedIn(const QString& text) const {
  // Plain words: tags out, entities and spaces as a reader sees them.
  QString plain = text;
  plain.remove(QRegularExpression("<[^>]*>"));
  plain.replace("&amp;", "&").replace("&nbsp;", " ").replace(QChar(0x00A0), ' ');
  plain = plain.simplified().toLower();
  QString best;
  qsizetype at = -1;
  for (const auto& [id, words] : chartPhrases()) {
    if (!chart(id) || (chart(id) == spec_ && !speculationShown())) continue;  // (a run without speculation: no tab)
    for (const QString& w : words) {
      const qsizetype i = plain.indexOf(w);
      if (i >= 0 && (at < 0 || i < at)) {
        at = i;
        best = id;
      }
    }
  }
  return best;
}

void ChartPanel::setFocusChart(const QString& id) {
  LiveChart* focus = id.isEmpty() ? nullptr : chart(id);
  if (focus == spec_ && !speculationShown()) focus = nullptr;  // its tab is hidden: as an unknown id
  if (!id.isEmpty() && !focus) return;
  focus_ = focus ? id : QString();
  std::vector<LiveChart*> all = charts_;
  all.push_back(policy_);
  if (speculationShown()) all.push_back(spec_);  // a run with speculation
  // The focused chart's text a step larger than the window's (lecture mode
  // already made that 1.3×): tick labels and legend read from the back.
  for (LiveChart* c : all) {
    const bool samePage = focus && c->parentWidget() == focus->parentWidget();
    c->setVisible(!samePage || c == focus);
    if (c == focus) {
      QFont f = font();
      f.setPointSizeF(f.pointSizeF() * 1.15);
      c->setFont(f);
    } else {
      c->setFont(QFont());  // the panel's again
    }
  }
  // A grid (the Live page) gives its empty columns and rows their stretch
  // too: the focused chart's column and row take it all.
  for (LiveChart* c : all)
    if (auto* grid = qobject_cast<QGridLayout*>(c->parentWidget()->layout())) {
      const int at = grid->indexOf(c);
      if (at < 0) continue;
      int row = 0, col = 0, rs = 0, cs = 0;
      grid->getItemPosition(at, &row, &col, &rs, &cs);
      const bool sameAsFocus = focus && c->parentWidget() == focus->parentWidget();
      if (focus && c != focus && sameAsFocus) continue;
      if (!focus || c == focus) {
        for (int i = 0; i < grid->columnCount(); ++i) grid->setColumnStretch(i, !focus || i == col ? 1 : 0);
        for (int i = 0; i < grid->rowCount(); ++i) grid->setRowStretch(i, !focus || i == row ? 1 : 0);
      }
    }
  if (focus) tabs_->setCurrentWidget(focus->parentWidget());
  if (!focusPick_) {
    focusPick_ = new QComboBox;
    focusPick_->setObjectName("LectureChartPick");
    focusPick_->setToolTip(tr("Lecture mode shows one chart, large: choose which"));
    focusPick_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(focusPick_, &QComboBox::activated, this,
            [this](int i) { setFocusChart(focusPick_->itemData(i).toString()); });
    tabs_->setCornerWidget(focusPick_, Qt::TopRightCorner);
  }
  // The charts on offer: those of this run (the Speculation chart only with
  // speculation).
  if (focusPick_->count() != static_cast<int>(all.size())) {
    focusPick_->clear();
    for (LiveChart* c : all) focusPick_->addItem(c->title(), c->id());
  }
  if (focus) focusPick_->setCurrentIndex(focusPick_->findData(id));
  focusPick_->setVisible(focus != nullptr);
  if (focus) {
    focus->refresh();
    focus->update();
  }
}

}  // namespace sl::ui
