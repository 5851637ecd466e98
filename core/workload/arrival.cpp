#include "workload/arrival.h"

#include <cmath>

#include "util/error.h"
#include "workload/parse_util.h"

namespace sl {

using detail::fmt;

ArrivalProcess::ArrivalProcess(const ArrivalSpec& spec, const std::string& what) : spec_(spec) {
  switch (spec.process) {
    case ArrivalSpec::Process::Poisson:
      if (!std::isfinite(spec.rate) || spec.rate <= 0) throw InputError(what + ".rate: must be > 0 (got " + fmt(spec.rate) + ")");
      break;
    case ArrivalSpec::Process::Gamma:
      if (!std::isfinite(spec.rate) || spec.rate <= 0) throw InputError(what + ".rate: must be > 0 (got " + fmt(spec.rate) + ")");
      if (!std::isfinite(spec.cv) || spec.cv <= 0) throw InputError(what + ".cv: must be > 0 (got " + fmt(spec.cv) + ")");
      break;
    case ArrivalSpec::Process::Schedule: {
      if (spec.schedule.empty()) throw InputError(what + ".schedule: needs at least one segment");
      for (std::size_t i = 0; i < spec.schedule.size(); ++i) {
        const auto& s = spec.schedule[i];
        const std::string w = what + ".schedule[" + std::to_string(i) + "]";
        if (!std::isfinite(s.rate) || s.rate < 0) throw InputError(w + ".rate: must be >= 0 (got " + fmt(s.rate) + ")");
        if (!std::isfinite(s.duration_s) || s.duration_s <= 0)
          throw InputError(w + ".duration_s: must be > 0 (got " + fmt(s.duration_s) + ")");
      }
      segEnd_ = spec.schedule[0].duration_s;
      break;
    }
    case ArrivalSpec::Process::Closed:
      // A closed loop has no arrival clock of its own (closed_loop.h).
      throw InputError(what + ".process: 'closed' arrivals follow completions; they are not a timed process");
  }
}

bool ArrivalProcess::finite() const {
  return spec_.process == ArrivalSpec::Process::Schedule && spec_.schedule.back().rate == 0;
}

std::optional<double> ArrivalProcess::nextSeconds(Rng& rng) {
  if (ended_) return std::nullopt;
  switch (spec_.process) {
    case ArrivalSpec::Process::Poisson:
      t_ += rng.exponential(spec_.rate);
      return t_;
    case ArrivalSpec::Process::Gamma: {
      const double shape = 1.0 / (spec_.cv * spec_.cv);
      const double scale = spec_.cv * spec_.cv / spec_.rate;
      t_ += rng.gamma(shape, scale);
      return t_;
    }
    case ArrivalSpec::Process::Schedule: {
      // Inversion of the cumulative intensity: one Exp(1) draw per arrival,
      // spent across segments until it is used up.
      double e = rng.exponential(1.0);
      const std::size_t last = spec_.schedule.size() - 1;
      for (;;) {
        const double rate = spec_.schedule[seg_].rate;
        if (seg_ == last) {
          if (rate <= 0) {
            ended_ = true;
            return std::nullopt;
          }
          t_ += e / rate;
          return t_;
        }
        const double left = segEnd_ - t_;
        if (rate > 0 && e <= rate * left) {
          t_ += e / rate;
          // Guard against rounding pushing t_ past the boundary.
          if (t_ > segEnd_) t_ = segEnd_;
          return t_;
        }
        e -= rate * left;
        t_ = segEnd_;
        ++seg_;
        segEnd_ += spec_.schedule[seg_].duration_s;
      }
    }
    case ArrivalSpec::Process::Closed: break;  // refused by the constructor
  }
  return std::nullopt;
}

std::optional<SimTime> ArrivalProcess::next(Rng& rng) {
  const auto s = nextSeconds(rng);
  if (!s) return std::nullopt;
  return secondsToNs(*s);
}

}  // namespace sl
