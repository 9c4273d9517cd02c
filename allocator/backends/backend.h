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

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ccalloc {

// A device address. Kept as an integer inside the allocator so that simulated
// addresses are never dereferenced by accident.
using DevicePtr = std::uintptr_t;

// An opaque stream identity (a cudaStream_t / CUstream cast to an integer; 0 is
// the legacy default stream).
using StreamId = std::uintptr_t;

// Page-locked host memory handed out by a backend (cuMemHostAlloc on CUDA).
// An integer like DevicePtr: a simulated host buffer has no bytes at that
// address, and the allocator only ever passes it back to the backend.
using HostPtr = std::uintptr_t;

// An opaque event handle owned by the backend.
using EventHandle = std::uintptr_t;

// A point in the backend's queue of copies (RecordCopyFence).
using CopyFence = std::uint64_t;

// An opaque handle to physical memory created for virtual-memory mapping
// (a CUmemGenericAllocationHandle on CUDA).
using PhysicalHandle = std::uint64_t;

// Physical memory exported for another process: a file descriptor open in
// process `pid` (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR on CUDA). Another
// process fetches its own copy of the descriptor with pidfd_getfd.
struct SharedPhysical {
  int pid = 0;
  int fd = -1;
};

// Size of a classic segment's IPC handle (CU_IPC_HANDLE_SIZE, the same as
// sizeof(cudaIpcMemHandle_t)).
inline constexpr std::size_t kIpcMemHandleBytes = 64;

struct DeviceMemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

// A node of the graph a stream capture records (a CUgraphNode on CUDA),
// opaque to the cache.
using CaptureNode = std::uintptr_t;

// Where a captured stream stands in its capture's graph: the nodes the next
// work captured on it will depend on (its capture dependency set, CUDA's
// "terminal" nodes; empty before it has captured any work). Every piece of
// work captured on the stream so far is one of them or an ancestor of one.
struct CapturePosition {
  std::uint64_t capture = 0;  // the capture's id, unique in the process
  absl::InlinedVector<CaptureNode, 4> nodes;
};

// The backend's calls into the driver, by the thread that made them: the
// allocating thread (in training, the one launching kernels, whose time is
// step time) or a background thread of ccalloc's (the unmap worker, which
// marks itself with BackgroundCalls). `ns` is host time inside the calls
// (CudaBackend; the simulated device takes none).
struct DriverCallTotals {
  std::int64_t calls = 0;
  std::int64_t ns = 0;
  std::int64_t background_calls = 0;
  std::int64_t background_ns = 0;
};

// While one lives, the driver calls its thread makes count as background
// calls (DriverCallTotals). Only ccalloc's own threads make one.
class BackgroundCalls {
 public:
  BackgroundCalls();
  ~BackgroundCalls();
  BackgroundCalls(const BackgroundCalls&) = delete;
  BackgroundCalls& operator=(const BackgroundCalls&) = delete;
  // Whether the calling thread is inside one.
  static bool active();
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // Every driver call made so far through this backend, by thread; counted
  // with relaxed atomics, so readable at any time from any thread.
  DriverCallTotals driver_calls() const;

  // Counts one driver call (a backend operation) and, when `timed`, the host
  // time from its construction to its destruction.
  class CountedCall {
   public:
    explicit CountedCall(const DeviceBackend& backend, bool timed = true);
    ~CountedCall();
    CountedCall(const CountedCall&) = delete;
    CountedCall& operator=(const CountedCall&) = delete;

   private:
    const DeviceBackend& backend_;
    const int slot_;
    const bool timed_;
    std::chrono::steady_clock::time_point start_;
  };

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
  // Makes work queued on `stream` after this call wait, on the device, for
  // `event` as last recorded (cuStreamWaitEvent): no host wait. The event
  // may be destroyed right after. Unimplemented where a backend has none.
  virtual absl::Status StreamWaitEvent(StreamId stream, EventHandle event) {
    return absl::UnimplementedError("stream waits not supported");
  }
  virtual void DestroyEvent(EventHandle event) = 0;
  // Waits for all work on the device (used by the free-all step of the OOM path).
  virtual absl::Status SynchronizeDevice() = 0;

  // --- Order inside a stream capture (graph_capture_record_stream_reuse) ----
  // A capture refuses event queries, so a block freed during one while other
  // streams used it can only be proven free by the capture's graph: once
  // every node its uses were captured before is ordered before the next work
  // of the stream that would reuse it. Both calls are legal during a capture
  // and change nothing in it.
  //
  // `stream`'s position in the capture it belongs to. FailedPrecondition
  // when it is not being captured (then the graph orders nothing of its
  // work), Unimplemented where the backend cannot tell; other errors are
  // the driver's.
  virtual absl::StatusOr<CapturePosition> CapturePositionOf(StreamId stream) {
    return absl::UnimplementedError("capture positions not supported");
  }
  // Whether every node of `before` (a position CapturePositionOf gave
  // earlier) is ordered before the next work captured on `stream`: each is
  // one of `stream`'s current dependencies or an ancestor of one, through
  // edges that wait for a node's completion. False whenever that is not
  // known: `stream` not capturing, or capturing into another capture than
  // `before`'s, or a backend that cannot tell. True for an empty `before`
  // of `stream`'s capture (nothing to order); the cache does not ask then.
  // An error only when the driver fails; the caller takes it as false.
  virtual absl::StatusOr<bool> OrderedBefore(const CapturePosition& before, StreamId stream) {
    return false;
  }

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
  // A stretch of mappings made and undone together: maps chunks[i] right
  // after chunks[i-1] from `va`, then grants this device and `peers` access
  // to the whole stretch at once. A map without its access costs about a
  // microsecond; the access call costs the rest, on an H100 ~17 us plus ~32
  // us per handle it covers, so a stretch of k chunks saves (k-1) * ~17 us
  // over k Map calls (bench/driver_costs/README.md). On failure nothing of
  // the stretch stays mapped (what was mapped is unmapped again; where a
  // driver refuses that too, the chunk stays mapped and the caller's release
  // of it reports the error). The default maps chunk by chunk (Map, then
  // SetAccess for peers).
  struct ChunkToMap {
    std::size_t bytes;
    PhysicalHandle handle;
  };
  virtual absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                                 absl::Span<const int> peers);
  // MapChunks of handles of one size: handles[i] at va + i * bytes_each.
  absl::Status MapRun(DevicePtr va, std::size_t bytes_each,
                      absl::Span<const PhysicalHandle> handles, absl::Span<const int> peers);
  // UnmapRun undoes the mappings (each of `bytes_each`) tiling
  // [va, va + bytes), in one call where the driver allows. On failure
  // `*unmapped` (when given) says how many leading bytes of the run are
  // unmapped all the same; the rest stays mapped. The default unmaps mapping
  // by mapping.
  virtual absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                                std::size_t* unmapped);

  // --- Copies between device and host (backups of paused regions) ----------
  // Page-locked host memory of `bytes`, so that copies run asynchronously at
  // the link's bandwidth. ResourceExhausted when the host refuses it.
  virtual absl::StatusOr<HostPtr> AllocateHost(std::size_t bytes) {
    return absl::UnimplementedError("host memory not supported");
  }
  virtual absl::Status FreeHost(HostPtr ptr, std::size_t bytes) {
    return absl::UnimplementedError("host memory not supported");
  }
  // Queue a copy on a stream the backend owns (not ordered with any stream
  // of the program: the caller waits for the device first). The source must
  // stay valid and mapped, the destination untouched, until WaitCopies. An
  // error of a queued copy may only show at WaitCopies.
  virtual absl::Status CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) {
    return absl::UnimplementedError("copies not supported");
  }
  virtual absl::Status CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) {
    return absl::UnimplementedError("copies not supported");
  }
  // Waits until every queued copy has finished; the first error of any.
  // Fences recorded before it are spent.
  virtual absl::Status WaitCopies() { return absl::OkStatus(); }
  // A fence after every copy queued so far, so that a pause can give back
  // the memory whose bytes are safe while later copies still run.
  // WaitCopyFence returns once the copies queued before `fence` have
  // finished (the first error of any); a fence is valid until the next
  // WaitCopies. The defaults have no fences: each wait waits for all.
  virtual absl::StatusOr<CopyFence> RecordCopyFence() { return CopyFence{0}; }
  virtual absl::Status WaitCopyFence(CopyFence fence) { return WaitCopies(); }

  // --- Sharing with other processes and other devices ----------------------
  // See allocator/cache/ipc.h for how these make the handles ExportIpc hands out.
  //
  // Classic segments: the IPC handle (cuIpcGetMemHandle, kIpcMemHandleBytes
  // bytes) of the device allocation that starts at `base`.
  virtual absl::StatusOr<std::string> ExportAllocation(DevicePtr base) {
    return absl::UnimplementedError("IPC not supported");
  }
  // Opens a handle made by ExportAllocation in another process and returns
  // where it is mapped here. The driver refuses a handle of this process.
  virtual absl::StatusOr<DevicePtr> OpenAllocation(absl::string_view handle) {
    return absl::UnimplementedError("IPC not supported");
  }
  // Undoes one OpenAllocation.
  virtual absl::Status CloseAllocation(DevicePtr ptr) {
    return absl::UnimplementedError("IPC not supported");
  }
  // Growable segments: a descriptor naming the physical memory `handle`.
  // Exporting the same handle again gives the same descriptor; it stays open
  // until ReleasePhysical(handle), so another process can fetch it as long
  // as the memory lives. Unimplemented when the memory was not created
  // exportable.
  virtual absl::StatusOr<SharedPhysical> ExportPhysical(PhysicalHandle handle) {
    return absl::UnimplementedError("IPC not supported");
  }
  // Physical memory exported by ExportPhysical (in any process, this one
  // included), as a handle of this backend: Map it, and ReleasePhysical it
  // when done. The memory lives until every process released it.
  virtual absl::StatusOr<PhysicalHandle> ImportPhysical(SharedPhysical from) {
    return absl::UnimplementedError("IPC not supported");
  }
  // Makes the mapped range [va, va + bytes) (whole mappings) read-write for
  // `devices`, in addition to the devices that already have access.
  virtual absl::Status SetAccess(DevicePtr va, std::size_t bytes,
                                 absl::Span<const int> devices) {
    return absl::UnimplementedError("virtual memory not supported");
  }
  // OK when device `peer` exists and can access this device's memory;
  // InvalidArgument for an unknown device, FailedPrecondition when the two
  // devices have no peer path.
  virtual absl::Status CheckPeer(int peer) {
    return absl::UnimplementedError("peer access not supported");
  }
 private:
  // [0]: the allocating thread's, [1]: background threads'. Mutable: a
  // const backend still counts the calls it makes.
  mutable std::atomic<std::int64_t> calls_[2]{};
  mutable std::atomic<std::int64_t> ns_[2]{};
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_BACKEND_H_
