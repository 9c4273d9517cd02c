// backend.h — the only seam between ccalloc and a device.
//
// Everything the allocator needs from a GPU goes through DeviceBackend: plain
// device allocations (classic segments), events for cross-stream safety, memory
// information, and the virtual-memory calls that growable segments use. Two
// implementations exist: CudaBackend (CUDA driver API) and SimBackend (host only,
// fake addresses) so that every behaviour, the replay tool and the benchmarks run
// on machines without a GPU. Driver results become absl::Status here and nowhere
// else; the core never sees a CUresult.
#ifndef CCALLOC_ALLOCATOR_BACKEND_H_
#define CCALLOC_ALLOCATOR_BACKEND_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccalloc {

// A device address. Kept as an integer inside the allocator so that simulated
// addresses are never dereferenced by accident.
using DevicePtr = std::uintptr_t;

// An opaque stream identity (a cudaStream_t / CUstream cast to an integer; 0 is
// the legacy default stream).
using StreamId = std::uintptr_t;

// An opaque event handle owned by the backend.
using EventHandle = std::uintptr_t;

// An opaque handle to physical memory created for virtual-memory mapping
// (a CUmemGenericAllocationHandle on CUDA).
using PhysicalHandle = std::uint64_t;

struct DeviceMemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual int device() const = 0;
  virtual const char* name() const = 0;

  // Classic segments: one device allocation each (cuMemAlloc / cuMemFree).
  // Allocate returns ResourceExhausted when the device has no memory for it.
  virtual absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) = 0;
  virtual absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) = 0;

  virtual absl::StatusOr<DeviceMemoryInfo> MemoryInfo() = 0;

  // Events mark the point in a stream after which a block may be reused.
  virtual absl::StatusOr<EventHandle> RecordEvent(StreamId stream) = 0;
  // True once all work recorded before the event has finished.
  virtual absl::StatusOr<bool> QueryEvent(EventHandle event) = 0;
  virtual absl::Status SynchronizeEvent(EventHandle event) = 0;
  virtual void DestroyEvent(EventHandle event) = 0;
  // Waits for all work on the device (used by the free-all step of the OOM path).
  virtual absl::Status SynchronizeDevice() = 0;

  // Virtual memory, for growable segments. A backend without it returns
  // false from SupportsVirtualMemory() and Unimplemented from the calls.
  virtual bool SupportsVirtualMemory() const { return false; }
  // Mapping granularity: every size and offset below is a multiple of it.
  virtual std::size_t PageSize() const { return 2u << 20; }
  virtual absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) {
    return absl::UnimplementedError("virtual memory not supported");
  }
  virtual absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) {
    return absl::UnimplementedError("virtual memory not supported");
  }
  // Physical memory of `bytes` (a multiple of PageSize()); ResourceExhausted
  // when the device has none left.
  virtual absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) {
    return absl::UnimplementedError("virtual memory not supported");
  }
  virtual absl::Status ReleasePhysical(PhysicalHandle handle) {
    return absl::UnimplementedError("virtual memory not supported");
  }
  // Maps `handle` (of exactly `bytes`) at `va` and makes it read-write for
  // the device. On failure nothing stays mapped.
  virtual absl::Status Map(DevicePtr va, std::size_t bytes,
                           PhysicalHandle handle) {
    return absl::UnimplementedError("virtual memory not supported");
  }
  virtual absl::Status Unmap(DevicePtr va, std::size_t bytes) {
    return absl::UnimplementedError("virtual memory not supported");
  }
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_BACKEND_H_
