// device_allocator.h — the caching allocator of one device.
//
// Allocate: round the request, pick the pool, take the best-fitting free block
// of that pool and stream (splitting it when the rest is worth keeping); where
// growable segments would have to move memory to map it, borrow another
// stream's mapped free block instead, that stream's work first on the device
// (cross_stream_reuse, Borrow); on a miss, reclaim blocks whose cross-stream
// events completed, then grow. If the
// device refuses, walk the out-of-memory ladder: release cached memory that is
// wholly free and retry; synchronize, free everything cached and retry; then
// fail with a report that says where the memory is. Live blocks are never
// touched by any of it.
//
// Free: mark the block free (or pending while other streams may still use it)
// and coalesce it with free neighbours in its segment. Nothing goes back to
// the device on this path.
//
// Where blocks live is not this class's business: a SegmentStore
// (allocator/segments/) creates the segments, makes the bytes under a block
// usable before it is handed out, and gives memory back. Classic segments are
// one device allocation each; growable (expandable) segments are a large
// virtual range per stream and pool with pages mapped on demand, so their
// neighbours always coalesce and reserved memory stays within a fraction of a
// percent of what the program has allocated (see growable_segments.h).
//
// Private pools (CUDA graphs, PyTorch semantics): while BeginAllocateToPool
// routes a stream's allocations into a private pool, a stream capture may be
// underway, and a capture refuses synchronization, event queries and freeing
// memory. So while any routing is active the allocator calls none of those:
// cross-stream events of frees are recorded only once no routing is active,
// nothing is unmapped or released, and the out-of-memory ladder fails instead
// of synchronizing. A private pool's memory stays put while its use count is
// above 0 (a captured graph replays into it); at 0 its wholly free memory
// goes back to the device at the first moment no capture is underway. With
// graph_capture_record_stream_reuse a pool's block freed during the capture
// while other streams used it may be reused before the capture ends, once
// the capture's graph orders those streams' work before the reusing
// stream's (PromoteOrdered).
//
// Thread safety: one mutex guards everything, the segment store's state
// included (the store is only called with it held, and each call carries a
// CacheLock that clang checks was made with it held); the backend is only
// called with it held, so the backend needs no ordering of its own.
#ifndef CCALLOC_ALLOCATOR_DEVICE_ALLOCATOR_H_
#define CCALLOC_ALLOCATOR_DEVICE_ALLOCATOR_H_

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
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
#include "allocator/backends/backend.h"
#include "allocator/cache/block_pool.h"
#include "allocator/cache/options.h"
#include "allocator/segments/segments.h"
#include "allocator/cache/size_policy.h"
#include "stats/counters.h"
#include "stats/tags.h"
#include "stats/snapshot.h"
#include "stats/trace_recorder.h"

namespace ccalloc {

// An allocated block of a pool, as PoolLiveBlocks reports it.
struct LiveBlock {
  DevicePtr ptr;
  std::size_t size;       // the block's size (what allocated_bytes counts)
  std::size_t requested;  // the user's size
  StreamId stream;
};

class DeviceAllocator final : private SegmentCache {
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
  // Returns every wholly free segment and every free mapped page of the
  // default pool and of private pools whose use count reached 0 to the
  // device. FailedPrecondition while a capture is underway.
  absl::Status EmptyCache() ABSL_LOCKS_EXCLUDED(mu_);
  // Returns once the driver calls made off the calling thread (growable
  // segments' unmaps and releases, background_unmap) are done, so that what
  // the device holds is what reserved_bytes says and the calls are all
  // counted. Nothing else changes. For tests and measurements: no caller
  // needs it for correctness.
  absl::Status FinishBackgroundWork() ABSL_LOCKS_EXCLUDED(mu_);

  // --- Private pools (CUDA graphs; PyTorch's beginAllocateToPool & co.) -----
  // A private pool is named by a nonzero PoolId and shared by use count.
  // InvalidArgument for pool 0.
  absl::Status CreateOrIncrefPool(PoolId pool) ABSL_LOCKS_EXCLUDED(mu_);
  // Routes every later Allocate whose stream satisfies `filter` into `pool`
  // (creating or increfing it like CreateOrIncrefPool) until
  // EndAllocateToPool. While any routing is active a stream capture may be
  // underway: see the file comment. `filter` runs under the allocator's lock
  // and must not call back into it. FailedPrecondition if `pool` is already
  // being allocated to; InvalidArgument for pool 0 or an empty filter.
  absl::Status BeginAllocateToPool(PoolId pool, std::function<bool(StreamId)> filter)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the routing (the use count stays: ReleasePool drops it). Does no
  // deferred work itself: PyTorch calls it before the capture has ended.
  // FailedPrecondition if `pool` is not being allocated to.
  absl::Status EndAllocateToPool(PoolId pool) ABSL_LOCKS_EXCLUDED(mu_);
  // -1 on the use count; at 0 the pool's cached memory is released as soon
  // as it is wholly free (now for what is free, later as its live blocks are
  // freed); segments with live blocks stay. NotFound for an unknown pool,
  // FailedPrecondition if the count is already 0 or would reach 0 while the
  // pool is being allocated to.
  absl::Status ReleasePool(PoolId pool) ABSL_LOCKS_EXCLUDED(mu_);
  // NotFound for an unknown pool (or 0).
  absl::StatusOr<int> PoolUseCount(PoolId pool) const ABSL_LOCKS_EXCLUDED(mu_);
  // PyTorch's MemPool(use_on_oom=True): an allocation outside any pool that
  // the out-of-memory ladder (free-all-and-retry included) cannot serve is
  // served by a free block of such a pool on the same stream whose memory
  // is backed, as PyTorch's allocator does; the block stays the pool's (its
  // free puts it back there). Only while the pool's use count is above 0,
  // never during a capture. NotFound for an unknown pool (or 0),
  // InvalidArgument for a region (sleep and wake).
  absl::Status SetPoolUseOnOom(PoolId pool, bool use_on_oom) ABSL_LOCKS_EXCLUDED(mu_);
  // The allocated blocks of `pool` (0: the default pool), by address; empty
  // for an unknown pool.
  std::vector<LiveBlock> PoolLiveBlocks(PoolId pool) const ABSL_LOCKS_EXCLUDED(mu_);
  // Carves exactly [ptr, ptr + size) out of a free block of `pool` (to
  // restore a checkpointed pool layout at the same addresses) and marks it
  // allocated with `requested` and `stream`, counted like an Allocate.
  // InvalidArgument if the range is not wholly inside one free block of that
  // pool on that stream, or is not 512-byte aligned; NotFound for an unknown
  // pool. Growable segments map the pages under the range first.
  absl::StatusOr<DevicePtr> AllocateAt(PoolId pool, DevicePtr ptr, std::size_t size,
                                       std::size_t requested, StreamId stream)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Releases only that pool's wholly free cached memory: the default pool's
  // for 0; for a private pool, nothing while its use count is above 0.
  // FailedPrecondition while a capture is underway (it would synchronize),
  // NotFound for an unknown pool.
  absl::Status EmptyCachePool(PoolId pool) ABSL_LOCKS_EXCLUDED(mu_);

  // --- Sleep and wake (regions; device_allocator_regions.cc) ---------------
  // Allocations made while a region is the calling thread's current region
  // (SetCurrentRegion, block_pool.h) live in segments of that region only.
  // Pause waits for the device, then gives back every byte the region holds,
  // live blocks' too; their addresses stay. With `backup` the allocated
  // blocks' bytes are first copied to page-locked host memory (kept after
  // Resume for the next pause; EmptyCache frees it) and Resume copies them
  // back; without, the contents are lost. A failed backup changes nothing.
  // Allocating in a paused region is FailedPrecondition; freeing its blocks
  // works (their backup is dropped). Resume maps memory again under the
  // region's live blocks at the same addresses and restores them; on any
  // failure the region stays paused, backup included, and nothing it took
  // stays. Growable segments only: FailedPrecondition otherwise, NotFound
  // for a region never used, FailedPrecondition to pause a paused region,
  // resume a running one, or either during a stream capture. Both return the
  // bytes of device memory given back or taken.
  struct PauseOptions {
    bool backup = false;
  };
  absl::StatusOr<std::size_t> Pause(RegionId region, PauseOptions options)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::size_t> Pause(RegionId region) ABSL_LOCKS_EXCLUDED(mu_) {
    return Pause(region, PauseOptions());
  }
  absl::StatusOr<std::size_t> Resume(RegionId region) ABSL_LOCKS_EXCLUDED(mu_);
  // Takes the page-locked host buffer a backup of `region` needs now (sized
  // to its live bytes), so that the first Pause with backup does not pay for
  // pinning (seconds for GiBs). Call it once the region's tensors exist,
  // outside any timed path. The buffer is kept until the allocator goes
  // (EmptyCache keeps it) and grows at a pause that needs more. Returns its
  // size. NotFound for a region never used; FailedPrecondition while paused.
  absl::StatusOr<std::size_t> ReserveBackup(RegionId region) ABSL_LOCKS_EXCLUDED(mu_);
  bool IsPaused(RegionId region) const ABSL_LOCKS_EXCLUDED(mu_);

  // Caps reserved memory (0: no cap). Memory already reserved is not freed by
  // the call; growth beyond the cap first releases cached memory.
  absl::Status SetMemoryLimit(std::size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SetMemoryFraction(double fraction) ABSL_LOCKS_EXCLUDED(mu_);
  // torch.cuda.get_per_process_memory_fraction(), as PyTorch computes it:
  // the bytes the fraction last set allows over the device's total, else
  // the memory limit over the total, else 1.0.
  double MemoryFraction() const ABSL_LOCKS_EXCLUDED(mu_);
  std::size_t memory_limit() const ABSL_LOCKS_EXCLUDED(mu_);

  // What PyTorch's caching allocator says when a request of `bytes` fails,
  // word for word ("CUDA out of memory. Tried to allocate 69.90 GiB. GPU 0
  // has a total capacity of ... is reserved by PyTorch but unallocated. If
  // reserved but unallocated memory is large try setting ..."), with this
  // device's figures: the start of every out-of-memory report, which tools,
  // tests and scripts match on; ccalloc's own account follows it.
  // Counts an out-of-memory error (num_ooms) for a request of `bytes` this
  // allocator refused otherwise, and returns that text: what a layer above
  // reports as one (the PyTorch plugin: a size past what can be represented,
  // which PyTorch reports as out of memory).
  std::string RefuseAsOutOfMemory(std::size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  MemoryStats GetStats() const ABSL_LOCKS_EXCLUDED(mu_);
  void ResetPeakStats() ABSL_LOCKS_EXCLUDED(mu_);
  // Bytes of live blocks per tag (the allocating thread's CurrentTag()),
  // current and peak, by tag id; they add up to allocated_bytes.
  std::vector<TagUsage> TagStats() const ABSL_LOCKS_EXCLUDED(mu_);
  // For each of `ptrs[0..n)`, the allocated block holding it: its start,
  // size (rounded, as allocated_bytes counts it) and tag; zeros where no
  // allocated block holds the pointer. One lock for the whole batch: the
  // profiler maps every known tensor to its block at each phase boundary.
  void BlocksHolding(const DevicePtr* ptrs, std::size_t n, DevicePtr* starts,
                     std::size_t* sizes, TagId* tags) const ABSL_LOCKS_EXCLUDED(mu_);
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

  // PyTorch's settings that torch.cuda.memory._set_allocator_settings()
  // changes while a program runs (PyTorch's allocator reads them at every
  // request), taken from `from`: max_split_size, roundup_power2_divisions,
  // garbage_collection_threshold, graph_capture_record_stream_reuse (for
  // frees and allocations from now on: a block freed while it was off waits
  // for its capture's end). They apply to requests from now on;
  // blocks keep their sizes, and a block or segment counted oversize when
  // it was made is uncounted as such when it goes. The rest of `from` is
  // ignored (the segment kind and ccalloc's own settings stay as made).
  // The max_split_size statistic keeps the value the allocator was made
  // with, as PyTorch's does (its allocator sets it once, at construction).
  void SetRuntimeOptions(const Options& from) ABSL_LOCKS_EXCLUDED(mu_);

  DeviceBackend& backend() { return *backend_; }
  // A copy: SetRuntimeOptions may change some of them meanwhile.
  Options options() const ABSL_LOCKS_EXCLUDED(mu_);
  int device() const { return backend_->device(); }

 private:
  struct PendingEvent {
    EventHandle event;
    Block* block;
  };

  // One attempt: reuse a free block or grow. ResourceExhausted when the device
  // or the limit refuses; other errors are the backend's.
  // A stream's allocations go to `owner` (null: the default pool).
  struct Route {
    PoolId id;
    PrivatePool* owner;
    std::function<bool(StreamId)> filter;
  };

  // One attempt: reuse a free block of `owner`'s pool (null: the default
  // pool) or grow it. ResourceExhausted when the device or the limit refuses;
  // other errors are the backend's.
  absl::StatusOr<Block*> TryAllocate(std::size_t rounded, std::size_t requested,
                                     StreamId stream, PoolKind pool, PrivatePool* owner)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where the request's block goes once `block`, a free block of
  // `free_blocks`, is chosen (TryAllocate's best fit or a new segment's): the
  // placement policy, every question it asks the segment store, the store's
  // Prepare and the carve (device_allocator_placement.cc). On failure the
  // free blocks are as they were.
  absl::StatusOr<Block*> Place(BlockPool& free_blocks, Block* block, std::size_t rounded,
                               std::size_t requested, StreamId stream, PrivatePool* owner)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a segment the store created, with one free block covering it,
  // indexed in its pool.
  Segment* AddSegment(std::unique_ptr<Segment> segment) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SynchronizeStream(StreamId stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The max_split_size statistic for `options`.
  static std::int64_t MaxSplitStat(const Options& options);

  // --- What the segment store asks of the cache (SegmentCache) --------------
  // Called only from inside store calls, so with mu_ held (capturing() is
  // declared with the private pools below).
  std::size_t reserve_limit() const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return memory_limit_;
  }
  const BlockPool& FreeBlocks(const PrivatePool* owner, PoolKind kind) const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WaitForFree(StreamId stream, std::uint64_t freed_at) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool FreeCompleted(StreamId stream, std::uint64_t freed_at) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What synced_upto_ and device_synced_upto_ say has finished on `stream`.
  std::uint64_t CoveredUpto(StreamId stream) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops `stream`'s marks whose events have completed, moving what is
  // covered forward; stops at the first still pending.
  absl::Status PollMarks(StreamId stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DestroyMarks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  MemoryStats& stats() override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stats_; }
  bool IsOversize(std::size_t size) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return policy_.IsOversize(size);
  }
  // The proof for store calls that mu_ is held.
  CacheLock Locked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return CacheLock::Held(mu_); }

  // Block objects are recycled: new/delete on every split and coalesce was a
  // fifth of the hot path.
  Block* NewBlock() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteBlock(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Takes `block` out of its pool, splits off the rest when worth it, and
  // marks it allocated.
  Block* Carve(Block* block, std::size_t rounded, std::size_t requested)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // mapped_fit: whether a request of `rounded` bytes is placed on held memory
  // where its best fit, `best`, would map (Options::MappedFit).
  bool WantsHeldFit(const Block& best, std::size_t rounded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // mapped_fit: the free block to place `rounded` bytes in instead of `best`
  // (the best fit by size) so that no page needs mapping, with the place
  // in *at: the smallest such stretch of any free block of its stream, or
  // with `first_found` the smallest in the first block (by size) that has
  // one. `best` (and *at untouched) when none does or `best` is mapped
  // where best fit puts the block.
  Block* HeldFit(const BlockPool& free_blocks, Block* best, std::size_t rounded,
                 bool first_found, DevicePtr* at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // cross_stream_reuse: the first `rounded` bytes of a free block of
  // another stream's growable segment of the default pool, mapped
  // throughout, allocated for `stream` once `stream`'s work is ordered after
  // the lender's (OrderAfterFree); null when no such block is found or the
  // ordering is refused (nothing taken then).
  Block* Borrow(const BlockPool& free_blocks, StreamId stream, std::size_t rounded,
                std::size_t requested) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `waiter`'s later work wait on the device for `stream`'s work
  // queued before the free numbered `freed_at`: nothing when that is known
  // finished, else a device-side wait on the first mark after the free, or
  // on a new event of `stream`.
  absl::Status OrderAfterFree(StreamId waiter, StreamId stream, std::uint64_t freed_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `waiter`'s later work wait on the device for all of `user`'s
  // work queued so far (a new event); where the driver refuses the wait,
  // the host waits for that event instead.
  absl::Status OrderAfterUse(StreamId waiter, StreamId user) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes [ptr, ptr + rounded) of the free, indexed `block` out of its pool
  // (the free rest on either side stays indexed) and marks it allocated.
  Block* CarveAt(Block* block, DevicePtr ptr, std::size_t rounded, std::size_t requested)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Splits the free, indexed `block` at `at` (strictly inside it) into two
  // free, indexed blocks and returns the upper one.
  Block* SplitFreeAt(Block* block, DevicePtr at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks a block that left its index allocated and counts it.
  void MarkAllocated(Block* block, std::size_t requested) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // MarkAllocated less the page table's count: the state, the map and the
  // counters.
  void HandOut(Block* block, std::size_t requested) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks a block free, coalesces it and indexes it.
  void FreeBlock(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A freed block leaves the active counters (FreeBlock's and HoldAside's
  // first step).
  void EndActive(const Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The freed block becomes hot_ instead of FreeBlock (HotEligible says
  // when, and why always).
  void HoldAside(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FreeBlock less the active counters (already moved): the page table's
  // free, the coalesce and the index, as the free numbered `freed_at`.
  void ReturnBlock(Block* block, std::uint64_t freed_at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the block a free gives back may be held
  // aside (its counters moved, nothing else), and the request it serves.
  bool HotEligible(const Block& block) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Block* TakeHot(std::size_t rounded, std::size_t requested, StreamId stream, PoolKind pool)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns the held block as a free would have (ReturnBlock). Every entry
  // point but Allocate's hit calls it first (FlushedLock), so
  // nothing else ever sees a held block. Const for the reports
  // (Fragmentation, TakeSnapshot), which must see it coalesced too: the
  // allocator is never a const object, and the lock is held.
  void FlushHot() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lock of every entry point that walks blocks, pools or pages: mu_,
  // and the held block returned (FlushHot) before anything else runs, so an
  // entry point cannot forget to. Only Allocate takes mu_ without it (its
  // hit is the held block; a miss returns it), and the accessors that read
  // counters or options alone.
  class ABSL_SCOPED_LOCKABLE FlushedLock {
   public:
    explicit FlushedLock(const DeviceAllocator* allocator)
        ABSL_EXCLUSIVE_LOCK_FUNCTION(allocator->mu_)
        : lock_(&allocator->mu_) {
      allocator->mu_.AssertHeld();
      allocator->FlushHot();
    }
    ~FlushedLock() ABSL_UNLOCK_FUNCTION() = default;
    FlushedLock(const FlushedLock&) = delete;
    FlushedLock& operator=(const FlushedLock&) = delete;

   private:
    absl::MutexLock lock_;
  };
  // FreeBlock where no free block follows: `block` takes in `prev` (the
  // free block before it, or null) and is indexed.
  void MergeIntoFreed(Block* block, Block* prev) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Status ProcessEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for the device, then completes every pending block.
  absl::Status SynchronizeAndFreeEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases wholly free classic segments of `owner`'s pool (null: the
  // default pool; all of them, or enough for `target` bytes when `target` >
  // 0, oversize ones first) and, for growable segments, unmaps free pages.
  // Returns the bytes released. Nothing while capturing, nothing of a
  // private pool whose use count is above 0.
  absl::StatusOr<std::size_t> ReleaseCached(std::size_t target, PrivatePool* owner = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReleaseSegment(Segment* segment) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ReleaseCached(0) for every region; the bytes released.
  absl::StatusOr<std::size_t> ReleaseRegionsCached() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void GarbageCollect() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- Private pools ---------------------------------------------------------
  // A stream capture may be underway while any routing is active.
  bool capturing() const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !routes_.empty();
  }
  // The pool `stream`'s allocations are routed to; null for the default.
  PrivatePool* RouteFor(StreamId stream) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  PrivatePool* FindPool(PoolId pool) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The region's pool, created on first use.
  PrivatePool* RegionPool(RegionId region) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Backups of paused regions (see block_pool.h): copy the allocated blocks
  // to host memory (nothing recorded on failure); copy back what is still
  // allocated; forget the backup; drop a freed block's part; free the host
  // buffer; free the buffers of regions that do not need theirs now.
  // The pool of a region allocated in before; NotFound otherwise (0 too).
  absl::StatusOr<PrivatePool*> UsedRegion(RegionId region) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A run of adjacent allocated bytes of one segment, and where the backup
  // keeps it.
  struct LiveRun {
    Segment* segment;
    PrivatePool::BackupRun run;
  };
  // The allocated bytes of `owner` as runs, by address; `*total` their sum.
  std::vector<LiveRun> LiveRuns(PrivatePool* owner, std::size_t* total)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A host buffer of at least `total` bytes for `owner`'s backup.
  absl::Status ReserveHost(PrivatePool* owner, std::size_t total)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The backup pipeline (device_allocator_regions.cc): copies and gives
  // back. Returns a copy failure (the region normally left running); an
  // unmap failure goes to `*release` (the region is then paused).
  absl::Status BackUpAndRelease(PrivatePool* owner, absl::Status* release)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The bytes of `block` that `owner`'s backup runs hold.
  std::size_t BackedUpBytes(const PrivatePool* owner, const Block& block) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts what a pause gave back since reserved() was `before`.
  std::size_t AccountPaused(PrivatePool* owner, std::size_t before)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Restore(PrivatePool* owner) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropBackup(PrivatePool* owner) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropBackupOf(const Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FreeBackupHost(PrivatePool* owner) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status DropIdleBackups() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  PrivatePool* CreateOrIncrefLocked(PoolId pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The work a capture made wait, done now that none is underway: records
  // the events of frees deferred during capture, then releases the wholly
  // free memory of pools whose use count reached 0. What fails stays owed.
  absl::Status FlushPoolWork() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // graph_capture_record_stream_reuse: where `block`'s stream and every
  // stream that used it stand in their capture's graph, freed now during
  // a capture; empty where the graph cannot order them all (a stream not
  // in the capture, streams of two captures, no captured work at all, a
  // failed query): then the block waits for the capture's end.
  CapturePosition FreePosition(const Block& block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees the deferred blocks of `owner` on `stream` whose position the
  // graph orders before `stream`'s next captured work: every use of theirs
  // runs before anything the stream captures from now on, so the stream
  // may reuse them now, as it could once their events completed (PyTorch's
  // free_safe_blocks_in_capture). Called by an allocation on `stream`
  // routed into `owner`.
  void PromoteOrdered(StreamId stream, PrivatePool* owner) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The last step of an out-of-memory ladder outside any pool: a free,
  // backed block of a use_on_oom pool (SetPoolUseOnOom), carved; null when
  // none has one. Pools in id order.
  Block* FromPoolsOnOom(std::size_t rounded, std::size_t requested, StreamId stream,
                        PoolKind pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the records of pools with use count 0 that own no segment.
  void ErasePoolsWithoutMemory() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdatePoolWork() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    pool_work_ = !routes_.empty() || !deferred_.empty() || release_owed_;
  }
  // Waits for every pending block's events and frees the blocks.
  absl::Status SynchronizePending() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  BlockPool& PoolOf(PoolKind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return kind == PoolKind::kSmall ? small_pool_ : large_pool_;
  }
  // The index a free block of `block`'s segment belongs in.
  BlockPool& IndexOf(const Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    PrivatePool* owner = block->segment->owner;
    return owner == nullptr ? PoolOf(block->pool) : owner->Of(block->pool);
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
  // `info`: the device's memory, read once for the whole report.
  std::string PytorchOutOfMemoryText(std::size_t bytes,
                                     const absl::StatusOr<DeviceMemoryInfo>& info) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The block whose bytes include ptr (any state), or null outside every
  // segment.
  const Block* BlockCovering(DevicePtr ptr) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string DescribeBadPointer(DevicePtr ptr, bool for_free) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  FragmentationNow FragmentationLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ValidateLocked(std::string* why) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DebugCheck() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<DeviceBackend> backend_;
  // Set at construction; SetRuntimeOptions changes PyTorch's run-time keys.
  // (The segment store reads them through a reference, under mu_.)
  Options options_ ABSL_GUARDED_BY(mu_);
  SizePolicy policy_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex mu_;
  // Where blocks live (classic or growable); its state is guarded by mu_.
  const std::unique_ptr<SegmentStore> store_;
  const bool growable_;  // store_->growable(), read on every allocation
  BlockPool small_pool_ ABSL_GUARDED_BY(mu_){PoolKind::kSmall};
  BlockPool large_pool_ ABSL_GUARDED_BY(mu_){PoolKind::kLarge};
  // Blocks handed to the user, by address.
  absl::flat_hash_map<DevicePtr, Block*> allocated_ ABSL_GUARDED_BY(mu_);
  // Every segment by base address (owning).
  absl::btree_map<DevicePtr, std::unique_ptr<Segment>> segments_ ABSL_GUARDED_BY(mu_);
  // Per stream, in record order: a later event cannot finish before an
  // earlier one on the same stream, so only the front needs asking. Ordered
  // by stream: the blocks whose events completed are freed in that order,
  // which numbers their frees and so decides later placements, and a hash
  // map's order may differ from one process to the next.
  absl::btree_map<StreamId, std::deque<PendingEvent>> pending_ ABSL_GUARDED_BY(mu_);
  std::size_t num_pending_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Block*> spare_blocks_ ABSL_GUARDED_BY(mu_);
  // The block the last free held aside (HoldAside), or null.
  // Mutable for FlushHot.
  mutable Block* hot_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Counts frees; a free block remembers the count at its newest free.
  std::uint64_t free_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // The free count when a free last left a mark (MarkFrees), plus one for
  // each free since whose memory the next allocation took straight back
  // (TakenBack): MarkFrees counts the frees past it.
  std::uint64_t marked_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // The newest free's block (where and how large), and the last free
  // TakenBack discounted, so that it counts once.
  DevicePtr last_free_ptr_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t last_free_size_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t taken_back_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Per stream, the free count when the stream (or the device) was last
  // waited for: memory freed before that is no longer touched by queued
  // work, so it can be unmapped without waiting again.
  absl::flat_hash_map<StreamId, std::uint64_t> synced_upto_ ABSL_GUARDED_BY(mu_);
  std::uint64_t device_synced_upto_ ABSL_GUARDED_BY(mu_) = 0;
  // Per stream, in record order: events recorded after frees, each with the
  // free count when it was recorded. Once one has completed, memory freed
  // before it can be unmapped with no wait at all; until then a wait for it
  // drains less of the queue than a wait for the stream. Recorded when a
  // trim found memory it could not yet take (FreeCompleted) and every
  // kFreesPerMark frees (MarkFrees); at most kMaxMarks per stream.
  struct FreeMark {
    EventHandle event;
    std::uint64_t seq;
  };
  static constexpr std::size_t kMaxMarks = 8;
  // Records a mark on `stream` covering every free so far, unless kMaxMarks
  // are pending there (a lagging GPU) or the record fails; returns whether
  // it did. FreeCompleted's and MarkFrees'.
  bool LeaveMark(StreamId stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every this many frees (growable segments), a free leaves a mark on its
  // block's stream (MarkFrees). Without them a mark is recorded only when a
  // placement asks whether a free's work is done, so a free made long ago
  // whose work finished long ago can be covered only by a mark recorded
  // just now: it looks queued, moves with its old mapping kept until that
  // mark completes, and a block placed over that mapping waits for the
  // queue up to the mark. A free whose memory the next allocation takes
  // straight back is not counted (TakenBack: a hot pair records nothing).
  // It was the free_marks option, 16 by default and 0 for none: on an H100
  // over 200 steps side by side (6 rounds each), 16 took GPT-2's placements
  // from 6.77 to 0.81 ms a step (its waits for 2.9 GiB blocks, 5.70 ms a
  // step, went) and the checkpointed LM's from 6.24 to 4.26, at the same
  // peaks (1.0078-1.0084). In the replay at a GPU lag of 200 events it cut
  // the events waited for over the 17 traces by an eighth (30,488 to
  // 26,841), and two_streams peaked there at 1.0113 against 1.0091 without
  // (free memory in pieces under a page: README).
  static constexpr std::uint64_t kFreesPerMark = 16;
  // Leaves a mark on `stream` every kFreesPerMark frees.
  void MarkFrees(StreamId stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a free of `size` bytes at `ptr` (MarkFrees) and remembers where
  // it was for TakenBack.
  void NoteFree(DevicePtr ptr, std::size_t size, StreamId stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `rounded` bytes at `ptr` are handed out at once (the hot slot's block,
  // or best fit with its pages mapped): where that is the newest free's
  // block again, that free made no hole worth a mark, and MarkFrees does
  // not count it. A hot pair of allocate and free then records no event
  // (~0.7 us on an H100, against ~60 ns for the pair), and as both paths
  // count alike, holding a block aside still changes no placement.
  void TakenBack(DevicePtr ptr, std::size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The first of `marks` (one stream's, in record order) recorded after the
  // free numbered `freed_at`; marks.end() when none is.
  static std::deque<FreeMark>::iterator MarkAfter(std::deque<FreeMark>& marks,
                                                  std::uint64_t freed_at) {
    return std::find_if(marks.begin(), marks.end(),
                        [&](const FreeMark& m) { return m.seq >= freed_at; });
  }
  // Adds `stream` to the streams that used `block` (record_stream), once.
  static void AddStreamUse(Block* block, StreamId stream) {
    if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) ==
        block->stream_uses.end()) {
      block->stream_uses.push_back(stream);
    }
  }
  // How many free blocks after the best fit (by size) a block that would
  // wait for queued work where best fit puts it asks for a place instead
  // (Place, PlaceElsewhere): each ask scans the kept old mappings, so a few; the
  // replay at a GPU lag of 200 events waited 271 times over the nine traces
  // with 4, as with 16, against 377 with none (before partial runs).
  static constexpr int kBusyAlternatives = 4;
  // How many free blocks of each other stream, smallest first, a request
  // asks to borrow from (cross_stream_reuse).
  static constexpr int kBorrowCandidates = 4;
  absl::flat_hash_map<StreamId, std::deque<FreeMark>> marks_ ABSL_GUARDED_BY(mu_);
  // Counts store Prepare calls; a stream's marks are polled at most once per
  // call however many holes a trim asks about (polled_in_).
  std::uint64_t prepare_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<StreamId, std::uint64_t> polled_in_ ABSL_GUARDED_BY(mu_);
  std::size_t memory_limit_ ABSL_GUARDED_BY(mu_) = 0;
  TraceRecorder* recorder_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Private pools by id (owning; segments point at them).
  absl::flat_hash_map<PoolId, std::unique_ptr<PrivatePool>> pools_ ABSL_GUARDED_BY(mu_);
  // Regions by number (owning; their segments point at them). Kept for the
  // allocator's life once used.
  absl::flat_hash_map<RegionId, std::unique_ptr<PrivatePool>> regions_ ABSL_GUARDED_BY(mu_);
  // Active BeginAllocateToPool routings, in begin order (the first whose
  // filter accepts a stream wins).
  std::vector<Route> routes_ ABSL_GUARDED_BY(mu_);
  // Blocks freed during capture that other streams used: pending, with their
  // events not yet recorded (a capture refuses RecordEvent on other streams),
  // each with its position at the free (FreePosition; empty: none, it waits
  // for the capture's end), in free order.
  struct DeferredFree {
    Block* block;
    CapturePosition after;
  };
  std::vector<DeferredFree> deferred_ ABSL_GUARDED_BY(mu_);
  // How many of deferred_ have a position: what an allocation during a
  // capture asks about (none: it asks nothing).
  std::size_t positioned_ ABSL_GUARDED_BY(mu_) = 0;
  // A pool with use count 0 may hold wholly free memory not yet released.
  bool release_owed_ ABSL_GUARDED_BY(mu_) = false;
  // Whether a released pool (not a region) holds memory ReleaseCached can
  // give back (a wholly free segment, or a free block of a growable one),
  // outside a capture: FlushPoolWork synchronizes the device first.
  bool ReleasedPoolHasFreeMemory() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Routing is active or a capture left work: the one flag the hot path reads.
  bool pool_work_ ABSL_GUARDED_BY(mu_) = false;
  MemoryStats stats_ ABSL_GUARDED_BY(mu_);
  // The fraction SetMemoryFraction (or the options) set, below 0 when the
  // limit came from elsewhere; memory_limit_ follows from it.
  double memory_fraction_ ABSL_GUARDED_BY(mu_) = -1.0;
  // The bytes a fraction of a device of `total` bytes allows (PyTorch's
  // allowed maximum), and the cap it sets (at least one byte: 0 is no cap).
  static std::size_t BytesForFraction(double fraction, std::size_t total);
  static std::size_t LimitForFraction(double fraction, std::size_t total);
  // The backend's driver calls at the last reset of the accumulated
  // counters: GetStats reports those since.
  DriverCallTotals driver_base_ ABSL_GUARDED_BY(mu_);
  TagCounters tags_ ABSL_GUARDED_BY(mu_);

  // --- Sharing with other processes and devices (device_allocator_ipc.cc) ---
 public:
  // What ExportIpc hands out: a handle (format in allocator/cache/ipc.h) and the
  // offset of the pointer from the base of the memory the handle names.
  using IpcExport = ::ccalloc::IpcExport;
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
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_DEVICE_ALLOCATOR_H_
