// device_allocator.h — the caching allocator of one device.
//
// Allocate: round the request, pick the pool, take the best-fitting free block
// of that pool and stream (splitting it when the rest is worth keeping); on a
// miss, reclaim blocks whose cross-stream events completed, then grow. If the
// device refuses, walk the out-of-memory ladder: release cached memory that is
// wholly free and retry; synchronize, free everything cached and retry; then
// fail with a report that says where the memory is. Live blocks are never
// touched by any of it.
//
// Free: mark the block free (or pending while other streams may still use it)
// and coalesce it with free neighbours in its segment. Nothing goes back to
// the device on this path.
//
// Growable (expandable) segments reserve a large virtual range per stream and
// pool and map physical memory into it on demand; neighbours therefore always
// coalesce. Memory under free holes stays mapped until it is needed elsewhere:
// once the free mapped memory would exceed Options::release_slack of the peak
// allocated, wholly free chunks are given back before new memory is taken.
// That keeps reserved memory within a fraction of a percent of what the
// program has allocated. A block's interior pages are mapped as one chunk (the
// driver's cost is per handle), its partial edge pages as single pages.
//
// Thread safety: one mutex guards everything; the backend is only called with
// it held, so the backend needs no ordering of its own.
#ifndef CCALLOC_ALLOCATOR_DEVICE_ALLOCATOR_H_
#define CCALLOC_ALLOCATOR_DEVICE_ALLOCATOR_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backend.h"
#include "allocator/block_pool.h"
#include "allocator/options.h"
#include "allocator/size_policy.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "stats/trace_recorder.h"

namespace ccalloc {

class DeviceAllocator {
 public:
  DeviceAllocator(std::unique_ptr<DeviceBackend> backend, const Options& options);
  // Returns every segment, page and event to the backend, live blocks too.
  ~DeviceAllocator();

  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // A block of at least `size` bytes usable on `stream`. Size 0 gives 0 (a
  // null pointer). InvalidArgument for sizes that cannot be represented;
  // ResourceExhausted (with a report) when memory cannot be found.
  absl::StatusOr<DevicePtr> Allocate(std::size_t size, StreamId stream)
      ABSL_LOCKS_EXCLUDED(mu_);
  // InvalidArgument for a pointer this allocator did not hand out, an interior
  // pointer or a second free; nothing changes then. Freeing 0 is a no-op.
  absl::Status Free(DevicePtr ptr) ABSL_LOCKS_EXCLUDED(mu_);
  // The block is also used on `stream`: after Free it is not reused until the
  // work queued on `stream` before the free has finished.
  absl::Status RecordStream(DevicePtr ptr, StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns every wholly free segment and every free mapped page to the device.
  absl::Status EmptyCache() ABSL_LOCKS_EXCLUDED(mu_);

  // Caps reserved memory (0: no cap). Memory already reserved is not freed by
  // the call; growth beyond the cap first releases cached memory.
  absl::Status SetMemoryLimit(std::size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SetMemoryFraction(double fraction) ABSL_LOCKS_EXCLUDED(mu_);
  std::size_t memory_limit() const ABSL_LOCKS_EXCLUDED(mu_);

  MemoryStats GetStats() const ABSL_LOCKS_EXCLUDED(mu_);
  void ResetPeakStats() ABSL_LOCKS_EXCLUDED(mu_);
  void ResetAccumulatedStats() ABSL_LOCKS_EXCLUDED(mu_);
  Snapshot TakeSnapshot() const ABSL_LOCKS_EXCLUDED(mu_);
  FragmentationNow Fragmentation() const ABSL_LOCKS_EXCLUDED(mu_);

  // Checks every invariant: blocks tile their segments, free neighbours are
  // coalesced, pools index exactly the free blocks, pages cover every used
  // byte, and the counters equal what the blocks say. `why` gets the first
  // problem found.
  bool Validate(std::string* why = nullptr) const ABSL_LOCKS_EXCLUDED(mu_);

  // Every successful Allocate and Free from now on is also reported to
  // `recorder` (not owned; null stops recording). See stats/trace_recorder.h.
  void SetTraceRecorder(TraceRecorder* recorder) ABSL_LOCKS_EXCLUDED(mu_);

  DeviceBackend& backend() { return *backend_; }
  const Options& options() const { return options_; }
  int device() const { return backend_->device(); }

 private:
  struct PendingEvent {
    EventHandle event;
    Block* block;
  };

  // One attempt: reuse a free block or grow. ResourceExhausted when the device
  // or the limit refuses; other errors are the backend's.
  absl::StatusOr<Block*> TryAllocate(std::size_t rounded, std::size_t requested,
                                     StreamId stream, PoolKind pool)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Block*> GrowClassic(std::size_t rounded, StreamId stream, PoolKind pool)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Segment*> NewExpandableSegment(std::size_t rounded, StreamId stream,
                                                PoolKind pool)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a new segment of [base, base + size) with one free block covering
  // it, indexed in its pool.
  Segment* AddSegment(DevicePtr base, std::size_t size, StreamId stream, PoolKind pool,
                      bool expandable) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Maps every page under [begin, begin + bytes) of `segment`; on failure the
  // pages mapped so far stay mapped (cached, counted) and no block changes.
  absl::Status EnsureMapped(Segment* segment, DevicePtr begin, std::size_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Maps one chunk of `pages` pages at `first_page`: the physical memory
  // `reuse` (unmapped elsewhere, of exactly that size) or, when 0, new memory.
  absl::Status MapChunk(Segment* segment, std::size_t first_page, std::size_t pages,
                        PhysicalHandle reuse) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Unmaps chunks lying wholly inside free blocks of growable segments,
  // largest blocks first, skipping [keep_begin, keep_end), until `target`
  // bytes are unmapped, and returns how many were. The physical memory goes
  // back to the device, or into `keep_handles` (handle, pages) for remapping.
  absl::StatusOr<std::size_t> UnmapFreeChunks(
      std::size_t target, DevicePtr keep_begin, DevicePtr keep_end,
      std::vector<std::pair<PhysicalHandle, std::size_t>>* keep_handles)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SynchronizeStream(StreamId stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Block objects are recycled: new/delete on every split and coalesce was a
  // fifth of the hot path.
  Block* NewBlock() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteBlock(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Takes `block` out of its pool, splits off the rest when worth it, and
  // marks it allocated.
  Block* Carve(Block* block, std::size_t rounded, std::size_t requested)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks a block free, coalesces it and indexes it.
  void FreeBlock(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Status ProcessEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for the device, then completes every pending block.
  absl::Status SynchronizeAndFreeEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases wholly free classic segments (all of them, or enough for
  // `target` bytes when `target` > 0, oversize ones first) and, for growable
  // segments, unmaps free pages. Returns the bytes released.
  absl::StatusOr<std::size_t> ReleaseCached(std::size_t target)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReleaseSegment(Segment* segment) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void GarbageCollect() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  BlockPool& PoolOf(PoolKind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return kind == PoolKind::kSmall ? small_pool_ : large_pool_;
  }
  // Adds (sign +1) or removes (-1) a free block's contribution to the
  // inactive_split counters.
  void AccountInactive(const Block* block, int sign) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StatAdd(StatArray& array, PoolKind pool, std::int64_t amount)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WithinLimit(std::size_t extra) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::size_t reserved() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<std::size_t>(stats_.reserved_bytes[kStatAll].current);
  }
  std::string OutOfMemoryReport(std::size_t size, std::size_t rounded, StreamId stream,
                                const absl::Status& cause) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string DescribeBadPointer(DevicePtr ptr, bool for_free) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  FragmentationNow FragmentationLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ValidateLocked(std::string* why) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DebugCheck() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<DeviceBackend> backend_;
  const Options options_;
  const SizePolicy policy_;
  const bool expandable_;  // options asked for it and the backend can
  std::size_t page_size_ = 0;
  std::size_t va_size_ = 0;  // address space reserved per growable segment

  mutable absl::Mutex mu_;
  BlockPool small_pool_ ABSL_GUARDED_BY(mu_){PoolKind::kSmall};
  BlockPool large_pool_ ABSL_GUARDED_BY(mu_){PoolKind::kLarge};
  // Blocks handed to the user, by address.
  absl::flat_hash_map<DevicePtr, Block*> allocated_ ABSL_GUARDED_BY(mu_);
  // Every segment by base address (owning).
  absl::btree_map<DevicePtr, std::unique_ptr<Segment>> segments_ ABSL_GUARDED_BY(mu_);
  // The growable segment currently growing, per (stream, pool).
  absl::flat_hash_map<std::pair<StreamId, int>, Segment*> growable_ ABSL_GUARDED_BY(mu_);
  // Per stream, in record order: a later event cannot finish before an
  // earlier one on the same stream, so only the front needs asking.
  absl::flat_hash_map<StreamId, std::deque<PendingEvent>> pending_ ABSL_GUARDED_BY(mu_);
  std::size_t num_pending_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Block*> spare_blocks_ ABSL_GUARDED_BY(mu_);
  // Counts frees; a free block remembers the count at its newest free.
  std::uint64_t free_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Per stream, the free count when the stream (or the device) was last
  // waited for: memory freed before that is no longer touched by queued
  // work, so it can be unmapped without waiting again.
  absl::flat_hash_map<StreamId, std::uint64_t> synced_upto_ ABSL_GUARDED_BY(mu_);
  std::uint64_t device_synced_upto_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t memory_limit_ ABSL_GUARDED_BY(mu_) = 0;
  TraceRecorder* recorder_ ABSL_GUARDED_BY(mu_) = nullptr;
  MemoryStats stats_ ABSL_GUARDED_BY(mu_);

  // --- Sharing with other processes and devices (device_allocator_ipc.cc) ---
 public:
  // What ExportIpc hands out: a handle (format in allocator/ipc.h) and the
  // offset of the pointer from the base of the memory the handle names.
  struct IpcExport {
    std::string handle;
    std::size_t offset = 0;
  };
  // Shares the allocated block holding `ptr` (its start or inside it) with
  // another process, which opens the handle with IpcImporter (or, for
  // classic segments, PyTorch's own getIpcDevPtr). Classic segments export
  // the whole segment; growable ones the physical chunks under the block.
  // InvalidArgument for a pointer not inside an allocated block (nothing
  // changes then); Unimplemented where the device cannot export growable
  // memory. The caller keeps the block allocated while it is shared.
  absl::StatusOr<IpcExport> ExportIpc(DevicePtr ptr) ABSL_LOCKS_EXCLUDED(mu_);
  // The allocation a pointer lies in: for classic segments the segment
  // (base, size); for growable ones the range ExportIpc exports for the
  // block. InvalidArgument for a pointer not inside an allocated block.
  absl::StatusOr<std::pair<DevicePtr, std::size_t>> BaseAllocation(DevicePtr ptr) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Growable memory mapped now and later is also read-write for
  // `peer_device` (PyTorch's enablePeerAccess(peer_device, device())).
  // Classic segments need nothing here: cudaDeviceEnablePeerAccess covers
  // them. Idempotent. InvalidArgument for a negative or unknown device or
  // this allocator's own; FailedPrecondition when the devices have no peer
  // path.
  absl::Status AddPeerAccess(int peer_device) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The allocated block that holds `ptr`; InvalidArgument saying why not.
  absl::StatusOr<const Block*> AllocatedBlockHolding(DevicePtr ptr, absl::string_view what) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What BaseAllocation answers for an allocated block.
  std::pair<DevicePtr, std::size_t> SharedRange(const Block* block) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Devices other than this one that get access to every growable mapping.
  std::vector<int> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_DEVICE_ALLOCATOR_H_
