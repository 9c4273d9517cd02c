// Threads sharing a MemPool with an allocator of its own
// (allocator/torch/source_pools.h) through the plugin's C functions, on a
// simulated device; labelled `threads`, so CI runs it under ThreadSanitizer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "python/ccalloc/csrc/ccalloc_torch.h"
#include "tests/support/fake_pool_allocator.h"

namespace {

using ccalloc::test::FakeAllocator;

int64_t Figure(int device, bool reserved) {
  ccalloc_torch_stats s{};
  EXPECT_EQ(ccalloc_torch_get_stats(device, &s), 0);
  return reserved ? s.reserved_bytes[0].current : s.allocated_bytes[0].current;
}

// Threads allocating and freeing in one pool at once (its allocator's calls
// are serialised by the pools' lock, so the fake needs none): every block is
// freed, the figures return to zero, and the memory all goes back.
TEST(TorchSourcePoolsThreadsTest, ThreadsShareAPool) {
  setenv("CCALLOC_TORCH_SIMULATE", "2GiB", 1);
  const int dev = 54;
  FakeAllocator fake;
  uint64_t pool = 0;
  ASSERT_EQ(ccalloc_torch_source_pool_create(dev, &FakeAllocator::Alloc, &FakeAllocator::Free,
                                             &fake, &pool),
            0)
      << ccalloc_torch_last_error();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<void*> held;
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        const std::size_t size = (static_cast<std::size_t>(i * 7 + t) % 5 + 1) * 300 * 1024;
        if (ccalloc_torch_source_pool_malloc(pool, size, nullptr, &p) != 0) ++failures[t];
        held.push_back(p);
        if (held.size() > 3) {
          if (ccalloc_torch_free_ptr(held.front()) != 0) ++failures[t];
          held.erase(held.begin());
        }
      }
      for (void* p : held) {
        if (ccalloc_torch_free_ptr(p) != 0) ++failures[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(Figure(dev, false), 0);
  ASSERT_EQ(ccalloc_torch_source_pool_release(pool), 0);
  EXPECT_EQ(fake.frees.size(), fake.allocs.size()) << "every segment went back";
  EXPECT_EQ(Figure(dev, true), 0);
}

}  // namespace
