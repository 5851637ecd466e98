#include "util/atomic_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace sl {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("servelab-atomic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string p(const std::string& name) const { return (dir_ / name).string(); }

  static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Names in the folder other than the expected ones.
  std::size_t entryCount() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesContentAndLeavesNoTemp) {
  writeFileAtomic(p("out.json"), "{\"a\": 1}\n");
  EXPECT_EQ(slurp(p("out.json")), "{\"a\": 1}\n");
  EXPECT_EQ(entryCount(), 1u);
  // Overwrite replaces the whole file.
  writeFileAtomic(p("out.json"), "x");
  EXPECT_EQ(slurp(p("out.json")), "x");
  EXPECT_EQ(entryCount(), 1u);
  writeFileAtomic(p("empty.txt"), "");
  EXPECT_TRUE(fs::exists(p("empty.txt")));
  EXPECT_EQ(fs::file_size(p("empty.txt")), 0u);
}

TEST_F(AtomicFileTest, MissingDirectoryFailsCleanlyNamingThePath) {
  const std::string target = p("no/such/dir/out.csv");
  try {
    writeFileAtomic(target, "data");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(target), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(entryCount(), 0u);
  EXPECT_THROW(AtomicFileWriter w(target), InputError);
  EXPECT_EQ(entryCount(), 0u);
}

TEST_F(AtomicFileTest, RenameFailureRemovesTempAndKeepsOldTarget) {
  // The target is a non-empty directory: the rename must fail.
  fs::create_directories(p("busy/inner"));
  EXPECT_THROW(writeFileAtomic(p("busy"), "data"), InputError);
  EXPECT_TRUE(fs::is_directory(p("busy")));
  EXPECT_EQ(entryCount(), 1u);  // only "busy": no temporary left behind
  {
    AtomicFileWriter w(p("busy"));
    w.stream() << "data";
    EXPECT_THROW(w.commit(), InputError);
  }
  EXPECT_EQ(entryCount(), 1u);
}

TEST_F(AtomicFileTest, StreamingWriterCommits) {
  AtomicFileWriter w(p("requests.csv"));
  EXPECT_NE(w.tempPath(), w.path());
  EXPECT_TRUE(fs::exists(w.tempPath()));
  EXPECT_FALSE(fs::exists(p("requests.csv")));  // nothing under the final name yet
  w.stream() << "id,ttft_s\n";
  for (int i = 0; i < 1000; ++i) w.stream() << i << ",0.5\n";
  w.commit();
  EXPECT_TRUE(w.committed());
  EXPECT_EQ(entryCount(), 1u);
  const std::string text = slurp(p("requests.csv"));
  EXPECT_EQ(text.rfind("id,ttft_s\n0,0.5\n", 0), 0u);
  EXPECT_EQ(text.size(), 10u + 1000u * 5u + (10u * 1 + 90u * 2 + 900u * 3));
  EXPECT_THROW(w.commit(), std::logic_error);
}

TEST_F(AtomicFileTest, GroupCommitWritesEveryFileAndLeavesNoTemp) {
  writeFileAtomic(p("summary.json"), "old");
  AtomicFileWriter a(p("summary.json")), b(p("requests.csv")), c(p("trace.json"));
  a.stream() << "new summary";
  for (int i = 0; i < 1000; ++i) b.stream() << i << '\n';
  c.stream() << "{}";
  AtomicFileWriter* group[] = {&a, &b, &c};
  commitAll(group);
  EXPECT_TRUE(a.committed() && b.committed() && c.committed());
  EXPECT_EQ(slurp(p("summary.json")), "new summary");
  EXPECT_EQ(slurp(p("requests.csv")).size(), 10u * 2 + 90u * 3 + 900u * 4);
  EXPECT_EQ(slurp(p("trace.json")), "{}");
  EXPECT_EQ(entryCount(), 3u);  // no temporary left
  EXPECT_THROW(commitAll(group), std::logic_error);
}

TEST_F(AtomicFileTest, GroupCommitRenameFailureRemovesTheRest) {
  fs::create_directories(p("busy/inner"));  // renaming onto it fails
  AtomicFileWriter a(p("first.csv")), b(p("busy")), c(p("last.json"));
  a.stream() << "1";
  b.stream() << "2";
  c.stream() << "3";
  AtomicFileWriter* group[] = {&a, &b, &c};
  try {
    commitAll(group);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(p("busy")), std::string::npos) << e.what();
  }
  EXPECT_TRUE(a.committed());  // renamed before the failure
  EXPECT_FALSE(b.committed() || c.committed());
  EXPECT_EQ(slurp(p("first.csv")), "1");
  EXPECT_TRUE(fs::is_directory(p("busy")));
  EXPECT_FALSE(fs::exists(p("last.json")));
  EXPECT_EQ(entryCount(), 2u);  // first.csv and busy: no temporary left
}

TEST_F(AtomicFileTest, StreamingWriterWithoutCommitLeavesOldFileIntact) {
  writeFileAtomic(p("summary.json"), "old");
  {
    AtomicFileWriter w(p("summary.json"));
    w.stream() << "partial new content";
    // destroyed without commit (as when an exception unwinds)
  }
  EXPECT_EQ(slurp(p("summary.json")), "old");
  EXPECT_EQ(entryCount(), 1u);
  {
    AtomicFileWriter w(p("other.json"));
    AtomicFileWriter moved(std::move(w));
    moved.stream() << "x";
    moved.abandon();
  }
  EXPECT_EQ(entryCount(), 1u);
}

TEST_F(AtomicFileTest, EnsureDirectory) {
  ensureDirectory(p("a/b/c"));
  EXPECT_TRUE(fs::is_directory(p("a/b/c")));
  ensureDirectory(p("a/b/c"));  // idempotent
  writeFileAtomic(p("file"), "x");
  try {
    ensureDirectory(p("file"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(p("file")), std::string::npos);
  }
  EXPECT_THROW(ensureDirectory(p("file/sub")), InputError);
}

// Sweep shards start at the same time on one shared folder (deploy/k8s):
// a directory another process creates between our checks is a success,
// never "exists and is not a directory".
TEST_F(AtomicFileTest, EnsureDirectoryRacingCreatorsAllSucceed) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 400;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::string> messages(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        try {
          ensureDirectory(p("race/" + std::to_string(r) + "/points"));
        } catch (const std::exception& e) {
          ++failures[t];
          messages[t] = e.what();
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << messages[t];
  for (int r = 0; r < kRounds; ++r) EXPECT_TRUE(fs::is_directory(p("race/" + std::to_string(r) + "/points")));
}

}  // namespace
}  // namespace sl
