// cuda_backend.h — DeviceBackend on the CUDA driver API.
//
// The driver (libcuda.so.1) is opened with dlopen the first time one of these
// functions runs, never linked, so that every ccalloc binary starts on a
// machine without a GPU; there the functions below report "no device" instead
// of the program failing to load. The backend works in the device's primary
// context, the one the CUDA runtime and PyTorch use, so memory it hands out is
// usable from their kernels and streams.
//
// The backend class itself is private (cuda_backend_impl.h, defined in
// cuda_backend.cc and cuda_backend_vmm.cc, over the driver table of
// cuda_driver.h): callers only ever need the DeviceBackend interface, and
// keeping <cuda.h> out of this header keeps the CUDA include directory out of
// every target that includes it.
#ifndef CCALLOC_ALLOCATOR_CUDA_BACKEND_H_
#define CCALLOC_ALLOCATOR_CUDA_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "allocator/backends/backend.h"

namespace ccalloc {

// True iff libcuda.so.1 loads, cuInit succeeds and at least one device is
// present. Cheap after the first call.
bool CudaDeviceAvailable();

// Number of CUDA devices. Unavailable when the driver cannot be loaded or
// initialised (cuInit reports CUDA_ERROR_NO_DEVICE on a machine without one).
absl::StatusOr<int> CudaDeviceCount();

// A backend for device ordinal `device`, retaining its primary context for the
// backend's lifetime. Unavailable when the driver cannot be loaded or
// initialised, or no device exists; InvalidArgument when `device` is out of
// range. The backend is thread-safe and may be called from any thread: each
// call makes the primary context current only for its own duration and leaves
// the caller's current context as it found it.
absl::StatusOr<std::unique_ptr<DeviceBackend>> CreateCudaBackend(int device);

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_CUDA_BACKEND_H_
