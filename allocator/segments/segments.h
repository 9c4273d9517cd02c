// segments.h — where blocks live: the interface between the cache and memory.
//
// DeviceAllocator (the cache) keeps blocks, free-block indexes, streams,
// events, private pools and the out-of-memory ladder. It never touches device
// memory itself: a SegmentStore creates the segments its blocks tile, makes
// the bytes under a block usable before the block is handed out, gives back
// the memory under free blocks, and answers what memory a segment holds.
//
// Two stores exist, chosen once per allocator:
//   ClassicSegments  (classic_segments.h)   one device allocation per segment;
//   GrowableSegments (growable_segments.h)  a virtual range per stream, pool
//                                           kind and pool id, with a page table
//                                           and physical pages mapped on demand.
//
// The store keeps the counters of the memory it takes and gives back
// (reserved bytes, device allocations and frees, maps, unmaps) in the cache's
// MemoryStats, so one lock-protected set of counters says everything.
//
// Thread safety: a store has no lock of its own. Every call is made with the
// cache's mutex held; each call takes a CacheLock, which only code that clang
// has checked to hold that mutex can make, and the store's own state is
// ABSL_GUARDED_BY the same mutex (asserted held on entry).
#ifndef CCALLOC_ALLOCATOR_SEGMENTS_SEGMENTS_H_
#define CCALLOC_ALLOCATOR_SEGMENTS_SEGMENTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"
#include "allocator/cache/block_pool.h"
#include "allocator/cache/options.h"
#include "allocator/cache/size_policy.h"
#include "stats/counters.h"
#include "stats/snapshot.h"

namespace ccalloc {

// Proof that the caller holds the cache's mutex: the only way to make one is
// CacheLock::Held(mu), which clang's -Wthread-safety checks is called with
// `mu` held. Passed by value; it carries nothing but the mutex.
class CacheLock {
 public:
  static CacheLock Held(absl::Mutex& mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return CacheLock(mu);
  }
  absl::Mutex& mu() const { return *mu_; }

 private:
  explicit CacheLock(absl::Mutex& mu) : mu_(&mu) {}
  absl::Mutex* mu_;
};

// What a store may ask of the cache it serves. Only called from inside a
// store call, so with the cache's mutex held.
class SegmentCache {
 public:
  // A stream capture may be underway: nothing may synchronize, query events,
  // unmap or free device memory.
  virtual bool capturing() const = 0;
  // The cap on reserved memory; 0 for none.
  virtual std::size_t reserve_limit() const = 0;
  // The free blocks of `owner`'s pool (null: the default pool) of `kind`,
  // ordered by (stream, size, address).
  virtual const BlockPool& FreeBlocks(const PrivatePool* owner, PoolKind kind) const = 0;
  // Returns once no work queued on `stream` before the free numbered
  // `freed_at` (a free block's Block::freed_at, its segment's stream) can
  // still touch the freed bytes (waits for the stream unless an earlier wait
  // already covers that free), so their memory may be taken away.
  virtual absl::Status WaitForFree(StreamId stream, std::uint64_t freed_at) = 0;
  // Whether that work is known to have finished, learned without waiting
  // (event queries only). When it is not yet, the cache leaves a mark so
  // that a later call can tell. Never true while capturing.
  virtual bool FreeCompleted(StreamId stream, std::uint64_t freed_at) = 0;
  // The counters the store keeps current (reserved_bytes, num_device_alloc,
  // num_device_free, num_maps, num_unmaps, oversize_segments).
  virtual MemoryStats& stats() = 0;
  // Whether a segment of `size` bytes is oversize (max_split_size), by the
  // settings in force now (they can change while the program runs).
  virtual bool IsOversize(std::size_t size) const = 0;

 protected:
  ~SegmentCache() = default;
};

// What ExportIpc hands out: a handle (format in allocator/cache/ipc.h) and the
// offset of the pointer from the base of the memory the handle names.
struct IpcExport {
  std::string handle;
  std::size_t offset = 0;
};

class SegmentStore {
 public:
  // `mu` is the cache's mutex (the store's state is guarded by it); `cache`,
  // `backend` and `options` outlive the store.
  SegmentStore(absl::Mutex& mu, SegmentCache& cache, DeviceBackend& backend,
               const Options& options)
      : mu_(mu), cache_(cache), backend_(backend), options_(options) {}
  virtual ~SegmentStore() = default;
  SegmentStore(const SegmentStore&) = delete;
  SegmentStore& operator=(const SegmentStore&) = delete;

  // The store for `options` on `backend`: growable when asked for and the
  // backend has virtual memory, classic otherwise.
  static std::unique_ptr<SegmentStore> Make(absl::Mutex& mu, SegmentCache& cache,
                                            DeviceBackend& backend, const Options& options);

  // Growable segments: a free block can always be split (its rest costs no
  // memory until mapped) and a free block holds only its mapped bytes.
  virtual bool growable() const = 0;

  // A new segment of `pool`, `stream` and `owner` (null: the default pool)
  // that can hold a block of `rounded` bytes at its base, with base, size and
  // those fields set and no blocks yet. ResourceExhausted when the device or
  // the memory limit refuses.
  virtual absl::StatusOr<std::unique_ptr<Segment>> Create(CacheLock lock, std::size_t rounded,
                                                          StreamId stream, PoolKind pool,
                                                          PrivatePool* owner) = 0;
  // Makes [begin, begin + bytes) of `segment` (inside the free block
  // `hole`) usable before a block there is handed out. On failure what was
  // made usable stays (cached, counted) and no block changes.
  virtual absl::Status Prepare(CacheLock lock, Segment& segment, const Block& hole,
                               DevicePtr begin, std::size_t bytes) = 0;
  // The hot path: true when [begin, begin + bytes) of `segment` is usable
  // as it is, so that Prepare would make no call and change nothing (then
  // this stands in for it, and the cache skips Place and mapped_fit too:
  // neither moves a block that needs nothing). Stores that always prepare
  // say false.
  virtual bool Ready(CacheLock lock, const Segment& segment, DevicePtr begin, std::size_t bytes) {
    (void)lock, (void)segment, (void)begin, (void)bytes;
    return false;
  }
  // Gives back the memory under free blocks of `owner`'s pool (null: the
  // default pool) that can go without releasing whole segments, and returns
  // the bytes given back. The caller checks that no capture is underway and
  // that a private pool is not live.
  virtual absl::StatusOr<std::size_t> Trim(CacheLock lock, PrivatePool* owner) = 0;
  // Sleep and wake. Pause gives back every byte of memory `segment` holds
  // below `end` (its chunks lying wholly below; live blocks' too: the caller
  // has waited for the work on them, or copied their bytes) and returns how
  // much; the address range stays. Resume maps memory again
  // under every block of `segment` that is not free, at the same addresses;
  // on failure nothing it mapped stays. FailedPrecondition where memory
  // cannot be given back without moving blocks (classic segments).
  virtual absl::StatusOr<std::size_t> Pause(CacheLock lock, Segment& segment,
                                            DevicePtr end) = 0;
  virtual absl::StatusOr<std::size_t> Resume(CacheLock lock, Segment& segment) = 0;
  // Whether the wholly free `segment` may be released now (its memory goes
  // with it): growable ranges only once nothing is mapped under them.
  virtual bool CanRelease(CacheLock lock, const Segment& segment) const = 0;
  // Finishes deferred work (growable: unmaps still waiting for queued work,
  // waiting for it), so that none is left: called before a capture, which
  // refuses unmapping.
  virtual absl::Status Quiesce(CacheLock lock) = 0;
  // Returns once the store's calls made on another thread are done and
  // applied (growable: the unmap worker's jobs), starting none.
  virtual absl::Status FinishBackground(CacheLock lock) = 0;
  // Returns the wholly free `segment`'s memory to the device and counts it;
  // the caller then drops the segment and its block.
  virtual absl::Status Release(CacheLock lock, Segment& segment) = 0;
  // Returns whatever `segment` holds, live blocks or not, ignoring errors and
  // counting nothing: the allocator is being destroyed.
  virtual void Discard(CacheLock lock, Segment& segment) = 0;

  // The block [begin, begin + bytes) of `segment` has just been handed out
  // (growable stores count the blocks in use on each page; the default
  // ignores it).
  virtual void NoteAllocated(CacheLock lock, Segment& segment, DevicePtr begin,
                             std::size_t bytes) {
    (void)lock, (void)segment, (void)begin, (void)bytes;
  }
  // The block [begin, begin + bytes) of `segment` has just been freed, as
  // the cache's free numbered `seq` (growable stores date their chunks'
  // work by it; the default ignores it).
  virtual void NoteFree(CacheLock lock, Segment& segment, DevicePtr begin, std::size_t bytes,
                        std::uint64_t seq) {
    (void)lock, (void)segment, (void)begin, (void)bytes, (void)seq;
  }
  // The bytes of memory `segment` holds (what reserved_bytes counts for it).
  virtual std::size_t HeldBytes(CacheLock lock, const Segment& segment) const = 0;
  // The bytes of memory under [begin, end) of `segment`.
  virtual std::size_t HeldBytesIn(CacheLock lock, const Segment& segment, DevicePtr begin,
                                  DevicePtr end) const = 0;
  // The smallest stretch of [begin, end) of `segment` that holds memory
  // throughout (no page to map) and is at least `bytes` long, as {start,
  // length}; {0, 0} when there is none. A block placed there costs no
  // driver call.
  virtual std::pair<DevicePtr, std::size_t> HeldStretch(CacheLock lock, const Segment& segment,
                                                        DevicePtr begin, DevicePtr end,
                                                        std::size_t bytes) const = 0;
  // The bytes of [begin, begin + bytes) of `segment` that a Prepare there
  // would map: neither held nor memory it takes back without a call. What a
  // placement costs in driver calls (DeviceAllocator::WantsHeldFit).
  virtual std::size_t BytesToMap(CacheLock lock, const Segment& segment, DevicePtr begin,
                                 std::size_t bytes) {
    return bytes - HeldBytesIn(lock, segment, begin, begin + bytes);
  }
  // Where in the free block `hole` a block of `bytes` that the cache would
  // place at `at` had better start (with the block's alignment), and
  // whether it would still wait there for queued work, then with the pages
  // it maps there. Stores with nothing against a place say {at, false};
  // growable segments move it past pages it would have to wait for.
  struct Placing {
    DevicePtr at;
    bool waits;
    std::size_t pages_to_map = 0;  // where it waits
  };
  virtual Placing Place(CacheLock lock, const Block& hole, DevicePtr at, std::size_t bytes) {
    (void)lock;
    (void)hole;
    (void)bytes;
    return {at, false};
  }
  // For a block that would wait where Place put it: where in the free block
  // `other` it would not, mapping at most `max_pages_to_map` pages there
  // (Placing::pages_to_map); nullopt where there is no such place.
  virtual std::optional<DevicePtr> PlaceElsewhere(CacheLock lock, const Block& other,
                                                  std::size_t bytes,
                                                  std::size_t max_pages_to_map) {
    (void)lock;
    (void)other;
    (void)bytes;
    (void)max_pages_to_map;
    return std::nullopt;
  }
  // The cache holds clearly more memory than its marks allow above the peak
  // allocated (memory held once and kept: hold_reserved), so a placement
  // that costs memory costs none the device would get back (mapped_fit
  // auto). Stores that hold no such slack say false.
  virtual bool HoldsSlack(CacheLock lock) const {
    (void)lock;
    return false;
  }
  // The cache is far from the end of its memory (the memory limit, else the
  // device's), where memory it holds costs nobody anything: placements
  // prefer memory already mapped (mapped_fit auto) and the marks are the
  // options' own. Stores that hold no such slack say false.
  virtual bool Roomy(CacheLock lock) const {
    (void)lock;
    return false;
  }
  // Whether mapping `bytes` more now would move memory from under free
  // holes (the cache's free memory past its low mark) rather than take new
  // memory: what cross_stream_reuse:auto lends instead of. Stores that move
  // nothing say false.
  virtual bool WouldMove(CacheLock lock, std::size_t bytes) {
    (void)lock;
    (void)bytes;
    return false;
  }
  // Fills what a snapshot says of `segment`'s memory (mapped size and ranges).
  virtual void Describe(CacheLock lock, const Segment& segment, SegmentInfo* info) const = 0;

  // --- Sharing with other processes and devices ----------------------------
  // The memory another process opens for the allocated `block`: for classic
  // segments the segment, for growable ones the whole chunks under it.
  virtual std::pair<DevicePtr, std::size_t> SharedRange(CacheLock lock,
                                                        const Block& block) const = 0;
  // A handle for the allocated `block` holding `ptr` (see
  // DeviceAllocator::ExportIpc); errors are prefixed with `what`.
  virtual absl::StatusOr<IpcExport> ExportIpc(CacheLock lock, const Block& block,
                                              DevicePtr ptr, const std::string& what) = 0;
  // Memory held now and later is also read-write for `peer_device` (checked
  // with the backend once; idempotent).
  absl::Status AddPeerAccess(CacheLock lock, int peer_device);

  // The store's invariants for one `segment` of the cache (blocks in use lie
  // on memory the segment holds, its page table is consistent); `why` gets
  // the first problem found.
  virtual bool ValidateSegment(CacheLock lock, const Segment& segment,
                               std::string* why) const = 0;
  // The store's invariants as a whole, given how many segments the cache has.
  virtual bool Validate(CacheLock lock, std::size_t segments, std::string* why) const = 0;

 protected:
  // Makes the memory held now read-write for `peer_device` too.
  virtual absl::Status GrantPeer(CacheLock lock, int peer_device) = 0;
  // Asserts (and tells clang) that the cache's mutex is held.
  // (The check at run time only in debug builds: the hooks on the hot path
  // each asked, ~5% of a cached allocation's host time, and clang's
  // -Wthread-safety already proves every caller holds it.)
  void AssertHeld(CacheLock lock) const ABSL_ASSERT_EXCLUSIVE_LOCK(mu_) {
    (void)lock;
#ifndef NDEBUG
    mu_.AssertHeld();
#endif
  }
  // Reserved memory (all pools) plus `extra` stays within the memory limit.
  bool WithinLimit(std::size_t extra) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::size_t reserved() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<std::size_t>(cache_.stats().reserved_bytes[kStatAll].current);
  }
  // Adds `bytes` (negative: removes) to reserved_bytes of all and of `pool`.
  void AddReserved(PoolKind pool, std::int64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex& mu_;
  SegmentCache& cache_ ABSL_GUARDED_BY(mu_);
  DeviceBackend& backend_;
  const Options& options_;
  // Devices other than this one that get access to the memory held.
  std::vector<int> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SEGMENTS_SEGMENTS_H_
