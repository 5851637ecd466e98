#include <gtest/gtest.h>

#include <sstream>

#include "test_util.h"
#include "util/csv.h"

using sl::CsvReader;
using sl::splitCsvLine;
using Fields = std::vector<std::string>;

TEST(Csv, SplitsPlainAndQuotedFields) {
  Fields f;
  ASSERT_TRUE(splitCsvLine("a,b,,c", f));
  EXPECT_EQ(f, (Fields{"a", "b", "", "c"}));
  ASSERT_TRUE(splitCsvLine("\"x,y\",\"he said \"\"hi\"\"\",3", f));
  EXPECT_EQ(f, (Fields{"x,y", "he said \"hi\"", "3"}));
  ASSERT_TRUE(splitCsvLine("a,", f));
  EXPECT_EQ(f, (Fields{"a", ""}));
  ASSERT_TRUE(splitCsvLine("", f));
  EXPECT_EQ(f, (Fields{""}));
  ASSERT_TRUE(splitCsvLine(" \"q\" ,z", f));
  EXPECT_EQ(f, (Fields{"q", "z"}));
}

TEST(Csv, RejectsBadQuoting) {
  Fields f;
  std::string err;
  EXPECT_FALSE(splitCsvLine("\"open,b", f, &err));
  EXPECT_NE(err.find("unterminated"), std::string::npos);
  EXPECT_FALSE(splitCsvLine("\"a\"x,b", f, &err));
}

TEST(Csv, ReaderStreamsRecordsWithLineNumbers) {
  std::istringstream in("\xEF\xBB\xBFh1,h2\r\n1,2\r\n\r\n\"multi\nline\",3\n4,5");
  CsvReader r(in, "t.csv");
  Fields f;
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f, (Fields{"h1", "h2"}));
  EXPECT_EQ(r.line(), 1);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f, (Fields{"1", "2"}));
  EXPECT_EQ(r.line(), 2);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f, (Fields{"multi\nline", "3"}));
  EXPECT_EQ(r.line(), 4);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f, (Fields{"4", "5"}));
  EXPECT_EQ(r.line(), 6);
  EXPECT_EQ(r.where(), "t.csv:6");
  EXPECT_FALSE(r.next(f));
}

TEST(Csv, ReaderErrorNamesFileAndLine) {
  std::istringstream in("a,b\n1,\"2\"x\n");
  CsvReader r(in, "bad.csv");
  Fields f;
  ASSERT_TRUE(r.next(f));
  const std::string msg = sl::testing::inputErrorOf([&] { r.next(f); });
  EXPECT_EQ(msg.rfind("bad.csv:2: ", 0), 0u) << msg;
}

TEST(Csv, StrayQuoteInsideUnquotedFieldIsData) {
  std::istringstream in("5\"x,1\n2,3\n");
  CsvReader r(in, "s.csv");
  Fields f;
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f, (Fields{"5\"x", "1"}));
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(r.line(), 2);
}
