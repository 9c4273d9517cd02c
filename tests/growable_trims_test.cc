// growable_trims_test.cc — when growable segments move or give back free
// memory, and which, on the simulated device: free pages move before new
// memory is taken; the slack marks (release_slack low, max and hard, loose
// with room and tight near the end of memory) decide when a growth trims and
// when it may wait for queued work; free marks tell that old frees are done;
// a trim takes the memory freed longest ago; hold_reserved keeps memory
// held once under churn; a failed unmap during a trim loses nothing. The
// GrowableSegmentsTest fixture is in tests/support/growable_fixture.h.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/device_allocator.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"
#include "tests/support/growable_fixture.h"

namespace ccalloc::test {
namespace {

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
}  // namespace
}  // namespace ccalloc::test
