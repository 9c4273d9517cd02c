// cuda_driver.cc — loading the CUDA driver and translating its errors.
//
// DriverApi is a table of driver entry points resolved once with dlopen and
// dlsym. ccalloc never links libcuda, so binaries start on machines without
// a GPU and only the factory (cuda_backend.cc) reports that there is no
// device. CuResultToStatus is the one place where a CUresult becomes an
// absl::Status.
//
// Calls only dlopen/dlsym and, through the table it fills, cuInit and the
// error-name lookups; everything else the driver does is the backend's
// (cuda_backend.cc, cuda_backend_vmm.cc).
#include "allocator/backends/cuda_driver.h"

#include <cuda.h>
#include <dlfcn.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ccalloc {
namespace cuda_internal {

absl::Status CuResultToStatus(const DriverApi& api, CUresult result,
                              absl::string_view call,
                              absl::string_view detail) {
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

namespace {

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
  Resolve(library, "cuStreamGetCaptureInfo_v3", api.stream_get_capture_info);
  Resolve(library, "cuGraphNodeGetDependencies_v2", api.graph_node_get_dependencies);

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

}  // namespace

// Loaded on first use, exactly once even when the first calls race (C++
// function-local static). Deliberately leaked: a backend destroyed by another
// static destructor at exit must still find the table.
const LoadedDriver& Driver() {
  static const LoadedDriver* const driver = new LoadedDriver(LoadDriver());
  return *driver;
}

}  // namespace cuda_internal
}  // namespace ccalloc
