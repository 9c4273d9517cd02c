// cuda_backend_vmm.cc — CudaBackend's virtual memory management and sharing:
// address ranges (cuMemAddressReserve), physical memory (cuMemCreate,
// exportable as a POSIX file descriptor where the driver allows), mapping and
// unmapping it with access for this device and its peers, and sharing memory
// with other processes (classic cuIpc* handles, exported physical memory)
// and devices (peer checks).
//
// Part of CudaBackend (see cuda_backend_impl.h); kept apart from
// cuda_backend.cc, which holds the classic segments, events and copies. Code
// here calls the driver only through the DriverApi table, with the primary
// context made current by ScopedContext and, for the calls a stream capture
// in global mode would refuse, relaxed by RelaxedCaptureMode (cuda_driver.h);
// file descriptors of another process come through fd_transfer.h.
#include <cuda.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_backend_impl.h"
#include "allocator/backends/cuda_driver.h"
#include "allocator/backends/fd_transfer.h"

namespace ccalloc {
namespace cuda_internal {

absl::StatusOr<DevicePtr> CudaBackend::ReserveAddressRange(std::size_t bytes) {
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

absl::Status CudaBackend::ReleaseAddressRange(DevicePtr base, std::size_t bytes) {
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

absl::StatusOr<PhysicalHandle> CudaBackend::CreatePhysical(std::size_t bytes) {
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

absl::Status CudaBackend::ReleasePhysical(PhysicalHandle handle) {
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

absl::Status CudaBackend::Map(DevicePtr va, std::size_t bytes,
                              PhysicalHandle handle) {
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

absl::StatusOr<std::string> CudaBackend::ExportAllocation(DevicePtr base) {
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

absl::StatusOr<DevicePtr> CudaBackend::OpenAllocation(absl::string_view handle) {
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

absl::Status CudaBackend::CloseAllocation(DevicePtr ptr) {
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

absl::StatusOr<SharedPhysical> CudaBackend::ExportPhysical(PhysicalHandle handle) {
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

absl::StatusOr<PhysicalHandle> CudaBackend::ImportPhysical(SharedPhysical from) {
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

absl::Status CudaBackend::SetAccess(DevicePtr va, std::size_t bytes,
                                    absl::Span<const int> devices) {
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

absl::Status CudaBackend::CheckPeer(int peer) {
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

absl::Status CudaBackend::MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                                    absl::Span<const int> peers) {
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

absl::Status CudaBackend::UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                                   std::size_t* unmapped) {
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

absl::Status CudaBackend::Unmap(DevicePtr va, std::size_t bytes) {
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

void CudaBackend::CloseExportedFd(PhysicalHandle handle) {
  absl::MutexLock lock(&fds_mu_);
  auto it = exported_fds_.find(handle);
  if (it == exported_fds_.end()) return;
  close(it->second);
  exported_fds_.erase(it);
}

}  // namespace cuda_internal
}  // namespace ccalloc
