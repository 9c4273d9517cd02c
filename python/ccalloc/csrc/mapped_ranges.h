// mapped_ranges.h — what memory a request made the allocator take, for the
// memory history's segment_alloc and segment_map entries.
//
// PyTorch's allocator writes a segment_alloc entry (a new segment) or a
// segment_map entry (pages an expandable segment mapped) into the history, with
// the request's stack, whenever a request takes memory from the driver; tools
// and tests look for those frames after the request's own alloc and free have
// come and gone (memory_viz's trace_plot with filter_freed keeps only them).
// ccalloc's plugin only shows what is mapped now, as ranges (a segment, or
// each mapped stretch of a growable one). KnownRanges keeps the ranges seen
// last, with the reserved count they went with, so that after a request that
// moved reserved the extension asks for the ranges again and learns the new
// parts: a new range, or a stretch added at either end of one. The ranges are
// read again before a request whenever reserved has moved since they were
// (memory given back outside a request, by ccalloc's background release or a
// pool's empty_cache): what went is written then, as segment_free or
// segment_unmap, so the history shows each stretch go as well as come (a
// trace with maps and no unmaps would not add up in memory_viz), and a
// stretch unmapped and mapped again is seen as new.
//
// KnownRanges is plain C++ with no lock; TakenRanges keeps one per device
// under a mutex of its own and reads the plugin through two functions (fakes
// in the host test, tests/ext_mapped_ranges_test.cc). std::mutex: this file is
// built by PyTorch's toolchain, where Abseil is not available.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace ccalloc_ext {

struct MappedRange {
  uint64_t address = 0;
  uint64_t size = 0;
  void* stream = nullptr;
  bool expandable = false;
};

class KnownRanges {
 public:
  // True when reserved has moved since the ranges were read (or they never
  // were): read them again before the request (Refresh).
  bool Stale(int64_t reserved) const { return reserved != reserved_; }

  // Forget what was read: the next request reads the ranges first.
  void Clear() {
    known_.clear();
    reserved_ = -1;
  }

  // The parts of `now` that no known range covered, by address; `now` (with
  // `reserved`) becomes what is known.
  std::vector<MappedRange> Update(std::vector<MappedRange> now, int64_t reserved) {
    now = Sorted(std::move(now));
    std::vector<MappedRange> fresh = Minus(now, known_);
    known_ = std::move(now);
    reserved_ = reserved;
    return fresh;
  }

  // The parts of the known ranges that `now` no longer covers (memory given
  // back since they were read; none when they never were); `now` becomes
  // what is known.
  std::vector<MappedRange> Refresh(std::vector<MappedRange> now, int64_t reserved) {
    now = Sorted(std::move(now));
    std::vector<MappedRange> gone = reserved_ < 0 ? std::vector<MappedRange>{} : Minus(known_, now);
    known_ = std::move(now);
    reserved_ = reserved;
    return gone;
  }

  // Invariants: sorted by address, no range empty, none overlapping.
  bool Validate() const {
    for (size_t i = 0; i < known_.size(); ++i) {
      if (known_[i].size == 0) return false;
      if (i > 0 && known_[i - 1].address + known_[i - 1].size > known_[i].address) return false;
    }
    return true;
  }

  const std::vector<MappedRange>& known() const { return known_; }

 private:
  static MappedRange Piece(const MappedRange& of, uint64_t start, uint64_t end) {
    return MappedRange{start, end - start, of.stream, of.expandable};
  }
  // The parts of `a` that no range of `b` covers; both sorted by address,
  // neither overlapping itself.
  static std::vector<MappedRange> Minus(const std::vector<MappedRange>& a,
                                        const std::vector<MappedRange>& b) {
    std::vector<MappedRange> out;
    size_t k = 0;
    for (const MappedRange& r : a) {
      uint64_t at = r.address;
      const uint64_t end = r.address + r.size;
      // Ranges of b wholly before this one are passed for good.
      while (k < b.size() && b[k].address + b[k].size <= at) ++k;
      for (size_t j = k; j < b.size() && b[j].address < end; ++j) {
        if (b[j].address > at) out.push_back(Piece(r, at, b[j].address));
        at = std::max(at, b[j].address + b[j].size);
        if (at >= end) break;
      }
      if (at < end) out.push_back(Piece(r, at, end));
    }
    return out;
  }
  static std::vector<MappedRange> Sorted(std::vector<MappedRange> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](const MappedRange& r) { return r.size == 0; }),
            v.end());
    std::sort(v.begin(), v.end(),
              [](const MappedRange& a, const MappedRange& b) { return a.address < b.address; });
    return v;
  }

  std::vector<MappedRange> known_;
  int64_t reserved_ = -1;  // -1: never read
};

// Around each request while history is on: Before reads reserved (and the
// ranges, when reserved moved since they were read, returning what went);
// After, when the request moved reserved, returns the stretches it took.
class TakenRanges {
 public:
  // Reserved bytes of the device, -1 when it cannot be read.
  using ReadReserved = int64_t (*)(int device);
  // The device's ranges as the snapshot shows them; false when unreadable.
  using ReadRanges = bool (*)(int device, std::vector<MappedRange>* out);

  TakenRanges(ReadReserved reserved, ReadRanges ranges) : reserved_(reserved), ranges_(ranges) {}

  // Reserved before the request, or -1 (nothing to compare after it). When
  // reserved moved since the ranges were read, reads them again and puts in
  // *gone what was given back meanwhile (ccalloc's background release, a
  // pool's empty_cache), so that the history shows each stretch go as well
  // as come.
  int64_t Before(int device, std::vector<MappedRange>* gone) {
    gone->clear();
    const int64_t reserved = reserved_(device);
    if (reserved < 0 || device < 0) return -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!For(device).Stale(reserved)) return reserved;
    }
    std::vector<MappedRange> now;  // read unlocked: the plugin takes its own locks
    if (!ranges_(device, &now)) return -1;
    std::lock_guard<std::mutex> lock(mu_);
    *gone = For(device).Refresh(std::move(now), reserved);
    return reserved;
  }

  // The stretches the request took; none when reserved did not move.
  std::vector<MappedRange> After(int device, int64_t before) {
    if (before < 0) return {};
    const int64_t reserved = reserved_(device);
    if (reserved < 0 || reserved == before) return {};
    std::vector<MappedRange> now;
    if (!ranges_(device, &now)) return {};
    std::lock_guard<std::mutex> lock(mu_);
    return For(device).Update(std::move(now), reserved);
  }

  // Forget every device's ranges (history turned on or off, or empty_cache,
  // which writes its own entries): the next request reads them afresh and
  // reports nothing as gone.
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    for (KnownRanges& k : known_) k.Clear();
  }

  bool Validate() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::all_of(known_.begin(), known_.end(),
                       [](const KnownRanges& k) { return k.Validate(); });
  }

 private:
  KnownRanges& For(int device) {  // mu_ held
    if (known_.size() <= static_cast<size_t>(device)) known_.resize(device + 1);
    return known_[device];
  }

  const ReadReserved reserved_;
  const ReadRanges ranges_;
  std::mutex mu_;
  std::vector<KnownRanges> known_;
};

}  // namespace ccalloc_ext
