// ChartPanel's readouts and exports: the change-marker labels, the chart
// export presets, the TTFT/TPOT figures the tours quote and exportAll
// (the panel's data and charts are in chart_panel.cpp).
#include "ui/charts/chart_panel.h"

#include <QCoreApplication>
#include <QEvent>
#include <QGraphicsView>
#include <QGraphicsWidget>
#include <QTabWidget>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sl::ui {

QString changeMarkerLabel(const KnobChange& c) {
  const QString v = QString::number(c.value, 'g', 4);
  if (c.knob == kKnobArrivalRate) return QObject::tr("rate %1/s").arg(v);
  if (c.knob == kKnobConcurrency) return QObject::tr("clients %1").arg(v);
  if (c.knob == kKnobSpeculativeK) return c.value == 0 ? QObject::tr("spec off") : QObject::tr("spec k=%1").arg(v);
  QString name = QString::fromStdString(c.knob);
  if (name.startsWith(kKnobPolicyPrefix)) name = name.mid(static_cast<int>(std::strlen(kKnobPolicyPrefix)));
  return name + " " + v;
}

const std::vector<ChartExportPreset>& chartExportPresets() {
  // Slides: label text 1/30 of the slide's height (30 px on 1600×900), the
  // title 1/25: 18 pt and 22 pt on a 13.33 × 7.5 in slide, the usual minimum
  // for text read from the back of a room. Paper: 10 px labels on the
  // layout canvas (≈ 7 pt at one column's width for 520 px).
  static const std::vector<ChartExportPreset> presets = {
      {"screen", QObject::tr("Screen: 960×600 at 2× (1920×1200 px), text as on screen"), {{960, 600}, 2.0, 0, true}},
      {"slide", QObject::tr("Slide 16:9: 1600×900 at 1×, text 1/30 of the height"), {{1600, 900}, 1.0, 1.0 / 30, true}},
      {"slide-2x", QObject::tr("Slide 16:9: 1600×900 at 2× (3200×1800 px), text 1/30 of the height"),
       {{1600, 900}, 2.0, 1.0 / 30, true}},
      {"slide-half", QObject::tr("Half a 16:9 slide: 800×900 at 2× (1600×1800 px), text 1/30 of the height"),
       {{800, 900}, 2.0, 1.0 / 30, true}},
      {"paper", QObject::tr("Paper, one column: 520×340 at 3× (1560×1020 px)"), {{520, 340}, 3.0, 10.0 / 340, true}},
      {"paper-wide", QObject::tr("Paper, two columns: 1040×420 at 3× (3120×1260 px)"),
       {{1040, 420}, 3.0, 10.0 / 420, true}},
  };
  return presets;
}

namespace {
double meanOf(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}
}  // namespace

double ChartPanel::ttftQuantile(double q) {
  const std::vector<double>& v = ttfts_.sorted();
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto i = static_cast<std::size_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(i, 1, v.size()) - 1];  // nearest rank
}
double ChartPanel::meanTtft() { return meanOf(ttfts_.sorted()); }
double ChartPanel::meanTpot() { return meanOf(tpots_.sorted()); }
double ChartPanel::latestSloAttainment() const {
  const auto& d = qoe_->seriesData(1);
  return d.empty() ? std::numeric_limits<double>::quiet_NaN() : d.back().y();
}

double ChartExportOptions::lineScale() const {
  return textFraction > 0 ? std::max(1.0, textFraction * size.height() / 10.0) : 1.0;
}

const ChartExportPreset* chartExportPreset(const QString& id) {
  for (const ChartExportPreset& p : chartExportPresets())
    if (p.id == id) return &p;
  return nullptr;
}

int ChartPanel::exportAll(const QString& dir, QSize size, qreal scale, const QMap<QString, QString>& meta) const {
  ChartExportOptions o;
  o.size = size;
  o.scale = scale;
  return exportAll(dir, o, meta);
}

int ChartPanel::exportAll(const QString& dir, const ChartExportOptions& o, const QMap<QString, QString>& meta) const {
  std::vector<LiveChart*> all = charts_;
  if (policy_->seriesCount() > 0) all.push_back(policy_);
  if (speculationShown()) all.push_back(spec_);  // a run with speculation
  // Text from the canvas: the charts' label font is 0.8 × the widget font.
  std::vector<std::pair<LiveChart*, QFont>> fonts;
  if (o.textFraction > 0)
    for (LiveChart* c : all) {
      // Put back as it was: an inherited font stays inherited (lecture mode).
      fonts.emplace_back(c, c->testAttribute(Qt::WA_SetFont) ? c->font() : QFont());
      QFont f = c->font();
      const double labelPx = o.textFraction * o.size.height();
      f.setPointSizeF(labelPx / 0.8 * 72.0 / std::max(1, c->logicalDpiY()));
      c->setFont(f);
    }
  if (!o.markers)
    for (LiveChart* c : timeCharts()) c->setMarkers({});
  for (LiveChart* c : all) c->setLineScale(o.lineScale());
  int n = 0;
  for (LiveChart* c : all) {
    const QString base = dir + "/" + c->id();
    n += c->exportPng(base + ".png", o.size, o.scale, meta);
    n += c->exportSvg(base + ".svg", o.size);
    n += c->exportCsv(base + ".csv");
  }
  if (!o.markers) applyMarkers();
  for (LiveChart* c : all) c->setLineScale(1.0);
  for (auto& [c, f] : fonts) {
    c->setFont(f);
    // The export's large font grew the chart's minimum size, and QChartView
    // keeps its own minimum at least that (never shrinking it): the chart
    // stayed taller than its place, its x axis cut off. Back to the screen
    // font's minimum, fitted to the view as a resize of the view does.
    if (auto* view = qobject_cast<QGraphicsView*>(c->plotWidget()->parentWidget())) {
      QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);  // the small font's minimum
      view->setMinimumSize(0, 0);
      for (QGraphicsItem* item : view->scene()->items())
        if (auto* chart = dynamic_cast<QGraphicsWidget*>(item); chart && !chart->parentItem()) {
          chart->setMinimumSize(0, 0);
          chart->resize(view->viewport()->size());
          chart->setMinimumSize(-1, -1);
        }
      view->setSceneRect(QRectF(QPointF(0, 0), view->viewport()->size()));
    }
    c->refresh();
  }
  if (!o.markers)
    for (LiveChart* c : timeCharts()) c->refresh();
  return n;
}

}  // namespace sl::ui
