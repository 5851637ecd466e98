#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <locale>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "util/error.h"

namespace sl {
namespace fs = std::filesystem;

namespace {

std::string tempNameFor(const std::string& path) {
  static std::atomic<unsigned long long> counter{0};
  return path + ".tmp." + std::to_string(static_cast<long long>(::getpid())) + "." +
         std::to_string(counter.fetch_add(1));
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  std::string msg = path + ": " + what;
  if (err != 0) msg += ": " + std::string(std::strerror(err));
  throw InputError(msg);
}

// fsync a file by name (data written through a std::ofstream).
int fsyncPath(const std::string& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = 0;
  if (::fsync(fd) != 0) err = errno;
  ::close(fd);
  return err;
}

// Best effort: make a rename in folder `dir` durable.
void fsyncDir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

void fsyncParentDir(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  fsyncDir(parent);
}

void renameOrFail(const std::string& temp, const std::string& path) {
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "cannot write file (rename failed)", err);
  }
  fsyncParentDir(path);
}

}  // namespace

void writeFileAtomic(const std::string& path, std::string_view content) {
  const std::string temp = tempNameFor(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "cannot write file", errno);
  const char* p = content.data();
  std::size_t left = content.size();
  int err = 0;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(temp.c_str());
    fail(path, "cannot write file", err);
  }
  renameOrFail(temp, path);
}

void ensureDirectory(const std::string& path) {
  if (path.empty()) return;  // the current directory
  // Create first, judge after: another process (a sweep shard started at the
  // same moment on a shared folder) may create the directory between any two
  // checks, and that is a success, not "exists and is not a directory".
  std::error_code ec;
  fs::create_directories(path, ec);
  std::error_code st;
  if (fs::is_directory(path, st)) return;
  if (fs::exists(path, st)) fail(path, "exists and is not a directory", 0);
  if (ec) throw InputError(path + ": cannot create directory: " + ec.message());
  fail(path, "cannot create directory", 0);
}

struct AtomicFileWriter::Impl {
  std::ofstream out;
};

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), temp_(tempNameFor(path_)), impl_(std::make_unique<Impl>()) {
  // Create exclusively first so a stale file of the same name is never reused.
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail(path_, "cannot write file", errno);
  ::close(fd);
  impl_->out.imbue(std::locale::classic());
  impl_->out.open(temp_, std::ios::binary | std::ios::trunc);
  if (!impl_->out) {
    const int err = errno;
    ::unlink(temp_.c_str());
    fail(path_, "cannot write file", err);
  }
}

AtomicFileWriter::~AtomicFileWriter() { abandon(); }

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& o) noexcept
    : path_(std::move(o.path_)), temp_(std::move(o.temp_)), impl_(std::move(o.impl_)),
      committed_(o.committed_) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& o) noexcept {
  if (this != &o) {
    abandon();
    path_ = std::move(o.path_);
    temp_ = std::move(o.temp_);
    impl_ = std::move(o.impl_);
    committed_ = o.committed_;
  }
  return *this;
}

std::ostream& AtomicFileWriter::stream() {
  if (!impl_) throw std::logic_error("AtomicFileWriter: stream() after commit or move");
  return impl_->out;
}

void AtomicFileWriter::commit() {
  AtomicFileWriter* self = this;
  commitAll(std::span<AtomicFileWriter* const>(&self, 1));
}

void commitAll(std::span<AtomicFileWriter* const> writers) {
  for (const AtomicFileWriter* w : writers)
    if (!w->impl_) throw std::logic_error("AtomicFileWriter: commit() twice or after move");
  // Remove every temporary not yet renamed, then report `path`.
  const auto failFrom = [&](std::size_t from, const std::string& path, const std::string& what, int err) {
    for (std::size_t k = from; k < writers.size(); ++k) {
      writers[k]->abandon();  // closes and unlinks while the stream is open
      ::unlink(writers[k]->temp_.c_str());
    }
    fail(path, what, err);
  };
  // 1. Flush and close every stream.
  for (std::size_t k = 0; k < writers.size(); ++k) {
    AtomicFileWriter& w = *writers[k];
    w.impl_->out.flush();
    const bool ok = static_cast<bool>(w.impl_->out);
    const int write_err = ok ? 0 : errno;
    w.impl_->out.close();
    if (!(ok && !w.impl_->out.fail())) failFrom(0, w.path_, "cannot write file", write_err);
  }
  for (AtomicFileWriter* w : writers) w->impl_.reset();
  // 2. fsync them all at once (the first in this thread).
  std::vector<int> errs(writers.size(), 0);
  {
    std::vector<std::thread> helpers;
    for (std::size_t k = 1; k < writers.size(); ++k)
      helpers.emplace_back([&errs, &writers, k] { errs[k] = fsyncPath(writers[k]->temp_); });
    if (!writers.empty()) errs[0] = fsyncPath(writers[0]->temp_);
    for (std::thread& t : helpers) t.join();
  }
  for (std::size_t k = 0; k < writers.size(); ++k)
    if (errs[k] != 0) failFrom(0, writers[k]->path_, "cannot write file (fsync failed)", errs[k]);
  // 3. Rename in order; 4. make the renames durable, each folder once.
  std::vector<fs::path> dirs;
  for (std::size_t k = 0; k < writers.size(); ++k) {
    AtomicFileWriter& w = *writers[k];
    if (std::rename(w.temp_.c_str(), w.path_.c_str()) != 0) {
      const int err = errno;
      failFrom(k, w.path_, "cannot write file (rename failed)", err);
    }
    w.committed_ = true;
    fs::path parent = fs::path(w.path_).parent_path();
    if (parent.empty()) parent = ".";
    if (std::find(dirs.begin(), dirs.end(), parent) == dirs.end()) dirs.push_back(std::move(parent));
  }
  for (const fs::path& d : dirs) fsyncDir(d);
}

void AtomicFileWriter::abandon() noexcept {
  if (!impl_) return;
  impl_->out.close();
  impl_.reset();
  if (!committed_) ::unlink(temp_.c_str());
}

}  // namespace sl
