#pragma once
// Moved to core/run/live_run.h (namespace sl) so that `servelab-cli run` can
// replay a saved run. This forwarding header keeps `#include "live_run.h"`
// and the sl::ui:: names working for code not yet switched over
// (bench/gui.cpp, ui/chart_panel.h); new code includes "run/live_run.h".
#include "run/live_run.h"

namespace sl::ui {
using sl::ChangeLog;
using sl::KnobChange;
using sl::LiveRun;
using sl::ReplayResult;
using sl::changeLogFromJson;
using sl::changeLogToJson;
using sl::kKnobArrivalRate;
using sl::kKnobPolicyPrefix;
using sl::liveRateSupported;
using sl::prepareLiveRun;
using sl::replayRun;
}  // namespace sl::ui
