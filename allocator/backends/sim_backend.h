// sim_backend.h — a host-only device for tests, replay and benchmarks.
//
// Addresses are fake (never dereferenced), aligned like the driver's and never
// reused, so two live blocks can only overlap through an allocator bug. The
// simulated device has a capacity shared by plain allocations and physical
// pages; tests inject failures (the Nth call, anything above N bytes, a random
// fraction) and decide when events complete. Every byte handed out is counted
// so a test can prove that nothing leaked when the allocator is destroyed.
//
// A simulated stream capture (BeginCapture) refuses what a real CUDA graph
// capture in global mode refuses: synchronizing, querying events, waiting for
// an event recorded outside the capture, and freeing, unmapping or releasing
// memory (a captured graph would replay into it). Each refusal returns
// FailedPrecondition and marks the capture invalidated, as the driver does.
// Allocating and mapping new memory stays allowed: CudaBackend runs those in
// relaxed capture mode.
//
// The capture records a graph (sim_capture.cc), so that a test can build
// the multi-stream patterns of PyTorch's graph tests and the cache can ask
// which work is ordered before which (CapturePositionOf, OrderedBefore):
// work launched on a captured stream (Launch) is a node after the stream's
// dependencies; an event recorded on a captured stream carries those
// dependencies, and a stream that waits for it joins the capture (or, in it
// already, adds them to its own), as torch.cuda.Stream.wait_stream does with
// cuEventRecord and cuStreamWaitEvent. Such an event is the graph's alone:
// querying or synchronizing it is refused, before or after the capture
// ended. EndCapture on the stream that began the capture ends it for every
// stream that joined, and refuses (invalidated) a stream whose work was not
// joined back, as the driver's cudaErrorStreamCaptureUnjoined does.
//
// Memory has contents, so that backups can be checked byte for byte: each
// physical handle and each host buffer keeps sparse storage, written by the
// copies and by the test hooks WriteBytes / ReadBytes, reading as zero where
// never written (fresh physical memory is zero, so a restore that forgot a
// block shows). Copies are queued and done at WaitCopies, as on a stream:
// unmapping or releasing memory, or freeing a host buffer, while a queued
// copy uses it is refused, which catches a missing wait.
//
// Several SimBackends sharing one SimIpcRegistry behave as processes of one
// machine: each has its own fake pid, exported physical memory is named by a
// fake file descriptor of its process, and classic IPC handles open in any
// process but the exporter's. Sim memory has no bytes, so an opened handle
// or imported chunk is bookkeeping that aliases the exporter's object. Every
// mapping remembers which devices may access it, for peer-access tests.
#ifndef CCALLOC_ALLOCATOR_SIM_BACKEND_H_
#define CCALLOC_ALLOCATOR_SIM_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"

namespace ccalloc {

// Which backend call a failure is injected into.
// The first five are the ones an allocator calls (the fuzzer's corpus
// encodes an op modulo 5); the rest belong to IPC and peer access.
enum class SimOp : int {
  kAllocate = 0,
  kCreatePhysical,
  kMap,
  kRecordEvent,
  kQueryEvent,
  kExport,          // ExportAllocation, ExportPhysical
  kOpenAllocation,  // OpenAllocation
  kImportPhysical,  // ImportPhysical
  kSetAccess,       // SetAccess
  kUnmap,           // Unmap, UnmapRun
  kAllocateHost,    // AllocateHost
  kCopy,            // CopyToHost, CopyToDevice (when queued)
  kWaitCopies,      // WaitCopies, WaitCopyFence (the queued copies are dropped)
  kCopyFence,       // RecordCopyFence
  kStreamWait,      // StreamWaitEvent
  kCaptureQuery,    // CapturePositionOf, OrderedBefore
  kCount
};

// The "operating system" shared by SimBackends that stand for processes of
// one machine: pids, file descriptors naming physical memory, and classic
// IPC handles. Thread-safe. A SimBackend made without one gets its own.
class SimIpcRegistry {
 public:
  SimIpcRegistry() = default;
  SimIpcRegistry(const SimIpcRegistry&) = delete;
  SimIpcRegistry& operator=(const SimIpcRegistry&) = delete;

  // Physical memory objects some process still holds a handle to.
  std::int64_t live_objects() const ABSL_LOCKS_EXCLUDED(mu_);
  // Descriptors open in process `pid` that name physical memory.
  std::int64_t open_fds(int pid) const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether descriptor `fd` is open in process `pid`.
  bool fd_open(int pid, int fd) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class SimBackend;
  int NewPid() ABSL_LOCKS_EXCLUDED(mu_);
  struct Object {
    std::size_t bytes = 0;
    int refs = 0;  // handles to it, in all processes
  };
  struct ClassicExport {
    int pid = 0;
    DevicePtr base = 0;
    std::size_t bytes = 0;
  };
  mutable absl::Mutex mu_;
  int next_pid_ ABSL_GUARDED_BY(mu_) = 4000;
  int next_fd_ ABSL_GUARDED_BY(mu_) = 100;
  std::uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<std::uint64_t, Object> objects_ ABSL_GUARDED_BY(mu_);
  // (pid, fd) -> object.
  absl::flat_hash_map<std::pair<int, int>, std::uint64_t> fds_ ABSL_GUARDED_BY(mu_);
  // Classic IPC handle id -> the allocation it names.
  absl::flat_hash_map<std::uint64_t, ClassicExport> classic_ ABSL_GUARDED_BY(mu_);
};

class SimBackend : public DeviceBackend {
 public:
  struct Config {
    std::size_t capacity = std::size_t{80} << 30;
    std::size_t page_size = std::size_t{2} << 20;
    bool virtual_memory = true;
    // Events complete as soon as they are recorded (replay and benchmarks
    // model a GPU that keeps up); tests that drive stream semantics turn it off.
    bool auto_complete_events = false;
    // With auto_complete_events: the GPU runs this many Tick()s behind the
    // host (0: it keeps up). An event completes once the GPU has reached it;
    // waiting for one before that drains the queue up to it, and the wait's
    // length in ticks is counted (Counts::waited_ticks): the replay's model
    // of what a trim that waits for queued work costs a training step.
    std::uint64_t gpu_lag = 0;
    int device = 0;
    // Devices of the simulated machine (peer access accepts 0..n-1).
    int num_devices = 8;
    // Whether physical memory can be exported (CUDA: the driver accepted
    // POSIX file descriptors as a handle type).
    bool exportable_physical = true;
    // Shared with the SimBackends standing for other processes; null: a
    // registry of its own.
    std::shared_ptr<SimIpcRegistry> ipc;
  };

  SimBackend() : SimBackend(Config{}) {}
  explicit SimBackend(Config config);
  ~SimBackend() override;

  int device() const override { return config_.device; }
  const char* name() const override { return "sim"; }

  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo() override ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<bool> QueryEvent(EventHandle event) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SynchronizeEvent(EventHandle event) override ABSL_LOCKS_EXCLUDED(mu_);
  // Refused while any capture is underway (a capture may not wait on work
  // outside it). With gpu_lag, a host wait that drains `stream` past this
  // point drains the event's stream up to the event too.
  absl::Status StreamWaitEvent(StreamId stream, EventHandle event) override
      ABSL_LOCKS_EXCLUDED(mu_);
  void DestroyEvent(EventHandle event) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SynchronizeDevice() override ABSL_LOCKS_EXCLUDED(mu_);

  bool SupportsVirtualMemory() const override { return config_.virtual_memory; }
  std::size_t PageSize() const override { return config_.page_size; }
  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ReleasePhysical(PhysicalHandle handle) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Unmap(DevicePtr va, std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  // An UnmapRun fails whole, as on CUDA.
  absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                        std::size_t* unmapped) override ABSL_LOCKS_EXCLUDED(mu_);
  // Counted as one stretch and a map call per chunk; a failure may be
  // injected at any chunk (kMap) or at the peers' access (kSetAccess), and
  // undoes the stretch.
  absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                         absl::Span<const int> peers) override ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<std::string> ExportAllocation(DevicePtr base) override ABSL_LOCKS_EXCLUDED(mu_);
  // Refuses a handle of this process and a second open of the same handle
  // (as older drivers do; newer ones count references).
  absl::StatusOr<DevicePtr> OpenAllocation(absl::string_view handle) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status CloseAllocation(DevicePtr ptr) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<SharedPhysical> ExportPhysical(PhysicalHandle handle) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<PhysicalHandle> ImportPhysical(SharedPhysical from) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SetAccess(DevicePtr va, std::size_t bytes, absl::Span<const int> devices) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status CheckPeer(int peer) override;

  absl::StatusOr<HostPtr> AllocateHost(std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status FreeHost(HostPtr ptr, std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WaitCopies() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<CopyFence> RecordCopyFence() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WaitCopyFence(CopyFence fence) override ABSL_LOCKS_EXCLUDED(mu_);

  // --- Contents (test hooks) -------------------------------------------------
  // Writes / reads mapped device memory (growable mappings only);
  // InvalidArgument where a byte is not mapped.
  absl::Status WriteBytes(DevicePtr ptr, const std::string& bytes) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::string> ReadBytes(DevicePtr ptr, std::size_t bytes) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // This backend's process id in its registry.
  int pid() const { return pid_; }
  const std::shared_ptr<SimIpcRegistry>& ipc_registry() const { return registry_; }
  // The devices that may access the mapping starting at `va`, ascending;
  // empty when nothing is mapped there.
  std::vector<int> AccessOf(DevicePtr va) const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Test controls -------------------------------------------------------
  // Fail the nth call (1-based, counted from now) of `op`; 0 clears it.
  void FailNth(SimOp op, std::int64_t n) ABSL_LOCKS_EXCLUDED(mu_);
  // Fail every Allocate / CreatePhysical above `bytes` (0 clears it).
  void FailAbove(std::size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Fail each call of any SimOp but kUnmap with this probability (seeded; 0
  // clears it).
  void FailRandomly(double probability, std::uint64_t seed) ABSL_LOCKS_EXCLUDED(mu_);
  void SetCapacity(std::size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Completes every event recorded so far on `stream` / on all streams.
  void CompleteStream(StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  void CompleteAll() ABSL_LOCKS_EXCLUDED(mu_);
  // Advances the host's clock by one tick (Config::gpu_lag).
  void Tick() ABSL_LOCKS_EXCLUDED(mu_);

  // --- Simulated stream capture (sim_capture.cc) ----------------------------
  // Starts a capture on `stream` (its origin); FailedPrecondition if it is
  // already captured. The invalidation mark is cleared when the first
  // capture begins.
  absl::Status BeginCapture(StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the capture `stream` began, for every stream that joined it.
  // FailedPrecondition if `stream` is not being captured or did not begin
  // its capture (nothing changes then), or if a stream that joined has work
  // the origin's does not depend on (the capture ends all the same, marked
  // invalidated).
  absl::Status EndCapture(StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  bool capturing() const ABSL_LOCKS_EXCLUDED(mu_);
  // A kernel launched on `stream` (a test hook): while the stream is
  // captured, a node of its capture's graph that depends on the stream's
  // dependencies and becomes its only one. Nothing otherwise.
  void Launch(StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<CapturePosition> CapturePositionOf(StreamId stream) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<bool> OrderedBefore(const CapturePosition& before, StreamId stream) override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a call was refused since the first capture began; the first
  // refused call's message is kept for test output.
  bool capture_invalidated() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string capture_violation() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Accounting ----------------------------------------------------------
  struct Counts {
    std::size_t bytes_in_use = 0;      // plain allocations + physical pages
    std::int64_t live_allocations = 0;
    std::int64_t live_physical = 0;
    std::int64_t live_mappings = 0;
    std::int64_t live_ranges = 0;
    std::int64_t live_events = 0;
    std::int64_t allocate_calls = 0;
    std::int64_t deallocate_calls = 0;
    std::int64_t map_calls = 0;        // Map calls and chunks of MapChunks
    std::int64_t map_stretches = 0;    // MapChunks calls (their chunks count as Map calls)
    std::int64_t unmap_calls = 0;      // Unmap and UnmapRun calls
    std::int64_t failures_injected = 0;
    std::int64_t synchronize_calls = 0;
    std::int64_t live_opened = 0;       // classic IPC handles open here
    std::int64_t live_imported = 0;     // imported physical handles (also in live_physical)
    std::int64_t exported_fds = 0;      // descriptors this process keeps open
    std::int64_t live_host = 0;         // host buffers
    std::size_t host_bytes = 0;         // their bytes
    std::int64_t copy_calls = 0;        // CopyToHost and CopyToDevice calls
    std::size_t copied_bytes = 0;       // what they copied
    std::int64_t event_waits = 0;       // SynchronizeEvent calls that waited (gpu_lag)
    std::int64_t stream_waits = 0;      // StreamWaitEvent calls
    std::uint64_t waited_ticks = 0;     // the ticks they waited, together
  };
  Counts counts() const ABSL_LOCKS_EXCLUDED(mu_);
  // True when everything taken has been given back (events included).
  bool NothingOutstanding() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct EventState {
    StreamId stream;
    bool complete;
    std::uint64_t at = 0;  // the host's tick when recorded
    // Recorded into a capture (nonzero): that capture, and the stream's
    // dependencies then, which a stream waiting for the event takes on.
    std::uint64_t capture = 0;
    absl::InlinedVector<CaptureNode, 2> after;
  };
  // Whether the GPU has reached `state` (Config::gpu_lag), marking it so.
  bool Reached(EventState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The first tick of `stream`'s queue no wait has drained past.
  std::uint64_t DrainedUpTo(StreamId stream) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  struct Mapping {
    std::size_t bytes;
    PhysicalHandle handle;
    absl::InlinedVector<int, 2> access;  // ascending
  };
  struct Physical {
    std::size_t bytes = 0;
    bool imported = false;       // another process's memory; not counted in bytes_in_use
    std::uint64_t object = 0;    // registry object once exported or imported
    int fd = -1;                 // the exported descriptor, while open
  };
  struct Opened {
    std::uint64_t id = 0;  // the registry's classic handle id
    std::size_t bytes = 0;
  };

  // Sparse bytes in 4 KiB pieces; absent pieces read as zero.
  class Contents {
   public:
    void Write(std::size_t offset, const char* data, std::size_t n);
    void Read(std::size_t offset, char* out, std::size_t n) const;

   private:
    static constexpr std::size_t kPiece = 4096;
    absl::btree_map<std::size_t, std::string> pieces_;
  };
  struct HostBuffer {
    std::size_t bytes = 0;
    Contents contents;
  };
  struct QueuedCopy {
    CopyFence seq;  // copies queued before it
    bool to_host;
    DevicePtr device;
    HostPtr host;
    std::size_t bytes;
  };
  // The contents of the mapped memory at [ptr, ptr + n), each piece with the
  // physical handle and the offset in it; InvalidArgument where unmapped.
  struct Piece {
    PhysicalHandle handle;
    std::size_t offset;
    std::size_t bytes;
  };
  absl::StatusOr<std::vector<Piece>> Pieces(DevicePtr ptr, std::size_t n) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The host buffer holding [ptr, ptr + n) and the offset in it.
  absl::StatusOr<std::pair<HostBuffer*, std::size_t>> HostAt(HostPtr ptr, std::size_t n)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Checks a copy and queues it for WaitCopies (or fails it when injected).
  absl::Status QueueCopy(bool to_host, DevicePtr device, HostPtr host, std::size_t bytes)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a queued copy touches device [va, va + n).
  bool CopyUses(DevicePtr va, std::size_t n) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ShouldFail(SimOp op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One mapping, checked; and the undoing of one known to exist.
  absl::Status MapOne(DevicePtr va, std::size_t bytes, PhysicalHandle handle)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnmapOne(DevicePtr va) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FailedPrecondition (and the capture invalidated) when a capture is
  // underway; OK otherwise.
  absl::Status RefuseDuringCapture(const char* what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FailedPrecondition, the capture invalidated, whether or not one is
  // underway (the misuse of an event recorded into a capture).
  absl::Status RefuseCaptured(const char* what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // StreamWaitEvent of an event recorded into a capture: `stream` joins the
  // capture, or adds the event's dependencies to its own.
  absl::Status WaitInCapture(StreamId stream, const EventState& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether every node of `nodes` is one of `from` or an ancestor of one in
  // `capture`'s graph.
  bool Precede(std::uint64_t capture, absl::Span<const CaptureNode> nodes,
               absl::Span<const CaptureNode> from) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Capacity may be lowered below what is in use; then nothing is free.
  std::size_t FreeBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return counts_.bytes_in_use >= capacity_ ? 0 : capacity_ - counts_.bytes_in_use;
  }
  DevicePtr NextAddress(std::size_t bytes, std::size_t alignment)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Config config_;
  const std::shared_ptr<SimIpcRegistry> registry_;
  const int pid_;
  mutable absl::Mutex mu_;
  std::size_t capacity_ ABSL_GUARDED_BY(mu_);
  DevicePtr next_address_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DevicePtr, std::size_t> allocations_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DevicePtr, std::size_t> ranges_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PhysicalHandle, Physical> physical_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PhysicalHandle, int> physical_map_count_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DevicePtr, Mapping> mappings_ ABSL_GUARDED_BY(mu_);
  // The same mappings by address, to find the one holding a byte.
  absl::btree_map<DevicePtr, std::size_t> mapping_ends_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PhysicalHandle, Contents> contents_ ABSL_GUARDED_BY(mu_);
  absl::btree_map<HostPtr, HostBuffer> host_ ABSL_GUARDED_BY(mu_);
  HostPtr next_host_ ABSL_GUARDED_BY(mu_) = HostPtr{1} << 40;
  std::vector<QueuedCopy> queued_ ABSL_GUARDED_BY(mu_);
  CopyFence copies_queued_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<EventHandle, EventState> events_ ABSL_GUARDED_BY(mu_);
  // Classic allocations exported, by base: their registry handle id.
  absl::flat_hash_map<DevicePtr, std::uint64_t> exported_ ABSL_GUARDED_BY(mu_);
  // Classic handles of other processes open here, by address.
  absl::flat_hash_map<DevicePtr, Opened> opened_ ABSL_GUARDED_BY(mu_);
  EventHandle next_event_ ABSL_GUARDED_BY(mu_) = 1;
  // Config::gpu_lag: the host's clock, and per stream (and for all) the
  // first tick a wait has not drained the queue past.
  std::uint64_t tick_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<StreamId, std::uint64_t> drained_ ABSL_GUARDED_BY(mu_);
  std::uint64_t drained_all_ ABSL_GUARDED_BY(mu_) = 0;
  // StreamWaitEvent: per waiting stream, (host tick of the wait, the
  // event's stream, the event's tick), in call order.
  struct DeviceWait {
    std::uint64_t tick;
    StreamId on;
    std::uint64_t at;
  };
  absl::flat_hash_map<StreamId, std::vector<DeviceWait>> device_waits_ ABSL_GUARDED_BY(mu_);
  PhysicalHandle next_physical_ ABSL_GUARDED_BY(mu_) = 1;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::int64_t fail_nth_[static_cast<int>(SimOp::kCount)] ABSL_GUARDED_BY(mu_) = {};
  std::size_t fail_above_ ABSL_GUARDED_BY(mu_) = 0;
  double fail_probability_ ABSL_GUARDED_BY(mu_) = 0.0;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  // The captured streams: the capture each belongs to and its dependencies.
  struct Captured {
    std::uint64_t capture = 0;
    absl::InlinedVector<CaptureNode, 4> after;
  };
  absl::flat_hash_map<StreamId, Captured> captures_ ABSL_GUARDED_BY(mu_);
  // The graph of each capture underway: the stream that began it, and every
  // node's dependencies. Node and capture ids are never reused.
  struct CaptureGraph {
    StreamId origin = 0;
    absl::flat_hash_map<CaptureNode, absl::InlinedVector<CaptureNode, 2>> parents;
  };
  absl::flat_hash_map<std::uint64_t, CaptureGraph> graphs_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_capture_ ABSL_GUARDED_BY(mu_) = 1;
  CaptureNode next_node_ ABSL_GUARDED_BY(mu_) = 1;
  std::string capture_violation_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SIM_BACKEND_H_
