#include "ui/teaching/tour_guide.h"

#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>

#include "policy/registry.h"

namespace sl::ui {

namespace {

// PASCAL (Cho et al.): what to watch, written from the paper (§II-§V) and
// docs/policies/pascal.md. Sample scenarios: 8 × H100 (KV capped at 50%),
// R1-Distill-Qwen-32B, alpaca-reasoning lengths, Poisson 8 req/s.
Tour pascalTour() {
  Tour t;
  t.id = "pascal";
  t.title = QObject::tr("PASCAL: phase-aware scheduling");
  t.paper = QObject::tr("PASCAL: A Phase-Aware Scheduling Algorithm for Serving Reasoning-based LLMs");
  t.policies = {"oracle", "fcfs", "rr", "pascal", "pascal-nonadaptive"};
  t.steps = {
      {QObject::tr("Two phases: reasoning, then answering"), "pascal-baseline-oracle.json", 4,
       QObject::tr(
           "<p>A reasoning model first writes hidden <b>reasoning</b> tokens (violet chips), then, after "
           "<code>&lt;/think&gt;</code>, the <b>answer</b> the user reads (green).</p>"
           "<p>So its TTFT is prefill <i>plus all the reasoning</i> plus the wait after "
           "<code>&lt;/think&gt;</code>: tens of seconds, not a few hundred milliseconds.</p>"
           "<p><b>Watch:</b> this is the <i>oracle</i>, with unlimited KV memory: nothing waits, "
           "nothing is preempted. It is the reference for the next steps. Click a chip to see its "
           "timeline.</p>")},
      {QObject::tr("FCFS under memory pressure: blocking"), "pascal-baseline-fcfs.json", 4,
       QObject::tr(
           "<p>Now the KV cache is capped at half the GPU (as in the paper's §III). FCFS batches in "
           "arrival order and <b>blocks</b> new requests while memory is full.</p>"
           "<p><b>Watch:</b> the blue KV bars reach 100%; pale (waiting) chips pile up behind long "
           "runners: head-of-line blocking. In the TTFT-vs-reasoning chart, even requests with short "
           "reasoning get a high TTFT (the paper measures up to 5.1× the oracle for 128 reasoning "
           "tokens).</p>")},
      {QObject::tr("Round-robin: no blocking, but preemptions"), "pascal-baseline-rr.json", 4,
       QObject::tr(
           "<p>Round-robin gives each request a {knob:quantum}-token quantum, then sends it to the back of the "
           "queue; when memory is short the tail is <b>preempted</b> and its KV swapped to CPU.</p>"
           "<p><b>Watch:</b> orange outlines (swapped) and the orange CPU bars. Preemption hurts the "
           "<i>reasoning</i> phase (every pause adds to TTFT: up to 1.75× for long reasoning) but the "
           "<i>answering</i> phase tolerates it: the token pacer keeps the stream smooth.</p>")},
      {QObject::tr("PASCAL: reasoning first"), "pascal-phase-aware.json", 4,
       QObject::tr(
           "<p>PASCAL keeps two round-robin queues per instance: <b>reasoning</b> (high priority) and "
           "<b>answering</b> (low). The batch is the longest prefix of <i>reasoning, then "
           "answering</i> that fits, so under memory pressure an answering request is always the "
           "victim before a reasoning one.</p>"
           "<p><b>Watch:</b> each card now shows the two queues. Preempted (orange) chips are mostly "
           "answering ones; reasoning chips keep running. A reasoning request whose KV exceeds "
           "{knob:demote_tokens} tokens is demoted to the answering queue. So far in this run: {preemptions} "
           "preemptions.</p>")},
      {QObject::tr("Migration at </think>"), "pascal-phase-aware.json", 1,
       QObject::tr(
           "<p>When a request crosses <code>&lt;/think&gt;</code>, the instance-level scheduler "
           "(Algorithm 2) picks, among instances whose answering streams are on pace, the one with "
           "the fewest reasoning requests, and <b>migrates</b> the request's KV there. "
           "<i>Adaptive</i>: it stays if its instance has room and the chosen one has not.</p>"
           "<p><b>Watch:</b> magenta arrows carry KV copies between cards (turn on "
           "<i>View ▸ Lecture mode</i> for \"migrated at &lt;/think&gt;\" callouts). Click a "
           "migrating chip: its timeline shows the copy between reasoning and answering.</p>")},
      {QObject::tr("Ablation: migrate whenever Algorithm 2 says so"), "pascal-ablation-nonadaptive.json", 4,
       QObject::tr(
           "<p>PASCAL(NonAdaptive) always migrates when Algorithm 2 picks another instance, even "
           "into a full one.</p>"
           "<p><b>Watch:</b> more arrows and more orange preemptions than in the previous step (so far in "
           "this run: {migrations} migrations, {preemptions} preemptions; compare with step 4's count). Over "
           "a full run its QoE violation rate is the worst of the variants, the same direction as the "
           "paper's Fig. 15. "
           "ServeLab's own comparison (docs/policies/pascal.md) finds a smaller tail-TTFT gain than the "
           "paper; the tour shows the mechanisms, not the paper's numbers.</p>")},
  };
  return t;
}

// Arrow (Wu et al.): why an elastic split of prefill and decode instances
// beats a fixed one under bursts, written from the paper (§2-§5) and
// docs/policies/arrow.md. Sample scenarios: 8 × h800-80g (one TP8 instance
// for the colocated baseline), Llama-3.1-8B, an Azure-code-like burst
// (gamma arrivals, CV 6, long prompts, short answers), SLOs 3 s / 0.1 s.
// The figures quoted are ServeLab's runs of these samples.
Tour arrowTour() {
  Tour t;
  t.id = "arrow";
  t.title = QObject::tr("Arrow: why it flips instances");
  t.paper = QObject::tr("Arrow: Adaptive Scheduling Mechanisms for Disaggregated LLM Inference Architecture");
  t.policies = {"vllm-colocated", "vllm-disaggregated", "static-pd", "arrow"};
  t.steps = {
      {QObject::tr("Colocated: prefill and decode share the GPUs"), "arrow-vllm-colocated-tp8.json", 2,
       QObject::tr(
           "<p>One vLLM instance on all 8 GPUs (TP 8) does both phases: a long <b>prefill</b> (blue "
           "chips: this workload's prompts are code, 1 500 tokens on median) and the short "
           "<b>decodes</b> of the answers share every iteration.</p>"
           "<p><b>Watch:</b> during a burst, prompts queue up and every decoding answer waits for the "
           "prefill chunks batched with it: TTFT and TPOT both miss their SLOs (3 s / 0.1 s). SLO "
           "attainment (both met, rolling) in this run now: {slo}; P95 TTFT so far: {p95_ttft}.</p>")},
      {QObject::tr("Disaggregated, fixed: 1 prefill + 1 decode instance"), "arrow-vllm-disaggregated-tp4.json", 2,
       QObject::tr(
           "<p>Splitting the phases (vLLM-disaggregated: one TP 4 prefill instance hands each request "
           "to one TP 4 decode instance) removes the interference, but the split is <i>fixed</i>.</p>"
           "<p><b>Watch:</b> the badges ({badges}) mark the prefill and the decode instance. In a burst the prefill "
           "card's queue grows while the decode card has room to spare. In this run now: P95 TTFT "
           "{p95_ttft}, SLO attainment {slo}.</p>")},
      {QObject::tr("Eight instances, still a fixed split"), "arrow-static-pd-8gpu.json", 2,
       QObject::tr(
           "<p><code>static-pd</code>: 4 prefill and 4 decode instances (TP 1), requests sent to the "
           "least-loaded one of each pool. More instances, the same rigidity: a prompt burst can only "
           "use half the GPUs.</p>"
           "<p><b>Watch:</b> the <b>P</b> cards' queues during a burst while the <b>D</b> cards idle. "
           "SLO attainment in this run now: {slo}.</p>")},
      {QObject::tr("Arrow: instances change pools"), "arrow-burst-8gpu.json", 2,
       QObject::tr(
           "<p>Arrow's instances are stateless: any can prefill or decode. A new prompt goes to the "
           "prefill instance whose predicted queueing + prefill time (a + b·I + c·I², fitted at start) "
           "meets the TTFT SLO; when none does and decode load is low, a decode instance is "
           "<b>flipped</b> to prefill (<b>D→P</b> while it still finishes its decodes, then <b>P</b>). "
           "When decode falls behind the TPOT SLO, a prefill instance flips the other way "
           "(<b>P→D</b>, then <b>D</b>).</p>"
           "<p><b>Watch:</b> the badges change during the burst (turn on <i>View ▸ Lecture mode</i> for "
           "\"instance flipped\" callouts); the <b>Policy</b> chart tab draws the pool sizes; click a "
           "card: the inspector lists its flips with their reasons (<i>to D→P; prefill-slo</i>). "
           "SLO attainment in this run now: {slo}; compare it with the fixed splits of the previous steps.</p>")},
      {QObject::tr("Hand-offs and the monitor"), "arrow-burst-8gpu.json", 1,
       QObject::tr(
           "<p>After its prefill, a request's KV is copied to a decode instance (an arrow between "
           "cards), chosen by Algorithm 2: in place if its instance is now a decode one, else the "
           "decode instance with the fewest running tokens under <code>max_running_tokens</code>. A "
           "decode instance takes its KV copies one at a time, first come first served.</p>"
           "<p><b>Watch:</b> the <b>KV queue</b> value on the decode cards (copies waiting for it) and "
           "the <b>interval</b> (mean decode iteration) the monitor compares with the TPOT SLO every {knob:monitor_tick_s} s: above it, "
           "a prefill instance is flipped to decode (<i>monitor-tpot</i>).</p>")},
  };
  return t;
}

// LLM self-scheduling: how the served model ranking its own queue beats
// head-of-line blocking, written from the paper (§3-§5) and
// docs/policies/selfsched.md. Sample scenarios: one Qwen3-14B instance on an
// A100-40G (no chunked prefill, swap preemption), the selfsched-math
// workload (short problems, long-tailed answers), Poisson 1 req/s, 300
// requests. The figures quoted are ServeLab's runs of these samples.
Tour selfSchedTour() {
  Tour t;
  t.id = "selfsched";
  t.title = QObject::tr("Self-scheduling: how ranking beats head-of-line blocking");
  t.paper = QObject::tr("LLM self-scheduling: the served model ranks its own queue");
  t.policies = {"fcfs", "oracle-sjf", "selfsched-length-only", "selfsched-rank-only"};
  t.steps = {
      {QObject::tr("FCFS: long answers block short ones"), "selfsched-math-fcfs.json", 8,
       QObject::tr(
           "<p>Math problems are short, but their answers are <b>long-tailed</b>: most take a few hundred "
           "tokens, a few take thousands. FCFS admits requests in arrival order, so a request with a short "
           "answer waits behind every long one that arrived before it.</p>"
           "<p><b>Watch:</b> the pale (waiting) chips pile up while the batch is busy with long answers "
           "(hover a chip: its KV grows for minutes). In this run so far: P95 TTFT {p95_ttft}, while half the "
           "requests get their first token within {p50_ttft}.</p>")},
      {QObject::tr("If the lengths were known: shortest first"), "selfsched-math-oracle-sjf.json", 8,
       QObject::tr(
           "<p><code>oracle-sjf</code> cheats: it knows every answer's true length at arrival and admits the "
           "shortest first. It is the bound no real scheduler reaches.</p>"
           "<p><b>Watch:</b> the queue drains from the short end; hover a chip for its <i>predicted "
           "output</i> (here the true length). P95 TTFT so far: {p95_ttft}.</p>")},
      {QObject::tr("The model ranks its own queue"), "selfsched-math-length-only.json", 4,
       QObject::tr(
           "<p>Self-scheduling asks the served LLM itself: arriving prompts collect into a <b>ranking "
           "batch</b> ({knob:batch_size} requests, or {knob:batch_timeout_s} s), and a <b>rank prompt</b> (the "
           "batch's prompts plus a {knob:template_tokens}-token template) runs on the same GPU. <i>Length-only</i> makes the model answer each request's "
           "expected length in 40 tokens. When the prompt finishes, the batch is ranked and the queue is "
           "served shortest-predicted first.</p>"
           "<p><b>Watch:</b> the dark <b>diamonds</b>: rank prompts doing real prefill and decode work (turn "
           "on <i>View ▸ Lecture mode</i> for \"rank prompt\" callouts). Hover a chip: its rank in its "
           "batch and its predicted length. The prediction is noisy (ServeLab models the model's ranking "
           "quality as noise tuned to the paper's Kendall tau of {knob:target_tau}).</p>"
           "<p>This step runs at 2.5 req/s (the sample: 1 req/s) so that a waiting queue forms within "
           "about 15 s of wall time and the reordering shows. In this run so far: P95 TTFT {p95_ttft}, median "
           "{p50_ttft} (every request first waits for its batch to be ranked).</p>"),
       {"workload.rate=2.5"}},
      {QObject::tr("A weaker ranking: rank-only"), "selfsched-math-rank-only.json", 4,
       QObject::tr(
           "<p><i>Rank-only</i> asks only for the order within the batch (20 output tokens) and ranks less "
           "well (tau {knob:target_tau}): a rank says nothing about other batches, so a long request ranked first in a "
           "batch of long ones still jumps ahead.</p>"
           "<p><b>Watch:</b> hover chips: a rank 0 … 9 within the batch (the noisy length behind it is shown "
           "too, but the scheduler sees only the rank). At 2.5 req/s, as in the previous step, the waiting "
           "queue forms within about 15 s. In this run so far: P95 TTFT {p95_ttft}, median {p50_ttft}.</p>"),
       {"workload.rate=2.5"}},
      {QObject::tr("Anti-starvation"), "selfsched-math-length-only.json", 4,
       QObject::tr(
           "<p>Serving the shortest first can starve the long ones. A request left out of the batch for "
           "{knob:starvation_threshold_steps} iterations in a row is <b>promoted</b> ahead of every ranked "
           "request for {knob:priority_quantum_steps} iterations (at most {knob:max_promotions_per_round} "
           "promotions an iteration).</p>"
           "<p><b>Watch:</b> with <i>View ▸ Lecture mode</i> on, \"promoted: waited too long\" callouts; "
           "the card's <b>promoted</b> count; the <b>Policy</b> chart tab draws rank prompts, requests "
           "waiting for a rank and promotions over time. The knobs (batch size, timeout, the starvation "
           "thresholds, the target tau) are live in the scenario panel. At 2.5 req/s and 4× the first "
           "promotions come within about 10 s of wall time.</p>"),
       {"workload.rate=2.5"}},
  };
  return t;
}

// CascadeInfer: how a request walks down a length-aware pipeline of
// instances, written from the paper (§3-§4) and docs/policies/cascade.md.
// Sample scenarios: 8 × h20-141g in one node, Llama-3.1-8B, ShareGPT-like
// lengths (prompt median 1.7 K, answer median 415), Poisson 16 req/s, 1 500
// requests. The figures quoted are ServeLab's runs of these samples.
Tour cascadeTour() {
  Tour t;
  t.id = "cascade";
  t.title = QObject::tr("CascadeInfer: how a request walks down the pipeline");
  t.paper = QObject::tr("CascadeInfer: length-aware multi-instance pipeline with bid-ask balancing");
  t.policies = {"round-robin", "cascade", "llumnix"};
  t.steps = {
      {QObject::tr("Round-robin: every length on every instance"), "round-robin-sharegpt-h20.json", 4,
       QObject::tr(
           "<p>Eight vLLM-like instances behind a round-robin balancer: each instance batches short and "
           "long sequences together. A decode iteration's attention runs over every sequence in the batch, "
           "and lengths that differ widely waste work (the paper's Fig. 2; ServeLab models it as a "
           "length-heterogeneity factor on decode attention).</p>"
           "<p><b>Watch:</b> the KV bars fill unevenly as long conversations land where they land. Mean "
           "TPOT in this run so far: {mean_tpot}, mean TTFT {mean_ttft}.</p>")},
      {QObject::tr("Stages: instances own length ranges"), "cascade-sharegpt-h20.json", 4,
       QObject::tr(
           "<p>CascadeInfer splits the instances into <b>stages</b> by sequence length (prompt + generated "
           "tokens). The plan comes from a dynamic program over stages, instances and cut points, costed "
           "with a latency model fitted at start-up. A new request goes to the first stage that covers its "
           "prompt.</p>"
           "<p><b>Watch:</b> each card's badge: its stage's length range in tokens (in this run: {badges}); "
           "the field <b>demand</b> under the bars (KV tokens held or on their way). So far: mean TPOT "
           "{mean_tpot}, mean TTFT {mean_ttft}; against the previous step's round-robin, TPOT falls and TTFT "
           "rises, because the first stage takes every short prompt.</p>")},
      {QObject::tr("Hand-over: a sequence outgrows its stage"), "cascade-sharegpt-h20.json", 1,
       QObject::tr(
           "<p>When a sequence reaches its stage's upper bound it is <b>handed over</b> to the next stage by "
           "live migration: its KV is copied in rounds while it keeps decoding, then a short final copy "
           "(at most {knob:migration_cap} such moves per instance at a time).</p>"
           "<p><b>Watch:</b> magenta arrows from a stage to the next; click a moving chip: its timeline "
           "shows the copy. The <b>Policy</b> chart tab draws the hand-overs over time.</p>")},
      {QObject::tr("Bid-ask: who takes the request"), "cascade-sharegpt-h20.json", 1,
       QObject::tr(
           "<p>The sender does not pick the receiver itself: it <b>asks</b> every instance of the next "
           "stage; each <b>bids</b> its load and its earliest start; the sender drops the more loaded half, "
           "keeps the 3 earliest and takes the first reply. The winner queues the request by the sender's "
           "load (the most loaded sender first; a request skipped {knob:starve_limit} times goes next).</p>"
           "<p><b>Watch:</b> with <i>View ▸ Lecture mode</i> on, the lane under the cards says who "
           "\"asked for a receiver\", who sent a \"bid\" and who \"won a bid\"; the cards count "
           "<b>asked</b>, <b>bids</b>, <b>won</b> and <b>inq</b> (won, waiting to receive).</p>")},
      {QObject::tr("Boundaries move; the baseline Llumnix"), "llumnix-sharegpt-h20.json", 4,
       QObject::tr(
           "<p>In CascadeInfer every 5 s each boundary is <b>refined</b> toward the split that minimises the "
           "two stages' latency (smoothed by an EMA), and the plan is redone every 60 s: the Policy tab of "
           "the previous steps draws the boundaries <b>b1</b>, <b>b2</b> … over time.</p>"
           "<p>This step runs the paper's baseline <b>Llumnix</b>: requests go to the instance with the most "
           "free KV, and a live migration moves one from the most to the least loaded when their gap "
           "exceeds {knob:gap_threshold} of the capacity. <b>Watch:</b> fewer, load-driven arrows. So far: mean "
           "TPOT {mean_tpot}, mean TTFT {mean_ttft}.</p>")},
  };
  return t;
}

}  // namespace

const std::vector<Tour>& allTours() {
  static const std::vector<Tour> tours = {pascalTour(), arrowTour(), selfSchedTour(), cascadeTour()};
  return tours;
}

bool tourAvailable(const Tour& t, const QString& samplesDir, QString* why) {
  for (const QString& id : t.policies) {
    const auto& cat = policyCatalog();
    const bool known = std::any_of(cat.begin(), cat.end(), [&](const PolicyInfo& p) { return p.id == id.toStdString(); });
    if (!known) {
      if (why) *why = QObject::tr("policy '%1' is not built").arg(id);
      return false;
    }
  }
  for (const TourStep& s : t.steps)
    if (samplesDir.isEmpty() || !QFileInfo::exists(samplesDir + "/" + s.scenario)) {
      if (why) *why = QObject::tr("sample scenario '%1' not found").arg(s.scenario);
      return false;
    }
  return !t.steps.empty();
}

std::vector<Tour> availableTours(const QString& samplesDir) {
  std::vector<Tour> out;
  for (const Tour& t : allTours())
    if (tourAvailable(t, samplesDir)) out.push_back(t);
  return out;
}

std::optional<Tour> findTour(const QString& id) {
  for (const Tour& t : allTours())
    if (t.id.compare(id, Qt::CaseInsensitive) == 0) return t;
  return std::nullopt;
}

// ------------------------------------------------------------ TourPanel

TourPanel::TourPanel(QWidget* parent) : QWidget(parent) {
  setObjectName("TourPanel");
  auto* l = new QVBoxLayout(this);
  l->setContentsMargins(8, 6, 8, 6);
  // Every label wraps: a long scenario file name must not widen the dock
  // (the cards would shrink from one step to the next).
  header_ = new QLabel;
  header_->setStyleSheet("color: #6B7280;");
  header_->setWordWrap(true);
  title_ = new QLabel;
  title_->setWordWrap(true);
  scenario_ = new QLabel;
  scenario_->setStyleSheet("color: #6B7280;");
  scenario_->setWordWrap(true);
  text_ = new QTextBrowser;
  text_->setOpenExternalLinks(false);
  text_->setFrameShape(QFrame::NoFrame);
  text_->setStyleSheet("QTextBrowser { background: transparent; }");
  auto* buttons = new QHBoxLayout;
  back_ = new QPushButton(tr("◀ Back"));
  next_ = new QPushButton(tr("Next ▶"));
  close_ = new QPushButton(tr("Close"));
  buttons->addWidget(back_);
  buttons->addWidget(next_);
  buttons->addStretch(1);
  buttons->addWidget(close_);
  l->addWidget(header_);
  l->addWidget(title_);
  l->addWidget(scenario_);
  l->addWidget(text_, 1);
  l->addLayout(buttons);
  connect(back_, &QPushButton::clicked, this, [this] {
    if (step_ > 0) emit stepRequested(step_ - 1);
  });
  connect(next_, &QPushButton::clicked, this, [this] {
    if (step_ + 1 < stepCount()) emit stepRequested(step_ + 1);
  });
  connect(close_, &QPushButton::clicked, this, &TourPanel::closeRequested);
  QEvent fontChange(QEvent::FontChange);
  changeEvent(&fontChange);
}

void TourPanel::changeEvent(QEvent* e) {
  if (e->type() == QEvent::FontChange && title_) {
    QFont bold = font();
    bold.setBold(true);
    bold.setPointSizeF(font().pointSizeF() * 1.15);
    title_->setFont(bold);
    // The step's own text follows the window's font (lecture mode enlarges it).
    text_->document()->setDefaultFont(font());
    text_->setFont(font());
    // Back, Next and Close stay whole at any font: the panel is at least as
    // wide as its buttons.
    setMinimumWidth(back_->sizeHint().width() + next_->sizeHint().width() + close_->sizeHint().width() + 40);
  }
  QWidget::changeEvent(e);
}

void TourPanel::setTour(const Tour& t) {
  tour_ = t;
  showStep(0);
}

void TourPanel::showStep(int i) {
  if (tour_.steps.empty()) return;
  step_ = std::clamp(i, 0, stepCount() - 1);
  const TourStep& s = tour_.steps[static_cast<std::size_t>(step_)];
  header_->setText(tr("Guided tour · %1 · step %2 of %3").arg(tour_.id.toUpper()).arg(step_ + 1).arg(stepCount()));
  title_->setText(s.title);
  scenario_->setText(tr("scenario %1 · speed %2×").arg(s.scenario).arg(s.speed, 0, 'g', 3));
  badges_.clear();
  values_.clear();
  fillText();
  back_->setEnabled(step_ > 0);
  next_->setEnabled(step_ + 1 < stepCount());
}

void TourPanel::fillText() {
  if (tour_.steps.empty()) return;
  QString html = tour_.steps[static_cast<std::size_t>(step_)].watch;
  if (html.contains("{badges}")) {
    QStringList quoted;
    for (const QString& b : badges_) quoted << "<i>" + b.toHtmlEscaped() + "</i>";
    html.replace("{badges}", quoted.isEmpty() ? tr("shown once the run starts") : quoted.join(", "));
  }
  // Figures from the run: "{p95_ttft}", "{knob:batch_size}" …
  static const QRegularExpression placeholder(R"(\{([a-z0-9_]+(?::[a-z0-9_]+)?)\})");
  QString out;
  qsizetype last = 0;
  for (auto it = placeholder.globalMatch(html); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    out += html.mid(last, m.capturedStart() - last);
    const QString v = values_.value(m.captured(1));
    out += "<b>" + (v.isEmpty() ? tr("(none yet)") : v.toHtmlEscaped()) + "</b>";
    last = m.capturedEnd();
  }
  html = out + html.mid(last);
  const int scroll = text_->verticalScrollBar() ? text_->verticalScrollBar()->value() : 0;
  text_->setHtml(html);
  if (text_->verticalScrollBar()) text_->verticalScrollBar()->setValue(scroll);
}

void TourPanel::setLiveBadges(const QStringList& badges) {
  if (badges == badges_ || tour_.steps.empty() ||
      !tour_.steps[static_cast<std::size_t>(step_)].watch.contains("{badges}"))
    return;
  badges_ = badges;
  fillText();
}

void TourPanel::setLiveValues(const QMap<QString, QString>& values) {
  if (values == values_ || tour_.steps.empty()) return;
  values_ = values;
  fillText();
}

QString TourPanel::stepTitle() const { return title_->text(); }
QString TourPanel::watchText() const { return text_->toPlainText(); }

}  // namespace sl::ui
