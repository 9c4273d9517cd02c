// cuda_backend_impl.h — the CudaBackend class: DeviceBackend on the CUDA
// driver, in the device's primary context.
//
// Private to the CUDA backend: callers get one from CreateCudaBackend
// (cuda_backend.h) and see only the DeviceBackend interface. The class is
// declared here because its definition is split in two files along the
// driver's own seam:
//   cuda_backend.cc      construction, classic segments, events, the device,
//                        backups of paused regions (host buffers and copies);
//   cuda_backend_vmm.cc  virtual memory management (address ranges, physical
//                        memory, mapping) and sharing it (IPC, peers);
//   cuda_backend_capture.cc  the order of work inside a stream capture
//                        (the capture's graph).
// Every member calls the driver only through the DriverApi table and under a
// ScopedContext (cuda_driver.h), and turns a failed CUresult into a Status
// only through Error(), which names the device. The class makes the device's
// primary context current around each call, because callers arrive from
// arbitrary threads (PyTorch's among them), and keeps a small cache of events
// so that recording one on the hot path does not pay for cuEventCreate.
#ifndef CCALLOC_ALLOCATOR_CUDA_BACKEND_IMPL_H_
#define CCALLOC_ALLOCATOR_CUDA_BACKEND_IMPL_H_

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_driver.h"

namespace ccalloc {
namespace cuda_internal {

class CudaBackend final : public DeviceBackend {
 public:
  // Takes over one retain of `device`'s primary `context`. `page_size` is the
  // mapping granularity, or 0 when virtual memory is unusable.
  CudaBackend(const DriverApi& api, int device, CUdevice handle,
              CUcontext context, std::size_t page_size);
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  ~CudaBackend() override;

  int device() const override { return device_; }
  const char* name() const override { return "cuda"; }

  // Classic segments, events and the device: cuda_backend.cc.
  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override;
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override;
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo() override;
  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override
      ABSL_LOCKS_EXCLUDED(events_mu_);
  absl::StatusOr<bool> QueryEvent(EventHandle event) override;
  absl::Status SynchronizeEvent(EventHandle event) override;
  absl::Status StreamWaitEvent(StreamId stream, EventHandle event) override;
  void DestroyEvent(EventHandle event) override
      ABSL_LOCKS_EXCLUDED(events_mu_);
  absl::Status SynchronizeDevice() override;

  // The order of work in a capture's graph: cuda_backend_capture.cc.
  absl::StatusOr<CapturePosition> CapturePositionOf(StreamId stream) override;
  absl::StatusOr<bool> OrderedBefore(const CapturePosition& before, StreamId stream) override
      ABSL_LOCKS_EXCLUDED(capture_mu_);
  bool SupportsVirtualMemory() const override { return virtual_memory_; }
  std::size_t PageSize() const override { return page_size_; }

  // Virtual memory management and sharing (IPC, peers): cuda_backend_vmm.cc.
  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override;
  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override;
  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override;
  absl::Status ReleasePhysical(PhysicalHandle handle) override;
  absl::Status Map(DevicePtr va, std::size_t bytes,
                   PhysicalHandle handle) override;
  absl::StatusOr<std::string> ExportAllocation(DevicePtr base) override;
  absl::StatusOr<DevicePtr> OpenAllocation(absl::string_view handle) override;
  absl::Status CloseAllocation(DevicePtr ptr) override;
  absl::StatusOr<SharedPhysical> ExportPhysical(PhysicalHandle handle) override
      ABSL_LOCKS_EXCLUDED(fds_mu_);
  absl::StatusOr<PhysicalHandle> ImportPhysical(SharedPhysical from) override;
  absl::Status SetAccess(DevicePtr va, std::size_t bytes,
                         absl::Span<const int> devices) override;
  absl::Status CheckPeer(int peer) override;
  absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                         absl::Span<const int> peers) override;
  absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                        std::size_t* unmapped) override;
  absl::Status Unmap(DevicePtr va, std::size_t bytes) override;

  // Backups of paused regions: host buffers, the copy stream and its fences
  // (cuda_backend.cc).
  absl::StatusOr<HostPtr> AllocateHost(std::size_t bytes) override;
  absl::Status FreeHost(HostPtr ptr, std::size_t bytes) override;
  absl::Status CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) override
      ABSL_LOCKS_EXCLUDED(copy_mu_);
  absl::Status CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) override
      ABSL_LOCKS_EXCLUDED(copy_mu_);
  absl::Status WaitCopies() override ABSL_LOCKS_EXCLUDED(copy_mu_);
  absl::StatusOr<CopyFence> RecordCopyFence() override ABSL_LOCKS_EXCLUDED(copy_mu_);
  absl::Status WaitCopyFence(CopyFence fence) override ABSL_LOCKS_EXCLUDED(copy_mu_);

 private:
  // In cuda_backend.cc.
  absl::StatusOr<CUstream> CopyStream() ABSL_LOCKS_EXCLUDED(copy_mu_);
  CUevent TakeCachedEvent() ABSL_LOCKS_EXCLUDED(events_mu_);
  void CacheOrDestroyEvent(CUevent event) ABSL_LOCKS_EXCLUDED(events_mu_);
  // In cuda_backend_vmm.cc.
  void CloseExportedFd(PhysicalHandle handle) ABSL_LOCKS_EXCLUDED(fds_mu_);
  // In cuda_backend_capture.cc: what cuStreamGetCaptureInfo says of
  // `stream` (the arrays are the driver's, valid until the next call on the
  // stream), and the dependencies of a graph node with their edge data.
  struct CaptureInfo {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    const CUgraphNode* nodes = nullptr;
    const CUgraphEdgeData* edges = nullptr;  // may be null: all default
    std::size_t count = 0;
  };
  absl::StatusOr<CaptureInfo> GetCaptureInfo(StreamId stream) const;
  absl::Status NodeDependencies(CUgraphNode node, std::vector<CUgraphNode>* nodes,
                                std::vector<CUgraphEdgeData>* edges) const;

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
  // OrderedBefore's walk, kept between calls: per stream, the nodes known
  // to be ordered before its next captured work in capture `capture`. A
  // stream's position only moves forward (each captured node depends on the
  // stream's dependencies, a wait adds to them), so what was ordered before
  // it stays so, and each call walks only the nodes added since. (A program
  // that drops dependencies with cuStreamUpdateCaptureDependencies would
  // break that; PyTorch's walk assumes the same.)
  struct Ancestry {
    std::uint64_t capture = 0;
    absl::flat_hash_set<CUgraphNode> ordered;
  };
  absl::Mutex capture_mu_;
  absl::flat_hash_map<StreamId, Ancestry> ancestry_ ABSL_GUARDED_BY(capture_mu_);

  absl::Mutex fds_mu_;
  // The descriptor exported for each physical handle, open until the handle
  // is released so that another process can fetch it at any time.
  absl::flat_hash_map<PhysicalHandle, int> exported_fds_ ABSL_GUARDED_BY(fds_mu_);
};

}  // namespace cuda_internal
}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_CUDA_BACKEND_IMPL_H_
