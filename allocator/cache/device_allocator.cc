// device_allocator.cc — the allocate and free path of the cache (see
// device_allocator.h for the design). Where a request's block goes (the
// placement policy) is device_allocator_placement.cc; private pools are in
// device_allocator_pools.cc, counters, snapshot, reports and invariants in
// device_allocator_report.cc, IPC and peers in device_allocator_ipc.cc, free
// marks, events, releasing cached memory and the limit in
// device_allocator_release.cc; the memory under segments is
// allocator/segments/.
#include "allocator/cache/device_allocator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

#ifndef CCALLOC_DEBUG_CHECKS
#define CCALLOC_DEBUG_CHECKS 0
#endif

namespace ccalloc {
namespace {

int PoolIndex(PoolKind pool) { return pool == PoolKind::kSmall ? 1 : 2; }

}  // namespace

std::int64_t DeviceAllocator::MaxSplitStat(const Options& options) {
  // PyTorch's statistic reads -1 for no limit.
  return options.max_split_size == kNoMaxSplit ? -1
                                               : static_cast<std::int64_t>(options.max_split_size);
}

DeviceAllocator::DeviceAllocator(std::unique_ptr<DeviceBackend> backend,
                                 const Options& options)
    : backend_(std::move(backend)),
      options_(options),
      policy_(options),
      store_(SegmentStore::Make(mu_, *this, *backend_, options_)),
      growable_(store_->growable()) {
#if !CCALLOC_DEBUG_CHECKS
  // Debian's Abseil is built with the mutex deadlock detector on: it costs a
  // graph lookup per lock, a third of an uncontended allocate+free. ccalloc
  // never holds two of its own locks in different orders (the backend's lock
  // is always taken inside the allocator's), so release builds turn it off;
  // debug-check builds keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  absl::MutexLock lock(&mu_);
  stats_.max_split_size = MaxSplitStat(options_);
  if (options_.memory_limit > 0) memory_limit_ = options_.memory_limit;
  if (options_.per_process_memory_fraction >= 0) {
    if (absl::StatusOr<DeviceMemoryInfo> info = backend_->MemoryInfo(); info.ok()) {
      memory_fraction_ = options_.per_process_memory_fraction;
      memory_limit_ = LimitForFraction(memory_fraction_, info->total_bytes);
    }
  }
}

DeviceAllocator::~DeviceAllocator() {
  FlushedLock lock(this);  // its pages counted free before the store lets go of them
  // Nothing may still be running on memory we hand back.
  if (num_pending_ > 0 || !segments_.empty()) {
    (void)backend_->SynchronizeDevice();
  }
  for (auto& [stream, queue] : pending_) {
    for (const PendingEvent& p : queue) backend_->DestroyEvent(p.event);
  }
  pending_.clear();
  DestroyMarks();
  for (auto& [base, segment] : segments_) {
    store_->Discard(Locked(), *segment);
    for (Block* b = segment->head; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
  }
  segments_.clear();
  for (Block* b : spare_blocks_) delete b;
  spare_blocks_.clear();
  for (auto& [region, owner] : regions_) (void)FreeBackupHost(owner.get());
}

Block* DeviceAllocator::NewBlock() {
  if (spare_blocks_.empty()) return new Block;
  Block* block = spare_blocks_.back();
  spare_blocks_.pop_back();
  return block;
}

void DeviceAllocator::DeleteBlock(Block* block) {
  // Field by field rather than `*block = Block{}`: assigning a temporary
  // moves its InlinedVector, a tenth of a hot allocate+free pair.
  block->ptr = 0;
  block->size = 0;
  block->requested = 0;
  block->stream = 0;
  block->pool = PoolKind::kLarge;
  block->state = BlockState::kFree;
  block->segment = nullptr;
  block->prev = nullptr;
  block->next = nullptr;
  block->pending_events = 0;
  block->tag = kNoTag;
  block->freed_at = 0;
  block->stream_uses.clear();
  block->borrowed = false;
  block->borrower = 0;
  block->oversize = false;
  spare_blocks_.push_back(block);
}

// ---------------------------------------------------------------------------
// Allocation
// ---------------------------------------------------------------------------

absl::StatusOr<DevicePtr> DeviceAllocator::Allocate(std::size_t size, StreamId stream) {
  if (size == 0) return DevicePtr{0};
  absl::MutexLock lock(&mu_);
  // Under the lock: the rounding can change at run time (SetRuntimeOptions).
  absl::StatusOr<std::size_t> rounded = policy_.RoundSize(size);
  if (!rounded.ok()) return rounded.status();
  const PoolKind pool = SizePolicy::PoolFor(*rounded);
  if (hot_ != nullptr) {
    // The block the last free held aside, if this asks for it again.
    if (Block* hit = TakeHot(*rounded, size, stream, pool); hit != nullptr) {
      if (recorder_ != nullptr) recorder_->OnAllocate(hit->ptr, size, stream, 0);
      DebugCheck();
      return hit->ptr;
    }
    FlushHot();
  }
  PrivatePool* owner = nullptr;
  if (ABSL_PREDICT_FALSE(pool_work_)) {
    if (capturing()) {
      owner = RouteFor(stream);
      // Deferred blocks the graph has since ordered before this stream's
      // next work are free to take (graph_capture_record_stream_reuse).
      if (positioned_ > 0 && owner != nullptr && options_.graph_capture_record_stream_reuse) {
        PromoteOrdered(stream, owner);
      }
    } else {
      // What failed stays owed and is tried again; the allocation need not
      // wait for it.
      (void)FlushPoolWork();
    }
  }
  // A graph pool being captured into wins over the thread's region.
  if (const RegionId region = CurrentRegion(); ABSL_PREDICT_FALSE(region != 0) &&
                                               owner == nullptr) {
    owner = RegionPool(region);
    if (owner->paused) {
      return absl::FailedPreconditionError(absl::StrCat(
          "region ", region, " is paused: resume it before allocating in it"));
    }
  }
  // Reclaim blocks whose cross-stream work has finished before looking, so
  // they are reused rather than new memory taken. A capture refuses event
  // queries: then pending blocks wait.
  if (num_pending_ > 0 && !capturing()) {
    if (absl::Status s = ProcessEvents(); !s.ok()) return s;
    // A completed event may have freed the last live block of a released
    // pool: its memory goes back now, not at some later call.
    if (ABSL_PREDICT_FALSE(pool_work_)) (void)FlushPoolWork();
  }
  absl::StatusOr<Block*> block = TryAllocate(*rounded, size, stream, pool, owner);
  // While capturing, releasing memory or synchronizing would invalidate the
  // capture: the ladder stops here and reports.
  if (!block.ok() && absl::IsResourceExhausted(block.status()) && !capturing()) {
    // Release cached memory that is wholly free (regions' too), then retry.
    absl::StatusOr<std::size_t> released =
        ReleaseCached(growable_ ? 0 : SizePolicy::SegmentSize(*rounded));
    if (!released.ok()) return released.status();
    absl::StatusOr<std::size_t> regions = ReleaseRegionsCached();
    if (!regions.ok()) return regions.status();
    if (*released + *regions > 0) {
      ++stats_.num_alloc_retries;
      block = TryAllocate(*rounded, size, stream, pool, owner);
    }
  }
  if (!block.ok() && absl::IsResourceExhausted(block.status()) && !capturing()) {
    // Free-all: wait for every stream, free everything cached, retry once.
    if (absl::Status s = SynchronizeAndFreeEvents(); !s.ok()) return s;
    // The wait may have freed the last live blocks of released pools: their
    // memory goes back too, before the retry that may need it.
    if (pool_work_) (void)FlushPoolWork();
    absl::StatusOr<std::size_t> released = ReleaseCached(0);
    if (!released.ok()) return released.status();
    if (absl::StatusOr<std::size_t> r = ReleaseRegionsCached(); !r.ok()) return r.status();
    if (absl::Status s = DropIdleBackups(); !s.ok()) return s;
    ++stats_.num_alloc_retries;
    block = TryAllocate(*rounded, size, stream, pool, owner);
  }
  if (!block.ok() && absl::IsResourceExhausted(block.status()) && owner == nullptr &&
      !capturing() && !pools_.empty()) {
    // MemPool(use_on_oom=True): a pool's free memory before the error.
    if (Block* lent = FromPoolsOnOom(*rounded, size, stream, pool); lent != nullptr) block = lent;
  }
  if (!block.ok()) {
    if (absl::IsResourceExhausted(block.status())) {
      ++stats_.num_ooms;
      // The failed attempt may have mapped chunks (or reserved a range) for a
      // block it could not finish; give every free chunk and empty range back
      // so that other processes can use the memory and reserved does not look
      // inflated after an OOM.
      if (growable_) (void)ReleaseCached(0);
      return absl::ResourceExhaustedError(
          OutOfMemoryReport(size, *rounded, stream, block.status()));
    }
    return block.status();
  }
  if (recorder_ != nullptr) {
    const PrivatePool* owner = (*block)->segment->owner;
    recorder_->OnAllocate((*block)->ptr, size, stream,
                          owner == nullptr ? 0 : RegionOfPool(owner->id));
  }
  DebugCheck();
  return (*block)->ptr;
}

absl::StatusOr<Block*> DeviceAllocator::TryAllocate(std::size_t rounded,
                                                    std::size_t requested, StreamId stream,
                                                    PoolKind pool, PrivatePool* owner) {
  BlockPool& free_blocks = owner == nullptr ? PoolOf(pool) : owner->Of(pool);
  Block* block = free_blocks.BestFit(stream, rounded, policy_, growable_);
  if (block == nullptr) {
    // Growable segments give memory back by pages instead (the store trims).
    if (!growable_ && options_.garbage_collection_threshold > 0 && memory_limit_ > 0) {
      GarbageCollect();
    }
    absl::StatusOr<std::unique_ptr<Segment>> segment =
        store_->Create(Locked(), rounded, stream, pool, owner);
    if (!segment.ok()) return segment.status();
    block = AddSegment(*std::move(segment))->head;
  }
  return Place(free_blocks, block, rounded, requested, stream, owner);
}

Segment* DeviceAllocator::AddSegment(std::unique_ptr<Segment> segment) {
  if (segment->owner != nullptr) ++segment->owner->segments;
  Block* block = NewBlock();
  block->ptr = segment->base;
  block->size = segment->size;
  block->stream = segment->stream;
  block->pool = segment->pool;
  block->segment = segment.get();
  segment->head = block;
  Segment* raw = segment.get();
  const DevicePtr base = segment->base;
  segments_.emplace(base, std::move(segment));
  StatAdd(stats_.segment, raw->pool, 1);
  IndexOf(block).Insert(block);
  return raw;
}

const BlockPool& DeviceAllocator::FreeBlocks(const PrivatePool* owner, PoolKind kind) const {
  if (owner != nullptr) return owner->Of(kind);
  return kind == PoolKind::kSmall ? small_pool_ : large_pool_;
}

Block* DeviceAllocator::Carve(Block* block, std::size_t rounded, std::size_t requested) {
  BlockPool& pool = IndexOf(block);
  AccountInactive(block, -1);
  if (policy_.ShouldSplit(block->pool, block->size, rounded, block->segment->expandable)) {
    // The hole's record stays indexed and becomes the rest (Rekey: in place
    // when the rest keeps the hole's place in the index, as the largest
    // hole does), and a new record takes the front: one index operation
    // instead of an insert and an erase, and the index never empties on the
    // way (an absl btree that empties frees its root, two mallocs a pair).
    Block* front = NewBlock();
    front->ptr = block->ptr;
    front->size = rounded;
    front->stream = block->stream;
    front->pool = block->pool;
    front->segment = block->segment;
    front->prev = block->prev;
    front->next = block;
    if (front->prev != nullptr) {
      front->prev->next = front;
    } else {
      block->segment->head = front;
    }
    block->prev = front;
    // The rest keeps the hole's newest free (freed_at), or memory still used
    // by queued work could be unmapped without a wait.
    pool.Rekey(block, block->ptr + rounded, block->size - rounded);
    AccountInactive(block, +1);
    block = front;
  } else {
    pool.Erase(block);
  }
  MarkAllocated(block, requested);
  return block;
}

absl::Status DeviceAllocator::OrderAfterFree(StreamId waiter, StreamId stream,
                                             std::uint64_t freed_at) {
  if (FreeCompleted(stream, freed_at)) return absl::OkStatus();
  // The first mark after that free (FreeCompleted leaves one when it can),
  // else the stream's work so far.
  EventHandle event = 0;
  bool own = false;
  if (auto it = marks_.find(stream); it != marks_.end()) {
    if (auto mark = MarkAfter(it->second, freed_at); mark != it->second.end()) {
      event = mark->event;
    }
  }
  if (event == 0) {
    absl::StatusOr<EventHandle> e = backend_->RecordEvent(stream);
    if (!e.ok()) return e.status();
    event = *e;
    own = true;
  }
  absl::Status s = backend_->StreamWaitEvent(waiter, event);
  if (own) backend_->DestroyEvent(event);
  if (s.ok()) ++stats_.num_device_waits;
  return s;
}

Block* DeviceAllocator::CarveAt(Block* block, DevicePtr ptr, std::size_t rounded,
                                std::size_t requested) {
  if (ptr > block->ptr) block = SplitFreeAt(block, ptr);
  if (ptr + rounded < block->end()) SplitFreeAt(block, ptr + rounded);
  AccountInactive(block, -1);
  IndexOf(block).Erase(block);
  MarkAllocated(block, requested);
  return block;
}

Block* DeviceAllocator::SplitFreeAt(Block* block, DevicePtr at) {
  BlockPool& pool = IndexOf(block);
  AccountInactive(block, -1);
  pool.Erase(block);
  Block* upper = NewBlock();
  upper->ptr = at;
  upper->size = block->end() - at;
  upper->stream = block->stream;
  upper->pool = block->pool;
  upper->segment = block->segment;
  upper->freed_at = block->freed_at;
  upper->prev = block;
  upper->next = block->next;
  if (upper->next != nullptr) upper->next->prev = upper;
  block->next = upper;
  block->size = at - block->ptr;
  pool.Insert(block);
  pool.Insert(upper);
  AccountInactive(block, +1);
  AccountInactive(upper, +1);
  return upper;
}

void DeviceAllocator::MarkAllocated(Block* block, std::size_t requested) {
  if (growable_) store_->NoteAllocated(Locked(), *block->segment, block->ptr, block->size);
  HandOut(block, requested);
}

void DeviceAllocator::HandOut(Block* block, std::size_t requested) {
  block->state = BlockState::kAllocated;
  block->requested = requested;
  allocated_.emplace(block->ptr, block);

  const auto size = static_cast<std::int64_t>(block->size);
  StatAdd(stats_.allocation, block->pool, 1);
  StatAdd(stats_.allocated_bytes, block->pool, size);
  block->tag = CurrentTag();
  tags_.Add(block->tag, size);
  StatAdd(stats_.active, block->pool, 1);
  StatAdd(stats_.active_bytes, block->pool, size);
  StatAdd(stats_.requested_bytes, block->pool, static_cast<std::int64_t>(requested));
  block->oversize = policy_.IsOversize(block->size);
  if (block->oversize) stats_.oversize_allocations.Increase(1);
  ++stats_.num_allocs;
}

// ---------------------------------------------------------------------------
// Free
// ---------------------------------------------------------------------------

absl::Status DeviceAllocator::Free(DevicePtr ptr) {
  if (ptr == 0) return absl::OkStatus();
  FlushedLock lock(this);  // (one block at a time: the newest free is the likeliest asked for)
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    return absl::InvalidArgumentError(DescribeBadPointer(ptr, /*for_free=*/true));
  }
  Block* block = it->second;

  // A borrowed block goes back to its segment's stream now, that stream's
  // later work ordered after the borrower's on the device. During a capture
  // (no event calls) the borrower is a use like a record_stream's instead:
  // the block waits, pending, until that use is over and the capture has
  // ended.
  if (block->borrowed) {
    if (capturing()) {
      AddStreamUse(block, block->borrower);
    } else if (absl::Status s = OrderAfterUse(block->stream, block->borrower); !s.ok()) {
      return s;  // nothing changed: the block is still allocated
    }
  }

  // Record every event first: if one fails the free fails and nothing changed.
  // A capture refuses events on other streams: then they wait (deferred)
  // until no capture is underway, and the block stays pending until then.
  absl::InlinedVector<EventHandle, 2> events;
  const bool defer = !block->stream_uses.empty() && capturing();
  for (std::size_t i = 0; i < block->stream_uses.size() && !defer; ++i) {
    absl::StatusOr<EventHandle> event = backend_->RecordEvent(block->stream_uses[i]);
    if (!event.ok()) {
      for (EventHandle e : events) backend_->DestroyEvent(e);
      return event.status();
    }
    events.push_back(*event);
  }

  allocated_.erase(it);
  block->borrowed = false;  // ordered above: its segment's stream's block again
  // Only a region's block can have a backup to drop (regions are private pools).
  if (ABSL_PREDICT_FALSE(block->segment->owner != nullptr)) DropBackupOf(block);
  StatAdd(stats_.allocation, block->pool, -1);
  StatAdd(stats_.allocated_bytes, block->pool, -static_cast<std::int64_t>(block->size));
  tags_.Remove(block->tag, static_cast<std::int64_t>(block->size));
  block->tag = kNoTag;
  StatAdd(stats_.requested_bytes, block->pool, -static_cast<std::int64_t>(block->requested));
  if (block->oversize) stats_.oversize_allocations.Decrease(1);
  block->oversize = false;

  if (defer) {
    block->state = BlockState::kPending;
    block->pending_events = 0;
    DeferredFree deferred{block, {}};
    // Only a graph pool's blocks can be reused during the capture (the
    // allocations it routes); a region's or the default pool's wait.
    if (options_.graph_capture_record_stream_reuse && block->segment->owner != nullptr &&
        !block->segment->owner->region) {
      deferred.after = FreePosition(*block);
      if (!deferred.after.nodes.empty()) ++positioned_;
    }
    deferred_.push_back(std::move(deferred));
    UpdatePoolWork();
  } else if (events.empty()) {
    if (HotEligible(*block)) {
      HoldAside(block);
    } else {
      FreeBlock(block);
    }
  } else {
    block->state = BlockState::kPending;
    block->pending_events = static_cast<int>(events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      pending_[block->stream_uses[i]].push_back(PendingEvent{events[i], block});
      ++num_pending_;
    }
  }
  if (recorder_ != nullptr) recorder_->OnFree(ptr);
  // The free is done; what a capture deferred (or a released pool's memory
  // this free made wholly free) goes now, or stays owed if that fails.
  if (ABSL_PREDICT_FALSE(pool_work_) && !capturing()) (void)FlushPoolWork();
  DebugCheck();
  return absl::OkStatus();
}

void DeviceAllocator::EndActive(const Block* block) {
  StatAdd(stats_.active, block->pool, -1);
  StatAdd(stats_.active_bytes, block->pool, -static_cast<std::int64_t>(block->size));
}

void DeviceAllocator::FreeBlock(Block* block) {
  EndActive(block);
  // (Read first: ReturnBlock may merge the block away.)
  const DevicePtr ptr = block->ptr;
  const std::size_t size = block->size;
  const StreamId stream = block->stream;
  ReturnBlock(block, ++free_seq_);
  NoteFree(ptr, size, stream);
}

void DeviceAllocator::MarkFrees(StreamId stream) {
  // (A capture refuses event calls.)
  if (!growable_ || free_seq_ - marked_seq_ < kFreesPerMark || capturing()) return;
  marked_seq_ = free_seq_;
  (void)LeaveMark(stream);
}

void DeviceAllocator::NoteFree(DevicePtr ptr, std::size_t size, StreamId stream) {
  last_free_ptr_ = ptr;
  last_free_size_ = size;
  MarkFrees(stream);
}

void DeviceAllocator::TakenBack(DevicePtr ptr, std::size_t rounded) {
  if (ptr != last_free_ptr_ || rounded != last_free_size_ || taken_back_seq_ == free_seq_) return;
  taken_back_seq_ = free_seq_;
  if (marked_seq_ < free_seq_) ++marked_seq_;
}

void DeviceAllocator::HoldAside(Block* block) {
  // Free to the user and to every counter, but not yet coalesced, indexed
  // or given back to the page table (FlushHot does that).
  EndActive(block);
  block->state = BlockState::kHot;
  // Numbered now, at the user's free: the work queued before it is all that
  // uses the memory, so a page freed here may go as soon as that is done,
  // however late the block is returned.
  block->freed_at = ++free_seq_;
  hot_ = block;
  NoteFree(block->ptr, block->size, block->stream);
}

bool DeviceAllocator::HotEligible(const Block& block) const {
  // Always held aside where it may be (it was the hot_slot switch): nothing
  // a user can see changes (the counters move at the free, every other call
  // finds the block coalesced and indexed, no placement or driver call
  // differs: HotSlotChangesNoPlacementAndNoDriverCall), and the hot pair
  // (bench/patterns.h) on the simulated card costs 933 host instructions
  // instead of 1,450, 40-42 ns an operation instead of 60-65 on the build
  // machine, where the H100 hosts' slow state (~2.2x on such code) had put
  // it over 100 ns.
  // Only the default pool's growable segments: their free blocks count as
  // nothing (classic segments count split free blocks as inactive), and no
  // private pool's accounting can see the block held. Not while a capture
  // routes allocations or pool work is owed: those paths walk blocks.
  return growable_ && block.segment->expandable &&
         block.segment->owner == nullptr && block.stream_uses.empty() && !block.borrowed &&
         !pool_work_ && !capturing();
}

Block* DeviceAllocator::TakeHot(std::size_t rounded, std::size_t requested, StreamId stream,
                               PoolKind pool) {
  Block* block = hot_;
  // Only where the slow path would hand out this very block: the same size
  // on the same stream in the default pool (no capture routes it elsewhere,
  // no region is the thread's, no pending block would come free first),
  // and best fit would choose the hole the block's free would make: no free
  // block before it (that hole would start there), and no other free block
  // that fits before that hole in best fit's order (size, then address).
  // Then Ready says the slow path would carve it at once. So holding a
  // block aside changes no placement, and no figure of the replay.
  if (block->stream != stream || block->size != rounded || block->pool != pool ||
      ABSL_PREDICT_FALSE(pool_work_ || num_pending_ > 0 || capturing() ||
                         CurrentRegion() != 0)) {
    return nullptr;
  }
  if (block->prev != nullptr && block->prev->state == BlockState::kFree) return nullptr;
  const Block* after = block->next != nullptr && block->next->state == BlockState::kFree
                           ? block->next
                           : nullptr;
  const std::size_t hole = block->size + (after != nullptr ? after->size : 0);
  if (const Block* other = PoolOf(pool).FitOtherThan(stream, rounded, after);
      other != nullptr && (other->size < hole || (other->size == hole && other->ptr < block->ptr))) {
    return nullptr;
  }
  if (!store_->Ready(Locked(), *block->segment, block->ptr, rounded)) return nullptr;
  hot_ = nullptr;
  TakenBack(block->ptr, rounded);
  HandOut(block, requested);  // its pages were never counted free
  return block;
}

void DeviceAllocator::FlushHot() const {
  if (hot_ == nullptr) return;
  Block* block = hot_;
  hot_ = nullptr;
  // Logically const: what a report reads is the same before and after
  // (the counters moved at the free); see the declaration. Every free
  // since this block's flushed it first, so its number is still the newest
  // of any free block it coalesces with.
  const_cast<DeviceAllocator*>(this)->ReturnBlock(block, block->freed_at);
}

void DeviceAllocator::ReturnBlock(Block* block, std::uint64_t freed_at) {
  block->state = BlockState::kFree;
  block->freed_at = freed_at;
  if (growable_) store_->NoteFree(Locked(), *block->segment, block->ptr, block->size, freed_at);
  block->stream_uses.clear();
  // A free block keeps the requested size of the last allocation freed into
  // it (`requested` counts nowhere once the block is free), as PyTorch's
  // blocks do: its snapshots show it on inactive blocks, and memory_viz and
  // PyTorch's own tests (test_memory_plots) read it there.
  Block* prev = block->prev != nullptr && block->prev->state == BlockState::kFree
                    ? block->prev
                    : nullptr;
  Block* next = block->next != nullptr && block->next->state == BlockState::kFree
                    ? block->next
                    : nullptr;
  if (prev != nullptr) AccountInactive(prev, -1);
  if (next != nullptr) AccountInactive(next, -1);
  if (next != nullptr) {
    // The free block after keeps its record and takes in this one (and the
    // one before): Rekey moves it in the index only when its new size
    // changes its place, so freeing the front of the largest hole (the hot
    // path) costs no insert or erase.
    BlockPool& pool = IndexOf(next);
    Block* first = prev != nullptr ? prev : block;
    const std::size_t size = next->end() - first->ptr;
    if (prev != nullptr) pool.Erase(prev);
    next->freed_at = block->freed_at;  // the newest free of the merged hole
    next->requested = block->requested;
    next->prev = first->prev;
    if (next->prev != nullptr) {
      next->prev->next = next;
    } else {
      next->segment->head = next;
    }
    pool.Rekey(next, first->ptr, size);
    if (prev != nullptr) DeleteBlock(prev);
    DeleteBlock(block);
    AccountInactive(next, +1);
    block = next;
  } else {
    MergeIntoFreed(block, prev);
  }
  // A released pool gives its memory back as soon as it is free.
  if (ABSL_PREDICT_FALSE(block->segment->owner != nullptr) &&
      block->segment->owner->use_count == 0) {
    release_owed_ = true;
    pool_work_ = true;
  }
}

void DeviceAllocator::MergeIntoFreed(Block* block, Block* prev) {
  // The merged block is indexed before its neighbours leave the index, so the
  // index never becomes empty on the way (see Carve).
  if (prev != nullptr) {
    block->ptr = prev->ptr;
    block->size += prev->size;
  }
  BlockPool& pool = IndexOf(block);
  pool.Insert(block);
  if (prev != nullptr) {
    pool.Erase(prev);
    block->prev = prev->prev;
    if (block->prev != nullptr) {
      block->prev->next = block;
    } else {
      block->segment->head = block;
    }
    DeleteBlock(prev);
  }
  AccountInactive(block, +1);
}

absl::Status DeviceAllocator::OrderAfterUse(StreamId waiter, StreamId user) {
  absl::StatusOr<EventHandle> event = backend_->RecordEvent(user);
  if (!event.ok()) return event.status();
  absl::Status s = backend_->StreamWaitEvent(waiter, *event);
  if (s.ok()) {
    ++stats_.num_device_waits;
  } else {
    // The host waits instead (a wait like a trim's, counted as one).
    ++stats_.num_stream_syncs;
    const ElapsedNs waited(&stats_.wait_ns);
    s = backend_->SynchronizeEvent(*event);
  }
  backend_->DestroyEvent(*event);
  return s;
}

absl::Status DeviceAllocator::RecordStream(DevicePtr ptr, StreamId stream) {
  if (ptr == 0) return absl::OkStatus();
  FlushedLock lock(this);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    return absl::InvalidArgumentError(
        DescribeBadPointer(ptr, /*for_free=*/false));
  }
  Block* block = it->second;
  // The allocating stream is ordered with itself already, and a borrower
  // with the block's stream at the free.
  if (stream == block->stream || (block->borrowed && stream == block->borrower)) {
    return absl::OkStatus();
  }
  AddStreamUse(block, stream);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Statistics and reports
// ---------------------------------------------------------------------------

void DeviceAllocator::StatAdd(StatArray& array, PoolKind pool, std::int64_t amount) {
  if (amount >= 0) {
    array[kStatAll].Increase(amount);
    array[PoolIndex(pool)].Increase(amount);
  } else {
    array[kStatAll].Decrease(-amount);
    array[PoolIndex(pool)].Decrease(-amount);
  }
}

void DeviceAllocator::AccountInactive(const Block* block, int sign) {
  // A free block of a growable segment is address space, not memory held, so
  // only classic segments count here (as in PyTorch).
  if (block->state != BlockState::kFree || !block->is_split() || block->segment->expandable) {
    return;
  }
  StatAdd(stats_.inactive_split, block->pool, sign);
  StatAdd(stats_.inactive_split_bytes, block->pool,
          sign * static_cast<std::int64_t>(block->size));
}

// ---------------------------------------------------------------------------
// Invariants (checked in device_allocator_report.cc)
// ---------------------------------------------------------------------------

void DeviceAllocator::DebugCheck() const {
#if CCALLOC_DEBUG_CHECKS
  std::string why;
  if (!ValidateLocked(&why)) {
    std::fprintf(stderr, "ccalloc: invariant broken: %s\n", why.c_str());
    std::abort();
  }
#endif
}

}  // namespace ccalloc
