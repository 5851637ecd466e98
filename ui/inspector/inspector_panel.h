#pragma once
// The inspector (50-gui.md "Cluster view"): clicking a request chip shows
// that request's timeline as a coloured bar (queued, prefill, reasoning,
// </think> → first answer token, answering, with preempted and migrating
// intervals over them), its events with times and its metrics; clicking an
// instance card shows the instance's history (KV usage, queue length and
// batch size from the probe samples), its counters and what the running
// policy publishes for it (pool, named fields, latest decisions there); a
// request's events include the policy's decisions about it, named by the
// policy. Data come from the controller's TimelineStore and latest frame,
// re-read by refresh().
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <optional>

#include "engine/snapshot.h"
#include "ui/inspector/inspector_store.h"

class QLabel;
class QStackedWidget;
class QTreeWidget;

namespace sl::ui {

class SimController;

/// Horizontal bar of a request's spans with event ticks.
class TimelineBar : public QWidget {
  Q_OBJECT
public:
  explicit TimelineBar(QWidget* parent = nullptr);
  void setTimeline(const RequestTimeline& t, SimTime now);
  const std::vector<TimelineSpan>& spans() const { return spans_; }
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

protected:
  void paintEvent(QPaintEvent*) override;

private:
  RequestTimeline t_;
  std::vector<TimelineSpan> spans_;
  SimTime from_ = 0, to_ = 1;
};

/// Small line plot of one instance's probe samples.
class HistoryPlot : public QWidget {
  Q_OBJECT
public:
  explicit HistoryPlot(QWidget* parent = nullptr);
  void setHistory(const InstanceHistory& h);
  /// The three strips' "now · max" texts (KV in %, queued, batch), as drawn.
  QStringList summaries() const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

protected:
  void paintEvent(QPaintEvent*) override;

private:
  InstanceHistory h_;
};

class InspectorPanel : public QWidget {
  Q_OBJECT
public:
  enum class Mode { Empty, Request, Instance };
  explicit InspectorPanel(SimController* ctl, QWidget* parent = nullptr);

  void showRequest(std::int64_t id);
  void showInstance(int instance);
  /// Back to the "click something" page (a new run).
  void clear();
  /// Re-read the store (the run moved on).
  void refresh();

  Mode mode() const { return mode_; }
  std::int64_t requestId() const { return requestId_; }
  int instanceId() const { return instance_; }
  QString title() const;
  /// The request page's status line ("in flight · running · 12 of 300 ...").
  QString statusText() const;
  /// Event rows shown (time text, event text), for tests.
  int eventRows() const;
  QString eventText(int row) const;
  const TimelineBar* timelineBar() const { return bar_; }
  const HistoryPlot* historyPlot() const { return plot_; }
  QString metricsText() const;
  QString countersText() const;
  /// The instance page's policy block (pool, published fields, latest
  /// decisions there) and its tooltip (each field's meaning).
  QString policyText() const;
  QString policyToolTip() const;
  /// The instance page's prefix-cache block (HTML; "" when caching is off).
  QString cacheText() const;

protected:
  void changeEvent(QEvent* e) override;  // titles follow the window font (lecture mode)

private:
  void fillRequest(const RequestTimeline& t, SimTime now);
  void fillInstance(const InstanceHistory& h);
  void fillPolicy(const Snapshot& s);
  void fillCache(const Snapshot& s);

  SimController* ctl_;
  Mode mode_ = Mode::Empty;
  std::int64_t requestId_ = -1;
  int instance_ = -1;
  QStackedWidget* pages_ = nullptr;
  QLabel* reqTitle_ = nullptr;
  QLabel* reqStatus_ = nullptr;
  TimelineBar* bar_ = nullptr;
  QLabel* metrics_ = nullptr;
  QTreeWidget* events_ = nullptr;
  QLabel* instTitle_ = nullptr;
  HistoryPlot* plot_ = nullptr;
  QLabel* counters_ = nullptr;
  QLabel* policy_ = nullptr;
  QLabel* cache_ = nullptr;
};

}  // namespace sl::ui
