// reliability_support.h — what the fuzzer, the fault-injection test and the
// soak share: a backend wrapper that lets a test keep its SimBackend after the
// allocator is gone, and a small reference model of live blocks.
//
// The model is deliberately simpler than the allocator: it knows the 512-byte
// rounding rule, which pool a request belongs to and how much larger than the
// rounded request a block may be, and nothing about segments, free lists or
// streams. It keeps the live blocks in an interval map, so an overlap between
// two live blocks is caught the moment the second one is handed out, and it
// sums what the allocator's "current" counters must say. Nothing here uses
// gtest: the fuzzer aborts on the first disagreement instead.
#ifndef CCALLOC_TESTS_RELIABILITY_RELIABILITY_SUPPORT_H_
#define CCALLOC_TESTS_RELIABILITY_RELIABILITY_SUPPORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/forwarding_backend.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/size_policy.h"
#include "stats/counters.h"

namespace ccalloc::reliability {

// ---------------------------------------------------------------------------
// BorrowedBackend
// ---------------------------------------------------------------------------

// Forwards every call to a SimBackend that the test owns. DeviceAllocator
// takes ownership of its backend and destroys it with itself; handing it this
// wrapper instead keeps the SimBackend (and its counts) alive, so the test can
// prove after the destructor ran that every byte, page, range and event came
// back.
class BorrowedBackend final : public ForwardingBackend {
 public:
  explicit BorrowedBackend(SimBackend* sim) : ForwardingBackend(sim) {}
};

// What SimBackend still holds, in one line (for failure messages).
inline std::string DescribeOutstanding(const SimBackend::Counts& c) {
  return absl::StrCat("bytes_in_use=", c.bytes_in_use, " allocations=", c.live_allocations,
                      " physical=", c.live_physical, " mappings=", c.live_mappings,
                      " ranges=", c.live_ranges, " events=", c.live_events,
                      " host_buffers=", c.live_host);
}

// Everything SimBackend still holds, as one number: the soak's "leaks".
inline std::int64_t OutstandingItems(const SimBackend::Counts& c) {
  return static_cast<std::int64_t>(c.bytes_in_use > 0) + c.live_allocations + c.live_physical +
         c.live_mappings + c.live_ranges + c.live_events;
}

// ---------------------------------------------------------------------------
// Size rules, restated
// ---------------------------------------------------------------------------

// The 512-byte rule (the configurations used here never set
// roundup_power2_divisions).
constexpr std::size_t RoundRequest(std::size_t size) {
  return size < kMinBlockSize ? kMinBlockSize
                              : (size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

constexpr int PoolStatIndex(std::size_t rounded) { return rounded <= kSmallSize ? 1 : 2; }

// The most a block may exceed its rounded request: small blocks and growable
// segments always split off the rest; a large classic block keeps a tail of up
// to 1 MiB (PyTorch does not split off less than that); an oversize block is
// never split and serves requests within 20 MiB of its size.
inline std::size_t MaxBlockSlack(std::size_t rounded, const Options& options, bool growable) {
  if (rounded <= kSmallSize || growable) return 0;
  if (rounded >= options.max_split_size) return kLargeBuffer - 1;
  return kSmallSize;
}

// ---------------------------------------------------------------------------
// ReferenceModel
// ---------------------------------------------------------------------------

struct ModelBlock {
  std::size_t size = 0;       // block bytes, as allocated_bytes counts them
  std::size_t requested = 0;  // what the caller asked for
  StreamId stream = 0;
};

class ReferenceModel {
 public:
  // Records a block the allocator just handed out. `size` is the block size
  // the allocator accounted for it (the change in allocated_bytes). False,
  // with the reason, if the address is misaligned, the size breaks the size
  // rules, or [ptr, ptr + size) overlaps a live block.
  bool Add(DevicePtr ptr, const ModelBlock& block, const Options& options, bool growable,
           std::string* why) {
    const std::size_t rounded = RoundRequest(block.requested);
    if (ptr == 0 || ptr % kMinBlockSize != 0) {
      *why = absl::StrCat("block 0x", absl::Hex(ptr), " is not 512-byte aligned");
      return false;
    }
    if (block.size < rounded || block.size - rounded > MaxBlockSlack(rounded, options, growable)) {
      *why = absl::StrCat("a request of ", block.requested, " bytes (rounded ", rounded,
                          ") got a block of ", block.size, " bytes");
      return false;
    }
    auto next = live_.lower_bound(ptr);
    if (next != live_.end() && next->first < ptr + block.size) {
      *why = absl::StrCat("new block [0x", absl::Hex(ptr), ", +", block.size,
                          ") overlaps live block 0x", absl::Hex(next->first));
      return false;
    }
    if (next != live_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second.size > ptr) {
        *why = absl::StrCat("new block 0x", absl::Hex(ptr), " overlaps live block [0x",
                            absl::Hex(prev->first), ", +", prev->second.size, ")");
        return false;
      }
    }
    live_.emplace(ptr, block);
    const int p = PoolStatIndex(rounded);
    count_[p] += 1;
    bytes_[p] += static_cast<std::int64_t>(block.size);
    requested_[p] += static_cast<std::int64_t>(block.requested);
    return true;
  }

  ModelBlock Remove(DevicePtr ptr) {
    auto it = live_.find(ptr);
    ModelBlock block = it->second;
    live_.erase(it);
    const int p = PoolStatIndex(RoundRequest(block.requested));
    count_[p] -= 1;
    bytes_[p] -= static_cast<std::int64_t>(block.size);
    requested_[p] -= static_cast<std::int64_t>(block.requested);
    return block;
  }

  bool Contains(DevicePtr ptr) const { return live_.contains(ptr); }
  // The live block whose [ptr, ptr + size) holds `address`, or live_.end().
  std::map<DevicePtr, ModelBlock>::const_iterator Holding(DevicePtr address) const {
    auto it = live_.upper_bound(address);
    if (it == live_.begin()) return live_.end();
    --it;
    return address < it->first + it->second.size ? it : live_.end();
  }
  bool empty() const { return live_.empty(); }
  std::size_t count() const { return live_.size(); }
  const std::map<DevicePtr, ModelBlock>& live() const { return live_; }
  // The n-th live block (n modulo the count; the model must not be empty).
  DevicePtr Nth(std::size_t n) const {
    return std::next(live_.begin(), static_cast<std::ptrdiff_t>(n % live_.size()))->first;
  }
  std::int64_t bytes() const { return bytes_[1] + bytes_[2]; }

  // allocation, allocated_bytes and requested_bytes ("current", every pool
  // and "all") equal the model's sums.
  bool MatchesCounters(const MemoryStats& stats, std::string* why) const {
    struct Row {
      const char* name;
      const StatArray& stat;
      const std::int64_t* expect;
    };
    for (const Row& row : {Row{"allocation", stats.allocation, count_},
                           Row{"allocated_bytes", stats.allocated_bytes, bytes_},
                           Row{"requested_bytes", stats.requested_bytes, requested_}}) {
      const std::int64_t all = row.expect[1] + row.expect[2];
      for (int p = 0; p < 3; ++p) {
        const std::int64_t want = p == 0 ? all : row.expect[p];
        if (row.stat[p].current != want) {
          *why = absl::StrCat(row.name, "[", p, "].current is ", row.stat[p].current,
                              " but the model says ", want);
          return false;
        }
      }
    }
    return true;
  }

 private:
  std::map<DevicePtr, ModelBlock> live_;
  std::int64_t count_[3] = {};
  std::int64_t bytes_[3] = {};
  std::int64_t requested_[3] = {};
};

// ---------------------------------------------------------------------------
// Checks shared by the fuzzer and the fault-injection test
// ---------------------------------------------------------------------------

// The device memory SimBackend has handed out equals what the allocator
// reports as reserved, and the backend's segment-level objects match the
// segment counter: nothing is held that the counters do not show.
inline bool BackendMatchesStats(const SimBackend::Counts& c, const MemoryStats& stats,
                                bool growable, std::string* why) {
  if (static_cast<std::int64_t>(c.bytes_in_use) != stats.reserved_bytes[kStatAll].current) {
    *why =
        absl::StrCat("the device has ", c.bytes_in_use, " bytes handed out but reserved_bytes is ",
                     stats.reserved_bytes[kStatAll].current);
    return false;
  }
  const std::int64_t backend_segments = growable ? c.live_ranges : c.live_allocations;
  if (backend_segments != stats.segment[kStatAll].current) {
    *why = absl::StrCat("the device has ", backend_segments, " ",
                        growable ? "address ranges" : "allocations", " but the segment counter is ",
                        stats.segment[kStatAll].current);
    return false;
  }
  if (!growable && (c.live_physical != 0 || c.live_mappings != 0 || c.live_ranges != 0)) {
    *why = "classic segments left virtual-memory objects on the device";
    return false;
  }
  return true;
}

// An out-of-memory answer with no injected failure behind it must be real:
// after the allocator released every cached segment and retried, growing by
// what the request needs would pass `cap` (the device capacity or the memory
// limit, whichever is lower).
//   Classic segments: one segment of the request's size.
//   Growable segments: the pages under the block that are not mapped yet, at
//   most the request rounded to pages plus one page (a block need not start
//   on a page boundary). The chunks of one attempt partition those pages, so
//   the attempt fails only if all of them together do not fit; after an OOM
//   the allocator unmaps every free chunk, so what stays reserved is what
//   live and pending blocks pin, which the last attempt could not use either.
inline bool OutOfMemoryIsReal(std::size_t request, const MemoryStats& stats_after, std::size_t cap,
                              bool growable, std::size_t page_size, std::string* why) {
  const std::size_t rounded = RoundRequest(request);
  const std::size_t growth = growable
                                 ? (rounded + page_size - 1) / page_size * page_size + page_size
                                 : SizePolicy::SegmentSize(rounded);
  const auto reserved = static_cast<std::size_t>(stats_after.reserved_bytes[kStatAll].current);
  if (reserved + growth > cap) return true;
  *why = absl::StrCat("out of memory for ", request, " bytes with ", reserved,
                      " bytes reserved, growth of at most ", growth, " and a cap of ", cap);
  return false;
}

}  // namespace ccalloc::reliability

#endif  // CCALLOC_TESTS_RELIABILITY_RELIABILITY_SUPPORT_H_
