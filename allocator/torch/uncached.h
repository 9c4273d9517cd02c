// uncached.h — PyTorch's uncached mode, for the plugin (torch_plugin.cc):
// torch.cuda.caching_allocator_enable(False) while a program runs, or
// PYTORCH_NO_CUDA_MEMORY_CACHING=1 in the environment (read once, at the
// first request). Then, as with PyTorch's own allocator, every request is a
// device allocation of its own, given back at its free, outside the cache
// and its statistics: what compute-sanitizer needs to see each buffer's
// bounds, and what PyTorch's test_cachingAllocator_raw_alloc checks.
//
// A pointer handed out uncached is freed uncached whatever the mode is by
// then (PyTorch's allocator would give it to the cache after re-enabling).
#ifndef CCALLOC_ALLOCATOR_TORCH_UNCACHED_H_
#define CCALLOC_ALLOCATOR_TORCH_UNCACHED_H_

#include <cstddef>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/backends/backend.h"

namespace ccalloc::uncached {

// False while requests bypass the cache.
bool CachingEnabled();
void SetCachingEnabled(bool enabled);

// One device allocation of `size` bytes from `backend` (which must outlive
// the allocation: the plugin's backends live as long as the process).
absl::StatusOr<DevicePtr> Allocate(DeviceBackend& backend, std::size_t size);

// Frees `ptr` if Allocate handed it out (its status), else nullopt, at the
// cost of one atomic load while no uncached allocation is live. (Not a
// NotFound status: every tensor's free asks, and a status with a message is
// a heap allocation.)
std::optional<absl::Status> FreeIfOurs(DevicePtr ptr);

}  // namespace ccalloc::uncached

#endif  // CCALLOC_ALLOCATOR_TORCH_UNCACHED_H_
