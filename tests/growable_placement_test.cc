// growable_placement_test.cc — where growable segments place a block when
// free memory lies on pages moved away or still in use, on the simulated
// device: mapped_fit puts requests on memory still mapped; a move within one
// stream never waits and unmaps once the work is done; a block goes past,
// or next to, pages a move has just left rather than wait, and waits only
// where every place that maps no more would; a failed move loses nothing;
// routing to a private pool finishes deferred unmaps first. The
// GrowableSegmentsTest fixture is in tests/support/growable_fixture.h.
#include <cstddef>
#include <cstdint>
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
}  // namespace
}  // namespace ccalloc::test
