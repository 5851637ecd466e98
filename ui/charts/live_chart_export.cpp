// LiveChart's images and files: one rendering path (renderImage) behind
// File ▸ Export, `servelab --export-charts`, `servelab-cli plot` and
// `reproduce`; SVG; CSV of the full data; the right-click export menu.
#include <QBuffer>
#include <QContextMenuEvent>
#include <QFile>
#include <QFileDialog>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QMenu>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextStream>
#include <QValueAxis>
#include <QScatterSeries>

#include <algorithm>

#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/live_chart.h"
#include "ui/charts/live_chart_impl.h"

namespace sl::ui {

namespace {
// Draw a chart's OpenGL series in software for the duration of an export
// (they are not part of the scene a painter renders).
class SoftwareSeries {
public:
  explicit SoftwareSeries(const std::vector<QXYSeries*>& all) {
    for (QXYSeries* s : all)
      if (s->useOpenGL()) {
        s->setUseOpenGL(false);
        gl_.push_back(s);
      }
  }
  ~SoftwareSeries() {
    for (QXYSeries* s : gl_) s->setUseOpenGL(true);
  }
  SoftwareSeries(const SoftwareSeries&) = delete;
  SoftwareSeries& operator=(const SoftwareSeries&) = delete;

private:
  std::vector<QXYSeries*> gl_;
};
}  // namespace

// Slide exports scale lines with the text (ChartExportOptions::lineScale).
void LiveChart::setLineScale(double scale) {
  scale = std::max(0.1, scale);
  if (scale == d->lineScale) return;
  if (!d->screenAxisPens) d->screenAxisPens = std::make_pair(d->ax->linePen(), d->ax->gridLinePen());
  d->lineScale = scale;
  for (auto& s : d->series) {
    if (auto* sc = qobject_cast<QScatterSeries*>(s.series)) {
      sc->setMarkerSize((d->xCategories > 0 ? 13.0 : 4.5) * scale);
    } else {
      QPen pen = s.series->pen();
      pen.setWidthF(kSeriesPen * scale);
      s.series->setPen(pen);
    }
  }
  // Back to the exact screen pens at 1 (screenshots stay identical).
  QPen line = d->screenAxisPens->first, grid = d->screenAxisPens->second;
  if (scale != 1.0) {
    line.setWidthF(std::max(1.0, line.widthF()) * scale);
    grid.setWidthF(std::max(1.0, grid.widthF()) * (1.0 + (scale - 1.0) / 2));
  }
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(d->ax), static_cast<QAbstractAxis*>(d->ay)}) {
    a->setLinePen(line);
    a->setGridLinePen(grid);
  }
  refresh();
}

double LiveChart::lineScale() const { return d->lineScale; }

template <class Draw> void LiveChart::renderAt(QSize size, Draw&& draw) {
  // Lay the chart out at `size` on its own (whatever the view's size), with
  // ticks and legend fitted to it, draw it, then give it back to the view.
  std::vector<QXYSeries*> all;
  for (const auto& s : d->series) all.push_back(s.series);
  const SoftwareSeries software(all);
  const QSizeF old = d->chart->size();
  d->chart->resize(QSizeF(size));
  d->chart->layout()->activate();
  refresh();
  d->chart->layout()->activate();  // the refreshed ticks and legend
  draw();
  d->chart->resize(old);
  d->chart->layout()->activate();
  refresh();
}

QImage LiveChart::renderImage(QSize size, qreal scale) {
  QImage img(size * scale, QImage::Format_ARGB32_Premultiplied);
  img.setDevicePixelRatio(scale);
  img.fill(Qt::white);
  renderAt(size, [&] {
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    d->chart->scene()->render(&p, QRectF(QPointF(0, 0), QSizeF(size)), d->chart->sceneBoundingRect());
  });
  return img;
}

QByteArray LiveChart::renderPng(QSize size, qreal scale, const QMap<QString, QString>& meta) {
  QByteArray bytes;
  QBuffer buf(&bytes);
  buf.open(QIODevice::WriteOnly);
  QImage img = renderImage(size, scale);
  for (auto it = meta.begin(); it != meta.end(); ++it) img.setText(it.key(), it.value());
  img.save(&buf, "PNG");
  return bytes;
}

QByteArray LiveChart::renderSvg(QSize size) {
  QByteArray bytes;
  QBuffer buf(&bytes);
  buf.open(QIODevice::WriteOnly);
  QSvgGenerator gen;
  gen.setOutputDevice(&buf);
  gen.setSize(size);
  gen.setViewBox(QRect(QPoint(0, 0), size));
  gen.setTitle(d->title);
  gen.setDescription("ServeLab chart");
  renderAt(size, [&] {
    QPainter p;
    if (p.begin(&gen)) {
      d->chart->scene()->render(&p, QRectF(QPointF(0, 0), QSizeF(size)), d->chart->sceneBoundingRect());
      p.end();
    }
  });
  return bytes;
}

namespace {
bool writeAtomic(const QString& path, const QByteArray& bytes) {
  QSaveFile f(path);
  return !bytes.isEmpty() && f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size() && f.commit();
}
}  // namespace

bool LiveChart::exportPng(const QString& path, QSize size, qreal scale, const QMap<QString, QString>& meta) {
  return writeAtomic(path, renderPng(size, scale, meta));
}

bool LiveChart::exportSvg(const QString& path, QSize size) { return writeAtomic(path, renderSvg(size)); }

bool LiveChart::exportCsv(const QString& path) const {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
  QTextStream out(&f);
  auto quote = [](QString s) { return s.contains(',') || s.contains('"') ? "\"" + s.replace("\"", "\"\"") + "\"" : s; };
  out << "series," << quote(d->xLabel) << "," << quote(d->yLabel) << "\n";
  for (const auto& s : d->series)
    for (const QPointF& p : s.data)
      out << quote(s.series->name()) << "," << QString::number(p.x(), 'g', 10) << ","
          << QString::number(p.y(), 'g', 10) << "\n";
  return f.error() == QFile::NoError;
}

void LiveChart::contextMenuEvent(QContextMenuEvent* e) {
  QMenu menu(this);
  auto exportAs = [this](const QString& ext, const QString& filter) {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart"), ChartExportDialog::defaultParentFolder() + "/" + d->id + "." + ext, filter);
    if (path.isEmpty()) return;
    if (ext == "png") exportPng(path);
    else if (ext == "svg") exportSvg(path);
    else exportCsv(path);
  };
  menu.addAction(tr("Export PNG…"), this, [=] { exportAs("png", tr("PNG image (*.png)")); });
  menu.addAction(tr("Export SVG…"), this, [=] { exportAs("svg", tr("SVG image (*.svg)")); });
  menu.addAction(tr("Export CSV…"), this, [=] { exportAs("csv", tr("CSV data (*.csv)")); });
  menu.exec(e->globalPos());
}

}  // namespace sl::ui
