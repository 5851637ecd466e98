#pragma once
// The plan dialog's chart (ui/plan/plan_window.h): every simulated
// deployment at (cost $/hour, SLO attainment %), the Pareto front as a step
// line through its points, the target as a dashed line and the winner as a
// large labelled marker. Its own Qt Charts view rather than a LiveChart: the
// y axis runs a little past 0 and 100 % so points at full attainment (the
// winner, often) are drawn whole, and the view can start on the front.
#include <QChartView>
#include <QPointF>
#include <QString>

#include <optional>
#include <utility>
#include <vector>

class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace sl::ui {

class PlanChart : public QChartView {
  Q_OBJECT
 public:
  struct Data {
    QString title;
    std::vector<QPointF> simulated;  ///< every simulated candidate
    std::vector<QPointF> front;      ///< the Pareto front, by cost
    double target = 90;              ///< %
    QString targetName;              ///< "target 90 %"
    std::optional<QPointF> winner;
    QString winnerLabel;
  };
  explicit PlanChart(QWidget* parent = nullptr);

  void setData(Data d);
  /// No data: `text` in the middle.
  void clearData(const QString& text);
  const Data& data() const { return data_; }
  /// The front as drawn: across at each point's attainment to the next
  /// (dearer) point's cost, then up to it.
  std::vector<QPointF> stepLine() const;
  /// The series' names and points as drawn (for tests).
  std::vector<std::pair<QString, std::vector<QPointF>>> drawnSeries() const;

  /// Start the x axis on the front: up to 1.5 × the dearest front point (or
  /// the winner) instead of the dearest deployment. Only when that cuts
  /// the axis to under 80 % (zoomUseful()).
  void setZoomToFront(bool on);
  bool zoomToFront() const { return zoom_; }
  bool zoomUseful() const;
  std::pair<double, double> xRange() const;
  /// Where a value lies in the viewport's coordinates.
  QPoint viewPosOf(QPointF value) const;
  /// The winner's label as placed (scene rectangle; empty when none).
  QRectF winnerLabelRect() const;

  QImage renderImage(QSize size, qreal scale = 2.0) const;
  bool exportPng(const QString& path, QSize size = {960, 600}, qreal scale = 2.0) const;
  bool exportSvg(const QString& path, QSize size = {960, 600}) const;

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void rebuild();
  void placeLabels();
  Data data_;
  bool zoom_ = true;
  QString empty_;
  QValueAxis *ax_, *ay_;
  QLineSeries *target_, *step_;
  QScatterSeries *all_, *frontPts_, *winner_;
  QGraphicsSimpleTextItem *winnerText_, *emptyText_;
  QGraphicsRectItem* winnerBack_;  // keeps the label readable over lines and points
};

}  // namespace sl::ui
