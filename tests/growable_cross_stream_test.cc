// growable_cross_stream_test.cc — cross_stream_reuse on the simulated
// device: memory another stream has freed is lent to a request instead of
// being moved through the driver, with no wait once the lender's work is
// done (also on a GPU far behind the host, once the host has synchronized)
// and ordered by a device-side wait before; what auto and off lend; a
// borrowed block's free; refused waits, failed events and captures lose
// nothing. The GrowableSegmentsTest fixture is in
// tests/support/growable_fixture.h.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/device_allocator.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"
#include "tests/support/growable_fixture.h"

namespace ccalloc::test {
namespace {

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
}  // namespace
}  // namespace ccalloc::test
