// Cost-model calibration (20-cost-model.md "Calibration"): NNLS, the fit's
// recovery of known coefficients from noisy synthetic measurements, its
// held-out error, the measurements CSV reader and the shipped sample.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "cost/calibration.h"
#include "cost/presets.h"
#include "sample_measurements.h"
#include "util/error.h"

namespace sl {
namespace {

const PresetRegistry& reg() {
  return PresetRegistry::builtin();
}

// ------------------------------------------------------------------- NNLS

TEST(Nnls, ExactNonNegativeSolution) {
  Eigen::MatrixXd A(5, 3);
  A << 1, 2, 0, 0, 1, 1, 3, 0, 1, 1, 1, 1, 2, 0, 5;
  const Eigen::Vector3d x0(0.5, 2.0, 1.5);
  const Eigen::VectorXd x = nnls(A, A * x0);
  EXPECT_NEAR((x - x0).norm(), 0.0, 1e-10);
}

TEST(Nnls, ClampsNegativeComponentAndSatisfiesKkt) {
  // Unconstrained least squares wants a negative second component.
  Eigen::MatrixXd A(4, 2);
  A << 1, 1, 1, 2, 1, 3, 1, 4;
  Eigen::VectorXd b(4);
  b << 4, 3, 2, 1;
  const Eigen::VectorXd ls = A.colPivHouseholderQr().solve(b);
  ASSERT_LT(ls(1), 0);
  const Eigen::VectorXd x = nnls(A, b);
  ASSERT_EQ(x.size(), 2);
  EXPECT_GE(x(0), 0);
  EXPECT_EQ(x(1), 0);
  EXPECT_NEAR(x(0), 2.5, 1e-12);  // mean of b
  // KKT: gradient w = Aᵀ(b − Ax) is 0 on the positive set and <= 0 elsewhere.
  const Eigen::VectorXd w = A.transpose() * (b - A * x);
  EXPECT_NEAR(w(0), 0, 1e-9);
  EXPECT_LE(w(1), 1e-9);
}

TEST(Nnls, ZeroColumnStaysZero) {
  Eigen::MatrixXd A(3, 2);
  A << 1, 0, 2, 0, 3, 0;
  Eigen::VectorXd b(3);
  b << 2, 4, 6;
  const Eigen::VectorXd x = nnls(A, b);
  EXPECT_NEAR(x(0), 2.0, 1e-12);
  EXPECT_EQ(x(1), 0.0);
}

// ------------------------------------------------------------- recovery

struct Setup {
  const char* gpu;
  const char* model;
};

class Recovery : public ::testing::TestWithParam<Setup> {};

// Known coefficients, different from the defaults. t_step : t_layer keeps the
// defaults' ratio: with a single model only t_step + t_layer·layers is
// identifiable and the fit splits it in the base (default) ratio.
CostCoefficients truthCoefficients() {
  CostCoefficients t;
  t.eta_c = 0.62;
  t.eta_a = 0.47;
  t.eta_w = 0.80;
  t.eta_kv = 0.44;
  t.t_step_us = 150;
  t.t_layer_us = 150.0 * CostCoefficients{}.t_layer_us / CostCoefficients{}.t_step_us;
  t.t_seq_us = 6.0;
  t.kappa = 0.8;
  t.alpha_hop_us = 2.5;
  t.hetero = HeteroMode::Cv;  // the rule with a fitted slope (kappa)
  return t;
}

// Fitting under the cv rule, as the truth above.
CalibrationOptions cvOptions() {
  CalibrationOptions o;
  o.base.hetero = HeteroMode::Cv;
  return o;
}

CalibrationOptions ringOptions() {
  CalibrationOptions o = cvOptions();
  o.allreduce = AllReduceMode::Ring;
  return o;
}

void expectWithin(double got, double want, double rel, const char* what) {
  EXPECT_NEAR(got, want, rel * std::abs(want)) << what << ": got " << got << ", want " << want;
}

TEST_P(Recovery, RecoversEachCoefficientWithinTwoPercent) {
  const GpuSpec& gpu = reg().gpu(GetParam().gpu);
  const ModelSpec& model = reg().model(GetParam().model);
  const CostCoefficients truth = truthCoefficients();
  // The ring all-reduce (cluster.allreduce "ring") is the model with a
  // fitted communication term, α_hop.
  const auto rows = synthesizeMeasurements(gpu, model, truth, 4000, 42, 0.01, {1, 2, 4}, AllReduceMode::Ring);
  CalibrationReport rep;
  const CostProfile p = calibrateCostModel(gpu, model, rows, ringOptions(), &rep);
  const CostCoefficients& c = p.coefficients;
  EXPECT_EQ(p.gpu, gpu.id);
  EXPECT_EQ(p.model, model.id);
  EXPECT_TRUE(rep.converged);
  EXPECT_GT(rep.computeBoundRows, 0);
  EXPECT_GT(rep.cappedRows, 0);
  expectWithin(c.t_step_us, truth.t_step_us, 0.02, "t_step_us");
  expectWithin(c.t_layer_us, truth.t_layer_us, 0.02, "t_layer_us");
  expectWithin(c.t_seq_us, truth.t_seq_us, 0.02, "t_seq_us");
  expectWithin(c.eta_c, truth.eta_c, 0.02, "eta_c");
  expectWithin(c.eta_a, truth.eta_a, 0.02, "eta_a");
  expectWithin(c.eta_w, truth.eta_w, 0.02, "eta_w");
  expectWithin(c.eta_kv, truth.eta_kv, 0.02, "eta_kv");
  expectWithin(c.kappa, truth.kappa, 0.02, "kappa");
  expectWithin(c.alpha_hop_us, truth.alpha_hop_us, 0.02, "alpha_hop_us");
  EXPECT_EQ(c.h_max, truth.h_max);  // not fitted
  EXPECT_LT(rep.mape, 0.01);
  ASSERT_EQ(rep.terms.size(), 9u);
  for (const FittedTerm& t : rep.terms) EXPECT_TRUE(t.identified) << t.key;
  std::printf(
      "[calibration] %s/%s: mape %.3f%%, rounds %d, t_step %.2f t_layer %.3f t_seq %.3f eta_c %.4f "
      "eta_a %.4f eta_w %.4f eta_kv %.4f kappa %.4f alpha %.3f\n",
      gpu.id.c_str(), model.id.c_str(), rep.mape * 100, rep.iterations, c.t_step_us, c.t_layer_us, c.t_seq_us, c.eta_c,
      c.eta_a, c.eta_w, c.eta_kv, c.kappa, c.alpha_hop_us);
}

TEST_P(Recovery, NoiselessDataIsFitExactly) {
  const GpuSpec& gpu = reg().gpu(GetParam().gpu);
  const ModelSpec& model = reg().model(GetParam().model);
  const CostCoefficients truth = truthCoefficients();
  const auto rows = synthesizeMeasurements(gpu, model, truth, 300, 3, 0.0, {1, 2, 4}, AllReduceMode::Ring);
  CalibrationReport rep;
  const CostCoefficients c = calibrateCostModel(gpu, model, rows, ringOptions(), &rep).coefficients;
  EXPECT_LT(rep.mape, 1e-6);
  expectWithin(c.eta_kv, truth.eta_kv, 1e-6, "eta_kv");
  expectWithin(c.kappa, truth.kappa, 1e-6, "kappa");
  expectWithin(c.alpha_hop_us, truth.alpha_hop_us, 1e-6, "alpha_hop_us");
}

// With measured collectives (the default) the all-reduce time is known, not
// fitted: every other coefficient is recovered exactly from noiseless rows,
// α_hop is reported as not identified and keeps the base value.
TEST_P(Recovery, MeasuredAllReduceIsTakenAsKnown) {
  const GpuSpec& gpu = reg().gpu(GetParam().gpu);
  const ModelSpec& model = reg().model(GetParam().model);
  const CostCoefficients truth = truthCoefficients();
  const auto rows = synthesizeMeasurements(gpu, model, truth, 300, 3, 0.0, {1, 2, 4});
  CalibrationReport rep;
  const CostCoefficients c = calibrateCostModel(gpu, model, rows, cvOptions(), &rep).coefficients;
  EXPECT_LT(rep.mape, 1e-6);
  expectWithin(c.eta_c, truth.eta_c, 1e-6, "eta_c");
  expectWithin(c.eta_kv, truth.eta_kv, 1e-6, "eta_kv");
  expectWithin(c.t_seq_us, truth.t_seq_us, 1e-6, "t_seq_us");
  EXPECT_EQ(c.alpha_hop_us, CostCoefficients{}.alpha_hop_us);
  bool noted = false;
  for (const auto& n : rep.notes) noted = noted || n.find("alpha_hop_us: not fitted") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_P(Recovery, HeldOutMapeBelowThreePercent) {
  const GpuSpec& gpu = reg().gpu(GetParam().gpu);
  const ModelSpec& model = reg().model(GetParam().model);
  const auto all = synthesizeMeasurements(gpu, model, truthCoefficients(), 900, 7, 0.01, {1, 2, 4});
  const std::vector<Measurement> train(all.begin(), all.begin() + 600);
  const std::vector<Measurement> test(all.begin() + 600, all.end());
  const CostProfile p = calibrateCostModel(gpu, model, train, cvOptions());
  const double mape = costModelMape(gpu, model, p.coefficients, test);
  EXPECT_LT(mape, 0.03);
  // Fitting starts from the defaults, which are off by 10-40 %: the fit helps.
  EXPECT_LT(mape, costModelMape(gpu, model, cvOptions().base, test));
}

// Under the kernel rule (the default) decode attention is the kernel h (known
// for each row: batch, model, tp, SM slots) times the KV read: eta_kv and the
// rest are recovered exactly, kappa is not fitted and keeps the base.
TEST_P(Recovery, KernelRuleFitsEtaKvAndLeavesKappa) {
  const GpuSpec& gpu = reg().gpu(GetParam().gpu);
  const ModelSpec& model = reg().model(GetParam().model);
  CostCoefficients truth = truthCoefficients();
  truth.hetero = HeteroMode::Kernel;
  const auto rows = synthesizeMeasurements(gpu, model, truth, 300, 3, 0.0, {1, 2, 4});
  CalibrationReport rep;
  CalibrationOptions opt;
  opt.base.hetero = HeteroMode::Kernel;
  const CostCoefficients c = calibrateCostModel(gpu, model, rows, opt, &rep).coefficients;
  EXPECT_EQ(c.hetero, HeteroMode::Kernel);
  EXPECT_LT(rep.mape, 1e-6);
  expectWithin(c.eta_kv, truth.eta_kv, 1e-6, "eta_kv");
  expectWithin(c.eta_c, truth.eta_c, 1e-6, "eta_c");
  EXPECT_EQ(c.kappa, CostCoefficients{}.kappa);
  EXPECT_EQ(rep.cappedRows, 0);
  bool noted = false;
  for (const auto& n : rep.notes) noted = noted || n.find("kappa: not fitted: hetero = kernel") != std::string::npos;
  EXPECT_TRUE(noted);
  for (const FittedTerm& t : rep.terms) {
    if (t.key == "kappa") {
      EXPECT_FALSE(t.identified);
    }
  }
  // Fitting the cv rule to kernel-rule data cannot be exact.
  CalibrationReport cvRep;
  calibrateCostModel(gpu, model, rows, cvOptions(), &cvRep);
  EXPECT_GT(cvRep.mape, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Presets, Recovery,
                         ::testing::Values(Setup{"h100-sxm-80g", "llama-3.1-8b"},
                                           Setup{"h100-96g", "r1-distill-qwen-32b"}),
                         [](const auto& info) {
                           std::string s = std::string(info.param.gpu) + "_" + info.param.model;
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(Calibration, TermsTheDataDoesNotExerciseKeepTheBase) {
  const GpuSpec& gpu = reg().gpu("h100-sxm-80g");
  const ModelSpec& model = reg().model("llama-3.1-8b");
  // tp 1 only, decode only: no prefill attention, no all-reduce.
  std::vector<Measurement> rows;
  for (const Measurement& m : synthesizeMeasurements(gpu, model, truthCoefficients(), 600, 5, 0.01, {1}))
    if (m.prefill_seqs == 0) rows.push_back(m);
  ASSERT_GT(rows.size(), 50u);
  CalibrationOptions opt = cvOptions();
  CalibrationReport rep;
  const CostCoefficients c = calibrateCostModel(gpu, model, rows, opt, &rep).coefficients;
  EXPECT_EQ(c.eta_a, opt.base.eta_a);
  EXPECT_EQ(c.alpha_hop_us, opt.base.alpha_hop_us);
  for (const FittedTerm& t : rep.terms) {
    if (t.key == "eta_a" || t.key == "alpha_hop_us") {
      EXPECT_FALSE(t.identified) << t.key;
    }
  }
  EXPECT_GE(rep.notes.size(), 2u);
  // What the data does exercise is still recovered.
  expectWithin(c.eta_kv, truthCoefficients().eta_kv, 0.03, "eta_kv");
}

TEST(Calibration, NoRowsIsAnInputError) {
  const GpuSpec& gpu = reg().gpu("h100-sxm-80g");
  const ModelSpec& model = reg().model("llama-3.1-8b");
  EXPECT_THROW(calibrateCostModel(gpu, model, {}), InputError);
}

TEST(Calibration, ShapeReconstructsCostModelInputs) {
  Measurement m;
  m.decode_seqs = 4;
  m.decode_context_sum = 4000;
  m.decode_context_cv = 0.5;
  m.prefill_seqs = 2;
  m.prefill_tokens = 1000;
  m.cached_tokens = 600;
  const BatchShape b = m.shape();
  BatchShape want;
  addPrefillChunk(want, 500, 300);
  addPrefillChunk(want, 500, 300);
  EXPECT_DOUBLE_EQ(b.prefill_attn, want.prefill_attn);
  const CostModel cm(reg().gpu("h100-sxm-80g"), reg().model("llama-3.1-8b"));
  const double mean = 1000, sd = 500;
  EXPECT_NEAR(b.decode_ctx_sumsq, 4 * (sd * sd + mean * mean), 1e-6);
  EXPECT_NEAR(cm.heterogeneity(b), 1 + 0.6 * 0.5, 1e-12);
}

// -------------------------------------------------------------------- CSV

std::string expectCsvError(const std::string& text) {
  std::istringstream in(text);
  try {
    parseMeasurementsCsv(in, "m.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return {};
}

const char* kHeader =
    "tp,prefill_tokens,prefill_seqs,cached_tokens,decode_seqs,decode_context_sum,decode_context_cv,seconds\n";

TEST(MeasurementsCsv, ReadsRowsInAnyColumnOrderIgnoringExtraColumns) {
  std::istringstream in(
      "seconds,gpu_name,decode_context_cv,decode_context_sum,decode_seqs,cached_tokens,prefill_seqs,prefill_tokens,tp\n"
      "0.0125,H100,0.3,8192,8,0,0,0,2\n"
      "\n"
      "0.2,H100,0,0,0,1024,2,4096,1\n");
  const auto rows = parseMeasurementsCsv(in, "m.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tp, 2);
  EXPECT_EQ(rows[0].decode_seqs, 8);
  EXPECT_DOUBLE_EQ(rows[0].decode_context_sum, 8192);
  EXPECT_DOUBLE_EQ(rows[0].decode_context_cv, 0.3);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 0.0125);
  EXPECT_EQ(rows[0].line, 2);
  EXPECT_EQ(rows[1].prefill_seqs, 2);
  EXPECT_DOUBLE_EQ(rows[1].prefill_tokens, 4096);
  EXPECT_DOUBLE_EQ(rows[1].cached_tokens, 1024);
  EXPECT_EQ(rows[1].line, 4);
}

TEST(MeasurementsCsv, RoundTripsThroughTheWriter) {
  const auto rows =
      synthesizeMeasurements(reg().gpu("h100-sxm-80g"), reg().model("llama-3.1-8b"), CostCoefficients{}, 50, 11);
  std::string text = measurementsCsvHeader() + "\n";
  for (const auto& m : rows) text += measurementCsvRow(m) + "\n";
  std::istringstream in(text);
  const auto back = parseMeasurementsCsv(in, "x.csv");
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].tp, rows[i].tp);
    EXPECT_EQ(back[i].decode_seqs, rows[i].decode_seqs);
    EXPECT_EQ(back[i].prefill_seqs, rows[i].prefill_seqs);
    EXPECT_NEAR(back[i].seconds, rows[i].seconds, 1e-8 * rows[i].seconds);
  }
}

TEST(MeasurementsCsv, MalformedInputNamesFileAndLine) {
  EXPECT_NE(expectCsvError("").find("m.csv: empty file"), std::string::npos);
  EXPECT_NE(expectCsvError("tp,prefill_tokens,seconds\n1,2,3\n").find("m.csv:1: header lacks column 'prefill_seqs'"),
            std::string::npos);
  EXPECT_NE(expectCsvError(kHeader).find("m.csv: no measurement rows"), std::string::npos);
  const std::string h(kHeader);
  EXPECT_NE(expectCsvError(h + "1,0,0,0,8,8192,0.1,0.01\n1,0,0,0,8,8192,0.1\n").find("m.csv:3: expected 8 fields"),
            std::string::npos);
  EXPECT_NE(expectCsvError(h + "1,0,0,0,8,8192,abc,0.01\n").find("m.csv:2: decode_context_cv: not a number: 'abc'"),
            std::string::npos);
  EXPECT_NE(expectCsvError(h + "1.5,0,0,0,8,8192,0,0.01\n").find("m.csv:2: tp: must be a whole number"),
            std::string::npos);
  EXPECT_NE(expectCsvError(h + "0,0,0,0,8,8192,0,0.01\n").find("m.csv:2: tp: must be >= 1"), std::string::npos);
  EXPECT_NE(expectCsvError(h + "1,0,0,0,8,-5,0,0.01\n").find("m.csv:2: decode_context_sum: must be >= 0"),
            std::string::npos);
  EXPECT_NE(expectCsvError(h + "1,0,0,0,8,8192,0,0\n").find("m.csv:2: seconds: must be > 0"), std::string::npos);
  EXPECT_NE(expectCsvError(h + "1,0,0,0,0,0,0,0.01\n").find("m.csv:2: empty batch"), std::string::npos);
  EXPECT_NE(expectCsvError(h + "1,512,0,0,0,0,0,0.01\n").find("m.csv:2: prefill_tokens and prefill_seqs"),
            std::string::npos);
  EXPECT_NE(expectCsvError(h + "1,0,0,0,8,8192,nan,0.01\n").find("m.csv:2: decode_context_cv: not a number"),
            std::string::npos);
  EXPECT_NE(expectCsvError(h + "1,0,0,0,8,8192,0,\"0.01\n").find("m.csv:2"), std::string::npos);
  EXPECT_NE(expectCsvError("tp,tp,prefill_tokens\n").find("m.csv:1: column 'tp' appears twice"), std::string::npos);
  EXPECT_THROW(readMeasurementsCsv("/nonexistent/dir/m.csv"), InputError);
}

// ----------------------------------------------------------------- sample

TEST(SampleMeasurements, CommittedFileMatchesGenerator) {
  const std::string path = std::string(SERVELAB_SOURCE_DIR) + "/" + testing::kSampleMeasurementsFile;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), testing::sampleMeasurementsCsv()) << "regenerate with: gen_sample_measurements " << path;
}

TEST(SampleMeasurements, FitsWithLowError) {
  const std::string path = std::string(SERVELAB_SOURCE_DIR) + "/" + testing::kSampleMeasurementsFile;
  const auto rows = readMeasurementsCsv(path);
  const GpuSpec& gpu = reg().gpu(testing::kSampleGpu);
  const ModelSpec& model = reg().model(testing::kSampleModel);
  CalibrationReport rep;
  const CostCoefficients c = calibrateCostModel(gpu, model, rows, {}, &rep).coefficients;
  EXPECT_LT(rep.mape, 0.01);
  expectWithin(c.eta_kv, CostCoefficients{}.eta_kv, 0.03, "eta_kv");
  expectWithin(c.eta_w, CostCoefficients{}.eta_w, 0.03, "eta_w");
}

}  // namespace
}  // namespace sl
