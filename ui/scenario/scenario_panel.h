#pragma once
// The left dock: the scenario's cluster, model, workload and policy (with its
// knobs: unit, range, default, tooltip; invalid values refused inline), plus
// the live arrival-rate slider that acts on the running simulation.
#include <QElapsedTimer>
#include <QWidget>

#include <map>
#include <string>

#include "scenario/spec.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;

namespace sl::ui {

class ScenarioPanel : public QWidget {
  Q_OBJECT
public:
  explicit ScenarioPanel(QWidget* parent = nullptr);

  /// Show `s` in the widgets (no signals).
  void setScenario(const Scenario& s);
  /// The edited scenario (fields the panel does not show are kept from the
  /// last setScenario). False and a reason when a field is invalid.
  bool buildScenario(Scenario& out, QString* error) const;
  /// Inline message under the Apply button (empty hides it).
  void setError(const QString& message);
  /// Live arrival-rate slider: value shown and whether the workload allows it.
  void setLiveRate(double rate, bool enabled);
  double liveRate() const;
  /// Live closed-loop clients slider: shown only for a closed-loop scenario.
  void setLiveClients(int clients, bool shown);
  /// Live speculative decoding: on/off and k (the draft length in force,
  /// 0 = off); enabled only when the loaded scenario has
  /// cluster.speculative (`available`), its tooltip otherwise says to add it.
  void setLiveSpeculation(int k, bool available);
  QCheckBox* speculationToggle() const { return specOn_; }
  QSpinBox* speculationK() const { return specK_; }
  /// The largest k the control offers (the engine's kMaxSpeculativeK).
  static constexpr int kMaxLiveSpecK = 16;

  QComboBox* policyCombo() const { return policy_; }
  QSlider* rateSlider() const { return rateSlider_; }
  QPushButton* applyButton() const { return apply_; }
  /// Use the trace file at `path` (relative paths resolve against `baseDir`):
  /// its format is detected and shown; false + inline error when it cannot be read.
  bool setTraceFile(const QString& path, const std::string& baseDir = {});
  /// The inline refusal shown under a knob ("" when none).
  QString knobError(const std::string& knob) const;
  QLabel* rateLabel() const { return rateLabel_; }
  /// Length editors: kind combo ("constant", "uniform", "lognormal" or
  /// "file") and its two numbers, for input (0), reasoning (1), answer (2).
  QComboBox* lengthKind(int i) const { return lengths_[i].kind; }
  QDoubleSpinBox* lengthA(int i) const { return lengths_[i].a; }
  QDoubleSpinBox* lengthB(int i) const { return lengths_[i].b; }
  QDoubleSpinBox* traceTimeScale() const { return timeScale_; }
  QDoubleSpinBox* traceWindowStart() const { return windowStart_; }
  QDoubleSpinBox* traceWindowEnd() const { return windowEnd_; }
  /// Knob editors of the selected policy, by knob name.
  const std::map<std::string, QDoubleSpinBox*>& knobEditors() const { return knobs_; }
  /// The policy of the loaded run: while the panel shows that policy, its
  /// live-safe knobs apply at once (liveKnobChanged) instead of asking for Apply.
  void setRunningPolicy(const std::string& id) { runningPolicy_ = id; }
  bool dirty() const { return dirty_; }
  /// The initial-rate field was edited since the scenario was shown.
  bool rateEdited() const { return rateEdited_; }

signals:
  void applyRequested();
  void liveRateChanged(double rate);
  void liveClientsChanged(int clients);
  /// The speculation control moved: the draft length from the next step on
  /// (0 = off), for the "speculative_k" live change.
  void liveSpeculativeKChanged(int k);
  /// A live-safe knob of the running policy moved (applied mid-run, logged).
  void liveKnobChanged(const QString& knob, double value);

private:
  void rebuildKnobs(const std::string& policyId, const nlohmann::json& values);
  void markDirty();
  void updateArrivalRows();
  /// Show the lengths the run will use: the preset's when one is picked
  /// (read-only), else the scenario's own (editable where the panel can).
  void fillLengths();
  void updateLengthRows();
  static double sliderToRate(int v);
  static int rateToSlider(double r);

  Scenario base_;
  QSpinBox* instances_ = nullptr;
  QComboBox* gpu_ = nullptr;
  QComboBox* tp_ = nullptr;
  QComboBox* modelDtype_ = nullptr;  // cluster.model_dtype
  QComboBox* kvDtype_ = nullptr;     // cluster.kv_dtype
  QDoubleSpinBox* kvFraction_ = nullptr;
  QComboBox* model_ = nullptr;
  QComboBox* workload_ = nullptr;
  QSpinBox* requests_ = nullptr;
  QDoubleSpinBox* rate_ = nullptr;
  QDoubleSpinBox* nicGbps_ = nullptr;
  QSpinBox* gpusPerNode_ = nullptr;
  QComboBox* arrivals_ = nullptr;
  QDoubleSpinBox* cv_ = nullptr;
  QLineEdit* tracePath_ = nullptr;
  QPushButton* traceBrowse_ = nullptr;
  QLabel* traceFormat_ = nullptr;
  QString traceFile_;  // as written in the scenario (may be relative to its folder)
  QDoubleSpinBox* timeScale_ = nullptr;    // trace: multiply timestamps
  QDoubleSpinBox* windowStart_ = nullptr;  // trace: keep arrivals in [start, end); 0 = unbounded
  QDoubleSpinBox* windowEnd_ = nullptr;
  /// Length distributions (input, reasoning, answer): kind + two numbers.
  struct LengthEditor {
    const char* key;  // "input_tokens", ...
    QComboBox* kind = nullptr;
    QDoubleSpinBox* a = nullptr;
    QDoubleSpinBox* b = nullptr;
  };
  LengthEditor lengths_[3] = {{"input_tokens"}, {"reasoning_tokens"}, {"answer_tokens"}};
  QComboBox* policy_ = nullptr;
  QLabel* policyDesc_ = nullptr;
  QComboBox* router_ = nullptr;
  QWidget* knobBox_ = nullptr;
  QFormLayout* knobForm_ = nullptr;
  std::map<std::string, QDoubleSpinBox*> knobs_;
  std::string runningPolicy_;
  std::map<std::string, QLabel*> knobErrors_;
  QSlider* rateSlider_ = nullptr;
  QLabel* rateLabel_ = nullptr;
  QSlider* clientsSlider_ = nullptr;
  QLabel* clientsLabel_ = nullptr;
  QWidget* clientsRow_ = nullptr;
  QLabel* clientsRowLabel_ = nullptr;
  QCheckBox* specOn_ = nullptr;
  QSpinBox* specK_ = nullptr;
  QLabel* specRowLabel_ = nullptr;
  int specAvailable_ = -1;  // the control's state as last set (-1: never)
  int pendingSpecK_ = -1;   // the k last sent, until a frame shows it (-1: none)
  QElapsedTimer pendingSince_;
  QPushButton* apply_ = nullptr;
  QLabel* error_ = nullptr;
  bool dirty_ = false;
  bool rateEdited_ = false;
  bool filling_ = false;
  int pressedAt_ = -1;  // a live slider's value when its handle was pressed
};

}  // namespace sl::ui
