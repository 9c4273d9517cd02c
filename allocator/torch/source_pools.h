// source_pools.h — MemPools whose memory comes from an allocator of their
// own, for the plugin: PyTorch's MemPool(allocator=CUDAPluggableAllocator(...)),
// as vLLM's sleep mode and NCCL's symmetric-memory registration make them.
//
// PyTorch's caching allocator serves such a pool as any private pool, except
// that each segment comes from the pool's allocator instead of cudaMalloc:
// the allocator is called once per segment (PyTorch's segment sizes: 2 MiB
// for small requests, 20 MiB for large ones, a large request rounded up to
// 2 MiB past 10 MiB), blocks are carved from those segments and cached, and
// a wholly free segment goes back to it at empty_cache. PyTorch's own tests
// count exactly that (test_mempool_with_allocator: one segment for two
// 1 MiB tensors, a second for the third). Here each such pool is a classic
// DeviceAllocator of its own whose backend's Allocate and Deallocate call the
// pool's allocator; its events go to a backend of the device. Its figures
// are added to the device's statistics (as PyTorch counts the pool's memory
// in the device's), and its segments are visited apart (pool.snapshot()).
//
// A pool lives until it is released (MemPool's destructor) and its last
// block is freed: its memory then goes back to its allocator and the pool is
// gone, as PyTorch keeps a released pool (and so its allocator) until the
// tensors in it die.
#ifndef CCALLOC_ALLOCATOR_TORCH_SOURCE_POOLS_H_
#define CCALLOC_ALLOCATOR_TORCH_SOURCE_POOLS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/backends/backend.h"
#include "allocator/cache/device_allocator.h"
#include "stats/counters.h"

namespace ccalloc::source_pools {

// The pool's allocator, as C callbacks (the extension's trampolines into
// PyTorch's CUDAAllocator). `alloc` returns null when it has no memory;
// `free` must not fail. Both are called with the pool's lock held and must
// not allocate from the same pool.
struct Source {
  void* (*alloc)(void* ctx, std::size_t bytes, void* stream) = nullptr;
  void (*free)(void* ctx, void* ptr, std::size_t bytes, void* stream) = nullptr;
  void* ctx = nullptr;
};

// A new pool on `device` whose segments come from `source`, its events from
// `events` (a backend of the device); its handle (> 0).
absl::StatusOr<std::uint64_t> Create(int device, const Source& source,
                                     std::unique_ptr<DeviceBackend> events);

// A block of `size` bytes of pool `handle` for `stream`. ResourceExhausted
// (PyTorch's out-of-memory text first) when the pool's allocator has none.
absl::StatusOr<DevicePtr> Allocate(std::uint64_t handle, std::size_t size, StreamId stream);

// Frees `ptr` if a pool handed it out (its status), else nullopt (as
// uncached::FreeIfOurs), at the cost of one atomic load while no pool has a
// live block. A released pool whose last block this was gives its memory
// back and is gone.
std::optional<absl::Status> FreeIfOurs(DevicePtr ptr);

// Gives the pool's wholly free segments back to its allocator.
absl::Status EmptyCache(std::uint64_t handle);

// The pool's last user is gone (MemPool's destructor): its memory goes back
// now if no block is live, else when the last one is freed. NotFound for an
// unknown or already released pool.
absl::Status Release(std::uint64_t handle);

// The pool's allocator, shared so that a caller may use it without the
// module's lock (null for an unknown handle). Its snapshot is pool.snapshot().
std::shared_ptr<DeviceAllocator> Get(std::uint64_t handle);

// Calls `f` on the allocator of every pool on `device` (every device when
// `device` is negative), with the pools' lock held: the device's statistics
// are the main allocator's plus these (read, and reset, together).
void ForEachOn(int device, const std::function<void(DeviceAllocator&)>& f);

}  // namespace ccalloc::source_pools

#endif  // CCALLOC_ALLOCATOR_TORCH_SOURCE_POOLS_H_
