#include "util/strings.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace sl {
namespace {

TEST(Strings, Levenshtein) {
  EXPECT_EQ(levenshtein("", ""), 0u);
  EXPECT_EQ(levenshtein("abc", ""), 3u);
  EXPECT_EQ(levenshtein("", "abc"), 3u);
  EXPECT_EQ(levenshtein("kitten", "sitting"), 3u);
  EXPECT_EQ(levenshtein("arival", "arrival"), 1u);
  EXPECT_EQ(levenshtein("flaw", "lawn"), 2u);
  EXPECT_EQ(levenshtein("same", "same"), 0u);
  EXPECT_EQ(levenshtein("sitting", "kitten"), 3u);
}

TEST(Strings, DidYouMean) {
  const std::vector<std::string> keys = {"arrival", "input_tokens", "answer_tokens", "requests"};
  EXPECT_EQ(didYouMean("arival", keys), "arrival");
  EXPECT_EQ(didYouMean("Arrival", keys), "arrival");  // case-insensitive
  EXPECT_EQ(didYouMean("requets", keys), "requests");
  EXPECT_EQ(didYouMean("input_token", keys), "input_tokens");
  EXPECT_EQ(didYouMean("xyzzy", keys), std::nullopt);
  EXPECT_EQ(didYouMean("arrival", {}), std::nullopt);
  // Limit is max(2, len/3): "ab" -> "xy" is distance 2, accepted.
  EXPECT_EQ(didYouMean("ab", {"xy"}), "xy");
  EXPECT_EQ(didYouMean("abc", {"xyz"}), std::nullopt);
  // Ties: first candidate wins.
  EXPECT_EQ(didYouMean("cat", {"bat", "hat"}), "bat");
}

TEST(Strings, FormatDoubleShortestRoundTrip) {
  EXPECT_EQ(formatDouble(0.1), "0.1");
  EXPECT_EQ(formatDouble(5.0), "5");
  EXPECT_EQ(formatDouble(-3), "-3");
  EXPECT_EQ(formatDouble(0.0), "0");
  EXPECT_EQ(formatDouble(-0.0), "0");
  EXPECT_EQ(formatDouble(1e21), "1e+21");
  EXPECT_EQ(formatDouble(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(formatDouble(0.1 + 0.2, 15), "0.3");
  EXPECT_EQ(formatDouble(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(formatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(formatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  for (double v : {1.0 / 3, 2.0 / 7, 1e-300, 123456.789, 6.02214076e23}) {
    EXPECT_EQ(*parseDouble(formatDouble(v)), v);
  }
}

TEST(Strings, FormatFixed) {
  EXPECT_EQ(formatFixed(2.5, 2), "2.50");
  EXPECT_EQ(formatFixed(1.0 / 3, 3), "0.333");
  EXPECT_EQ(formatFixed(12, 0), "12");
  EXPECT_EQ(formatFixed(-0.0001, 2), "0.00");
  EXPECT_EQ(formatFixed(-1.25, 1), "-1.2");  // exact binary 1.25: ties to even
  EXPECT_EQ(formatFixed(1e20, 1), "100000000000000000000.0");
  EXPECT_EQ(formatFixed(std::numeric_limits<double>::max(), 2).size(), 309u + 3u);
}

TEST(Strings, TrimSplitParse) {
  EXPECT_EQ(trim("  a b \r\n"), "a b");
  EXPECT_EQ(trim(" \t "), "");
  const auto parts = split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(split("", ',').size(), 1u);
  EXPECT_EQ(toLower("AbC-1"), "abc-1");
  EXPECT_EQ(parseDouble(" 1.5 "), 1.5);
  EXPECT_EQ(parseDouble("+2e3"), 2000.0);
  EXPECT_EQ(parseDouble("1.5x"), std::nullopt);
  EXPECT_EQ(parseDouble(""), std::nullopt);
  EXPECT_EQ(parseDouble("+-1"), std::nullopt);
  EXPECT_EQ(parseDouble("nan"), std::nullopt);
  EXPECT_EQ(parseInt64("-42"), -42);
  EXPECT_EQ(parseInt64("+7"), 7);
  EXPECT_EQ(parseInt64("4.0"), std::nullopt);
  EXPECT_EQ(parseInt64("99999999999999999999"), std::nullopt);
}

}  // namespace
}  // namespace sl
