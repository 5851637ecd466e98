#include "workload/workload_source.h"

#include <algorithm>
#include <limits>

#include "util/error.h"
#include "util/rng.h"
#include "workload/arrival.h"
#include "workload/closed_loop.h"
#include "workload/length_dist.h"
#include "workload/presets.h"
#include "workload/trace_formats.h"

namespace sl {

WorkloadSource::~WorkloadSource() = default;
std::int64_t WorkloadSource::expectedCount() const { return -1; }
bool WorkloadSource::wantsCompletions() const { return false; }
bool WorkloadSource::onRequestDone(std::int64_t, SimTime, RequestSpec&) { return false; }
bool WorkloadSource::finished() const { return true; }

void clipRequestLengths(std::int64_t input, std::int64_t reasoning, std::int64_t answer, int max_context,
                        RequestSpec& out) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  input = std::clamp<std::int64_t>(input, 1, kMax);
  reasoning = std::clamp<std::int64_t>(reasoning, 0, kMax);
  answer = std::clamp<std::int64_t>(answer, 1, kMax);
  if (max_context > 0) {
    const std::int64_t ctx = std::max(max_context, 2);
    input = std::min(input, ctx - 1);
    const std::int64_t budget = ctx - input;  // >= 1
    if (reasoning + answer > budget) {
      reasoning = std::max<std::int64_t>(0, budget - answer);
      answer = std::min(answer, budget - reasoning);
    }
  }
  out.input = static_cast<std::int32_t>(input);
  out.reasoning = static_cast<std::int32_t>(reasoning);
  out.answer = static_cast<std::int32_t>(answer);
}

namespace {

class SyntheticWorkload final : public WorkloadSource {
public:
  SyntheticWorkload(const WorkloadSpec& spec, std::uint64_t seed, int max_context, const std::string& base_dir,
                    std::optional<double> duration_s)
      : arrival_(timed(spec) ? std::optional<ArrivalProcess>(std::in_place, spec.arrival, "workload.arrival")
                             : std::nullopt),
        input_(spec.input_tokens, base_dir, "workload.input_tokens"),
        reasoning_(spec.reasoning_tokens, base_dir, "workload.reasoning_tokens"),
        answer_(spec.answer_tokens, base_dir, "workload.answer_tokens"),
        rngArrivals_(Rng::forStream(seed, "arrivals")),
        rngInput_(Rng::forStream(seed, "input")),
        rngReasoning_(Rng::forStream(seed, "reasoning")),
        rngAnswer_(Rng::forStream(seed, "answer")),
        rngDomain_(Rng::forStream(seed, "domain")),
        rngMixture_(Rng::forStream(seed, "mixture")),
        limit_(spec.requests),
        maxContext_(max_context),
        domain_(spec.preset ? presetDomain(*spec.preset) : kDomainNone), prefix_(spec.prefix) {
    if (spec.requests < 0)
      throw InputError("workload.requests: must be >= 0 (got " + std::to_string(spec.requests) + ")");
    if (duration_s) {
      if (!(*duration_s >= 0)) throw InputError("run.duration_s: must be >= 0");
      durationNs_ = secondsToNs(*duration_s);
    }
    // Joint mixtures: fields that are mixtures with identical weights.
    const LengthSampler* f[3] = {&input_, &reasoning_, &answer_};
    for (int i = 0; i < 3; ++i) {
      if (f[i]->mixtureParts() < 2) continue;
      for (int j = 0; j < 3; ++j) {
        if (j == i || f[j]->mixtureParts() != f[i]->mixtureParts()) continue;
        if (f[j]->mixtureCumulative() == f[i]->mixtureCumulative()) joint_[i] = true;
      }
    }
    // Built-in quantile tables (deepseek-r1-production): reasoning and answer
    // are one output draw split by the reasoning fraction (length_dist.h).
    split_ = reasoning_.jointSplitWith(answer_);
    expected_ = (durationNs_ || (arrival_ && arrival_->finite())) ? -1 : limit_;
  }

  // A closed loop times its requests itself: this source then only draws
  // their lengths (arrival 0).
  static bool timed(const WorkloadSpec& spec) { return spec.arrival.process != ArrivalSpec::Process::Closed; }

  bool next(RequestSpec& out) override {
    if (count_ >= limit_) return false;
    const auto t = arrival_ ? arrival_->next(rngArrivals_) : std::optional<SimTime>(0);
    if (!t || (durationNs_ && *t > *durationNs_)) {
      count_ = limit_;  // exhausted for good
      return false;
    }
    std::size_t component = 0;
    if (joint_[0] || joint_[1] || joint_[2]) {
      const LengthSampler* f[3] = {&input_, &reasoning_, &answer_};
      for (int i = 0; i < 3; ++i)
        if (joint_[i]) {
          component = f[i]->pickComponent(rngMixture_);
          break;
        }
    }
    const std::int64_t in = joint_[0] ? input_.sampleComponent(component, rngInput_) : input_.sample(rngInput_);
    std::int64_t re = 0, an = 0;
    if (split_) {
      const OutputSplit sp = reasoning_.sampleSplit(rngReasoning_);
      re = sp.reasoning;
      an = sp.answer;
    } else {
      re = joint_[1] ? reasoning_.sampleComponent(component, rngReasoning_) : reasoning_.sample(rngReasoning_);
      an = joint_[2] ? answer_.sampleComponent(component, rngAnswer_) : answer_.sample(rngAnswer_);
    }
    out.id = count_++;
    out.arrival = *t;
    clipRequestLengths(in, re, an, maxContext_, out);
    out.domain = domain_;
    out.segments.clear();
    out.session = -1;
    // A closed loop adds the system prompt itself (a session's first turn only).
    if (prefix_ && arrival_) applySystemPrompt(*prefix_, out.id, maxContext_, out);
    return true;
  }

  std::int64_t expectedCount() const override { return expected_; }

private:
  std::optional<ArrivalProcess> arrival_;  // none: untimed (closed loop)
  LengthSampler input_, reasoning_, answer_;
  Rng rngArrivals_, rngInput_, rngReasoning_, rngAnswer_;
  [[maybe_unused]] Rng rngDomain_;  // reserved: presets give one fixed domain today
  Rng rngMixture_;
  std::int64_t limit_;
  int maxContext_;
  int domain_;
  std::optional<SimTime> durationNs_;
  bool joint_[3] = {false, false, false};
  bool split_ = false;
  std::int64_t count_ = 0;
  std::int64_t expected_ = -1;
  std::optional<PrefixSpec> prefix_;
};

}  // namespace

std::unique_ptr<WorkloadSource> makeWorkload(const WorkloadSpec& spec, std::uint64_t seed, int max_context,
                                             const std::string& base_dir, std::optional<double> duration_s) {
  if (max_context < 2)
    throw InputError("model context window must be >= 2 tokens (got " + std::to_string(max_context) + ")");
  if (spec.arrival.process == ArrivalSpec::Process::Closed) {
    std::unique_ptr<WorkloadSource> lengths;
    if (spec.trace) {
      checkClosedLoopTrace(*spec.trace);
      lengths = openTraceWorkload(*spec.trace, base_dir, max_context, std::nullopt);
    } else {
      lengths = std::make_unique<SyntheticWorkload>(spec, seed, max_context, base_dir, std::nullopt);
    }
    auto loop = std::make_unique<ClosedLoopWorkload>(std::move(lengths), spec.arrival, seed, base_dir, duration_s);
    if (spec.prefix) loop->setSessions(*spec.prefix, max_context);
    return loop;
  }
  if (spec.trace) return openTraceWorkload(*spec.trace, base_dir, max_context, duration_s);
  return std::make_unique<SyntheticWorkload>(spec, seed, max_context, base_dir, duration_s);
}

}  // namespace sl
