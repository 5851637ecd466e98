// SweepHeatmap: the sweep dialog's heatmap (rows × columns of one metric, a
// colour scale, labels that fit), painted on screen and into an exported PNG.
#include "ui/sweep/sweep_window.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/chart_panel.h"
#include "ui/compare/compare_model.h"
#include "policy/registry.h"
#include "scenario/scenario_io.h"
#include "sweep/parallel.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"
#include "ui/common/theme.h"
#include "util/error.h"

namespace sl::ui {

namespace {

// Heatmap colour of t in [0, 1]: blue (low) to red (high).
QColor heatColor(double t) { return QColor::fromRgbF(0.18 + 0.67 * t, 0.44 - 0.16 * t, 0.71 - 0.48 * t); }

}  // namespace

// ------------------------------------------------------------------ heatmap

SweepHeatmap::SweepHeatmap(QWidget* parent) : QWidget(parent) { setMinimumSize(320, 200); }

void SweepHeatmap::setData(QStringList rows, QStringList cols, std::vector<std::vector<double>> values, QString title,
                           QString colTitle) {
  rows_ = std::move(rows);
  cols_ = std::move(cols);
  values_ = std::move(values);
  title_ = std::move(title);
  colTitle_ = std::move(colTitle);
  update();
}

void SweepHeatmap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  paintOn(p, size());
}

SweepHeatmap::Layout SweepHeatmap::layout(const QFontMetrics& fm, QSize size) const {
  Layout l;
  const int line = fm.height();
  int widest = 0;
  for (const QString& r : rows_) widest = std::max(widest, fm.horizontalAdvance(r));
  // Row labels whole up to 40 % of the width (elided beyond).
  l.left = std::min(widest + 14, static_cast<int>(size.width() * 0.4));
  l.top = line + 12;
  l.bottom = 2 * line + 14;  // column labels + the columns' title
  const auto [lo, hi] = range();
  const int legendText = std::max(fm.horizontalAdvance(formatSweepNumber(lo)), fm.horizontalAdvance(formatSweepNumber(hi)));
  l.right = 14 + 16 + 6 + legendText + 8;  // gap, colour bar, gap, its labels
  l.grid = QRectF(l.left, l.top, std::max(1, size.width() - l.left - l.right), std::max(1, size.height() - l.top - l.bottom));
  l.bar = QRectF(l.grid.right() + 14, l.grid.top(), 16, l.grid.height());
  return l;
}

std::pair<double, double> SweepHeatmap::range() const {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& r : values_)
    for (double v : r)
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  return {lo, hi};
}

QStringList SweepHeatmap::rowLabelsAsPainted(QSize size) const {
  const QFontMetrics fm(font());
  const Layout l = layout(fm, size);
  QStringList out;
  for (const QString& r : rows_) out << fm.elidedText(r, Qt::ElideRight, l.left - 8);
  return out;
}

void SweepHeatmap::paintOn(QPainter& p, QSize size) const {
  p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
  p.setFont(font());
  const QFontMetrics fm(font());
  p.setPen(theme::kText);
  p.drawText(QRect(0, 4, size.width(), fm.height() + 4), Qt::AlignCenter, title_);
  if (rows_.isEmpty() || cols_.isEmpty()) return;
  const auto [lo, hi] = range();
  const Layout l = layout(fm, size);
  const double cw = l.grid.width() / static_cast<double>(cols_.size());
  const double ch = l.grid.height() / static_cast<double>(rows_.size());
  const QStringList labels = rowLabelsAsPainted(size);
  for (int r = 0; r < rows_.size(); ++r) {
    p.setPen(theme::kText);
    p.drawText(QRectF(0, l.top + r * ch, l.left - 6, ch), Qt::AlignRight | Qt::AlignVCenter, labels[r]);
    for (int c = 0; c < cols_.size(); ++c) {
      const double v = values_[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
      const QRectF cellRect(l.left + c * cw, l.top + r * ch, cw, ch);
      QColor col = theme::kTrack;
      if (std::isfinite(v)) col = heatColor(hi > lo ? (v - lo) / (hi - lo) : 0.5);
      p.fillRect(cellRect, col);
      p.setPen(Qt::white);
      p.drawRect(cellRect);
      const QString num = formatSweepNumber(v);
      if (std::isfinite(v) && fm.horizontalAdvance(num) + 6 < cw && fm.height() < ch) p.drawText(cellRect, Qt::AlignCenter, num);
    }
  }
  p.setPen(theme::kText);
  for (int c = 0; c < cols_.size(); ++c)
    p.drawText(QRectF(l.left + c * cw, l.grid.bottom() + 2, cw, fm.height() + 4), Qt::AlignCenter, cols_[c]);
  p.drawText(QRectF(l.left, l.grid.bottom() + fm.height() + 8, l.grid.width(), fm.height() + 4), Qt::AlignCenter,
             colTitle_);
  // Colour scale: the metric's low (bottom) to high (top) end.
  if (!(lo <= hi)) return;
  QLinearGradient g(l.bar.bottomLeft(), l.bar.topLeft());
  for (double t : {0.0, 0.25, 0.5, 0.75, 1.0}) g.setColorAt(t, heatColor(t));
  p.fillRect(l.bar, g);
  p.setPen(theme::kText);
  p.drawRect(l.bar);
  const double tx = l.bar.right() + 6;
  p.drawText(QRectF(tx, l.bar.top() - 2, l.right, fm.height()), Qt::AlignLeft | Qt::AlignTop, formatSweepNumber(hi));
  p.drawText(QRectF(tx, l.bar.bottom() - fm.height() + 2, l.right, fm.height()), Qt::AlignLeft | Qt::AlignBottom,
             formatSweepNumber(lo));
}

bool SweepHeatmap::exportTo(const QString& path) const {
  const QSize sz = size().expandedTo(QSize(640, 400));
  if (path.endsWith(".svg", Qt::CaseInsensitive)) {
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(sz);
    gen.setViewBox(QRect(QPoint(0, 0), sz));
    gen.setTitle(title_);
    QPainter p;
    if (!p.begin(&gen)) return false;
    paintOn(p, sz);
    p.end();
    return QFile::exists(path);
  }
  QImage img(sz, QImage::Format_ARGB32_Premultiplied);
  QPainter p(&img);
  p.setRenderHint(QPainter::Antialiasing);
  paintOn(p, sz);
  p.end();
  return img.save(path, "PNG");
}

}  // namespace sl::ui
