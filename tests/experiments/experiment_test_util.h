#pragma once
// Shared helpers of the experiment tests: run an experiment by id and read
// table cells by column name.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "experiments/experiment.h"
#include "experiments/table.h"

namespace sl::exp {

inline ExperimentResult runExperiment(const std::string& id, bool quick) {
  const Experiment* e = findExperiment(id);
  EXPECT_NE(e, nullptr) << id;
  if (!e) return {};
  ExperimentOptions o;
  o.quick = quick;
  return e->run(o);
}

inline ExperimentResult runQuick(const std::string& id) { return runExperiment(id, true); }

inline double cell(const Table& t, std::size_t row, const std::string& col) {
  const int c = t.column(col);
  EXPECT_GE(c, 0) << "missing column " << col;
  if (c < 0 || row >= t.rows.size()) return std::nan("");
  return std::stod(t.rows[row][static_cast<std::size_t>(c)]);
}

inline std::string str(const Table& t, std::size_t row, const std::string& col) {
  const int c = t.column(col);
  EXPECT_GE(c, 0) << "missing column " << col;
  return c < 0 || row >= t.rows.size() ? "" : t.rows[row][static_cast<std::size_t>(c)];
}

/// The table's "policy" column is exactly `policies`, in order.
inline void expectPolicies(const Table& t, const std::vector<std::string>& policies) {
  ASSERT_EQ(t.rows.size(), policies.size());
  for (std::size_t i = 0; i < policies.size(); ++i) EXPECT_EQ(str(t, i, "policy"), policies[i]) << "row " << i;
}

}  // namespace sl::exp
