#pragma once
// The cluster at a glance: one card per instance in a grid that stays
// readable from 1 to 64 instances (compact cards when space is short). Queues
// are rows of request chips coloured by phase; outlines mark preempted
// (swapped to CPU) and migrating requests. Each card has a GPU KV bar and a
// CPU swap bar (numbers on hover), the running batch size and the role.
// In-flight KV transfers are arrows between cards with a progress dot.
#include <QWidget>

#include <memory>
#include <vector>

namespace sl::ui {

struct LiveFrame;

class ClusterView : public QWidget {
  Q_OBJECT
public:
  explicit ClusterView(QWidget* parent = nullptr);
  void setFrame(std::shared_ptr<const LiveFrame> frame);
  /// Cards drawn in compact mode at the current size (for tests).
  bool compact() const { return compact_; }
  QSize sizeHint() const override { return {720, 420}; }
  QSize minimumSizeHint() const override { return {240, 160}; }

protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

private:
  struct Hit {
    QRect rect;
    QString tip;
  };
  std::vector<QRect> layoutCards(int n, const QRect& area) const;
  void paintCard(QPainter& p, const QRect& r, int index);
  void paintCompactCard(QPainter& p, const QRect& r, int index);
  void paintLegend(QPainter& p, const QRect& r);
  std::shared_ptr<const LiveFrame> frame_;
  std::vector<Hit> hits_;
  bool compact_ = false;
};

}  // namespace sl::ui
