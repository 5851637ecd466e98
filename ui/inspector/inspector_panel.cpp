#include "ui/inspector/inspector_panel.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "engine/request.h"
#include "ui/cluster/policy_view.h"
#include "ui/controller/sim_controller.h"
#include "ui/common/cache_view.h"
#include "ui/common/theme.h"
#include "ui/inspector/moe_split.h"

namespace sl::ui {

namespace {

QColor spanColor(SpanKind k) {
  switch (k) {
    case SpanKind::Queued: return QColor(0xB8, 0xC0, 0xCC);
    case SpanKind::Prefill: return theme::kPrefill;
    case SpanKind::Reasoning: return theme::kReasoning;
    case SpanKind::Transition: return QColor(0xF2, 0xC1, 0x4E);
    case SpanKind::Answering: return theme::kAnswering;
    case SpanKind::Preempted: return theme::kSwapped;
    case SpanKind::Migrating: return theme::kMigrating;
  }
  return theme::kMuted;
}

QString fmtS(double s) {
  if (s < 0) return QStringLiteral("–");
  if (s < 1) return QString::number(s * 1000.0, 'f', s < 0.01 ? 2 : 0) + " ms";
  return QString::number(s, 'f', s < 10 ? 2 : 1) + " s";
}

QString stateName(std::uint8_t s) { return QString::fromUtf8(reqStateName(static_cast<ReqState>(s))); }

// Short enough for a narrow dock; the row's tooltip repeats it.
QString eventLabel(const TimelineEvent& e, const RequestTimeline& t, int nextDst) {
  switch (e.kind) {
    case RequestEvent::Arrived: return QObject::tr("arrived, routed to GPU %1").arg(e.instance);
    case RequestEvent::FirstScheduled: return QObject::tr("first scheduled (prefill)");
    case RequestEvent::Preempted:
      return e.state == static_cast<std::uint8_t>(ReqState::Swapped)
                 ? QObject::tr("preempted: KV to CPU at %1 tok").arg(e.generated)
                 : QObject::tr("preempted: KV dropped at %1 tok").arg(e.generated);
    case RequestEvent::Resumed: return QObject::tr("resumed");
    case RequestEvent::ReasoningEnd: return QObject::tr("</think> after %1 tokens").arg(t.reasoning);
    case RequestEvent::MigrationStart: {
      const QString to = nextDst >= 0 ? QString::number(nextDst) : QStringLiteral("?");
      return t.reasoning > 0 && e.generated >= t.reasoning
                 ? QObject::tr("migration %1 → %2 (at </think>)").arg(e.instance).arg(to)
                 : QObject::tr("migration %1 → %2").arg(e.instance).arg(to);
    }
    case RequestEvent::MigrationEnd: return QObject::tr("migration done, on GPU %1").arg(e.instance);
    case RequestEvent::HandoffStart: return QObject::tr("prefill done: awaits a decode GPU");
    case RequestEvent::Finished: return QObject::tr("finished (%1 tokens)").arg(e.generated);
    case RequestEvent::Aborted: return QObject::tr("aborted: can never fit in memory");
  }
  return QString::fromUtf8(requestEventName(e.kind));
}

}  // namespace

// ------------------------------------------------------------ TimelineBar

TimelineBar::TimelineBar(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QSize TimelineBar::sizeHint() const { return {320, minimumSizeHint().height()}; }
QSize TimelineBar::minimumSizeHint() const {
  const int lh = fontMetrics().height();
  return {200, 34 + lh * 5};  // label, bar, axis, two legend rows
}

void TimelineBar::setTimeline(const RequestTimeline& t, SimTime now) {
  t_ = t;
  spans_ = timelineSpans(t, now);
  from_ = t.arrival;
  to_ = from_ + 1;
  for (const TimelineSpan& s : spans_) to_ = std::max(to_, s.end);
  update();
}

void TimelineBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QFontMetrics fm = fontMetrics();
  const int lh = fm.height();
  const QRect bar(4, lh + 8, width() - 8, 18);
  const double span = static_cast<double>(to_ - from_);
  auto x = [&](SimTime t) { return bar.left() + bar.width() * (static_cast<double>(t - from_) / span); };
  p.setPen(Qt::NoPen);
  p.setBrush(theme::kTrack);
  p.drawRoundedRect(bar, 3, 3);
  for (const TimelineSpan& s : spans_) {
    const bool overlay = s.kind == SpanKind::Preempted || s.kind == SpanKind::Migrating;
    QRectF r(x(s.start), bar.top(), std::max(1.5, x(s.end) - x(s.start)), bar.height());
    if (overlay) r = r.adjusted(0, bar.height() * 0.45, 0, 0);  // lower band over the phase
    p.setBrush(spanColor(s.kind));
    p.drawRect(r);
  }
  // </think> tick.
  if (t_.reasoningEnd >= 0) {
    const double rx = x(t_.reasoningEnd);
    p.setPen(QPen(theme::kText, 1.5));
    p.drawLine(QPointF(rx, bar.top() - 4), QPointF(rx, bar.bottom() + 3));
    p.setFont(font());
    const QString s = QStringLiteral("</think>");
    const double w = fm.horizontalAdvance(s);
    p.drawText(QRectF(std::clamp(rx - w / 2, 0.0, width() - w), 2, w + 2, lh), Qt::AlignCenter, s);
  }
  // Axis: arrival and end, relative seconds.
  p.setPen(theme::kMuted);
  const int ay = bar.bottom() + 4;
  p.drawText(QRect(bar.left(), ay, bar.width(), lh), Qt::AlignLeft | Qt::AlignVCenter,
             tr("arrival t=%1 s").arg(nsToSeconds(from_), 0, 'f', 2));
  p.drawText(QRect(bar.left(), ay, bar.width(), lh), Qt::AlignRight | Qt::AlignVCenter,
             tr("+%1").arg(fmtS(nsToSeconds(to_ - from_))));
  // Legend of the kinds present.
  int lx = bar.left();
  int ly = ay + lh + 2;
  std::vector<SpanKind> kinds;
  for (const TimelineSpan& s : spans_)
    if (std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end()) kinds.push_back(s.kind);
  for (SpanKind k : kinds) {
    QString name = QString::fromUtf8(spanName(k));
    if (k == SpanKind::Transition) name = tr("blocked at </think>");
    const int w = fm.horizontalAdvance(name) + 16;
    if (lx + w > width() && lx > bar.left()) {  // wrap to the next row
      lx = bar.left();
      ly += lh;
    }
    const int yy = ly;
    p.setPen(Qt::NoPen);
    p.setBrush(spanColor(k));
    p.drawRect(QRect(lx, yy + lh / 2 - 4, 8, 8));
    p.setPen(theme::kMuted);
    p.drawText(QRect(lx + 11, yy, w, lh), Qt::AlignLeft | Qt::AlignVCenter, name);
    lx += w + 4;
  }
}

// ------------------------------------------------------------ HistoryPlot

HistoryPlot::HistoryPlot(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}
QSize HistoryPlot::sizeHint() const { return {320, 220}; }
QSize HistoryPlot::minimumSizeHint() const { return {200, 150}; }

void HistoryPlot::setHistory(const InstanceHistory& h) {
  h_ = h;
  update();
}

namespace {
double stripMax(const std::vector<InstanceSample>& s, double (*value)(const InstanceSample&)) {
  double mx = 0;
  for (const InstanceSample& x : s) mx = std::max(mx, value(x));
  return mx;
}
}  // namespace

QStringList HistoryPlot::summaries() const {
  const auto& s = h_.samples;
  if (s.empty()) return {QString(), QString(), QString()};
  auto kv = [](const InstanceSample& x) { return x.kvUsed; };
  auto queued = [](const InstanceSample& x) { return double(x.queued); };
  auto batch = [](const InstanceSample& x) { return double(x.batch); };
  const InstanceSample& last = s.back();
  return {tr("now %1% · max %2%").arg(kv(last) * 100, 0, 'f', 0).arg(stripMax(s, kv) * 100, 0, 'f', 0),
          tr("now %1 · max %2").arg(queued(last), 0, 'f', 0).arg(stripMax(s, queued), 0, 'f', 0),
          tr("now %1 · max %2").arg(batch(last), 0, 'f', 0).arg(stripMax(s, batch), 0, 'f', 0)};
}

void HistoryPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QFontMetrics fm = fontMetrics();
  const int lh = fm.height();
  const auto& s = h_.samples;
  // Three stacked strips: KV use (0..100%), queue length, batch size.
  struct Strip {
    QString name;
    QColor color;
    double (*value)(const InstanceSample&);
    bool percent;
  };
  const Strip strips[] = {
      {tr("GPU KV in use"), theme::kGpuBar, [](const InstanceSample& x) { return x.kvUsed; }, true},
      {tr("queued (waiting + swapped)"), theme::kSwapped, [](const InstanceSample& x) { return double(x.queued); }, false},
      {tr("batch size"), theme::kAnswering, [](const InstanceSample& x) { return double(x.batch); }, false},
  };
  const int n = 3;
  const int stripH = (height() - lh - 4) / n;
  if (s.empty()) {
    p.setPen(theme::kMuted);
    p.drawText(rect(), Qt::AlignCenter, tr("No samples yet: run the simulation"));
    return;
  }
  const double t0 = s.front().timeS, t1 = std::max(s.back().timeS, t0 + 1e-9);
  const QStringList sums = summaries();
  for (int k = 0; k < n; ++k) {
    const Strip& st = strips[k];
    const QRect area(2, k * stripH + lh + 2, width() - 4, stripH - lh - 6);
    // KV is drawn against its capacity (0–100 %), counts against their
    // largest value (at least 1); the label says what the data reached.
    const double mx = st.percent ? 1.0 : std::max(1.0, stripMax(s, st.value));
    p.setPen(theme::kText);
    p.drawText(QRect(area.left(), area.top() - lh - 1, area.width(), lh), Qt::AlignLeft | Qt::AlignVCenter, st.name);
    p.setPen(theme::kMuted);
    p.drawText(QRect(area.left(), area.top() - lh - 1, area.width(), lh), Qt::AlignRight | Qt::AlignVCenter,
               sums[k]);
    p.setPen(Qt::NoPen);
    p.setBrush(theme::kTrack);
    p.drawRect(area);
    QPainterPath path;
    QPolygonF fill;
    fill << QPointF(area.left(), area.bottom());
    for (std::size_t i = 0; i < s.size(); ++i) {
      const double xx = area.left() + area.width() * (s[i].timeS - t0) / (t1 - t0);
      const double yy = area.bottom() - area.height() * std::clamp(st.value(s[i]) / mx, 0.0, 1.0);
      if (i == 0) path.moveTo(xx, yy);
      else path.lineTo(xx, yy);
      fill << QPointF(xx, yy);
    }
    fill << QPointF(area.right(), area.bottom());
    QColor fc = st.color;
    fc.setAlpha(50);
    p.setBrush(fc);
    p.drawPolygon(fill);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(st.color, 1.5));
    p.drawPath(path);
  }
  p.setPen(theme::kMuted);
  p.drawText(QRect(2, height() - lh, width() - 4, lh), Qt::AlignLeft | Qt::AlignVCenter,
             tr("t = %1 s").arg(t0, 0, 'f', 0));
  p.drawText(QRect(2, height() - lh, width() - 4, lh), Qt::AlignRight | Qt::AlignVCenter,
             tr("%1 s").arg(t1, 0, 'f', 0));
}

// ------------------------------------------------------------ InspectorPanel

InspectorPanel::InspectorPanel(SimController* ctl, QWidget* parent) : QWidget(parent), ctl_(ctl) {
  setObjectName("InspectorPanel");
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(8, 6, 8, 6);
  pages_ = new QStackedWidget;
  outer->addWidget(pages_);

  auto* empty = new QLabel(tr("Click a request chip in the cluster view to see its timeline, "
                              "or an instance card to see its history."));
  empty->setWordWrap(true);
  empty->setAlignment(Qt::AlignCenter);
  empty->setStyleSheet("color: #6B7280;");
  pages_->addWidget(empty);

  auto* req = new QWidget;
  auto* rl = new QVBoxLayout(req);
  rl->setContentsMargins(0, 0, 0, 0);
  reqTitle_ = new QLabel;
  reqStatus_ = new QLabel;
  reqStatus_->setStyleSheet("color: #6B7280;");
  reqStatus_->setWordWrap(true);
  bar_ = new TimelineBar;
  metrics_ = new QLabel;
  metrics_->setTextFormat(Qt::RichText);
  metrics_->setWordWrap(true);
  events_ = new QTreeWidget;
  events_->setColumnCount(3);
  events_->setHeaderLabels({tr("time (s)"), tr("GPU"), tr("event")});
  events_->setRootIsDecorated(false);
  events_->setUniformRowHeights(true);
  events_->setAlternatingRowColors(true);
  events_->header()->setStretchLastSection(true);
  events_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  events_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  rl->addWidget(reqTitle_);
  rl->addWidget(reqStatus_);
  rl->addWidget(bar_);
  rl->addWidget(metrics_);
  events_->setMinimumHeight(fontMetrics().height() * 8);
  rl->addWidget(events_, 1);
  pages_->addWidget(req);

  auto* inst = new QWidget;
  auto* il = new QVBoxLayout(inst);
  il->setContentsMargins(0, 0, 0, 0);
  instTitle_ = new QLabel;
  plot_ = new HistoryPlot;
  counters_ = new QLabel;
  counters_->setTextFormat(Qt::RichText);
  policy_ = new QLabel;
  policy_->setTextFormat(Qt::RichText);
  policy_->setWordWrap(true);
  il->addWidget(instTitle_);
  il->addWidget(counters_);
  il->addWidget(policy_);
  cache_ = new QLabel;  // the prefix cache (hidden when caching is off)
  cache_->setTextFormat(Qt::RichText);
  cache_->setVisible(false);
  il->addWidget(cache_);
  il->addWidget(new moesplit::MoeSplitLabel);  // MoE: the latest step's split (moe_split.h)
  il->addWidget(plot_, 1);
  pages_->addWidget(inst);
  QEvent fontChange(QEvent::FontChange);
  changeEvent(&fontChange);
}

void InspectorPanel::changeEvent(QEvent* e) {
  if (e->type() == QEvent::FontChange && reqTitle_ && instTitle_) {
    QFont bold = font();
    bold.setBold(true);
    bold.setPointSizeF(font().pointSizeF() * 1.15);
    reqTitle_->setFont(bold);
    instTitle_->setFont(bold);
  }
  QWidget::changeEvent(e);
}

void InspectorPanel::showRequest(std::int64_t id) {
  mode_ = Mode::Request;
  requestId_ = id;
  instance_ = -1;
  ctl_->timelines().setWatched(id);
  ctl_->refreshWatched();  // its token times as of now, on the next frame
  pages_->setCurrentIndex(1);
  refresh();
}

void InspectorPanel::showInstance(int instance) {
  mode_ = Mode::Instance;
  instance_ = instance;
  requestId_ = -1;
  ctl_->timelines().setWatched(-1);
  pages_->setCurrentIndex(2);
  refresh();
}

void InspectorPanel::clear() {
  mode_ = Mode::Empty;
  requestId_ = -1;
  instance_ = -1;
  ctl_->timelines().setWatched(-1);
  pages_->setCurrentIndex(0);
}

void InspectorPanel::refresh() {
  const SimTime now = ctl_->latest()->snapshot.now;
  if (mode_ == Mode::Request) {
    if (ctl_->timelines().watched() != requestId_) ctl_->timelines().setWatched(requestId_);
    if (auto t = ctl_->timelines().request(requestId_)) {
      // Ranks arrive when a rank prompt finishes, and tokens between the
      // request's own events; the worker refreshes the watched request only
      // while it runs, so a request picked while paused would show its
      // progress at its last event: the latest snapshot's chip is current.
      for (const InstanceSnapshot& in : ctl_->latest()->snapshot.instances)
        for (const QueueSnapshot& q : in.queues)
          for (const RequestChip& c : q.requests)
            if (c.id == requestId_ && !c.synthetic) {
              t->rank = c.rank;
              t->predicted = c.predicted;
              if (!t->finished && c.generated > t->generated) {
                t->generated = c.generated;
                t->state = c.state;
              }
            }
      fillRequest(*t, now);
    } else {
      reqTitle_->setText(tr("Request #%1").arg(requestId_));
      reqStatus_->setText(tr("No timeline kept for this request (finished long ago)."));
      events_->clear();
      metrics_->clear();
    }
  } else if (mode_ == Mode::Instance) {
    InstanceHistory h;
    h.id = instance_;
    if (auto got = ctl_->timelines().instance(instance_)) h = *got;
    fillInstance(h);
    fillPolicy(ctl_->latest()->snapshot);
    fillCache(ctl_->latest()->snapshot);
    findChild<moesplit::MoeSplitLabel*>()->fill(ctl_->latest()->snapshot, instance_, ctl_->scenario());
  }
}

void InspectorPanel::fillRequest(const RequestTimeline& t, SimTime now) {
  reqTitle_->setText(tr("Request #%1").arg(t.id));
  const Phase phase = t.generated < t.reasoning ? Phase::Reasoning : Phase::Answering;
  reqStatus_->setText(t.finished ? tr("finished")
                                 : tr("in flight · %1 · %2 of %3 output tokens")
                                       .arg(stateName(t.state))
                                       .arg(t.generated)
                                       .arg(t.reasoning + t.answer) +
                                       (t.firstToken >= 0 ? QString(" · ") + phaseName(phase) : QString()));
  bar_->setTimeline(t, now);

  QString path;
  for (int i : t.instances())  // "GPU 3 → 5": named as the cards are, short enough for the dock
    path += path.isEmpty() ? tr("GPU %1").arg(i) : QString::fromUtf8(" → %1").arg(i);
  int preempt = 0, migr = 0;
  for (const TimelineEvent& e : t.events) {
    preempt += e.kind == RequestEvent::Preempted;
    migr += e.kind == RequestEvent::MigrationEnd;
  }
  double ttft = t.firstVisible >= 0 ? nsToSeconds(t.firstVisible - t.arrival) : -1;
  double tpot = -1, qoe = -1, queueing = t.firstScheduled >= 0 ? nsToSeconds(t.firstScheduled - t.arrival) : -1;
  double ttfat = t.reasoning > 0 && t.reasoningEnd >= 0 && t.firstVisible >= 0
                     ? nsToSeconds(t.firstVisible - t.reasoningEnd) : -1;
  double e2e = -1;
  if (t.record) {
    ttft = t.record->ttft().value_or(-1);
    tpot = t.record->tpot().value_or(-1);
    qoe = t.record->qoe;
    e2e = t.record->e2e().value_or(-1);
    preempt = t.record->preemptions;
    migr = t.record->migrations;
  }
  // Key/value pairs, two per row.
  auto cell = [](const QString& k, const QString& v) {
    return QString("<td style='color:#6B7280; padding-right:6px'>%1</td><td style='padding-right:12px'><b>%2</b></td>")
        .arg(k, v);
  };
  const QString na = QStringLiteral("–");
  QString table;
  table += "<tr>" + cell(tr("TTFT"), fmtS(ttft)) + cell(tr("input"), QString::number(t.input)) + "</tr>";
  table += "<tr>" + cell(tr("TPOT"), fmtS(tpot)) + cell(tr("reasoning"), QString::number(t.reasoning)) + "</tr>";
  table += "<tr>" + cell(tr("QoE"), qoe >= 0 ? QString::number(qoe, 'f', 3) : na) +
          cell(tr("answer"), QString::number(t.answer)) + "</tr>";
  table += "<tr>" + cell(tr("E2E"), fmtS(e2e)) + cell(tr("queueing"), fmtS(queueing)) + "</tr>";
  table += "<tr>" + cell(tr("preempted"), QString::number(preempt)) + cell(tr("think→answer"), fmtS(ttfat)) + "</tr>";
  table += "<tr>" + cell(tr("migrated"), QString::number(migr)) +
          cell(tr("ran on"), path.isEmpty() ? na : path) + "</tr>";
  if (t.rank >= 0 || t.predicted >= 0)  // set by a ranking policy (self-scheduling, oracle-sjf)
    table += "<tr>" + cell(tr("rank"), t.rank >= 0 ? tr("%1 in its batch").arg(t.rank) : na) +
             cell(tr("predicted"), t.predicted >= 0 ? tr("%1 tokens").arg(t.predicted) : na) + "</tr>";
  if (t.cachedTokens >= 0)  // prefix caching on, admitted: the prompt tokens its first prefill skipped
    table += "<tr>" + cell(tr("cached prompt"), tr("%1 of %2 tokens").arg(t.cachedTokens).arg(t.input)) + "</tr>";
  metrics_->setText("<table style='white-space:nowrap'>" + table + "</table>");

  // Events plus the token milestones that are not engine events.
  struct Row {
    SimTime time;
    int instance;
    QString text;
    int rank = 2;  // at equal times: arrival, then the policy's decision, then the rest
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    int nextDst = -1;
    for (std::size_t j = i + 1; j < t.events.size() && nextDst < 0; ++j)
      if (t.events[j].kind == RequestEvent::MigrationEnd) nextDst = t.events[j].instance;
    rows.push_back({t.events[i].time, t.events[i].instance, eventLabel(t.events[i], t, nextDst),
                    t.events[i].kind == RequestEvent::Arrived ? 0 : 2});
  }
  if (t.firstToken >= 0) rows.push_back({t.firstToken, -1, tr("first output token")});
  if (t.reasoning > 0 && t.firstVisible >= 0)
    rows.push_back({t.firstVisible, -1, tr("first answer token (TTFT)")});
  // The policy's decisions about it, in the policy's own words.
  for (const TimelineDecision& d : t.decisions) {
    const QString reason = QString::fromStdString(d.reason);
    QString text;
    if (!d.boundary || d.from < 0) text = tr("policy: placed on GPU %1").arg(d.instance);
    else if (d.from == d.instance) text = tr("policy: stays on GPU %1").arg(d.instance);
    else text = tr("policy: GPU %1 → GPU %2").arg(d.from).arg(d.instance);
    if (!reason.isEmpty()) text += " · " + reason;
    rows.push_back({d.time, d.instance, text, 1});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.time != b.time ? a.time < b.time : a.rank < b.rank; });
  if (t.droppedEvents > 0) rows.push_back({now, -1, tr("(%1 more events not kept)").arg(t.droppedEvents)});
  events_->setUpdatesEnabled(false);
  events_->clear();
  for (const Row& r : rows) {
    auto* item = new QTreeWidgetItem(
        {QString::number(nsToSeconds(r.time), 'f', 3), r.instance >= 0 ? QString::number(r.instance) : QString(), r.text});
    item->setTextAlignment(0, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(2, r.text);
    if (r.instance < 0) item->setForeground(2, theme::kMuted);
    events_->addTopLevelItem(item);
  }
  events_->setUpdatesEnabled(true);
}

void InspectorPanel::fillInstance(const InstanceHistory& h) {
  instTitle_->setText(tr("GPU %1").arg(h.id));
  auto cell = [](const QString& k, qint64 v) {
    return QString("<td style='color:#6B7280; padding-right:6px'>%1</td><td style='padding-right:14px'><b>%2</b></td>")
        .arg(k).arg(v);
  };
  counters_->setText(QString("<table><tr>%1%2</tr><tr>%3%4</tr><tr>%5%6</tr></table>")
                         .arg(cell(tr("requests served"), h.served), cell(tr("routed here"), h.arrivals),
                              cell(tr("preemptions"), h.preemptions), cell(tr("role changes"), h.roleChanges),
                              cell(tr("migrations out"), h.migrationsOut), cell(tr("migrations in"), h.migrationsIn)));
  plot_->setHistory(h);
}

void InspectorPanel::fillPolicy(const Snapshot& s) {
  // What the running policy publishes for this instance: its pool, its
  // named fields (hover: what each means), its latest decisions here.
  namespace pv = policyview;
  if (instance_ < 0 || static_cast<std::size_t>(instance_) >= s.instances.size()) {
    policy_->clear();
    policy_->setToolTip({});
    return;
  }
  const InstanceSnapshot& in = s.instances[static_cast<std::size_t>(instance_)];
  QString html;
  const QString poolRole = pv::poolAndRoleText(in);
  if (!poolRole.isEmpty()) html += "<p style='margin:0'>" + poolRole.toHtmlEscaped() + "</p>";
  if (!in.policyFields.empty()) {
    html += "<table>";
    for (const PolicyField& f : in.policyFields)
      html += QString("<tr><td style='color:#6B7280; padding-right:6px'>%1</td><td><b>%2</b></td></tr>")
                  .arg(QString::fromStdString(f.label).toHtmlEscaped(), pv::valueWithUnit(f).toHtmlEscaped());
    html += "</table>";
  }
  QStringList decisions;
  for (auto it = s.recentDecisions.rbegin(); it != s.recentDecisions.rend() && decisions.size() < 5; ++it)
    if (pv::decisionInvolves(*it, instance_)) {
      // "59.89 s  #457 GPU 2 → GPU 5", then the policy's reason on its own line.
      DecisionSnapshot bare = *it;
      bare.reason.clear();
      QString line = QString("%1 s &nbsp;%2").arg(nsToSeconds(it->decision.time), 0, 'f', 2)
                         .arg(pv::decisionText(bare).toHtmlEscaped());
      if (!it->reason.empty())
        line += "<br><span style='color:#6B7280'>&nbsp;&nbsp;&nbsp;" +
                QString::fromStdString(it->reason).toHtmlEscaped() + "</span>";
      decisions << line;
    }
  if (!decisions.isEmpty())
    html += "<p style='margin-top:4px; margin-bottom:0'><span style='color:#6B7280'>" +
            tr("latest policy decisions here") + "</span><br>" + decisions.join("<br>") + "</p>";
  policy_->setText(html);
  policy_->setToolTip(pv::fieldsTooltip(in.policyFields));
}

void InspectorPanel::fillCache(const Snapshot& s) {
  // The instance's prefix cache: occupancy (GPU, CPU tier) and hit rate so far.
  const bool known = instance_ >= 0 && static_cast<std::size_t>(instance_) < s.instances.size();
  const QString html = known ? cacheview::inspectorHtml(s.instances[static_cast<std::size_t>(instance_)].cache) : QString();
  cache_->setText(html);
  cache_->setVisible(!html.isEmpty());
  cache_->setToolTip(html.isEmpty() ? QString()
                                    : tr("Prefix cache: hit rate = prompt tokens served from the cache / prompt tokens "
                                         "of first admissions here; GPU cached: blocks cached on the GPU, the free ones "
                                         "(no request uses them) are the KV bar's teal band; CPU tier: blocks held / "
                                         "capacity, loaded: blocks loaded back on a hit; tokens skipped: prompt tokens "
                                         "not prefilled / prompt tokens; evicted: GPU blocks evicted"));
}

QString InspectorPanel::cacheText() const { return cache_->text(); }

QString InspectorPanel::statusText() const { return reqStatus_->text(); }

QString InspectorPanel::title() const {
  switch (mode_) {
    case Mode::Request: return reqTitle_->text();
    case Mode::Instance: return instTitle_->text();
    default: return {};
  }
}

int InspectorPanel::eventRows() const { return events_->topLevelItemCount(); }
QString InspectorPanel::eventText(int row) const {
  const QTreeWidgetItem* it = events_->topLevelItem(row);
  return it ? it->text(2) : QString();
}
QString InspectorPanel::metricsText() const { return metrics_->text(); }
QString InspectorPanel::countersText() const { return counters_->text(); }
QString InspectorPanel::policyText() const { return policy_->text(); }
QString InspectorPanel::policyToolTip() const { return policy_->toolTip(); }

}  // namespace sl::ui
