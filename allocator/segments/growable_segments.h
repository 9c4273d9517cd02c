// growable_segments.h — segments that grow: a virtual range per stream, pool
// kind and private pool id, with physical pages mapped on demand.
//
// The design, mimalloc-style (address space cheap, memory on demand):
//
// * Address space. A request that finds no free block reserves a range as
//   large as the device (cuMemAddressReserve): it never runs out, so the
//   blocks of a stream and pool always coalesce and a new range is needed
//   only once per (stream, pool kind, pool id). The range starts as one free
//   block holding no memory.
//
// * The page table. Each range (GrowableSegment) keeps one entry per page:
//   the physical handle mapped there, or 0. Pages mapped together form a
//   chunk; every page of a chunk holds its handle and handles are never
//   shared, so a chunk is found from any of its pages and is only ever
//   unmapped whole (the driver's unit).
//
// * Mapping (Prepare). Before a block is handed out the missing pages under
//   it are mapped. Pages the block covers only partly get a handle each, so a
//   neighbour keeping one alive never pins the rest; the pages wholly inside
//   share chunks of at most max_map_chunk, because the driver's cost is per
//   handle (see below).
//
// * Trimming between a low and a high mark. New memory is taken while the
//   free mapped memory stays within release_slack of the peak allocated (the
//   hysteresis that lets steady training steps map nothing); beyond it,
//   wholly free chunks under free blocks are unmapped first (below the high
//   mark those freed longest ago first, as a cache evicts; beyond it the
//   largest holes first), and their physical handles reused for runs of the
//   same size (saving a release and a create) or released before any new
//   memory is created, so the device never holds more than the counters say.
//   A growth beyond the high mark trims the whole excess, and no block placed
//   then pins the free rest of a chunk it shares with its hole (that chunk is
//   unmapped and the block's part mapped alone): memory nothing can move is
//   what pushes the device past the mark at the next peak. Memory held once
//   since the cache was last emptied is taken again freely (hold_reserved):
//   it raises no peak, and a workload whose live bytes swing below the peak
//   then maps nothing for each swing (churn W=1000 on the simulated card:
//   0.75 maps per 1,000 operations instead of 6.7).
//
// * Placement on held memory (mapped_fit, DeviceAllocator::HeldFit). The
//   cache places a request by best fit over address space, and Prepare maps
//   whatever pages under it are missing, moving free chunks from elsewhere.
//   Where the cache holds clearly more than its marks allow (HoldsSlack:
//   memory held once and kept, as under a churn whose live bytes swing
//   below the peak), a request whose best fit would map is placed instead
//   on mapped free memory of the first larger free block that has enough:
//   no call, and the pinning it may add costs memory the cache holds
//   anyway. Within the marks (a training loop's peaks) best fit stays for
//   most requests: there, placing on mapped memory cuts into chunks the
//   next peak must move (mapped_fit:True, always: two streams peaked at
//   1.013). Not for one whose best fit would map much (64 MiB,
//   DeviceAllocator::WantsHeldFit: BytesToMap, pages neither held nor taken back by Return): a
//   move of that many chunks costs more host time than the pinning costs
//   memory (the checkpointed LM: 246 -> ~60 chunks mapped a step, memory
//   unchanged).
//
// * Freed memory and queued work. A chunk is unmapped from under a hole only
//   once the work queued before the newest free of a block that lay on it has
//   finished (cuMemUnmap does not wait for it); each page keeps that free's
//   number (GrowableSegment::freed), so a hole that a small block was just
//   freed into does not make its old chunks wait. Between the low mark and
//   release_slack_max only chunks known to be done with are moved (the
//   cache's FreeCompleted: event queries, never a wait); new memory costs no
//   more calls than a move, and later steps often want the hole again. Beyond
//   the high mark a chunk moved to a block of the same stream still need not
//   wait: it is mapped at its new address while still mapped at the old one
//   (the driver maps one physical handle at several addresses), the new
//   block's work is queued after the old work on that stream, and the old
//   address is unmapped later, once an event query says that work has
//   finished (FinishLeaving). Until then the old pages are marked kLeaving:
//   no memory held there, and no block may be handed out over them before
//   they are unmapped. Only beyond the high mark or the memory limit, with
//   nothing else to take (another stream's holes, chunks of no run's size),
//   does the cache's WaitForFree wait, for the first mark recorded after the
//   free where there is one, and the chunks that need a wait go oldest free
//   first (each wait drains as little of the queue as the memory needs). So
//   in steady state the allocation path never drains the GPU's queue, and the
//   driver calls overlap queued work. Nothing is unmapped while a stream
//   capture may be underway (deferred unmaps are finished before one:
//   Quiesce), nor from a private pool that a captured graph may still replay
//   into.
//
// * Old mappings kept (keep_old_mappings). A move does not unmap the chunk
//   from the pages it left: they stay kLeaving (no memory counted there, no
//   block handed out over them) and the Leaving record follows the memory
//   wherever it is mapped (to, to_first). A block that later wants those
//   pages takes the memory back with no driver call (Return) when it is
//   free where it went, of the default pool, and its work there is queued
//   before the block's (the same stream) or known finished; the pages it
//   left keep the mapping in turn. So a step that moves memory one way and
//   the next step back (bucketed lengths: gpt2_cycle maps 1.6 chunks a step
//   instead of 106) pays for neither after the first time. An old mapping
//   is unmapped only when a block wants its pages and the memory cannot
//   come back (then by the allocating thread itself when its work is done:
//   the block needs the pages now, and the worker's queue would only add to
//   the wait), at a trim, before a capture (Quiesce), or before a peer gets
//   access (it was mapped without it).
//
// * Blocks placed off busy pages (always). A
//   block whose best-fit place lies over an old mapping whose work may still
//   run, and whose memory cannot come back (Return), would wait for the GPU
//   to reach that work: on an H100 one such wait drains 11-40 ms of queue.
//   Place moves it past those pages where its free block has room (and it
//   maps no more there); PlaceElsewhere offers the next few free blocks by
//   size where it has none. The old mappings go later, without a wait.
//
// * Partial runs (always). Beyond the high mark a free chunk of the
//   block's stream still in use, which fits no run of its own size (a
//   one-page edge chunk against two-page runs), fills part of a larger run,
//   left mapped where it was (Leaving), instead of the growth waiting for
//   its work so that it can go back to the device.
//
// * Unmaps off the allocating thread (background_unmap). A chunk taken
//   from under a hole whose work has finished is not unmapped by the
//   allocation that takes it: its pages turn kLeaving (no memory held there,
//   none counted, no block handed out over them) and the UnmapWorker unmaps
//   it on its own thread, then releases its memory when it went nowhere.
//   In training the allocating thread is the one launching kernels, and a
//   second thread's driver calls do not slow its launches (segments/
//   unmap_worker.h), so the unmaps leave the step's critical path. The
//   results are applied (Reap) at the next store call; a block that lands
//   on pages still queued waits for their unmap; a trim, a pause and
//   Quiesce return only once the worker is done, and a create refused for
//   lack of memory waits for the releases queued before it tries again.
//
// * What the driver charges (bench/driver_costs/h100.json, measured): per
//   mapping, not per byte, and nearly all of it is the access call
//   (cuMemMap ~1 us, cuMemSetAccess ~35-44 us, cuMemUnmap ~22-27 us on an
//   H100, whatever the range's size and whether the handle is new:
//   bench/results/h100_vmm_map_cost_probe.json). Mapping a 2 MiB handle and
//   a 64 MiB one cost the same (~50 us with its access through CudaBackend),
//   and one access call over k handles costs ~17 us plus ~32 us a handle.
//   So chunks are as large as pinning allows, a move costs the same whatever
//   it moves, and the chunks a Prepare maps side by side (moved ones and new
//   ones alike) are mapped as one stretch with one access call
//   (DeviceBackend::MapChunks), saving ~17 us for every chunk after the
//   first: a growth maps ~3-11 chunks per stretch on the bundled traces.
//
// * Sharing. IPC exports the physical chunks under a block (one descriptor
//   each); peers given access get it on every mapping, now and later.
#ifndef CCALLOC_ALLOCATOR_SEGMENTS_GROWABLE_SEGMENTS_H_
#define CCALLOC_ALLOCATOR_SEGMENTS_GROWABLE_SEGMENTS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "allocator/segments/segments.h"
#include "allocator/segments/unmap_worker.h"

namespace ccalloc {

// A growable range and its page table.
struct GrowableSegment final : Segment {
  // A page whose chunk was moved away while queued work may still use it
  // here: still mapped, its memory counted where it went (see the design).
  static constexpr PhysicalHandle kLeaving = ~PhysicalHandle{0};
  static bool Holds(PhysicalHandle h) { return h != 0 && h != kLeaving; }

  // One entry per page: the handle mapped there, 0 when unmapped, kLeaving.
  std::vector<PhysicalHandle> pages;
  // One entry per page: the newest free (the cache's Block::freed_at) of a
  // block that overlapped it, 0 if none ever did. A hole's own freed_at is
  // its newest free anywhere: coalescing a small block freed just now with
  // a large one freed long ago makes the whole hole look busy. A chunk's
  // work is that of the blocks that lay on its pages, so a move asks about
  // those (FreedAt) and takes old chunks of a new hole without a wait.
  std::vector<std::uint64_t> freed;
  // One entry per page: how many blocks in use (allocated or pending) touch
  // it. Whether a stretch of pages is free throughout is asked for every old
  // mapping a block might take back (Return); walking the range's blocks to
  // answer it cost the checkpointed LM's replay a tenth of its host time.
  std::vector<std::uint32_t> live;
  // One bit per page: whether it Holds. Written with `pages` (SetPages) so
  // that asking whether a block's pages are all mapped, on every cached
  // allocation (Ready), reads a word for 64 pages instead of each entry.
  std::vector<std::uint64_t> held;
  std::size_t mapped_pages = 0;   // pages holding memory (neither 0 nor kLeaving)
  std::size_t leaving_pages = 0;  // kLeaving pages
  // One past the highest page that is not 0: scans for mapped pages stop here
  // instead of walking the (usually unmapped) tail of a device-sized range.
  std::size_t mapped_end = 0;

  // The pages [first, last) of the chunk that maps `page` (a page that Holds).
  std::pair<std::size_t, std::size_t> ChunkAround(std::size_t page) const {
    const PhysicalHandle handle = pages[page];
    std::size_t first = page;
    while (first > 0 && pages[first - 1] == handle) --first;
    std::size_t last = page + 1;
    while (last < pages.size() && pages[last] == handle) ++last;
    return {first, last};
  }
  // The newest free that touched pages [first, last).
  std::uint64_t FreedAt(std::size_t first, std::size_t last) const {
    std::uint64_t newest = 0;
    for (std::size_t p = first; p < last; ++p) newest = std::max(newest, freed[p]);
    return newest;
  }
  // Pages [first, first + n) hold `handle`, and it is mapped nowhere
  // beside them: the whole chunk, as a move's old mapping expects it.
  bool HoldsChunk(std::size_t first, std::size_t n, PhysicalHandle handle) const {
    if (first + n > pages.size()) return false;
    for (std::size_t p = first; p < first + n; ++p) {
      if (pages[p] != handle) return false;
    }
    return (first == 0 || pages[first - 1] != handle) &&
           (first + n == pages.size() || pages[first + n] != handle);
  }
  // Pages [first, first + n) become `h`: every write of the table goes
  // through here, so the held bits follow it (the counts are the caller's).
  void SetPages(std::size_t first, std::size_t n, PhysicalHandle h);
  // How many pages of [first, last] Hold.
  std::size_t HeldIn(std::size_t first, std::size_t last) const;
  // The first page of [from, limit) that Holds (holding) or does not
  // (!holding); limit when none.
  std::size_t NextRun(std::size_t from, std::size_t limit, bool holding) const;
  // Whether every page of [first, last] Holds.
  bool AllHeld(std::size_t first, std::size_t last) const;
  // Calls f(i, j) for each run [i, j) of pages that Hold within [first, last).
  template <typename F>
  void ForEachHeldRun(std::size_t first, std::size_t last, F&& f) const {
    for (std::size_t i = NextRun(first, last, true); i < last;) {
      const std::size_t j = NextRun(i, last, false);
      f(i, j);
      i = NextRun(j, last, true);
    }
  }
  // The leaving pages [first, first + pages) are unmapped: they turn 0
  // (the caller lowers mapped_end after).
  void Unmapped(std::size_t first, std::size_t pages_unmapped) {
    SetPages(first, pages_unmapped, 0);
    leaving_pages -= pages_unmapped;
  }
  // Whether any of pages [first, last] is leaving.
  bool LeavingIn(std::size_t first, std::size_t last) const {
    const PhysicalHandle* begin = pages.data() + first;
    const PhysicalHandle* end = pages.data() + last + 1;
    return leaving_pages > 0 && std::find(begin, end, kLeaving) != end;
  }
  // Lowers mapped_end past pages that are 0 at the end.
  void TrimMappedEnd() {
    while (mapped_end > 0 && pages[mapped_end - 1] == 0) --mapped_end;
  }
  // mapped_pages, leaving_pages and mapped_end agree with the table.
  bool Validate(std::string* why) const;
};

class GrowableSegments final : public SegmentStore {
 public:
  GrowableSegments(absl::Mutex& mu, SegmentCache& cache, DeviceBackend& backend,
                   const Options& options);

  bool growable() const override { return true; }
  absl::StatusOr<std::unique_ptr<Segment>> Create(CacheLock lock, std::size_t rounded,
                                                  StreamId stream, PoolKind pool,
                                                  PrivatePool* owner) override;
  absl::Status Prepare(CacheLock lock, Segment& segment, const Block& hole, DevicePtr begin,
                       std::size_t bytes) override;
  bool Ready(CacheLock lock, const Segment& segment, DevicePtr begin,
             std::size_t bytes) override;
  absl::StatusOr<std::size_t> Trim(CacheLock lock, PrivatePool* owner) override;
  absl::StatusOr<std::size_t> Pause(CacheLock lock, Segment& segment, DevicePtr end) override;
  absl::StatusOr<std::size_t> Resume(CacheLock lock, Segment& segment) override;
  bool CanRelease(CacheLock lock, const Segment& segment) const override;
  absl::Status Quiesce(CacheLock lock) override;
  absl::Status FinishBackground(CacheLock lock) override;
  absl::Status Release(CacheLock lock, Segment& segment) override;
  void Discard(CacheLock lock, Segment& segment) override;
  void NoteAllocated(CacheLock lock, Segment& segment, DevicePtr begin,
                     std::size_t bytes) override;
  void NoteFree(CacheLock lock, Segment& segment, DevicePtr begin, std::size_t bytes,
                std::uint64_t seq) override;

  std::size_t HeldBytes(CacheLock lock, const Segment& segment) const override;
  std::size_t HeldBytesIn(CacheLock lock, const Segment& segment, DevicePtr begin,
                          DevicePtr end) const override;
  std::pair<DevicePtr, std::size_t> HeldStretch(CacheLock lock, const Segment& segment,
                                                DevicePtr begin, DevicePtr end,
                                                std::size_t bytes) const override;
  std::size_t BytesToMap(CacheLock lock, const Segment& segment, DevicePtr begin,
                         std::size_t bytes) override;
  bool HoldsSlack(CacheLock lock) const override;
  bool Roomy(CacheLock lock) const override;
  bool WouldMove(CacheLock lock, std::size_t bytes) override;
  Placing Place(CacheLock lock, const Block& hole, DevicePtr at, std::size_t bytes) override;
  std::optional<DevicePtr> PlaceElsewhere(CacheLock lock, const Block& other, std::size_t bytes,
                                          std::size_t max_pages_to_map) override;
  void Describe(CacheLock lock, const Segment& segment, SegmentInfo* info) const override;

  std::pair<DevicePtr, std::size_t> SharedRange(CacheLock lock,
                                                const Block& block) const override;
  absl::StatusOr<IpcExport> ExportIpc(CacheLock lock, const Block& block, DevicePtr ptr,
                                      const std::string& what) override;

  bool ValidateSegment(CacheLock lock, const Segment& segment,
                       std::string* why) const override;
  bool Validate(CacheLock lock, std::size_t segments, std::string* why) const override;

 protected:
  absl::Status GrantPeer(CacheLock lock, int peer_device) override;

 private:
  // Where the chunks taken for a Prepare go (defined in the .cc).
  struct Placement;
  // A chunk taken from pages it is still mapped at (kLeaving there): moved
  // elsewhere, or (`release`) going back to the device. Pending (job 0)
  // until the work queued on `stream` before the free numbered `freed_at`
  // has finished; then its unmap (and release) is job `job` of the worker.
  struct Leaving {
    GrowableSegment* segment;
    std::size_t first, pages;
    PhysicalHandle handle;  // its memory: where it went, or what is released
    StreamId stream;
    std::uint64_t freed_at;
    std::uint64_t job = 0;
    bool release = false;
    // A move's: where its memory is mapped now (kept current by CommitChunk),
    // so that a block wanting these pages again can take it back (Return).
    GrowableSegment* to = nullptr;
    std::size_t to_first = 0;
    // Whether its old pages meet pages [lo, hi] of `s`.
    bool Under(const GrowableSegment* s, std::size_t lo, std::size_t hi) const {
      return segment == s && first <= hi && first + pages > lo;
    }
  };
  // Unmaps [va, va + bytes) on the allocating thread, counting it (and its
  // host time) as a foreground unmap when it succeeds.
  absl::Status UnmapHere(DevicePtr va, std::size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The cache's WaitForFree, its time also counted by what waited
  // (MemoryStats::wait_under_block_ns and the two after it).
  enum class WaitSite { kUnderBlock, kTrim, kRelease };
  absl::Status WaitForFree(StreamId stream, std::uint64_t freed_at, WaitSite site)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The allocation of `bytes` about to be made counted in peak_allocated_
  // (Prepare and Ready); returns it.
  std::size_t NotePeak(std::size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The most allocated at once as known now (peak_allocated_ or the counters'
  // peak, whichever is higher), without noting a new allocation.
  std::size_t KnownPeak() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The fractions of the peak the three marks allow past it (release_slack,
  // release_slack_max, release_slack_hard), as in force at `peak`: the
  // options' own while the cache has room (Roomy), at most the kTight ones
  // near the end of its memory. `tight` says which.
  struct Slack {
    double low, high, hard;
    bool tight;
  };
  Slack SlackAt(std::size_t peak) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether memory held up to `hard` past `peak` stays clear of the end of
  // the cache's memory (the memory limit, else the device's), and the device
  // has never run short of memory for it.
  bool RoomyAt(std::size_t peak, double hard) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The largest chunk a Prepare of `segment` maps at `peak` with `slack`
  // (SlackAt's): max_map_chunk far from the end of memory, less as the end
  // comes near, a region's own size always.
  std::size_t ChunkCapAt(std::size_t peak, const Slack& slack,
                         const GrowableSegment& segment) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The most memory the cache holds at `peak` allocated with `slack` (one of
  // SlackAt's), memory held once included (hold_reserved; when tight, only
  // up to the tight hard mark). Prepare's budget and Ready's check.
  std::size_t Mark(std::size_t peak, double slack, bool tight) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The peak's own mark: `slack` of it past it, at least two pages; Mark
  // without the memory held once.
  std::size_t PeakMark(std::size_t peak, double slack) const;
  // Holds `handle` again where an old mapping of it is still mapped (its
  // release was withheld: UnmapWorker::Result::kept).
  void HoldWhereStillMapped(PhysicalHandle handle) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands the unmap of leaving chunk `l` (and its release) to the worker and
  // counts the calls.
  void Submit(Leaving& l) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Submits the pending `l` once the work queued before its free has
  // finished: an event query, else a wait counted as `site`.
  absl::Status SubmitWhenDone(Leaving& l, WaitSite site) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the wholly free chunk at pages [first, first + pages) of
  // `segment`, whose frees have finished, off its pages: they turn kLeaving
  // and the worker unmaps them (then releases `handle` when `release`).
  // The caller uncounts the memory there. Fails (changing nothing) only
  // where an old mapping of a released handle cannot be waited for.
  absl::Status Retire(GrowableSegment* segment, std::size_t first, std::size_t pages,
              PhysicalHandle handle, StreamId stream, std::uint64_t freed_at, bool release)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the memory of the move's old mapping `l` back to its old pages
  // (under the block [first, last] of `segment` being prepared) without a
  // driver call, when it is wholly free where it went and its work there is
  // ordered before the block's (the same stream) or finished; those pages
  // then keep the mapping instead (keep_old_mappings). Returns whether it did.
  bool Return(Leaving& l, GrowableSegment* segment, std::size_t first, std::size_t last)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the old mapping `l` lies wholly under the pages [first, last] of
  // a block and, of several pages, not over a page the block covers only
  // partly (a neighbour there would pin the rest): the ones a block may take
  // back (Return). The caller checks the segment.
  static bool TakeableUnder(const Leaving& l, std::size_t first, std::size_t last,
                            bool first_partial, bool last_partial) {
    const std::size_t l_last = l.first + l.pages - 1;
    return l.first >= first && l_last <= last &&
           (l.pages == 1 ||
            !((first_partial && l.first == first) || (last_partial && l_last == last)));
  }
  // Whether Return would take `l` back for such a block: FreeWhereItWent,
  // and its work there ordered before the block's (may query events).
  bool CanReturn(const Leaving& l, const GrowableSegment* segment, std::size_t first,
                 std::size_t last) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the memory of the move's old mapping `l` is of the default pool,
  // still held where it went, wholly free there and not under the block
  // [first, last] of `segment` itself: what CanReturn asks but the order of
  // the work. Changes nothing.
  bool FreeWhereItWent(const Leaving& l, const GrowableSegment* segment, std::size_t first,
                       std::size_t last) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a block over pages [first, last] of `segment` would wait for
  // the queued work of the old mapping `l` that lies under it (Prepare): its
  // memory cannot come back (Return), nor has the work on it finished. Not
  // for a mapping already queued for the worker (a wait for the worker's
  // unmap, not for the GPU).
  bool WouldWait(const Leaving& l, const GrowableSegment* segment, std::size_t first,
                 std::size_t last, bool first_partial, bool last_partial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where from `at` in the free block `hole` of `segment` a block of
  // `bytes` waits for no old mapping's work (WouldWait), moving past busy
  // pages a few times; nullopt where the hole has no such place.
  std::optional<DevicePtr> OffBusy(const GrowableSegment& segment, const Block& hole,
                                   DevicePtr at, std::size_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pages under [begin, begin + bytes) of `segment` that hold no memory
  // (unmapped or leaving): what a block placed there maps.
  std::size_t MissingPages(const GrowableSegment& segment, DevicePtr begin,
                           std::size_t bytes) const;
  // The leaving chunk `l` holds its memory at its pages again (counted
  // there, no longer leaving); the caller drops or rewrites the record.
  void HoldAgain(const Leaving& l) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Points every old mapping of `handle` (a move's, pending) at where the
  // memory is mapped now: pages from `to_first` of `to`.
  void Retarget(PhysicalHandle handle, GrowableSegment* to, std::size_t to_first)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether no block of `segment` over pages [first, last) is in use.
  static bool FreeThroughout(const GrowableSegment& segment, std::size_t first,
                             std::size_t last) {
    return std::all_of(segment.live.begin() + static_cast<std::ptrdiff_t>(first),
                       segment.live.begin() + static_cast<std::ptrdiff_t>(last),
                       [](std::uint32_t n) { return n == 0; });
  }
  // Applies the worker's finished jobs: unmapped pages turn 0; a failed
  // unmap leaves its chunk pending (tried again later), a failed release
  // keeps its handle for the next trim. Returns the first failure.
  absl::Status Reap() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for every job given to the worker, then reaps them and tries the
  // releases that failed again.
  absl::Status Settle() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies the worker's finished jobs, then hands it the leaving chunks
  // whose work has finished; with `wait`, waits for the others' work and
  // for the unmaps. Only those of `segment` overlapping pages [first, last]
  // when `segment` is given. Nothing while capturing. A failed unmap keeps a
  // move's old mapping leaving (retried later), or maps a chunk going back
  // again (Reap), and is returned (for a range: only if it is in the way).
  absl::Status FinishLeaving(bool wait, const GrowableSegment* segment = nullptr,
                             std::size_t first = 0, std::size_t last = ~std::size_t{0})
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A wholly free chunk at pages [start, end) of `segment`, under a hole of
  // `stream` whose newest free there was `freed_at`.
  struct Chunk {
    GrowableSegment* segment;
    std::size_t start, end;
    StreamId stream;
    std::uint64_t freed_at;
  };
  // A chunk with its place in UnmapFreeChunks' order: oldest free first,
  // then the order the scan met it in.
  struct RankedChunk {
    Chunk chunk;
    std::uint64_t position;
    static bool Older(const RankedChunk& a, const RankedChunk& b) {
      return a.chunk.freed_at != b.chunk.freed_at ? a.chunk.freed_at < b.chunk.freed_at
                                                  : a.position < b.position;
    }
  };
  // Takes `c` off its pages for UnmapFreeChunks: left mapped there until its
  // work is done (`leave`: a move within the stream, which needs a run of
  // `place` to fit) or handed to the worker to unmap (and release, when it
  // fits no run); uncounted, its bytes added to `released`, and placed in
  // the run it fits when there is one.
  absl::Status TakeChunk(const Chunk& c, bool leave, Placement* place, std::size_t* released)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives the physical chunk `handle` (unmapped where it was held) back to
  // the device (through the worker) and counts it, after any old mapping it
  // still has (Leaving) is unmapped.
  absl::Status ReleaseChunk(PhysicalHandle handle) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Maps the leaving chunk at `first` of `segment` as it was (a move that
  // could not be mapped at its new address): its memory is held there again.
  void UndoLeaving(GrowableSegment* segment, std::size_t first) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Unmaps (into `spares`) the wholly free chunks of `hole` that the block
  // [begin, begin + bytes) would leave a page or more of unused, when
  // their frees have finished (see Prepare).
  void UnpinEdges(GrowableSegment* segment, const Block& hole, DevicePtr begin,
                  std::size_t bytes, std::vector<std::pair<PhysicalHandle, std::size_t>>* spares)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The pages [first, last] (both included) that the bytes [begin, begin +
  // bytes) of `segment` touch; `bytes` > 0.
  std::pair<std::size_t, std::size_t> PagesOf(const GrowableSegment& segment, DevicePtr begin,
                                              std::size_t bytes) const;
  // The largest chunk `segment` maps (larger for a region: see Prepare).
  // Whether `segment` is a region's (long-lived blocks: larger chunks).
  static bool IsRegion(const GrowableSegment& segment);
  std::size_t MaxChunk(const GrowableSegment& segment) const;
  // Maps one chunk of `pages` pages at `first_page`: the physical memory
  // `reuse` (taken from elsewhere, of exactly that size) or, when 0, new
  // memory. On failure new memory, and `reuse` when `release_reuse`, goes
  // back to the device.
  absl::Status MapChunk(GrowableSegment* segment, std::size_t first_page, std::size_t pages,
                        PhysicalHandle reuse, bool release_reuse = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // New physical memory of `bytes` for a chunk, within the memory limit
  // with `pending` bytes more about to be counted (taken and not mapped yet).
  absl::StatusOr<PhysicalHandle> CreateChunk(std::size_t bytes, std::size_t pending)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the chunk `handle` as mapped at pages [first_page, +pages) and
  // counts it; `moved`: memory mapped elsewhere before (its old mappings
  // are pointed here), not new.
  void CommitChunk(GrowableSegment* segment, std::size_t first_page, std::size_t pages,
                   PhysicalHandle handle, bool moved) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes chunks lying wholly inside free blocks of `owner`'s pool (null:
  // the default pool), largest blocks first, skipping [keep_begin, keep_end),
  // until `target` bytes are taken, and returns how many were. Without
  // `place` (a trim) the memory goes back to the device. With it (a move
  // into `dest`), a chunk that fits a run of `place` goes there: unmapped
  // by the worker when its work has finished, else, for a hole of dest's
  // stream, left mapped where it is until it has (Leaving); one that fits
  // nowhere goes back to the device (the worker unmaps and releases it). Nothing while capturing. Chunks whose work may not
  // have finished are skipped, or, with `wait`, waited for, unless at most
  // `unwaited` bytes of `target` are still to take (release_slack_hard):
  // those stay held.
  absl::StatusOr<std::size_t> UnmapFreeChunks(std::size_t target, DevicePtr keep_begin,
                                              DevicePtr keep_end, Placement* place,
                                              const GrowableSegment* dest, PrivatePool* owner,
                                              bool wait, std::size_t unwaited = 0)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The range `segment` is: every segment of this store is one.
  static GrowableSegment& Of(Segment& segment) {
    return static_cast<GrowableSegment&>(segment);
  }
  static const GrowableSegment& Of(const Segment& segment) {
    return static_cast<const GrowableSegment&>(segment);
  }

  // The page an offset into a range falls in, and whether it starts one:
  // on the allocation path of every block, so a shift where the page size
  // is a power of two (the driver's granularity always is), not a division.
  std::size_t PageIndex(std::size_t offset) const {
    return page_shift_ >= 0 ? offset >> page_shift_ : offset / page_size_;
  }
  bool PageAligned(std::size_t offset) const {
    return page_shift_ >= 0 ? (offset & (page_size_ - 1)) == 0 : offset % page_size_ == 0;
  }

  const std::size_t page_size_;
  const int page_shift_;  // log2(page_size_), or -1 if it is no power of two
  const std::size_t va_size_;  // address space reserved per range
  // Every live range by base (not owning: the cache owns its segments).
  absl::btree_map<DevicePtr, GrowableSegment*> ranges_ ABSL_GUARDED_BY(mu_);
  // Chunks moved away, still mapped at their old pages, oldest first.
  std::vector<Leaving> leaving_ ABSL_GUARDED_BY(mu_);
  // UnmapFreeChunks' oldest finished chunks, kept for its capacity.
  std::vector<RankedChunk> oldest_scratch_ ABSL_GUARDED_BY(mu_);
  // The most ever allocated at once (every allocation passes Prepare or
  // Ready): the marks' base. Not the counters' peak, which
  // reset_peak_memory_stats (and the memory profiler, at every phase
  // boundary) sets back to what is allocated now: marks that followed it
  // would make each growth after a reset give back the whole cache and map
  // it again.
  std::size_t peak_allocated_ ABSL_GUARDED_BY(mu_) = 0;
  // The most reserved since the last trim (outside captures): what
  // hold_reserved lets a growth take again without moving memory.
  std::size_t held_ ABSL_GUARDED_BY(mu_) = 0;
  // The device refused memory once (a failed create): the marks stay tight
  // from then on, whatever the limit (SlackAt).
  bool ran_short_ ABSL_GUARDED_BY(mu_) = false;
  // Jobs given to the worker and not yet reaped.
  std::size_t unreaped_ ABSL_GUARDED_BY(mu_) = 0;
  // Handles whose release failed on the worker, tried again at each trim.
  std::vector<PhysicalHandle> unreleased_ ABSL_GUARDED_BY(mu_);
  // Makes the unmaps and releases nobody waits for (declared last: it is
  // destroyed first, finishing its jobs while the store is whole).
  UnmapWorker worker_;
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SEGMENTS_GROWABLE_SEGMENTS_H_
