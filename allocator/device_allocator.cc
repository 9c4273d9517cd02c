// device_allocator.cc — see device_allocator.h for the design.
#include "allocator/device_allocator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#ifndef CCALLOC_DEBUG_CHECKS
#define CCALLOC_DEBUG_CHECKS 0
#endif

namespace ccalloc {
namespace {

int PoolIndex(PoolKind pool) { return pool == PoolKind::kSmall ? 1 : 2; }

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

}  // namespace

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
  stats_.max_split_size = options_.max_split_size == kNoMaxSplit
                              ? -1
                              : static_cast<std::int64_t>(options_.max_split_size);
  if (options_.memory_limit > 0) memory_limit_ = options_.memory_limit;
  if (options_.memory_fraction > 0) {
    if (absl::StatusOr<DeviceMemoryInfo> info = backend_->MemoryInfo(); info.ok()) {
      memory_limit_ = static_cast<std::size_t>(options_.memory_fraction *
                                               static_cast<double>(info->total_bytes));
    }
  }
}

DeviceAllocator::~DeviceAllocator() {
  absl::MutexLock lock(&mu_);
  // Nothing may still be running on memory we hand back.
  if (num_pending_ > 0 || !segments_.empty()) {
    (void)backend_->SynchronizeDevice();
  }
  for (auto& [stream, queue] : pending_) {
    for (const PendingEvent& p : queue) backend_->DestroyEvent(p.event);
  }
  pending_.clear();
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
}

Block* DeviceAllocator::NewBlock() {
  if (spare_blocks_.empty()) return new Block;
  Block* block = spare_blocks_.back();
  spare_blocks_.pop_back();
  return block;
}

void DeviceAllocator::DeleteBlock(Block* block) {
  *block = Block{};
  spare_blocks_.push_back(block);
}

// ---------------------------------------------------------------------------
// Allocation
// ---------------------------------------------------------------------------

absl::StatusOr<DevicePtr> DeviceAllocator::Allocate(std::size_t size, StreamId stream) {
  if (size == 0) return DevicePtr{0};
  absl::StatusOr<std::size_t> rounded = policy_.RoundSize(size);
  if (!rounded.ok()) return rounded.status();
  const PoolKind pool = SizePolicy::PoolFor(*rounded);

  absl::MutexLock lock(&mu_);
  PrivatePool* owner = nullptr;
  if (ABSL_PREDICT_FALSE(pool_work_)) {
    if (capturing()) {
      owner = RouteFor(stream);
    } else {
      // What failed stays owed and is tried again; the allocation need not
      // wait for it.
      (void)FlushPoolWork();
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
    // Release cached memory that is wholly free, then retry.
    absl::StatusOr<std::size_t> released =
        ReleaseCached(growable_ ? 0 : SizePolicy::SegmentSize(*rounded));
    if (!released.ok()) return released.status();
    if (*released > 0) {
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
    ++stats_.num_alloc_retries;
    block = TryAllocate(*rounded, size, stream, pool, owner);
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
  if (recorder_ != nullptr) recorder_->OnAllocate((*block)->ptr, size, stream);
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
  // Make the block's bytes usable before handing it out; on failure the
  // block is still free and indexed, so there is nothing to undo.
  if (absl::Status s = store_->Prepare(Locked(), *block->segment, block->ptr, rounded);
      !s.ok()) {
    return s;
  }
  return Carve(block, rounded, requested);
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

absl::Status DeviceAllocator::SynchronizeStream(StreamId stream) {
  absl::StatusOr<EventHandle> event = backend_->RecordEvent(stream);
  if (!event.ok()) return event.status();
  absl::Status s = backend_->SynchronizeEvent(*event);
  backend_->DestroyEvent(*event);
  return s;
}

absl::Status DeviceAllocator::WaitForFree(const Block& block) {
  // A wait since the block's newest free (of its stream, or of the device)
  // already covers it; otherwise wait for the stream now and remember how far
  // that wait reaches.
  const StreamId stream = block.segment->stream;
  auto synced = synced_upto_.find(stream);
  const std::uint64_t covered =
      std::max(device_synced_upto_, synced == synced_upto_.end() ? 0 : synced->second);
  if (block.freed_at <= covered) return absl::OkStatus();
  const std::uint64_t now = free_seq_;
  if (absl::Status s = SynchronizeStream(stream); !s.ok()) return s;
  ++stats_.num_stream_syncs;
  synced_upto_[stream] = now;
  return absl::OkStatus();
}

const BlockPool& DeviceAllocator::FreeBlocks(const PrivatePool* owner, PoolKind kind) const {
  if (owner != nullptr) return owner->Of(kind);
  return kind == PoolKind::kSmall ? small_pool_ : large_pool_;
}

Block* DeviceAllocator::Carve(Block* block, std::size_t rounded, std::size_t requested) {
  BlockPool& pool = IndexOf(block);
  AccountInactive(block, -1);
  // The remainder is indexed before the block leaves the index: an absl
  // btree that becomes empty frees its root node and the next insert
  // allocates it again, two mallocs per allocate/free pair otherwise.
  if (policy_.ShouldSplit(block->pool, block->size, rounded, block->segment->expandable)) {
    Block* rest = NewBlock();
    rest->ptr = block->ptr + rounded;
    rest->size = block->size - rounded;
    rest->stream = block->stream;
    rest->pool = block->pool;
    rest->segment = block->segment;
    // The rest was part of the hole: it keeps the hole's newest free, or
    // memory still used by queued work could be unmapped without a wait.
    rest->freed_at = block->freed_at;
    rest->prev = block;
    rest->next = block->next;
    if (rest->next != nullptr) rest->next->prev = rest;
    block->next = rest;
    pool.Insert(rest);
    pool.Erase(block);
    block->size = rounded;
    AccountInactive(rest, +1);
  } else {
    pool.Erase(block);
  }
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
  block->state = BlockState::kAllocated;
  block->requested = requested;
  allocated_.emplace(block->ptr, block);

  const auto size = static_cast<std::int64_t>(block->size);
  StatAdd(stats_.allocation, block->pool, 1);
  StatAdd(stats_.allocated_bytes, block->pool, size);
  StatAdd(stats_.active, block->pool, 1);
  StatAdd(stats_.active_bytes, block->pool, size);
  StatAdd(stats_.requested_bytes, block->pool, static_cast<std::int64_t>(requested));
  if (policy_.IsOversize(block->size)) stats_.oversize_allocations.Increase(1);
  ++stats_.num_allocs;
}

// ---------------------------------------------------------------------------
// Free
// ---------------------------------------------------------------------------

absl::Status DeviceAllocator::Free(DevicePtr ptr) {
  if (ptr == 0) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    return absl::InvalidArgumentError(DescribeBadPointer(ptr, /*for_free=*/true));
  }
  Block* block = it->second;

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
  StatAdd(stats_.allocation, block->pool, -1);
  StatAdd(stats_.allocated_bytes, block->pool, -static_cast<std::int64_t>(block->size));
  StatAdd(stats_.requested_bytes, block->pool, -static_cast<std::int64_t>(block->requested));
  if (policy_.IsOversize(block->size)) stats_.oversize_allocations.Decrease(1);

  if (defer) {
    block->state = BlockState::kPending;
    block->pending_events = 0;
    deferred_.push_back(block);
    UpdatePoolWork();
  } else if (events.empty()) {
    FreeBlock(block);
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

void DeviceAllocator::FreeBlock(Block* block) {
  block->state = BlockState::kFree;
  block->freed_at = ++free_seq_;
  block->stream_uses.clear();
  block->requested = 0;
  StatAdd(stats_.active, block->pool, -1);
  StatAdd(stats_.active_bytes, block->pool, -static_cast<std::int64_t>(block->size));
  Block* prev = block->prev != nullptr && block->prev->state == BlockState::kFree
                    ? block->prev
                    : nullptr;
  Block* next = block->next != nullptr && block->next->state == BlockState::kFree
                    ? block->next
                    : nullptr;
  if (prev != nullptr) AccountInactive(prev, -1);
  if (next != nullptr) AccountInactive(next, -1);
  // The merged block is indexed before its neighbours leave the index, so the
  // index never becomes empty on the way (see Carve).
  if (prev != nullptr) {
    block->ptr = prev->ptr;
    block->size += prev->size;
  }
  if (next != nullptr) block->size += next->size;
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
  if (next != nullptr) {
    pool.Erase(next);
    block->next = next->next;
    if (block->next != nullptr) block->next->prev = block;
    DeleteBlock(next);
  }
  AccountInactive(block, +1);
  // A released pool gives its memory back as soon as it is free.
  if (ABSL_PREDICT_FALSE(block->segment->owner != nullptr) &&
      block->segment->owner->use_count == 0) {
    release_owed_ = true;
    pool_work_ = true;
  }
}

absl::Status DeviceAllocator::RecordStream(DevicePtr ptr, StreamId stream) {
  if (ptr == 0) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    return absl::InvalidArgumentError(
        DescribeBadPointer(ptr, /*for_free=*/false));
  }
  Block* block = it->second;
  // The allocating stream is ordered with itself already.
  if (stream == block->stream) return absl::OkStatus();
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) ==
      block->stream_uses.end()) {
    block->stream_uses.push_back(stream);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Events, release, limits
// ---------------------------------------------------------------------------

absl::Status DeviceAllocator::ProcessEvents() {
  if (capturing()) return absl::OkStatus();  // a capture refuses event queries
  for (auto& [stream, queue] : pending_) {
    while (!queue.empty()) {
      absl::StatusOr<bool> done = backend_->QueryEvent(queue.front().event);
      if (!done.ok()) return done.status();
      if (!*done) break;
      PendingEvent p = queue.front();
      queue.pop_front();
      --num_pending_;
      backend_->DestroyEvent(p.event);
      if (--p.block->pending_events == 0) FreeBlock(p.block);
    }
  }
  return absl::OkStatus();
}

absl::Status DeviceAllocator::SynchronizeAndFreeEvents() {
  if (absl::Status s = backend_->SynchronizeDevice(); !s.ok()) return s;
  ++stats_.num_sync_all_streams;
  device_synced_upto_ = free_seq_;
  for (auto& [stream, queue] : pending_) {
    for (const PendingEvent& p : queue) {
      backend_->DestroyEvent(p.event);
      if (--p.block->pending_events == 0) FreeBlock(p.block);
    }
    queue.clear();
  }
  num_pending_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<std::size_t> DeviceAllocator::ReleaseCached(std::size_t target,
                                                           PrivatePool* owner) {
  if (capturing() || (owner != nullptr && owner->use_count > 0)) return std::size_t{0};
  const std::size_t before = reserved();
  // Memory under free blocks that can go without whole segments (growable
  // pages), then the segments that are wholly free.
  absl::StatusOr<std::size_t> trimmed = store_->Trim(Locked(), owner);
  if (!trimmed.ok()) return trimmed.status();
  std::vector<Segment*> free_segments;
  for (auto& [base, segment] : segments_) {
    if (segment->owner == owner && segment->wholly_free() &&
        store_->CanRelease(Locked(), *segment)) {
      free_segments.push_back(segment.get());
    }
  }
  if (target > 0) {
    // Enough for `target`: the smallest single segment that covers it, else
    // the largest ones until it is covered.
    std::sort(free_segments.begin(), free_segments.end(),
              [](const Segment* a, const Segment* b) { return a->size < b->size; });
    auto fit = std::find_if(free_segments.begin(), free_segments.end(),
                            [target](const Segment* s) { return s->size >= target; });
    if (fit != free_segments.end()) {
      free_segments = {*fit};
    } else {
      std::reverse(free_segments.begin(), free_segments.end());
    }
  }
  for (Segment* segment : free_segments) {
    if (target > 0 && before - reserved() >= target) break;
    if (absl::Status s = ReleaseSegment(segment); !s.ok()) return s;
  }
  return before - reserved();
}

absl::Status DeviceAllocator::ReleaseSegment(Segment* segment) {
  Block* head = segment->head;
  if (absl::Status s = store_->Release(Locked(), *segment); !s.ok()) return s;
  IndexOf(head).Erase(head);
  AccountInactive(head, -1);
  StatAdd(stats_.segment, segment->pool, -1);
  if (segment->owner != nullptr) --segment->owner->segments;
  DeleteBlock(head);
  segments_.erase(segment->base);
  return absl::OkStatus();
}

void DeviceAllocator::GarbageCollect() {
  const auto threshold = static_cast<std::size_t>(
      options_.garbage_collection_threshold * static_cast<double>(memory_limit_));
  if (reserved() <= threshold || capturing()) return;
  std::vector<Segment*> free_segments;
  for (auto& [base, segment] : segments_) {
    // Private pools: live ones keep their memory, released ones have given
    // back what is free already.
    if (!segment->expandable && segment->owner == nullptr && segment->wholly_free()) {
      free_segments.push_back(segment.get());
    }
  }
  // Largest first: the fewest releases that get back under the threshold.
  std::sort(free_segments.begin(), free_segments.end(),
            [](const Segment* a, const Segment* b) { return a->size > b->size; });
  for (Segment* segment : free_segments) {
    if (reserved() <= threshold) break;
    if (!ReleaseSegment(segment).ok()) break;
  }
}

absl::Status DeviceAllocator::SynchronizePending() {
  // Like torch.cuda.empty_cache(): blocks waiting on other streams are waited
  // for, so that everything the program has freed can go back.
  for (auto& [stream, queue] : pending_) {
    for (const PendingEvent& p : queue) {
      if (absl::Status s = backend_->SynchronizeEvent(p.event); !s.ok()) return s;
    }
  }
  return ProcessEvents();
}

absl::Status DeviceAllocator::EmptyCache() {
  absl::MutexLock lock(&mu_);
  if (capturing()) {
    return absl::FailedPreconditionError(
        "empty_cache is not permitted while allocations are routed to a private pool (a "
        "stream capture may be underway: it would synchronize)");
  }
  // Deferred events first, so that their blocks are waited for below.
  if (absl::Status s = FlushPoolWork(); !s.ok()) return s;
  if (absl::Status s = SynchronizePending(); !s.ok()) return s;
  absl::StatusOr<std::size_t> released = ReleaseCached(0);
  if (!released.ok()) return released.status();
  // Blocks of released pools that the wait freed.
  if (absl::Status s = FlushPoolWork(); !s.ok()) return s;
  DebugCheck();
  return absl::OkStatus();
}

absl::Status DeviceAllocator::SetMemoryLimit(std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  memory_limit_ = bytes;
  return absl::OkStatus();
}

absl::Status DeviceAllocator::SetMemoryFraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory fraction ", fraction, " is not in (0, 1]"));
  }
  absl::StatusOr<DeviceMemoryInfo> info = backend_->MemoryInfo();
  if (!info.ok()) return info.status();
  absl::MutexLock lock(&mu_);
  memory_limit_ =
      static_cast<std::size_t>(fraction * static_cast<double>(info->total_bytes));
  return absl::OkStatus();
}

void DeviceAllocator::SetTraceRecorder(TraceRecorder* recorder) {
  absl::MutexLock lock(&mu_);
  recorder_ = recorder;
}

std::size_t DeviceAllocator::memory_limit() const {
  absl::MutexLock lock(&mu_);
  return memory_limit_;
}

bool DeviceAllocator::WithinLimit(std::size_t extra) const {
  return memory_limit_ == 0 || reserved() + extra <= memory_limit_;
}

// ---------------------------------------------------------------------------
// Private pools
// ---------------------------------------------------------------------------

PrivatePool* DeviceAllocator::RouteFor(StreamId stream) const {
  for (const Route& route : routes_) {
    if (route.filter(stream)) return route.owner;
  }
  return nullptr;
}

PrivatePool* DeviceAllocator::FindPool(PoolId pool) const {
  auto it = pools_.find(pool);
  return it == pools_.end() ? nullptr : it->second.get();
}

PrivatePool* DeviceAllocator::CreateOrIncrefLocked(PoolId pool) {
  std::unique_ptr<PrivatePool>& slot = pools_[pool];
  if (slot == nullptr) slot = std::make_unique<PrivatePool>(pool);
  // A pool revived from 0 keeps what it still owns and is live again.
  ++slot->use_count;
  return slot.get();
}

absl::Status DeviceAllocator::CreateOrIncrefPool(PoolId pool) {
  if (pool == 0) {
    return absl::InvalidArgumentError("pool 0 is the default pool, not a private pool");
  }
  absl::MutexLock lock(&mu_);
  CreateOrIncrefLocked(pool);
  DebugCheck();
  return absl::OkStatus();
}

absl::Status DeviceAllocator::BeginAllocateToPool(PoolId pool,
                                                  std::function<bool(StreamId)> filter) {
  if (pool == 0) {
    return absl::InvalidArgumentError(
        "cannot allocate to pool 0: it is the default pool, not a private pool");
  }
  if (!filter) return absl::InvalidArgumentError("BeginAllocateToPool: the filter is empty");
  absl::MutexLock lock(&mu_);
  for (const Route& route : routes_) {
    if (route.id == pool) {
      return absl::FailedPreconditionError(
          absl::StrCat("pool ", pool, " is already being allocated to"));
    }
  }
  PrivatePool* owner = CreateOrIncrefLocked(pool);
  routes_.push_back(Route{pool, owner, std::move(filter)});
  UpdatePoolWork();
  DebugCheck();
  return absl::OkStatus();
}

absl::Status DeviceAllocator::EndAllocateToPool(PoolId pool) {
  absl::MutexLock lock(&mu_);
  auto it = std::find_if(routes_.begin(), routes_.end(),
                         [pool](const Route& r) { return r.id == pool; });
  if (it == routes_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool ", pool, " is not being allocated to"));
  }
  routes_.erase(it);
  // Deferred work waits for the next Allocate / Free: PyTorch ends the
  // routing before it ends the stream capture.
  UpdatePoolWork();
  DebugCheck();
  return absl::OkStatus();
}

absl::Status DeviceAllocator::ReleasePool(PoolId pool) {
  if (pool == 0) {
    return absl::InvalidArgumentError("pool 0 is the default pool: it cannot be released");
  }
  absl::MutexLock lock(&mu_);
  PrivatePool* owner = FindPool(pool);
  if (owner == nullptr) return absl::NotFoundError(absl::StrCat("unknown pool ", pool));
  if (owner->use_count == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool ", pool, " is already released (use count 0)"));
  }
  if (owner->use_count == 1 &&
      std::any_of(routes_.begin(), routes_.end(), [pool](const Route& r) { return r.id == pool; })) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pool ", pool, " is being allocated to: end that (EndAllocateToPool) before its last "
        "release"));
  }
  if (--owner->use_count == 0) {
    release_owed_ = true;
    UpdatePoolWork();
    // During a capture the memory waits for the next moment none is underway.
    if (!capturing()) (void)FlushPoolWork();
    ErasePoolsWithoutMemory();
  }
  DebugCheck();
  return absl::OkStatus();
}

absl::StatusOr<int> DeviceAllocator::PoolUseCount(PoolId pool) const {
  absl::MutexLock lock(&mu_);
  const PrivatePool* owner = FindPool(pool);
  if (owner == nullptr) return absl::NotFoundError(absl::StrCat("unknown pool ", pool));
  return owner->use_count;
}

std::vector<LiveBlock> DeviceAllocator::PoolLiveBlocks(PoolId pool) const {
  absl::MutexLock lock(&mu_);
  std::vector<LiveBlock> live;
  if (pool != 0 && FindPool(pool) == nullptr) return live;
  for (const auto& [base, segment] : segments_) {
    if (segment->pool_id() != pool) continue;
    for (const Block* b = segment->head; b != nullptr; b = b->next) {
      if (b->state == BlockState::kAllocated) {
        live.push_back(LiveBlock{b->ptr, b->size, b->requested, b->stream});
      }
    }
  }
  return live;
}

absl::StatusOr<DevicePtr> DeviceAllocator::AllocateAt(PoolId pool, DevicePtr ptr,
                                                      std::size_t size, std::size_t requested,
                                                      StreamId stream) {
  const std::string what = absl::StrCat("AllocateAt(pool ", pool, ", ", Hex(ptr), ", ", size,
                                        " bytes)");
  if (size == 0 || ptr % kMinBlockSize != 0 || size % kMinBlockSize != 0 || requested > size ||
      ptr + size < ptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the range must be non-empty and 512-byte aligned, and requested (",
        requested, ") at most its size"));
  }
  absl::MutexLock lock(&mu_);
  PrivatePool* owner = nullptr;
  if (pool != 0) {
    owner = FindPool(pool);
    if (owner == nullptr) return absl::NotFoundError(absl::StrCat(what, ": unknown pool"));
  }
  Block* block = nullptr;
  auto it = segments_.upper_bound(ptr);
  if (it != segments_.begin()) {
    --it;
    Segment* segment = it->second.get();
    if (ptr < segment->end() && segment->owner == owner) {
      for (Block* b = segment->head; b != nullptr; b = b->next) {
        if (ptr >= b->ptr && ptr < b->end()) {
          block = b;
          break;
        }
      }
    }
  }
  if (block == nullptr || block->state != BlockState::kFree || ptr + size > block->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the range is not wholly inside one free block of the pool"));
  }
  if (block->stream != stream) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the free block is on stream ",
                                                   Hex(block->stream), ", not ", Hex(stream)));
  }
  // On failure what the store made usable so far stays cached and no block
  // changed.
  if (absl::Status s = store_->Prepare(Locked(), *block->segment, ptr, size); !s.ok()) {
    return s;
  }
  if (ptr > block->ptr) block = SplitFreeAt(block, ptr);
  if (ptr + size < block->end()) SplitFreeAt(block, ptr + size);
  AccountInactive(block, -1);
  IndexOf(block).Erase(block);
  MarkAllocated(block, requested);
  if (recorder_ != nullptr) recorder_->OnAllocate(ptr, requested, stream);
  DebugCheck();
  return ptr;
}

absl::Status DeviceAllocator::EmptyCachePool(PoolId pool) {
  absl::MutexLock lock(&mu_);
  PrivatePool* owner = nullptr;
  if (pool != 0) {
    owner = FindPool(pool);
    if (owner == nullptr) return absl::NotFoundError(absl::StrCat("unknown pool ", pool));
  }
  if (capturing()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "empty_cache of pool ", pool, " is not permitted while allocations are routed to a "
        "private pool (a stream capture may be underway: it would synchronize)"));
  }
  if (absl::Status s = FlushPoolWork(); !s.ok()) return s;
  // A live private pool keeps its memory: a captured graph replays into it.
  if (owner != nullptr && owner->use_count > 0) return absl::OkStatus();
  if (absl::Status s = SynchronizePending(); !s.ok()) return s;
  if (owner == nullptr) {
    absl::StatusOr<std::size_t> released = ReleaseCached(0);
    if (!released.ok()) return released.status();
  }
  // A released pool's memory goes in the flush (it is owed once any of its
  // blocks became free).
  if (absl::Status s = FlushPoolWork(); !s.ok()) return s;
  DebugCheck();
  return absl::OkStatus();
}

absl::Status DeviceAllocator::FlushPoolWork() {
  absl::Status status;
  while (!deferred_.empty()) {
    Block* block = deferred_.back();
    absl::InlinedVector<EventHandle, 2> events;
    for (StreamId s : block->stream_uses) {
      absl::StatusOr<EventHandle> event = backend_->RecordEvent(s);
      if (!event.ok()) {
        status = event.status();
        break;
      }
      events.push_back(*event);
    }
    if (!status.ok()) {
      for (EventHandle e : events) backend_->DestroyEvent(e);
      break;
    }
    deferred_.pop_back();
    block->pending_events = static_cast<int>(events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      pending_[block->stream_uses[i]].push_back(PendingEvent{events[i], block});
      ++num_pending_;
    }
  }
  if (release_owed_) {
    bool all = true;
    for (auto& [id, pool] : pools_) {
      if (pool->use_count > 0) continue;
      absl::StatusOr<std::size_t> released = ReleaseCached(0, pool.get());
      if (!released.ok()) {
        status.Update(released.status());
        all = false;
      }
    }
    if (all) release_owed_ = false;
    ErasePoolsWithoutMemory();
  }
  UpdatePoolWork();
  return status;
}

void DeviceAllocator::ErasePoolsWithoutMemory() {
  for (auto it = pools_.begin(); it != pools_.end();) {
    if (it->second->use_count == 0 && it->second->segments == 0) {
      pools_.erase(it++);
    } else {
      ++it;
    }
  }
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

MemoryStats DeviceAllocator::GetStats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void DeviceAllocator::ResetPeakStats() {
  absl::MutexLock lock(&mu_);
  stats_.ResetPeaks();
}

void DeviceAllocator::ResetAccumulatedStats() {
  absl::MutexLock lock(&mu_);
  stats_.ResetAccumulated();
}

FragmentationNow DeviceAllocator::Fragmentation() const {
  absl::MutexLock lock(&mu_);
  return FragmentationLocked();
}

FragmentationNow DeviceAllocator::FragmentationLocked() const {
  FragmentationNow f;
  f.free_cached_bytes = static_cast<std::uint64_t>(stats_.reserved_bytes[kStatAll].current -
                                                   stats_.active_bytes[kStatAll].current);
  for (const BlockPool* pool : {&small_pool_, &large_pool_}) {
    for (const Block* b : *pool) {
      // Only the memory under a hole counts (a growable hole is partly unmapped).
      const std::uint64_t usable = store_->HeldBytesIn(Locked(), *b->segment, b->ptr, b->end());
      f.largest_free_block = std::max(f.largest_free_block, usable);
    }
  }
  if (f.free_cached_bytes > 0) {
    f.ratio = static_cast<double>(f.free_cached_bytes - std::min(f.free_cached_bytes,
                                                                 f.largest_free_block)) /
              static_cast<double>(f.free_cached_bytes);
  }
  return f;
}

Snapshot DeviceAllocator::TakeSnapshot() const {
  absl::MutexLock lock(&mu_);
  Snapshot snap;
  snap.device = backend_->device();
  snap.stats = stats_;
  snap.fragmentation = FragmentationLocked();
  for (const auto& [base, segment] : segments_) {
    SegmentInfo info;
    info.address = segment->base;
    info.total_size = segment->size;
    info.stream = segment->stream;
    info.small_pool = segment->pool == PoolKind::kSmall;
    info.expandable = segment->expandable;
    info.pool_id = segment->pool_id();
    store_->Describe(Locked(), *segment, &info);
    for (const Block* b = segment->head; b != nullptr; b = b->next) {
      BlockInfo bi;
      bi.address = b->ptr;
      bi.size = b->size;
      bi.requested_size = b->requested;
      switch (b->state) {
        case BlockState::kAllocated:
          bi.status = BlockStatus::kActiveAllocated;
          info.allocated_size += b->size;
          info.active_size += b->size;
          info.requested_size += b->requested;
          break;
        case BlockState::kPending:
          bi.status = BlockStatus::kActivePendingFree;
          info.active_size += b->size;
          break;
        case BlockState::kFree:
          bi.status = BlockStatus::kInactive;
          break;
      }
      info.blocks.push_back(bi);
    }
    snap.segments.push_back(std::move(info));
  }
  return snap;
}

std::string DeviceAllocator::OutOfMemoryReport(std::size_t size, std::size_t rounded,
                                               StreamId stream,
                                               const absl::Status& cause) const {
  FragmentationNow f = FragmentationLocked();
  std::string device_free = "unknown";
  if (absl::StatusOr<DeviceMemoryInfo> info = backend_->MemoryInfo(); info.ok()) {
    device_free = absl::StrCat(FormatBytes(info->free_bytes), " of ",
                               FormatBytes(info->total_bytes));
  }
  return absl::StrFormat(
      "CUDA out of memory (ccalloc): tried to allocate %s (%d bytes, rounded to %d) on "
      "device %d, stream %s. Reserved %s, allocated %s, free in cache %s, largest free "
      "block %s, fragmentation %.1f%%; memory limit %s; device free %s. Cause: %s",
      FormatBytes(size), size, rounded, backend_->device(), Hex(stream),
      FormatBytes(reserved()),
      FormatBytes(static_cast<std::uint64_t>(stats_.allocated_bytes[kStatAll].current)),
      FormatBytes(f.free_cached_bytes), FormatBytes(f.largest_free_block), 100.0 * f.ratio,
      memory_limit_ == 0 ? std::string("none") : FormatBytes(memory_limit_), device_free,
      cause.message());
}

std::string DeviceAllocator::DescribeBadPointer(DevicePtr ptr, bool for_free) const {
  // Free keeps its familiar wording ("double free"); record_stream says what
  // it was given without suggesting a free happened.
  const std::string what = for_free ? absl::StrCat("free of ", Hex(ptr))
                                    : absl::StrCat("record_stream on ", Hex(ptr));
  auto it = segments_.upper_bound(ptr);
  if (it != segments_.begin()) {
    --it;
    const Segment& segment = *it->second;
    if (ptr < segment.end()) {
      for (const Block* b = segment.head; b != nullptr; b = b->next) {
        if (ptr < b->ptr || ptr >= b->end()) continue;
        if (b->ptr == ptr && b->state == BlockState::kPending) {
          return for_free ? absl::StrCat("double free of ", Hex(ptr),
                                         ": the block is already freed (waiting for other "
                                         "streams)")
                          : absl::StrCat(what, ": the block is already freed");
        }
        if (b->state != BlockState::kAllocated) {
          return for_free ? absl::StrCat("double free of ", Hex(ptr),
                                         ": the address lies in free cached memory")
                          : absl::StrCat(what, ": the address lies in free cached memory "
                                               "(the block was freed)");
        }
        return absl::StrCat(what, ": an interior pointer of the block at ", Hex(b->ptr), " (",
                            b->size, " bytes); pass the block's start");
      }
    }
  }
  return absl::StrCat(what, ": not allocated by this allocator (device ", backend_->device(),
                      ")");
}

// ---------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------

bool DeviceAllocator::Validate(std::string* why) const {
  absl::MutexLock lock(&mu_);
  return ValidateLocked(why);
}

void DeviceAllocator::DebugCheck() const {
#if CCALLOC_DEBUG_CHECKS
  std::string why;
  if (!ValidateLocked(&why)) {
    std::fprintf(stderr, "ccalloc: invariant broken: %s\n", why.c_str());
    std::abort();
  }
#endif
}

bool DeviceAllocator::ValidateLocked(std::string* why) const {
  auto fail = [why](std::string message) {
    if (why != nullptr) *why = std::move(message);
    return false;
  };
  std::int64_t allocation[3] = {}, allocated_bytes[3] = {}, active[3] = {},
               active_bytes[3] = {}, reserved[3] = {}, segments[3] = {},
               inactive[3] = {}, inactive_bytes[3] = {}, requested[3] = {};
  std::size_t free_blocks = 0;
  std::size_t allocated_blocks = 0;
  std::size_t pending_refs = 0;
  std::size_t deferred_blocks = 0;
  absl::flat_hash_map<const PrivatePool*, std::size_t> pool_segments;
  for (const auto& [base, segment] : segments_) {
    const int p = PoolIndex(segment->pool);
    segments[p] += 1;
    const PrivatePool* owner = segment->owner;
    if (owner != nullptr) {
      if (FindPool(owner->id) != owner) {
        return fail(absl::StrCat("segment ", Hex(base), ": its pool ", owner->id,
                                 " is not a known pool"));
      }
      ++pool_segments[owner];
    }
    if (segment->head == nullptr || segment->head->prev != nullptr ||
        segment->head->ptr != segment->base) {
      return fail(absl::StrCat("segment ", Hex(base), ": bad head"));
    }
    DevicePtr expect = segment->base;
    const Block* prev = nullptr;
    for (const Block* b = segment->head; b != nullptr; prev = b, b = b->next) {
      if (b->segment != segment.get() || b->prev != prev || b->ptr != expect ||
          b->size == 0 || b->pool != segment->pool || b->stream != segment->stream) {
        return fail(absl::StrCat("segment ", Hex(base), ": block ", Hex(b->ptr),
                                 " does not tile the segment"));
      }
      expect = b->end();
      const auto size = static_cast<std::int64_t>(b->size);
      switch (b->state) {
        case BlockState::kFree: {
          ++free_blocks;
          if (prev != nullptr && prev->state == BlockState::kFree) {
            return fail(absl::StrCat("free blocks ", Hex(prev->ptr), " and ", Hex(b->ptr),
                                     " are not coalesced"));
          }
          const BlockPool& pool = owner != nullptr             ? owner->Of(b->pool)
                                  : b->pool == PoolKind::kSmall ? small_pool_
                                                                : large_pool_;
          if (!pool.Contains(const_cast<Block*>(b))) {
            return fail(absl::StrCat("free block ", Hex(b->ptr),
                                     " is not indexed in the pool of its segment (",
                                     segment->pool_id(), ")"));
          }
          if (b->is_split() && !segment->expandable) {
            inactive[p] += 1;
            inactive_bytes[p] += size;
          }
          break;
        }
        case BlockState::kAllocated: {
          ++allocated_blocks;
          auto it = allocated_.find(b->ptr);
          if (it == allocated_.end() || it->second != b) {
            return fail(absl::StrCat("allocated block ", Hex(b->ptr), " is not in the map"));
          }
          allocation[p] += 1;
          allocated_bytes[p] += size;
          active[p] += 1;
          active_bytes[p] += size;
          requested[p] += static_cast<std::int64_t>(b->requested);
          break;
        }
        case BlockState::kPending:
          // No events yet: freed during a capture, waiting to record them.
          if (b->pending_events == 0 &&
              std::find(deferred_.begin(), deferred_.end(), b) != deferred_.end()) {
            ++deferred_blocks;
          } else if (b->pending_events <= 0) {
            return fail(absl::StrCat("pending block ", Hex(b->ptr), " has no events"));
          }
          pending_refs += static_cast<std::size_t>(b->pending_events);
          active[p] += 1;
          active_bytes[p] += size;
          break;
      }
    }
    if (expect != segment->end()) {
      return fail(absl::StrCat("segment ", Hex(base), ": blocks do not reach its end"));
    }
    if (segment->expandable != growable_) {
      return fail(absl::StrCat("segment ", Hex(base), ": not of the allocator's kind"));
    }
    // The memory under the segment (blocks in use on usable memory, page
    // table) is the store's to check.
    std::string store_why;
    if (!store_->ValidateSegment(Locked(), *segment, &store_why)) return fail(store_why);
    reserved[p] += static_cast<std::int64_t>(store_->HeldBytes(Locked(), *segment));
  }
  std::size_t indexed = small_pool_.size() + large_pool_.size();
  std::string pool_why;
  for (const BlockPool* index : {&small_pool_, &large_pool_}) {
    for (const Block* b : *index) {
      if (b->segment->owner != nullptr) {
        return fail(absl::StrCat("free block ", Hex(b->ptr), " of private pool ",
                                 b->segment->pool_id(), " is in the default pool's index"));
      }
    }
  }
  for (const auto& [id, pool] : pools_) {
    if (pool->id != id || pool->use_count < 0) {
      return fail(absl::StrCat("pool ", id, ": bad record"));
    }
    auto counted = pool_segments.find(pool.get());
    const std::size_t owned = counted == pool_segments.end() ? 0 : counted->second;
    if (pool->segments != owned) {
      return fail(absl::StrCat("pool ", id, " counts ", pool->segments, " segments but owns ",
                               owned));
    }
    if (pool->use_count == 0 && owned == 0) {
      return fail(absl::StrCat("pool ", id, " is released and owns nothing but is kept"));
    }
    for (const BlockPool* index : {&pool->small, &pool->large}) {
      if (!index->Validate(&pool_why)) return fail(absl::StrCat("pool ", id, ": ", pool_why));
      for (const Block* b : *index) {
        if (b->segment->owner != pool.get()) {
          return fail(absl::StrCat("free block ", Hex(b->ptr), " of pool ",
                                   b->segment->pool_id(), " is in the index of pool ", id));
        }
      }
      indexed += index->size();
    }
  }
  if (free_blocks != indexed) return fail("the pools index blocks that are not free");
  if (deferred_blocks != deferred_.size()) {
    return fail("the deferred-event list disagrees with the pending blocks");
  }
  for (const Route& route : routes_) {
    if (FindPool(route.id) != route.owner || route.owner->use_count < 1) {
      return fail(absl::StrCat("allocations are routed to pool ", route.id,
                               " which is not live"));
    }
  }
  if (pool_work_ != (!routes_.empty() || !deferred_.empty() || release_owed_)) {
    return fail("the pool-work flag is stale");
  }
  if (allocated_blocks != allocated_.size()) return fail("the allocated map has strays");
  if (std::string store_why; !store_->Validate(Locked(), segments_.size(), &store_why)) {
    return fail(store_why);
  }
  std::size_t queued = 0;
  for (const auto& [stream, queue] : pending_) queued += queue.size();
  if (queued != num_pending_ || queued != pending_refs) {
    return fail("pending event queues disagree with the blocks");
  }
  if (!small_pool_.Validate(&pool_why) || !large_pool_.Validate(&pool_why)) {
    return fail(pool_why);
  }
  if (!stats_.Validate()) return fail("counters are inconsistent");
  struct Check {
    const char* name;
    const StatArray& stat;
    const std::int64_t* expect;
  };
  for (const Check& c : {Check{"allocation", stats_.allocation, allocation},
                         Check{"allocated_bytes", stats_.allocated_bytes, allocated_bytes},
                         Check{"active", stats_.active, active},
                         Check{"active_bytes", stats_.active_bytes, active_bytes},
                         Check{"reserved_bytes", stats_.reserved_bytes, reserved},
                         Check{"segment", stats_.segment, segments},
                         Check{"inactive_split", stats_.inactive_split, inactive},
                         Check{"inactive_split_bytes", stats_.inactive_split_bytes,
                               inactive_bytes},
                         Check{"requested_bytes", stats_.requested_bytes, requested}}) {
    for (int p = 1; p <= 2; ++p) {
      if (c.stat[p].current != c.expect[p]) {
        return fail(absl::StrCat("counter ", c.name, "[", p, "] is ", c.stat[p].current,
                                 " but the blocks say ", c.expect[p]));
      }
    }
  }
  return true;
}

}  // namespace ccalloc
