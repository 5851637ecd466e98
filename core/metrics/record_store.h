#pragma once
// Finished requests' records, held compactly (issue 16: a 10^7-request run
// must fit in 1 GiB; 10^7 RequestRecords are 1.44 GB).
//
// Each record is encoded into append-only byte pages: a presence mask, then
// only the fields that differ from their usual default ("no time" -1, no
// preemption 0, ...), as zigzag varints of their difference from a nearby
// value (token times from the previous defined time, so a latency of
// minutes takes 5-6 bytes instead of 8), and the QoE as its 8 raw bytes
// (1.0, a stream that kept pace, by a mask bit alone); the request id
// comes first. Decoding is exact for every value (integers by wrap-around
// differences, the double by its bits). An 8-byte index entry per record
// (its page position), in fixed-size blocks, gives O(1) access by position
// and lets sortById() order the records by moving entries, never the
// records. Neither the pages nor the index are ever copied to grow, so the
// store's peak is its final size: about 40 bytes a record for B5's
// requests, instead of 144 plus the vector's doubling growth.
//
// Reads return RequestRecord by value; the store converts implicitly to
// std::vector<RequestRecord> for readers that want one.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <vector>

#include "metrics/request_record.h"

namespace sl {

class RecordStore {
public:
  class const_iterator {
  public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // yields values, not references
    using value_type = RequestRecord;
    using difference_type = std::ptrdiff_t;
    using reference = RequestRecord;
    using pointer = void;

    const_iterator() = default;
    RequestRecord operator*() const { return (*store_)[i_]; }
    RequestRecord operator[](difference_type n) const { return (*store_)[static_cast<std::size_t>(static_cast<difference_type>(i_) + n)]; }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { const_iterator t = *this; ++i_; return t; }
    const_iterator& operator--() { --i_; return *this; }
    const_iterator operator--(int) { const_iterator t = *this; --i_; return t; }
    const_iterator& operator+=(difference_type n) { i_ = static_cast<std::size_t>(static_cast<difference_type>(i_) + n); return *this; }
    const_iterator& operator-=(difference_type n) { return *this += -n; }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.i_ <=> b.i_; }

  private:
    friend class RecordStore;
    const_iterator(const RecordStore* s, std::size_t i) : store_(s), i_(i) {}
    const RecordStore* store_ = nullptr;
    std::size_t i_ = 0;
  };
  using iterator = const_iterator;
  using value_type = RequestRecord;
  using size_type = std::size_t;

  RecordStore() = default;
  RecordStore(RecordStore&&) noexcept = default;
  RecordStore& operator=(RecordStore&&) noexcept = default;
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  /// Appends a record (any values; they come back exactly).
  void push_back(const RequestRecord& r);
  void clear();

  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  /// The record at position i (appending order until sortById()).
  RequestRecord operator[](std::size_t i) const { return decode(index_[i]); }
  RequestRecord at(std::size_t i) const { return decode(index_.at(i)); }
  RequestRecord front() const { return decode(index_.front()); }
  RequestRecord back() const { return decode(index_.back()); }
  /// Position i's request id, without decoding the rest of the record.
  std::int64_t idAt(std::size_t i) const { return idOf(index_[i]); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

  /// Calls f(const RequestRecord&) for each record in order (faster than
  /// indexing).
  template <class F> void forEach(F&& f) const {
    for (const Entry e : index_) f(decode(e));
  }

  /// Orders the records by id (request ids are unique). Needs 16 bytes a
  /// record for the while (the keys), none when already in order.
  void sortById();

  std::vector<RequestRecord> toVector() const;
  operator std::vector<RequestRecord>() const { return toVector(); }  // NOLINT: implicit on purpose

  /// Bytes held by the encoded records (pages in use, whole) and the index.
  std::size_t memoryBytes() const;

  /// Upper bound of one encoded record's size (without its id).
  static constexpr std::size_t kMaxEncoded = 5 + 25 * 10 + 8;  // mask, 25 varint fields, QoE

private:
  using Entry = std::uint64_t;  // page << kPageBits | offset
  static constexpr unsigned kPageBits = 20;
  static constexpr std::size_t kPageSize = std::size_t{1} << kPageBits;  // 1 MiB
  const std::uint8_t* bytes(Entry e) const;
  std::int64_t idOf(Entry e) const;
  RequestRecord decode(Entry e) const;

  std::deque<Entry> index_;
  std::vector<std::unique_ptr<std::uint8_t[]>> pages_;
  std::size_t used_ = kPageSize;  // bytes used in pages_.back()
};

/// The encoding alone (exposed for tests): writes r (all but its id) at
/// `out` and returns the bytes written (<= RecordStore::kMaxEncoded).
std::size_t encodeRecord(const RequestRecord& r, std::uint8_t* out);
/// Decodes what encodeRecord wrote; `id` is not part of the encoding.
RequestRecord decodeRecord(const std::uint8_t* in, std::int64_t id);

}  // namespace sl
