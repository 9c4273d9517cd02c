// tags_threads_test.cc — tags under eight threads (labelled `threads`, so it
// also runs under TSan): each thread allocates under its own tag, changes
// its tag between operations, hands blocks to other threads that free them
// under tags of their own, while a reader takes the per-tag counts and
// validates the allocator. Afterwards every tag's bytes are zero and the
// counts always added up.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "allocator/cache/device_allocator.h"
#include "gtest/gtest.h"
#include "stats/tags.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

constexpr int kThreads = 8;
constexpr int kOpsPerThread = 4000;

template <typename Config>
class TagsThreadsTest : public AllocatorTest<Config> {};
using SimConfigs = ::testing::Types<SimClassic, SimGrowable>;
TYPED_TEST_SUITE(TagsThreadsTest, SimConfigs, EnvNames);

TYPED_TEST(TagsThreadsTest, TagsCountUnderRacingAllocationsAndForeignFrees) {
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{2} << 30);
  // Blocks handed between threads: whoever takes one frees it.
  absl::Mutex mu;
  std::deque<DevicePtr> handed;  // guarded by mu
  std::vector<TagId> tags;
  for (int t = 0; t < 2 * kThreads; ++t) tags.push_back(InternTag("race/" + std::to_string(t)));

  std::atomic<bool> done{false};
  std::atomic<int> bad_totals{0};
  std::thread reader([&] {
    while (!done.load()) {
      std::int64_t total = 0;
      for (const TagUsage& u : alloc.TagStats()) {
        if (u.current_bytes < 0 || u.peak_bytes < u.current_bytes) bad_totals.fetch_add(1);
        total += u.current_bytes;
      }
      if (total < 0) bad_totals.fetch_add(1);
      std::string why;
      if (!alloc.Validate(&why)) bad_totals.fetch_add(1);
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(77 + t);
      std::vector<DevicePtr> mine;
      for (int i = 0; i < kOpsPerThread; ++i) {
        SetCurrentTag(tags[rng() % tags.size()]);
        const int roll = static_cast<int>(rng() % 100);
        if (roll < 45 || mine.empty()) {
          absl::StatusOr<DevicePtr> p =
              alloc.Allocate(std::size_t{512} << (rng() % 14), static_cast<StreamId>(t % 3));
          if (p.ok()) mine.push_back(*p);
        } else if (roll < 70) {
          const std::size_t k = rng() % mine.size();
          EXPECT_TRUE(alloc.Free(mine[k]).ok());
          mine[k] = mine.back();
          mine.pop_back();
        } else if (roll < 85) {
          absl::MutexLock lock(&mu);
          handed.push_back(mine.back());
          mine.pop_back();
        } else {
          DevicePtr p = 0;
          {
            absl::MutexLock lock(&mu);
            if (!handed.empty()) {
              p = handed.front();
              handed.pop_front();
            }
          }
          if (p != 0) EXPECT_TRUE(alloc.Free(p).ok());
        }
      }
      for (DevicePtr p : mine) EXPECT_TRUE(alloc.Free(p).ok());
      SetCurrentTag(kNoTag);
    });
  }
  for (std::thread& th : threads) th.join();
  {
    absl::MutexLock lock(&mu);
    for (DevicePtr p : handed) EXPECT_TRUE(alloc.Free(p).ok());
    handed.clear();
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(bad_totals.load(), 0) << "counts seen inconsistent while racing";
  for (const TagUsage& u : alloc.TagStats()) {
    EXPECT_EQ(u.current_bytes, 0) << TagName(u.tag);
    EXPECT_EQ(u.blocks, 0) << TagName(u.tag);
  }
  EXPECT_EQ(alloc.GetStats().allocated_bytes[kStatAll].current, 0);
}

}  // namespace
}  // namespace ccalloc::test
