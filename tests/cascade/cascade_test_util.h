#pragma once
// A cluster of FCFS instances under a CascadeGlobal on the tiny cost model of
// policy_harness.h (iteration = 1 ms + 0.1 ms per token or sequence), with
// the timers the test does not want switched off.
#include <memory>
#include <vector>

#include "policy/baselines/local_fcfs.h"
#include "policy/cascade/cascade_global.h"
#include "policy/cascade/llumnix_global.h"
#include "policy_harness.h"

namespace sl::cascadetest {

/// No replan, no refinement, no rebalancing timer: only what a test calls.
inline CascadeConfig quietConfig() {
  CascadeConfig c;
  c.layout = CascadeLayout::Single;
  c.replanIntervalS = 0;
  c.refineIntervalS = 0;
  c.intraStage = false;
  c.messageLatencyS = 0.001;
  return c;
}

struct CascadeRig {
  CascadeRig(CascadeConfig cc, int instances, std::vector<RequestSpec> reqs, std::vector<int> perStage,
             std::vector<std::int32_t> uppers, double linkBytesPerSec = 1e6, std::int64_t gpuBlocks = 100000) {
    InstanceConfig ic = test::tinyInstance(gpuBlocks, 16);
    ic.hostLinkBytesPerSec = linkBytesPerSec;  // instances share a node without NVLink: the host link
    SimConfig c = test::tinySim(ic, instances);
    auto g = std::make_unique<CascadeGlobal>(std::move(cc));
    global = g.get();
    sim = std::make_unique<Simulator>(c, test::tinyCost(), std::make_unique<test::ListWorkload>(std::move(reqs)),
                                      std::move(g), [](int) { return std::make_unique<FcfsLocal>(); });
    sim->addObserver(&rec);
    global->setLayout(perStage, uppers);
  }
  Request* find(std::int64_t id) {
    Request* out = nullptr;
    sim->forEachActive([&](const Request& r) {
      if (r.id == id) out = const_cast<Request*>(&r);
    });
    return out;
  }
  int liveTotal() const {
    int n = 0;
    for (int i = 0; i < sim->numInstances(); ++i) n += sim->liveMigrations(i);
    return n;
  }
  test::Recorder rec;
  CascadeGlobal* global = nullptr;
  std::unique_ptr<Simulator> sim;
};

}  // namespace sl::cascadetest
