// allocator_behaviour_suite.h — every behaviour of DeviceAllocator, written once.
//
// A type-parameterized suite over the configurations of allocator_fixture.h:
// allocator_behaviour_test.cc instantiates it on the simulated device (classic
// and growable segments), allocator_behaviour_gpu_test.cc on a real one.
// pool_behaviour_suite.h holds the private-pool (CUDA graph) behaviours.
// Behaviours that differ between classic and growable segments say so in the
// test; tests that need what only the simulated device can do (a small
// capacity, injected failures, events that stay incomplete) skip themselves
// elsewhere, and say why.
//
// Include this header from exactly one file per test binary.
#ifndef CCALLOC_TESTS_SUPPORT_ALLOCATOR_BEHAVIOUR_SUITE_H_
#define CCALLOC_TESTS_SUPPORT_ALLOCATOR_BEHAVIOUR_SUITE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "allocator/cache/size_policy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "tests/support/allocator_fixture.h"

#ifndef CCALLOC_DEBUG_CHECKS
#define CCALLOC_DEBUG_CHECKS 0
#endif

namespace ccalloc::test {

// Unwraps a StatusOr inside a test, failing the test when it is an error.
#define CCALLOC_ASSERT_OK_AND_ASSIGN(lhs, expr)           \
  auto CCALLOC_CONCAT_(status_or_, __LINE__) = (expr);    \
  ASSERT_TRUE(CCALLOC_CONCAT_(status_or_, __LINE__).ok()) \
      << CCALLOC_CONCAT_(status_or_, __LINE__).status();  \
  lhs = *std::move(CCALLOC_CONCAT_(status_or_, __LINE__))
#define CCALLOC_CONCAT_INNER_(a, b) a##b
#define CCALLOC_CONCAT_(a, b) CCALLOC_CONCAT_INNER_(a, b)

inline constexpr int kSmall = 1;  // StatArray index of the small pool
inline constexpr int kLarge = 2;  // and of the large pool

// Pages of `page_size` touched by [ptr, ptr + size) for each block. Segment
// bases are page aligned, so global page numbers identify pages.
inline std::size_t PagesTouched(const std::vector<std::pair<DevicePtr, std::size_t>>& blocks,
                                std::size_t page_size) {
  std::set<DevicePtr> pages;
  for (const auto& [ptr, size] : blocks) {
    for (DevicePtr p = ptr / page_size; p <= (ptr + size - 1) / page_size; ++p) {
      pages.insert(p);
    }
  }
  return pages.size();
}

template <typename Config>
class AllocatorBehaviourTest : public AllocatorTest<Config> {
 protected:
  // Free and check, in one line.
  void FreeOk(DevicePtr ptr) {
    absl::Status s = this->alloc_->Free(ptr);
    EXPECT_TRUE(s.ok()) << s;
  }
  std::int64_t Reserved() const {
    return this->alloc_->GetStats().reserved_bytes[kStatAll].current;
  }
  std::size_t PageSize() const { return this->env_.backend()->PageSize(); }
};

TYPED_TEST_SUITE_P(AllocatorBehaviourTest);

// GTEST_SKIP returns from the function it is in, so these are macros.
#define CCALLOC_SKIP_IF_GROWABLE(why) \
  if (this->env_.growable()) GTEST_SKIP() << "classic segments only: " << (why)
#define CCALLOC_SKIP_UNLESS_SIM(why) \
  if (!this->env_.is_sim()) GTEST_SKIP() << "needs the simulated device: " << (why)

// ---------------------------------------------------------------------------
// Splitting, coalescing, pools, segment sizes, rounding
// ---------------------------------------------------------------------------

// Three neighbours carved from one segment; freeing the middle one leaves a
// hole, freeing its neighbours merges everything back into one free block.
TYPED_TEST_P(AllocatorBehaviourTest, SplitsAndCoalescesNeighbours) {
  for (std::size_t size : {std::size_t{4} << 20, std::size_t{512} << 10}) {
    SCOPED_TRACE(absl::StrCat("block size ", size));
    DeviceAllocator& alloc = this->Make();
    const StreamId s = this->env_.stream(0);
    const int pool = size <= kSmallSize ? kSmall : kLarge;
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr a, alloc.Allocate(size, s));
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr b, alloc.Allocate(size, s));
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr c, alloc.Allocate(size, s));
    EXPECT_EQ(b, a + size);
    EXPECT_EQ(c, b + size);
    MemoryStats stats = alloc.GetStats();
    EXPECT_EQ(stats.segment[pool].current, 1);
    EXPECT_EQ(stats.allocation[pool].current, 3);

    this->FreeOk(b);
    Snapshot snap = alloc.TakeSnapshot();
    ASSERT_EQ(snap.segments.size(), 1u);
    const SegmentInfo& seg = snap.segments[0];
    ASSERT_EQ(seg.blocks.size(), 4u);  // a, hole, c, the rest of the segment
    EXPECT_EQ(seg.blocks[0].status, BlockStatus::kActiveAllocated);
    EXPECT_EQ(seg.blocks[1].status, BlockStatus::kInactive);
    EXPECT_EQ(seg.blocks[1].address, b);
    EXPECT_EQ(seg.blocks[1].size, size);
    EXPECT_EQ(seg.blocks[2].status, BlockStatus::kActiveAllocated);
    EXPECT_EQ(seg.blocks[3].status, BlockStatus::kInactive);
    if (!this->env_.growable()) {
      // Free pieces of split classic segments: the hole and the rest.
      EXPECT_EQ(snap.stats.inactive_split[pool].current, 2);
      EXPECT_EQ(snap.stats.inactive_split_bytes[pool].current,
                static_cast<std::int64_t>(seg.total_size - 2 * size));
    }

    this->FreeOk(a);
    snap = alloc.TakeSnapshot();
    ASSERT_EQ(snap.segments[0].blocks.size(), 3u);
    EXPECT_EQ(snap.segments[0].blocks[0].address, a);
    EXPECT_EQ(snap.segments[0].blocks[0].size, 2 * size);
    EXPECT_EQ(snap.segments[0].blocks[0].status, BlockStatus::kInactive);

    this->FreeOk(c);
    snap = alloc.TakeSnapshot();
    ASSERT_EQ(snap.segments.size(), 1u);
    ASSERT_EQ(snap.segments[0].blocks.size(), 1u);
    EXPECT_EQ(snap.segments[0].blocks[0].address, snap.segments[0].address);
    EXPECT_EQ(snap.segments[0].blocks[0].size, snap.segments[0].total_size);
    EXPECT_EQ(snap.segments[0].blocks[0].status, BlockStatus::kInactive);
    EXPECT_EQ(snap.stats.inactive_split[pool].current, 0);
    EXPECT_EQ(snap.stats.allocation[pool].current, 0);
    EXPECT_TRUE(IsValid(alloc));
  }
}

// Requests up to 1 MiB (after rounding) go to the small pool, larger ones to
// the large pool, each with its own segments and counters.
TYPED_TEST_P(AllocatorBehaviourTest, ChoosesPoolBySize) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr small, alloc.Allocate(kSmallSize, s));
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr large, alloc.Allocate(kSmallSize + 1, s));
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr tiny, alloc.Allocate(1, s));
  MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.allocation[kSmall].current, 2);
  EXPECT_EQ(stats.allocation[kLarge].current, 1);
  EXPECT_EQ(stats.allocated_bytes[kSmall].current,
            static_cast<std::int64_t>(kSmallSize + kMinBlockSize));
  EXPECT_EQ(stats.allocated_bytes[kLarge].current,
            static_cast<std::int64_t>(kSmallSize + kMinBlockSize));
  EXPECT_EQ(stats.requested_bytes[kSmall].current, static_cast<std::int64_t>(kSmallSize + 1));
  EXPECT_EQ(stats.requested_bytes[kLarge].current, static_cast<std::int64_t>(kSmallSize + 1));
  EXPECT_EQ(stats.segment[kSmall].current, 1);
  EXPECT_EQ(stats.segment[kLarge].current, 1);
  EXPECT_EQ(stats.allocation[kStatAll].current, 3);

  Snapshot snap = alloc.TakeSnapshot();
  const SegmentInfo* small_seg = SegmentOf(snap, small);
  const SegmentInfo* large_seg = SegmentOf(snap, large);
  ASSERT_NE(small_seg, nullptr);
  ASSERT_NE(large_seg, nullptr);
  EXPECT_TRUE(small_seg->small_pool);
  EXPECT_FALSE(large_seg->small_pool);
  EXPECT_EQ(SegmentOf(snap, tiny), small_seg);
  this->FreeOk(small);
  this->FreeOk(large);
  this->FreeOk(tiny);
}

// Classic segments: 2 MiB for the small pool, 20 MiB for large requests below
// 10 MiB, the request rounded up to 2 MiB above. Growable segments map whole
// pages instead.
TYPED_TEST_P(AllocatorBehaviourTest, SegmentSizes) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  struct Case {
    std::size_t request;
    std::size_t classic_segment;
  };
  const Case cases[] = {
      {1, 2 * kMiB},
      {kSmallSize, 2 * kMiB},
      {kSmallSize + 1, 20 * kMiB},
      {10 * kMiB - kMinBlockSize, 20 * kMiB},
      {10 * kMiB, 10 * kMiB},
      {10 * kMiB + 1, 12 * kMiB},
      {21 * kMiB + 1, 22 * kMiB},
      {64 * kMiB - 1, 64 * kMiB},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("request ", c.request));
    const MemoryStats before = alloc.GetStats();
    ASSERT_EQ(before.reserved_bytes[kStatAll].current, 0);
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(c.request, s));
    const MemoryStats after = alloc.GetStats();
    const std::size_t rounded = RoundUpTo(c.request, kMinBlockSize);
    const int pool = rounded <= kSmallSize ? kSmall : kLarge;
    if (this->env_.growable()) {
      const std::size_t pages = RoundUpTo(rounded, this->PageSize()) / this->PageSize();
      EXPECT_EQ(after.reserved_bytes[pool].current,
                static_cast<std::int64_t>(pages * this->PageSize()));
      // Pages are mapped in chunks (one device allocation and one mapping
      // each), at most one per page.
      const std::int64_t maps = after.num_maps - before.num_maps;
      EXPECT_GE(maps, 1);
      EXPECT_LE(maps, static_cast<std::int64_t>(pages));
      EXPECT_EQ(after.num_device_alloc - before.num_device_alloc, maps);
      EXPECT_EQ(this->env_.outstanding().mappings, maps);
      EXPECT_EQ(this->env_.outstanding().physical, maps);
    } else {
      EXPECT_EQ(after.reserved_bytes[pool].current, static_cast<std::int64_t>(c.classic_segment));
      EXPECT_EQ(after.num_device_alloc - before.num_device_alloc, 1);
      Snapshot snap = alloc.TakeSnapshot();
      const SegmentInfo* seg = SegmentOf(snap, p);
      ASSERT_NE(seg, nullptr);
      EXPECT_EQ(seg->total_size, c.classic_segment);
      EXPECT_EQ(seg->address, p);
    }
    EXPECT_EQ(after.segment[pool].current, 1);
    EXPECT_EQ(this->env_.BytesInUse(), after.reserved_bytes[kStatAll].current);
    this->FreeOk(p);
    ASSERT_TRUE(alloc.EmptyCache().ok());
    const MemoryStats emptied = alloc.GetStats();
    EXPECT_EQ(emptied.reserved_bytes[kStatAll].current, 0);
    EXPECT_EQ(emptied.segment[kStatAll].current, 0);
    EXPECT_EQ(emptied.num_device_free - after.num_device_free,
              after.num_device_alloc - before.num_device_alloc);
    EXPECT_EQ(this->env_.BytesInUse(), 0);
  }
}

// Every block is the request rounded up to a multiple of 512 bytes; the
// requested size is kept alongside.
TYPED_TEST_P(AllocatorBehaviourTest, RoundsTo512Bytes) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  const std::size_t sizes[] = {
      1, 511, 512, 513, 1000, 4097, 8191, kSmallSize - 1, kSmallSize + 1, 3 * kMiB + 7};
  std::vector<std::pair<DevicePtr, std::size_t>> live;
  std::int64_t rounded_sum = 0;
  std::int64_t requested_sum = 0;
  for (std::size_t size : sizes) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, s));
    EXPECT_EQ(p % kMinBlockSize, 0u) << "block addresses are 512-byte aligned";
    live.emplace_back(p, size);
    rounded_sum += static_cast<std::int64_t>(RoundUpTo(size, kMinBlockSize));
    requested_sum += static_cast<std::int64_t>(size);
  }
  Snapshot snap = alloc.TakeSnapshot();
  for (const auto& [p, size] : live) {
    const BlockInfo* block = BlockAt(snap, p);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->size, RoundUpTo(size, kMinBlockSize)) << "request " << size;
    EXPECT_EQ(block->requested_size, size);
    EXPECT_EQ(block->status, BlockStatus::kActiveAllocated);
  }
  EXPECT_EQ(snap.stats.allocated_bytes[kStatAll].current, rounded_sum);
  EXPECT_EQ(snap.stats.requested_bytes[kStatAll].current, requested_sum);
  for (const auto& [p, size] : live) this->FreeOk(p);
  EXPECT_EQ(alloc.GetStats().requested_bytes[kStatAll].current, 0);
}

// roundup_power2_divisions:4 rounds to quarter steps between powers of two
// once a size is above 512 * 4 bytes; below that the 512-byte rule holds.
TYPED_TEST_P(AllocatorBehaviourTest, RoundupPower2Divisions) {
  absl::StatusOr<Options> options =
      ParseOptions("roundup_power2_divisions:4", this->env_.BaseOptions());
  ASSERT_TRUE(options.ok()) << options.status();
  DeviceAllocator& alloc = this->Make(*options);
  const StreamId s = this->env_.stream(0);
  struct Case {
    std::size_t request;
    std::size_t expected;  // by hand from the rule
  };
  const Case cases[] = {
      {1000, 1024},                   // below 2048: 512-byte rounding
      {3000, 3072},                   // [2048, 4096) in steps of 512
      {9000, 10240},                  // [8192, 16384) in steps of 2048
      {kSmallSize + 1, 1280 * kKiB},  // [1, 2) MiB in steps of 256 KiB
      {5 * kMiB, 5 * kMiB},           // already on a step
      {5 * kMiB + 1, 6 * kMiB},       // [4, 8) MiB in steps of 1 MiB
      {8 * kMiB, 8 * kMiB},           // a power of two is a boundary
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("request ", c.request));
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(c.request, s));
    Snapshot snap = alloc.TakeSnapshot();
    const BlockInfo* block = BlockAt(snap, p);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->size, c.expected);
    EXPECT_EQ(block->requested_size, c.request);
    EXPECT_EQ(snap.stats.allocated_bytes[kStatAll].current, static_cast<std::int64_t>(c.expected));
    this->FreeOk(p);
    ASSERT_TRUE(alloc.EmptyCache().ok());
  }
}

// max_split_size_mb: an oversize block is never split, serves only oversize
// requests within 20 MiB of its size, and never a request below the limit.
TYPED_TEST_P(AllocatorBehaviourTest, MaxSplitSizeKeepsOversizeBlocksWhole) {
  CCALLOC_SKIP_IF_GROWABLE("blocks of growable segments are always split");
  absl::StatusOr<Options> options = ParseOptions("max_split_size_mb:40", this->env_.BaseOptions());
  ASSERT_TRUE(options.ok()) << options.status();
  DeviceAllocator& alloc = this->Make(*options);
  const StreamId s = this->env_.stream(0);
  EXPECT_EQ(alloc.GetStats().max_split_size, static_cast<std::int64_t>(40 * kMiB));

  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p80, alloc.Allocate(80 * kMiB, s));
  MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.oversize_segments.current, 1);
  EXPECT_EQ(stats.oversize_allocations.current, 1);
  this->FreeOk(p80);

  // 70 MiB is oversize and 80 < 70 + 20: the 80 MiB block serves it whole.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p70, alloc.Allocate(70 * kMiB, s));
  EXPECT_EQ(p70, p80);
  stats = alloc.GetStats();
  EXPECT_EQ(stats.allocated_bytes[kStatAll].current, static_cast<std::int64_t>(80 * kMiB));
  EXPECT_EQ(stats.requested_bytes[kStatAll].current, static_cast<std::int64_t>(70 * kMiB));
  EXPECT_EQ(stats.num_device_alloc, 1);
  Snapshot snap = alloc.TakeSnapshot();
  ASSERT_NE(SegmentOf(snap, p70), nullptr);
  EXPECT_EQ(SegmentOf(snap, p70)->blocks.size(), 1u) << "an oversize block is not split";
  this->FreeOk(p70);

  // 50 MiB is oversize but 80 >= 50 + 20: a new segment, not the 80 MiB block.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p50, alloc.Allocate(50 * kMiB, s));
  EXPECT_NE(p50, p80);
  EXPECT_EQ(alloc.GetStats().num_device_alloc, 2);
  EXPECT_EQ(alloc.GetStats().allocated_bytes[kStatAll].current,
            static_cast<std::int64_t>(50 * kMiB));
  this->FreeOk(p50);

  // 30 MiB is below the limit: neither free oversize block may serve it.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p30, alloc.Allocate(30 * kMiB, s));
  EXPECT_NE(p30, p80);
  EXPECT_NE(p30, p50);
  stats = alloc.GetStats();
  EXPECT_EQ(stats.num_device_alloc, 3);
  EXPECT_EQ(stats.oversize_segments.current, 2);
  EXPECT_EQ(stats.oversize_allocations.current, 0);
  this->FreeOk(p30);
}

// torch.cuda.memory._set_allocator_settings() while the program runs
// (SetRuntimeOptions): the rounding and the oversize limit apply to the
// requests after the call, blocks made before keep their sizes, and a block
// or segment counted oversize when made is uncounted when it goes, whatever
// the limit is by then (the counters end at 0, not below or above); the
// max_split_size statistic stays the one it was made with.
TYPED_TEST_P(AllocatorBehaviourTest, RuntimeSettingsApplyToRequestsFromThenOn) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  const std::size_t request = 5 * kMiB + 1;
  auto block_size = [&](DevicePtr p) -> std::size_t {
    const Snapshot snap = alloc.TakeSnapshot();
    const BlockInfo* block = BlockAt(snap, p);
    return block == nullptr ? 0 : block->size;
  };
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr before, alloc.Allocate(request, s));
  EXPECT_EQ(block_size(before), request + 511 - (request + 511) % 512);
  absl::StatusOr<Options> quarter =
      ParseOptions("roundup_power2_divisions:4,max_split_size_mb:40", this->env_.BaseOptions());
  ASSERT_TRUE(quarter.ok()) << quarter.status();
  alloc.SetRuntimeOptions(*quarter);
  EXPECT_EQ(alloc.options().max_split_size, 40 * kMiB);
  // The statistic keeps the value the allocator was made with, as PyTorch's
  // (set once, at construction): none here.
  EXPECT_EQ(alloc.GetStats().max_split_size, -1);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr after, alloc.Allocate(request, s));
  EXPECT_EQ(block_size(after), 6 * kMiB) << "[4, 8) MiB in quarter steps";
  EXPECT_EQ(block_size(before), request + 511 - (request + 511) % 512) << "kept its size";
  // 80 MiB is oversize now; then the limit goes (the defaults again) before
  // it is freed: the counters still come back to 0.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr big, alloc.Allocate(80 * kMiB, s));
  EXPECT_EQ(alloc.GetStats().oversize_allocations.current, 1);
  const std::int64_t oversize_segments = alloc.GetStats().oversize_segments.current;
  EXPECT_EQ(oversize_segments, TypeParam::kGrowable ? 0 : 1);
  alloc.SetRuntimeOptions(this->env_.BaseOptions());
  EXPECT_EQ(alloc.GetStats().max_split_size, -1);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr plain, alloc.Allocate(request, s));
  EXPECT_EQ(block_size(plain), request + 511 - (request + 511) % 512);
  for (DevicePtr p : {before, after, big, plain}) this->FreeOk(p);
  ASSERT_TRUE(alloc.EmptyCache().ok());
  const MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.oversize_allocations.current, 0);
  EXPECT_EQ(stats.oversize_segments.current, 0);
  EXPECT_EQ(stats.allocated_bytes[kStatAll].current, 0);
  EXPECT_TRUE(IsValid(alloc));
}

// ---------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------

// A block freed on its stream is reused on that stream and never handed to
// another one (whose work is not ordered after the free): PyTorch's
// contract, and ccalloc's with cross_stream_reuse off (on, growable
// segments lend such memory with a device-side wait: CrossStreamReuseTest).
TYPED_TEST_P(AllocatorBehaviourTest, FreedBlockIsReusedOnItsStreamOnly) {
  for (std::size_t size : {std::size_t{4} << 20, std::size_t{1000}}) {
    SCOPED_TRACE(absl::StrCat("size ", size));
    Options options = this->env_.BaseOptions();
    options.cross_stream_reuse = Options::CrossStreamReuse::kNever;
    DeviceAllocator& alloc = this->Make(options);
    const StreamId a = this->env_.stream(0);
    const StreamId b = this->env_.stream(1);
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, a));
    this->FreeOk(p);
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr again, alloc.Allocate(size, a));
    EXPECT_EQ(again, p);
    this->FreeOk(again);
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr other, alloc.Allocate(size, b));
    EXPECT_NE(other, p);
    Snapshot snap = alloc.TakeSnapshot();
    const SegmentInfo* seg_p = SegmentOf(snap, p);
    const SegmentInfo* seg_other = SegmentOf(snap, other);
    ASSERT_NE(seg_p, nullptr);
    ASSERT_NE(seg_other, nullptr);
    EXPECT_NE(seg_p, seg_other);
    EXPECT_EQ(seg_p->stream, a);
    EXPECT_EQ(seg_other->stream, b);
    this->FreeOk(other);
  }
}

// RecordStream(B) on a block of stream A: after Free it waits for B's work,
// on A as well as on B, and is reused once B has finished.
TYPED_TEST_P(AllocatorBehaviourTest, RecordStreamDefersReuseUntilStreamCompletes) {
  DeviceAllocator& alloc = this->Make();
  const StreamId a = this->env_.stream(0);
  const StreamId b = this->env_.stream(1);
  const std::size_t size = 4 * kMiB;
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, a));
  ASSERT_TRUE(alloc.RecordStream(p, b).ok());
  this->FreeOk(p);
  MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.allocation[kStatAll].current, 0);
  EXPECT_EQ(stats.allocated_bytes[kStatAll].current, 0);

  std::vector<DevicePtr> held;
  if (this->env_.CanHoldEvents()) {
    // The block is still active (pending) while B's work may use it.
    EXPECT_EQ(stats.active[kStatAll].current, 1);
    EXPECT_EQ(stats.active_bytes[kStatAll].current, static_cast<std::int64_t>(size));
    Snapshot snap = alloc.TakeSnapshot();
    const BlockInfo* block = BlockAt(snap, p);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->status, BlockStatus::kActivePendingFree);
    // Freeing it again is a double free even while pending.
    absl::Status twice = alloc.Free(p);
    EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument) << twice;

    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr on_a, alloc.Allocate(size, a));
    EXPECT_NE(on_a, p) << "reused on A before B finished";
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr on_b, alloc.Allocate(size, b));
    EXPECT_NE(on_b, p) << "reused on B before B finished";
    held = {on_a, on_b};
  }
  this->env_.CompleteStream(b);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr reused, alloc.Allocate(size, a));
  EXPECT_EQ(reused, p) << "not reused after B finished";
  held.push_back(reused);
  for (DevicePtr h : held) this->FreeOk(h);
  EXPECT_EQ(alloc.GetStats().active[kStatAll].current, 0);

  // Recording the allocating stream itself adds no wait.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr q, alloc.Allocate(size, a));
  ASSERT_TRUE(alloc.RecordStream(q, a).ok());
  this->FreeOk(q);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr q2, alloc.Allocate(size, a));
  EXPECT_EQ(q2, q);
  this->FreeOk(q2);
}

// ---------------------------------------------------------------------------
// The out-of-memory ladder
// ---------------------------------------------------------------------------

// Step 1: the device refuses; wholly free cached memory (here on another
// stream, so the allocator cannot just reuse it) is released and the retry
// succeeds.
TYPED_TEST_P(AllocatorBehaviourTest, OomLadderReleasesCachedMemoryAndRetries) {
  CCALLOC_SKIP_UNLESS_SIM("a device capacity of 20 MiB");
  // Growable segments near the end of their memory (12 of 20 MiB held and
  // 12 more wanted) move the cached pages over without asking the device,
  // whatever the marks say (GrowableSegmentsTest covers that path, and
  // OomLadderRetriesAfterInjectedFailure their ladder).
  if (this->env_.growable()) GTEST_SKIP() << "growable segments move the pages instead";
  Options options = this->env_.BaseOptions();
  options.release_slack = 1.0;
  options.cross_stream_reuse = Options::CrossStreamReuse::kNever;
  DeviceAllocator& alloc = this->Make(options, 20 * kMiB);
  const StreamId a = this->env_.stream(0);
  const StreamId b = this->env_.stream(1);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr cached, alloc.Allocate(12 * kMiB, b));
  this->FreeOk(cached);
  EXPECT_EQ(this->Reserved(), static_cast<std::int64_t>(12 * kMiB));

  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(12 * kMiB, a));
  MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.num_alloc_retries, 1);
  EXPECT_EQ(stats.num_sync_all_streams, 0);
  EXPECT_EQ(stats.num_ooms, 0);
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(12 * kMiB));
  EXPECT_EQ(this->env_.sim()->counts().bytes_in_use, 12 * kMiB);
  Snapshot snap = alloc.TakeSnapshot();
  ASSERT_NE(SegmentOf(snap, p), nullptr);
  EXPECT_EQ(SegmentOf(snap, p)->stream, a);
  this->FreeOk(p);
}

// Step 1 again, driven by an injected failure of the first device call.
TYPED_TEST_P(AllocatorBehaviourTest, OomLadderRetriesAfterInjectedFailure) {
  CCALLOC_SKIP_UNLESS_SIM("failure injection");
  Options options = this->env_.BaseOptions();
  options.cross_stream_reuse = Options::CrossStreamReuse::kNever;  // B's cached memory is not lent to A
  DeviceAllocator& alloc = this->Make(options);
  SimBackend* sim = this->env_.sim();
  const StreamId a = this->env_.stream(0);
  const StreamId b = this->env_.stream(1);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr cached, alloc.Allocate(4 * kMiB, b));
  this->FreeOk(cached);
  sim->FailNth(this->env_.growable() ? SimOp::kCreatePhysical : SimOp::kAllocate, 1);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(4 * kMiB, a));
  EXPECT_EQ(sim->counts().failures_injected, 1);
  MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.num_alloc_retries, 1);
  EXPECT_EQ(stats.num_sync_all_streams, 0);
  EXPECT_EQ(stats.num_ooms, 0);
  // What was cached on B went back to make room.
  Snapshot snap = alloc.TakeSnapshot();
  for (const SegmentInfo& seg : snap.segments) {
    EXPECT_NE(seg.stream, b) << "B's cached segment was not released";
  }
  EXPECT_EQ(this->env_.BytesInUse(), stats.reserved_bytes[kStatAll].current);
  this->FreeOk(p);
}

// Step 2: nothing cached is wholly free, but a block of stream B waits for
// stream A's events; the free-all step synchronizes, reclaims it, gives its
// segment back, and the request on A succeeds.
TYPED_TEST_P(AllocatorBehaviourTest, OomLadderSynchronizesAndFreesPendingBlocks) {
  CCALLOC_SKIP_UNLESS_SIM("a device capacity of 20 MiB and events that stay incomplete");
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), 20 * kMiB);
  SimBackend* sim = this->env_.sim();
  const StreamId a = this->env_.stream(0);
  const StreamId b = this->env_.stream(1);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr pending, alloc.Allocate(12 * kMiB, b));
  ASSERT_TRUE(alloc.RecordStream(pending, a).ok());
  this->FreeOk(pending);
  ASSERT_EQ(BlockAt(alloc.TakeSnapshot(), pending)->status, BlockStatus::kActivePendingFree);
  const std::int64_t syncs_before = sim->counts().synchronize_calls;

  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(12 * kMiB, a));
  MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.num_sync_all_streams, 1);
  EXPECT_GE(stats.num_alloc_retries, 1);
  if (!this->env_.growable()) {
    EXPECT_EQ(stats.num_alloc_retries, 1) << "nothing wholly free to release before";
  }
  EXPECT_EQ(stats.num_ooms, 0);
  EXPECT_GT(sim->counts().synchronize_calls, syncs_before);
  EXPECT_EQ(stats.active[kStatAll].current, 1) << "the pending block was not reclaimed";
  EXPECT_EQ(stats.allocated_bytes[kStatAll].current, static_cast<std::int64_t>(12 * kMiB));
  Snapshot snap = alloc.TakeSnapshot();
  for (const SegmentInfo& seg : snap.segments) {
    for (const BlockInfo& block : seg.blocks) {
      EXPECT_NE(block.status, BlockStatus::kActivePendingFree);
    }
  }
  ASSERT_NE(SegmentOf(snap, p), nullptr);
  EXPECT_EQ(SegmentOf(snap, p)->stream, a);
  EXPECT_EQ(this->env_.BytesInUse(), stats.reserved_bytes[kStatAll].current);
  EXPECT_LE(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(20 * kMiB));
  this->FreeOk(p);
}

// Step 3: nothing helps. The error is ResourceExhausted with a report, and
// the live blocks are as they were.
TYPED_TEST_P(AllocatorBehaviourTest, OomLadderFailsWithReportAndKeepsLiveBlocks) {
  CCALLOC_SKIP_UNLESS_SIM("a device capacity that can be lowered");
  DeviceAllocator& alloc = this->Make();
  SimBackend* sim = this->env_.sim();
  const StreamId a = this->env_.stream(0);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr big, alloc.Allocate(12 * kMiB, a));
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr small, alloc.Allocate(1000, a));
  sim->SetCapacity(sim->counts().bytes_in_use + 6 * kMiB);
  const MemoryStats before = alloc.GetStats();

  const std::size_t request = 12 * kMiB + 100;
  absl::StatusOr<DevicePtr> failed = alloc.Allocate(request, a);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kResourceExhausted) << failed.status();

  const MemoryStats after = alloc.GetStats();
  EXPECT_EQ(after.num_ooms, before.num_ooms + 1);
  EXPECT_EQ(after.num_sync_all_streams, before.num_sync_all_streams + 1);
  EXPECT_GE(after.num_alloc_retries, before.num_alloc_retries + 1);
  // The report names each figure next to its value (case aside).
  const std::string message = absl::AsciiStrToLower(failed.status().message());
  auto figure = [](absl::string_view name, std::uint64_t bytes) {
    return absl::AsciiStrToLower(absl::StrCat(name, " ", FormatBytes(bytes)));
  };
  EXPECT_THAT(message, ::testing::HasSubstr(absl::StrCat(request, " bytes")));
  EXPECT_THAT(message,
              ::testing::HasSubstr(figure("reserved", after.reserved_bytes[kStatAll].current)));
  EXPECT_THAT(message,
              ::testing::HasSubstr(figure("allocated", after.allocated_bytes[kStatAll].current)));
  EXPECT_THAT(message, ::testing::HasSubstr(
                           figure("largest free block", alloc.Fragmentation().largest_free_block)));
  EXPECT_THAT(message, ::testing::HasSubstr("fragmentation"));

  // Live blocks untouched.
  for (auto member :
       {&MemoryStats::allocation, &MemoryStats::allocated_bytes, &MemoryStats::requested_bytes,
        &MemoryStats::active, &MemoryStats::active_bytes}) {
    for (int p = 0; p < 3; ++p) {
      EXPECT_EQ((after.*member)[p].current, (before.*member)[p].current);
    }
  }
  Snapshot snap = alloc.TakeSnapshot();
  for (DevicePtr p : {big, small}) {
    const BlockInfo* block = BlockAt(snap, p);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->status, BlockStatus::kActiveAllocated);
  }
  EXPECT_TRUE(IsValid(alloc));
  EXPECT_EQ(this->env_.BytesInUse(), after.reserved_bytes[kStatAll].current);
  this->FreeOk(big);
  this->FreeOk(small);
  EXPECT_EQ(alloc.GetStats().allocation[kStatAll].current, 0);
}

// A request far beyond the device is an out-of-memory error, not a crash and
// not a bad argument.
TYPED_TEST_P(AllocatorBehaviourTest, RequestLargerThanDeviceIsResourceExhausted) {
  if (!this->env_.is_sim() && this->env_.growable()) {
    GTEST_SKIP() << "would map the whole GPU page by page before failing";
  }
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{1} << 30);
  std::size_t request = std::size_t{4} << 30;
  if (!this->env_.is_sim()) {
    absl::StatusOr<DeviceMemoryInfo> info = this->env_.backend()->MemoryInfo();
    ASSERT_TRUE(info.ok()) << info.status();
    request = 2 * info->total_bytes;
  }
  absl::StatusOr<DevicePtr> p = alloc.Allocate(request, this->env_.stream(0));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted) << p.status();
  EXPECT_EQ(alloc.GetStats().num_ooms, 1);
  EXPECT_EQ(alloc.GetStats().allocation[kStatAll].current, 0);
}

// ---------------------------------------------------------------------------
// Memory limit
// ---------------------------------------------------------------------------

// A limit caps reserved memory even though the device has room.
TYPED_TEST_P(AllocatorBehaviourTest, MemoryLimitCapsGrowth) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  ASSERT_TRUE(alloc.SetMemoryLimit(40 * kMiB).ok());
  EXPECT_EQ(alloc.memory_limit(), 40 * kMiB);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(30 * kMiB, s));
  absl::StatusOr<DevicePtr> over = alloc.Allocate(30 * kMiB, s);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted) << over.status();
  EXPECT_THAT(over.status().message(), ::testing::HasSubstr("memory limit"));
  EXPECT_LE(this->Reserved(), static_cast<std::int64_t>(40 * kMiB));
  EXPECT_LE(this->env_.BytesInUse(), static_cast<std::int64_t>(40 * kMiB));
  EXPECT_EQ(alloc.GetStats().num_ooms, 1);

  // Freed memory within the limit serves the next request.
  this->FreeOk(p);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr again, alloc.Allocate(30 * kMiB, s));
  EXPECT_LE(this->Reserved(), static_cast<std::int64_t>(40 * kMiB));
  // Lifting the limit lets it grow again.
  ASSERT_TRUE(alloc.SetMemoryLimit(0).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr more, alloc.Allocate(30 * kMiB, s));
  EXPECT_GT(this->Reserved(), static_cast<std::int64_t>(40 * kMiB));
  this->FreeOk(again);
  this->FreeOk(more);
}

// memory_limit in the configuration string sets the same cap.
TYPED_TEST_P(AllocatorBehaviourTest, MemoryLimitFromOptions) {
  absl::StatusOr<Options> options = ParseOptions("memory_limit:40MiB", this->env_.BaseOptions());
  ASSERT_TRUE(options.ok()) << options.status();
  DeviceAllocator& alloc = this->Make(*options);
  EXPECT_EQ(alloc.memory_limit(), 40 * kMiB);
  const StreamId s = this->env_.stream(0);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(30 * kMiB, s));
  absl::StatusOr<DevicePtr> over = alloc.Allocate(30 * kMiB, s);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted) << over.status();
  EXPECT_LE(this->Reserved(), static_cast<std::int64_t>(40 * kMiB));
  this->FreeOk(p);
}

// A fraction of the device's total memory, set through the options or later.
TYPED_TEST_P(AllocatorBehaviourTest, MemoryFractionCapsGrowth) {
  DeviceAllocator& probe = this->Make(this->env_.BaseOptions(), 256 * kMiB);
  absl::StatusOr<DeviceMemoryInfo> info = probe.backend().MemoryInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  const double total = static_cast<double>(info->total_bytes);
  const double fraction = static_cast<double>(64 * kMiB) / total;
  const auto expected = static_cast<std::size_t>(fraction * total);

  Options options = this->env_.BaseOptions();
  options.per_process_memory_fraction = fraction;
  DeviceAllocator& alloc = this->Make(options, 256 * kMiB);
  EXPECT_EQ(alloc.memory_limit(), expected);

  ASSERT_TRUE(alloc.SetMemoryFraction(2 * fraction).ok());
  EXPECT_EQ(alloc.memory_limit(), static_cast<std::size_t>(2 * fraction * total));
  ASSERT_TRUE(alloc.SetMemoryFraction(fraction).ok());
  for (double bad : {-0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    absl::Status s = alloc.SetMemoryFraction(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(alloc.memory_limit(), expected) << "a rejected fraction changed the limit";
  // 0, as PyTorch takes it: a cap that lets nothing be allocated, and the
  // fraction read back as given.
  ASSERT_TRUE(alloc.SetMemoryFraction(0.0).ok());
  EXPECT_EQ(alloc.MemoryFraction(), 0.0);
  EXPECT_EQ(alloc.Allocate(4096, this->env_.stream(0)).status().code(),
            absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(alloc.SetMemoryFraction(fraction).ok());
  EXPECT_NEAR(alloc.MemoryFraction(), fraction, 1.0 / total);

  const StreamId s = this->env_.stream(0);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(40 * kMiB, s));
  absl::StatusOr<DevicePtr> over = alloc.Allocate(40 * kMiB, s);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted) << over.status();
  EXPECT_LE(this->Reserved(), static_cast<std::int64_t>(expected));
  this->FreeOk(p);
}

// ---------------------------------------------------------------------------
// EmptyCache
// ---------------------------------------------------------------------------

// EmptyCache gives back every wholly free segment (growable: every page not
// under a live block) and keeps what live blocks need; blocks waiting on other
// streams are waited for and given back too.
TYPED_TEST_P(AllocatorBehaviourTest, EmptyCacheReturnsFreeMemoryOnly) {
  DeviceAllocator& alloc = this->Make();
  const StreamId a = this->env_.stream(0);
  const StreamId b = this->env_.stream(1);
  std::vector<std::pair<DevicePtr, std::size_t>> blocks;
  for (std::size_t size : {512 * kKiB, 512 * kKiB, 512 * kKiB, 5 * kMiB, 30 * kMiB}) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, a));
    blocks.emplace_back(p, size);
  }
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr on_b, alloc.Allocate(30 * kMiB, b));
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr pending, alloc.Allocate(8 * kMiB, b));
  ASSERT_TRUE(alloc.RecordStream(pending, a).ok());
  // Keep small blocks 0 and 2 and the 30 MiB block on A.
  this->FreeOk(blocks[1].first);
  this->FreeOk(blocks[3].first);
  this->FreeOk(on_b);
  this->FreeOk(pending);
  const std::vector<std::pair<DevicePtr, std::size_t>> live = {blocks[0], blocks[2], blocks[4]};
  const std::int64_t reserved_before = this->Reserved();

  ASSERT_TRUE(alloc.EmptyCache().ok());
  std::int64_t expected = 0;
  if (this->env_.growable()) {
    expected = static_cast<std::int64_t>(PagesTouched(live, this->PageSize()) * this->PageSize());
  } else {
    expected = static_cast<std::int64_t>(2 * kMiB + 30 * kMiB);  // small segment + 30 MiB one
  }
  MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, expected);
  EXPECT_LT(expected, reserved_before);
  EXPECT_EQ(stats.active[kStatAll].current, 3) << "the pending block was not reclaimed";
  EXPECT_EQ(this->env_.BytesInUse(), expected);
  if (SimBackend* sim = this->env_.sim(); sim != nullptr) {
    EXPECT_EQ(static_cast<std::int64_t>(sim->counts().bytes_in_use), expected);
  }
  Snapshot snap = alloc.TakeSnapshot();
  for (const auto& [p, size] : live) {
    const BlockInfo* block = BlockAt(snap, p);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->status, BlockStatus::kActiveAllocated);
  }
  for (const auto& [p, size] : live) this->FreeOk(p);
  ASSERT_TRUE(alloc.EmptyCache().ok());
  stats = alloc.GetStats();
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, 0);
  EXPECT_EQ(stats.segment[kStatAll].current, 0);
  EXPECT_EQ(this->env_.BytesInUse(), 0);
  EXPECT_EQ(stats.num_device_alloc, stats.num_device_free);
}

// ---------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------

// A foreign pointer, an interior pointer and a double free are
// InvalidArgument and change nothing at all.
TYPED_TEST_P(AllocatorBehaviourTest, BadFreesAreRejectedAndChangeNothing) {
  DeviceAllocator& alloc = this->Make();
  const StreamId a = this->env_.stream(0);
  const StreamId b = this->env_.stream(1);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr live, alloc.Allocate(4 * kMiB, a));
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr small, alloc.Allocate(1000, a));
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr freed, alloc.Allocate(4 * kMiB, a));
  this->FreeOk(freed);
  const std::string state = StateFingerprint(alloc);
  const Snapshot snap = alloc.TakeSnapshot();
  const SegmentInfo* seg = SegmentOf(snap, live);
  ASSERT_NE(seg, nullptr);

  struct Bad {
    const char* what;
    DevicePtr ptr;
    const char* says;
  };
  const Bad bad[] = {
      {"foreign pointer", DevicePtr{0xdead0000}, "not allocated by this allocator"},
      {"past every segment", seg->address + seg->total_size + (std::size_t{1} << 40),
       "not allocated by this allocator"},
      {"interior pointer", live + 512, "interior"},
      {"interior of a small block", small + 8, "interior"},
      {"double free", freed, "double free"},
      {"inside free cached memory", freed + 4096, "double free"},
  };
  for (const Bad& b_case : bad) {
    SCOPED_TRACE(b_case.what);
    absl::Status s = alloc.Free(b_case.ptr);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), ::testing::HasSubstr(b_case.says));
    absl::Status r = alloc.RecordStream(b_case.ptr, b);
    EXPECT_EQ(r.code(), absl::StatusCode::kInvalidArgument) << r;
    EXPECT_EQ(StateFingerprint(alloc), state);
    EXPECT_TRUE(IsValid(alloc));
  }

  // Null and zero: accepted, and nothing happens.
  EXPECT_TRUE(alloc.Free(0).ok());
  EXPECT_TRUE(alloc.RecordStream(0, b).ok());
  absl::StatusOr<DevicePtr> zero = alloc.Allocate(0, a);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(*zero, 0u);
  EXPECT_EQ(StateFingerprint(alloc), state);

  // Sizes that cannot be represented.
  for (std::size_t huge : {std::numeric_limits<std::size_t>::max(),
                           std::numeric_limits<std::size_t>::max() - 511, kMaxRequest + 1}) {
    absl::StatusOr<DevicePtr> p = alloc.Allocate(huge, a);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
    EXPECT_EQ(StateFingerprint(alloc), state);
  }

  // The live blocks still free normally; then a second free is rejected.
  this->FreeOk(live);
  this->FreeOk(small);
  absl::Status again = alloc.Free(live);
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument) << again;
  EXPECT_EQ(alloc.GetStats().allocation[kStatAll].current, 0);
}

// ---------------------------------------------------------------------------
// Random operations against the reference model
// ---------------------------------------------------------------------------

TYPED_TEST_P(AllocatorBehaviourTest, RandomOperationsMatchReferenceModel) {
  // 4 GiB is over three times the peak this seed reserves (about 1.2 GiB
  // classic, 0.7 GiB growable). A growable segment spans the device's address
  // space and Validate() walks its page table, so a small simulated device
  // keeps the per-step checks of debug builds affordable.
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{4} << 30);
  RandomOpsConfig config;
  config.seed = 20240611;
  // A real device spends far longer per call; the simulated one runs the
  // full count.
  config.operations = this->env_.is_sim() ? 100000 : 20000;
  config.streams = {this->env_.stream(0), this->env_.stream(1)};
#if CCALLOC_DEBUG_CHECKS
  config.validate_every = 1;
  config.snapshot_every = 100;
#else
  config.validate_every = 1000;
  config.snapshot_every = 1000;
#endif
  ReferenceModel model;
  RandomOpsResult result;
  ASSERT_TRUE(RunRandomOps(alloc, this->env_, config, model, &result));
  // The stream did what it claims to exercise.
  EXPECT_GT(result.allocations, config.operations / 4);
  EXPECT_GT(result.frees, config.operations / 4);
  EXPECT_GT(result.record_streams, 0);
  EXPECT_GT(result.completes, 0);
  EXPECT_GT(result.empty_caches, 0);
  const MemoryStats mid = alloc.GetStats();
  EXPECT_GT(mid.allocation[kSmall].peak, 0);
  EXPECT_GT(mid.allocation[kLarge].peak, 0);
  EXPECT_GT(mid.num_device_free, 0);

  while (!model.empty()) {
    const DevicePtr p = model.live().begin()->first;
    ASSERT_TRUE(alloc.Free(p).ok());
    model.Remove(p);
  }
  this->env_.CompleteAll();
  ASSERT_TRUE(alloc.EmptyCache().ok());
  const MemoryStats end = alloc.GetStats();
  EXPECT_EQ(end.reserved_bytes[kStatAll].current, 0);
  EXPECT_EQ(end.segment[kStatAll].current, 0);
  EXPECT_EQ(end.active[kStatAll].current, 0);
  EXPECT_EQ(end.allocated_bytes[kStatAll].current, 0);
  EXPECT_EQ(end.requested_bytes[kStatAll].current, 0);
  EXPECT_EQ(this->env_.BytesInUse(), 0);
  EXPECT_TRUE(IsValid(alloc));
  this->alloc_.reset();
  EXPECT_TRUE(this->env_.NothingOutstanding());
}

REGISTER_TYPED_TEST_SUITE_P(
    AllocatorBehaviourTest, SplitsAndCoalescesNeighbours, ChoosesPoolBySize, SegmentSizes,
    RoundsTo512Bytes, RoundupPower2Divisions, MaxSplitSizeKeepsOversizeBlocksWhole,
                            RuntimeSettingsApplyToRequestsFromThenOn,
    FreedBlockIsReusedOnItsStreamOnly, RecordStreamDefersReuseUntilStreamCompletes,
    OomLadderReleasesCachedMemoryAndRetries, OomLadderRetriesAfterInjectedFailure,
    OomLadderSynchronizesAndFreesPendingBlocks, OomLadderFailsWithReportAndKeepsLiveBlocks,
    RequestLargerThanDeviceIsResourceExhausted, MemoryLimitCapsGrowth, MemoryLimitFromOptions,
    MemoryFractionCapsGrowth, EmptyCacheReturnsFreeMemoryOnly, BadFreesAreRejectedAndChangeNothing,
    RandomOperationsMatchReferenceModel);

}  // namespace ccalloc::test

#endif  // CCALLOC_TESTS_SUPPORT_ALLOCATOR_BEHAVIOUR_SUITE_H_
