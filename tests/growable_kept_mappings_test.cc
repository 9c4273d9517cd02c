// growable_kept_mappings_test.cc — keep_old_mappings (the default) on the
// simulated device: a move leaves the old mapping in place, and memory moved
// away comes back with no driver call while it is free where it went, but
// not while it is in use, pending or possibly still used by another stream
// there; mapped_fit counts memory that comes back as held; a failed unmap of
// an old mapping loses nothing, and during a capture a block goes past an
// old mapping that could not be unmapped. The GrowableSegmentsTest fixture is
// in tests/support/growable_fixture.h.
#include <cstddef>
#include <cstdint>
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
}  // namespace
}  // namespace ccalloc::test
