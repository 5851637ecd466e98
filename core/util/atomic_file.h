#pragma once
// Atomic output files (70-quality.md "Reliability"): content goes to a
// temporary file in the destination folder, is flushed and fsync'ed, then
// renamed over the final name. An interrupted or failed write never leaves a
// truncated file under the final name, and the temporary is removed on
// failure. Temporary names: "<path>.tmp.<pid>.<n>" (n: a per-process counter,
// so concurrent writers in one process never share a temporary).
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace sl {

/// Write `content` to `path` atomically. Throws sl::InputError naming `path`
/// (and the OS reason) when the folder does not exist, is not writable, the
/// disk is full, or the rename fails; nothing is left behind then.
void writeFileAtomic(const std::string& path, std::string_view content);

/// Create `path` and missing parents (like mkdir -p). No-op when it already is
/// a directory. Throws sl::InputError naming `path` on failure or when it
/// exists but is not a directory.
void ensureDirectory(const std::string& path);

/// Streaming form for big outputs (requests.csv, trace.json):
///
///   AtomicFileWriter w(out_dir + "/requests.csv");
///   w.stream() << header << '\n';  ... many rows ...
///   w.commit();   // flush + fsync + rename; throws sl::InputError on failure
///
/// If the writer is destroyed without commit() (an exception, a cancelled
/// run), the temporary is removed and the final name is untouched.
class AtomicFileWriter {
public:
  /// Opens the temporary file; throws sl::InputError naming `path` if it
  /// cannot be created (e.g. the folder does not exist).
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(AtomicFileWriter&&) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) noexcept;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  /// The stream to write to (binary mode, classic "C" locale).
  std::ostream& stream();
  /// Flush, fsync and rename onto the final path. Throws sl::InputError naming
  /// the path (the temporary is removed) if any write failed. Calling it twice
  /// is an error (std::logic_error).
  void commit();
  /// Drop the temporary now without touching the final path (also done by the
  /// destructor when not committed).
  void abandon() noexcept;

  const std::string& path() const { return path_; }
  const std::string& tempPath() const { return temp_; }
  bool committed() const { return committed_; }

private:
  friend void commitAll(std::span<AtomicFileWriter* const> writers);
  struct Impl;
  std::string path_, temp_;
  std::unique_ptr<Impl> impl_;
  bool committed_ = false;
};

/// Commit several writers as one group (a run's output files): every
/// temporary is flushed and closed, all are fsync'ed at once (in parallel:
/// each fsync of a fresh file waits for its own journal commit, a few ms
/// apiece, and concurrent ones share commits), then renamed in order, and
/// each distinct parent folder is fsync'ed once. If a write or an fsync
/// fails, no file of the group is renamed: every temporary is removed and
/// sl::InputError names the first failing path. A failed rename removes that
/// temporary and those not yet renamed. A writer already committed or
/// abandoned is a std::logic_error. `w.commit()` is `commitAll({&w})`.
void commitAll(std::span<AtomicFileWriter* const> writers);

}  // namespace sl
