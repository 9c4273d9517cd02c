// fake_pool_allocator.h — a MemPool's own allocator for the plugin's tests
// (allocator/torch/source_pools.h): host memory standing in for a
// CUDAPluggableAllocator's, each call counted, and a switch to refuse. Not
// thread-safe by itself: the plugin calls it with the pools' lock held.
#ifndef CCALLOC_TESTS_SUPPORT_FAKE_POOL_ALLOCATOR_H_
#define CCALLOC_TESTS_SUPPORT_FAKE_POOL_ALLOCATOR_H_

#include <cstddef>
#include <cstdlib>
#include <vector>

namespace ccalloc::test {

struct FakeAllocator {
  std::vector<std::size_t> allocs;  // bytes of each alloc call
  std::vector<std::size_t> frees;   // bytes of each free call
  std::vector<void*> streams;       // the stream of each alloc call
  bool refuse = false;

  static void* Alloc(void* ctx, std::size_t bytes, void* stream) {
    auto* self = static_cast<FakeAllocator*>(ctx);
    if (self->refuse) return nullptr;
    self->allocs.push_back(bytes);
    self->streams.push_back(stream);
    return std::aligned_alloc(4096, bytes);
  }
  static void Free(void* ctx, void* ptr, std::size_t bytes, void*) {
    static_cast<FakeAllocator*>(ctx)->frees.push_back(bytes);
    std::free(ptr);
  }
};

}  // namespace ccalloc::test

#endif  // CCALLOC_TESTS_SUPPORT_FAKE_POOL_ALLOCATOR_H_
