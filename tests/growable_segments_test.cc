// growable_segments_test.cc — what only growable (expandable) segments do, on
// the simulated device: blocks always coalesce, reserved memory is the mapped
// pages, a failed grow leaves nothing half mapped, empty_cache unmaps free
// pages, ccalloc's own clocks count host time where driver work is done, and
// the hot slot (a freed block held aside for the next request of its size)
// changes no placement. Also the simulated device's lag and UnmapRun, and the
// page table's held bits. The moves and trims of free memory are in
// growable_trims_test.cc and growable_placement_test.cc, old mappings kept in
// growable_kept_mappings_test.cc, loans between streams in
// growable_cross_stream_test.cc; the fixture in tests/support/growable_fixture.h.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/segments/growable_segments.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"
#include "tests/support/growable_fixture.h"

namespace ccalloc::test {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

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
  // Three maps, three handles: a chunk of one page each, in address order.
  EXPECT_THAT(seg.chunks, ElementsAre(Pair(seg.address, seg.address + kPage),
                                      Pair(seg.address + kPage, seg.address + 2 * kPage),
                                      Pair(seg.address + 2 * kPage, seg.address + 3 * kPage)));

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
