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
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/observer.h"
#include "engine/simulator.h"
#include "engine/snapshot.h"
#include "metrics/request_record.h"
#include "policy/registry.h"
#include "run/run.h"
#include "scenario/scenario_io.h"

namespace sl::ui {

namespace {

// How the steps keep their word (issue 50): each step's sample, rate,
// request count and speed are chosen so that what the text describes shows
// within 30 s of wall time and stays on screen for at least a minute more;
// every figure the text quotes is the run's own ("{p95_ttft}"); a contrast
// with another step is that step's run taken to the same simulated time
// ("{vs:p95_ttft}", TourStep::baseline), and the word that says which way it
// goes ("lower", "higher") comes from the two figures, never typed. The
// claims are the contrasts each step names; tests/ui/test_tour_claims.cpp
// checks them against the runs.
using Claim = TourClaim;
constexpr Claim::Kind kGreater = Claim::Kind::Greater;
constexpr Claim::Kind kLess = Claim::Kind::Less;
constexpr Claim::Kind kAtMost = Claim::Kind::AtMost;

// PASCAL (Cho et al.): what to watch, written from the paper (§II-§V) and
// docs/policies/pascal.md. Sample scenarios: 8 × H100 (KV capped at 50%),
// R1-Distill-Qwen-32B, alpaca-reasoning lengths, Poisson 8 req/s.
Tour pascalTour() {
  Tour t;
  t.id = "pascal";
  t.title = QObject::tr("PASCAL: phase-aware scheduling");
  t.paper = QObject::tr("PASCAL: A Phase-Aware Scheduling Algorithm for Serving Reasoning-based LLMs");
  t.policies = {"oracle", "fcfs", "rr", "pascal", "pascal-nonadaptive"};
  // The samples' 1 000 requests arrive in 125 s and drain soon after; the
  // tour runs 4 000 so that load keeps coming for 90 s of wall time at 4×.
  const QStringList longer = {"workload.requests=4000"};
  t.steps = {
      {QObject::tr("Two phases: reasoning, then answering"), "pascal-baseline-oracle.json", 4,
       QObject::tr(
           "<p>A reasoning model first writes hidden <b>reasoning</b> tokens (violet chips), then, after "
           "<code>&lt;/think&gt;</code>, the <b>answer</b> the user reads (green).</p>"
           "<p>So its TTFT is prefill <i>plus all the reasoning</i> plus the wait after "
           "<code>&lt;/think&gt;</code>: seconds, not a few hundred milliseconds (median TTFT so far in this "
           "run: {p50_ttft}).</p>"
           "<p><b>Watch:</b> this is the <i>oracle</i>, with unlimited KV memory: nothing is preempted "
           "({preemptions} preemptions so far). It is the reference for the next steps. Click a chip to see "
           "its timeline.</p>"),
       longer},
      {QObject::tr("FCFS under memory pressure: blocking"), "pascal-baseline-fcfs.json", 4,
       QObject::tr(
           "<p>Now the KV cache is capped at half the GPU (as in the paper's §III). FCFS batches in "
           "arrival order and <b>blocks</b> new requests while memory is full.</p>"
           "<p><b>Watch:</b> the blue KV bars reach 100%; pale (waiting) chips pile up behind long "
           "runners: head-of-line blocking. Against step 1's oracle run alongside: requests waiting now "
           "{vs:waiting}; P95 TTFT so far {vs:p95_ttft} (a blocked request counts once it has finished). In "
           "the TTFT-vs-reasoning chart, even requests with short reasoning get a high TTFT (the paper "
           "measures up to 5.1× the oracle for 128 reasoning tokens).</p>"),
       longer},
      {QObject::tr("Round-robin: no blocking, but preemptions"), "pascal-baseline-rr.json", 4,
       QObject::tr(
           "<p>Round-robin gives each request a {knob:quantum}-token quantum, then sends it to the back of the "
           "queue; when memory is short the tail is <b>preempted</b> and its KV swapped to CPU.</p>"
           "<p><b>Watch:</b> orange outlines (swapped) and the orange CPU bars ({preemptions} preemptions so "
           "far). Preemption hurts the <i>reasoning</i> phase (every pause adds to TTFT: up to 1.75× for long "
           "reasoning) but the <i>answering</i> phase tolerates it: the token pacer keeps the stream smooth. "
           "Against step 2's FCFS run alongside: requests waiting now {vs:waiting}; P95 TTFT so far "
           "{vs:p95_ttft}.</p>"),
       longer},
      {QObject::tr("PASCAL: reasoning first"), "pascal-phase-aware.json", 4,
       QObject::tr(
           "<p>PASCAL keeps two round-robin queues per instance: <b>reasoning</b> (high priority) and "
           "<b>answering</b> (low). The batch is the longest prefix of <i>reasoning, then "
           "answering</i> that fits, so under memory pressure an answering request is always the "
           "victim before a reasoning one.</p>"
           "<p><b>Watch:</b> each card now shows the two queues. Preempted (orange) chips are mostly "
           "answering ones; reasoning chips keep running. A reasoning request whose KV exceeds "
           "{knob:demote_tokens} tokens is demoted to the answering queue. So far in this run: {preemptions} "
           "preemptions; against step 3's round-robin run alongside, P95 TTFT {vs:p95_ttft}.</p>"),
       longer},
      {QObject::tr("Migration at </think>"), "pascal-phase-aware.json", 1,
       QObject::tr(
           "<p>When a request crosses <code>&lt;/think&gt;</code>, the instance-level scheduler "
           "(Algorithm 2) picks, among instances whose answering streams are on pace, the one with "
           "the fewest reasoning requests, and <b>migrates</b> the request's KV there. "
           "<i>Adaptive</i>: it stays if its instance has room and the chosen one has not.</p>"
           "<p><b>Watch:</b> magenta arrows carry KV copies between cards ({migrations} migrations so far; "
           "<lecture-off>turn on <i>View ▸ Lecture mode</i> for \"migrated at &lt;/think&gt;\" "
           "callouts</lecture-off><lecture-on>the lane under the cards calls out \"migrated at "
           "&lt;/think&gt;\"</lecture-on>). Click a migrating chip: its timeline shows the copy between "
           "reasoning and answering.</p>"),
       longer},
      {QObject::tr("Ablation: migrate whenever Algorithm 2 says so"), "pascal-ablation-nonadaptive.json", 4,
       QObject::tr(
           "<p>PASCAL(NonAdaptive) always migrates when Algorithm 2 picks another instance, even "
           "into a full one.</p>"
           "<p><b>Watch:</b> the arrows and the orange preemptions, against step 4's adaptive PASCAL run "
           "alongside: migrations {vs:migrations}; preemptions {vs:preemptions}. Over a full run its QoE "
           "violation rate is the worst of the variants, the same direction as the paper's Fig. 15. "
           "ServeLab's own comparison (docs/policies/pascal.md) finds a smaller tail-TTFT gain than the "
           "paper; the tour shows the mechanisms, not the paper's numbers.</p>"),
       longer},
  };
  t.steps[0].claims = {{kGreater, "p50_ttft", "1"}, {kLess, "preemptions", "1"}};
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kGreater, "waiting", "base:waiting"}, {kGreater, "waiting", "10"}};
  t.steps[2].baseline = 1;
  t.steps[2].claims = {{kGreater, "preemptions", "0"}};
  t.steps[3].baseline = 2;
  t.steps[3].claims = {{kGreater, "preemptions", "0"}};
  t.steps[4].claims = {{kGreater, "migrations", "0"}};
  t.steps[5].baseline = 3;
  t.steps[5].claims = {{kGreater, "migrations", "base:migrations"}};
  return t;
}

// Arrow (Wu et al.): why an elastic split of prefill and decode instances
// beats a fixed one under bursts, written from the paper (§2-§5) and
// docs/policies/arrow.md. Sample scenarios: 8 × h800-80g (one TP8 instance
// for the colocated baseline), Llama-3.1-8B, an Azure-code-like burst
// (gamma arrivals, CV 6, long prompts, short answers), SLOs 3 s / 0.1 s.
// The samples' 1 500 requests arrive in 19 s at 80 req/s: the tour runs
// 5 000 of them at 40 req/s and 1×, so that bursts keep coming and going for
// more than 90 s of wall time (at 80 req/s every fixed split stays overloaded
// and every SLO attainment reads 0).
Tour arrowTour() {
  Tour t;
  t.id = "arrow";
  t.title = QObject::tr("Arrow: why it flips instances");
  t.paper = QObject::tr("Arrow: Adaptive Scheduling Mechanisms for Disaggregated LLM Inference Architecture");
  t.policies = {"vllm-colocated", "vllm-disaggregated", "static-pd", "arrow"};
  const QStringList longer = {"workload.requests=7000", "workload.arrival.rate=60"};
  t.steps = {
      {QObject::tr("Colocated: prefill and decode share the GPUs"), "arrow-vllm-colocated-tp8.json", 1,
       QObject::tr(
           "<p>One vLLM instance on all 8 GPUs (TP 8) does both phases: a long <b>prefill</b> (blue "
           "chips: this workload's prompts are code, 1 500 tokens on median) and the short "
           "<b>decodes</b> of the answers share every iteration.</p>"
           "<p><b>Watch:</b> during a burst, prompts queue up ({waiting} waiting now) and every decoding "
           "answer waits for the prefill chunks batched with it. The SLOs are 3 s (TTFT) and 0.1 s (TPOT); "
           "in this run so far: P95 TTFT {p95_ttft}, SLO attainment (both met, rolling) {slo}.</p>"),
       longer},
      {QObject::tr("Disaggregated, fixed: 1 prefill + 1 decode instance"), "arrow-vllm-disaggregated-tp4.json", 1,
       QObject::tr(
           "<p>Splitting the phases (vLLM-disaggregated: one TP 4 prefill instance hands each request "
           "to one TP 4 decode instance) removes the interference, but the split is <i>fixed</i>.</p>"
           "<p><b>Watch:</b> the badges ({badges}) mark the prefill and the decode instance. In a burst the prefill "
           "card's queue fills while the decode card has room to spare. Against step 1's colocated instance "
           "run alongside: mean TPOT {vs:mean_tpot}; P95 TTFT {vs:p95_ttft}; SLO attainment {vs:slo}.</p>"),
       longer},
      {QObject::tr("Eight instances, still a fixed split"), "arrow-static-pd-8gpu.json", 1,
       QObject::tr(
           "<p><code>static-pd</code>: 4 prefill and 4 decode instances (TP 1), requests sent to the "
           "least-loaded one of each pool. More instances, the same rigidity: a prompt burst can only "
           "use half the GPUs.</p>"
           "<p><b>Watch:</b> the <b>P</b> cards' queues during a burst while the <b>D</b> cards idle. "
           "Against step 2's 1 + 1 split: SLO attainment {vs:slo}; P95 TTFT {vs:p95_ttft}.</p>"),
       longer},
      {QObject::tr("Arrow: instances change pools"), "arrow-burst-8gpu.json", 1,
       QObject::tr(
           "<p>Arrow's instances are stateless: any can prefill or decode. A new prompt goes to the "
           "prefill instance whose predicted queueing + prefill time (a + b·I + c·I², fitted at start) "
           "meets the TTFT SLO; when none does and decode load is low, a decode instance is "
           "<b>flipped</b> to prefill (<b>D→P</b> while it still finishes its decodes, then <b>P</b>). "
           "When decode misses the TPOT SLO, a prefill instance flips the other way "
           "(<b>P→D</b>, then <b>D</b>).</p>"
           "<p><b>Watch:</b> the badges change during the burst (<lecture-off>turn on <i>View ▸ Lecture "
           "mode</i> for \"instance flipped\" callouts</lecture-off><lecture-on>\"instance flipped\" is called "
           "out under the cards</lecture-on>); the <b>Policy</b> chart tab draws the pool sizes; click a "
           "card: the inspector lists its flips with their reasons (<i>to D→P; prefill-slo</i>). "
           "Against step 3's fixed 4 + 4 split run alongside: SLO attainment {vs:slo}; P95 TTFT "
           "{vs:p95_ttft}.</p>"),
       longer},
      {QObject::tr("Hand-offs and the monitor"), "arrow-burst-8gpu.json", 1,
       QObject::tr(
           "<p>After its prefill, a request's KV is copied to a decode instance (an arrow between "
           "cards), chosen by Algorithm 2: in place if its instance is now a decode one, else the "
           "decode instance with the fewest running tokens under <code>max_running_tokens</code>. A "
           "decode instance takes its KV copies one at a time, first come first served.</p>"
           "<p><b>Watch:</b> the <b>KV queue</b> value on the decode cards (copies waiting for it) and "
           "the <b>interval</b> (mean decode iteration) the monitor compares with the TPOT SLO every {knob:monitor_tick_s} s: above it, "
           "a prefill instance is flipped to decode (<i>monitor-tpot</i>). The longest interval on a card "
           "now: {fieldmax:interval}, against the SLO's {knob:tpot_slo_s} s.</p>"),
       longer},
  };
  t.steps[0].claims = {{kGreater, "p95_ttft", "3"}, {kLess, "slo", "0.5"}};
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kLess, "mean_tpot", "base:mean_tpot"}};
  t.steps[2].baseline = 1;
  t.steps[2].claims = {{kGreater, "slo", "base:slo"}};
  t.steps[3].baseline = 2;
  t.steps[3].claims = {{kGreater, "slo", "base:slo"}};
  t.steps[4].claims = {{kGreater, "fieldmax:interval", "0"}};
  return t;
}

// LLM self-scheduling: how the served model ranking its own queue beats
// head-of-line blocking, written from the paper (§3-§5) and
// docs/policies/selfsched.md. Sample scenarios: one Qwen3-14B instance on an
// A100-40G (no chunked prefill, swap preemption), the selfsched-math
// workload (short problems, long-tailed answers), Poisson 1 req/s, 300
// requests. At 1 req/s FCFS's blocking shows only after 300-600 simulated
// seconds: every step runs at 2.5 req/s (2 400 requests), steps 1 and 2 at
// 8× where FCFS's queue and its tail TTFT show within 30 s of wall time, the
// ranking steps at 4× where the rank prompts can be followed.
Tour selfSchedTour() {
  Tour t;
  t.id = "selfsched";
  t.title = QObject::tr("Self-scheduling: how ranking beats head-of-line blocking");
  t.paper = QObject::tr("LLM self-scheduling: the served model ranks its own queue");
  t.policies = {"fcfs", "oracle-sjf", "selfsched-length-only", "selfsched-rank-only"};
  const QStringList faster = {"workload.arrival.rate=2.5", "workload.requests=2400"};
  t.steps = {
      {QObject::tr("FCFS: long answers block short ones"), "selfsched-math-fcfs.json", 8,
       QObject::tr(
           "<p>Math problems are short, but their answers are <b>long-tailed</b>: most take a few hundred "
           "tokens, a few take thousands. FCFS admits requests in arrival order, so a request with a short "
           "answer waits behind every long one that arrived before it.</p>"
           "<p><b>Watch:</b> the pale (waiting) chips pile up while the batch is busy with long answers "
           "({waiting} waiting now; hover a chip: its KV grows for minutes). In this run so far: P95 TTFT "
           "{p95_ttft}, while half the requests get their first token within {p50_ttft}: the tail is "
           "{tail_ratio} the median.</p>"
           "<p>The tour runs these steps at 2.5 req/s (the samples: 1 req/s, where the blocking takes 5 to "
           "10 simulated minutes to build up).</p>"),
       faster},
      {QObject::tr("If the lengths were known: shortest first"), "selfsched-math-oracle-sjf.json", 8,
       QObject::tr(
           "<p><code>oracle-sjf</code> cheats: it knows every answer's true length at arrival and admits the "
           "shortest first. It is the bound no real scheduler reaches.</p>"
           "<p><b>Watch:</b> the queue drains from the short end; hover a chip for its <i>predicted "
           "output</i> (here the true length). Against step 1's FCFS run alongside: requests waiting now "
           "{vs:waiting}; P95 TTFT {vs:p95_ttft}.</p>"),
       faster},
      {QObject::tr("The model ranks its own queue"), "selfsched-math-length-only.json", 4,
       QObject::tr(
           "<p>Self-scheduling asks the served LLM itself: arriving prompts collect into a <b>ranking "
           "batch</b> ({knob:batch_size} requests, or {knob:batch_timeout_s} s), and a <b>rank prompt</b> (the "
           "batch's prompts plus a {knob:template_tokens}-token template) runs on the same GPU. <i>Length-only</i> makes the model answer each request's "
           "expected length in 40 tokens. When the prompt finishes, the batch is ranked and the queue is "
           "served shortest-predicted first.</p>"
           "<p><b>Watch:</b> the dark <b>diamonds</b>: rank prompts doing real prefill and decode work "
           "(<lecture-off>turn on <i>View ▸ Lecture mode</i> for \"rank prompt\" callouts</lecture-off>"
           "<lecture-on>called out under the cards</lecture-on>). Hover a chip: its rank in its "
           "batch and its predicted length. The prediction is noisy (ServeLab models the model's ranking "
           "quality as noise tuned to the paper's Kendall tau of {knob:target_tau}).</p>"
           "<p>Against step 1's FCFS run alongside: requests waiting now {vs:waiting}; P95 TTFT "
           "{vs:p95_ttft}; median TTFT {vs:p50_ttft} (every request first waits for its batch to be "
           "ranked).</p>"),
       faster},
      {QObject::tr("A weaker ranking: rank-only"), "selfsched-math-rank-only.json", 4,
       QObject::tr(
           "<p><i>Rank-only</i> asks only for the order within the batch (20 output tokens) and ranks less "
           "well (tau {knob:target_tau}): a rank says nothing about other batches, so a long request ranked first in a "
           "batch of long ones still jumps ahead.</p>"
           "<p><b>Watch:</b> hover chips: a rank 0 … 9 within the batch (the noisy length behind it is shown "
           "too, but the scheduler sees only the rank). Against step 3's length-only run alongside: P95 TTFT "
           "{vs:p95_ttft}; median TTFT {vs:p50_ttft}.</p>"),
       faster},
      {QObject::tr("Anti-starvation"), "selfsched-math-length-only.json", 4,
       QObject::tr(
           "<p>Serving the shortest first can starve the long ones. A request left out of the batch for "
           "{knob:starvation_threshold_steps} iterations in a row is <b>promoted</b> ahead of every ranked "
           "request for {knob:priority_quantum_steps} iterations (at most {knob:max_promotions_per_round} "
           "promotions an iteration).</p>"
           "<p><b>Watch:</b> <lecture-off>with <i>View ▸ Lecture mode</i> on, </lecture-off>"
           "\"promoted: waited too long\" callouts under the cards; the card's <b>promoted</b> count "
           "({field:promoted} so far); the <b>Policy</b> chart tab draws rank prompts, requests "
           "waiting for a rank and promotions over time. The knobs (batch size, timeout, the starvation "
           "thresholds, the target tau) are live in the scenario panel.</p>"),
       faster},
  };
  t.steps[0].claims = {{kGreater, "p95_ttft", "p50_ttft", 5}, {kGreater, "waiting", "20"}};
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kLess, "waiting", "base:waiting", 2}, {kLess, "p95_ttft", "base:p95_ttft"}};
  t.steps[2].baseline = 0;
  t.steps[2].claims = {{kLess, "waiting", "base:waiting"}};
  t.steps[3].baseline = 2;
  t.steps[3].claims = {{kGreater, "p95_ttft", "base:p95_ttft"}};
  t.steps[4].claims = {{kGreater, "field:promoted", "0"}};
  return t;
}

// CascadeInfer: how a request walks down a length-aware pipeline of
// instances, written from the paper (§3-§4) and docs/policies/cascade.md.
// Sample scenarios: 8 × h20-141g in one node, Llama-3.1-8B, ShareGPT-like
// lengths (prompt median 1.7 K, answer median 415), Poisson 16 req/s; the
// samples' 1 500 requests arrive in 94 s, the tour runs 7 000.
Tour cascadeTour() {
  Tour t;
  t.id = "cascade";
  t.title = QObject::tr("CascadeInfer: how a request walks down the pipeline");
  t.paper = QObject::tr("CascadeInfer: length-aware multi-instance pipeline with bid-ask balancing");
  t.policies = {"round-robin", "cascade", "llumnix"};
  const QStringList longer = {"workload.requests=7000"};
  t.steps = {
      {QObject::tr("Round-robin: every length on every instance"), "round-robin-sharegpt-h20.json", 4,
       QObject::tr(
           "<p>Eight vLLM-like instances behind a round-robin balancer: each instance batches short and "
           "long sequences together. A decode iteration's attention runs over every sequence in the batch, "
           "and lengths that differ widely waste work (the paper's Fig. 2; ServeLab models it as a "
           "length-heterogeneity factor on decode attention).</p>"
           "<p><b>Watch:</b> the KV bars fill unevenly as long conversations land where they land. Mean "
           "TPOT in this run so far: {mean_tpot}, mean TTFT {mean_ttft}.</p>"),
       longer},
      {QObject::tr("Stages: instances own length ranges"), "cascade-sharegpt-h20.json", 4,
       QObject::tr(
           "<p>CascadeInfer splits the instances into <b>stages</b> by sequence length (prompt + generated "
           "tokens). The plan comes from a dynamic program over stages, instances and cut points, costed "
           "with a latency model fitted at start-up. A new request goes to the first stage that covers its "
           "prompt.</p>"
           "<p><b>Watch:</b> each card's badge: its stage's length range in tokens (in this run: {badges}); "
           "the field <b>demand</b> under the bars (KV tokens held or on their way). Against step 1's "
           "round-robin run alongside: mean TPOT {vs:mean_tpot}; mean TTFT {vs:mean_ttft}.</p>"),
       longer},
      {QObject::tr("Hand-over: a sequence outgrows its stage"), "cascade-sharegpt-h20.json", 1,
       QObject::tr(
           "<p>When a sequence reaches its stage's upper bound it is <b>handed over</b> to the next stage by "
           "live migration: its KV is copied in rounds while it keeps decoding, then a short final copy "
           "(at most {knob:migration_cap} such moves per instance at a time).</p>"
           "<p><b>Watch:</b> magenta arrows from a stage to the next ({migrations} hand-overs so far); click "
           "a moving chip: its timeline shows the copy. The <b>Policy</b> chart tab draws the hand-overs over "
           "time.</p>"),
       longer},
      {QObject::tr("Bid-ask: who takes the request"), "cascade-sharegpt-h20.json", 1,
       QObject::tr(
           "<p>The sender does not pick the receiver itself: it <b>asks</b> every instance of the next "
           "stage; each <b>bids</b> its load and its earliest start; the sender drops the more loaded half, "
           "keeps the 3 earliest and takes the first reply. The winner queues the request by the sender's "
           "load (the most loaded sender first; a request skipped {knob:starve_limit} times goes next).</p>"
           "<p><b>Watch:</b> <lecture-off>with <i>View ▸ Lecture mode</i> on, </lecture-off>the lane under "
           "the cards says who \"asked for a receiver\", who sent a \"bid\" and who \"won a bid\"; the cards "
           "count <b>asked</b>, <b>bids</b>, <b>won</b> ({field:won} so far, all cards) and <b>inq</b> (won, "
           "waiting to receive).</p>"),
       longer},
      {QObject::tr("Boundaries move; the baseline Llumnix"), "llumnix-sharegpt-h20.json", 4,
       QObject::tr(
           "<p>In CascadeInfer every 5 s each boundary is <b>refined</b> toward the split that minimises the "
           "two stages' latency (smoothed by an EMA), and the plan is redone every 60 s: the Policy tab of "
           "the previous steps draws the boundaries <b>b1</b>, <b>b2</b> … over time.</p>"
           "<p>This step runs the paper's baseline <b>Llumnix</b>: requests go to the instance with the most "
           "free KV, and a live migration moves one from the most to the least loaded when their gap "
           "exceeds {knob:gap_threshold} of the capacity ({migrations} such migrations so far). <b>Watch:</b> "
           "every length mixed on every card again. Against step 2's CascadeInfer run alongside: mean TPOT "
           "{vs:mean_tpot}; mean TTFT {vs:mean_ttft}; migrations {vs:migrations}.</p>"),
       longer},
  };
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kLess, "mean_tpot", "base:mean_tpot"}};
  t.steps[2].claims = {{kGreater, "migrations", "0"}};
  t.steps[3].claims = {{kGreater, "field:won", "0"}};
  t.steps[4].baseline = 1;
  t.steps[4].claims = {{kGreater, "mean_tpot", "base:mean_tpot"}};
  return t;
}

// Prefix caching (docs/engine.md "Prefix caching"): requests that share a
// prompt's start find its KV blocks cached on the instance that served it.
// Sample: 4 × H100 with a tenth of their memory for KV (so that the cache
// fills it and its band shows on the bars), Llama-3.1-8B, 4 system prompts of
// 2 048 tokens before each request's own prompt, Poisson 8 req/s.
Tour prefixTour() {
  Tour t;
  t.id = "prefix";
  t.title = QObject::tr("Prefix caching: prompts that start alike");
  t.paper = QObject::tr("Prefix caching (vLLM automatic prefix caching, SGLang RadixAttention)");
  t.policies = {"fcfs"};
  t.steps = {
      {QObject::tr("A shared system prompt, cached"), "prefix-tour-system-prompt.json", 2,
       QObject::tr(
           "<p>Every request starts with one of {system_prompts} system prompts of {system_prompt_tokens} tokens, then its own "
           "question. With <b>prefix caching</b> an instance keeps the KV blocks of the prompts it has "
           "prefilled; a request whose prompt starts with cached blocks skips their prefill.</p>"
           "<p><b>Watch:</b> the <b>teal band</b> on each card's KV bar: cached blocks no request holds, free "
           "memory kept as cache ({cached_share} of the GPUs' KV blocks hold cache entries now). The "
           "<b>Prefix cache</b> chart tab draws the cluster's hit rate over time; so far {hit_rate} of the "
           "prompt tokens came from the cache. <lecture-off>With <i>View ▸ Lecture mode</i> on, \"cache hit\" "
           "callouts name the tokens skipped.</lecture-off><lecture-on>The lane under the cards calls out "
           "\"cache hit\" with the tokens skipped.</lecture-on></p>")},
      {QObject::tr("The same requests without the cache"), "prefix-tour-system-prompt.json", 2,
       QObject::tr(
           "<p>The same scenario with <code>prefix_caching</code> off: every request prefills its system "
           "prompt again.</p>"
           "<p><b>Watch:</b> no teal band; the blue prefill chips stay longer. Against step 1's cached run "
           "alongside: mean TTFT {vs:mean_ttft}; P95 TTFT {vs:p95_ttft}.</p>"),
       {"cluster.prefix_caching=false", "cluster.prefix_cache_cpu_gb=0"}},
      {QObject::tr("Conversations come back"), "prefix-tour-sessions.json", 2,
       QObject::tr(
           "<p>Now {clients} clients hold conversations of {turns} turns: each turn's prompt is the whole "
           "conversation so far plus a new question, so most of it is the previous turn's KV. The "
           "<code>session-affinity</code> router sends every turn of a conversation to the same instance, "
           "where that KV is cached.</p>"
           "<p><b>Watch:</b> the teal bands grow as conversations go on; hit rate so far {hit_rate} of the "
           "prompt tokens; requests in flight {in_flight}, never more than the clients.</p>")},
      {QObject::tr("The router decides where the history is"), "prefix-tour-sessions.json", 2,
       QObject::tr(
           "<p>The same conversations sent <code>round-robin</code>: a turn lands on an instance that "
           "usually did not serve the turn before, and prefills the history again.</p>"
           "<p><b>Watch:</b> the teal bands and the <b>Prefix cache</b> chart. Against step 3's "
           "session-affinity run alongside: hit rate {vs:hit_rate}; mean TTFT {vs:mean_ttft}.</p>"),
       {"policy.router=round-robin"}},
  };
  t.steps[0].label = QObject::tr("the cache on");
  t.steps[0].claims = {{kGreater, "hit_rate", "0.5"}, {kGreater, "cached_share", "0.2"}};
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kGreater, "mean_ttft", "base:mean_ttft"}};
  t.steps[2].label = QObject::tr("session-affinity");
  t.steps[2].claims = {{kGreater, "hit_rate", "0.3"}, {kAtMost, "in_flight", "clients"}};
  t.steps[3].baseline = 2;
  t.steps[3].claims = {{kLess, "hit_rate", "base:hit_rate"}};
  return t;
}

// Closed-loop clients (docs/scenario-format.md, workload.arrival "closed"):
// a fixed number of users, each sending its next request only after the
// answer to the last one and a think time. Sample: 4 × H100, Llama-3.1-8B,
// 160 clients thinking 1 s on average.
Tour closedLoopTour() {
  Tour t;
  t.id = "closed-loop";
  t.title = QObject::tr("Closed-loop clients: the load answers back");
  t.paper = QObject::tr("Closed-loop load (benchmark clients with a fixed concurrency)");
  t.policies = {"fcfs"};
  const QStringList longer = {"workload.requests=12000"};
  t.steps = {
      {QObject::tr("Clients wait for their answers"), "closed-loop-chat-think.json", 1,
       QObject::tr(
           "<p>An open-loop workload sends requests at a rate, whatever the servers do. Here "
           "<b>{clients} clients</b> each send a request, wait for the whole answer, think (1 s on "
           "average) and send the next: the servers' speed sets the rate.</p>"
           "<p><b>Watch:</b> requests in flight now: {in_flight}, never more than the clients; completions "
           "so far: {req_rate}. The scenario panel shows <b>Clients</b> (a live slider) instead of a rate: "
           "the <i>Initial rate</i> field is hidden for a closed loop.</p>"),
       longer},
      {QObject::tr("Twice the clients"), "closed-loop-chat-think.json", 1,
       QObject::tr(
           "<p>The same clients, twice as many ({clients}). Each waits for its answer, so more clients add "
           "load only as fast as the servers answer.</p>"
           "<p><b>Watch:</b> against step 1's run with half the clients, alongside: completions "
           "{vs:req_rate}; mean TTFT {vs:mean_ttft}. Move the <b>Clients</b> slider in the scenario panel: "
           "the change is marked on the charts (\"clients N\"), and lowering it retires clients as their "
           "current requests finish.</p>"),
       {"workload.requests=12000", "workload.arrival.concurrency=320"}},
  };
  t.steps[0].label = QObject::tr("160 clients");
  t.steps[0].claims = {{kAtMost, "in_flight", "clients"}, {kGreater, "req_rate", "0"}};
  t.steps[0].showsPanel = true;
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kAtMost, "in_flight", "clients"}, {kGreater, "mean_ttft", "base:mean_ttft"}};
  t.steps[1].showsPanel = true;
  return t;
}

// Measurement windows (docs/metrics.md "Measurement window"): run.measure
// counts only what happens in [warmup_s, warmup_s + window_s). Sample: the
// PASCAL tour's FCFS cluster (8 × H100, KV capped at half the GPU) measured
// from 60 s to 660 s.
Tour measureTour() {
  Tour t;
  t.id = "measure";
  t.title = QObject::tr("Measurement windows: leave the warm-up out");
  t.paper = QObject::tr("Measurement windows (warm-up excluded, as serving benchmarks measure)");
  t.policies = {"fcfs", "pascal"};
  t.steps = {
      {QObject::tr("A run starts empty"), "measure-window-fcfs.json", 4,
       QObject::tr(
           "<p>A simulation starts with empty GPUs: the first requests meet no queue. This scenario "
           "measures only from {window_start} to {window_end} (<code>run.measure</code>): the charts draw the "
           "window's edges as two solid lines, and the summary and the sweeps count only what happens "
           "between them. The run and its arrivals stop at the window's end.</p>"
           "<p><b>Watch:</b> the first solid line on the time charts; the clock ({clock}) is now "
           "{window_state}. The KV bars fill and the queues form as the cluster warms up ({waiting} requests "
           "waiting now).</p>")},
      {QObject::tr("Two policies over the same window"), "measure-window-fcfs.json", 4,
       QObject::tr(
           "<p>The same window for PASCAL: two runs compared over the same minutes of steady load, none of "
           "the warm-up in either.</p>"
           "<p><b>Watch:</b> the window's lines at the same times ({window_start}, {window_end}). Against "
           "step 1's FCFS run alongside: P95 TTFT {vs:p95_ttft}; mean TTFT {vs:mean_ttft}.</p>"),
       {"policy.id=pascal"}},
  };
  t.steps[0].claims = {{kGreater, "clock", "window_start"}, {kLess, "clock", "window_end"}};
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kGreater, "clock", "window_start"}, {kLess, "clock", "window_end"}};
  return t;
}

// Speculative decoding (docs/engine.md "Speculative decoding"): drafts that
// pay while a decode step is bound by reading the weights, and cost time
// once verifying k + 1 tokens per sequence makes it compute-bound. Sample:
// one H100, Llama-3.1-8B, n-gram prompt lookup with k = 3 (acceptance: the
// PLD row of the EAGLE-3 paper's Table 1, MT-bench), prompts of ~128
// tokens, answers of ~256, Poisson arrivals. EAGLE-3 with k = 3 never
// crosses on this GPU (its TPOT stays under the plain one up to saturation,
// ~55 req/s), so the crossover steps use n-gram drafts; servelab-cli runs of
// 6 000 requests put it at 37 req/s (mean TPOT 10.1 ms with, 11.4 ms without
// at 36 req/s; 12.2 ms and 11.6 ms at 37). Step 5 shows EAGLE-3 at the high
// rate. Step 6 leaves speculation for the other side of "a step reads the
// weights": a sparse model (Qwen3-235B-A22B, the EP8 sample) reads more of
// them as its batch grows; every figure is the run's cost model
// (CostModel::expertReplicasTouched / expertWeightBytesRead / breakdown).
Tour speculativeTour() {
  Tour t;
  t.id = "speculative";
  t.title = QObject::tr("Speculative decoding: where drafts stop paying");
  t.paper = QObject::tr("Speculative decoding (draft-and-verify; n-gram prompt lookup, EAGLE-3)");
  t.policies = {"fcfs"};
  const QString off = "cluster.speculative=null";
  const QString high = "workload.arrival.rate=40";
  t.steps = {
      {QObject::tr("Drafts that pay at low load"), "speculative-crossover.json", 1,
       QObject::tr("<p>One H100 serves Llama-3.1-8B at {arrival_rate} with <b>speculative decoding</b>: each decode "
                   "step, every sequence drafts k = {spec_k} tokens by <i>n-gram prompt lookup</i> (what followed the "
                   "same words earlier in its prompt) and the model verifies them in one pass; each accepted draft "
                   "is a token for free. While the batch is small a step costs about the reading of the weights, "
                   "however many tokens it verifies.</p>"
                   "<p><b>Watch:</b> the card's <b>spec</b> line (so far {tok_per_step} tokens per step, "
                   "{acceptance} of the drafts accepted); mean TPOT {mean_tpot}. The <b>Speculation</b> chart tab "
                   "draws TPOT against load: move the <b>Arrival rate</b> slider and the <b>Speculation</b> "
                   "control (scenario panel, <i>Live</i>) to add both settings at other rates.</p>")},
      {QObject::tr("The same load without speculation"),
       "speculative-crossover.json",
       1,
       QObject::tr("<p>The same requests with <code>cluster.speculative</code> removed: one token per sequence per "
                   "step.</p>"
                   "<p><b>Watch:</b> no spec line on the card. Against step 1's run alongside: mean TPOT "
                   "{vs:mean_tpot}; P95 TTFT {vs:p95_ttft}.</p>"),
       {off}},
      {QObject::tr("Past the crossover: five times the load"),
       "speculative-crossover.json",
       1,
       QObject::tr("<p>Five times the load ({arrival_rate}), speculation on. Now {in_flight} requests are in flight "
                   "and every sequence of a step verifies k + 1 = 4 tokens: a step computes four times the tokens of "
                   "a plain one, and the GPU's arithmetic, not its memory, sets its time. With {acceptance} of the "
                   "drafts accepted, most of that work is thrown away.</p>"
                   "<p><b>Watch:</b> the card's batch and its spec line ({tok_per_step} tokens per step); mean TPOT "
                   "so far {mean_tpot}.</p>"),
       {high}},
      {QObject::tr("Five times the load without speculation"),
       "speculative-crossover.json",
       1,
       QObject::tr("<p>The same {arrival_rate} without speculation.</p>"
                   "<p><b>Watch:</b> against step 3's run alongside: mean TPOT {vs:mean_tpot}; P95 TTFT "
                   "{vs:p95_ttft}. In this scenario the two cross near 37 req/s: in step 1's run, take the rate "
                   "slider there and turn speculation off and on, and the blue (on) and red (off) dots of the "
                   "<b>Speculation</b> chart tab meet.</p>"),
       {high, off}},
      {QObject::tr("Another drafter at that load: EAGLE-3"),
       "speculative-crossover.json",
       1,
       QObject::tr("<p>The same {arrival_rate} with an <b>EAGLE-3</b> draft head for Llama-3.1-8B (acceptance as vLLM "
                   "measures it on MT-Bench): {acceptance} of its drafts accepted, {tok_per_step} tokens per step. "
                   "Requests finish in fewer steps, so fewer are in flight ({in_flight}) and the batch stays where "
                   "verifying is cheap.</p>"
                   "<p><b>Watch:</b> against step 4's run without speculation alongside: mean TPOT "
                   "{vs:mean_tpot}. On this GPU EAGLE-3 pays up to saturation; where drafts stop paying depends on "
                   "how many are accepted.</p>"),
       {high, "cluster.speculative.method=eagle", "cluster.speculative.acceptance=eagle3-llama3.1-8b-vllm-k3"}},
      {QObject::tr("A sparse model: batch 8 reads more weights than batch 1"), "moe-qwen3-235b-ep8.json", 1,
       QObject::tr("<p>A dense model's decode step reads all its weights at any batch size. {moe_model} is "
                   "<b>sparse</b>: each of its {moe_layers} MoE layers has {moe_experts} experts, and each token goes "
                   "to {moe_k}. A step reads every expert that <i>any</i> of its tokens picked.</p>"
                   "<p>One sequence picks {moe_touched_b1} experts a layer: {moe_read_b1} of expert weights a step. "
                   "Eight pick theirs independently, seldom the same ones: {moe_touched_b8} a layer, {moe_read_b8} a "
                   "step.</p>"
                   "<p><b>Watch:</b> the experts' part of a decode step in this run's cost model (busiest GPU, "
                   "{moe_routing} routing): {moe_expert_b1} at batch 1, {moe_expert_b8} at batch 8. The cards hold "
                   "far more ({in_flight} requests in flight).</p>")},
  };
  t.steps[0].label = QObject::tr("n-gram speculation");
  t.steps[0].claims = {{kGreater, "tok_per_step", "1.3"}};
  t.steps[0].showsPanel = true;
  t.steps[1].baseline = 0;
  t.steps[1].claims = {{kGreater, "mean_tpot", "base:mean_tpot", 1.3}};
  t.steps[2].label = QObject::tr("n-gram speculation");
  t.steps[2].claims = {{kGreater, "in_flight", "100"}};
  t.steps[3].baseline = 2;
  t.steps[3].label = QObject::tr("no speculation");
  t.steps[3].claims = {{kLess, "mean_tpot", "base:mean_tpot", 1.2}};
  t.steps[4].baseline = 3;
  t.steps[4].claims = {{kLess, "mean_tpot", "base:mean_tpot", 2}};
  t.steps[5].label = QObject::tr("sparse model");
  t.steps[5].claims = {{kGreater, "moe_read_b8", "moe_read_b1", 3},
                       {kGreater, "moe_touched_b8", "moe_touched_b1", 3},
                       {kGreater, "moe_expert_b8", "moe_expert_b1"},
                       {kGreater, "in_flight", "8"}};
  return t;
}

}  // namespace

const std::vector<Tour>& allTours() {
  static const std::vector<Tour> tours = {pascalTour(), arrowTour(),      selfSchedTour(), cascadeTour(),
                                          prefixTour(), closedLoopTour(), measureTour(),   speculativeTour()};
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

Scenario loadTourScenario(const TourStep& s, const QString& samplesDir) {
  const std::string path = (samplesDir + "/" + s.scenario).toStdString();
  nlohmann::json doc = loadJsonFile(path);
  for (const QString& a : s.set) applySetOverride(doc, a.toStdString());
  Scenario sc = parseScenario(doc, path);
  sc.base_dir = scenarioBaseDir(path);
  return sc;
}

QString tourSeconds(double s) {
  if (!std::isfinite(s) || s < 0) return {};
  // Below 10 ms (a TPOT) a tenth of a millisecond is a tenth of the figure.
  if (s < 0.00995) return QObject::tr("%1 ms").arg(s * 1000, 0, 'f', 1);
  if (s < 1) return QObject::tr("%1 ms").arg(std::lround(s * 1000));
  return QObject::tr("%1 s").arg(s, 0, s < 100 ? 'g' : 'f', s < 100 ? 3 : 0);
}

QString tourPercent(double f) {
  if (!std::isfinite(f) || f < 0) return {};
  return QString("%1 %").arg(f * 100, 0, 'f', f < 0.1 ? 1 : 0);
}

QString compareWord(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return {};
  const double m = std::max(std::abs(a), std::abs(b));
  if (m == 0 || std::abs(a - b) <= 0.05 * m) return QObject::tr("about the same");
  return a < b ? QObject::tr("lower") : QObject::tr("higher");
}

// A step's baseline: the other step's scenario, run headless on a thread of
// its own to the simulated time the main run has reached, keeping what the
// charts keep of it (finished requests' TTFT and TPOT, the rolling SLO
// attainment), so that the two runs are compared at the same time.
class BaselineRun final : public SimObserver {
public:
  explicit BaselineRun(const Scenario& s) : prepared_(prepareRun(s, "tour baseline")) {
    prepared_->simulator->addObserver(this);
    thread_ = std::thread([this] { loop(); });
  }
  ~BaselineRun() override {
    {
      std::lock_guard l(m_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  BaselineRun(const BaselineRun&) = delete;
  BaselineRun& operator=(const BaselineRun&) = delete;

  bool laneSafe() const override { return true; }  // reads finished records and probes only
  void onFinished(const RequestRecord& r) override {
    Point p;
    p.finishS = nsToSeconds(r.last_token >= 0 ? r.last_token : r.arrival);
    if (auto t = r.ttft()) p.ttftS = *t;
    if (auto t = r.tpot()) p.tpotS = *t;
    newPoints_.push_back(p);
  }
  void onProbe(const ProbeSample& s) override {
    if (s.sloAttainment >= 0) newSlo_.emplace_back(nsToSeconds(s.time), s.sloAttainment);
  }

  void request(double t) {
    {
      std::lock_guard l(m_);
      if (t <= target_) return;
      target_ = t;
    }
    wake_.notify_all();
  }
  bool waitFor(double t, int timeoutMs) {
    request(t);
    std::unique_lock l(m_);
    return reached_cv_.wait_for(l, std::chrono::milliseconds(timeoutMs),
                                [&] { return reached_ >= t || ended_ || !error_.isEmpty(); });
  }
  std::optional<RunFigures> figures(double t) const {
    std::lock_guard l(m_);
    if (reached_ < t && !ended_) return std::nullopt;
    RunFigures f;
    std::vector<double> ttft, tpot;
    for (const Point& p : points_) {
      if (p.finishS > t) continue;
      ++f.finished;
      if (p.ttftS >= 0) ttft.push_back(p.ttftS);
      if (p.tpotS >= 0) tpot.push_back(p.tpotS);
    }
    std::sort(ttft.begin(), ttft.end());
    auto quantile = [&](double q) {
      if (ttft.empty()) return -1.0;
      const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ttft.size())));
      return ttft[std::clamp<std::size_t>(i, 1, ttft.size()) - 1];  // nearest rank, as the charts
    };
    auto mean = [](const std::vector<double>& v) {
      double sum = 0;
      for (double x : v) sum += x;
      return v.empty() ? -1.0 : sum / static_cast<double>(v.size());
    };
    f.p50Ttft = quantile(0.5);
    f.p95Ttft = quantile(0.95);
    f.meanTtft = mean(ttft);
    f.meanTpot = mean(tpot);
    for (const auto& [time, att] : slo_)
      if (time <= t) f.slo = att;
    // The engine's counters and the cluster's state at the last slice end
    // at or before t (t itself when the run was taken there).
    for (const Counters& c : counters_) {
      if (c.time > t) break;
      f.hitRate = c.hitRate;
      f.preemptions = c.preemptions;
      f.migrations = c.migrations;
      f.waiting = c.waiting;
    }
    return f;
  }
  QString error() const {
    std::lock_guard l(m_);
    return error_;
  }

private:
  struct Point {
    double finishS = 0, ttftS = -1, tpotS = -1;
  };
  void loop() {
    for (;;) {
      double target = 0;
      {
        std::unique_lock l(m_);
        wake_.wait(l, [&] { return stop_ || (target_ > reached_ && !ended_ && error_.isEmpty()); });
        if (stop_) return;
        target = target_;
      }
      try {
        Simulator& sim = *prepared_->simulator;
        double now = reached_;
        while (now < target) {
          const double next = std::min(target, now + 0.5);  // slices: a stop is prompt, counters recent
          sim.run(secondsToNs(next));
          // Counted as the main run's figures are (LiveFrame, the snapshot).
          sim.fillSnapshot(snap_);
          Counters c;
          c.time = next;
          c.preemptions = sim.preemptions();
          c.migrations = sim.migrations();
          std::int64_t prompt = 0, cached = 0;
          bool cacheOn = false;
          for (const InstanceSnapshot& in : snap_.instances) {
            cacheOn = cacheOn || in.cache.on;
            prompt += in.cache.promptTokens;
            cached += in.cache.cachedTokens;
            for (const QueueSnapshot& q : in.queues)
              for (const RequestChip& ch : q.requests) c.waiting += !ch.inBatch && !ch.synthetic;
          }
          if (cacheOn && prompt > 0) c.hitRate = static_cast<double>(cached) / static_cast<double>(prompt);
          std::lock_guard l(m_);
          counters_.push_back(c);
          points_.insert(points_.end(), newPoints_.begin(), newPoints_.end());
          slo_.insert(slo_.end(), newSlo_.begin(), newSlo_.end());
          newPoints_.clear();
          newSlo_.clear();
          reached_ = now = next;
          ended_ = sim.done();
          if (stop_ || ended_) break;
        }
      } catch (const std::exception& e) {
        std::lock_guard l(m_);
        error_ = QString::fromStdString(e.what());
      }
      reached_cv_.notify_all();
    }
  }

  std::unique_ptr<PreparedRun> prepared_;
  std::thread thread_;
  mutable std::mutex m_;
  std::condition_variable wake_, reached_cv_;
  double target_ = 0, reached_ = 0;
  bool ended_ = false, stop_ = false;
  QString error_;
  std::vector<Point> points_, newPoints_;  // newPoints_: the worker's own, merged after each slice
  std::vector<std::pair<double, double>> slo_, newSlo_;
  struct Counters {
    double time = 0, hitRate = -1;
    std::int64_t preemptions = 0, migrations = 0, waiting = 0;
  };
  std::vector<Counters> counters_;  // at each slice's end
  Snapshot snap_;
};

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
    fitText();
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
  baseValues_.clear();
  clockS_ = 0;
  startBaseline();
  fillText();
  back_->setEnabled(step_ > 0);
  next_->setEnabled(step_ + 1 < stepCount());
}

void TourPanel::startBaseline() {
  baseline_.reset();
  baseLabel_.clear();
  const TourStep& s = tour_.steps[static_cast<std::size_t>(step_)];
  if (s.baseline < 0 || s.baseline >= stepCount() || samplesDir_.isEmpty()) return;
  try {
    const TourStep& base = tour_.steps[static_cast<std::size_t>(s.baseline)];
    const Scenario sc = loadTourScenario(base, samplesDir_);
    baseLabel_ = base.label.isEmpty() ? QString::fromStdString(sc.policy.id) : base.label;
    baseline_ = std::make_shared<BaselineRun>(sc);
  } catch (const std::exception& e) {
    baseValues_["base:error"] = QString::fromStdString(e.what());
  }
}

QString TourPanel::baselineLabel() const { return baseLabel_; }

std::optional<RunFigures> TourPanel::baselineFigures(double clockS) const {
  if (!baseline_) return std::nullopt;
  return baseline_->figures(clockS);
}

void TourPanel::setRunClock(double clockS, bool wait) {
  clockS_ = clockS;
  if (!baseline_) return;
  if (wait)
    baseline_->waitFor(clockS, 120000);
  else
    baseline_->request(clockS + 2);  // a little ahead: the main run goes on
  QMap<QString, QString> b;
  if (const QString err = baseline_->error(); !err.isEmpty()) b["base:error"] = err;
  if (const std::optional<RunFigures> f = baseline_->figures(clockS); f && f->finished > 0) {
    auto put = [&](const QString& name, double x, const QString& shown) {
      if (shown.isEmpty()) return;
      b["base:" + name] = shown;
      b["raw:base:" + name] = QString::number(x, 'g', 17);
    };
    put("p50_ttft", f->p50Ttft, tourSeconds(f->p50Ttft));
    put("p95_ttft", f->p95Ttft, tourSeconds(f->p95Ttft));
    put("mean_ttft", f->meanTtft, tourSeconds(f->meanTtft));
    put("mean_tpot", f->meanTpot, tourSeconds(f->meanTpot));
    put("slo", f->slo, tourPercent(f->slo));
    put("hit_rate", f->hitRate, tourPercent(f->hitRate));
    put("preemptions", static_cast<double>(f->preemptions), QString::number(f->preemptions));
    put("migrations", static_cast<double>(f->migrations), QString::number(f->migrations));
    put("waiting", static_cast<double>(f->waiting), QString::number(f->waiting));
    put("req_rate", static_cast<double>(f->finished) / clockS, QString("%1 req/s").arg(static_cast<double>(f->finished) / clockS, 0, 'f', 1));
  }
  if (b != baseValues_) {
    baseValues_ = b;
    fillText();
  }
}

void TourPanel::setLecture(bool on) {
  if (on == lecture_) return;
  lecture_ = on;
  fillText();
}

QMap<QString, QString> TourPanel::shownValues() const {
  QMap<QString, QString> all = values_;
  for (auto it = baseValues_.begin(); it != baseValues_.end(); ++it) all[it.key()] = it.value();
  return all;
}

void TourPanel::fillText() {
  if (tour_.steps.empty()) return;
  QString html = tour_.steps[static_cast<std::size_t>(step_)].watch;
  // What to do to see the callouts depends on whether lecture mode is on.
  static const QRegularExpression offPart(R"(<lecture-off>(.*?)</lecture-off>)",
                                          QRegularExpression::DotMatchesEverythingOption);
  static const QRegularExpression onPart(R"(<lecture-on>(.*?)</lecture-on>)",
                                         QRegularExpression::DotMatchesEverythingOption);
  html.replace(lecture_ ? offPart : onPart, QString());
  html.replace(lecture_ ? onPart : offPart, "\\1");
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
    const QString name = m.captured(1);
    if (name.startsWith("vs:")) {
      // "540 ms against 887 ms under round-robin at the same simulated time,
      // lower": the word from the two figures, never typed.
      const QString fig = name.mid(3);
      const QString a = values_.value(fig), b = baseValues_.value("base:" + fig);
      bool okA = false, okB = false;
      const double x = values_.value("raw:" + fig).toDouble(&okA);
      const double y = baseValues_.value("raw:base:" + fig).toDouble(&okB);
      if (a.isEmpty() || b.isEmpty() || !okA || !okB)
        out += "<b>" + tr("(none yet)") + "</b>";
      else
        out += tr("<b>%1</b> against <b>%2</b> under %3 at the same simulated time, <b>%4</b>")
                   .arg(a.toHtmlEscaped(), b.toHtmlEscaped(), baselineLabel().toHtmlEscaped(), compareWord(x, y));
    } else {
      const QString v = name.startsWith("base:") ? baseValues_.value(name) : values_.value(name);
      out += "<b>" + (v.isEmpty() ? tr("(none yet)") : v.toHtmlEscaped()) + "</b>";
    }
    last = m.capturedEnd();
  }
  html = out + html.mid(last);
  const int scroll = text_->verticalScrollBar() ? text_->verticalScrollBar()->value() : 0;
  text_->setHtml(html);
  fitText();
  if (text_->verticalScrollBar()) text_->verticalScrollBar()->setValue(scroll);
}

void TourPanel::fitText() {
  // A step's text is read in one look, on a projector too: rather than a
  // scroll bar, a smaller font (never under 70 % of the window's).
  QTextDocument* doc = text_->document();
  const int w = text_->viewport()->width(), h = text_->viewport()->height();
  if (w <= 0 || h <= 0) return;
  QFont f = font();
  for (const double k : {1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7}) {
    f.setPointSizeF(font().pointSizeF() * k);
    doc->setDefaultFont(f);
    doc->setTextWidth(w);
    if (doc->size().height() <= h) break;
  }
}

void TourPanel::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  fitText();
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

QStringList TourPanel::layoutProblems() const {
  QStringList out;
  if (const QScrollBar* sb = text_->verticalScrollBar(); sb && sb->maximum() > 0)
    out << tr("the step's text scrolls (%1 px more than its %2 px)").arg(sb->maximum()).arg(text_->viewport()->height());
  for (const QLabel* l : findChildren<QLabel*>())
    if (!l->wordWrap() && l->isVisible() && l->fontMetrics().horizontalAdvance(l->text()) > l->contentsRect().width() + 1)
      out << tr("label '%1' cut").arg(l->text());
  for (const QPushButton* b : findChildren<QPushButton*>()) {
    const QRect inPanel(b->mapTo(this, QPoint(0, 0)), b->size());
    if (b->isVisible() && (!rect().contains(inPanel) || b->width() < b->sizeHint().width()))
      out << tr("button '%1' clipped").arg(b->text());
  }
  return out;
}

}  // namespace sl::ui
