// allocator_threads_test.cc — eight threads on one allocator.
//
// Each thread runs the seeded random op stream of allocator_fixture.h on its
// own blocks and its own stream, records its blocks on the other threads'
// streams and completes streams at random, so frees, pending blocks, event
// processing, EmptyCache and Validate() all race with each other. Afterwards
// the invariants hold, the counters agree with what the threads hold, and no
// two live blocks overlap. Labelled `threads` in ctest (and run under TSan).
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

constexpr int kThreads = 8;
constexpr std::int64_t kOpsPerThread = 20000;

template <typename Config>
class AllocatorThreadsTest : public AllocatorTest<Config> {};

using SimConfigs = ::testing::Types<SimClassic, SimGrowable>;
TYPED_TEST_SUITE(AllocatorThreadsTest, SimConfigs, EnvNames);

TYPED_TEST(AllocatorThreadsTest, RandomOperationsOnEightThreads) {
  // 2 GiB is several times what the threads reserve at their peak (about
  // 0.35 GiB, depending on the interleaving); a small simulated
  // device keeps the page tables of growable segments (which span the device)
  // small, and with them the cost of the core's per-operation checks in debug
  // builds.
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{2} << 30);
  std::vector<StreamId> all_streams;
  for (int t = 0; t < kThreads; ++t) all_streams.push_back(static_cast<StreamId>(t + 1));

  std::vector<ReferenceModel> models(kThreads);
  std::vector<RandomOpsResult> results(kThreads);
  std::vector<::testing::AssertionResult> outcomes(kThreads, ::testing::AssertionSuccess());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      RandomOpsConfig config;
      config.seed = 1000 + static_cast<std::uint64_t>(t);
      config.operations = kOpsPerThread;
      config.max_size = 8 * kMiB;
      config.max_live = 24;
      config.empty_cache_per_mille = 1;
      config.streams = {all_streams[t]};
      config.other_streams = all_streams;
      // The counters are shared by all threads: only the end state is
      // compared. Validate() still runs concurrently with everything else.
      config.check_counters = false;
      config.validate_every = 2000;
      config.snapshot_every = 0;
      outcomes[t] = RunRandomOps(alloc, this->env_, config, models[t], &results[t]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(outcomes[t]) << "thread " << t;
    EXPECT_GT(results[t].allocations, kOpsPerThread / 4) << "thread " << t;
    EXPECT_GT(results[t].record_streams, 0) << "thread " << t;
  }

  // Every thread's blocks together: no overlaps across threads, and the
  // counters are the sum of what the threads hold.
  ASSERT_TRUE(IsValid(alloc));
  ReferenceModel all;
  std::int64_t count = 0;
  std::int64_t requested = 0;
  std::int64_t rounded = 0;
  for (const ReferenceModel& model : models) {
    for (const auto& [ptr, block] : model.live()) {
      ASSERT_TRUE(all.Add(ptr, block));
      ++count;
      requested += static_cast<std::int64_t>(block.requested);
      rounded += static_cast<std::int64_t>(block.rounded);
    }
  }
  const MemoryStats stats = alloc.GetStats();
  EXPECT_TRUE(stats.Validate());
  EXPECT_EQ(stats.allocation[kStatAll].current, count);
  EXPECT_EQ(stats.requested_bytes[kStatAll].current, requested);
  EXPECT_GE(stats.allocated_bytes[kStatAll].current, rounded);
  EXPECT_TRUE(all.MatchesSnapshot(alloc.TakeSnapshot()));

  for (const auto& [ptr, block] : all.live()) ASSERT_TRUE(alloc.Free(ptr).ok());
  this->env_.CompleteAll();
  ASSERT_TRUE(alloc.EmptyCache().ok());
  const MemoryStats end = alloc.GetStats();
  EXPECT_EQ(end.allocation[kStatAll].current, 0);
  EXPECT_EQ(end.active[kStatAll].current, 0);
  EXPECT_EQ(end.reserved_bytes[kStatAll].current, 0);
  EXPECT_EQ(this->env_.BytesInUse(), 0);
  this->alloc_.reset();
  EXPECT_TRUE(this->env_.NothingOutstanding());
}

}  // namespace
}  // namespace ccalloc::test
