// cuda_backend.cc — CudaBackend: DeviceBackend on the CUDA driver API.
//
// Three pieces, top to bottom:
//  * DriverApi, a table of driver entry points resolved once with dlopen and
//    dlsym. ccalloc never links libcuda, so binaries start on machines without
//    a GPU and only the factory reports that there is no device.
//  * CuResultToStatus, the one place where a CUresult becomes an absl::Status.
//  * CudaBackend, which makes the device's primary context current around each
//    call, because callers arrive from arbitrary threads (PyTorch's among
//    them), and keeps a small cache of events so that recording one on the hot
//    path does not pay for cuEventCreate.
//
// <cuda.h> is used for its types, enums and declarations only; the
// declarations give every table entry its exact type.
#include "allocator/cuda_backend.h"

#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backend.h"
#include "allocator/fd_transfer.h"

namespace ccalloc {
namespace {

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
                              absl::string_view detail = {}) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  // Both lookups fail for codes newer than the installed driver knows; the
  // number in the message still identifies those.
  const char* name = nullptr;
  if (api.get_error_name(result, &name) != CUDA_SUCCESS || name == nullptr) {
    name = "unrecognised CUresult";
  }
  const char* description = nullptr;
  if (api.get_error_string(result, &description) != CUDA_SUCCESS ||
      description == nullptr) {
    description = "no description";
  }
  std::string message =
      absl::StrCat(call, "(", detail, ") failed: ", name, " (",
                   static_cast<int>(result), "): ", description);
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(std::move(message));
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
      return absl::InvalidArgumentError(std::move(message));
    // No usable driver or device: the caller should fall back (to the
    // simulator, or to the CPU), not treat this as a bug.
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return absl::UnavailableError(std::move(message));
    default:
      return absl::InternalError(std::move(message));
  }
}

struct LoadedDriver {
  DriverApi api;
  // OK when every required entry point resolved and cuInit succeeded.
  absl::Status status;
};

template <typename Fn>
bool Resolve(void* library, const char* symbol, Fn& slot) {
  slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  return slot != nullptr;
}

LoadedDriver LoadDriver() {
  LoadedDriver loaded;
  // libcuda.so.1 is the driver's soname. The unversioned libcuda.so is
  // normally the toolkit's link stub, which answers every call with
  // CUDA_ERROR_STUB_LIBRARY, so it is not worth trying.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.status = absl::UnavailableError(
        absl::StrCat("CUDA driver not available: cannot load libcuda.so.1 (",
                     why != nullptr ? why : "unknown dlopen error", ")"));
    return loaded;
  }
  // The handle is never dlclosed: backends, including ones destroyed by
  // static destructors at exit, call through the table until the very end,
  // and the driver does not support being unloaded anyway.

  DriverApi& api = loaded.api;
  std::string missing;
  auto require = [&](const char* symbol, auto& slot) {
    if (!Resolve(library, symbol, slot)) {
      absl::StrAppend(&missing, missing.empty() ? "" : ", ", symbol);
    }
  };
  require("cuGetErrorName", api.get_error_name);
  require("cuGetErrorString", api.get_error_string);
  require("cuInit", api.init);
  require("cuDeviceGetCount", api.device_get_count);
  require("cuDeviceGet", api.device_get);
  require("cuDeviceGetAttribute", api.device_get_attribute);
  require("cuDevicePrimaryCtxRetain", api.primary_ctx_retain);
  require("cuDevicePrimaryCtxRelease_v2", api.primary_ctx_release);
  require("cuCtxGetCurrent", api.ctx_get_current);
  require("cuCtxPushCurrent_v2", api.ctx_push_current);
  require("cuCtxPopCurrent_v2", api.ctx_pop_current);
  require("cuCtxSynchronize", api.ctx_synchronize);
  require("cuMemAlloc_v2", api.mem_alloc);
  require("cuMemFree_v2", api.mem_free);
  require("cuMemGetInfo_v2", api.mem_get_info);
  require("cuEventCreate", api.event_create);
  require("cuEventRecord", api.event_record);
  require("cuEventQuery", api.event_query);
  require("cuEventSynchronize", api.event_synchronize);
  require("cuEventDestroy_v2", api.event_destroy);
  if (!missing.empty()) {
    loaded.status = absl::UnavailableError(absl::StrCat(
        "CUDA driver in libcuda.so.1 is too old: missing ", missing));
    return loaded;
  }

  bool vmm = true;
  auto optional = [&](const char* symbol, auto& slot) {
    vmm = Resolve(library, symbol, slot) && vmm;
  };
  optional("cuMemGetAllocationGranularity", api.mem_get_granularity);
  optional("cuMemAddressReserve", api.mem_address_reserve);
  optional("cuMemAddressFree", api.mem_address_free);
  optional("cuMemCreate", api.mem_create);
  optional("cuMemRelease", api.mem_release);
  optional("cuMemMap", api.mem_map);
  optional("cuMemSetAccess", api.mem_set_access);
  optional("cuMemUnmap", api.mem_unmap);
  api.has_virtual_memory = vmm;
  // Without it (drivers before 10.1) allocation under capture simply fails
  // as it would have anyway.
  Resolve(library, "cuThreadExchangeStreamCaptureMode", api.exchange_capture_mode);

  Resolve(library, "cuIpcGetMemHandle", api.ipc_get_mem_handle);
  Resolve(library, "cuIpcOpenMemHandle_v2", api.ipc_open_mem_handle);
  Resolve(library, "cuIpcCloseMemHandle", api.ipc_close_mem_handle);
  Resolve(library, "cuMemExportToShareableHandle", api.mem_export);
  Resolve(library, "cuMemImportFromShareableHandle", api.mem_import);
  Resolve(library, "cuDeviceCanAccessPeer", api.device_can_access_peer);
  Resolve(library, "cuMemHostAlloc", api.mem_host_alloc);
  Resolve(library, "cuMemFreeHost", api.mem_free_host);
  Resolve(library, "cuStreamCreate", api.stream_create);
  Resolve(library, "cuStreamDestroy_v2", api.stream_destroy);
  Resolve(library, "cuStreamSynchronize", api.stream_synchronize);
  Resolve(library, "cuStreamWaitEvent", api.stream_wait_event);
  Resolve(library, "cuMemcpyDtoHAsync_v2", api.memcpy_dtoh_async);
  Resolve(library, "cuMemcpyHtoDAsync_v2", api.memcpy_htod_async);

  if (CUresult result = api.init(0); result != CUDA_SUCCESS) {
    // Whatever cuInit's reason (no device, a driver/kernel-module mismatch,
    // even out of memory), the driver is unusable for this process, and
    // callers test for exactly that code to fall back.
    std::string message(CuResultToStatus(api, result, "cuInit").message());
    // The stub cannot even name its own error, and loading it is a setup
    // mistake (LD_LIBRARY_PATH pointing at the toolkit) worth spelling out.
    if (result == CUDA_ERROR_STUB_LIBRARY) {
      absl::StrAppend(&message,
                      "; the libcuda.so.1 found is the CUDA toolkit's stub "
                      "library, not a driver (check LD_LIBRARY_PATH)");
    }
    loaded.status = absl::UnavailableError(message);
  }
  return loaded;
}

// Loaded on first use, exactly once even when the first calls race (C++
// function-local static). Deliberately leaked: a backend destroyed by another
// static destructor at exit must still find the table.
const LoadedDriver& Driver() {
  static const LoadedDriver* const driver = new LoadedDriver(LoadDriver());
  return *driver;
}

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
CUmemAllocationProp PinnedDeviceProp(int device) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// Recording an event is on the allocator's hot path (every cross-stream free)
// while cuEventCreate is slow, so returned events are kept for reuse. The cap
// bounds what a burst leaves behind; beyond it events are destroyed.
constexpr std::size_t kMaxCachedEvents = 1024;

// The page size reported when the device has no virtual memory management.
constexpr std::size_t kDefaultPageSize = std::size_t{2} << 20;

class CudaBackend final : public DeviceBackend {
 public:
  // Takes over one retain of `device`'s primary `context`. `page_size` is the
  // mapping granularity, or 0 when virtual memory is unusable.
  CudaBackend(const DriverApi& api, int device, CUdevice handle,
              CUcontext context, std::size_t page_size)
      : api_(api),
        device_(device),
        handle_(handle),
        context_(context),
        virtual_memory_(page_size != 0),
        page_size_(page_size != 0 ? page_size : kDefaultPageSize) {}

  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  ~CudaBackend() override {
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

  int device() const override { return device_; }
  const char* name() const override { return "cuda"; }

  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override {
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

  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override {
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

  absl::StatusOr<DeviceMemoryInfo> MemoryInfo() override {
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

  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override
      ABSL_LOCKS_EXCLUDED(events_mu_) {
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

  absl::StatusOr<bool> QueryEvent(EventHandle event) override {
    if (event == 0) return absl::InvalidArgumentError("QueryEvent: null event");
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    CUresult r = api_.event_query(reinterpret_cast<CUevent>(event));
    if (r == CUDA_SUCCESS) return true;
    if (r == CUDA_ERROR_NOT_READY) return false;
    return Error(r, "cuEventQuery", Hex(event));
  }

  absl::Status SynchronizeEvent(EventHandle event) override {
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

  absl::Status StreamWaitEvent(StreamId stream, EventHandle event) override {
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

  void DestroyEvent(EventHandle event) override
      ABSL_LOCKS_EXCLUDED(events_mu_) {
    if (event == 0) return;
    // Caching a still-pending event is fine: the next cuEventRecord simply
    // moves it to the new point in a stream.
    CacheOrDestroyEvent(reinterpret_cast<CUevent>(event));
  }

  absl::Status SynchronizeDevice() override {
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    if (CUresult r = api_.ctx_synchronize(); r != CUDA_SUCCESS) {
      return Error(r, "cuCtxSynchronize");
    }
    return absl::OkStatus();
  }

  bool SupportsVirtualMemory() const override { return virtual_memory_; }
  std::size_t PageSize() const override { return page_size_; }

  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override {
    if (absl::Status s = CheckVirtualMemory("ReserveAddressRange"); !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckPageMultiple("ReserveAddressRange size", bytes);
        !s.ok()) {
      return s;
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    CUdeviceptr base = 0;
    RelaxedCaptureMode relaxed(api_);
    if (CUresult r = api_.mem_address_reserve(&base, bytes, page_size_,
                                              /*addr=*/0, /*flags=*/0);
        r != CUDA_SUCCESS) {
      return Error(r, "cuMemAddressReserve", absl::StrCat(bytes, " bytes"));
    }
    return static_cast<DevicePtr>(base);
  }

  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override {
    if (absl::Status s = CheckVirtualMemory("ReleaseAddressRange"); !s.ok()) {
      return s;
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    if (CUresult r =
            api_.mem_address_free(static_cast<CUdeviceptr>(base), bytes);
        r != CUDA_SUCCESS) {
      return Error(r, "cuMemAddressFree",
                   absl::StrCat(Hex(base), ", ", bytes, " bytes"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override {
    if (absl::Status s = CheckVirtualMemory("CreatePhysical"); !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckPageMultiple("CreatePhysical size", bytes);
        !s.ok()) {
      return s;
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    CUmemAllocationProp prop = PinnedDeviceProp(device_);
    // Exportable, so that ExportIpc can share it: a POSIX file descriptor
    // costs nothing until one is asked for. A driver or device that refuses
    // the handle type (some virtualised GPUs) is asked once, then never
    // again: growable memory still works, only not across processes.
    const bool exportable = exportable_.load(std::memory_order_relaxed);
    if (exportable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle handle = 0;
    RelaxedCaptureMode relaxed(api_);
    CUresult r = api_.mem_create(&handle, bytes, &prop, /*flags=*/0);
    if (exportable &&
        (r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_INVALID_VALUE)) {
      prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
      r = api_.mem_create(&handle, bytes, &prop, /*flags=*/0);
      if (r == CUDA_SUCCESS) exportable_.store(false, std::memory_order_relaxed);
    }
    if (r != CUDA_SUCCESS) {
      return Error(r, "cuMemCreate", absl::StrCat(bytes, " bytes"));
    }
    return static_cast<PhysicalHandle>(handle);
  }

  absl::Status ReleasePhysical(PhysicalHandle handle) override {
    if (absl::Status s = CheckVirtualMemory("ReleasePhysical"); !s.ok()) {
      return s;
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    // Made on ccalloc's unmap worker while another thread may be capturing
    // in global mode, which would refuse it (see Unmap).
    RelaxedCaptureMode relaxed(api_);
    if (CUresult r =
            api_.mem_release(static_cast<CUmemGenericAllocationHandle>(handle));
        r != CUDA_SUCCESS) {
      return Error(r, "cuMemRelease", Hex(handle));
    }
    // The exported descriptor lives exactly as long as the handle, whichever
    // path releases it (trimming, a spare chunk, the destructor).
    CloseExportedFd(handle);
    return absl::OkStatus();
  }

  absl::Status Map(DevicePtr va, std::size_t bytes,
                   PhysicalHandle handle) override {
    if (absl::Status s = CheckVirtualMemory("Map"); !s.ok()) return s;
    if (absl::Status s = CheckPageMultiple("Map address", va); !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckPageMultiple("Map size", bytes); !s.ok()) {
      return s;
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    const auto ptr = static_cast<CUdeviceptr>(va);
    // Covers cuMemSetAccess below too.
    RelaxedCaptureMode relaxed(api_);
    if (CUresult r = api_.mem_map(
            ptr, bytes, /*offset=*/0,
            static_cast<CUmemGenericAllocationHandle>(handle), /*flags=*/0);
        r != CUDA_SUCCESS) {
      return Error(
          r, "cuMemMap",
          absl::StrCat(Hex(va), ", ", bytes, " bytes, handle ", Hex(handle)));
    }
    // A mapping is not accessible until access is granted; only this device
    // gets it because peers never touch the allocator's memory directly.
    CUmemAccessDesc access = {};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device_;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (CUresult r = api_.mem_set_access(ptr, bytes, &access, /*count=*/1);
        r != CUDA_SUCCESS) {
      absl::Status status = Error(r, "cuMemSetAccess",
                                  absl::StrCat(Hex(va), ", ", bytes, " bytes"));
      // The caller treats a failed Map as "nothing mapped", so undo it.
      if (CUresult u = api_.mem_unmap(ptr, bytes); u != CUDA_SUCCESS) {
        return Error(
            u, "cuMemUnmap",
            absl::StrCat(Hex(va), ", ", bytes,
                         " bytes, left mapped after: ", status.message()));
      }
      return status;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> ExportAllocation(DevicePtr base) override {
    if (api_.ipc_get_mem_handle == nullptr) return Missing("cuIpcGetMemHandle");
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    CUipcMemHandle handle = {};
    if (CUresult r = api_.ipc_get_mem_handle(&handle, static_cast<CUdeviceptr>(base));
        r != CUDA_SUCCESS) {
      return Error(r, "cuIpcGetMemHandle", Hex(base));
    }
    static_assert(sizeof(handle) == kIpcMemHandleBytes);
    return std::string(reinterpret_cast<const char*>(&handle), sizeof(handle));
  }

  absl::StatusOr<DevicePtr> OpenAllocation(absl::string_view handle) override {
    if (api_.ipc_open_mem_handle == nullptr) return Missing("cuIpcOpenMemHandle_v2");
    CUipcMemHandle ipc = {};
    if (handle.size() != sizeof(ipc)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "OpenAllocation: an IPC memory handle has ", sizeof(ipc), " bytes, not ",
          handle.size()));
    }
    std::memcpy(&ipc, handle.data(), sizeof(ipc));
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    CUdeviceptr ptr = 0;
    // Lazy peer access: memory of another device is opened on this one, as
    // PyTorch's getIpcDevPtr does.
    if (CUresult r = api_.ipc_open_mem_handle(&ptr, ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        r != CUDA_SUCCESS) {
      return Error(r, "cuIpcOpenMemHandle");
    }
    return static_cast<DevicePtr>(ptr);
  }

  absl::Status CloseAllocation(DevicePtr ptr) override {
    if (api_.ipc_close_mem_handle == nullptr) return Missing("cuIpcCloseMemHandle");
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    if (CUresult r = api_.ipc_close_mem_handle(static_cast<CUdeviceptr>(ptr));
        r != CUDA_SUCCESS) {
      return Error(r, "cuIpcCloseMemHandle", Hex(ptr));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<SharedPhysical> ExportPhysical(PhysicalHandle handle) override
      ABSL_LOCKS_EXCLUDED(fds_mu_) {
    if (absl::Status s = CheckVirtualMemory("ExportPhysical"); !s.ok()) return s;
    if (api_.mem_export == nullptr) return Missing("cuMemExportToShareableHandle");
    if (!exportable_.load(std::memory_order_relaxed)) {
      return absl::UnimplementedError(absl::StrCat(
          "CUDA device ", device_,
          ": growable memory was created without a shareable handle type (the driver "
          "refused POSIX file descriptors), so it cannot be shared with another process; "
          "share from classic segments (expandable_segments:False)"));
    }
    absl::MutexLock lock(&fds_mu_);
    if (auto it = exported_fds_.find(handle); it != exported_fds_.end()) {
      return SharedPhysical{static_cast<int>(getpid()), it->second};
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    int fd = -1;
    if (CUresult r = api_.mem_export(&fd, static_cast<CUmemGenericAllocationHandle>(handle),
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, /*flags=*/0);
        r != CUDA_SUCCESS) {
      return Error(r, "cuMemExportToShareableHandle", Hex(handle));
    }
    exported_fds_.emplace(handle, fd);
    return SharedPhysical{static_cast<int>(getpid()), fd};
  }

  absl::StatusOr<PhysicalHandle> ImportPhysical(SharedPhysical from) override {
    if (absl::Status s = CheckVirtualMemory("ImportPhysical"); !s.ok()) return s;
    if (api_.mem_import == nullptr) return Missing("cuMemImportFromShareableHandle");
    absl::StatusOr<int> fd = CopyFdFromProcess(from.pid, from.fd);
    if (!fd.ok()) return fd.status();
    CUmemGenericAllocationHandle handle = 0;
    CUresult r = CUDA_SUCCESS;
    {
      ScopedContext scope(api_, context_);
      const CountedCall counted(*this);
      if (!scope.ok()) {
        close(*fd);
        return scope.status();
      }
      r = api_.mem_import(&handle,
                          reinterpret_cast<void*>(static_cast<std::uintptr_t>(*fd)),
                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    }
    // The imported handle holds the memory; our copy of the descriptor is
    // not needed either way.
    close(*fd);
    if (r != CUDA_SUCCESS) {
      return Error(r, "cuMemImportFromShareableHandle",
                   absl::StrCat("descriptor ", from.fd, " of process ", from.pid));
    }
    return static_cast<PhysicalHandle>(handle);
  }

  absl::Status SetAccess(DevicePtr va, std::size_t bytes,
                         absl::Span<const int> devices) override {
    if (absl::Status s = CheckVirtualMemory("SetAccess"); !s.ok()) return s;
    if (devices.empty()) return absl::OkStatus();
    std::vector<CUmemAccessDesc> access(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
      access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access[i].location.id = devices[i];
      access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    if (CUresult r = api_.mem_set_access(static_cast<CUdeviceptr>(va), bytes, access.data(),
                                         access.size());
        r != CUDA_SUCCESS) {
      return Error(r, "cuMemSetAccess",
                   absl::StrCat(Hex(va), ", ", bytes, " bytes, ", devices.size(), " devices"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckPeer(int peer) override {
    if (api_.device_can_access_peer == nullptr) return Missing("cuDeviceCanAccessPeer");
    int count = 0;
    if (CUresult r = api_.device_get_count(&count); r != CUDA_SUCCESS) {
      return Error(r, "cuDeviceGetCount");
    }
    if (peer < 0 || peer >= count) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA device ", peer,
                                                     " is out of range: ", count,
                                                     " device(s) present"));
    }
    CUdevice peer_handle = 0;
    if (CUresult r = api_.device_get(&peer_handle, peer); r != CUDA_SUCCESS) {
      return Error(r, "cuDeviceGet", absl::StrCat("device ", peer));
    }
    int can = 0;
    if (CUresult r = api_.device_can_access_peer(&can, peer_handle, handle_);
        r != CUDA_SUCCESS) {
      return Error(r, "cuDeviceCanAccessPeer", absl::StrCat("device ", peer));
    }
    if (can == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "CUDA device ", peer, " cannot access the memory of device ", device_,
          " (no peer path between them)"));
    }
    return absl::OkStatus();
  }

  absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                         absl::Span<const int> peers) override {
    if (absl::Status s = CheckVirtualMemory("MapChunks"); !s.ok()) return s;
    if (chunks.empty()) return absl::OkStatus();
    if (absl::Status s = CheckPageMultiple("MapChunks address", va); !s.ok()) return s;
    for (const ChunkToMap& c : chunks) {
      if (absl::Status s = CheckPageMultiple("MapChunks size", c.bytes); !s.ok()) return s;
    }
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    RelaxedCaptureMode relaxed(api_);
    const auto base = static_cast<CUdeviceptr>(va);
    // Each chunk is mapped alone (~1 us); access, the expensive part, is
    // granted once for the whole stretch.
    std::size_t done = 0, offset = 0;
    absl::Status status;
    for (; done < chunks.size(); ++done) {
      if (CUresult r = api_.mem_map(base + offset, chunks[done].bytes, /*offset=*/0,
                                    static_cast<CUmemGenericAllocationHandle>(chunks[done].handle),
                                    /*flags=*/0);
          r != CUDA_SUCCESS) {
        status = Error(r, "cuMemMap",
                       absl::StrCat(Hex(va + offset), ", ", chunks[done].bytes, " bytes, handle ",
                                    Hex(chunks[done].handle)));
        break;
      }
      offset += chunks[done].bytes;
    }
    if (status.ok()) {
      std::vector<CUmemAccessDesc> access(1 + peers.size());
      for (std::size_t i = 0; i < access.size(); ++i) {
        access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access[i].location.id = i == 0 ? device_ : peers[i - 1];
        access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      }
      if (CUresult r = api_.mem_set_access(base, offset, access.data(), access.size());
          r != CUDA_SUCCESS) {
        status = Error(r, "cuMemSetAccess",
                       absl::StrCat(Hex(va), ", ", offset, " bytes, ", access.size(), " devices"));
      }
    }
    if (status.ok()) return status;
    // The caller treats a failed stretch as "nothing mapped": undo what was.
    offset = 0;
    for (std::size_t i = 0; i < done; ++i) {
      (void)api_.mem_unmap(base + offset, chunks[i].bytes);
      offset += chunks[i].bytes;
    }
    return status;
  }

  absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                        std::size_t* unmapped) override {
    if (unmapped != nullptr) *unmapped = 0;
    if (absl::Status s = CheckVirtualMemory("UnmapRun"); !s.ok()) return s;
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    const auto base = static_cast<CUdeviceptr>(va);
    // One call for the whole run where the driver takes it (the cost is per
    // call); a driver that wants one call per mapping is remembered.
    if (bytes > bytes_each && batched_unmap_.load(std::memory_order_relaxed)) {
      const CUresult r = api_.mem_unmap(base, bytes);
      if (r == CUDA_SUCCESS) {
        if (unmapped != nullptr) *unmapped = bytes;
        return absl::OkStatus();
      }
      if (r != CUDA_ERROR_INVALID_VALUE) {
        return Error(r, "cuMemUnmap", absl::StrCat(Hex(va), ", ", bytes, " bytes (a run)"));
      }
      batched_unmap_.store(false, std::memory_order_relaxed);
    }
    for (std::size_t done = 0; done < bytes; done += bytes_each) {
      if (CUresult r = api_.mem_unmap(base + done, bytes_each); r != CUDA_SUCCESS) {
        if (unmapped != nullptr) *unmapped = done;
        return Error(r, "cuMemUnmap", absl::StrCat(Hex(va + done), ", ", bytes_each, " bytes"));
      }
    }
    if (unmapped != nullptr) *unmapped = bytes;
    return absl::OkStatus();
  }

  absl::Status Unmap(DevicePtr va, std::size_t bytes) override {
    if (absl::Status s = CheckVirtualMemory("Unmap"); !s.ok()) return s;
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    // The unmap worker (segments/unmap_worker.h) calls this on its own
    // thread; a global-mode capture on another thread would refuse it there.
    // The memory is free and its work finished, so no capture can need it.
    RelaxedCaptureMode relaxed(api_);
    if (CUresult r = api_.mem_unmap(static_cast<CUdeviceptr>(va), bytes);
        r != CUDA_SUCCESS) {
      return Error(r, "cuMemUnmap",
                   absl::StrCat(Hex(va), ", ", bytes, " bytes"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<HostPtr> AllocateHost(std::size_t bytes) override {
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

  absl::Status FreeHost(HostPtr ptr, std::size_t bytes) override {
    if (api_.mem_free_host == nullptr) return Missing("cuMemFreeHost");
    ScopedContext scope(api_, context_);
    const CountedCall counted(*this);
    if (!scope.ok()) return scope.status();
    if (CUresult r = api_.mem_free_host(reinterpret_cast<void*>(ptr)); r != CUDA_SUCCESS) {
      return Error(r, "cuMemFreeHost", absl::StrCat(Hex(ptr), ", ", bytes, " bytes"));
    }
    return absl::OkStatus();
  }

  absl::Status CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) override
      ABSL_LOCKS_EXCLUDED(copy_mu_) {
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

  absl::Status CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) override
      ABSL_LOCKS_EXCLUDED(copy_mu_) {
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

  absl::Status WaitCopies() override ABSL_LOCKS_EXCLUDED(copy_mu_) {
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
  absl::StatusOr<CopyFence> RecordCopyFence() override ABSL_LOCKS_EXCLUDED(copy_mu_) {
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

  absl::Status WaitCopyFence(CopyFence fence) override ABSL_LOCKS_EXCLUDED(copy_mu_) {
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

 private:
  // The stream backups are copied on, created on first use. Non-blocking, so
  // that a copy never waits for the legacy default stream: the allocator has
  // waited for the device before it queues any.
  absl::StatusOr<CUstream> CopyStream() ABSL_LOCKS_EXCLUDED(copy_mu_) {
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

  static std::string Hex(std::uint64_t value) {
    return absl::StrCat("0x", absl::Hex(value));
  }

  // Names the device in every driver error, since a process may drive several.
  absl::Status Error(CUresult result, absl::string_view call,
                     absl::string_view detail = {}) const {
    return CuResultToStatus(api_, result,
                            absl::StrCat("CUDA device ", device_, ": ", call),
                            detail);
  }

  absl::Status CheckVirtualMemory(absl::string_view what) const {
    if (virtual_memory_) return absl::OkStatus();
    return absl::UnimplementedError(
        absl::StrCat(what, ": CUDA device ", device_,
                     " does not support virtual memory management"));
  }

  // The driver would reject these too, but with a bare CUDA_ERROR_INVALID_VALUE
  // that does not say which argument was wrong.
  absl::Status CheckPageMultiple(absl::string_view what,
                                 std::uint64_t value) const {
    if (value != 0 && value % page_size_ == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", value, " is not a positive multiple of the ",
                     page_size_, "-byte page size of CUDA device ", device_));
  }

  absl::Status Missing(absl::string_view call) const {
    return absl::UnimplementedError(absl::StrCat("CUDA device ", device_, ": the driver has no ",
                                                 call, " (too old for this call)"));
  }

  void CloseExportedFd(PhysicalHandle handle) ABSL_LOCKS_EXCLUDED(fds_mu_) {
    absl::MutexLock lock(&fds_mu_);
    auto it = exported_fds_.find(handle);
    if (it == exported_fds_.end()) return;
    close(it->second);
    exported_fds_.erase(it);
  }

  CUevent TakeCachedEvent() ABSL_LOCKS_EXCLUDED(events_mu_) {
    absl::MutexLock lock(&events_mu_);
    if (free_events_.empty()) return nullptr;
    CUevent event = free_events_.back();
    free_events_.pop_back();
    return event;
  }

  void CacheOrDestroyEvent(CUevent event) ABSL_LOCKS_EXCLUDED(events_mu_) {
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

  const DriverApi& api_;
  const int device_;
  const CUdevice handle_;
  const CUcontext context_;
  const bool virtual_memory_;
  const std::size_t page_size_;

  absl::Mutex copy_mu_;
  CUstream copy_stream_ ABSL_GUARDED_BY(copy_mu_) = nullptr;
  // Copy fences: fence n is fence_events_[n - 1], recorded since the last
  // WaitCopies when n <= fences_used_.
  std::vector<CUevent> fence_events_ ABSL_GUARDED_BY(copy_mu_);
  std::size_t fences_used_ ABSL_GUARDED_BY(copy_mu_) = 0;

  absl::Mutex events_mu_;
  // Events created in context_ and returned by DestroyEvent, ready for reuse.
  std::vector<CUevent> free_events_ ABSL_GUARDED_BY(events_mu_);

  // Whether physical memory is created exportable (see CreatePhysical).
  std::atomic<bool> exportable_{true};
  std::atomic<bool> batched_unmap_{true};
  absl::Mutex fds_mu_;
  // The descriptor exported for each physical handle, open until the handle
  // is released so that another process can fetch it at any time.
  absl::flat_hash_map<PhysicalHandle, int> exported_fds_ ABSL_GUARDED_BY(fds_mu_);
};

}  // namespace

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
