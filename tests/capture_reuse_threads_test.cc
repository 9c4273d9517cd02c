// capture_reuse_threads_test.cc — graph_capture_record_stream_reuse with
// several threads in one capture.
//
// Each worker thread has a stream of the capture to allocate on and one to
// use its blocks on; it frees a block its user stream used, checks that the
// block is not reused before its stream waited for the user's work and is
// reused right after, and frees the rest. So the deferred list, its
// positions and the promotions race with each other, with a thread that
// changes the run-time settings (SetRuntimeOptions, the setting staying on)
// and one that reads the counters, snapshots and invariants, and with the
// simulated capture's graph growing from every thread. Labelled `threads`
// in ctest (and run under TSan).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

constexpr int kWorkers = 4;
constexpr int kRounds = 400;
constexpr StreamId kOrigin = 1;
constexpr PoolId kPool = 3;
constexpr std::size_t kBytes = 32;  // a small block, as PyTorch's tests use

StreamId AllocStream(int t) { return static_cast<StreamId>(100 + t); }
StreamId UserStream(int t) { return static_cast<StreamId>(200 + t); }

template <typename Config>
class CaptureReuseThreadsTest : public AllocatorTest<Config> {};

using SimConfigs = ::testing::Types<SimClassic, SimGrowable>;
TYPED_TEST_SUITE(CaptureReuseThreadsTest, SimConfigs, EnvNames);

TYPED_TEST(CaptureReuseThreadsTest, WorkersReuseTheirBlocksInOneCapture) {
  Options options = this->env_.BaseOptions();
  options.graph_capture_record_stream_reuse = true;
  DeviceAllocator& alloc = this->Make(options, std::size_t{2} << 30);
  SimBackend& sim = *this->env_.sim();
  ASSERT_TRUE(sim.BeginCapture(kOrigin).ok());
  ASSERT_TRUE(alloc
                  .BeginAllocateToPool(kPool,
                                       [](StreamId s) { return s == kOrigin || s >= 100; })
                  .ok());
  for (int t = 0; t < kWorkers; ++t) ASSERT_TRUE(WaitStream(sim, AllocStream(t), kOrigin));

  std::vector<std::string> failures(kWorkers);
  std::atomic<int> running{kWorkers};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWorkers; ++t) {
    threads.emplace_back([&, t] {
      const StreamId mine = AllocStream(t), user = UserStream(t);
      auto fail = [&](const std::string& why) {
        if (failures[t].empty()) failures[t] = why;
      };
      auto allocate = [&]() -> DevicePtr {
        absl::StatusOr<DevicePtr> p = alloc.Allocate(kBytes, mine);
        if (!p.ok()) fail(p.status().ToString());
        return p.ok() ? *p : 0;
      };
      auto free = [&](DevicePtr p) {
        if (absl::Status s = alloc.Free(p); !s.ok()) fail(s.ToString());
      };
      for (int round = 0; round < kRounds && failures[t].empty(); ++round) {
        const DevicePtr before = allocate();
        const DevicePtr used = allocate();
        const DevicePtr after = allocate();
        if (::testing::AssertionResult r = WaitStream(sim, user, mine); !r) fail(r.message());
        sim.Launch(user);  // reads `used`
        if (absl::Status s = alloc.RecordStream(used, user); !s.ok()) fail(s.ToString());
        free(used);
        const DevicePtr early = allocate();
        if (early == used) fail(absl::StrCat("round ", round, ": reused before the join"));
        if (::testing::AssertionResult r = WaitStream(sim, mine, user); !r) fail(r.message());
        sim.Launch(mine);
        const DevicePtr late = allocate();
        if (late != used) fail(absl::StrCat("round ", round, ": not reused after the join"));
        for (DevicePtr p : {before, after, early, late}) free(p);
      }
      running.fetch_sub(1);
    });
  }
  // Run-time settings change meanwhile (the setting stays on), and the
  // reports and invariants are read.
  threads.emplace_back([&] {
    Options settings = options;
    for (int i = 0; running.load() > 0; ++i) {
      settings.max_split_size = i % 2 == 0 ? 64 * kMiB : kNoMaxSplit;
      alloc.SetRuntimeOptions(settings);
      std::this_thread::yield();
    }
  });
  std::string invalid;
  threads.emplace_back([&] {
    while (running.load() > 0) {
      (void)alloc.GetStats();
      (void)alloc.TakeSnapshot();
      std::string why;
      if (!alloc.Validate(&why) && invalid.empty()) invalid = why;
    }
  });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kWorkers; ++t) EXPECT_TRUE(failures[t].empty()) << t << ": " << failures[t];
  EXPECT_TRUE(invalid.empty()) << invalid;

  // Every block came back: nothing allocated, nothing pending.
  const MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(stats.allocation[kStatAll].current, 0);
  EXPECT_EQ(stats.active[kStatAll].current, 0);
  for (int t = 0; t < kWorkers; ++t) {
    ASSERT_TRUE(WaitStream(sim, kOrigin, AllocStream(t)));
    ASSERT_TRUE(WaitStream(sim, kOrigin, UserStream(t)));
  }
  ASSERT_TRUE(alloc.EndAllocateToPool(kPool).ok());
  absl::Status end = sim.EndCapture(kOrigin);
  EXPECT_TRUE(end.ok()) << end;
  EXPECT_FALSE(sim.capture_invalidated()) << sim.capture_violation();
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.ReleasePool(kPool).ok());
}

}  // namespace
}  // namespace ccalloc::test
