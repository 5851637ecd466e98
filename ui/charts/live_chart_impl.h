#pragma once
// LiveChart's private state, shared by live_chart.cpp (the widget: series,
// axes, zoom and hover) and live_chart_export.cpp (images, SVG, CSV). Only
// these two files and chart_axes.cpp include Qt Charts.
#include <QChart>
#include <QChartView>
#include <QElapsedTimer>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QTimer>
#include <QToolButton>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "ui/charts/chart_axes.h"
#include "ui/charts/live_chart.h"

namespace sl::ui {

/// Line series pen on screen (× lineScale in slide exports).
constexpr double kSeriesPen = 1.6;

/// Whether new scatter series draw through OpenGL (setChartsUseOpenGL).
bool chartsUseOpenGL();

struct LiveChart::Impl {
  QString id, title, xLabel, yLabel;
  QChart* chart = nullptr;
  QChartView* view = nullptr;
  QValueAxis* ax = nullptr;  // a QCategoryAxis after setXCategories
  int xCategories = 0;
  QValueAxis* ay = nullptr;
  struct S {
    QXYSeries* series = nullptr;
    SeriesStyle style = SeriesStyle::Line;
    std::vector<QPointF> data;
    // The data's extent (min/max x, max y), kept as points arrive: an
    // unzoomed refresh reads it instead of every point.
    bool any = false;
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    // setSeriesSampleCap: drawn from this sample when the data is larger.
    chartaxes::StrideSample sample;
    void extend(const QPointF* first, const QPointF* last) {
      for (const QPointF* p = first; p != last; ++p) {
        if (!any) { x0 = x1 = p->x(); y0 = p->y(); any = true; }
        x0 = std::min(x0, p->x());
        x1 = std::max(x1, p->x());
        y0 = std::min(y0, p->y());
        y1 = std::max(y1, p->y());
      }
      if (sample.cap() > 0) sample.append(first, last);
    }
    bool sampled() const { return sample.cap() > 0 && data.size() > sample.cap(); }
    const std::vector<QPointF>& drawn() const { return sampled() ? sample.points() : data; }
  };
  std::vector<S> series;
  std::vector<QLineSeries*> markers;
  std::vector<double> markerXs;
  std::vector<double> windowXs;  // measurement window edges (solid lines), after markerXs
  QStringList windowTexts;       // their labels
  QGraphicsSimpleTextItem* emptyLabel = nullptr;  // setEmptyText
  double lineScale = 1.0;        // setLineScale
  std::optional<std::pair<QPen, QPen>> screenAxisPens;  // (line, grid) before a scaling
  QStringList markerTexts;
  std::vector<QGraphicsSimpleTextItem*> markerLabels;
  std::optional<std::pair<double, double>> fixedY;
  std::optional<std::pair<double, double>> viewX;  // user zoom/pan; unset = automatic
  QToolButton* resetButton = nullptr;
  QString subtitle;
  QString shortTitle, shownTitle;  // shown: the title or its short form
  // keepTextsWhole's last check: for which size, font and series count, when.
  QSize checkedFor;
  QFont checkedFont;
  int checkedSeries = -1;
  QElapsedTimer sinceCheck;
  // Given up at this size and font because Qt still cut a text.
  bool dropLegend = false, dropXTitle = false, dropYTitle = false;
  QSize dropsFor;
  QFont dropsFont;
  bool legendWanted = true;
  bool fitData = false;  // setFitToData
  // Where the legend has no room: each line's name at its right end, in a
  // margin right of the plot (`endColumns` columns of `endColumnW` px).
  std::vector<QGraphicsSimpleTextItem*> endLabels;
  int endColumns = 0;
  double endColumnW = 0;
  std::size_t endFittedFor = 0;  // series count when the margin was sized
  int endPrefix = 0;  // characters of a shared first word left out ("GPU 3" -> "3") in columns
  bool gl = false;             // every series through OpenGL (a chart with a GL scatter)
  int maxXIntervals = 6, maxYIntervals = 6;
  QTimer* relayout = nullptr;  // refresh after a resize, once it settles
  bool dragging = false;
  QPoint dragStart;
  std::pair<double, double> dragRange{0, 0};
  int drawn = 0;

  // The plot area in the view's viewport coordinates (where mouse events land).
  QRectF plotRect() const { return view->mapFromScene(chart->mapRectToScene(chart->plotArea())).boundingRect(); }
  double xAt(double px) const {
    const QRectF r = plotRect();
    return ax->min() + (px - r.left()) / std::max(1.0, r.width()) * (ax->max() - ax->min());
  }
};

}  // namespace sl::ui
