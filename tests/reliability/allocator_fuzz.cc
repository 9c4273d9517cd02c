// allocator_fuzz.cc — libFuzzer target: bytes become allocator operations.
//
// Like tcmalloc's central_freelist_fuzz.cc, the input is decoded into a stream
// of operations against one DeviceAllocator on a SimBackend whose events
// complete only when the input says so, and the accounting is checked after
// every single operation:
//   * Validate() holds (the allocator's own structural check);
//   * allocation / allocated_bytes / requested_bytes ("current", every pool)
//     equal a reference model that knows only the size rules;
//   * no two live blocks overlap (the model keeps an interval map);
//   * the bytes the device handed out equal reserved_bytes;
//   * a bad input (foreign, interior or freed pointer; unrepresentable size;
//     bad memory fraction) gets InvalidArgument naming the pointer or size,
//     and every counter stays exactly as it was;
//   * a valid call fails only with ResourceExhausted, and only when a failure
//     was injected or the memory really is not there.
// At the end everything is freed, the cache emptied and the allocator
// destroyed; the device must then hold nothing (bytes, pages, mappings,
// ranges, events). Any disagreement prints the reason and aborts, which
// libFuzzer records as a crash with the input that caused it.
//
// Input format (read front to back; a missing byte reads as 0, so every
// input is valid), used by make_corpus.py to write the seeds:
//   byte 0: configuration bits
//     0x01 growable segments (expandable_segments), else classic
//     0x02 small device (1 GiB) instead of 8 GiB
//     0x04 max_split_size_mb:64 (oversize blocks)
//     0x08 garbage_collection_threshold:0.6 (acts once a limit is set, on
//          classic segments); with growable segments, where it does
//          nothing, cross_stream_reuse:True (free memory lent across
//          streams wherever a stream would map, ordered by device-side waits
//          while the lender's work on it may run); without the bit, the
//          default's (auto: lent where the cache would move memory)
//     0x10 destroy with blocks still live (tests the destructor's release)
//     0x20 64 KiB device pages instead of 2 MiB (growable edge pages), on
//          the 1 GiB device
//     0x40 release_slack, release_slack_max and release_slack_hard 0
//          (growable: every growth past the peak is beyond the high mark,
//          where chunks move and trim and a new block's edges are unpinned)
//     0x80 mapped_fit:True (growable: every request whose best fit would
//          map goes on mapped memory elsewhere, the smallest stretch; auto,
//          the default, does so on the first stretch found while the cache
//          has room, and for requests that would map 64 MiB, which few
//          inputs reach)
//   then operations, one opcode byte (mod 19) each, followed by arguments:
//     0-4  allocate      stream:u8 size...     (size encoding: ReadSize)
//     5-7  free          index:u8              (a live block)
//     8    bad free      kind:u8 arg:u32       (kind%4: foreign, interior,
//                                               freed, just past a block)
//     9    record_stream index:u8 stream:u8
//     10   bad record    kind:u8 arg:u32       (as bad free)
//     11   complete      which:u8              (which%5: stream 0-3, or all)
//     12   empty_cache
//     13   set_limit     v:u8                  (0: none; else 64 MiB << v%9)
//     14   fail_nth      op:u8 n:u8            (SimOp op%5, or Unmap when n has
//                                               bit 7 set; call 1 + n%8)
//     15   misc          which:u8              (which%9: zero-size alloc, free(0),
//                                               record(0), bad fraction,
//                                               good fraction, reset peaks,
//                                               snapshot check, region 1 on/off
//                                               for later allocations, pause or
//                                               resume region 1; a pause backs
//                                               up when (which/9) is odd)
//     16   begin_pool    pool:u8 stream:u8     (pool 1 + pool%3; allocations
//                                               on the stream go to it, under
//                                               a simulated stream capture)
//     17   end_pool      pool:u8
//     18   release_pool  pool:u8               (-1 on the use count)
// While a pool is being allocated to, the simulated device captures its
// stream and refuses what a capture refuses; a refusal is a failure here.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/size_policy.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "tests/reliability/reliability_support.h"

namespace ccalloc::reliability {
namespace {

constexpr int kMaxOps = 4096;
constexpr int kStreams = 4;
// The ops an allocator calls (SimOp's first five); the IPC ones after them
// are never reached from here, and the corpus encodes op%5.
constexpr int kSimOps = static_cast<int>(SimOp::kQueryEvent) + 1;

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  std::uint8_t U8() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint32_t U32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(U8()) << (8 * i);
    return v;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

// Every counter, compared as raw memory: MemoryStats is plain int64 fields
// and this runs after every refused call (Flatten() would build ~150 strings).
static_assert(std::has_unique_object_representations_v<MemoryStats>);
bool SameStats(const MemoryStats& a, const MemoryStats& b) {
  return std::memcmp(&a, &b, sizeof(MemoryStats)) == 0;
}

class Harness {
 public:
  explicit Harness(std::uint8_t config)
      : growable_((config & 0x01) != 0), destroy_live_((config & 0x10) != 0) {
    SimBackend::Config sim;
    // 64 KiB pages come with the small device: Validate() walks every page
    // entry of every growable segment after every operation.
    sim.capacity = (config & 0x22) != 0 ? kGiB : 8 * kGiB;
    sim.page_size = (config & 0x20) != 0 ? std::size_t{64} << 10 : std::size_t{2} << 20;
    sim.auto_complete_events = false;
    SetCurrentRegion(0);  // the thread outlives the inputs
    capacity_ = sim.capacity;
    page_size_ = sim.page_size;
    sim_ = std::make_unique<SimBackend>(sim);
    options_ = PytorchNativeOptions();
    options_.expandable_segments = growable_;
    // Unmaps inline: the worker's jobs run inside Submit and are applied at
    // the next reap, as on its thread, so every injected failure meets the
    // operation that caused it. The thread itself is covered by the soak,
    // the TSan suites and unmap_worker_test.
    options_.background_unmap = false;
    if ((config & 0x04) != 0) options_.max_split_size = 64 * kMiB;
    if ((config & 0x08) != 0) {
      options_.garbage_collection_threshold = 0.6;
      if (growable_) options_.cross_stream_reuse = Options::CrossStreamReuse::kAlways;
    }
    if ((config & 0x40) != 0) {
      options_.release_slack = options_.release_slack_max = options_.release_slack_hard = 0;
    }
    if ((config & 0x80) != 0) options_.mapped_fit = Options::MappedFit::kAlways;
    alloc_ =
        std::make_unique<DeviceAllocator>(std::make_unique<BorrowedBackend>(sim_.get()), options_);
    Check("construction");
  }

  void Step(ByteReader& in) {
    ++op_;
    switch (in.U8() % 19) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4: {
        const StreamId stream = in.U8() % kStreams;
        DoAllocate(ReadSize(in), stream);
        break;
      }
      case 5:
      case 6:
      case 7:
        DoFree(in.U8());
        break;
      case 8:
        DoBadPointer(in, /*record=*/false);
        break;
      case 9:
        DoRecordStream(in.U8(), in.U8() % kStreams);
        break;
      case 10:
        DoBadPointer(in, /*record=*/true);
        break;
      case 11: {
        const int which = in.U8() % (kStreams + 1);
        what_ = "complete";
        if (which == kStreams) {
          sim_->CompleteAll();
        } else {
          sim_->CompleteStream(static_cast<StreamId>(which));
        }
        Check(what_);
        break;
      }
      case 12:
        DoEmptyCache();
        break;
      case 13: {
        const std::uint8_t v = in.U8();
        const std::size_t limit = v == 0 ? 0 : (64 * kMiB) << (v % 9);
        what_ = "set_limit";
        Expect(alloc_->SetMemoryLimit(limit).ok(), "SetMemoryLimit failed");
        Check(what_);
        break;
      }
      case 14: {
        auto op = static_cast<SimOp>(in.U8() % kSimOps);
        const std::uint8_t n = in.U8();
        // Bit 7: an unmap instead (a trim that fails halfway).
        if ((n & 0x80) != 0) op = SimOp::kUnmap;
        sim_->FailNth(op, 1 + n % 8);
        break;
      }
      case 15:
        DoMisc(in.U8());
        break;
      case 16: {
        const PoolId pool = 1 + in.U8() % 3;
        DoBeginPool(pool, in.U8() % kStreams);
        break;
      }
      case 17:
        DoEndPool(1 + in.U8() % 3);
        break;
      case 18:
        DoReleasePool(1 + in.U8() % 3);
        break;
    }
  }

  int bad_inputs() const { return bad_inputs_; }

  // Frees everything, empties the cache and destroys the allocator; the
  // device must hold nothing afterwards.
  void Finish() {
    for (int op = 0; op < kSimOps; ++op) sim_->FailNth(static_cast<SimOp>(op), 0);
    sim_->FailNth(SimOp::kUnmap, 0);
    SetCurrentRegion(region_ = 0);
    what_ = "finish";
    // Captures end first: destruction synchronizes, which a capture refuses.
    while (!routes_.empty()) DoEndPool(routes_.begin()->first);
    for (auto& [pool, uses] : uses_) {
      while (uses > 0) DoReleasePool(pool);
    }
    if (!destroy_live_) {
      while (!model_.empty()) {
        const DevicePtr ptr = model_.Nth(0);
        absl::Status s = alloc_->Free(ptr);
        Expect(s.ok(), absl::StrCat("final free of ", Hex(ptr), ": ", s.ToString()));
        model_.Remove(ptr);
      }
      absl::Status s = alloc_->EmptyCache();
      Expect(s.ok(), absl::StrCat("final EmptyCache: ", s.ToString()));
      Check("final EmptyCache");
      for (PoolId pool = 1; pool <= 3; ++pool) {
        Expect(absl::IsNotFound(alloc_->PoolUseCount(pool).status()),
               absl::StrCat("pool ", pool, " outlived its last use and its memory"));
      }
      const MemoryStats stats = alloc_->GetStats();
      Expect(stats.reserved_bytes[kStatAll].current == 0 && stats.segment[kStatAll].current == 0 &&
                 stats.active[kStatAll].current == 0,
             absl::StrCat("after freeing everything and EmptyCache: reserved ",
                          stats.reserved_bytes[kStatAll].current, ", segments ",
                          stats.segment[kStatAll].current, ", active ",
                          stats.active[kStatAll].current));
      Expect(sim_->NothingOutstanding(),
             absl::StrCat("the device still holds memory before destruction: ",
                          DescribeOutstanding(sim_->counts())));
    }
    alloc_.reset();
    Expect(sim_->NothingOutstanding(),
           absl::StrCat("the device still holds memory after destruction: ",
                        DescribeOutstanding(sim_->counts())));
  }

 private:
  // Sizes: mostly log-scaled 1 B .. 256 MiB, plus zero, sizes near SIZE_MAX,
  // sizes around the representable limit and the size-class boundaries.
  static std::size_t ReadSize(ByteReader& in) {
    const std::uint8_t kind = in.U8();
    if (kind < 232) {
      const int exponent = kind % 28;
      const std::size_t base = std::size_t{1} << exponent;
      return base + in.U32() % base;
    }
    if (kind < 236) return 0;
    if (kind < 240) return std::numeric_limits<std::size_t>::max() - in.U8();
    if (kind < 244) return kMaxRequest + (kind % 2);  // largest valid, first invalid
    // clang-format off
    static constexpr std::size_t kBoundaries[] = {
        1,          511,          512,          513,           kSmallSize - 1,
        kSmallSize, kSmallSize + 1, 2 * kMiB,   kMinLargeAlloc - 1, kMinLargeAlloc,
        20 * kMiB,  20 * kMiB + 1,  64 * kMiB,  64 * kMiB + 1,  256 * kMiB};
    // clang-format on
    return kBoundaries[in.U8() % std::size(kBoundaries)];
  }

  void DoAllocate(std::size_t size, StreamId stream) {
    what_ = absl::StrCat("allocate ", size, " on stream ", stream);
    const MemoryStats before = alloc_->GetStats();
    const std::int64_t injected = sim_->counts().failures_injected;
    absl::StatusOr<DevicePtr> ptr = alloc_->Allocate(size, stream);
    const MemoryStats after = alloc_->GetStats();
    bool is_routed = false;
    for (const auto& [pool, on] : route_order_) is_routed = is_routed || on == stream;
    const bool in_region = region_ != 0 && !is_routed;
    if (size != 0 && size <= kMaxRequest && in_region && alloc_->IsPaused(region_)) {
      Expect(absl::IsFailedPrecondition(ptr.status()),
             absl::StrCat("allocating in a paused region answered ", ptr.status().ToString()));
      ExpectUnchanged(before, after);
      ++bad_inputs_;
      Check(what_);
      return;
    }
    if (size == 0) {
      Expect(ptr.ok() && *ptr == 0, "a zero-byte request did not give a null pointer");
      ExpectUnchanged(before, after);
    } else if (size > kMaxRequest) {
      ExpectInvalid(ptr.status(), absl::StrCat(size));
      ExpectUnchanged(before, after);
      ++bad_inputs_;
    } else if (ptr.ok()) {
      ModelBlock block;
      block.size = static_cast<std::size_t>(after.allocated_bytes[kStatAll].current -
                                            before.allocated_bytes[kStatAll].current);
      block.requested = size;
      block.stream = stream;
      std::string why;
      Expect(model_.Add(*ptr, block, options_, growable_, &why), why);
      // Routed allocations land in their pool, others in the thread's region
      // or the default pool.
      PoolId expect_pool = in_region ? (kRegionPoolBit | region_) : 0;
      for (const auto& [pool, routed] : route_order_) {
        if (routed == stream) {
          expect_pool = pool;  // the first routing in begin order wins
          break;
        }
      }
      const SegmentInfo* segment = nullptr;
      const Snapshot snap = alloc_->TakeSnapshot();
      for (const SegmentInfo& s : snap.segments) {
        if (*ptr >= s.address && *ptr < s.address + s.total_size) segment = &s;
      }
      Expect(segment != nullptr && segment->pool_id == expect_pool,
             absl::StrCat("block ", Hex(*ptr), " is not in pool ", expect_pool));
    } else {
      Expect(absl::IsResourceExhausted(ptr.status()),
             absl::StrCat("a valid request failed with ", ptr.status().ToString()));
      if (sim_->counts().failures_injected == injected) {
        std::size_t cap = capacity_;
        if (const std::size_t limit = alloc_->memory_limit(); limit > 0) {
          cap = std::min(cap, limit);
        }
        std::string why;
        Expect(OutOfMemoryIsReal(size, after, cap, growable_, page_size_, &why),
               absl::StrCat(why, "; the allocator said: ", ptr.status().message()));
        Expect(
            ptr.status().message().find("out of memory") != absl::string_view::npos,
            absl::StrCat("an out-of-memory error without the report: ", ptr.status().ToString()));
      }
    }
    Check(what_);
  }

  void DoFree(std::uint8_t index) {
    if (model_.empty()) return;
    const DevicePtr ptr = model_.Nth(index);
    what_ = absl::StrCat("free ", Hex(ptr));
    const std::int64_t injected = sim_->counts().failures_injected;
    absl::Status s = alloc_->Free(ptr);
    if (s.ok()) {
      model_.Remove(ptr);
      freed_.push_back(ptr);
    } else {
      // Free asks the device for nothing but events; only an injected
      // RecordEvent failure may stop it, and then the block stays live.
      Expect(absl::IsResourceExhausted(s) && sim_->counts().failures_injected > injected,
             absl::StrCat("free of a live block failed: ", s.ToString()));
    }
    Check(what_);
  }

  void DoRecordStream(std::uint8_t index, StreamId stream) {
    if (model_.empty()) return;
    const DevicePtr ptr = model_.Nth(index);
    what_ = absl::StrCat("record_stream ", Hex(ptr), " on ", stream);
    absl::Status s = alloc_->RecordStream(ptr, stream);
    Expect(s.ok(), absl::StrCat("record_stream of a live block: ", s.ToString()));
    Check(what_);
  }

  // A pointer the allocator must refuse: foreign, interior, or already freed.
  void DoBadPointer(ByteReader& in, bool record) {
    const int kind = in.U8() % 4;
    const std::uint32_t arg = in.U32();
    DevicePtr ptr = 0;
    switch (kind) {
      case 0:
        // Near the simulated device's addresses or anywhere at all.
        ptr = (arg & 1) != 0 ? (DevicePtr{1} << 44) + (DevicePtr{arg} << 9)
                             : (DevicePtr{arg} << 20) | 0x100;
        break;
      case 1: {
        if (model_.empty()) return;
        const DevicePtr base = model_.Nth(arg);
        const std::size_t size = model_.live().at(base).size;
        if (size < 2) return;
        ptr = base + 1 + (arg >> 8) % (size - 1);
        break;
      }
      case 2:
        if (freed_.empty()) return;
        ptr = freed_[arg % freed_.size()];
        break;
      case 3: {
        // The end of a live block: a free neighbour, another segment's
        // address range or nothing at all.
        if (model_.empty()) return;
        const DevicePtr base = model_.Nth(arg);
        ptr = base + model_.live().at(base).size;
        break;
      }
    }
    // The address may have been handed out again (or be inside a live block
    // by chance): then it is not a bad pointer.
    if (ptr == 0 || model_.Contains(ptr) ||
        (kind != 1 && model_.Holding(ptr) != model_.live().end())) {
      return;
    }
    what_ = absl::StrCat(record ? "bad record_stream " : "bad free ", Hex(ptr));
    const MemoryStats before = alloc_->GetStats();
    const std::int64_t events = sim_->counts().live_events;
    absl::Status s = record ? alloc_->RecordStream(ptr, 1) : alloc_->Free(ptr);
    ExpectInvalid(s, Hex(ptr));
    ExpectUnchanged(before, alloc_->GetStats());
    Expect(sim_->counts().live_events == events, "a refused call recorded an event");
    ++bad_inputs_;
    Check(what_);
  }

  void DoEmptyCache() {
    what_ = "empty_cache";
    const std::int64_t injected = sim_->counts().failures_injected;
    const MemoryStats before = alloc_->GetStats();
    absl::Status s = alloc_->EmptyCache();
    if (!routes_.empty()) {
      Expect(absl::IsFailedPrecondition(s),
             absl::StrCat("EmptyCache during a capture answered ", s.ToString()));
      ExpectUnchanged(before, alloc_->GetStats());
      ++bad_inputs_;
    } else if (!s.ok()) {
      Expect(absl::IsResourceExhausted(s) && sim_->counts().failures_injected > injected,
             absl::StrCat("EmptyCache failed without an injected failure: ", s.ToString()));
    } else if (model_.empty() && uses_empty()) {
      // Nothing is live: nothing may stay reserved, mapped or pending.
      const SimBackend::Counts c = sim_->counts();
      Expect(c.bytes_in_use == 0 && c.live_events == 0 && c.live_ranges == 0 &&
                 c.live_allocations == 0,
             absl::StrCat("EmptyCache with nothing live left ", DescribeOutstanding(c)));
    }
    Check(what_);
  }

  void DoMisc(std::uint8_t which) {
    const MemoryStats before = alloc_->GetStats();
    switch (which % 9) {
      case 0: {
        what_ = "allocate 0";
        absl::StatusOr<DevicePtr> p = alloc_->Allocate(0, which % kStreams);
        Expect(p.ok() && *p == 0, "Allocate(0) did not give a null pointer");
        ExpectUnchanged(before, alloc_->GetStats());
        break;
      }
      case 1:
        what_ = "free 0";
        Expect(alloc_->Free(0).ok(), "Free(0) failed");
        ExpectUnchanged(before, alloc_->GetStats());
        break;
      case 2:
        what_ = "record_stream 0";
        Expect(alloc_->RecordStream(0, 1).ok(), "RecordStream(0) failed");
        ExpectUnchanged(before, alloc_->GetStats());
        break;
      case 3: {
        what_ = "bad memory fraction";
        // (0 is a valid cap, as in PyTorch: nothing may be allocated.)
        static constexpr double kBad[] = {-1e-9, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN(),
                                          std::numeric_limits<double>::infinity()};
        const std::size_t limit = alloc_->memory_limit();
        ExpectInvalid(alloc_->SetMemoryFraction(kBad[which % std::size(kBad)]), "fraction");
        Expect(alloc_->memory_limit() == limit, "a refused fraction changed the limit");
        ExpectUnchanged(before, alloc_->GetStats());
        ++bad_inputs_;
        break;
      }
      case 4:
        what_ = "memory fraction";
        Expect(alloc_->SetMemoryFraction(0.25 + 0.25 * (which % 4)).ok(),
               "a valid fraction was refused");
        break;
      case 5:
        what_ = "reset peaks";
        alloc_->ResetPeakStats();
        break;
      case 6:
        what_ = "snapshot";
        CheckSnapshot();
        break;
      case 7:
        // This thread's allocations go to region 1 from now (or no longer).
        what_ = "toggle region";
        region_ = region_ == 0 ? 1 : 0;
        SetCurrentRegion(region_);
        break;
      case 8:
        DoPauseOrResume(/*backup=*/(which / 9) % 2 == 1);
        break;
    }
    Check(what_);
  }

  // Pauses region 1 (with a backup when `backup`), or resumes it when
  // paused. Classic segments refuse, so does a capture; an injected failure
  // leaves the region as the allocator says (IsPaused), valid either way. A
  // backup pause first stamps each live block of the region with its address
  // (8 bytes: cheap); a successful resume finds the stamps of the blocks
  // still allocated, and a failed backup pause leaves them readable.
  void DoPauseOrResume(bool backup) {
    const bool was_paused = alloc_->IsPaused(1);
    what_ = was_paused ? "resume" : (backup ? "pause with backup" : "pause");
    if (!was_paused) {
      stamped_.clear();
      if (backup) {
        for (DevicePtr p : RegionBlocks()) {
          if (sim_->WriteBytes(p, Stamp(p)).ok()) stamped_.push_back(p);
        }
      }
    }
    const std::int64_t injected = sim_->counts().failures_injected;
    absl::Status s = was_paused ? alloc_->Resume(1).status()
                                : alloc_->Pause(1, DeviceAllocator::PauseOptions{backup}).status();
    if (s.ok()) {
      Expect(alloc_->IsPaused(1) != was_paused, "a successful pause/resume changed nothing");
      if (was_paused) CheckStamps("a resume lost a backed-up block's bytes");
      return;
    }
    // A resume maps memory again: under a memory limit (set lower, or filled
    // by other allocations, while paused) it may be refused, the region
    // staying paused.
    const bool over_limit =
        was_paused && absl::IsResourceExhausted(s) && alloc_->memory_limit() != 0;
    const bool expected = absl::IsNotFound(s) ||                          // never used
                          (absl::IsFailedPrecondition(s) && (!growable_ || !routes_.empty())) ||
                          over_limit || sim_->counts().failures_injected > injected;
    Expect(expected, absl::StrCat(what_, " failed: ", s.ToString()));
    if (was_paused) Expect(alloc_->IsPaused(1), "a failed resume left the region running");
    if (!was_paused && !alloc_->IsPaused(1)) CheckStamps("a failed backup touched the region");
  }
  // The allocated blocks of region 1, from the snapshot.
  std::vector<DevicePtr> RegionBlocks() const {
    std::vector<DevicePtr> blocks;
    for (const SegmentInfo& segment : alloc_->TakeSnapshot().segments) {
      if (segment.pool_id != (kRegionPoolBit | 1)) continue;
      for (const BlockInfo& b : segment.blocks) {
        if (b.status == BlockStatus::kActiveAllocated && b.size >= 8) blocks.push_back(b.address);
      }
    }
    return blocks;
  }
  static std::string Stamp(DevicePtr p) {
    return std::string(reinterpret_cast<const char*>(&p), sizeof(p));
  }
  void CheckStamps(const char* what) {
    const std::vector<DevicePtr> live = RegionBlocks();
    for (DevicePtr p : stamped_) {
      if (!std::binary_search(live.begin(), live.end(), p)) continue;  // freed meanwhile
      absl::StatusOr<std::string> bytes = sim_->ReadBytes(p, sizeof(p));
      Expect(bytes.ok() && *bytes == Stamp(p), what);
    }
  }

  bool uses_empty() const {
    for (const auto& [pool, uses] : uses_) {
      if (uses > 0) return false;
    }
    return true;
  }

  void DoBeginPool(PoolId pool, StreamId stream) {
    what_ = absl::StrCat("begin_pool ", pool, " on stream ", stream);
    const MemoryStats before = alloc_->GetStats();
    absl::Status s =
        alloc_->BeginAllocateToPool(pool, [stream](StreamId t) { return t == stream; });
    if (routes_.contains(pool)) {
      Expect(absl::IsFailedPrecondition(s), absl::StrCat("a second begin answered ", s.ToString()));
      ExpectUnchanged(before, alloc_->GetStats());
      ++bad_inputs_;
    } else {
      Expect(s.ok(), absl::StrCat("begin failed: ", s.ToString()));
      if (captures_[stream]++ == 0) {
        absl::Status c = sim_->BeginCapture(stream);
        Expect(c.ok(), c.ToString());
      }
      routes_[pool] = stream;
      route_order_.emplace_back(pool, stream);
      ++uses_[pool];
    }
    CheckPool(pool);
    Check(what_);
  }

  void DoEndPool(PoolId pool) {
    what_ = absl::StrCat("end_pool ", pool);
    const MemoryStats before = alloc_->GetStats();
    const SimBackend::Counts device = sim_->counts();
    absl::Status s = alloc_->EndAllocateToPool(pool);
    // Ending the routing does no deferred work: the capture is still on.
    ExpectUnchanged(before, alloc_->GetStats());
    Expect(sim_->counts().live_events == device.live_events &&
               sim_->counts().bytes_in_use == device.bytes_in_use,
           "EndAllocateToPool asked the device for something");
    auto it = routes_.find(pool);
    if (it == routes_.end()) {
      Expect(absl::IsFailedPrecondition(s), absl::StrCat("a stray end answered ", s.ToString()));
      ++bad_inputs_;
    } else {
      Expect(s.ok(), absl::StrCat("end failed: ", s.ToString()));
      if (--captures_[it->second] == 0) {
        absl::Status c = sim_->EndCapture(it->second);
        Expect(c.ok(), c.ToString());
      }
      routes_.erase(it);
      route_order_.erase(std::find_if(route_order_.begin(), route_order_.end(),
                                      [pool](const auto& r) { return r.first == pool; }));
    }
    CheckPool(pool);
    Check(what_);
  }

  void DoReleasePool(PoolId pool) {
    what_ = absl::StrCat("release_pool ", pool);
    const MemoryStats before = alloc_->GetStats();
    const int uses = uses_[pool];
    absl::Status s = alloc_->ReleasePool(pool);
    if (uses == 0) {
      Expect(absl::IsNotFound(s) || absl::IsFailedPrecondition(s),
             absl::StrCat("releasing an unused pool answered ", s.ToString()));
      ExpectUnchanged(before, alloc_->GetStats());
      ++bad_inputs_;
    } else if (uses == 1 && routes_.contains(pool)) {
      Expect(absl::IsFailedPrecondition(s),
             absl::StrCat("the last release of a routed pool answered ", s.ToString()));
      ExpectUnchanged(before, alloc_->GetStats());
      ++bad_inputs_;
    } else {
      Expect(s.ok(), absl::StrCat("release failed: ", s.ToString()));
      --uses_[pool];
    }
    CheckPool(pool);
    Check(what_);
  }

  // The allocator's use count equals the model's; a pool at 0 keeps only
  // segments that hold live blocks once no capture is underway.
  void CheckPool(PoolId pool) {
    absl::StatusOr<int> count = alloc_->PoolUseCount(pool);
    if (uses_[pool] > 0) {
      Expect(count.ok() && *count == uses_[pool],
             absl::StrCat("pool ", pool, ": use count ", count.ok() ? *count : -1, ", model ",
                          uses_[pool]));
      return;
    }
    Expect(!count.ok() || *count == 0, absl::StrCat("pool ", pool, " has uses it should not"));
    if (!routes_.empty()) return;
    for (const SegmentInfo& segment : alloc_->TakeSnapshot().segments) {
      if (segment.pool_id != pool) continue;
      bool live = false;
      for (const BlockInfo& b : segment.blocks) live |= b.status != BlockStatus::kInactive;
      // A release that failed on an injected fault stays owed.
      Expect(live || sim_->counts().failures_injected > 0,
             absl::StrCat("released pool ", pool, " keeps a wholly free segment"));
    }
  }

  // Every live block of the model is an allocated block of the snapshot with
  // the same size and requested size, and there is no other.
  void CheckSnapshot() {
    const Snapshot snap = alloc_->TakeSnapshot();
    std::size_t allocated = 0;
    for (const SegmentInfo& segment : snap.segments) {
      for (const BlockInfo& b : segment.blocks) {
        if (b.status != BlockStatus::kActiveAllocated) continue;
        ++allocated;
        auto it = model_.live().find(b.address);
        Expect(it != model_.live().end(),
               absl::StrCat("the snapshot has an allocated block at ", Hex(b.address),
                            " that the model does not know"));
        Expect(it->second.size == b.size && it->second.requested == b.requested_size,
               absl::StrCat("block ", Hex(b.address), ": snapshot ", b.size, "/", b.requested_size,
                            " bytes, model ", it->second.size, "/", it->second.requested));
      }
    }
    Expect(allocated == model_.count(),
           absl::StrCat("the snapshot has ", allocated, " allocated blocks, the model ",
                        model_.count()));
  }

  // After every operation: the allocator's own check, the model, the device.
  void Check(const std::string& what) {
    std::string why;
    // The unmap worker's results applied (a failure among them was this
    // operation's and is absorbed: its chunk is held again).
    (void)alloc_->FinishBackgroundWork();
    Expect(alloc_->Validate(&why), absl::StrCat("Validate() after ", what, ": ", why));
    const MemoryStats stats = alloc_->GetStats();
    Expect(model_.MatchesCounters(stats, &why), absl::StrCat("counters: ", why));
    Expect(BackendMatchesStats(sim_->counts(), stats, growable_, &why),
           absl::StrCat("device: ", why));
    Expect(!sim_->capture_invalidated(),
           absl::StrCat("the allocator broke a capture: ", sim_->capture_violation()));
  }

  void ExpectInvalid(const absl::Status& s, const std::string& must_mention) {
    Expect(absl::IsInvalidArgument(s), absl::StrCat("bad input answered with ", s.ToString()));
    Expect(s.message().find(must_mention) != absl::string_view::npos,
           absl::StrCat("the message '", s.message(), "' does not mention ", must_mention));
  }

  void ExpectUnchanged(const MemoryStats& before, const MemoryStats& after) {
    Expect(SameStats(before, after), "a refused or empty call changed a counter");
  }

  void Expect(bool ok, const std::string& why) {
    if (ok) return;
    std::fprintf(stderr, "allocator_fuzz: op %d (%s), %s segments: %s\n", op_, what_.c_str(),
                 growable_ ? "growable" : "classic", why.c_str());
    std::abort();
  }

  const bool growable_;
  const bool destroy_live_;
  std::size_t capacity_ = 0;
  std::size_t page_size_ = 0;
  Options options_;
  // Declared before the allocator: it must outlive it.
  std::unique_ptr<SimBackend> sim_;
  std::unique_ptr<DeviceAllocator> alloc_;
  ReferenceModel model_;
  std::vector<DevicePtr> freed_;
  // Pools being allocated to (and their stream), use counts by the model,
  // and how many routings capture each stream.
  std::map<PoolId, StreamId> routes_;
  std::map<PoolId, int> uses_;
  std::map<StreamId, int> captures_;
  std::vector<std::pair<PoolId, StreamId>> route_order_;
  int op_ = 0;
  int bad_inputs_ = 0;
  RegionId region_ = 0;  // this thread's current region (misc op 7)
  std::vector<DevicePtr> stamped_;  // blocks stamped before a backup pause
  std::string what_ = "start";
};

}  // namespace
}  // namespace ccalloc::reliability

namespace ccalloc::reliability {
namespace {

// libFuzzer counts inputs; this counts the allocator operations they became,
// printed when the fuzzer exits (next to -print_final_stats=1's figures).
struct Totals {
  std::int64_t inputs = 0;
  std::int64_t operations = 0;
  std::int64_t bad_inputs = 0;
  ~Totals() {
    if (inputs == 0) return;
    std::fprintf(stderr,
                 "allocator_fuzz: %lld operations (%lld refused bad inputs) in %lld inputs\n",
                 static_cast<long long>(operations), static_cast<long long>(bad_inputs),
                 static_cast<long long>(inputs));
  }
};
Totals totals;

}  // namespace
}  // namespace ccalloc::reliability

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using ccalloc::reliability::ByteReader;
  using ccalloc::reliability::Harness;
  using ccalloc::reliability::totals;
  ByteReader in(data, size);
  Harness harness(in.U8());
  int ops = 0;
  for (; ops < ccalloc::reliability::kMaxOps && !in.done(); ++ops) harness.Step(in);
  harness.Finish();
  ++totals.inputs;
  totals.operations += ops;
  totals.bad_inputs += harness.bad_inputs();
  return 0;
}
