// growable_segments_test.cc — what only growable (expandable) segments do, on
// the simulated device: blocks always coalesce, reserved memory is the mapped
// pages, a failed grow leaves nothing half mapped, and free pages move to
// where they are needed instead of new memory being taken.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/segments/growable_segments.h"
#include "allocator/backends/sim_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

constexpr std::size_t kPage = std::size_t{2} << 20;

class GrowableSegmentsTest : public AllocatorTest<SimGrowable> {
 protected:
  // What the tests of moves and unmaps below were written against: the
  // tight marks (those the defaults tighten to near the end of memory; set,
  // they hold everywhere), 8 MiB chunks, and a move's old mapping unmapped
  // once its work is done (keep_old_mappings:False). The KeptMappings tests
  // cover the default of keeping it; every other suite runs the defaults.
  Options Mechanics() const {
    Options options = env_.BaseOptions();
    options.release_slack = 0.005;
    options.release_slack_max = 0.008;
    options.release_slack_hard = 0.0095;
    options.max_map_chunk = 8 * kMiB;
    options.keep_old_mappings = false;
    options.cross_stream_reuse = Options::CrossStreamReuse::kNever;  // moves, not loans
    return options;
  }
  // Mechanics with no slack and no memory held once taken again freely
  // (hold_reserved): every growth past the peak allocated moves or trims.
  Options NoSlackMechanics() const {
    Options options = Mechanics();
    options.release_slack = options.release_slack_max = options.release_slack_hard = 0;
    options.hold_reserved = false;
    return options;
  }
  // Two holes (16 and 32 MiB, each kept apart by a one-page block) whose
  // chunks then move under a 40 MiB block freed at once: the smallest hole
  // that fits a later request lies on pages moved away, while the large
  // block's memory stays mapped. The mapped_fit tests' setup.
  struct MovedHoles {
    DevicePtr a, k1, k2, big;
  };
  MovedHoles MoveTwoHolesUnderALargeBlock() {
    MovedHoles h;
    h.a = AllocateOk(16 * kMiB, 0);
    h.k1 = AllocateOk(kPage, 0);
    const DevicePtr b = AllocateOk(32 * kMiB, 0);
    h.k2 = AllocateOk(kPage, 0);
    FreeOk(h.a);
    FreeOk(b);
    env_.sim()->CompleteAll();
    // Too large for either hole: their chunks move under it.
    h.big = AllocateOk(40 * kMiB, 0);
    FreeOk(h.big);
    env_.sim()->CompleteAll();
    return h;
  }
  // The mapped_fit tests' request after MoveTwoHolesUnderALargeBlock: 12 MiB
  // on stream 0, with the driver calls it made (maps and device
  // allocations) and how reserved moved; the cache is checked after.
  struct Placed {
    DevicePtr ptr;
    std::int64_t calls;
    std::int64_t reserved_change;
  };
  Placed PlaceTwelveMiB() {
    const MemoryStats before = alloc_->GetStats();
    const DevicePtr c = AllocateOk(12 * kMiB, 0);
    const MemoryStats after = alloc_->GetStats();
    EXPECT_TRUE(IsValid(*alloc_));
    return {c,
            after.num_maps - before.num_maps + after.num_device_alloc - before.num_device_alloc,
            after.reserved_bytes[kStatAll].current - before.reserved_bytes[kStatAll].current};
  }
  DevicePtr AllocateOk(std::size_t size, StreamId stream = 0) {
    absl::StatusOr<DevicePtr> p = alloc_->Allocate(size, stream);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  }
  void FreeOk(DevicePtr p) {
    absl::Status s = alloc_->Free(p);
    EXPECT_TRUE(s.ok()) << s;
  }
  std::int64_t Reserved() const { return alloc_->GetStats().reserved_bytes[kStatAll].current; }
  // What the device holds once the unmap worker's calls are done (its
  // result, a failure injected there included, is the test's to check).
  SimBackend::Counts Device() {
    if (alloc_ != nullptr) (void)alloc_->FinishBackgroundWork();
    return env_.sim()->counts();
  }
  // Frees `ptrs` and empties the cache: nothing is left reserved or held
  // on the device, and the allocator is consistent.
  void FreeAllAndExpectNothingHeld(std::initializer_list<DevicePtr> ptrs) {
    for (DevicePtr p : ptrs) FreeOk(p);
    EXPECT_TRUE(alloc_->EmptyCache().ok());
    EXPECT_EQ(Reserved(), 0);
    EXPECT_EQ(Device().bytes_in_use, 0u);
    EXPECT_TRUE(IsValid(*alloc_));
  }
  // Frees `ptrs`, lets the queued work finish, empties the cache and ends
  // the allocator: the device holds nothing and nothing is outstanding.
  void FreeEmptyAndEnd(const std::vector<DevicePtr>& ptrs) {
    for (DevicePtr p : ptrs) FreeOk(p);
    env_.CompleteAll();
    ASSERT_TRUE(alloc_->EmptyCache().ok());
    EXPECT_EQ(Device().bytes_in_use, 0u);
    alloc_.reset();
    EXPECT_TRUE(env_.NothingOutstanding());
  }
  // Once the worker's calls are done, the device holds what reserved says.
  void ExpectDeviceHoldsReserved() {
    const std::int64_t device = static_cast<std::int64_t>(Device().bytes_in_use);
    EXPECT_EQ(device, Reserved());
  }
  // The bytes of [begin, begin + bytes) that are mapped, from a snapshot of
  // the range that holds `anchor`.
  std::size_t MappedBytes(DevicePtr anchor, DevicePtr begin, std::size_t bytes) {
    const Snapshot snap = alloc_->TakeSnapshot();
    const SegmentInfo* seg = SegmentOf(snap, anchor);
    EXPECT_NE(seg, nullptr);
    if (seg == nullptr) return 0;
    std::size_t mapped = 0;
    for (const std::pair<DevicePtr, DevicePtr>& range : seg->mapped_ranges) {
      const DevicePtr lo = std::max<DevicePtr>(range.first, begin);
      const DevicePtr hi = std::min<DevicePtr>(range.second, begin + bytes);
      mapped += hi > lo ? hi - lo : 0;
    }
    return mapped;
  }
  // Two holes on stream 0, each between live blocks: `older` (one 8 MiB
  // chunk) freed first, then `newer` (two, the larger hole).
  struct TwoHoles {
    DevicePtr older, keep, newer, keep2;
  };
  TwoHoles FreeTwoHoles() {
    TwoHoles h{};
    h.older = AllocateOk(8 * kMiB, 0);
    h.keep = AllocateOk(2 * kMiB, 0);
    h.newer = AllocateOk(16 * kMiB, 0);
    h.keep2 = AllocateOk(2 * kMiB, 0);
    FreeOk(h.older);
    FreeOk(h.newer);
    return h;
  }
  // The chunk taken was the older hole's; the newer hole kept its memory.
  void ExpectTheOlderHoleGave(const TwoHoles& h) {
    EXPECT_EQ(MappedBytes(h.keep, h.older, 8 * kMiB), 0u) << "the memory freed first stayed mapped";
    EXPECT_EQ(MappedBytes(h.keep, h.newer, 16 * kMiB), 16 * kMiB)
        << "the memory freed last was taken";
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
  }
  // An allocator whose trims start at `low` and may wait beyond `high`
  // (release_slack, release_slack_max).
  void MakeWithSlack(double low, double high) {
    Options options = Mechanics();
    options.release_slack = low;
    options.release_slack_max = options.release_slack_hard = high;
    Make(options);
  }
  // A growth on stream 0 that must move memory freed moments ago on the same
  // stream (with no slack): 24 MiB freed before an 8 MiB block that stays,
  // then 40 MiB, which does not fit the hole. Returns {kept, grown}.
  std::pair<DevicePtr, DevicePtr> GrowOverARecentFree() {
    const DevicePtr a = AllocateOk(24 * kMiB, 0);
    const DevicePtr keep = AllocateOk(8 * kMiB, 0);
    FreeOk(a);
    return {keep, AllocateOk(40 * kMiB, 0)};
  }
};

// Blocks are carved back to back with no remainder kept whole, and any order
// of frees merges them into one free block again.
TEST_F(GrowableSegmentsTest, NeighboursAlwaysCoalesce) {
  Make(Mechanics());
  std::mt19937_64 rng(7);
  LogUniformSizes sizes(kSmallSize + 1, 24 * kMiB);
  std::vector<DevicePtr> blocks;
  DevicePtr expect_next = 0;
  for (int i = 0; i < 24; ++i) {
    const std::size_t size = sizes(rng);
    DevicePtr p = AllocateOk(size);
    ASSERT_NE(p, 0u);
    if (expect_next != 0) {
      EXPECT_EQ(p, expect_next) << "block " << i;
    }
    expect_next = p + RoundUpTo(size, kMinBlockSize);
    blocks.push_back(p);
  }
  ASSERT_EQ(alloc_->GetStats().segment[kStatAll].current, 1);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  for (DevicePtr p : blocks) {
    FreeOk(p);
    const Snapshot snap = alloc_->TakeSnapshot();
    ASSERT_EQ(snap.segments.size(), 1u);
    const std::vector<BlockInfo>& list = snap.segments[0].blocks;
    for (std::size_t i = 1; i < list.size(); ++i) {
      EXPECT_FALSE(list[i - 1].status == BlockStatus::kInactive &&
                   list[i].status == BlockStatus::kInactive)
          << "free neighbours at " << list[i - 1].address << " and " << list[i].address;
    }
  }
  const Snapshot snap = alloc_->TakeSnapshot();
  ASSERT_EQ(snap.segments[0].blocks.size(), 1u);
  EXPECT_EQ(snap.segments[0].blocks[0].size, snap.segments[0].total_size);
  EXPECT_TRUE(IsValid(*alloc_));
}

// Reserved is the mapped pages: a block that lands on an already mapped page
// maps nothing, and freeing keeps the pages (nothing returns on the hot path).
TEST_F(GrowableSegmentsTest, ReservedCountsMappedPages) {
  Make(Mechanics());
  const DevicePtr a = AllocateOk(3 * kMiB);  // pages 0-1
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(2 * kPage));
  const DevicePtr b = AllocateOk(1536 * kKiB);  // [3, 4.5) MiB: page 2
  EXPECT_EQ(b, a + 3 * kMiB);
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(3 * kPage));
  const DevicePtr c = AllocateOk(kSmallSize + 512);  // [4.5, 5.5) MiB: page 2 again
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(3 * kPage));
  MemoryStats stats = alloc_->GetStats();
  EXPECT_EQ(stats.num_maps, 3);
  EXPECT_EQ(stats.segment[kStatAll].current, 1);
  EXPECT_EQ(Device().live_mappings, 3);
  EXPECT_EQ(Device().live_physical, 3);
  EXPECT_EQ(Device().bytes_in_use, 3 * kPage);

  Snapshot snap = alloc_->TakeSnapshot();
  ASSERT_EQ(snap.segments.size(), 1u);
  const SegmentInfo& seg = snap.segments[0];
  EXPECT_TRUE(seg.expandable);
  EXPECT_EQ(seg.mapped_size, 3 * kPage);
  EXPECT_GT(seg.total_size, seg.mapped_size) << "the range reserves more than it maps";
  EXPECT_THAT(seg.mapped_ranges, ElementsAre(Pair(seg.address, seg.address + 3 * kPage)));

  FreeOk(a);
  FreeOk(b);
  FreeOk(c);
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(3 * kPage));
  EXPECT_EQ(alloc_->GetStats().num_unmaps, 0);
}

// The new chunks under a block lie side by side, and they are mapped as one
// stretch: one MapChunks call (one access call on a GPU) for all of them.
TEST_F(GrowableSegmentsTest, ABlocksNewChunksAreMappedAsOneStretch) {
  Make(Mechanics());
  const DevicePtr a = AllocateOk(3 * kMiB);  // pages 0-1
  const SimBackend::Counts before = Device();
  const std::int64_t maps_before = alloc_->GetStats().num_maps;
  // [3, 43) MiB: page 1 is mapped already, pages 2-21 are new (the whole
  // pages in chunks of max_map_chunk, then the partial last page alone).
  const DevicePtr b = AllocateOk(40 * kMiB);
  const SimBackend::Counts after = Device();
  const std::int64_t chunks = alloc_->GetStats().num_maps - maps_before;
  EXPECT_GE(chunks, 3);
  EXPECT_EQ(after.map_calls - before.map_calls, chunks);
  EXPECT_EQ(after.map_stretches - before.map_stretches, 1);
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(22 * kPage));
  ExpectDeviceHoldsReserved();
  FreeOk(a);
  FreeOk(b);
}

// Map fails on the third mapping of a multi-page block, once with one page
// per mapping and once with the default chunks: what was mapped before the
// failure is released by the ladder, the retry maps the whole block, and
// nothing leaks.
TEST_F(GrowableSegmentsTest, FailedMapMidGrowRecoversWithoutLeak) {
  struct Case {
    const char* name;
    std::size_t max_map_chunk;
    std::size_t size;
  };
  const Options defaults = Mechanics();
  for (const Case& c : {Case{"page by page", kPage, 10 * kMiB},
                        Case{"default chunks", defaults.max_map_chunk, 64 * kMiB}}) {
    SCOPED_TRACE(c.name);
    Options options = defaults;
    options.max_map_chunk = c.max_map_chunk;
    Make(options);
    SimBackend* sim = env_.sim();
    sim->FailNth(SimOp::kMap, 3);
    absl::StatusOr<DevicePtr> p = alloc_->Allocate(c.size, 0);
    ASSERT_TRUE(p.ok()) << p.status();
    const SimBackend::Counts counts = Device();
    EXPECT_EQ(counts.failures_injected, 1) << "the block needed fewer than 3 mappings";
    const MemoryStats stats = alloc_->GetStats();
    EXPECT_EQ(stats.num_alloc_retries, 1);
    EXPECT_EQ(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(c.size));
    // Every physical chunk is mapped: none was left dangling by the failure.
    EXPECT_EQ(counts.live_physical, counts.live_mappings);
    EXPECT_EQ(counts.live_mappings, stats.num_maps - stats.num_unmaps);
    EXPECT_EQ(counts.bytes_in_use, c.size);
    EXPECT_TRUE(IsValid(*alloc_));
    FreeOk(*p);
    alloc_.reset();
    EXPECT_TRUE(env_.NothingOutstanding());
  }
}

// Under random failures of CreatePhysical and Map an allocation either
// succeeds over fully mapped pages or fails with ResourceExhausted leaving no
// block behind; in both cases every page the backend holds is mapped and
// counted, and destroying the allocator returns everything.
TEST_F(GrowableSegmentsTest, RandomMapFailuresLeaveNoHalfMappedBlock) {
  int succeeded = 0;
  int failed = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Make(Mechanics());
    SimBackend* sim = env_.sim();
    const DevicePtr keep = AllocateOk(3 * kMiB);
    sim->FailRandomly(0.05, seed);
    absl::StatusOr<DevicePtr> p = alloc_->Allocate(20 * kMiB, 0);
    sim->FailRandomly(0.0, 0);
    if (p.ok()) {
      ++succeeded;
    } else {
      ++failed;
      EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted) << p.status();
    }
    ASSERT_TRUE(IsValid(*alloc_));
    const SimBackend::Counts counts = Device();
    const MemoryStats stats = alloc_->GetStats();
    EXPECT_EQ(stats.allocation[kStatAll].current, p.ok() ? 2 : 1);
    // Every physical chunk is mapped, every mapping counted, and what the
    // device holds is exactly what the allocator reports as reserved.
    EXPECT_EQ(counts.live_physical, counts.live_mappings);
    EXPECT_EQ(counts.live_mappings, stats.num_maps - stats.num_unmaps);
    EXPECT_EQ(static_cast<std::int64_t>(counts.bytes_in_use),
              stats.reserved_bytes[kStatAll].current);
    FreeOk(keep);
    if (p.ok()) FreeOk(*p);
    alloc_.reset();
    EXPECT_TRUE(env_.NothingOutstanding());
  }
  // The seeds cover both outcomes, so both paths above were checked.
  EXPECT_GT(succeeded, 0);
  EXPECT_GT(failed, 0);
}

// EmptyCache unmaps the pages under free holes and keeps those of live
// blocks; the snapshot shows the mapped ranges that remain.
TEST_F(GrowableSegmentsTest, EmptyCacheUnmapsFreePages) {
  Make(Mechanics());
  const DevicePtr a = AllocateOk(4 * kMiB);
  const DevicePtr b = AllocateOk(4 * kMiB);
  const DevicePtr c = AllocateOk(4 * kMiB);
  FreeOk(b);
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(12 * kMiB));
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(8 * kMiB));
  // Each 4 MiB block is one chunk (max_map_chunk 8 MiB, divisor 1).
  EXPECT_EQ(alloc_->GetStats().num_unmaps, 1);
  EXPECT_EQ(Device().live_mappings, 2);
  EXPECT_EQ(Device().bytes_in_use, 8 * kMiB);
  Snapshot snap = alloc_->TakeSnapshot();
  ASSERT_EQ(snap.segments.size(), 1u);
  EXPECT_THAT(snap.segments[0].mapped_ranges,
              ElementsAre(Pair(a, a + 4 * kMiB), Pair(c, c + 4 * kMiB)));
  EXPECT_EQ(snap.segments[0].mapped_size, 8 * kMiB);
  const BlockInfo* hole = BlockAt(snap, b);
  ASSERT_NE(hole, nullptr);
  EXPECT_EQ(hole->status, BlockStatus::kInactive);

  // The hole is mapped again when it is needed.
  const DevicePtr again = AllocateOk(4 * kMiB);
  EXPECT_EQ(again, b);
  EXPECT_EQ(Reserved(), static_cast<std::int64_t>(12 * kMiB));
  FreeOk(a);
  FreeOk(again);
  FreeOk(c);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(alloc_->GetStats().segment[kStatAll].current, 0);
  EXPECT_EQ(Device().live_ranges, 0);
}

// ccalloc's own clocks: a placement that maps memory counts its host time
// (prepare_ns), one that finds its pages mapped reads no clock, and the
// unmaps of a trim count theirs where they ran (worker_ns).
TEST_F(GrowableSegmentsTest, HostTimeIsCountedWhereDriverWorkIsDone) {
  Make(Mechanics());
  const DevicePtr a = AllocateOk(4 * kMiB);
  MemoryStats stats = alloc_->GetStats();
  EXPECT_GT(stats.prepare_ns, 0) << "a placement that mapped a chunk";
  // Its driver calls, each timed where it is made, within the placement's.
  EXPECT_GT(stats.create_ns, 0) << "the chunk's create";
  EXPECT_GT(stats.map_ns, 0) << "the chunk's map with its access";
  EXPECT_LE(stats.create_ns + stats.map_ns, stats.prepare_ns);
  EXPECT_EQ(stats.worker_ns, 0);
  FreeOk(a);
  const std::int64_t prepared = stats.prepare_ns;
  const DevicePtr again = AllocateOk(4 * kMiB);  // the same mapped pages
  EXPECT_EQ(alloc_->GetStats().prepare_ns, prepared) << "a placement that mapped nothing";
  EXPECT_EQ(alloc_->GetStats().map_ns, stats.map_ns);
  EXPECT_EQ(alloc_->GetStats().create_ns, stats.create_ns);
  FreeOk(again);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  stats = alloc_->GetStats();
  EXPECT_EQ(stats.num_unmaps, 1);
  EXPECT_GT(stats.worker_ns, 0) << "the trim's unmap and release";
}

// Free mapped pages beyond the slack are moved to where memory is needed
// (even on another stream) instead of new memory being taken; with a large
// slack they are not.
TEST_F(GrowableSegmentsTest, FreePagesMoveBeforeNewMemoryIsTaken) {
  for (double slack : {0.005, 1.0}) {
    SCOPED_TRACE(absl::StrCat("release_slack ", slack));
    Options options = Mechanics();
    options.release_slack = slack;
    Make(options);
    const DevicePtr a = AllocateOk(20 * kMiB, 0);
    const DevicePtr b = AllocateOk(20 * kMiB, 0);
    FreeOk(a);
    const DevicePtr c = AllocateOk(20 * kMiB, 1);
    const MemoryStats stats = alloc_->GetStats();
    const std::int64_t peak = stats.allocated_bytes[kStatAll].peak;
    EXPECT_EQ(peak, static_cast<std::int64_t>(40 * kMiB));
    if (slack < 0.5) {
      EXPECT_GT(stats.num_unmaps, 0) << "no page was moved";
      const auto allowed = static_cast<std::int64_t>(
          std::max<double>(slack * static_cast<double>(peak), 2.0 * static_cast<double>(kPage)));
      EXPECT_LE(stats.reserved_bytes[kStatAll].current, peak + allowed);
    } else {
      EXPECT_EQ(stats.num_unmaps, 0);
      EXPECT_EQ(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(60 * kMiB));
    }
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
    FreeOk(b);
    FreeOk(c);
  }
}


// Taking memory from under freed blocks waits for their stream, but once per
// free: blocks freed before the last wait on that stream are unmapped
// without waiting again.
TEST_F(GrowableSegmentsTest, UnmappingWaitsForTheStreamOnlyForBlocksFreedSinceTheLastWait) {
  MakeWithSlack(0, 0);  // no room to wait for frees to finish
  const DevicePtr a = AllocateOk(24 * kMiB, 0);
  const DevicePtr b = AllocateOk(24 * kMiB, 0);
  const DevicePtr keep = AllocateOk(24 * kMiB, 0);
  FreeOk(a);
  FreeOk(b);
  // Stream 1 needs memory: chunks under a and b (freed on stream 0) are given
  // back, and stream 0 is waited for once.
  const DevicePtr c = AllocateOk(20 * kMiB, 1);
  MemoryStats stats = alloc_->GetStats();
  ASSERT_GT(stats.num_unmaps, 0);
  EXPECT_EQ(stats.num_stream_syncs, 1);
  EXPECT_GT(stats.wait_ns, 0) << "the wait's host time";
  EXPECT_GE(stats.prepare_ns, stats.wait_ns) << "a wait made by a placement is within its time";
  // It was a trim's (memory taken from holes for another stream), and is
  // counted as one.
  EXPECT_EQ(stats.wait_trim_ns, stats.wait_ns);
  EXPECT_EQ(stats.wait_under_block_ns, 0);
  EXPECT_EQ(stats.wait_release_ns, 0);
  EXPECT_EQ(stats.num_waits_trim, 1);
  EXPECT_EQ(stats.num_waits_under_block + stats.num_waits_release, 0);
  // More memory for stream 1: what is left under a and b was freed before
  // that wait, so it goes back without another one.
  const std::int64_t unmaps = stats.num_unmaps;
  const DevicePtr d = AllocateOk(20 * kMiB, 1);
  stats = alloc_->GetStats();
  EXPECT_GT(stats.num_unmaps, unmaps);
  EXPECT_EQ(stats.num_stream_syncs, 1);
  // A block freed after the wait needs a new one.
  FreeOk(keep);
  const DevicePtr e = AllocateOk(20 * kMiB, 1);
  stats = alloc_->GetStats();
  EXPECT_EQ(stats.num_stream_syncs, 2);
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {c, d, e}) FreeOk(p);
}


// The rest of a hole that was split keeps the hole's last free: memory freed
// moments ago may still be in use by queued work, so taking it away waits.
TEST_F(GrowableSegmentsTest, SplitRemainderOfARecentFreeStillWaitsBeforeUnmapping) {
  MakeWithSlack(0, 0);
  const DevicePtr a = AllocateOk(40 * kMiB, 0);
  FreeOk(a);
  // Carve a small block out of a's hole: the rest (36 MiB) was freed just now.
  const DevicePtr b = AllocateOk(4 * kMiB, 0);
  ASSERT_EQ(b, a);
  // Stream 1 needs memory beyond the budget: chunks under the rest go back,
  // and stream 0 must be waited for first.
  const DevicePtr c = AllocateOk(30 * kMiB, 1);
  const MemoryStats stats = alloc_->GetStats();
  ASSERT_GT(stats.num_unmaps, 0);
  EXPECT_EQ(stats.num_stream_syncs, 1) << "memory freed moments ago was unmapped without a wait";
  EXPECT_TRUE(IsValid(*alloc_));
  FreeOk(b);
  FreeOk(c);
}

// Between the low and the high mark nothing waits: memory whose frees may
// still be in use by queued work stays mapped (reserved grows instead) and a
// mark is left on its stream; once the mark has completed, the same memory
// moves with no wait at all.
TEST_F(GrowableSegmentsTest, BelowTheHighMarkOnlyFinishedFreesMoveAndNothingWaits) {
  MakeWithSlack(0, 1.0);
  SimBackend* sim = env_.sim();
  const DevicePtr a = AllocateOk(24 * kMiB, 0);
  const DevicePtr keep = AllocateOk(24 * kMiB, 0);
  FreeOk(a);
  // Stream 1 needs memory beyond the low mark; a's work may still be queued.
  const DevicePtr c = AllocateOk(20 * kMiB, 1);
  MemoryStats stats = alloc_->GetStats();
  EXPECT_EQ(stats.num_unmaps, 0) << "memory still in use by queued work was moved";
  EXPECT_EQ(stats.num_stream_syncs, 0) << "the allocation path waited";
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(68 * kMiB));
  EXPECT_GE(Device().live_events, 1) << "no mark was left on stream 0";
  // The GPU gets past the mark: the next growth takes a's memory, unwaited.
  sim->CompleteStream(0);
  const DevicePtr d = AllocateOk(20 * kMiB, 1);
  stats = alloc_->GetStats();
  EXPECT_GT(stats.num_unmaps, 0) << "finished memory was not moved";
  EXPECT_EQ(stats.num_stream_syncs, 0);
  EXPECT_LE(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(68 * kMiB));
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {keep, c, d}) FreeOk(p);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Device().live_events, 0) << "an emptied cache still holds a mark";
}

// Marks left by frees (every 16th free leaves one, DeviceAllocator::
// kFreesPerMark): memory freed long ago whose work has finished is known to
// be done with when a later growth asks, and moves below the high mark;
// before the 16th free the first mark after that free is the one the growth
// itself records, still queued, and the growth takes new memory instead.
TEST_F(GrowableSegmentsTest, FreeMarksTellThatOldFreesAreDone) {
  constexpr int kFreesPerMark = 16;
  for (const int frees : {kFreesPerMark, 4}) {
    SCOPED_TRACE(absl::StrCat(frees, " frees"));
    Options options = Mechanics();
    options.release_slack = 0;
    options.release_slack_max = options.release_slack_hard = 1.0;
    Make(options);
    SimBackend* sim = env_.sim();
    const DevicePtr a = AllocateOk(24 * kMiB, 0);
    const DevicePtr keep = AllocateOk(24 * kMiB, 0);
    FreeOk(a);
    // The other frees on stream 0, into a's hole: the 16th free (if any)
    // leaves a mark after every free there. (All live first: a block taken
    // straight back after its free would not count,
    // FreeMarksSkipBlocksTakenStraightBack.)
    std::vector<DevicePtr> small;
    for (int i = 1; i < frees; ++i) small.push_back(AllocateOk(kMiB + kMiB / 2, 0));
    for (DevicePtr p : small) FreeOk(p);
    const bool marked = frees == kFreesPerMark;
    EXPECT_EQ(Device().live_events, marked ? 1 : 0);
    sim->CompleteStream(0);  // the GPU gets past every mark recorded so far
    const std::int64_t before = Reserved();
    const DevicePtr c = AllocateOk(20 * kMiB, 1);
    const MemoryStats stats = alloc_->GetStats();
    EXPECT_EQ(stats.num_stream_syncs, 0) << "the allocation path waited";
    if (!marked) {
      EXPECT_EQ(Reserved(), before + static_cast<std::int64_t>(20 * kMiB))
          << "memory not known done with was moved";
    } else {
      // What passes the low mark (48 MiB and two pages) moves: two of a's
      // 8 MiB chunks; the rest of c is new memory.
      EXPECT_EQ(Reserved(), before + static_cast<std::int64_t>(4 * kMiB))
          << "memory known done with was not moved";
      EXPECT_GT(stats.num_unmaps, 0);
    }
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
    for (DevicePtr p : {keep, c}) FreeOk(p);
    sim->CompleteAll();
    ASSERT_TRUE(alloc_->EmptyCache().ok());
    EXPECT_EQ(Reserved(), 0);
    alloc_.reset();
    EXPECT_TRUE(env_.NothingOutstanding());
  }
}

// Free marks count only frees that leave a hole: a block taken straight
// back by the next allocation (a hot pair, from the hot slot or, after a
// report returned the block, by best fit) is not counted, so a loop of them
// records no event; frees whose memory stays free do.
TEST_F(GrowableSegmentsTest, FreeMarksSkipBlocksTakenStraightBack) {
  constexpr int kFreesPerMark = 16;  // DeviceAllocator's
  for (const bool flush : {false, true}) {
    SCOPED_TRACE(flush ? "returned before the next allocation" : "held aside");
    Make(Mechanics());
    const DevicePtr keep = AllocateOk(24 * kMiB, 0);
    for (int i = 0; i < 100; ++i) {
      FreeOk(AllocateOk(4 * kMiB, 0));
      if (flush) (void)alloc_->Fragmentation();
    }
    EXPECT_EQ(Device().live_events, 0) << "a hot pair left marks";
    std::vector<DevicePtr> blocks;
    for (int i = 0; i < kFreesPerMark; ++i) blocks.push_back(AllocateOk(4 * kMiB, 0));
    for (int i = 0; i + 1 < kFreesPerMark; ++i) FreeOk(blocks[i]);
    EXPECT_EQ(Device().live_events, 0) << "fewer frees into holes than a mark takes";
    FreeOk(blocks.back());
    EXPECT_EQ(Device().live_events, 1) << "the 16th free into a hole left no mark";
    EXPECT_TRUE(IsValid(*alloc_));
    FreeOk(keep);
    env_.sim()->CompleteAll();
    ASSERT_TRUE(alloc_->EmptyCache().ok());
    alloc_.reset();
    EXPECT_TRUE(env_.NothingOutstanding());
  }
}

// A block that would end inside a mapped chunk reaching well into the rest
// of its hole pins that rest until it is freed. Beyond the high mark the
// chunk is unmapped first (its frees finished) and the block's own part
// mapped alone, so the rest stays movable; below the mark the block just
// takes the mapped pages.
TEST_F(GrowableSegmentsTest, BeyondTheHighMarkNoBlockPinsTheRestOfAChunk) {
  struct Case {
    const char* name;
    double slack_max;
    bool pinned;
  };
  for (const Case& k : {Case{"below the high mark", 1.0, true},
                        Case{"beyond the high mark", 0, false}}) {
    SCOPED_TRACE(k.name);
    Options options = Mechanics();
    options.release_slack = 0;
    options.release_slack_max = k.slack_max;
    Make(options);
    const DevicePtr a = AllocateOk(64 * kMiB, 0);  // four 16 MiB chunks
    const DevicePtr keep = AllocateOk(2 * kMiB, 0);
    FreeOk(a);
    // Stream 1 grows: beyond the high mark it takes one of a's chunks
    // (waiting for stream 0 once), below it a's memory stays mapped.
    const DevicePtr c = AllocateOk(8 * kMiB, 1);
    env_.sim()->CompleteStream(0);
    const std::int64_t unmaps = alloc_->GetStats().num_unmaps;
    const DevicePtr d = AllocateOk(20 * kMiB, 0);
    ASSERT_EQ(d, a);
    Snapshot snap = alloc_->TakeSnapshot();
    const SegmentInfo* seg = SegmentOf(snap, d);
    ASSERT_NE(seg, nullptr);
    bool after_d_mapped = false;
    for (const auto& [lo, hi] : seg->mapped_ranges) {
      after_d_mapped |= lo <= d + 20 * kMiB && hi > d + 20 * kMiB;
    }
    if (k.pinned) {
      EXPECT_TRUE(after_d_mapped) << "the chunk under d's end should reach past it (pinned)";
      EXPECT_EQ(alloc_->GetStats().num_unmaps, unmaps);
    } else {
      EXPECT_FALSE(after_d_mapped) << "a chunk half used by d was left mapped";
    }
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
    for (DevicePtr p : {keep, c, d}) FreeOk(p);
  }
}

// Memory held past the high mark (here: grown while a routing to a private
// pool, what precedes a capture, forbade unmapping) goes back at the next
// growth beyond the mark, all of it, not only as much as that growth maps.
TEST_F(GrowableSegmentsTest, AGrowthBeyondTheHighMarkTrimsTheWholeExcess) {
  MakeWithSlack(0, 0);
  const DevicePtr a = AllocateOk(64 * kMiB, 0);  // four 16 MiB chunks
  const DevicePtr keep = AllocateOk(2 * kMiB, 0);
  FreeOk(a);
  env_.sim()->CompleteStream(0);
  ASSERT_TRUE(alloc_->BeginAllocateToPool(7, [](StreamId s) { return s == 3; }).ok());
  const DevicePtr b = AllocateOk(40 * kMiB, 1);  // new memory: a's may not move now
  ASSERT_TRUE(alloc_->EndAllocateToPool(7).ok());
  ASSERT_TRUE(alloc_->ReleasePool(7).ok());
  ASSERT_EQ(Reserved(), static_cast<std::int64_t>(106 * kMiB));
  // One page more: a's chunks go back until the whole excess is.
  const DevicePtr e = AllocateOk(2 * kMiB, 1);
  const MemoryStats stats = alloc_->GetStats();
  const std::int64_t peak = stats.allocated_bytes[kStatAll].peak;
  EXPECT_LE(stats.reserved_bytes[kStatAll].current, peak + static_cast<std::int64_t>(2 * kPage))
      << "memory past the mark was kept";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {keep, b, e}) FreeOk(p);
}

// A block whose pages are all mapped is handed out at once (Ready: the hot
// path) only where Prepare would do nothing: beyond the high mark it still
// goes through Prepare, which unmaps the free rest of the chunk under it
// rather than let the block pin it.
TEST_F(GrowableSegmentsTest, AMappedBlockBeyondTheHighMarkStillUnpinsTheRestOfItsChunk) {
  Make(NoSlackMechanics());
  const DevicePtr a = AllocateOk(64 * kMiB, 0);  // eight 8 MiB chunks
  const DevicePtr keep = AllocateOk(2 * kMiB, 0);
  FreeOk(a);
  ASSERT_TRUE(alloc_->BeginAllocateToPool(7, [](StreamId s) { return s == 3; }).ok());
  const DevicePtr b = AllocateOk(40 * kMiB, 1);  // new memory: a's may not move now
  ASSERT_TRUE(alloc_->EndAllocateToPool(7).ok());
  ASSERT_TRUE(alloc_->ReleasePool(7).ok());
  // Beyond the high mark now. 12 MiB on a's mapped chunks: the free rest
  // of the second chunk stays (a's work may still run; a mark is left).
  const DevicePtr d = AllocateOk(12 * kMiB, 0);
  ASSERT_EQ(d, a);
  env_.sim()->CompleteStream(0);
  // 8 MiB after it, all mapped: the third chunk's free rest is unmapped.
  const DevicePtr e = AllocateOk(8 * kMiB, 0);
  ASSERT_EQ(e, a + 12 * kMiB);
  EXPECT_EQ(MappedBytes(keep, e, 8 * kMiB), 8 * kMiB);
  EXPECT_EQ(MappedBytes(keep, e + 8 * kMiB, 4 * kMiB), 0u)
      << "the block was handed out pinning the free rest of its chunk";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  // Within the marks again, a block on mapped memory makes no call.
  FreeOk(b);
  env_.CompleteAll();
  FreeOk(AllocateOk(2 * kMiB, 0));
  const std::int64_t calls = alloc_->GetStats().num_maps + alloc_->GetStats().num_unmaps;
  for (int i = 0; i < 3; ++i) FreeOk(AllocateOk(2 * kMiB, 0));
  EXPECT_EQ(alloc_->GetStats().num_maps + alloc_->GetStats().num_unmaps, calls);
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {keep, d, e}) FreeOk(p);
}

// The marks follow the most ever allocated, not the counters' peak, which
// reset_peak_memory_stats (and the profiler, at each phase boundary) sets
// back: a growth after a reset keeps the cache that the real peak allows.
TEST_F(GrowableSegmentsTest, ResettingThePeakCountersDoesNotEmptyTheCache) {
  MakeWithSlack(0.1, 0.1);
  const DevicePtr a = AllocateOk(64 * kMiB, 0);
  const DevicePtr keep = AllocateOk(2 * kMiB, 0);
  FreeOk(a);
  env_.sim()->CompleteStream(0);
  alloc_->ResetPeakStats();
  ASSERT_EQ(alloc_->GetStats().allocated_bytes[kStatAll].peak,
            static_cast<std::int64_t>(2 * kMiB));
  // 70 MiB held after this growth: within 10% of the real peak (66 MiB).
  const DevicePtr c = AllocateOk(4 * kMiB, 1);
  const MemoryStats stats = alloc_->GetStats();
  EXPECT_EQ(stats.num_unmaps, 0) << "a reset of the peak counters made the cache give memory back";
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(70 * kMiB));
  EXPECT_TRUE(IsValid(*alloc_));
  FreeOk(keep);
  FreeOk(c);
}

// Beyond the high mark a chunk is dated by the frees of the blocks that lay
// on it, not by its hole's newest free: a hole that a small block was just
// freed into still gives up its old chunks without a new wait.
TEST_F(GrowableSegmentsTest, OldChunksOfAHoleJustFreedIntoMoveWithoutANewWait) {
  MakeWithSlack(0, 0);
  const DevicePtr a = AllocateOk(32 * kMiB, 0);
  const DevicePtr b = AllocateOk(2 * kMiB, 0);
  const DevicePtr keep = AllocateOk(2 * kMiB, 0);
  FreeOk(a);
  // Stream 1 needs memory: part of a's goes, after one wait for a's work.
  const DevicePtr c = AllocateOk(8 * kMiB, 1);
  MemoryStats stats = alloc_->GetStats();
  ASSERT_EQ(stats.num_stream_syncs, 1);
  const std::int64_t unmaps = stats.num_unmaps;
  ASSERT_GT(unmaps, 0);
  // b joins the hole: its newest free is now one no wait has covered.
  FreeOk(b);
  const DevicePtr d = AllocateOk(8 * kMiB, 1);
  stats = alloc_->GetStats();
  EXPECT_GT(stats.num_unmaps, unmaps) << "the rest of a's memory did not move";
  EXPECT_EQ(stats.num_stream_syncs, 1) << "waited again for memory freed before the last wait";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {keep, c, d}) FreeOk(p);
}

// Beyond the high mark, memory whose work may still be queued goes oldest
// free first: the wait it costs drains as little of the queue as it can.
// Taking the largest hole first waited for the free made just now.
TEST_F(GrowableSegmentsTest, AWaitTakesTheMemoryFreedLongestAgo) {
  MakeWithSlack(0, 0);
  const TwoHoles h = FreeTwoHoles();
  // Stream 1 needs 8 MiB: one chunk of stream 0's goes, after one wait.
  const DevicePtr c = AllocateOk(8 * kMiB, 1);
  ASSERT_EQ(alloc_->GetStats().num_stream_syncs, 1);
  ExpectTheOlderHoleGave(h);
  for (DevicePtr p : {h.keep, h.keep2, c}) FreeOk(p);
}

// Below the high mark memory whose work has finished moves least recently
// freed first, as a cache evicts: the largest hole, taken first before, was
// the one freed last and the likeliest to be wanted again.
TEST_F(GrowableSegmentsTest, BelowTheHighMarkTheMemoryFreedLongestAgoMoves) {
  MakeWithSlack(0, 1.0);
  const TwoHoles h = FreeTwoHoles();
  // Stream 1 grows past the low mark: a trim asks whether stream 0's frees
  // are done (a mark goes on stream 0), finds them not yet done, and maps
  // new memory.
  const DevicePtr c1 = AllocateOk(6 * kMiB, 1);
  env_.sim()->CompleteStream(0);
  // Now both holes' work has finished: one 8 MiB chunk moves, without a wait.
  const std::int64_t reserved = alloc_->GetStats().reserved_bytes[kStatAll].current;
  const DevicePtr c2 = AllocateOk(8 * kMiB, 1);
  const MemoryStats stats = alloc_->GetStats();
  ASSERT_EQ(stats.num_stream_syncs, 0);
  ASSERT_EQ(stats.reserved_bytes[kStatAll].current, reserved) << "a chunk should have moved";
  ExpectTheOlderHoleGave(h);
  for (DevicePtr p : {h.keep, h.keep2, c1, c2}) FreeOk(p);
}

// ... and of many holes it takes only the chunks it needs, oldest free
// first whatever the holes' sizes or places: six one-chunk holes freed in a
// shuffled order give their memory up in that order (UnmapFreeChunks keeps
// only as many chunks as the trim can take).
TEST_F(GrowableSegmentsTest, BelowTheHighMarkATrimTakesTheOldestChunksOfManyHoles) {
  MakeWithSlack(0, 1.0);
  constexpr int kHoles = 6;
  constexpr int kOrder[kHoles] = {3, 0, 5, 1, 4, 2};  // the order of the frees
  std::vector<DevicePtr> holes;
  std::vector<DevicePtr> keeps;
  for (int i = 0; i < kHoles; ++i) {
    holes.push_back(AllocateOk(8 * kMiB, 0));  // one chunk (Mechanics: 8 MiB)
    keeps.push_back(AllocateOk(2 * kMiB, 0));  // so that no two holes coalesce
  }
  for (int i : kOrder) FreeOk(holes[i]);
  // As above: the first growth on stream 1 finds stream 0's frees not yet
  // done; once they are, growths move chunks without a wait.
  const DevicePtr c1 = AllocateOk(6 * kMiB, 1);
  env_.sim()->CompleteStream(0);
  std::vector<DevicePtr> taken = {c1};
  for (int moved = 1; moved <= kHoles; ++moved) {
    const std::int64_t reserved = alloc_->GetStats().reserved_bytes[kStatAll].current;
    taken.push_back(AllocateOk(8 * kMiB, 1));
    const MemoryStats stats = alloc_->GetStats();
    ASSERT_EQ(stats.num_stream_syncs, 0);
    ASSERT_EQ(stats.reserved_bytes[kStatAll].current, reserved) << "a chunk should have moved";
    for (int k = 0; k < kHoles; ++k) {
      const bool gone = std::find(kOrder, kOrder + moved, k) != kOrder + moved;
      EXPECT_EQ(MappedBytes(keeps[0], holes[k], 8 * kMiB), gone ? 0u : 8 * kMiB)
          << "hole " << k << " after " << moved << " moves";
    }
    EXPECT_TRUE(IsValid(*alloc_));
  }
  for (DevicePtr p : keeps) FreeOk(p);
  for (DevicePtr p : taken) FreeOk(p);
}

// hold_reserved: where live bytes swing below their peak and back (churn),
// memory held once is taken again instead of being moved back and forth,
// and the peak reserved is no higher for it.
// The default marks (release_slack: 5%, 8%, 10% of the peak) hold while the
// cache has room; near the end of its memory (the limit, or the device's),
// or once the device has refused memory, they tighten (0.5%, 0.8%, 0.95%).
// A second stream's 8 MiB after 400 MiB kept and 8 MiB freed: with room the
// freed chunk stays cached and new memory is taken; near the end it moves.
TEST_F(GrowableSegmentsTest, TheMarksAreLooseWithRoomAndTightNearTheEndOfMemory) {
  struct Case {
    const char* name;
    std::size_t limit;  // 0: none
    bool short_once;    // the device refuses the first create
    bool moves;
  };
  for (const Case& c : {Case{"room", 0, false, false},
                        Case{"a limit the loose hard mark would pass", 480 * kMiB, false, true},
                        Case{"a limit far above", 8 * kGiB, false, false},
                        Case{"the device ran short once", 0, true, true}}) {
    SCOPED_TRACE(c.name);
    Options options = env_.BaseOptions();
    ASSERT_DOUBLE_EQ(options.release_slack, 0.05);
    options.cross_stream_reuse = Options::CrossStreamReuse::kNever;  // moves, not loans
    options.memory_limit = c.limit;
    Make(options);
    if (c.short_once) env_.sim()->FailNth(SimOp::kCreatePhysical, 1);
    const DevicePtr keep = AllocateOk(400 * kMiB, 0);  // (the ladder retries a refusal)
    const DevicePtr a = AllocateOk(8 * kMiB, 0);
    FreeOk(a);
    env_.CompleteAll();
    const MemoryStats before = alloc_->GetStats();
    EXPECT_EQ(before.num_alloc_retries, c.short_once ? 1 : 0);
    const DevicePtr b = AllocateOk(8 * kMiB, 1);
    const MemoryStats after = alloc_->GetStats();
    const std::int64_t reserved = after.reserved_bytes[kStatAll].current;
    if (c.moves) {
      // Up to the tight low mark (the peak and the two-page minimum): one of
      // a's two 4 MiB chunks (near the end chunks are 4 MiB) moved under b.
      EXPECT_EQ(reserved, static_cast<std::int64_t>(412 * kMiB)) << "a's memory stayed cached";
      EXPECT_EQ(MappedBytes(keep, a, 8 * kMiB), 4 * kMiB);
    } else {
      EXPECT_EQ(reserved, static_cast<std::int64_t>(416 * kMiB)) << "a's memory moved";
      EXPECT_EQ(MappedBytes(keep, a, 8 * kMiB), 8 * kMiB);
    }
    EXPECT_GT(after.num_device_alloc, before.num_device_alloc);
    if (c.limit > 0) EXPECT_LE(reserved, static_cast<std::int64_t>(c.limit));
    ExpectDeviceHoldsReserved();
    FreeOk(b);
    FreeOk(keep);
  }
}

TEST_F(GrowableSegmentsTest, HoldingWhatWasHeldSavesMovesUnderChurn) {
  struct Run {
    std::int64_t calls_after_warmup = 0;
    std::int64_t peak_reserved = 0;
  };
  auto churn = [&](bool hold) {
    Options options = Mechanics();
    options.hold_reserved = hold;
    Make(options);
    std::mt19937_64 rng(11);
    LogUniformSizes sizes(kSmallSize + 1, 24 * kMiB);
    std::vector<DevicePtr> live;
    for (int i = 0; i < 64; ++i) live.push_back(AllocateOk(sizes(rng), 0));
    Run run;
    for (int step = 0; step < 4000; ++step) {
      if (step == 1000) {
        const MemoryStats warm = alloc_->GetStats();
        run.calls_after_warmup = -(warm.num_maps + warm.num_unmaps);
      }
      DevicePtr& victim = live[rng() % live.size()];
      FreeOk(victim);
      env_.sim()->CompleteAll();
      victim = AllocateOk(sizes(rng), 0);
    }
    const MemoryStats stats = alloc_->GetStats();
    run.calls_after_warmup += stats.num_maps + stats.num_unmaps;
    run.peak_reserved = stats.reserved_bytes[kStatAll].peak;
    EXPECT_TRUE(IsValid(*alloc_));
    // An emptied cache starts the hold over: nothing free stays mapped.
    EXPECT_TRUE(alloc_->EmptyCache().ok());
    const MemoryStats emptied = alloc_->GetStats();
    EXPECT_LE(emptied.reserved_bytes[kStatAll].current,
              emptied.allocated_bytes[kStatAll].current + static_cast<std::int64_t>(2 * 64 * kPage));
    for (DevicePtr p : live) FreeOk(p);
    alloc_.reset();
    return run;
  };
  const Run held = churn(true);
  const Run moved = churn(false);
  EXPECT_LT(held.calls_after_warmup * 2, moved.calls_after_warmup)
      << "holding saved less than half the driver calls";
  // (Within a hundredth: frees' marks let the run that moves take memory
  // known done with a little sooner, 4 MiB lower on this seed.)
  EXPECT_LE(held.peak_reserved, moved.peak_reserved + moved.peak_reserved / 100)
      << "holding raised the peak";
}

// mapped_fit: a request whose best fit (the smallest free block) lies on
// pages moved away is placed on memory still mapped in a larger free block,
// with no driver call, and the cache stays valid; without it the same
// request maps (moving memory back).
TEST_F(GrowableSegmentsTest, MappedFitPlacesOnHeldMemoryWithoutACall) {
  auto run = [&](bool mapped_fit) {
    Options options = NoSlackMechanics();
    options.mapped_fit = mapped_fit ? Options::MappedFit::kAlways : Options::MappedFit::kNever;
    Make(options);
    const auto [a, k1, k2, big] = MoveTwoHolesUnderALargeBlock();
    EXPECT_LT(alloc_->GetStats().reserved_bytes[kStatAll].current,
              static_cast<std::int64_t>(16 * kMiB + 32 * kMiB + 40 * kMiB))
        << "the holes kept their memory: nothing to place around";
    const auto [c, calls, reserved_change] = PlaceTwelveMiB();
    if (mapped_fit) {
      EXPECT_EQ(calls, 0) << "placed where nothing is mapped";
      EXPECT_EQ(c, big) << "not on the memory the large block left mapped";
      EXPECT_EQ(reserved_change, 0);
    } else {
      EXPECT_GT(calls, 0) << "best fit found mapped memory: the test proves nothing";
      EXPECT_EQ(c, a);
    }
    for (DevicePtr p : {c, k1, k2}) FreeOk(p);
    EXPECT_TRUE(IsValid(*alloc_));
    alloc_.reset();
  };
  run(true);
  run(false);
}

// With auto, a request whose best fit would map at least 64 MiB goes on
// memory already mapped even where the cache holds no slack; one that
// would map less takes its best fit. (MoveTwoHolesUnderALargeBlock, eight
// times as large: holes of 128 and 256 MiB whose chunks move under a
// 320 MiB block freed at once.)
TEST_F(GrowableSegmentsTest, MappedFitForRequestsThatWouldMapMuch) {
  for (const std::size_t request : {128 * kMiB, 48 * kMiB}) {
    SCOPED_TRACE(absl::StrCat(request / kMiB, " MiB"));
    Options options = NoSlackMechanics();
    options.mapped_fit = Options::MappedFit::kWhenSlack;
    Make(options);
    const DevicePtr a = AllocateOk(128 * kMiB, 0);
    const DevicePtr k1 = AllocateOk(kPage, 0);
    const DevicePtr b = AllocateOk(256 * kMiB, 0);
    const DevicePtr k2 = AllocateOk(kPage, 0);
    FreeOk(a);
    FreeOk(b);
    env_.sim()->CompleteAll();
    const DevicePtr big = AllocateOk(320 * kMiB, 0);
    FreeOk(big);
    env_.sim()->CompleteAll();
    const MemoryStats before = alloc_->GetStats();
    ASSERT_LE(before.reserved_bytes[kStatAll].current,
              before.allocated_bytes[kStatAll].peak + static_cast<std::int64_t>(4 * kPage))
        << "the cache holds slack: auto would place on held memory anyway";
    // Its best fit is a's hole, which lacks 64 MiB or more.
    ASSERT_LE(MappedBytes(k1, a, 128 * kMiB), 64 * kMiB) << "a's hole kept its memory";
    const DevicePtr c = AllocateOk(request, 0);
    const MemoryStats after = alloc_->GetStats();
    const std::int64_t calls =
        after.num_maps - before.num_maps + after.num_device_alloc - before.num_device_alloc;
    if (request >= 64 * kMiB) {
      EXPECT_EQ(calls, 0) << "placed where nothing is mapped";
      EXPECT_EQ(c, big);
    } else {
      EXPECT_GT(calls, 0) << "best fit found mapped memory: the test proves nothing";
      EXPECT_EQ(c, a);
    }
    EXPECT_TRUE(IsValid(*alloc_));
    for (DevicePtr p : {c, k1, k2}) FreeOk(p);
    alloc_.reset();
  }
}

// An unmap that fails during a trim (empty_cache, then growth beyond the
// slack) is an error for that call and loses nothing: the chunk stays mapped
// and counted, the cache stays valid, and a later trim gives it back.
TEST_F(GrowableSegmentsTest, FailedUnmapDuringATrimLosesNothing) {
  MakeWithSlack(0, 0);
  SimBackend* sim = env_.sim();
  const DevicePtr a = AllocateOk(24 * kMiB, 0);
  const DevicePtr keep = AllocateOk(8 * kMiB, 0);
  FreeOk(a);
  sim->FailNth(SimOp::kUnmap, 1);
  EXPECT_FALSE(alloc_->EmptyCache().ok());
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));

  // The same during growth: the request either succeeds or fails cleanly.
  // (The trim above gave back the chunks whose unmaps did not fail, so the
  // growth must be larger than what is left free to have to move one.)
  sim->FailNth(SimOp::kUnmap, 1);
  absl::StatusOr<DevicePtr> c = alloc_->Allocate(28 * kMiB, 1);
  EXPECT_EQ(Device().failures_injected, 2) << "the growth moved nothing";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  if (c.ok()) FreeOk(*c);
  FreeOk(keep);
  const absl::Status emptied = alloc_->EmptyCache();
  ASSERT_TRUE(emptied.ok()) << emptied;
  EXPECT_EQ(Reserved(), 0);
  alloc_.reset();
  EXPECT_TRUE(env_.NothingOutstanding());
}

// A move within one stream never waits: the chunks under a hole whose work
// may still be queued are mapped where the new block needs them while still
// mapped where they were (the new block's work queues after the old), and
// the old mapping goes once an event says the old work has finished. Memory
// is counted once throughout, and the device holds exactly what is counted.
TEST_F(GrowableSegmentsTest, SameStreamMovesDoNotWaitAndUnmapOnceTheWorkIsDone) {
  MakeWithSlack(0, 0);  // no room: every growth moves
  SimBackend* sim = env_.sim();
  // Nothing before the growth unmaps (a fresh allocator; a free keeps its
  // pages), so every unmap counted is the move's.
  const auto [keep, c] = GrowOverARecentFree();
  MemoryStats stats = alloc_->GetStats();
  EXPECT_EQ(stats.num_stream_syncs, 0) << "a move within the stream waited";
  EXPECT_EQ(stats.num_unmaps, 0) << "unmapped while queued work may use it";
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(48 * kMiB))
      << "a's memory was not reused";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));

  // The GPU gets past the free; the next growth unmaps a's old pages first,
  // without a wait.
  sim->CompleteStream(0);
  const DevicePtr d = AllocateOk(4 * kMiB, 1);
  stats = alloc_->GetStats();
  EXPECT_GT(stats.num_unmaps, 0) << "the old mapping was never unmapped";
  EXPECT_EQ(stats.num_stream_syncs, 0);
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {keep, c, d}) FreeOk(p);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Reserved(), 0);
  alloc_.reset();
  EXPECT_TRUE(env_.NothingOutstanding());
}

// keep_old_mappings (the default): a move leaves its old mapping in place,
// and a block that wants those pages again while the memory is free where it
// went takes it back with no driver call at all.
class KeptMappingsTest : public GrowableSegmentsTest {
 protected:
  // No slack, so every growth moves; chunks of 4 MiB (two pages).
  void MakeKeeping() {
    Options options = env_.BaseOptions();
    ASSERT_TRUE(options.keep_old_mappings) << "the default keeps old mappings";
    options.release_slack = options.release_slack_max = 0;
    options.release_slack_hard = 0.0095;  // the tight hard mark
    options.hold_reserved = false;
    options.max_map_chunk = 4 * kMiB;
    options.cross_stream_reuse = Options::CrossStreamReuse::kNever;  // moves, not loans
    Make(options);
  }
  // a (16 MiB) freed behind a kept 2 MiB block, its work done; then b
  // (24 MiB), which does not fit a's hole, takes a's four chunks and 8 MiB
  // of new memory.
  struct Moved {
    DevicePtr a, keep, b;
  };
  Moved MoveAToB() {
    Moved m{};
    m.a = AllocateOk(16 * kMiB, 0);
    m.keep = AllocateOk(2 * kMiB, 0);
    FreeOk(m.a);
    env_.CompleteAll();
    m.b = AllocateOk(24 * kMiB, 0);
    return m;
  }
};

TEST_F(KeptMappingsTest, MemoryMovedAwayComesBackWithoutADriverCall) {
  MakeKeeping();
  const Moved m = MoveAToB();
  MemoryStats before = alloc_->GetStats();
  // (The marks' minimum slack of two pages may leave a chunk in a's hole.)
  const std::size_t moved = 16 * kMiB - MappedBytes(m.keep, m.a, 16 * kMiB);
  ASSERT_GT(moved, 0u) << "b took none of a's memory";
  EXPECT_EQ(before.num_unmaps, 0) << "the move's old mapping was not kept";
  EXPECT_EQ(MappedBytes(m.keep, m.b, 24 * kMiB), 24 * kMiB);
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));

  // b is freed and its work done; a block of a's size lands in a's hole.
  FreeOk(m.b);
  env_.CompleteAll();
  before = alloc_->GetStats();
  const DevicePtr again = AllocateOk(16 * kMiB, 0);
  EXPECT_EQ(again, m.a);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(after.num_returns - before.num_returns, static_cast<std::int64_t>(moved / (4 * kMiB)))
      << "each chunk moved comes back";
  EXPECT_EQ(after.num_maps, before.num_maps) << "a return maps nothing";
  EXPECT_EQ(after.num_unmaps, before.num_unmaps) << "a return unmaps nothing";
  EXPECT_EQ(after.num_foreground_unmaps, before.num_foreground_unmaps);
  EXPECT_EQ(after.num_device_alloc, before.num_device_alloc);
  EXPECT_EQ(after.reserved_bytes[kStatAll].current, before.reserved_bytes[kStatAll].current);
  EXPECT_EQ(MappedBytes(m.keep, m.a, 16 * kMiB), 16 * kMiB);
  EXPECT_EQ(MappedBytes(m.keep, m.b, 24 * kMiB), 24 * kMiB - moved)
      << "only b's new memory stays there";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));

  // A trim unmaps every old mapping and gives everything free back.
  FreeAllAndExpectNothingHeld({again, m.keep});
  alloc_.reset();
  EXPECT_TRUE(env_.NothingOutstanding());
}

// A request that would map much (64 MiB) goes on mapped memory, but what it
// would map counts only what a place lacks: memory that comes back there
// without a call (Return) is not missing. A block whose best fit lies on old
// mappings of memory now free elsewhere takes that fit and its memory back,
// as a step repeating an earlier shape should, instead of going to the
// mapped memory where the memory went. (MoveAToB, eight times as large, so
// that more than 64 MiB of a's memory moves.)
TEST_F(KeptMappingsTest, MappedFitCountsMemoryThatComesBackAsHeld) {
  Options options = env_.BaseOptions();
  options.release_slack = options.release_slack_max = 0;
  options.release_slack_hard = 0.0095;  // the tight hard mark
  options.hold_reserved = false;
  options.max_map_chunk = 4 * kMiB;
  options.mapped_fit = Options::MappedFit::kWhenSlack;
  Make(options);
  Moved m{};
  m.a = AllocateOk(128 * kMiB, 0);
  m.keep = AllocateOk(2 * kMiB, 0);
  FreeOk(m.a);
  env_.CompleteAll();
  m.b = AllocateOk(192 * kMiB, 0);  // a's chunks and 64 MiB of new memory
  const std::size_t moved = 128 * kMiB - MappedBytes(m.keep, m.a, 128 * kMiB);
  ASSERT_GE(moved, 64 * kMiB) << "too little of a's memory moved to count";
  FreeOk(m.b);
  env_.CompleteAll();
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr again = AllocateOk(128 * kMiB, 0);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(again, m.a) << "placed on b's mapped memory instead of taking a's back";
  EXPECT_EQ(after.num_returns - before.num_returns, static_cast<std::int64_t>(moved / (4 * kMiB)));
  EXPECT_EQ(after.num_maps, before.num_maps);
  EXPECT_EQ(after.reserved_bytes[kStatAll].current, before.reserved_bytes[kStatAll].current);
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  FreeAllAndExpectNothingHeld({again, m.keep});
  alloc_.reset();
  EXPECT_TRUE(env_.NothingOutstanding());
}

// Memory still in use where it went cannot come back: the old mapping is
// unmapped first and the block gets memory of its own.
TEST_F(KeptMappingsTest, MemoryInUseWhereItWentIsNotTakenBack) {
  MakeKeeping();
  const Moved m = MoveAToB();
  const std::size_t moved = 16 * kMiB - MappedBytes(m.keep, m.a, 16 * kMiB);
  ASSERT_GT(moved, 0u);
  env_.CompleteAll();  // the old mappings' work is done (b's is not freed)
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr again = AllocateOk(16 * kMiB, 0);
  EXPECT_EQ(again, m.a);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(after.num_returns, before.num_returns) << "took memory b still holds";
  EXPECT_EQ(after.num_unmaps - before.num_unmaps, static_cast<std::int64_t>(moved / (4 * kMiB)))
      << "the old mappings under the block were not unmapped";
  // Their work was done: this thread unmapped them itself, with no wait for
  // the worker (or for queued work), and counted them as its own.
  EXPECT_EQ(after.num_foreground_unmaps - before.num_foreground_unmaps,
            after.num_unmaps - before.num_unmaps);
  EXPECT_GE(after.foreground_unmap_ns, before.foreground_unmap_ns);
  EXPECT_EQ(after.wait_ns, before.wait_ns) << "waited to unmap the old mappings";
  EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs);
  EXPECT_EQ(MappedBytes(m.keep, m.a, 16 * kMiB), 16 * kMiB);
  EXPECT_EQ(MappedBytes(m.keep, m.b, 24 * kMiB), 24 * kMiB) << "b lost memory";
  EXPECT_EQ(after.reserved_bytes[kStatAll].current - before.reserved_bytes[kStatAll].current,
            static_cast<std::int64_t>(moved))
      << "a's pages need memory of their own";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {again, m.keep, m.b}) FreeOk(p);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Device().bytes_in_use, 0u);
}

// A block freed where the memory went but still pending (record_stream'ed
// to a stream whose work has not finished) holds it as surely as a live
// one: the memory does not come back, the block gets memory of its own.
TEST_F(KeptMappingsTest, MemoryUnderAPendingBlockIsNotTakenBack) {
  if (!env_.CanHoldEvents()) GTEST_SKIP() << "needs events that stay incomplete";
  MakeKeeping();
  const Moved m = MoveAToB();
  const std::size_t moved = 16 * kMiB - MappedBytes(m.keep, m.a, 16 * kMiB);
  ASSERT_GT(moved, 0u);
  env_.CompleteAll();  // the old mappings' work is done
  ASSERT_TRUE(alloc_->RecordStream(m.b, 1).ok());
  FreeOk(m.b);  // pending on stream 1's event
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr again = AllocateOk(16 * kMiB, 0);
  EXPECT_EQ(again, m.a);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(after.num_returns, before.num_returns) << "took memory a pending block holds";
  EXPECT_EQ(MappedBytes(m.keep, m.a, 16 * kMiB), 16 * kMiB);
  EXPECT_EQ(MappedBytes(m.keep, m.b, 24 * kMiB), 24 * kMiB) << "the pending block lost memory";
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));

  // Once its event is done, everything goes back.
  env_.CompleteAll();
  FreeAllAndExpectNothingHeld({again, m.keep});
}

// A failed unmap of an old mapping under a block loses nothing: the block
// either gets its pages (the unmap tried again the worker's way) or fails
// cleanly, and the device holds what the counters say.
TEST_F(KeptMappingsTest, AFailedUnmapOfAnOldMappingLosesNothing) {
  for (std::int64_t nth : {1, 2}) {
    SCOPED_TRACE(absl::StrCat("unmap ", nth, " fails"));
    MakeKeeping();
    SimBackend* sim = env_.sim();
    if (sim == nullptr) GTEST_SKIP() << "injects failures";
    const Moved m = MoveAToB();
    ASSERT_LT(MappedBytes(m.keep, m.a, 16 * kMiB), 16 * kMiB) << "nothing moved";
    env_.CompleteAll();
    sim->FailNth(SimOp::kUnmap, nth);
    absl::StatusOr<DevicePtr> again = alloc_->Allocate(16 * kMiB, 0);
    EXPECT_GE(Device().failures_injected, 1) << "no unmap was tried";
    if (again.ok()) {
      EXPECT_EQ(MappedBytes(m.keep, *again, 16 * kMiB), 16 * kMiB) << "handed out unmapped";
      FreeOk(*again);
    }
    EXPECT_EQ(MappedBytes(m.keep, m.b, 24 * kMiB), 24 * kMiB) << "b lost memory";
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
    FreeOk(m.b);
    FreeOk(m.keep);
    env_.CompleteAll();
    ASSERT_TRUE(alloc_->EmptyCache().ok());
    EXPECT_EQ(Reserved(), 0);
    EXPECT_EQ(Device().bytes_in_use, 0u);
    alloc_.reset();
    EXPECT_TRUE(env_.NothingOutstanding());
  }
}

// An old mapping whose unmap failed before a capture began stays through
// it (a capture refuses unmapping): a block that best fit would put over
// it is placed past it and handed out, mapped, instead of refused.
TEST_F(KeptMappingsTest, DuringACaptureABlockGoesPastAnOldMappingThatCouldNotBeUnmapped) {
  MakeKeeping();
  SimBackend* sim = env_.sim();
  if (sim == nullptr) GTEST_SKIP() << "injects failures";
  const Moved m = MoveAToB();
  ASSERT_LT(MappedBytes(m.keep, m.a, 16 * kMiB), 16 * kMiB) << "nothing moved";
  FreeOk(m.b);  // a's memory can no longer come back only by a Return
  env_.CompleteAll();
  // The routing to a private pool (what precedes a capture) unmaps old
  // mappings; the first of those unmaps fails.
  sim->FailNth(SimOp::kUnmap, 1);
  ASSERT_TRUE(alloc_->BeginAllocateToPool(7, [](StreamId s) { return s == 3; }).ok());
  EXPECT_GE(Device().failures_injected, 1) << "no unmap was tried";
  const DevicePtr c = AllocateOk(4 * kMiB, 0);
  EXPECT_EQ(MappedBytes(m.keep, c, 4 * kMiB), 4 * kMiB) << "handed out unmapped";
  EXPECT_TRUE(IsValid(*alloc_));
  ASSERT_TRUE(alloc_->EndAllocateToPool(7).ok());
  ASSERT_TRUE(alloc_->ReleasePool(7).ok());
  FreeOk(c);
  FreeOk(m.keep);
  env_.CompleteAll();
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(Device().bytes_in_use, 0u);
}

// Memory that went to a block of another stream comes back only once that
// stream's work on it is known to have finished (an event query, never a
// wait): while it may still run, the block gets other memory.
TEST_F(KeptMappingsTest, MemoryAnotherStreamMayStillUseIsNotTakenBack) {
  if (!env_.CanHoldEvents()) GTEST_SKIP() << "needs events that stay incomplete";
  MakeKeeping();
  const DevicePtr a = AllocateOk(16 * kMiB, 0);
  const DevicePtr keep = AllocateOk(2 * kMiB, 0);
  FreeOk(a);
  env_.CompleteAll();
  const DevicePtr b = AllocateOk(16 * kMiB, 1);  // stream 1's range: a's memory moves
  ASSERT_LT(MappedBytes(keep, a, 16 * kMiB), 16 * kMiB) << "nothing moved";
  ASSERT_EQ(alloc_->GetStats().num_unmaps, 0);
  FreeOk(b);  // stream 1's work on it still queued
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr again = AllocateOk(16 * kMiB, 0);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(again, a);
  EXPECT_EQ(after.num_returns, before.num_returns) << "took memory stream 1 may still use";
  EXPECT_EQ(MappedBytes(keep, a, 16 * kMiB), 16 * kMiB);
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  FreeOk(again);
  FreeOk(keep);
  env_.CompleteAll();
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Device().bytes_in_use, 0u);
}

// cross_stream_reuse on a GPU that runs far behind the host (the replay's
// model) until the host synchronizes, as a training step's end often does:
// then the lender's stream is idle, which the mark recorded at the request
// shows at once, and the loan needs no ordering between the streams.
class LendFinishedTest : public ::testing::Test {
 protected:
  LendFinishedTest() {
    SimBackend::Config config;
    config.auto_complete_events = true;
    config.gpu_lag = 1000;
    auto sim = std::make_unique<SimBackend>(config);
    sim_ = sim.get();
    Options options = DefaultOptions();
    options.background_unmap = false;
    options.cross_stream_reuse = Options::CrossStreamReuse::kAlways;
    alloc_ = std::make_unique<DeviceAllocator>(std::move(sim), options);
  }
  DevicePtr AllocateOk(std::size_t size, StreamId stream) {
    absl::StatusOr<DevicePtr> p = alloc_->Allocate(size, stream);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  }
  void FreeOk(DevicePtr p) { EXPECT_TRUE(alloc_->Free(p).ok()); }
  // Stream 0's 16 MiB block freed behind a kept one-page block, then (when
  // `synchronized`) the host waits for the device.
  struct Lent {
    DevicePtr a, keep;
  };
  Lent FreeOnStreamZero(bool synchronized) {
    Lent l{AllocateOk(16 * kMiB, 0), AllocateOk(kPage, 0)};
    FreeOk(l.a);
    sim_->Tick();
    if (synchronized) EXPECT_TRUE(sim_->SynchronizeDevice().ok());
    return l;
  }
  SimBackend* sim_;
  std::unique_ptr<DeviceAllocator> alloc_;
};

TEST_F(LendFinishedTest, FinishedMemoryIsLentWithNoWaitAndNoDriverCall) {
  const Lent l = FreeOnStreamZero(/*synchronized=*/true);
  const MemoryStats before = alloc_->GetStats();
  const SimBackend::Counts device = sim_->counts();
  const DevicePtr b = AllocateOk(16 * kMiB, 1);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(b, l.a) << "stream 1 did not take stream 0's finished memory";
  EXPECT_EQ(after.num_maps, before.num_maps) << "a loan maps nothing";
  EXPECT_EQ(after.num_device_alloc, before.num_device_alloc);
  EXPECT_EQ(after.reserved_bytes[kStatAll].current, before.reserved_bytes[kStatAll].current);
  EXPECT_EQ(after.num_cross_stream_reuses - before.num_cross_stream_reuses, 1);
  EXPECT_EQ(sim_->counts().stream_waits, device.stream_waits) << "ordered across streams";
  EXPECT_EQ(after.num_device_waits, before.num_device_waits);
  EXPECT_EQ(sim_->counts().event_waits, device.event_waits) << "the host waited";
  EXPECT_TRUE(IsValid(*alloc_));
  FreeOk(b);
  FreeOk(l.keep);
}

// cross_stream_reuse: memory another stream has freed serves a request
// whose own stream's memory would need pages mapped instead of being moved
// through the driver: once the lender's work on it is done, and also
// before, ordered on the device (a stream wait).
class CrossStreamReuseTest : public GrowableSegmentsTest {
 protected:
  void MakeBorrowing(bool borrow = true) {
    Options options = NoSlackMechanics();
    options.cross_stream_reuse =
        borrow ? Options::CrossStreamReuse::kAlways : Options::CrossStreamReuse::kNever;
    Make(options);
  }
  // Stream 0's 16 MiB block freed behind a kept one-page block, its work
  // still queued unless `finished`.
  struct Lent {
    DevicePtr a, keep;
  };
  Lent FreeOnStreamZero(bool finished) {
    Lent l{AllocateOk(16 * kMiB, 0), AllocateOk(kPage, 0)};
    FreeOk(l.a);
    if (finished) env_.CompleteAll();
    return l;
  }
  // Stream 1 asks for 16 MiB after `l`, and it is expected `lent` stream
  // 0's block (no driver call, no memory taken, one device-side wait and no
  // host wait: stream 0's work on it may still run) or not (its own new
  // memory, no ordering between the streams). Returns the block.
  DevicePtr AskOnStreamOne(const Lent& l, bool lent) {
    const MemoryStats before = alloc_->GetStats();
    const std::int64_t waits = Device().stream_waits;
    const DevicePtr b = AllocateOk(16 * kMiB, 1);
    const MemoryStats after = alloc_->GetStats();
    EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs) << "the host waited";
    if (lent) {
      EXPECT_EQ(b, l.a) << "stream 1 did not take stream 0's free memory";
      EXPECT_EQ(after.num_maps, before.num_maps) << "a borrow maps nothing";
      EXPECT_EQ(after.num_unmaps, before.num_unmaps);
      EXPECT_EQ(after.num_device_alloc, before.num_device_alloc);
      EXPECT_EQ(after.reserved_bytes[kStatAll].current, before.reserved_bytes[kStatAll].current);
      EXPECT_EQ(after.num_cross_stream_reuses - before.num_cross_stream_reuses, 1);
      EXPECT_EQ(Device().stream_waits - waits, 1);
    } else {
      EXPECT_NE(b, l.a) << "lent stream 0's memory";
      EXPECT_GT(after.num_maps, before.num_maps);
      EXPECT_EQ(after.num_cross_stream_reuses, before.num_cross_stream_reuses);
      EXPECT_EQ(Device().stream_waits, waits) << "the streams were ordered for nothing";
    }
    EXPECT_TRUE(IsValid(*alloc_));
    return b;
  }
};

TEST_F(CrossStreamReuseTest, AnotherStreamsFreedMemoryServesWithADeviceWaitAndNoDriverCall) {
  if (!env_.CanHoldEvents()) GTEST_SKIP() << "needs events that stay incomplete";
  MakeBorrowing();
  const Lent l = FreeOnStreamZero(/*finished=*/false);
  // Stream 0's work on the memory may still run: stream 1 waits for it on
  // the device, never the host.
  const DevicePtr b = AskOnStreamOne(l, /*lent=*/true);
  FreeEmptyAndEnd({b, l.keep});
}

TEST_F(CrossStreamReuseTest, ABorrowedBlocksFreeOrdersItsStreamAfterTheBorrowerAndFreesAtOnce) {
  if (!env_.CanHoldEvents()) GTEST_SKIP() << "needs events that stay incomplete";
  MakeBorrowing();
  const Lent l = FreeOnStreamZero(/*finished=*/false);
  const DevicePtr b = AllocateOk(16 * kMiB, 1);
  ASSERT_EQ(b, l.a);
  const std::int64_t waits = Device().stream_waits;
  FreeOk(b);  // stream 1's work on it still queued
  EXPECT_EQ(Device().stream_waits - waits, 1) << "stream 0 was not ordered after stream 1";
  // Stream 0's block again, free at once (no pending events): stream 0's
  // next request of that size takes it with no call and no wait.
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr again = AllocateOk(16 * kMiB, 0);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(again, l.a);
  EXPECT_EQ(after.num_maps, before.num_maps);
  EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs);
  EXPECT_EQ(after.num_cross_stream_reuses, before.num_cross_stream_reuses);
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({again, l.keep});
}

// cross_stream_reuse:auto (the default) lends only where the cache would
// otherwise move memory from under holes to map the request (its free
// memory past the low mark), and there as True does: no map, a device wait.
TEST_F(CrossStreamReuseTest, AutoLendsWhereTheCacheWouldMoveMemory) {
  if (!env_.CanHoldEvents()) GTEST_SKIP() << "needs events that stay incomplete";
  Options options = NoSlackMechanics();
  options.cross_stream_reuse = Options::CrossStreamReuse::kWhenMoving;
  Make(options);
  const Lent l = FreeOnStreamZero(/*finished=*/false);
  const DevicePtr b = AskOnStreamOne(l, /*lent=*/true);
  FreeEmptyAndEnd({b, l.keep});
}

// ... and within the low mark, where the cache takes new memory, it lends
// nothing: no ordering between the streams is added.
TEST_F(CrossStreamReuseTest, AutoTakesNewMemoryWithinTheLowMark) {
  if (!env_.CanHoldEvents()) GTEST_SKIP() << "needs events that stay incomplete";
  Options options = NoSlackMechanics();
  options.cross_stream_reuse = Options::CrossStreamReuse::kWhenMoving;
  // Room for new memory: the marks at five times the peak allocated.
  options.release_slack = options.release_slack_max = options.release_slack_hard = 4.0;
  Make(options);
  const Lent l = FreeOnStreamZero(/*finished=*/false);
  const DevicePtr b = AskOnStreamOne(l, /*lent=*/false);
  FreeEmptyAndEnd({b, l.keep});
}

TEST_F(CrossStreamReuseTest, OffEachStreamMovesMemoryThroughTheDriver) {
  MakeBorrowing(/*borrow=*/false);
  const Lent l = FreeOnStreamZero(/*finished=*/true);
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr b = AllocateOk(16 * kMiB, 1);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_NE(b, l.a);
  EXPECT_GT(after.num_maps, before.num_maps);
  EXPECT_EQ(after.num_cross_stream_reuses, 0);
  FreeEmptyAndEnd({b, l.keep});
}

TEST_F(CrossStreamReuseTest, ARefusedDeviceWaitBorrowsNothingAndLosesNothing) {
  MakeBorrowing();
  SimBackend* sim = env_.sim();
  if (sim == nullptr || !env_.CanHoldEvents()) GTEST_SKIP() << "injects failures";
  const Lent l = FreeOnStreamZero(/*finished=*/false);
  sim->FailNth(SimOp::kStreamWait, 1);
  const DevicePtr b = AllocateOk(16 * kMiB, 1);
  EXPECT_NE(b, l.a) << "borrowed without the ordering";
  EXPECT_EQ(alloc_->GetStats().num_cross_stream_reuses, 0);
  EXPECT_EQ(Device().failures_injected, 1);
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({b, l.keep});
}

TEST_F(CrossStreamReuseTest, AFreeWhoseWaitIsRefusedWaitsOnTheHostAndAFailedEventFreesNothing) {
  MakeBorrowing();
  SimBackend* sim = env_.sim();
  if (sim == nullptr || !env_.CanHoldEvents()) GTEST_SKIP() << "injects failures";
  const Lent l = FreeOnStreamZero(/*finished=*/true);
  const DevicePtr b = AllocateOk(16 * kMiB, 1);
  ASSERT_EQ(b, l.a);
  // The event that marks the borrower's work fails: the free fails whole.
  sim->FailNth(SimOp::kRecordEvent, 1);
  EXPECT_FALSE(alloc_->Free(b).ok());
  EXPECT_EQ(alloc_->GetStats().allocated_bytes[kStatAll].current,
            static_cast<std::int64_t>(16 * kMiB + kPage));
  EXPECT_TRUE(IsValid(*alloc_));
  // The device-side wait is refused: the host waits for that work instead.
  sim->FailNth(SimOp::kStreamWait, 1);
  const std::int64_t host_waits = alloc_->GetStats().num_stream_syncs;
  const std::int64_t device_waits = Device().stream_waits;
  FreeOk(b);
  EXPECT_EQ(Device().failures_injected, 2);
  EXPECT_EQ(Device().stream_waits, device_waits);
  EXPECT_EQ(alloc_->GetStats().num_stream_syncs - host_waits, 1) << "freed with no ordering";
  EXPECT_EQ(alloc_->GetStats().allocated_bytes[kStatAll].current,
            static_cast<std::int64_t>(kPage));
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({l.keep});
}

TEST_F(CrossStreamReuseTest, NothingIsBorrowedInACaptureAndAFreeDuringOneStaysPending) {
  MakeBorrowing();
  SimBackend* sim = env_.sim();
  if (sim == nullptr) GTEST_SKIP() << "simulates a capture";
  const Lent l = FreeOnStreamZero(/*finished=*/true);
  const DevicePtr b = AllocateOk(16 * kMiB, 1);
  ASSERT_EQ(b, l.a);
  FreeOk(l.keep);
  const DevicePtr c = AllocateOk(8 * kMiB, 0);
  FreeOk(c);
  env_.CompleteAll();
  ASSERT_TRUE(alloc_->BeginAllocateToPool(7, [](StreamId s) { return s == 3; }).ok());
  ASSERT_TRUE(sim->BeginCapture(3).ok());
  // Stream 2 would map; stream 0's free memory is not lent during a capture.
  const std::int64_t reuses = alloc_->GetStats().num_cross_stream_reuses;
  const DevicePtr d = AllocateOk(8 * kMiB, 2);
  EXPECT_EQ(alloc_->GetStats().num_cross_stream_reuses, reuses);
  FreeOk(b);  // no event calls now: pending until the capture is over
  EXPECT_EQ(alloc_->GetStats().active_bytes[kStatAll].current,
            static_cast<std::int64_t>(16 * kMiB + 8 * kMiB));
  ASSERT_TRUE(sim->EndCapture(3).ok());
  EXPECT_FALSE(sim->capture_invalidated()) << sim->capture_violation();
  ASSERT_TRUE(alloc_->EndAllocateToPool(7).ok());
  ASSERT_TRUE(alloc_->ReleasePool(7).ok());
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({d});
}

// release_slack_hard: a trim beyond the high mark that only a wait could
// finish leaves what it still lacks held, up to the hard mark and the memory
// limit, instead of draining a stream's queue for it; at the hard mark (or
// the limit) it waits as before.
TEST_F(GrowableSegmentsTest, ATrimShortOfWhatOnlyAWaitGivesLeavesItHeldUpToTheHardMark) {
  struct Case {
    const char* name;
    double hard;
    std::size_t limit;  // 0: none
    bool waits;
  };
  // Stream 0 keeps 96 MiB and frees an 8 MiB block (one chunk); stream 1 then
  // grows by 8 MiB, 4 MiB past the high mark (no slack but the two-page
  // minimum): only the freed chunk, whose stream may still use it, can
  // make up those 4 MiB.
  for (const Case& c : {Case{"hard mark past the shortfall", 0.1, 0, false},
                        Case{"no hard mark", 0.0, 0, true},
                        Case{"a memory limit 2 MiB past the high mark", 0.1, 110 * kMiB, true}}) {
    SCOPED_TRACE(c.name);
    Options options = NoSlackMechanics();
    options.release_slack_hard = c.hard;
    options.memory_limit = c.limit;
    Make(options);
    const DevicePtr keep = AllocateOk(96 * kMiB, 0);
    const DevicePtr a = AllocateOk(8 * kMiB, 0);
    FreeOk(a);
    const MemoryStats before = alloc_->GetStats();
    const DevicePtr grown = AllocateOk(8 * kMiB, 1);
    const MemoryStats after = alloc_->GetStats();
    const std::int64_t peak = after.allocated_bytes[kStatAll].peak;
    ASSERT_EQ(peak, static_cast<std::int64_t>(104 * kMiB));
    const std::int64_t reserved = after.reserved_bytes[kStatAll].current;
    if (c.waits) {
      EXPECT_EQ(after.num_waits_trim, before.num_waits_trim + 1);
      EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs + 1);
      // The freed memory went back, as far as the high mark asks (past
      // which all of its 8 MiB chunk goes; near the memory limit chunks are
      // 4 MiB, and one of them does).
      EXPECT_LE(reserved, peak + static_cast<std::int64_t>(4 * kMiB)) << "the chunk went back";
    } else {
      EXPECT_EQ(after.num_waits_trim, before.num_waits_trim) << "waited";
      EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs);
      // The freed chunk is still held: 8 MiB past the peak, within the hard
      // mark (10.4 MiB past it).
      EXPECT_EQ(reserved, peak + static_cast<std::int64_t>(8 * kMiB));
      EXPECT_LE(static_cast<double>(reserved), static_cast<double>(peak) * (1.0 + c.hard));
    }
    if (c.limit > 0) EXPECT_LE(reserved, static_cast<std::int64_t>(c.limit));
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
    FreeEmptyAndEnd({keep, grown});
  }
}

// Partial runs: beyond the high mark, one-page chunks freed moments ago
// fill part of a growth's two-page runs, left mapped where they were,
// instead of the growth waiting for their work to give them back.
TEST_F(GrowableSegmentsTest, OnePageChunksStillInUseFillPartOfATwoPageRunWithoutAWait) {
  Options options = NoSlackMechanics();
  options.max_map_chunk = 4 * kMiB;  // two pages
  Make(options);
  // Three one-page holes between kept one-page blocks, freed just now.
  std::vector<DevicePtr> kept, holes;
  for (int i = 0; i < 3; ++i) {
    holes.push_back(AllocateOk(2 * kMiB, 0));
    kept.push_back(AllocateOk(2 * kMiB, 0));
  }
  for (DevicePtr p : holes) FreeOk(p);
  // 8 MiB (two two-page runs) fits no hole; 2 MiB past the marks.
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr grown = AllocateOk(8 * kMiB, 0);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(after.num_waits_trim, before.num_waits_trim) << "waited";
  EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs);
  EXPECT_EQ(after.num_unmaps, before.num_unmaps) << "unmapped a chunk still in use";
  EXPECT_EQ(MappedBytes(kept[0], grown, 8 * kMiB), 8 * kMiB);
  // Within the marks: 6 MiB allocated before, 14 at the peak.
  EXPECT_LE(after.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(18 * kMiB));
  EXPECT_TRUE(IsValid(*alloc_));
  kept.push_back(grown);
  FreeEmptyAndEnd(kept);
}

// A block whose hole has no room past the busy pages: the next free block
// by size that takes the block without a wait, and maps no more for it,
// does (here the range's tail, past `c`).
TEST_F(GrowableSegmentsTest, ABlockThatWouldWaitInItsHoleGoesToTheNextFreeBlockThatDoesNot) {
  MakeWithSlack(0, 0);
  const auto [keep, c] = GrowOverARecentFree();
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr e = AllocateOk(24 * kMiB, 0);
  const MemoryStats stats = alloc_->GetStats();
  EXPECT_EQ(e, c + 40 * kMiB) << "not placed past c";
  EXPECT_EQ(stats.num_stream_syncs, before.num_stream_syncs) << "waited";
  EXPECT_EQ(stats.wait_ns, before.wait_ns);
  EXPECT_EQ(stats.num_waits_under_block, before.num_waits_under_block);
  // As much memory as the wait would have given it.
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(72 * kMiB));
  EXPECT_EQ(MappedBytes(keep, e, 24 * kMiB), 24 * kMiB);
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({keep, c, e});
}

// A block placed off busy pages maps no more than its best fit would: where
// every place at no more maps would wait (a hole whose first half a move
// has just left, its work queued; no room past it), the block waits there
// for the old work rather than go to the range's end, past `c`, which maps
// more, and gets memory of its own (not the moved chunks', which `c` now
// holds). The wait is the placement's time too, counted as a wait under a
// block.
TEST_F(GrowableSegmentsTest, ABlockWaitsWhereEveryPlaceThatMapsNoMoreWould) {
  Make(NoSlackMechanics());
  // [a 16 MiB][b 16 MiB][keep 8 MiB]: a freed with its work queued, then
  // 40 MiB (no fit in a's hole) moves a's memory, still mapped where it
  // was; b freed: a 32 MiB hole, its first half busy, its second mapped.
  const DevicePtr a = AllocateOk(16 * kMiB, 0);
  const DevicePtr b = AllocateOk(16 * kMiB, 0);
  const DevicePtr keep = AllocateOk(8 * kMiB, 0);
  FreeOk(a);
  const DevicePtr c = AllocateOk(40 * kMiB, 0);
  FreeOk(b);
  ASSERT_EQ(MappedBytes(keep, b, 16 * kMiB), 16 * kMiB);
  // 24 MiB: best fit is that hole, where it maps 16 MiB and waits; the end
  // of the range maps 24 MiB and waits for nothing.
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr e = AllocateOk(24 * kMiB, 0);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(e, a);
  EXPECT_EQ(after.num_waits_under_block, before.num_waits_under_block + 1);
  EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs + 1);
  // Its wait is in the placement's time, and counted under a block (its
  // unmap on the worker, waited for after it, only in wait_ns), by the
  // block's size.
  EXPECT_GT(after.wait_ns, before.wait_ns);
  EXPECT_GE(after.prepare_ns - before.prepare_ns, after.wait_ns - before.wait_ns);
  EXPECT_GT(after.wait_under_block_ns, before.wait_under_block_ns);
  EXPECT_LE(after.wait_under_block_ns - before.wait_under_block_ns,
            after.wait_ns - before.wait_ns);
  EXPECT_EQ(after.wait_trim_ns, before.wait_trim_ns);
  EXPECT_EQ(after.num_waits_trim, before.num_waits_trim);
  EXPECT_EQ(after.wait_under_block_bytes - before.wait_under_block_bytes,
            static_cast<std::int64_t>(24 * kMiB));
  EXPECT_EQ(MappedBytes(keep, e, 24 * kMiB), 24 * kMiB);
  ExpectDeviceHoldsReserved();
  // keep, c and e, nothing more: no memory counted twice.
  EXPECT_EQ(after.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(72 * kMiB));
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({keep, c, e});
}

// A block whose place in its free block lies over pages a move has just
// left, with the old work still queued, starts past them where the free
// block has room, and nothing waits.
TEST_F(GrowableSegmentsTest, ABlockStartsPastPagesAMoveJustLeftWhereItsHoleHasRoom) {
  Make(NoSlackMechanics());
  // [a 16 MiB][a2 16 MiB][keep 8 MiB]: a2 freed and its memory given
  // back, then a freed with its work still queued; 40 MiB (no fit in their
  // 32 MiB hole) moves a's memory, still mapped where it was.
  const DevicePtr a = AllocateOk(16 * kMiB, 0);
  const DevicePtr a2 = AllocateOk(16 * kMiB, 0);
  const DevicePtr keep = AllocateOk(8 * kMiB, 0);
  ASSERT_EQ(a2, a + 16 * kMiB);
  FreeOk(a2);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  FreeOk(a);
  const DevicePtr c = AllocateOk(40 * kMiB, 0);
  ASSERT_EQ(MappedBytes(keep, a, 32 * kMiB), 0u) << "the hole kept memory";

  // 16 MiB fits the 32 MiB hole best; its first half is busy.
  const MemoryStats before = alloc_->GetStats();
  const DevicePtr e = AllocateOk(16 * kMiB, 0);
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(e, a2) << "placed over the busy pages";
  EXPECT_EQ(after.num_waits_under_block, before.num_waits_under_block);
  EXPECT_EQ(after.num_stream_syncs, before.num_stream_syncs) << "waited";
  EXPECT_EQ(MappedBytes(keep, e, 16 * kMiB), 16 * kMiB);
  // As much memory as a wait at `a` would have left: the block maps as
  // many pages past the busy ones.
  EXPECT_EQ(after.reserved_bytes[kStatAll].current, static_cast<std::int64_t>(64 * kMiB));
  ExpectDeviceHoldsReserved();
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({keep, c, e});
}

// A moved chunk that cannot be mapped at its new address stays where it was
// (its old mapping was never undone): nothing lost, nothing counted twice,
// and the out-of-memory path's retry then succeeds. An old mapping whose
// unmap fails is tried again later.
TEST_F(GrowableSegmentsTest, FailuresOfAMoveWithinTheStreamLoseNothing) {
  MakeWithSlack(0, 0);
  SimBackend* sim = env_.sim();
  auto check = [&] {
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
  };
  // The first map of the growth is a's first chunk at its new address.
  const DevicePtr a = AllocateOk(24 * kMiB, 0);
  const DevicePtr keep = AllocateOk(8 * kMiB, 0);
  FreeOk(a);
  sim->FailNth(SimOp::kMap, 1);
  absl::StatusOr<DevicePtr> c = alloc_->Allocate(40 * kMiB, 0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Device().failures_injected, 1);
  EXPECT_EQ(alloc_->GetStats().num_alloc_retries, 1);
  check();
  FreeOk(*c);
  FreeOk(keep);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  ASSERT_EQ(Reserved(), 0);

  // The same move succeeds; after the old work is done, the old pages' unmap
  // fails once: they stay leaving, and go at the next trim.
  const std::int64_t syncs = alloc_->GetStats().num_stream_syncs;
  const auto [keep2, c2] = GrowOverARecentFree();
  ASSERT_EQ(alloc_->GetStats().num_stream_syncs, syncs);
  sim->CompleteStream(0);
  sim->FailNth(SimOp::kUnmap, 1);
  const DevicePtr d = AllocateOk(4 * kMiB, 1);
  EXPECT_EQ(Device().failures_injected, 2);
  check();
  for (DevicePtr p : {keep2, c2, d}) FreeOk(p);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  EXPECT_EQ(Reserved(), 0);
  check();
  alloc_.reset();
  EXPECT_TRUE(env_.NothingOutstanding());
}

// A capture refuses unmapping, so routing allocations to a private pool (what
// precedes one) first finishes the unmaps that moves left behind.
TEST_F(GrowableSegmentsTest, RoutingToAPoolFinishesDeferredUnmapsFirst) {
  MakeWithSlack(0, 0);
  SimBackend* sim = env_.sim();
  const auto [keep, c] = GrowOverARecentFree();
  const std::int64_t unmaps = alloc_->GetStats().num_unmaps;
  ASSERT_TRUE(alloc_->BeginAllocateToPool(7, [](StreamId s) { return s == 3; }).ok());
  EXPECT_GT(alloc_->GetStats().num_unmaps, unmaps) << "a leaving mapping outlived the routing";
  ASSERT_TRUE(sim->BeginCapture(3).ok());
  const DevicePtr g = AllocateOk(6 * kMiB, 3);
  ASSERT_TRUE(sim->EndCapture(3).ok());
  EXPECT_FALSE(sim->capture_invalidated()) << sim->capture_violation();
  ASSERT_TRUE(alloc_->EndAllocateToPool(7).ok());
  FreeOk(g);
  ASSERT_TRUE(alloc_->ReleasePool(7).ok());
  EXPECT_TRUE(IsValid(*alloc_));
  for (DevicePtr p : {keep, c}) FreeOk(p);
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  alloc_.reset();
  EXPECT_TRUE(env_.NothingOutstanding());
}

// The simulated GPU that lags (Config::gpu_lag), which the replay uses to
// count what a trim's waits cost: an event completes once the GPU has come
// that many ticks after it, and waiting before then drains the queue up to it.
TEST(SimBackendLagTest, EventsCompleteAfterTheLagAndWaitsAreCounted) {
  SimBackend::Config config;
  config.auto_complete_events = true;
  config.gpu_lag = 3;
  SimBackend sim(config);
  absl::StatusOr<EventHandle> early = sim.RecordEvent(0);
  ASSERT_TRUE(early.ok());
  for (int t = 0; t < 2; ++t) {
    sim.Tick();
    EXPECT_FALSE(*sim.QueryEvent(*early)) << "tick " << t + 1;
  }
  sim.Tick();
  EXPECT_TRUE(*sim.QueryEvent(*early));
  EXPECT_EQ(sim.counts().event_waits, 0);

  // Recorded at tick 3, waited for at tick 4: the GPU stood at tick 1.
  absl::StatusOr<EventHandle> late = sim.RecordEvent(0);
  absl::StatusOr<EventHandle> other = sim.RecordEvent(1);
  ASSERT_TRUE(late.ok() && other.ok());
  sim.Tick();
  ASSERT_TRUE(sim.SynchronizeEvent(*late).ok());
  EXPECT_EQ(sim.counts().event_waits, 1);
  EXPECT_EQ(sim.counts().waited_ticks, 2u);
  // The wait drained only its own stream's queue.
  EXPECT_FALSE(*sim.QueryEvent(*other));
  // An event already reached costs no wait.
  ASSERT_TRUE(sim.SynchronizeEvent(*late).ok());
  EXPECT_EQ(sim.counts().event_waits, 1);
  // A device synchronize drains every stream, waiting for what is queued.
  ASSERT_TRUE(sim.SynchronizeDevice().ok());
  EXPECT_TRUE(*sim.QueryEvent(*other));
  EXPECT_EQ(sim.counts().event_waits, 2);
  EXPECT_EQ(sim.counts().waited_ticks, 5u);
  for (EventHandle e : {*early, *late, *other}) sim.DestroyEvent(e);
}


// UnmapRun (one call over a run of mappings, the driver_cost probe's
// unmap_run) undoes whole mappings or nothing: a run that does not tile its
// mappings, a range not mapped throughout and a refused call each leave
// every mapping where it was, and say how much went (none).
TEST(SimBackendRunTest, UnmapRunTakesWholeMappingsOrNothing) {
  SimBackend sim;
  const std::size_t page = sim.PageSize();
  absl::StatusOr<DevicePtr> base = sim.ReserveAddressRange(8 * page);
  ASSERT_TRUE(base.ok()) << base.status();
  std::vector<PhysicalHandle> handles;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<PhysicalHandle> h = sim.CreatePhysical(page);
    ASSERT_TRUE(h.ok()) << h.status();
    handles.push_back(*h);
  }
  ASSERT_TRUE(sim.MapRun(*base, page, handles, {}).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(sim.WriteBytes(*base + (i + 1) * page - 1, std::string(1, 'x' + i)).ok());
  }

  std::size_t unmapped = 99;
  EXPECT_EQ(sim.UnmapRun(*base, 3 * page, 2 * page, &unmapped).code(),
            absl::StatusCode::kInvalidArgument);  // pages of two-page mappings
  EXPECT_EQ(unmapped, 0u);
  unmapped = 99;
  EXPECT_EQ(sim.UnmapRun(*base, 4 * page, page, &unmapped).code(),
            absl::StatusCode::kInvalidArgument);  // past the run
  EXPECT_EQ(unmapped, 0u);
  sim.FailNth(SimOp::kUnmap, 1);
  EXPECT_FALSE(sim.UnmapRun(*base, 3 * page, page, &unmapped).ok());
  EXPECT_EQ(unmapped, 0u);
  // All three mappings are still there, each with its byte.
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::string> kept = sim.ReadBytes(*base + (i + 1) * page - 1, 1);
    ASSERT_TRUE(kept.ok()) << "mapping " << i << ": " << kept.status();
    EXPECT_EQ(*kept, std::string(1, 'x' + i)) << "mapping " << i;
  }

  ASSERT_TRUE(sim.UnmapRun(*base, 3 * page, page, &unmapped).ok());
  EXPECT_EQ(unmapped, 3 * page);
  EXPECT_FALSE(sim.ReadBytes(*base, 1).ok());
  // The range is free for a new run.
  ASSERT_TRUE(sim.MapRun(*base, page, handles, {}).ok());
  ASSERT_TRUE(sim.UnmapRun(*base, 3 * page, page, nullptr).ok());
  for (PhysicalHandle h : handles) EXPECT_TRUE(sim.ReleasePhysical(h).ok());
  EXPECT_TRUE(sim.ReleaseAddressRange(*base, 8 * page).ok());
}

// The page table's held bits (what a cached allocation asks, Ready) follow
// every write of the table, across the edges of their 64-page words.
TEST(GrowableSegmentTableTest, HeldBitsFollowEveryWriteAcrossWordEdges) {
  constexpr std::size_t kPages = 200;  // four words, the last one in part
  GrowableSegment segment;
  segment.pages.assign(kPages, 0);
  segment.freed.assign(kPages, 0);
  segment.live.assign(kPages, 0);
  segment.held.assign((kPages + 63) / 64, 0);
  std::mt19937_64 rng(7);
  const PhysicalHandle values[] = {0, GrowableSegment::kLeaving, 0x10, 0x20};
  for (int round = 0; round < 2000; ++round) {
    const std::size_t first = rng() % kPages;
    const std::size_t n = rng() % (kPages - first + 1);
    segment.SetPages(first, n, values[rng() % 4]);
    const std::size_t lo = rng() % kPages;
    const std::size_t hi = lo + rng() % (kPages - lo);
    std::size_t held = 0;
    for (std::size_t p = lo; p <= hi; ++p) held += GrowableSegment::Holds(segment.pages[p]);
    ASSERT_EQ(segment.HeldIn(lo, hi), held) << "pages " << lo << ".." << hi;
    ASSERT_EQ(segment.AllHeld(lo, hi), held == hi - lo + 1) << "pages " << lo << ".." << hi;
    for (bool holding : {true, false}) {
      std::size_t next = lo;
      while (next < hi && GrowableSegment::Holds(segment.pages[next]) != holding) ++next;
      ASSERT_EQ(segment.NextRun(lo, hi, holding), next)
          << "pages " << lo << ".." << hi << (holding ? ", holding" : ", not holding");
    }
  }
  // Validate reads the bits too: the counts made to agree, one bit flipped.
  segment.mapped_pages = static_cast<std::size_t>(std::count_if(
      segment.pages.begin(), segment.pages.end(), [](PhysicalHandle h) {
        return GrowableSegment::Holds(h);
      }));
  segment.leaving_pages = static_cast<std::size_t>(
      std::count(segment.pages.begin(), segment.pages.end(), GrowableSegment::kLeaving));
  segment.mapped_end = kPages;
  segment.TrimMappedEnd();
  std::string why;
  ASSERT_TRUE(segment.Validate(&why)) << why;
  segment.held[130 / 64] ^= std::uint64_t{1} << (130 % 64);
  EXPECT_FALSE(segment.Validate(&why));
  EXPECT_THAT(why, ::testing::HasSubstr("held bit"));
}

// The hot slot: a free's block is held aside, and the next request of its
// size on its stream gets it back with no placement; every other call finds
// it coalesced and indexed, so nothing but host time differs from a free
// that coalesces at once.
TEST_F(GrowableSegmentsTest, AFreedBlockServesTheSameRequestAndEveryOtherCallSeesItFree) {
  Make();
  const DevicePtr keep = AllocateOk(4 * kMiB);
  const DevicePtr p = AllocateOk(2 * kMiB);  // (both of the large pool: one range)
  FreeOk(p);
  // The counters moved at the free, though the block is held aside.
  MemoryStats s = alloc_->GetStats();
  EXPECT_EQ(s.allocated_bytes[kStatAll].current, static_cast<std::int64_t>(4 * kMiB));
  EXPECT_EQ(s.active_bytes[kStatAll].current, static_cast<std::int64_t>(4 * kMiB));
  EXPECT_EQ(s.active[kStatAll].current, 1);
  EXPECT_TRUE(IsValid(*alloc_));
  // The same request: the same block, no driver call.
  const std::int64_t maps = s.num_maps, allocs = s.num_allocs;
  const DevicePtr q = AllocateOk(2 * kMiB);
  EXPECT_EQ(q, p);
  s = alloc_->GetStats();
  EXPECT_EQ(s.num_maps, maps);
  EXPECT_EQ(s.num_allocs, allocs + 1);
  EXPECT_EQ(s.allocated_bytes[kStatAll].current, static_cast<std::int64_t>(6 * kMiB));
  EXPECT_EQ(s.active_bytes[kStatAll].current, static_cast<std::int64_t>(6 * kMiB));
  EXPECT_EQ(s.requested_bytes[kStatAll].current, static_cast<std::int64_t>(6 * kMiB));
  // A report after a free sees the block coalesced with the free rest of
  // the range: two blocks, the kept one and one free.
  FreeOk(q);
  Snapshot snap = alloc_->TakeSnapshot();
  const SegmentInfo* seg = SegmentOf(snap, keep);
  ASSERT_NE(seg, nullptr);
  ASSERT_EQ(seg->blocks.size(), 2u);
  EXPECT_EQ(seg->blocks[1].address, p);
  EXPECT_EQ(seg->blocks[1].status, BlockStatus::kInactive);
  // A larger request after a free is placed as if the free had coalesced
  // at once: at the freed block's address, not past it.
  const DevicePtr r = AllocateOk(2 * kMiB);  // held again by the free below
  FreeOk(r);
  const DevicePtr larger = AllocateOk(3 * kMiB);
  EXPECT_EQ(larger, p);
  // Another stream's request does not take a block of stream 0.
  FreeOk(larger);
  const DevicePtr other = AllocateOk(3 * kMiB, 1);
  EXPECT_NE(other, p);
  EXPECT_TRUE(IsValid(*alloc_));
  FreeAllAndExpectNothingHeld({keep, other});
}

TEST_F(GrowableSegmentsTest, ADoubleFreeOfAHeldBlockFailsAndChangesNothing) {
  Make();
  const DevicePtr p = AllocateOk(kMiB);
  FreeOk(p);
  const MemoryStats before = alloc_->GetStats();
  absl::Status again = alloc_->Free(p);
  EXPECT_TRUE(absl::IsInvalidArgument(again)) << again;
  const MemoryStats after = alloc_->GetStats();
  EXPECT_EQ(after.allocated_bytes[kStatAll].current, before.allocated_bytes[kStatAll].current);
  EXPECT_EQ(after.active[kStatAll].current, 0);
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_TRUE(IsValid(*alloc_));
  // Nothing was lost: the same request still gets the memory.
  EXPECT_EQ(AllocateOk(kMiB), p);
  FreeAllAndExpectNothingHeld({p});
}

// A block another stream used (record_stream) waits for that stream's work
// as before: it is never held aside, so its own stream cannot take it back
// before that work is done.
TEST_F(GrowableSegmentsTest, ABlockUsedOnAnotherStreamIsNotHeldAside) {
  Make();
  const DevicePtr p = AllocateOk(kMiB, 0);
  ASSERT_TRUE(alloc_->RecordStream(p, 1).ok());
  FreeOk(p);
  EXPECT_EQ(alloc_->GetStats().active[kStatAll].current, 1) << "pending on stream 1's event";
  const DevicePtr q = AllocateOk(kMiB, 0);
  EXPECT_NE(q, p);
  env_.CompleteAll();
  EXPECT_TRUE(IsValid(*alloc_));
  FreeEmptyAndEnd({q});
}


// The hot slot changes no placement: a random run with record_stream, sizes
// that repeat and the GPU catching up now and then hands out the same
// addresses and makes the same driver calls as the same run where every
// free's block is returned at once (a report after each free flushes it:
// FlushedLock), so that every allocation takes the slow path. (One
// allocating stream and the unmap worker inline, so that a run repeats
// itself: with several streams whose events are pending, the order in which
// a hash map gives them back, which differs from one map to the next, can
// change a placement with or without the hot slot alike.)
TEST_F(GrowableSegmentsTest, HotSlotChangesNoPlacementAndNoDriverCall) {
  struct Step {
    DevicePtr ptr;
    std::int64_t reserved, maps, unmaps, allocated;
  };
  auto run = [&](bool flush_each_free) {
    Options options = env_.BaseOptions();
    options.background_unmap = false;
    Make(options);
    std::mt19937_64 rng(7);
    const std::size_t sizes[] = {512, 4096, 300 << 10, kMiB + 512, 3 * kMiB, 9 * kMiB, 20 * kMiB};
    std::vector<std::pair<DevicePtr, StreamId>> live;
    std::vector<Step> steps;
    for (int i = 0; i < 4000; ++i) {
      const std::uint64_t r = rng();
      if (live.size() < 8 || (r % 100 < 52 && live.size() < 200)) {
        const StreamId stream = 0;
        const DevicePtr p = AllocateOk(sizes[(r >> 16) % std::size(sizes)], stream);
        if ((r >> 24) % 10 == 0) EXPECT_TRUE(alloc_->RecordStream(p, 1).ok());
        live.emplace_back(p, stream);
      } else {
        // Mostly the newest block (a temporary), else any.
        const std::size_t k = (r >> 32) % 4 != 0 ? live.size() - 1 : (r >> 40) % live.size();
        FreeOk(live[k].first);
        if (flush_each_free) (void)alloc_->Fragmentation();
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      }
      if ((r >> 48) % 50 == 0) env_.CompleteAll();
      const MemoryStats s = alloc_->GetStats();
      steps.push_back({live.empty() ? 0 : live.back().first, s.reserved_bytes[kStatAll].current,
                       s.num_maps, s.num_unmaps, s.allocated_bytes[kStatAll].current});
    }
    std::vector<DevicePtr> rest;
    for (const auto& [p, stream] : live) rest.push_back(p);
    EXPECT_TRUE(IsValid(*alloc_));
    FreeEmptyAndEnd(rest);
    return steps;
  };
  const std::vector<Step> on = run(false);
  const std::vector<Step> off = run(true);
  ASSERT_EQ(on.size(), off.size());
  for (std::size_t i = 0; i < on.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("step ", i));
    ASSERT_EQ(on[i].ptr, off[i].ptr);
    ASSERT_EQ(on[i].reserved, off[i].reserved);
    ASSERT_EQ(on[i].maps, off[i].maps);
    ASSERT_EQ(on[i].unmaps, off[i].unmaps);
    ASSERT_EQ(on[i].allocated, off[i].allocated);
  }
}

}  // namespace
}  // namespace ccalloc::test
