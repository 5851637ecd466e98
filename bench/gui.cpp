// servelab-bench-gui: B4 of 70-quality.md ("GUI, 32 instances at as fast as
// possible: >= 60 repaints/s, paint <= 8 ms, snapshot publish <= 1 ms").
//
// Opens the main window (offscreen platform unless QT_QPA_PLATFORM is set)
// on a 32-instance scenario kept busy, and runs it as fast as possible for
// --seconds wall seconds in each of Run (animated), Fast and Express mode.
// Measured per mode:
//   repaints_per_s      paint events the cluster view received per wall second
//   cluster_paint_ms    wall time of the cluster view's paintEvent (p50/p99/max)
//   window_repaint_ms   a synchronous full repaint of the main window, ~10/s
// and once, outside the window:
//   snapshot_publish_ms what the worker does to publish a frame: a fresh
//                       LiveFrame, Simulator::fillSnapshot for 32 instances,
//                       and the swap into the latest-wins slot under a mutex.
//                       SimController does not expose its own timing, so this
//                       replays that step on the same run state, here.
// `--json` prints one object; `--seconds` (default 3) sets each mode's length.
//
// `--to-end MODE` (issue 27 item 4) instead plays the scenario to its end in
// MODE (express, fast or run) as fast as possible, in the window, and
// reports the wall time, simulated seconds, fingerprint, finished requests
// and decode-lane steps: B5 in the app against headless B5
// (servelab-bench-macro --only B5). `--eager` keeps the engine's decode
// lanes off (the path the app took before its observer was lane-safe);
// `--b5-requests N` shrinks B5 (default 10^7, as the macro bench's flag).
// The CPU times are the worker thread's, the GUI thread's and the
// process's. `--screenshot PREFIX` saves the window half-way (the run
// going on) and at the end as PREFIX-mid.png, PREFIX-end.png; `--size WxH`
// sets the window (default 1920x1080); `--b5-reasoning MEDIAN` gives B5's
// requests reasoning tokens (lognormal, p90 3x the median) for pictures of
// the TTFT-vs-reasoning chart (not for timings: B5 has none).
#include <QApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QEventLoop>
#include <QTimer>
#include <QWidget>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include "ui/cluster/cluster_view.h"
#include "run/live_run.h"
#include "ui/shell/main_window.h"
#include "ui/controller/sim_controller.h"

namespace {

using nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

ordered_json stats(std::vector<double> v) {
  ordered_json j;
  j["n"] = v.size();
  if (v.empty()) {
    j["p50"] = j["p90"] = j["p99"] = j["max"] = nullptr;
    return j;
  }
  std::sort(v.begin(), v.end());
  auto q = [&](double p) { return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))]; };
  j["p50"] = q(0.50);
  j["p90"] = q(0.90);
  j["p99"] = q(0.99);
  j["max"] = v.back();
  return j;
}

// Times the cluster view's paintEvent: the filter runs the widget's own event
// handler itself and swallows the event, so the handler runs exactly once.
class PaintTimer : public QObject {
public:
  explicit PaintTimer(QWidget* w) : w_(w) { w_->installEventFilter(this); }
  bool eventFilter(QObject* o, QEvent* e) override {
    if (o != w_ || e->type() != QEvent::Paint || inside_) return false;
    inside_ = true;
    const auto t0 = Clock::now();
    static_cast<QObject*>(w_)->event(e);
    samples.push_back(ms(Clock::now() - t0));
    if (!forced) {
      ++natural;
      at.push_back(Clock::now());
    }
    inside_ = false;
    return true;
  }
  std::vector<double> samples;
  std::size_t natural = 0;  // paints the GUI asked for itself
  std::vector<Clock::time_point> at;  // when each of those began
  bool forced = false;      // inside the bench's own full-window repaint

private:
  QWidget* w_;
  bool inside_ = false;
};

sl::Scenario busyScenario(int instances) {
  sl::Scenario s;  // the embedded default: h100-sxm-80g, llama-3.1-8b, Poisson chat, fcfs
  s.cluster.instances = instances;
  s.workload.arrival.rate = 3.0 * instances;  // busy and stable: ~14 requests in flight per instance
  s.workload.requests = 5'000'000;             // never drains during the bench
  s.run.seed = 1;
  return s;
}

ordered_json runMode(sl::ui::MainWindow& w, sl::ui::RunMode mode, double seconds) {
  PaintTimer paints(w.clusterView());
  sl::ui::SimController& c = *w.controller();
  const double t0 = c.latest()->clockS;
  const std::int64_t e0 = c.latest()->snapshot.events;
  c.setSpeed(0);  // as fast as possible
  c.setMode(mode);
  c.play();
  std::vector<double> window;
  QElapsedTimer wall;
  wall.start();
  const auto start = Clock::now();
  // The app's own event loop (blocking, as in exec()): the repaint rate is
  // what the GUI asks for by itself, with nothing else painting.
  {
    QEventLoop loop;
    QTimer::singleShot(static_cast<int>(seconds * 1000), &loop, &QEventLoop::quit);
    loop.exec();
  }
  const double elapsed = static_cast<double>(wall.elapsed()) / 1000.0;
  const std::size_t natural = paints.natural;
  // Beats missed: a gap between two paints of more than 1.5 of the mode's
  // periods (Run pulls at 60 Hz, Fast at 4, Express at 1: one missed beat
  // or more), and the wait for the first paint.
  const double periodMs = mode == sl::ui::RunMode::Run ? 1000.0 / 60.0 : mode == sl::ui::RunMode::Fast ? 250.0 : 1000.0;
  std::vector<double> gaps;
  std::size_t missed = 0;
  for (std::size_t i = 1; i < paints.at.size(); ++i) {
    gaps.push_back(ms(paints.at[i] - paints.at[i - 1]));
    if (gaps.back() > 1.5 * periodMs) missed += static_cast<std::size_t>(std::lround(gaps.back() / periodMs)) - 1;
  }
  const double firstPaintMs = paints.at.empty() ? -1.0 : ms(paints.at.front() - start);
  const double t1 = c.latest()->clockS;
  const std::int64_t e1 = c.latest()->snapshot.events;
  // Then one more second with a full repaint of the window every 100 ms on
  // the side, to time whole-window paints (these also paint the cluster view
  // and would absorb its own updates, so they are kept out of the rate).
  {
    QEventLoop loop;
    QTimer repaint;
    QObject::connect(&repaint, &QTimer::timeout, [&] {
      paints.forced = true;
      const auto r0 = Clock::now();
      w.repaint();
      window.push_back(ms(Clock::now() - r0));
      paints.forced = false;
    });
    repaint.start(100);
    QTimer::singleShot(1000, &loop, &QEventLoop::quit);
    loop.exec();
  }
  const double repaintsPerS = static_cast<double>(natural) / elapsed;
  c.pause();
  c.waitIdle(5000);
  QCoreApplication::processEvents();
  const auto f = c.latest();
  ordered_json j;
  j["wall_s"] = elapsed;
  j["repaints_per_s"] = repaintsPerS;
  j["frame_gap_ms"] = stats(gaps);
  j["missed_beats"] = missed;
  j["first_paint_ms"] = firstPaintMs;
  j["cluster_paint_ms"] = stats(paints.samples);
  j["window_repaint_ms"] = stats(window);
  j["sim_s_advanced"] = t1 - t0;  // over wall_s (the rate phase)
  j["events"] = e1 - e0;
  j["in_flight_at_end"] = f->snapshot.inFlight;
  return j;
}

ordered_json snapshotPublish(const sl::Scenario& s, double simSeconds, int samples) {
  auto live = sl::prepareLiveRun(s, "bench");
  live->sim().run(sl::secondsToNs(simSeconds));
  std::mutex m;
  std::shared_ptr<const sl::ui::LiveFrame> latest = std::make_shared<sl::ui::LiveFrame>();
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(samples));
  std::size_t requests = 0;
  for (int i = 0; i < samples; ++i) {
    // Advance a little between samples, as slices do.
    live->sim().run(live->sim().now() + sl::kNsPerSecond / 100);
    const auto t0 = Clock::now();
    auto f = std::make_shared<sl::ui::LiveFrame>();
    live->sim().fillSnapshot(f->snapshot);
    f->changes = live->changes;
    f->fingerprint = live->sim().fingerprint();
    {
      std::lock_guard<std::mutex> lock(m);
      latest = std::move(f);
    }
    t.push_back(ms(Clock::now() - t0));
    requests = static_cast<std::size_t>(latest->snapshot.inFlight);
  }
  ordered_json j = stats(t);
  j["sim_s_before"] = simSeconds;
  j["in_flight"] = requests;
  j["instances"] = latest->snapshot.instances.size();
  return j;
}

// B5's scenario (bench/macro.cpp): 512 x h100-sxm-80g, llama-3.1-8b,
// 10^7 Poisson chat requests at 4 800 req/s, fcfs + least-loaded, seed 1
// (issue 16 item 4: the GUI stays responsive in Express mode on it).
// `reasoningMedian` > 0: reasoning tokens lognormal with that median (p90
// 3x), for pictures of the TTFT-vs-reasoning scatter; 0: B5 as measured.
sl::Scenario b5Scenario(std::int64_t requests, double reasoningMedian = 0) {
  sl::Scenario s;
  if (reasoningMedian > 0) {
    s.workload.reasoning_tokens.kind = sl::LengthDist::Kind::Lognormal;
    s.workload.reasoning_tokens.median = reasoningMedian;
    s.workload.reasoning_tokens.p90 = 3 * reasoningMedian;
  }
  s.cluster.instances = 512;
  s.cluster.gpu = "h100-sxm-80g";
  s.model = "llama-3.1-8b";
  s.workload.arrival.process = sl::ArrivalSpec::Process::Poisson;
  s.workload.arrival.rate = 4800;
  s.workload.requests = requests;
  s.policy.id = "fcfs";
  s.policy.router = "least-loaded";
  s.run.seed = 1;
  return s;
}

// CPU seconds (user + system) of the task whose /proc folder is `task`.
double taskCpuS(const std::filesystem::path& task) {
  std::ifstream stat(task / "stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  // Fields after the ")" that closes the name: state is field 3; utime, stime are 14, 15.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string tok;
  double utime = 0, stime = 0;
  for (int field = 3; field <= 15 && rest >> tok; ++field) {
    if (field == 14) utime = std::atof(tok.c_str());
    if (field == 15) stime = std::atof(tok.c_str());
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU seconds of this process's thread named `name`, from /proc (Linux); -1
// when not found. On a shared machine the wall time measures the load as
// much as the code: the worker's CPU time does not.
double threadCpuS(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(e.path() / "comm");
    std::string c;
    std::getline(comm, c);
    if (c == name) return taskCpuS(e.path());
  }
  return -1;
}

// CPU seconds of the main (GUI) thread: the task whose id is the process's.
double mainThreadCpuS() { return taskCpuS("/proc/self/task/" + std::to_string(getpid())); }

double processCpuS() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Plays the loaded run to its end in `mode`, unpaced, with the window's
// own event loop (it pulls frames as in exec()).
// `shots`: when not empty, the window is saved as <shots>-mid.png once half
// the requests have finished (the run going on) and <shots>-end.png at the end.
ordered_json runToEnd(sl::ui::MainWindow& w, sl::ui::RunMode mode, const QString& shots) {
  sl::ui::SimController& c = *w.controller();
  c.setSpeed(0);  // as fast as possible
  c.setMode(mode);
  const double cpu0 = processCpuS(), worker0 = threadCpuS("servelab-sim"), gui0 = mainThreadCpuS();
  const auto start = Clock::now();
  c.play();
  {
    QEventLoop loop;
    QTimer poll;
    bool midShot = shots.isEmpty();
    QObject::connect(&poll, &QTimer::timeout, [&] {
      const auto f = c.latest();
      if (!midShot && f->progress >= 0.5 && !f->done) {
        midShot = true;
        w.grab().save(shots + "-mid.png", "PNG");
      }
      if (f->done) loop.quit();
    });
    poll.start(50);
    loop.exec();
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = processCpuS() - cpu0, worker = threadCpuS("servelab-sim") - worker0,
               gui = mainThreadCpuS() - gui0;
  c.waitIdle(5000);
  const auto f = c.latest();
  if (!shots.isEmpty()) {
    QCoreApplication::processEvents();
    w.pullNow();
    QCoreApplication::processEvents();
    w.grab().save(shots + "-end.png", "PNG");
  }
  char fp[17];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(f->fingerprint));
  ordered_json j;
  j["wall_s"] = wall;
  j["worker_busy_s"] = f->wallS;  // wall time of the worker's slices
  j["worker_cpu_s"] = worker;     // CPU time of the worker thread (engine + observer + publishing)
  j["process_cpu_s"] = cpu;       // every thread: the GUI's pulls, charts and paints too
  j["gui_thread_cpu_s"] = gui;    // the GUI thread alone (pulls, charts, paints; not the tail-overlay jobs)
  j["sim_s"] = f->clockS;
  j["finished"] = f->snapshot.finished;
  j["events"] = f->snapshot.events;
  j["fingerprint"] = fp;
  j["lane_steps"] = f->laneSteps;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3.0;
  bool json = false;
  int instances = 32;
  std::string modes = "run,fast,express";  // which to measure (profiling one alone)
  bool b5 = false;                         // B5's scenario (512 instances) instead of the busy one
  std::int64_t b5Requests = 10'000'000;
  std::string toEnd;                       // play to the end in this mode instead of the timed modes
  bool eager = false;                      // keep the decode lanes off
  QString shots;                           // --to-end: window captures <prefix>-mid.png, -end.png
  int width = 1920, height = 1080;
  double reasoning = 0;                    // --b5-reasoning MEDIAN: B5 with reasoning (pictures)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (a == "--instances" && i + 1 < argc) instances = std::atoi(argv[++i]);
    else if (a == "--modes" && i + 1 < argc) modes = argv[++i];
    else if (a == "--b5") b5 = true;
    else if (a == "--b5-requests" && i + 1 < argc) b5Requests = std::max<std::int64_t>(1, std::atoll(argv[++i]));
    else if (a == "--to-end" && i + 1 < argc) toEnd = argv[++i];
    else if (a == "--eager") eager = true;
    else if (a == "--b5-reasoning" && i + 1 < argc) reasoning = std::atof(argv[++i]);
    else if (a == "--screenshot" && i + 1 < argc) shots = QString::fromLocal8Bit(argv[++i]);
    else if (a == "--size" && i + 1 < argc && std::sscanf(argv[i + 1], "%dx%d", &width, &height) == 2) ++i;
    else {
      std::fprintf(stderr,
                   "usage: servelab-bench-gui [--seconds S] [--instances N | --b5 [--b5-requests N] [--b5-reasoning MEDIAN]]\n"
                   "                          [--modes M,...]\n"
                   "                          [--to-end express|fast|run [--screenshot PREFIX]] [--size WxH]\n"
                   "                          [--eager] [--json]\n");
      return 2;
    }
  }
  if (seconds <= 0 || instances < 1 || instances > 128) {
    std::fprintf(stderr, "servelab-bench-gui: --seconds must be > 0 and --instances 1..128\n");
    return 2;
  }
  if (!toEnd.empty() && toEnd != "express" && toEnd != "fast" && toEnd != "run") {
    std::fprintf(stderr, "servelab-bench-gui: --to-end must be express, fast or run, not '%s'\n", toEnd.c_str());
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName("ServeLabBench");
  QCoreApplication::setApplicationName("servelab-bench-gui");

  if (b5) instances = 512;
  const sl::Scenario s = b5 ? b5Scenario(b5Requests, reasoning) : busyScenario(instances);
  ordered_json out;
  out["bench"] = "B4";
  out["platform"] = QGuiApplication::platformName().toStdString();
  out["instances"] = instances;
  out["scenario"] = b5 ? "B5" : "busy (3 req/s per instance)";
  if (b5) out["requests"] = b5Requests;
  out["decode_lanes"] = !eager;
  if (toEnd.empty()) out["seconds_per_mode"] = seconds;
  {
    sl::ui::MainWindow w;
    w.resize(width, height);
    w.fitDocksToSize();
    w.show();
    w.controller()->setDecodeLanes(!eager);
    QString err;
    if (!w.loadScenario(s, "bench", &err)) {
      std::fprintf(stderr, "servelab-bench-gui: %s\n", qPrintable(err));
      return 1;
    }
    QCoreApplication::processEvents();
    out["window"] = std::to_string(w.width()) + "x" + std::to_string(w.height());
    if (!toEnd.empty()) {
      const auto mode = toEnd == "express" ? sl::ui::RunMode::Express
                        : toEnd == "fast"  ? sl::ui::RunMode::Fast
                                           : sl::ui::RunMode::Run;
      out["to_end"] = toEnd;
      out["run"] = runToEnd(w, mode, shots);
      if (json) {
        std::cout << out.dump(2) << "\n";
      } else {
        const ordered_json& r = out["run"];
        std::printf("%s to the end in %s mode (decode lanes %s): wall %.2f s (worker cpu %.2f s, process cpu %.2f s, gui thread cpu %.2f s), "
                    "%.1f simulated s, %lld finished, fingerprint %s, %lld lane steps\n",
                    out["scenario"].get<std::string>().c_str(), toEnd.c_str(), eager ? "off" : "on",
                    r["wall_s"].get<double>(), r["worker_cpu_s"].get<double>(), r["process_cpu_s"].get<double>(),
                    r["gui_thread_cpu_s"].get<double>(),
                    r["sim_s"].get<double>(),
                    static_cast<long long>(r["finished"].get<std::int64_t>()),
                    r["fingerprint"].get<std::string>().c_str(),
                    static_cast<long long>(r["lane_steps"].get<std::int64_t>()));
      }
      return 0;
    }
    ordered_json measured;
    const auto wanted = [&](const char* m) { return ("," + modes + ",").find(std::string(",") + m + ",") != std::string::npos; };
    if (wanted("run")) measured["run"] = runMode(w, sl::ui::RunMode::Run, seconds);
    if (wanted("fast")) measured["fast"] = runMode(w, sl::ui::RunMode::Fast, seconds);
    if (wanted("express")) measured["express"] = runMode(w, sl::ui::RunMode::Express, seconds);
    out["modes"] = measured;
  }
  out["snapshot_publish_ms"] = snapshotPublish(s, 60.0, seconds < 1 ? 200 : 2000);
  const ordered_json run = out["modes"].contains("run") ? out["modes"]["run"] : ordered_json{{"repaints_per_s", 0.0}};
  const auto p99 = [](const ordered_json& st) {
    return !st.contains("p99") || st["p99"].is_null() ? 1e9 : st["p99"].get<double>();
  };
  ordered_json meets;
  meets["repaints_per_s_ge_60"] = run["repaints_per_s"].get<double>() >= 60.0;
  meets["cluster_paint_p99_le_8ms"] = p99(run["cluster_paint_ms"]) <= 8.0;
  meets["window_repaint_p99_le_8ms"] = p99(run["window_repaint_ms"]) <= 8.0;
  meets["publish_p99_le_1ms"] = p99(out["snapshot_publish_ms"]) <= 1.0;
  out["meets_B4"] = meets;

  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("B4: %d instances, %s platform, window %s, %.1f s per mode\n", instances,
              out["platform"].get<std::string>().c_str(), out["window"].get<std::string>().c_str(), seconds);
  std::printf("%-8s %12s %8s %20s %20s %12s\n", "mode", "repaints/s", "missed", "cluster paint p50/p99",
              "window p50/p99", "sim s");
  for (const char* m : {"run", "fast", "express"}) {
    if (!out["modes"].contains(m)) continue;
    const ordered_json& r = out["modes"][m];
    auto v = [](const ordered_json& x) { return x.is_null() ? -1.0 : x.get<double>(); };
    std::printf("%-8s %12.1f %8zu %9.2f /%6.2f ms %9.2f /%6.2f ms %12.1f\n", m, r["repaints_per_s"].get<double>(),
                r["missed_beats"].get<std::size_t>(),
                v(r["cluster_paint_ms"]["p50"]), v(r["cluster_paint_ms"]["p99"]), v(r["window_repaint_ms"]["p50"]),
                v(r["window_repaint_ms"]["p99"]), r["sim_s_advanced"].get<double>());
  }
  const ordered_json& p = out["snapshot_publish_ms"];
  std::printf("snapshot publish (fill + swap, %zu instances, %zu in flight): p50 %.3f ms, p99 %.3f ms\n",
              p["instances"].get<std::size_t>(), p["in_flight"].get<std::size_t>(), p["p50"].get<double>(),
              p["p99"].get<double>());
  return 0;
}
