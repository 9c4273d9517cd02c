// cuda_driver.h — the CUDA driver as the backend sees it: the table of entry
// points (DriverApi) and the one process-wide copy of it (Driver()), the one
// conversion of a CUresult to an absl::Status (CuResultToStatus), and the two
// guards every backend call runs under (ScopedContext, RelaxedCaptureMode).
//
// Private to the CUDA backend (cuda_driver.cc, cuda_backend.cc,
// cuda_backend_vmm.cc): everyone else goes through cuda_backend.h and the
// DeviceBackend interface, and never sees <cuda.h>. Code here calls the
// driver only through a DriverApi, never a cu* symbol directly (libcuda is
// not linked); <cuda.h> is used for its types, enums and declarations only,
// and the declarations give every table entry its exact type.
#ifndef CCALLOC_ALLOCATOR_CUDA_DRIVER_H_
#define CCALLOC_ALLOCATOR_CUDA_DRIVER_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccalloc {
namespace cuda_internal {

// Driver entry points. Each is looked up by its exact exported name, version
// suffix included (cuMemAlloc_v2, where <cuda.h> maps the cuMemAlloc macro):
// the name pins the ABI, so a newer driver cannot hand us a function with a
// different signature, and unlike cuGetProcAddress no CUDA version has to be
// chosen. The legacy (non-_ptsz) variants are used on purpose: StreamId 0
// means the legacy default stream. The types are taken from the declarations
// in <cuda.h>, so a wrong signature fails to compile instead of crashing.
struct DriverApi {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) primary_ctx_release = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxPushCurrent_v2) ctx_push_current = nullptr;
  decltype(&::cuCtxPopCurrent_v2) ctx_pop_current = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuMemAlloc_v2) mem_alloc = nullptr;
  decltype(&::cuMemFree_v2) mem_free = nullptr;
  decltype(&::cuMemGetInfo_v2) mem_get_info = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventQuery) event_query = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventDestroy_v2) event_destroy = nullptr;
  // Backups of paused regions. Optional, each null where the driver lacks
  // it: the copy calls then answer Unimplemented.
  decltype(&::cuMemHostAlloc) mem_host_alloc = nullptr;
  decltype(&::cuMemFreeHost) mem_free_host = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy_v2) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuStreamWaitEvent) stream_wait_event = nullptr;
  decltype(&::cuMemcpyDtoHAsync_v2) memcpy_dtoh_async = nullptr;
  decltype(&::cuMemcpyHtoDAsync_v2) memcpy_htod_async = nullptr;
  // Optional (driver 10.1 and later): see RelaxedCaptureMode.
  decltype(&::cuThreadExchangeStreamCaptureMode) exchange_capture_mode = nullptr;
  // Optional (driver 12.3 and later, the versions with edge data): where a
  // captured stream stands in its graph and the graph's edges, for
  // CudaBackend::CapturePositionOf and OrderedBefore. Without them no block
  // is proven free during a capture (graph_capture_record_stream_reuse then
  // changes nothing).
  decltype(&::cuStreamGetCaptureInfo_v3) stream_get_capture_info = nullptr;
  decltype(&::cuGraphNodeGetDependencies_v2) graph_node_get_dependencies = nullptr;

  // Virtual memory management (driver 10.2 and later). Optional: without them
  // the backend still serves classic segments.
  bool has_virtual_memory = false;
  decltype(&::cuMemGetAllocationGranularity) mem_get_granularity = nullptr;
  decltype(&::cuMemAddressReserve) mem_address_reserve = nullptr;
  decltype(&::cuMemAddressFree) mem_address_free = nullptr;
  decltype(&::cuMemCreate) mem_create = nullptr;
  decltype(&::cuMemRelease) mem_release = nullptr;
  decltype(&::cuMemMap) mem_map = nullptr;
  decltype(&::cuMemSetAccess) mem_set_access = nullptr;
  decltype(&::cuMemUnmap) mem_unmap = nullptr;

  // Sharing (IPC, peers). Optional, each null where the driver lacks it:
  // the calls that need one then answer Unimplemented.
  decltype(&::cuIpcGetMemHandle) ipc_get_mem_handle = nullptr;
  decltype(&::cuIpcOpenMemHandle_v2) ipc_open_mem_handle = nullptr;
  decltype(&::cuIpcCloseMemHandle) ipc_close_mem_handle = nullptr;
  decltype(&::cuMemExportToShareableHandle) mem_export = nullptr;
  decltype(&::cuMemImportFromShareableHandle) mem_import = nullptr;
  decltype(&::cuDeviceCanAccessPeer) device_can_access_peer = nullptr;
};

// The one conversion from CUresult to absl::Status. `call` names the driver
// function and `detail` its interesting arguments, so that a message read in a
// log says what was attempted as well as what the driver answered.
absl::Status CuResultToStatus(const DriverApi& api, CUresult result,
                              absl::string_view call,
                              absl::string_view detail = {});

struct LoadedDriver {
  DriverApi api;
  // OK when every required entry point resolved and cuInit succeeded.
  absl::Status status;
};

// The driver table, loaded on the first call (cuda_driver.cc). Its status says
// whether the driver is usable at all; the table is valid for the process's
// whole life.
const LoadedDriver& Driver();

// Makes `context` current on this thread for the guard's lifetime and then
// restores whatever the caller had. Restoring matters: the CUDA runtime
// derives the current device from the current context, so leaving ours behind
// would silently switch the device of a PyTorch thread working on another
// GPU. In the common case the caller already has this primary context current
// and the guard costs one cuCtxGetCurrent.
class ScopedContext {
 public:
  ScopedContext(const DriverApi& api, CUcontext context) : api_(api) {
    CUcontext current = nullptr;
    result_ = api_.ctx_get_current(&current);
    if (result_ != CUDA_SUCCESS) {
      call_ = "cuCtxGetCurrent";
      return;
    }
    if (current == context) return;
    result_ = api_.ctx_push_current(context);
    if (result_ != CUDA_SUCCESS) {
      call_ = "cuCtxPushCurrent";
      return;
    }
    pushed_ = true;
  }

  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

  ~ScopedContext() {
    if (!pushed_) return;
    CUcontext popped = nullptr;
    // Cannot fail unless the code inside the scope unbalanced the context
    // stack, which nothing here does; there is no caller to report to anyway.
    api_.ctx_pop_current(&popped);
  }

  bool ok() const { return result_ == CUDA_SUCCESS; }
  absl::Status status() const {
    return CuResultToStatus(api_, result_, call_,
                            "making the primary context current");
  }

 private:
  const DriverApi& api_;
  CUresult result_ = CUDA_SUCCESS;
  const char* call_ = "";
  bool pushed_ = false;
};

// Puts this thread in relaxed stream-capture mode for the guard's lifetime
// and then restores the caller's mode. While PyTorch captures a CUDA graph
// (global mode), the allocator may still need new device memory for the
// graph's private pool; cuMemAlloc, cuMemCreate, cuMemMap, cuMemSetAccess and
// cuMemAddressReserve are "potentially unsafe" calls that global mode
// refuses (and that would invalidate the capture), but they are safe here:
// they are not stream work and do not touch memory the graph uses. PyTorch's
// own allocator does the same around cudaMalloc.
class RelaxedCaptureMode {
 public:
  explicit RelaxedCaptureMode(const DriverApi& api) : api_(api) {
    if (api_.exchange_capture_mode == nullptr) return;
    mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
    exchanged_ = api_.exchange_capture_mode(&mode_) == CUDA_SUCCESS;
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;
  ~RelaxedCaptureMode() {
    // `mode_` holds the caller's mode since the first exchange.
    if (exchanged_) api_.exchange_capture_mode(&mode_);
  }

 private:
  const DriverApi& api_;
  CUstreamCaptureMode mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool exchanged_ = false;
};

// Pinned memory on `device`, the only kind of physical memory growable
// segments use; granularity and cuMemCreate must agree on it.
inline CUmemAllocationProp PinnedDeviceProp(int device) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

}  // namespace cuda_internal
}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_CUDA_DRIVER_H_
