// device_allocator_pools.cc — private pools (CUDA graphs, PyTorch's
// beginAllocateToPool & co.): pool ids and use counts, the routing of a
// stream's allocations into a pool while a capture may be underway, the work
// a capture made wait (deferred events, the memory of released pools), the
// reuse of deferred blocks the capture's graph has proven free
// (graph_capture_record_stream_reuse), and restoring a pool's layout at
// given addresses (AllocateAt).
//
// Part of the cache (see device_allocator.h); kept in its own file so that
// device_allocator.cc reads as the allocate/free path.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"

namespace ccalloc {
namespace {

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

}  // namespace

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
  if ((pool & kRegionPoolBit) != 0) {
    auto it = regions_.find(RegionOfPool(pool));
    return it == regions_.end() ? nullptr : it->second.get();
  }
  auto it = pools_.find(pool);
  return it == pools_.end() ? nullptr : it->second.get();
}

namespace {
absl::Status RefuseRegionId(PoolId pool) {
  if ((pool & kRegionPoolBit) == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "pool ", pool, " has the top bit set: such ids name regions (Pause/Resume), not graph "
      "pools"));
}
}  // namespace

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
  if (absl::Status s = RefuseRegionId(pool); !s.ok()) return s;
  FlushedLock lock(this);
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
  if (absl::Status s = RefuseRegionId(pool); !s.ok()) return s;
  FlushedLock lock(this);
  for (const Route& route : routes_) {
    if (route.id == pool) {
      return absl::FailedPreconditionError(
          absl::StrCat("pool ", pool, " is already being allocated to"));
    }
  }
  // A capture may follow (PyTorch begins it right after): it refuses
  // unmapping, so unmaps the store deferred are done now, waiting if need
  // be, before the routing says a capture may be underway.
  if (routes_.empty()) {
    if (absl::Status s = store_->Quiesce(Locked()); !s.ok()) return s;
  }
  PrivatePool* owner = CreateOrIncrefLocked(pool);
  routes_.push_back(Route{pool, owner, std::move(filter)});
  UpdatePoolWork();
  DebugCheck();
  return absl::OkStatus();
}

absl::Status DeviceAllocator::EndAllocateToPool(PoolId pool) {
  FlushedLock lock(this);
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
  if (absl::Status s = RefuseRegionId(pool); !s.ok()) return s;
  FlushedLock lock(this);
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

absl::Status DeviceAllocator::SetPoolUseOnOom(PoolId pool, bool use_on_oom) {
  absl::MutexLock lock(&mu_);
  PrivatePool* owner = FindPool(pool);
  if (owner == nullptr) return absl::NotFoundError(absl::StrCat("unknown pool ", pool));
  if (owner->region) {
    return absl::InvalidArgumentError(
        absl::StrCat("pool ", pool, " is a region: its memory is never lent to other allocations"));
  }
  owner->use_on_oom = use_on_oom;
  return absl::OkStatus();
}

Block* DeviceAllocator::FromPoolsOnOom(std::size_t rounded, std::size_t requested,
                                       StreamId stream, PoolKind pool) {
  std::vector<PrivatePool*> lenders;
  for (auto& [id, p] : pools_) {
    // A released pool's memory is on its way back to the device (and a
    // deleted MemPool's must not be used: PyTorch's
    // test_deleted_mempool_not_used_on_oom).
    if (p->use_on_oom && p->use_count > 0 && !p->region && !p->paused) lenders.push_back(p.get());
  }
  std::sort(lenders.begin(), lenders.end(),
            [](const PrivatePool* a, const PrivatePool* b) { return a->id < b->id; });
  for (PrivatePool* lender : lenders) {
    Block* block = lender->Of(pool).BestFit(stream, rounded, policy_, growable_);
    if (block == nullptr) continue;
    // A live pool's pages stay mapped, but a growable block's edges may not
    // be: the store makes the bytes usable first (a failure leaves the
    // block free and indexed, and the next pool is asked).
    if (growable_ && block->segment->expandable &&
        !store_->Prepare(Locked(), *block->segment, *block, block->ptr, rounded).ok()) {
      continue;
    }
    return Carve(block, rounded, requested);
  }
  return nullptr;
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
  FlushedLock lock(this);
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
  ++prepare_epoch_;  // FreeCompleted polls each stream once per Prepare
  if (absl::Status s = store_->Prepare(Locked(), *block->segment, *block, ptr, size); !s.ok()) {
    return s;
  }
  CarveAt(block, ptr, size, requested);
  if (recorder_ != nullptr) recorder_->OnAllocate(ptr, requested, stream);
  DebugCheck();
  return ptr;
}

absl::Status DeviceAllocator::EmptyCachePool(PoolId pool) {
  FlushedLock lock(this);
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
    Block* block = deferred_.back().block;
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
    // (Its position, if any, is moot: the events order every use now.)
    if (!deferred_.back().after.nodes.empty()) --positioned_;
    deferred_.pop_back();
    block->pending_events = static_cast<int>(events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      pending_[block->stream_uses[i]].push_back(PendingEvent{events[i], block});
      ++num_pending_;
    }
  }
  if (release_owed_ && ReleasedPoolHasFreeMemory()) {
    // A graph's pool is written by the graph's replays, on whatever stream
    // replays it, and no event of its blocks' own streams covers that work:
    // a replay queued just before the graph was destroyed may still be
    // running. Its memory goes back only once the device has finished
    // (PyTorch gives such memory back only in empty_cache, after a device
    // synchronize); on growable segments an unmap under a running replay
    // is an illegal memory access (PyTorch's TestCuda, run as
    // test_cuda_expandable_segments.py, hit it). A failed synchronize
    // keeps the memory until the next try.
    if (absl::Status s = SynchronizeAndFreeEvents(); !s.ok()) {
      status.Update(s);
      UpdatePoolWork();
      return status;
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

// ---------------------------------------------------------------------------
// Reuse within a capture (graph_capture_record_stream_reuse)
// ---------------------------------------------------------------------------

CapturePosition DeviceAllocator::FreePosition(const Block& block) {
  // The union of the streams' dependency sets: every use of the block was
  // captured before one of these nodes (stream order), so once they all
  // precede a stream's next work, so does every use.
  CapturePosition position;
  bool first = true;
  auto add = [&](StreamId stream) {
    absl::StatusOr<CapturePosition> at = backend_->CapturePositionOf(stream);
    if (!at.ok()) return false;  // not captured (its work is outside the graph), or unknown
    if (!first && at->capture != position.capture) return false;
    first = false;
    position.capture = at->capture;
    for (CaptureNode node : at->nodes) {
      if (std::find(position.nodes.begin(), position.nodes.end(), node) == position.nodes.end()) {
        position.nodes.push_back(node);
      }
    }
    return true;
  };
  if (!add(block.stream)) return {};
  for (StreamId stream : block.stream_uses) {
    if (!add(stream)) return {};
  }
  // No captured work on any of the streams: nothing in the graph shows
  // where the uses end (PyTorch defers such a block too).
  if (position.nodes.empty()) return {};
  return position;
}

void DeviceAllocator::PromoteOrdered(StreamId stream, PrivatePool* owner) {
  // In free order.
  for (std::size_t i = 0; i < deferred_.size();) {
    const DeferredFree& d = deferred_[i];
    Block* block = d.block;
    // Only the stream's own blocks: each free block belongs to its stream's
    // index, and the order proven is this stream's.
    if (d.after.nodes.empty() || block->stream != stream || block->segment->owner != owner) {
      ++i;
      continue;
    }
    absl::StatusOr<bool> ordered = backend_->OrderedBefore(d.after, stream);
    // A driver error proves nothing: the blocks stay pending, and the next
    // allocation asks again.
    if (!ordered.ok()) break;
    if (!*ordered) {
      ++i;
      continue;
    }
    deferred_.erase(deferred_.begin() + static_cast<std::ptrdiff_t>(i));
    --positioned_;
    // As ProcessEvents frees a block whose events completed; the capture's
    // end no longer sees it.
    FreeBlock(block);
  }
  UpdatePoolWork();
}

bool DeviceAllocator::ReleasedPoolHasFreeMemory() const {
  if (capturing()) return false;  // ReleaseCached gives nothing back then
  for (const auto& [base, segment] : segments_) {
    const PrivatePool* owner = segment->owner;
    if (owner == nullptr || owner->use_count > 0 || owner->region) continue;
    // A classic segment goes back only whole; a growable one page by page.
    if (segment->wholly_free()) return true;
    if (!segment->expandable) continue;
    for (const Block* b = segment->head; b != nullptr; b = b->next) {
      if (b->state == BlockState::kFree) return true;
    }
  }
  return false;
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

}  // namespace ccalloc
