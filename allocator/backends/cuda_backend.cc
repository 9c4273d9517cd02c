// cuda_backend.cc — CudaBackend: DeviceBackend on the CUDA driver API. The
// factory and device count of cuda_backend.h, and the backend's life,
// classic segments (cuMemAlloc), events, device synchronisation, and the
// backups of paused regions (page-locked host buffers, asynchronous copies on
// a stream of the backend's own, copy fences).
//
// The class is declared in cuda_backend_impl.h; its virtual-memory and
// sharing calls are in cuda_backend_vmm.cc, the driver table and error
// translation in cuda_driver.cc. Code here calls the driver only through the
// DriverApi table, with the primary context made current by ScopedContext.
#include "allocator/backends/cuda_backend.h"

#include <cuda.h>
#include <unistd.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_backend_impl.h"
#include "allocator/backends/cuda_driver.h"

namespace ccalloc {
namespace cuda_internal {
namespace {

// Recording an event is on the allocator's hot path (every cross-stream free)
// while cuEventCreate is slow, so returned events are kept for reuse. The cap
// bounds what a burst leaves behind; beyond it events are destroyed.
constexpr std::size_t kMaxCachedEvents = 1024;

// The page size reported when the device has no virtual memory management.
constexpr std::size_t kDefaultPageSize = std::size_t{2} << 20;

}  // namespace

CudaBackend::CudaBackend(const DriverApi& api, int device, CUdevice handle,
                         CUcontext context, std::size_t page_size)
    : api_(api),
      device_(device),
      handle_(handle),
      context_(context),
      virtual_memory_(page_size != 0),
      page_size_(page_size != 0 ? page_size : kDefaultPageSize) {}

CudaBackend::~CudaBackend() {
  {
    // Descriptors of physical memory never released (a leak elsewhere);
    // the process keeps nothing open on their account.
    absl::MutexLock lock(&fds_mu_);
    for (const auto& [handle, fd] : exported_fds_) close(fd);
    exported_fds_.clear();
  }
  std::vector<CUevent> events;
  {
    absl::MutexLock lock(&events_mu_);
    events.swap(free_events_);
  }
  {
    // Results are ignored: at process exit the driver may already be
    // deinitialised, and there is nobody left to tell.
    ScopedContext scope(api_, context_);
    for (CUevent event : events) api_.event_destroy(event);
    absl::MutexLock lock(&copy_mu_);
    for (CUevent event : fence_events_) api_.event_destroy(event);
    if (copy_stream_ != nullptr && api_.stream_destroy != nullptr) {
      api_.stream_destroy(copy_stream_);
    }
  }
  api_.primary_ctx_release(handle_);
}

absl::StatusOr<DevicePtr> CudaBackend::Allocate(std::size_t bytes) {
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  CUdeviceptr ptr = 0;
  RelaxedCaptureMode relaxed(api_);
  if (CUresult r = api_.mem_alloc(&ptr, bytes); r != CUDA_SUCCESS) {
    return Error(r, "cuMemAlloc", absl::StrCat(bytes, " bytes"));
  }
  return static_cast<DevicePtr>(ptr);
}

absl::Status CudaBackend::Deallocate(DevicePtr ptr, std::size_t bytes) {
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  if (CUresult r = api_.mem_free(static_cast<CUdeviceptr>(ptr));
      r != CUDA_SUCCESS) {
    return Error(r, "cuMemFree",
                 absl::StrCat(Hex(ptr), ", ", bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceMemoryInfo> CudaBackend::MemoryInfo() {
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  DeviceMemoryInfo info;
  if (CUresult r = api_.mem_get_info(&info.free_bytes, &info.total_bytes);
      r != CUDA_SUCCESS) {
    return Error(r, "cuMemGetInfo");
  }
  return info;
}

absl::StatusOr<EventHandle> CudaBackend::RecordEvent(StreamId stream) {
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  CUevent event = TakeCachedEvent();
  if (event == nullptr) {
    // Timing is disabled because the allocator only asks "done yet?", and
    // timing events are markedly slower to record and query.
    if (CUresult r = api_.event_create(&event, CU_EVENT_DISABLE_TIMING);
        r != CUDA_SUCCESS) {
      return Error(r, "cuEventCreate");
    }
  }
  if (CUresult r =
          api_.event_record(event, reinterpret_cast<CUstream>(stream));
      r != CUDA_SUCCESS) {
    CacheOrDestroyEvent(event);
    return Error(r, "cuEventRecord", absl::StrCat("stream ", Hex(stream)));
  }
  return reinterpret_cast<EventHandle>(event);
}

absl::StatusOr<bool> CudaBackend::QueryEvent(EventHandle event) {
  if (event == 0) return absl::InvalidArgumentError("QueryEvent: null event");
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  CUresult r = api_.event_query(reinterpret_cast<CUevent>(event));
  if (r == CUDA_SUCCESS) return true;
  if (r == CUDA_ERROR_NOT_READY) return false;
  return Error(r, "cuEventQuery", Hex(event));
}

absl::Status CudaBackend::SynchronizeEvent(EventHandle event) {
  if (event == 0) {
    return absl::InvalidArgumentError("SynchronizeEvent: null event");
  }
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  if (CUresult r = api_.event_synchronize(reinterpret_cast<CUevent>(event));
      r != CUDA_SUCCESS) {
    return Error(r, "cuEventSynchronize", Hex(event));
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::StreamWaitEvent(StreamId stream, EventHandle event) {
  if (event == 0) return absl::InvalidArgumentError("StreamWaitEvent: null event");
  if (api_.stream_wait_event == nullptr) {
    return absl::UnimplementedError("cuStreamWaitEvent missing from the driver");
  }
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  if (CUresult r = api_.stream_wait_event(reinterpret_cast<CUstream>(stream),
                                          reinterpret_cast<CUevent>(event), 0);
      r != CUDA_SUCCESS) {
    return Error(r, "cuStreamWaitEvent", absl::StrCat("stream ", Hex(stream)));
  }
  return absl::OkStatus();
}

void CudaBackend::DestroyEvent(EventHandle event) {
  if (event == 0) return;
  // Caching a still-pending event is fine: the next cuEventRecord simply
  // moves it to the new point in a stream.
  CacheOrDestroyEvent(reinterpret_cast<CUevent>(event));
}

absl::Status CudaBackend::SynchronizeDevice() {
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  if (CUresult r = api_.ctx_synchronize(); r != CUDA_SUCCESS) {
    return Error(r, "cuCtxSynchronize");
  }
  return absl::OkStatus();
}

absl::StatusOr<HostPtr> CudaBackend::AllocateHost(std::size_t bytes) {
  if (api_.mem_host_alloc == nullptr) return Missing("cuMemHostAlloc");
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  void* ptr = nullptr;
  // Portable: the buffer stays page-locked for every context, whichever
  // device's allocator took it.
  if (CUresult r = api_.mem_host_alloc(&ptr, bytes, CU_MEMHOSTALLOC_PORTABLE);
      r != CUDA_SUCCESS) {
    return Error(r, "cuMemHostAlloc", absl::StrCat(bytes, " bytes"));
  }
  return reinterpret_cast<HostPtr>(ptr);
}

absl::Status CudaBackend::FreeHost(HostPtr ptr, std::size_t bytes) {
  if (api_.mem_free_host == nullptr) return Missing("cuMemFreeHost");
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  if (CUresult r = api_.mem_free_host(reinterpret_cast<void*>(ptr)); r != CUDA_SUCCESS) {
    return Error(r, "cuMemFreeHost", absl::StrCat(Hex(ptr), ", ", bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) {
  if (api_.memcpy_dtoh_async == nullptr) return Missing("cuMemcpyDtoHAsync");
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  absl::StatusOr<CUstream> stream = CopyStream();
  if (!stream.ok()) return stream.status();
  if (CUresult r = api_.memcpy_dtoh_async(reinterpret_cast<void*>(dst),
                                          static_cast<CUdeviceptr>(src), bytes, *stream);
      r != CUDA_SUCCESS) {
    return Error(r, "cuMemcpyDtoHAsync",
                 absl::StrCat(Hex(src), " -> ", Hex(dst), ", ", bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) {
  if (api_.memcpy_htod_async == nullptr) return Missing("cuMemcpyHtoDAsync");
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  absl::StatusOr<CUstream> stream = CopyStream();
  if (!stream.ok()) return stream.status();
  if (CUresult r = api_.memcpy_htod_async(static_cast<CUdeviceptr>(dst),
                                          reinterpret_cast<const void*>(src), bytes, *stream);
      r != CUDA_SUCCESS) {
    return Error(r, "cuMemcpyHtoDAsync",
                 absl::StrCat(Hex(src), " -> ", Hex(dst), ", ", bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::WaitCopies() {
  CUstream stream = nullptr;
  {
    absl::MutexLock lock(&copy_mu_);
    stream = copy_stream_;
  }
  if (stream == nullptr) return absl::OkStatus();  // nothing was ever queued
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  if (CUresult r = api_.stream_synchronize(stream); r != CUDA_SUCCESS) {
    return Error(r, "cuStreamSynchronize", "the backup copy stream");
  }
  absl::MutexLock lock(&copy_mu_);
  fences_used_ = 0;
  return absl::OkStatus();
}

// Fences are events recorded on the copy stream, created once and reused
// from one WaitCopies to the next (a pause records a few dozen).
absl::StatusOr<CopyFence> CudaBackend::RecordCopyFence() {
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  absl::StatusOr<CUstream> stream = CopyStream();
  if (!stream.ok()) return stream.status();
  absl::MutexLock lock(&copy_mu_);
  if (fences_used_ == fence_events_.size()) {
    CUevent event = nullptr;
    if (CUresult r = api_.event_create(&event, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS) {
      return Error(r, "cuEventCreate", "a copy fence");
    }
    fence_events_.push_back(event);
  }
  if (CUresult r = api_.event_record(fence_events_[fences_used_], *stream);
      r != CUDA_SUCCESS) {
    return Error(r, "cuEventRecord", "a copy fence");
  }
  return CopyFence{++fences_used_};
}

absl::Status CudaBackend::WaitCopyFence(CopyFence fence) {
  CUevent event = nullptr;
  {
    absl::MutexLock lock(&copy_mu_);
    if (fence == 0 || fence > fences_used_) {
      return absl::InvalidArgumentError(absl::StrCat("copy fence ", fence, " is not recorded"));
    }
    event = fence_events_[fence - 1];
  }
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  if (!scope.ok()) return scope.status();
  if (CUresult r = api_.event_synchronize(event); r != CUDA_SUCCESS) {
    return Error(r, "cuEventSynchronize", "a copy fence");
  }
  return absl::OkStatus();
}

// The stream backups are copied on, created on first use. Non-blocking, so
// that a copy never waits for the legacy default stream: the allocator has
// waited for the device before it queues any.
absl::StatusOr<CUstream> CudaBackend::CopyStream() {
  absl::MutexLock lock(&copy_mu_);
  if (copy_stream_ != nullptr) return copy_stream_;
  if (api_.stream_create == nullptr || api_.stream_synchronize == nullptr) {
    return Missing("cuStreamCreate");
  }
  if (CUresult r = api_.stream_create(&copy_stream_, CU_STREAM_NON_BLOCKING);
      r != CUDA_SUCCESS) {
    copy_stream_ = nullptr;
    return Error(r, "cuStreamCreate", "the backup copy stream");
  }
  return copy_stream_;
}

CUevent CudaBackend::TakeCachedEvent() {
  absl::MutexLock lock(&events_mu_);
  if (free_events_.empty()) return nullptr;
  CUevent event = free_events_.back();
  free_events_.pop_back();
  return event;
}

void CudaBackend::CacheOrDestroyEvent(CUevent event) {
  {
    absl::MutexLock lock(&events_mu_);
    if (free_events_.size() < kMaxCachedEvents) {
      free_events_.push_back(event);
      return;
    }
  }
  // Outside the lock: the driver call can take a while. The result is
  // dropped because DestroyEvent has no way to report it, and a failure
  // here only leaks one event.
  ScopedContext scope(api_, context_);
  const CountedCall counted(*this);
  api_.event_destroy(event);
}

}  // namespace cuda_internal

using cuda_internal::CudaBackend;
using cuda_internal::CuResultToStatus;
using cuda_internal::Driver;
using cuda_internal::DriverApi;
using cuda_internal::LoadedDriver;
using cuda_internal::PinnedDeviceProp;
using cuda_internal::ScopedContext;

absl::StatusOr<int> CudaDeviceCount() {
  const LoadedDriver& driver = Driver();
  if (!driver.status.ok()) return driver.status;
  int count = 0;
  if (CUresult r = driver.api.device_get_count(&count); r != CUDA_SUCCESS) {
    return CuResultToStatus(driver.api, r, "cuDeviceGetCount");
  }
  return count;
}

bool CudaDeviceAvailable() {
  absl::StatusOr<int> count = CudaDeviceCount();
  return count.ok() && *count > 0;
}

absl::StatusOr<std::unique_ptr<DeviceBackend>> CreateCudaBackend(int device) {
  const LoadedDriver& driver = Driver();
  if (!driver.status.ok()) return driver.status;
  const DriverApi& api = driver.api;

  int count = 0;
  if (CUresult r = api.device_get_count(&count); r != CUDA_SUCCESS) {
    return CuResultToStatus(api, r, "cuDeviceGetCount");
  }
  if (count == 0) {
    return absl::UnavailableError("no CUDA device present");
  }
  if (device < 0 || device >= count) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA device ", device,
                                                   " is out of range: ", count,
                                                   " device(s) present"));
  }

  const std::string detail = absl::StrCat("device ", device);
  CUdevice handle = 0;
  if (CUresult r = api.device_get(&handle, device); r != CUDA_SUCCESS) {
    return CuResultToStatus(api, r, "cuDeviceGet", detail);
  }
  int vmm_supported = 0;
  if (api.has_virtual_memory) {
    if (CUresult r = api.device_get_attribute(
            &vmm_supported,
            CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, handle);
        r != CUDA_SUCCESS) {
      return CuResultToStatus(api, r, "cuDeviceGetAttribute", detail);
    }
  }

  CUcontext context = nullptr;
  if (CUresult r = api.primary_ctx_retain(&context, handle);
      r != CUDA_SUCCESS) {
    return CuResultToStatus(api, r, "cuDevicePrimaryCtxRetain", detail);
  }

  std::size_t page_size = 0;
  if (vmm_supported != 0) {
    ScopedContext scope(api, context);
    const CUmemAllocationProp prop = PinnedDeviceProp(device);
    // On failure the backend runs without virtual memory rather than not at
    // all: growable segments are an optimisation, classic segments still work.
    if (!scope.ok() || api.mem_get_granularity(
                           &page_size, &prop,
                           CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS) {
      page_size = 0;
    }
  }
  // The backend owns the retain from here on and releases it when destroyed.
  return std::make_unique<CudaBackend>(api, device, handle, context, page_size);
}

}  // namespace ccalloc
