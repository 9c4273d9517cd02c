// MemPools with an allocator of their own (allocator/torch/source_pools.h)
// through the plugin's C functions (python/ccalloc/csrc/ccalloc_torch.h), on
// a simulated device: the pool's allocator is called once per segment of
// PyTorch's sizes, blocks are carved and cached, memory goes back to it at
// empty_cache or, once released, with the last block; the device's figures
// count the pool. Each test uses devices of its own (allocators live for the
// whole process).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "python/ccalloc/csrc/ccalloc_torch.h"
#include "tests/support/fake_pool_allocator.h"

namespace {

using ccalloc::test::FakeAllocator;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr int kOutOfMemory = 1;  // CCALLOC_OUT_OF_MEMORY

struct Visit {
  std::vector<ccalloc_torch_segment> segments;
  std::size_t blocks = 0;
  static void OnSegment(void* ctx, const ccalloc_torch_segment* s) {
    static_cast<Visit*>(ctx)->segments.push_back(*s);
  }
  static void OnBlock(void* ctx, const ccalloc_torch_block*) { ++static_cast<Visit*>(ctx)->blocks; }
};

class TorchSourcePoolsTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("CCALLOC_TORCH_SIMULATE", "2GiB", 1); }

  uint64_t Create(int device, FakeAllocator* fake) {
    uint64_t handle = 0;
    EXPECT_EQ(ccalloc_torch_source_pool_create(device, &FakeAllocator::Alloc, &FakeAllocator::Free,
                                               fake, &handle),
              0)
        << ccalloc_torch_last_error();
    EXPECT_GT(handle, 0u);
    return handle;
  }
  void* Malloc(uint64_t handle, std::size_t size, void* stream = nullptr) {
    void* p = nullptr;
    EXPECT_EQ(ccalloc_torch_source_pool_malloc(handle, size, stream, &p), 0)
        << ccalloc_torch_last_error();
    EXPECT_NE(p, nullptr);
    return p;
  }
  static Visit Segments(uint64_t handle) {
    Visit v;
    EXPECT_EQ(ccalloc_torch_source_pool_visit_snapshot(handle, &Visit::OnSegment,
                                                       &Visit::OnBlock, &v),
              0)
        << ccalloc_torch_last_error();
    return v;
  }
  static ccalloc_torch_stats Stats(int device) {
    ccalloc_torch_stats s{};
    EXPECT_EQ(ccalloc_torch_get_stats(device, &s), 0);
    return s;
  }
};

// PyTorch's test_mempool_with_allocator: two 1 MiB tensors share one 2 MiB
// segment, the third needs a second; every segment is one call of the pool's
// allocator, with the request's stream; the memory stays cached when the
// tensors go and goes back at empty_cache.
TEST_F(TorchSourcePoolsTest, SegmentsComeFromThePoolsAllocatorAndAreCached) {
  const int dev = 50;
  FakeAllocator fake;
  const uint64_t pool = Create(dev, &fake);
  void* stream = reinterpret_cast<void*>(0x1234);
  void* a = Malloc(pool, kMiB, stream);
  EXPECT_EQ(fake.allocs, (std::vector<std::size_t>{2 * kMiB}));
  EXPECT_EQ(fake.streams, (std::vector<void*>{stream}));
  EXPECT_EQ(Segments(pool).segments.size(), 1u);
  void* b = Malloc(pool, kMiB, stream);
  EXPECT_EQ(fake.allocs.size(), 1u) << "the second 1 MiB fits in the first segment";
  EXPECT_EQ(Segments(pool).segments.size(), 1u);
  void* c = Malloc(pool, kMiB, stream);
  EXPECT_EQ(fake.allocs.size(), 2u);
  EXPECT_EQ(Segments(pool).segments.size(), 2u);
  // A large request: a segment of PyTorch's large size.
  void* d = Malloc(pool, 3 * kMiB, stream);
  EXPECT_EQ(fake.allocs.back(), 20 * kMiB);

  // The device's figures count the pool (no other allocator on this device).
  ccalloc_torch_stats s = Stats(dev);
  EXPECT_EQ(s.allocated_bytes[0].current, static_cast<int64_t>(6 * kMiB));
  EXPECT_EQ(s.reserved_bytes[0].current, static_cast<int64_t>(24 * kMiB));
  EXPECT_EQ(s.segment[0].current, 3);

  for (void* p : {a, b, c, d}) ASSERT_EQ(ccalloc_torch_free_ptr(p), 0) << ccalloc_torch_last_error();
  EXPECT_TRUE(fake.frees.empty()) << "freed blocks stay cached in the pool";
  EXPECT_EQ(Stats(dev).allocated_bytes[0].current, 0);
  // Cached memory is taken again without a call.
  void* again = Malloc(pool, kMiB, stream);
  EXPECT_EQ(fake.allocs.size(), 3u);
  ASSERT_EQ(ccalloc_torch_free_ptr(again), 0);

  ASSERT_EQ(ccalloc_torch_source_pool_empty_cache(pool), 0) << ccalloc_torch_last_error();
  EXPECT_EQ(fake.frees.size(), 3u);
  EXPECT_EQ(Stats(dev).reserved_bytes[0].current, 0);
  EXPECT_TRUE(Segments(pool).segments.empty());
  ASSERT_EQ(ccalloc_torch_source_pool_release(pool), 0) << ccalloc_torch_last_error();
}

// PyTorch's test_tensor_delete_after_allocator_delete: the pool is released
// (MemPool's destructor) while a tensor lives; its memory goes back through
// the pool's allocator only with that tensor, then the pool is gone.
TEST_F(TorchSourcePoolsTest, AReleasedPoolLivesUntilItsLastBlockIsFreed) {
  const int dev = 51;
  FakeAllocator fake;
  const uint64_t pool = Create(dev, &fake);
  void* a = Malloc(pool, 16);
  ASSERT_EQ(ccalloc_torch_source_pool_release(pool), 0);
  EXPECT_TRUE(fake.frees.empty());
  // Released: no new block, and a second release is an error.
  void* p = nullptr;
  EXPECT_NE(ccalloc_torch_source_pool_malloc(pool, 16, nullptr, &p), 0);
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(ccalloc_torch_source_pool_release(pool), 0);

  ASSERT_EQ(ccalloc_torch_free_ptr(a), 0) << ccalloc_torch_last_error();
  EXPECT_EQ(fake.frees, (std::vector<std::size_t>{2 * kMiB}));
  Visit v;
  EXPECT_NE(ccalloc_torch_source_pool_visit_snapshot(pool, &Visit::OnSegment, &Visit::OnBlock, &v),
            0)
      << "the pool is gone";
  EXPECT_EQ(Stats(dev).reserved_bytes[0].current, 0);
  // Its block is not ours any more: a second free is refused, nothing lost.
  EXPECT_NE(ccalloc_torch_free_ptr(a), 0);
}

// The pool's allocator has no memory: the request fails with PyTorch's
// out-of-memory text (what the extension raises as torch.OutOfMemoryError),
// and nothing is lost; other pools and the device's allocator go on.
TEST_F(TorchSourcePoolsTest, TheAllocatorsOutOfMemoryIsPyTorchsError) {
  const int dev = 52;
  FakeAllocator fake;
  const uint64_t pool = Create(dev, &fake);
  fake.refuse = true;
  void* p = nullptr;
  EXPECT_EQ(ccalloc_torch_source_pool_malloc(pool, kMiB, nullptr, &p), kOutOfMemory);
  EXPECT_EQ(p, nullptr);
  const std::string message = ccalloc_torch_last_error();
  EXPECT_EQ(message.rfind("CUDA out of memory. Tried to allocate", 0), 0u) << message;
  fake.refuse = false;
  void* q = Malloc(pool, kMiB);
  ASSERT_EQ(ccalloc_torch_free_ptr(q), 0);
  ASSERT_EQ(ccalloc_torch_source_pool_release(pool), 0);
  EXPECT_EQ(fake.frees.size(), 1u);
}

// The device's figures include the pool's, so resetting them reaches it:
// torch.cuda.reset_peak_memory_stats() after a pool's peak shows what is
// allocated now, reset_accumulated_memory_stats() zeroes its counts.
TEST_F(TorchSourcePoolsTest, TheDevicesResetsReachThePool) {
  const int dev = 55;
  FakeAllocator fake;
  const uint64_t pool = Create(dev, &fake);
  void* a = Malloc(pool, 4 * kMiB);
  void* b = Malloc(pool, 4 * kMiB);
  ASSERT_EQ(ccalloc_torch_free_ptr(b), 0);
  EXPECT_EQ(Stats(dev).allocated_bytes[0].peak, static_cast<int64_t>(8 * kMiB));
  ASSERT_EQ(ccalloc_torch_reset_peak_stats(dev), 0) << ccalloc_torch_last_error();
  EXPECT_EQ(Stats(dev).allocated_bytes[0].peak, static_cast<int64_t>(4 * kMiB));
  EXPECT_EQ(Stats(dev).allocation[0].allocated, 2);
  ASSERT_EQ(ccalloc_torch_reset_accumulated_stats(dev), 0) << ccalloc_torch_last_error();
  EXPECT_EQ(Stats(dev).allocation[0].allocated, 0);
  EXPECT_EQ(Stats(dev).allocated_bytes[0].current, static_cast<int64_t>(4 * kMiB));
  ASSERT_EQ(ccalloc_torch_free_ptr(a), 0);
  ASSERT_EQ(ccalloc_torch_source_pool_release(pool), 0);
}

// Bad input: a clear error, nothing made or lost.
TEST_F(TorchSourcePoolsTest, BadInputIsRefused) {
  uint64_t handle = 0;
  FakeAllocator fake;
  EXPECT_NE(ccalloc_torch_source_pool_create(53, nullptr, &FakeAllocator::Free, &fake, &handle), 0);
  EXPECT_NE(ccalloc_torch_source_pool_create(53, &FakeAllocator::Alloc, nullptr, &fake, &handle),
            0);
  EXPECT_NE(ccalloc_torch_source_pool_create(-1, &FakeAllocator::Alloc, &FakeAllocator::Free,
                                             &fake, &handle),
            0);
  EXPECT_NE(ccalloc_torch_source_pool_create(53, &FakeAllocator::Alloc, &FakeAllocator::Free,
                                             &fake, nullptr),
            0);
  EXPECT_EQ(handle, 0u);
  void* p = nullptr;
  EXPECT_NE(ccalloc_torch_source_pool_malloc(987654, 16, nullptr, &p), 0);
  EXPECT_NE(ccalloc_torch_source_pool_malloc(987654, 16, nullptr, nullptr), 0);
  EXPECT_NE(ccalloc_torch_source_pool_empty_cache(987654), 0);
  EXPECT_NE(ccalloc_torch_source_pool_release(987654), 0);
  Visit v;
  EXPECT_NE(ccalloc_torch_source_pool_visit_snapshot(987654, nullptr, &Visit::OnBlock, &v), 0);
  EXPECT_TRUE(fake.allocs.empty());
  int local = 0;
  EXPECT_NE(ccalloc_torch_free_ptr(&local), 0) << "a foreign pointer";
}

}  // namespace
