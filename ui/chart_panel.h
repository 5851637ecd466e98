#pragma once
// Charts behind a small interface of our own: Qt Charts is deprecated from
// Qt 6.10 on, so only chart_panel.cpp includes it. Series keep their full data
// (for CSV) and are drawn decimated (min/max per pixel column for lines, one
// point per 2-pixel cell for scatters) with QXYSeries::replace, never append.
#include <QColor>
#include <QPointF>
#include <QString>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "engine/observer.h"
#include "live_run.h"

namespace sl::ui {

struct FinishedPoint;

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
  int addSeries(const QString& name, const QColor& color, SeriesStyle style = SeriesStyle::Line);
  int seriesCount() const;
  void setSeriesData(int series, std::vector<QPointF> points);
  const std::vector<QPointF>& seriesData(int series) const;
  void removeAllSeries();
  /// Vertical dashed lines (e.g. live rate changes) at these x values.
  void setMarkers(const std::vector<double>& xs);
  /// Fixed y range (e.g. 0..1 for fractions); default: from the data.
  void setFixedYRange(double lo, double hi);
  void setLegendVisible(bool on);
  /// Decimate and push the data to the drawn series.
  void refresh();
  /// Number of points currently drawn (after decimation), for tests.
  int drawnPoints() const;

  bool exportPng(const QString& path) const;
  bool exportSvg(const QString& path) const;
  bool exportCsv(const QString& path) const;

protected:
  void contextMenuEvent(QContextMenuEvent* e) override;

private:
  struct Impl;
  std::unique_ptr<Impl> d;
};

/// The charts of a live run, in a grid.
class ChartPanel : public QWidget {
  Q_OBJECT
public:
  explicit ChartPanel(QWidget* parent = nullptr);

  void clear(int instances);
  void addProbes(const std::vector<ProbeSample>& probes);
  void addFinished(const std::vector<FinishedPoint>& points);
  void setChanges(const ChangeLog& changes);
  /// Redraw charts whose data changed (call at most a few times per second).
  void refresh();

  const std::vector<LiveChart*>& charts() const { return charts_; }
  LiveChart* chart(const QString& id) const;
  /// Export every chart as <dir>/<id>.{png,svg,csv}. Returns files written.
  int exportAll(const QString& dir) const;

private:
  void rebuildKvSeries(int instances);
  std::vector<LiveChart*> charts_;
  LiveChart *scatter_ = nullptr, *ttft_ = nullptr, *tpot_ = nullptr, *qoe_ = nullptr, *thru_ = nullptr,
            *kv_ = nullptr;
  std::vector<ProbeSample> probes_;
  std::vector<QPointF> scatterPts_;
  ChangeLog changes_;
  int instances_ = 0;
  bool probesDirty_ = false, scatterDirty_ = false, markersDirty_ = false;
};

}  // namespace sl::ui
