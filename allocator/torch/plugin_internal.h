// plugin_internal.h — what the plugin's two files share: torch_plugin.cc
// (the allocators, one per device, their creation, and the C functions
// PyTorch's CUDAPluggableAllocator and the Python package call) and
// torch_ext_api.cc (the C functions the PyTorch extension calls,
// python/ccalloc/csrc/ccalloc_torch.h). Not installed; the names are hidden
// in the shared library (allocator/torch/plugin.cmake).
#ifndef CCALLOC_ALLOCATOR_TORCH_PLUGIN_INTERNAL_H_
#define CCALLOC_ALLOCATOR_TORCH_PLUGIN_INTERNAL_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "allocator/cache/device_allocator.h"

// The runtime's stream handle, declared opaquely so that no CUDA header is
// needed (cuda_runtime_api.h declares the same type).
typedef struct CUstream_st* cudaStream_t;

#define CCALLOC_TORCH_API extern "C" __attribute__((visibility("default")))

namespace ccalloc {

// c10::DeviceIndex is an int8_t, so PyTorch never names a device above 127.
inline constexpr int kMaxDevices = 128;

// Serialises the creation of allocators and of what is made with them.
extern absl::Mutex creation_mu;

// Keeps the message for ccalloc_torch_last_error() (per thread) and returns
// the status code; OK for an OK status.
int Report(const absl::Status& status);
absl::Status CheckDevice(int device);
// The allocator of `device` if it exists (nullptr otherwise, also for a bad
// device number).
DeviceAllocator* Existing(int device);
// The allocator of `device`, created with the configured options on first use.
absl::StatusOr<DeviceAllocator*> GetOrCreate(int device);
// A new backend of `device` (CUDA, or the simulated device under
// CCALLOC_TORCH_SIMULATE), as the device's allocator has: for the events of
// a MemPool with an allocator of its own (source_pools.h).
absl::StatusOr<std::unique_ptr<DeviceBackend>> NewBackend(int device);
// snprintf-like: copies at most capacity - 1 bytes and a NUL, returns the
// length the whole text needs including the NUL.
std::size_t CopyOut(const std::string& text, char* buffer, std::size_t capacity);

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_TORCH_PLUGIN_INTERNAL_H_
