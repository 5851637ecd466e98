#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <locale>
#include <stdexcept>
#include <system_error>

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

// Best effort: make the rename itself durable.
void fsyncParentDir(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
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
  if (!impl_) throw std::logic_error("AtomicFileWriter: commit() twice or after move");
  impl_->out.flush();
  const bool ok = static_cast<bool>(impl_->out);
  const int write_err = ok ? 0 : errno;
  impl_->out.close();
  const bool closed_ok = ok && !impl_->out.fail();
  impl_.reset();
  if (!closed_ok) {
    ::unlink(temp_.c_str());
    fail(path_, "cannot write file", write_err);
  }
  if (const int err = fsyncPath(temp_); err != 0) {
    ::unlink(temp_.c_str());
    fail(path_, "cannot write file (fsync failed)", err);
  }
  renameOrFail(temp_, path_);
  committed_ = true;
}

void AtomicFileWriter::abandon() noexcept {
  if (!impl_) return;
  impl_->out.close();
  impl_.reset();
  if (!committed_) ::unlink(temp_.c_str());
}

}  // namespace sl
