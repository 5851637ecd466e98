#pragma once
// The generic chart widget: a title, x/y value axes, line and scatter series,
// zoom/pan/hover, and export as PNG, SVG and CSV. Charts sit behind this
// small interface of our own: Qt Charts is deprecated from Qt 6.10 on, so
// only live_chart*.cpp and chart_axes.cpp include it. Series keep their full
// data (for CSV) and are drawn decimated (min/max per pixel column for lines,
// one point per 2-pixel cell for scatters) with QXYSeries::replace, never
// append. The chart set of a run is ChartPanel (chart_panel.h).
#include <QByteArray>
#include <QColor>
#include <QImage>
#include <QMap>
#include <QList>
#include <QPointF>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace sl::ui {

enum class SeriesStyle { Line, Scatter };

/// Use OpenGL for scatter series (only when a real GL context exists; never
/// on the offscreen platform). Set before charts are created.
void setChartsUseOpenGL(bool on);

class LiveChart : public QWidget {
  Q_OBJECT
public:
  LiveChart(const QString& id, const QString& title, const QString& xLabel, const QString& yLabel,
            QWidget* parent = nullptr);
  ~LiveChart() override;

  QString id() const;
  QString title() const;
  QString xLabel() const;
  QString yLabel() const;
  /// A new y axis title (e.g. the metric a sweep chart shows).
  void setYLabel(const QString& text);
  /// A new title (e.g. the metric a sweep chart shows, with its unit).
  void setTitle(const QString& text);
  /// A shorter title for when the chart is too narrow for the full one.
  void setShortTitle(const QString& text);
  /// A second, smaller title line (e.g. how a binned tail is computed).
  void setSubtitle(const QString& text);
  QString subtitle() const;
  QString seriesName(int series) const;
  /// Whether a series draws through OpenGL (all of a chart's series do or
  /// none, so they stack in the order they were added).
  bool seriesUsesOpenGL(int series) const;
  /// The font of axis labels and legend (follows the widget's font, e.g.
  /// lecture mode's 1.3×).
  QFont labelFont() const;
  /// Texts drawn in the chart right now (title, axis labels, ticks, legend)
  /// as painted: an elided one ends in "…". For layout tests.
  QStringList paintedTexts() const;
  /// A resize is waiting for its relayout (ticks, legend), which runs once
  /// the resize settles (40 ms); tests wait on this instead of sleeping.
  bool relayoutPending() const;
  /// What the chart shows, first in its tooltip (before the zoom/pan help).
  void setHelp(const QString& text);
  /// The "Reset zoom" button (shown while zoomed).
  QWidget* resetButton() const;
  /// The title's rectangle in this widget's coordinates.
  QRect titleRect() const;
  int addSeries(const QString& name, const QColor& color, SeriesStyle style = SeriesStyle::Line);
  int seriesCount() const;
  void setSeriesData(int series, std::vector<QPointF> points);
  /// Append points (x not before the series' last point) to a series: O(new
  /// points), for live series that only grow.
  void appendSeriesData(int series, const std::vector<QPointF>& points);
  const std::vector<QPointF>& seriesData(int series) const;
  /// Draw this series from a bounded, deterministic sample of at most `cap`
  /// of its points (chartaxes::StrideSample) while it holds more than that;
  /// 0 (the default): from all of them. The series keeps all its data (CSV
  /// export, hover); only the drawing uses the sample. For a live scatter
  /// of millions of requests, whose refresh would otherwise cost
  /// O(points) a second.
  void setSeriesSampleCap(int series, std::size_t cap);
  /// Points a refresh draws from (before pixel decimation): the sample's
  /// size while the series is sampled, else all its points.
  std::size_t sampledPoints(int series) const;
  void removeAllSeries();
  /// Vertical dashed lines (e.g. live rate changes) at these x values, each
  /// labelled with labels[i] when given: beside its line, at the top or the
  /// bottom of the plot where no series' line passes (a label that would
  /// overlap an earlier one everywhere is left out; the line stays).
  void setMarkers(const std::vector<double>& xs, const QStringList& labels = {});
  /// The marker labels drawn now, and where (in plotWidget(); for tests).
  QStringList shownMarkerLabels() const;
  QList<QRectF> shownMarkerLabelRects() const;
  /// Which line is which, as shown now: the legend's names when it is
  /// visible, else the names drawn at the lines' ends (for tests).
  QStringList shownSeriesKeys() const;
  bool legendShown() const;
  /// Ticks (labelled grid lines) on the axes as drawn now (for tests).
  int xTickCount() const;
  int yTickCount() const;
  /// Solid vertical lines at the measurement window's edges (run.measure:
  /// warm-up end, window end); empty = none. Labelled like the markers
  /// ("warm-up ends", "window ends") when labels are given.
  void setWindowMarkers(const std::vector<double>& xs, const QStringList& labels = {});
  /// Line widths × `scale`: series pens and scatter dots, axis lines, grid
  /// (half as much), markers. 1 on screen; a slide export scales lines with
  /// its text (ChartExportOptions::lineScale).
  void setLineScale(double scale);
  /// A message in the middle of the plot instead of the series (e.g. "no
  /// reasoning requests in this workload"); empty: the series again.
  void setEmptyText(const QString& text);
  QString emptyText() const;
  double lineScale() const;
  /// Categorical x: category i (labelled labels[i]) sits at x = i; the axis
  /// shows the labels instead of numbers and no longer rescales or zooms.
  void setXCategories(const QStringList& labels);
  /// Fixed y range (e.g. 0..1 for fractions); default: from the data.
  void setFixedYRange(double lo, double hi);
  void setLegendVisible(bool on);
  /// Both axes fitted to the data (from round numbers at or below the
  /// smallest x and y to ones at or above the largest) instead of from 0:
  /// charts of a few points over a range (a sweep's rates 8..16). Off by
  /// default (time series start at 0).
  void setFitToData(bool on);
  /// Draw a marker at every point of the line series (charts with few points).
  void setPointsVisible(bool on);
  /// Decimate and push the data to the drawn series.
  void refresh();
  /// Number of points currently drawn (after decimation), for tests.
  int drawnPoints() const;

  // ---- zoom, pan, hover (wheel zooms the x axis around the cursor, drag
  // pans, double-click or the reset button returns to the automatic range).
  // While zoomed, refresh() keeps the view; y follows the visible data.
  /// Show x in [lo, hi] (a user view: kept while data keeps arriving).
  void setViewX(double lo, double hi);
  /// Back to the automatic range.
  void resetView();
  bool zoomed() const;
  /// The drawn axis ranges.
  std::pair<double, double> xRange() const;
  std::pair<double, double> yRange() const;
  /// Where a data value lies in the chart view's coordinates.
  QPoint viewPosOf(QPointF value) const;
  /// Tooltip text for the data point nearest to `viewPos` (within 24 px), or
  /// "" when none is near.
  QString hoverText(QPoint viewPos) const;
  /// The widget that receives the mouse (the chart view's viewport).
  QWidget* plotWidget() const;

  /// Render at exactly `size` logical pixels (times `scale` in the image),
  /// laid out for that size (ticks, legend), always in software (OpenGL
  /// series are drawn too). The one rendering path of every chart image:
  /// File ▸ Export, `servelab --export-charts`, `servelab-cli plot` and
  /// `reproduce`.
  QImage renderImage(QSize size, qreal scale = 1.0);
  /// renderImage as PNG bytes; `meta` goes into the PNG's text chunks
  /// (e.g. the run's seed and fingerprint).
  QByteArray renderPng(QSize size, qreal scale = 1.0, const QMap<QString, QString>& meta = {});
  /// SVG document of the chart at `size`.
  QByteArray renderSvg(QSize size);

  /// Write the chart at `size` (× `scale` pixels) atomically.
  bool exportPng(const QString& path, QSize size = kDefaultExportSize, qreal scale = 2.0,
                 const QMap<QString, QString>& meta = {});
  bool exportSvg(const QString& path, QSize size = kDefaultExportSize);
  bool exportCsv(const QString& path) const;
  static constexpr QSize kDefaultExportSize{960, 600};

signals:
  /// The user zoomed or panned (zoomed = true) or reset the view (false).
  void viewChanged(double lo, double hi, bool zoomed);

protected:
  void contextMenuEvent(QContextMenuEvent* e) override;
  bool eventFilter(QObject* o, QEvent* e) override;
  void changeEvent(QEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

private:
  void applyFonts();
  void updateTitle();
  /// Ticks and legend for the chart's current size.
  void fitToSize();
  void keepTextsWhole();
  void placeMarkerLabels();
  /// The lines' names at their ends where the legend is hidden
  /// (live_chart_keys.cpp): the margin they need, then their places.
  void fitEndLabels(bool legendShown, double plotH, double& plotW);
  void placeEndLabels();
  /// Where a marker label of `box` for the line at scene x goes: free of
  /// `placed` labels and, where possible, of every series' line.
  QRectF freeLabelPlace(double x, QSizeF box, const std::vector<QRectF>& placed) const;
  void placeEmptyText();
  template <class Draw> void renderAt(QSize size, Draw&& draw);
  struct Impl;
  std::unique_ptr<Impl> d;
};

}  // namespace sl::ui
