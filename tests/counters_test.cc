// Counter semantics follow torch.cuda.memory_stats(): peaks reset to the
// current value, accumulated totals reset to zero while current stays, and
// Validate() holds across both.
#include "stats/counters.h"

#include <memory>
#include <thread>

#include "allocator/cache/device_allocator.h"
#include "allocator/backends/sim_backend.h"
#include "gtest/gtest.h"

namespace ccalloc {
namespace {

TEST(StatTest, TracksCurrentPeakAndTotals) {
  Stat s;
  s.Increase(100);
  s.Increase(50);
  s.Decrease(120);
  EXPECT_EQ(s.current, 30);
  EXPECT_EQ(s.peak, 150);
  EXPECT_EQ(s.allocated, 150);
  EXPECT_EQ(s.freed, 120);
  EXPECT_TRUE(s.Validate());
  s.ResetPeak();
  EXPECT_EQ(s.peak, 30);
  EXPECT_TRUE(s.Validate());
}

TEST(StatTest, AccumulatedResetKeepsCurrentAndStaysValid) {
  Stat s;
  s.Increase(100);
  s.Decrease(40);
  s.ResetAccumulated();
  EXPECT_EQ(s.current, 60);
  EXPECT_EQ(s.allocated, 0);
  EXPECT_EQ(s.freed, 0);
  EXPECT_TRUE(s.Validate());
  s.Decrease(60);
  s.Increase(10);
  EXPECT_EQ(s.current, 10);
  EXPECT_EQ(s.freed, 60);
  EXPECT_EQ(s.allocated, 10);
  EXPECT_TRUE(s.Validate());
  s.current += 1;  // a counter out of step with its totals is caught
  EXPECT_FALSE(s.Validate());
}

TEST(MemoryStatsTest, AllocatorStaysValidAcrossResets) {
  SimBackend::Config config;
  config.auto_complete_events = true;
  DeviceAllocator allocator(std::make_unique<SimBackend>(config), DefaultOptions());
  absl::StatusOr<DevicePtr> a = allocator.Allocate(3 << 20, 0);
  absl::StatusOr<DevicePtr> b = allocator.Allocate(4096, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  allocator.ResetAccumulatedStats();
  allocator.ResetPeakStats();
  std::string why;
  EXPECT_TRUE(allocator.Validate(&why)) << why;
  ASSERT_TRUE(allocator.Free(*a).ok());
  EXPECT_TRUE(allocator.Validate(&why)) << why;
  const MemoryStats stats = allocator.GetStats();
  EXPECT_EQ(stats.allocation[kStatAll].current, 1);
  EXPECT_EQ(stats.allocation[kStatAll].allocated, 0);
  EXPECT_EQ(stats.allocation[kStatAll].freed, 1);
  EXPECT_EQ(stats.allocated_bytes[kStatAll].peak, std::int64_t{(3 << 20) + 4096});
  ASSERT_TRUE(allocator.Free(*b).ok());
  EXPECT_TRUE(allocator.Validate(&why)) << why;
}

// Driver calls are counted by the thread that makes them: a call made inside
// BackgroundCalls (the unmap worker) is a background call, any other one the
// allocating thread's.
TEST(DriverCallsTest, CountedByThread) {
  SimBackend backend;
  ASSERT_TRUE(backend.RecordEvent(0).ok());
  std::thread worker([&backend] {
    const BackgroundCalls background;
    EXPECT_TRUE(BackgroundCalls::active());
    ASSERT_TRUE(backend.RecordEvent(0).ok());
    ASSERT_TRUE(backend.RecordEvent(0).ok());
  });
  worker.join();
  EXPECT_FALSE(BackgroundCalls::active());
  const DriverCallTotals t = backend.driver_calls();
  EXPECT_EQ(t.calls, 1);
  EXPECT_EQ(t.background_calls, 2);
}

// The allocator's statistics carry the calls made since the accumulated
// counters were last reset: a cached allocation makes none, new memory some,
// and the unmaps of an emptied cache go to the worker's count when it runs on
// its own thread (growable segments' default). One page, so one chunk and
// one unmap job: with several, a caller whose jobs come more than the
// worker's quiet time apart (a slow build: ASan) runs the queue itself.
TEST(DriverCallsTest, StatsCountCallsSinceReset) {
  SimBackend::Config config;
  config.auto_complete_events = true;
  DeviceAllocator allocator(std::make_unique<SimBackend>(config), DefaultOptions());
  absl::StatusOr<DevicePtr> a = allocator.Allocate(2 << 20, 0);
  ASSERT_TRUE(a.ok());
  const MemoryStats grown = allocator.GetStats();
  EXPECT_GT(grown.driver_calls, 0);
  ASSERT_TRUE(allocator.Free(*a).ok());
  allocator.ResetAccumulatedStats();
  EXPECT_EQ(allocator.GetStats().driver_calls, 0);
  absl::StatusOr<DevicePtr> again = allocator.Allocate(2 << 20, 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *a);
  EXPECT_EQ(allocator.GetStats().driver_calls, 0) << "a cached block needs no driver call";
  ASSERT_TRUE(allocator.Free(*again).ok());
  ASSERT_TRUE(allocator.EmptyCache().ok());
  ASSERT_TRUE(allocator.FinishBackgroundWork().ok());
  const MemoryStats emptied = allocator.GetStats();
  EXPECT_GT(emptied.driver_calls + emptied.background_driver_calls, 0);
  EXPECT_GT(emptied.background_driver_calls, 0) << "the unmaps run on the worker";
  EXPECT_EQ(emptied.driver_ns, 0) << "the simulated device takes no time";
}

}  // namespace
}  // namespace ccalloc
