// device_allocator_report.cc — what the cache says about itself: counters,
// fragmentation, the snapshot, the out-of-memory report, why a pointer is
// bad, and the invariants Validate() checks (the segment store checks its
// own through SegmentStore::ValidateSegment and Validate).
//
// Part of the cache (see device_allocator.h); none of it is on the
// allocate/free path except under debug checks.
#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "allocator/cache/device_allocator.h"

namespace ccalloc {
namespace {

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

int PoolIndex(PoolKind pool) { return pool == PoolKind::kSmall ? 1 : 2; }

}  // namespace

// ---------------------------------------------------------------------------
// Statistics and reports
// ---------------------------------------------------------------------------

MemoryStats DeviceAllocator::GetStats() const {
  absl::MutexLock lock(&mu_);
  MemoryStats out = stats_;
  const DriverCallTotals now = backend_->driver_calls();
  out.driver_calls = now.calls - driver_base_.calls;
  out.driver_ns = now.ns - driver_base_.ns;
  out.background_driver_calls = now.background_calls - driver_base_.background_calls;
  out.background_driver_ns = now.background_ns - driver_base_.background_ns;
  return out;
}

void DeviceAllocator::ResetPeakStats() {
  FlushedLock lock(this);
  stats_.ResetPeaks();
  tags_.ResetPeaks();
}

std::vector<TagUsage> DeviceAllocator::TagStats() const {
  absl::MutexLock lock(&mu_);
  return tags_.Usage();
}

void DeviceAllocator::BlocksHolding(const DevicePtr* ptrs, std::size_t n, DevicePtr* starts,
                                    std::size_t* sizes, TagId* tags) const {
  FlushedLock lock(this);
  for (std::size_t i = 0; i < n; ++i) {
    const Block* b = nullptr;
    // A tensor's storage starts its block, so the hash lookup nearly always
    // answers; views into a block take the segment walk.
    if (auto it = allocated_.find(ptrs[i]); it != allocated_.end()) {
      b = it->second;
    } else if (const Block* c = BlockCovering(ptrs[i]); c != nullptr && c->state == BlockState::kAllocated) {
      b = c;
    }
    starts[i] = b == nullptr ? 0 : b->ptr;
    sizes[i] = b == nullptr ? 0 : b->size;
    tags[i] = b == nullptr ? kNoTag : b->tag;
  }
}

void DeviceAllocator::ResetAccumulatedStats() {
  FlushedLock lock(this);
  stats_.ResetAccumulated();
  driver_base_ = backend_->driver_calls();
}

FragmentationNow DeviceAllocator::Fragmentation() const {
  FlushedLock lock(this);
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
  FlushedLock lock(this);
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
    info.paused = segment->owner != nullptr && segment->owner->paused;
    store_->Describe(Locked(), *segment, &info);
    for (const Block* b = segment->head; b != nullptr; b = b->next) {
      BlockInfo bi;
      bi.address = b->ptr;
      bi.size = b->size;
      bi.requested_size = b->requested;
      bi.tag = b->tag;
      bi.stream = b->borrowed ? b->borrower : b->stream;
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
        case BlockState::kHot:  // (TakeSnapshot returned it first: FlushHot)
          bi.status = BlockStatus::kInactive;
          break;
      }
      info.blocks.push_back(bi);
    }
    snap.segments.push_back(std::move(info));
  }
  return snap;
}

std::string DeviceAllocator::RefuseAsOutOfMemory(std::size_t bytes) {
  absl::MutexLock lock(&mu_);
  ++stats_.num_ooms;
  return PytorchOutOfMemoryText(bytes, backend_->MemoryInfo());
}

std::string DeviceAllocator::PytorchOutOfMemoryText(
    std::size_t bytes, const absl::StatusOr<DeviceMemoryInfo>& info) const {
  const std::uint64_t total = info.ok() ? info->total_bytes : 0;
  const std::uint64_t free = info.ok() ? info->free_bytes : 0;
  const auto allocated = static_cast<std::uint64_t>(stats_.allocated_bytes[kStatAll].current);
  const std::uint64_t held = reserved();
  // PyTorch names the cap a memory fraction sets ("N allowed; "); ccalloc's
  // memory limit is that cap.
  const std::uint64_t cap =
      memory_fraction_ >= 0 ? BytesForFraction(memory_fraction_, total) : memory_limit_;
  const std::string allowed =
      memory_limit_ > 0 ? absl::StrCat(FormatSizeAsPytorch(cap), " allowed; ") : "";
  return absl::StrCat(
      "CUDA out of memory. Tried to allocate ", FormatSizeAsPytorch(bytes), ". GPU ",
      backend_->device(), " has a total capacity of ", FormatSizeAsPytorch(total), " of which ",
      FormatSizeAsPytorch(free), " is free. ", allowed, "Of the allocated memory ",
      FormatSizeAsPytorch(allocated), " is allocated by PyTorch, and ",
      FormatSizeAsPytorch(held > allocated ? held - allocated : 0),
      " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
      "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
      "documentation for Memory Management  "
      "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
}

std::string DeviceAllocator::OutOfMemoryReport(std::size_t size, std::size_t rounded,
                                               StreamId stream,
                                               const absl::Status& cause) const {
  FragmentationNow f = FragmentationLocked();
  std::string device_free = "unknown";
  // Read once: PyTorch's part of the report and ccalloc's say the same.
  const absl::StatusOr<DeviceMemoryInfo> info = backend_->MemoryInfo();
  if (info.ok()) {
    device_free = absl::StrCat(FormatBytes(info->free_bytes), " of ",
                               FormatBytes(info->total_bytes));
  }
  const auto allocated = static_cast<std::uint64_t>(stats_.allocated_bytes[kStatAll].current);
  // Why, in one word a user can act on: the cap they set, memory that is
  // free but in pieces too small, or a device that is simply full.
  std::string verdict;
  if (memory_limit_ > 0 && reserved() + rounded > memory_limit_ &&
      allocated + rounded <= memory_limit_) {
    verdict = absl::StrCat("fragmentation under the memory limit: ", FormatBytes(f.free_cached_bytes),
                           " are free in the cache but no free block holds the request, and "
                           "the limit (", FormatBytes(memory_limit_), ") forbids more");
  } else if (memory_limit_ > 0 && allocated + rounded > memory_limit_) {
    verdict = absl::StrCat("the memory limit: live blocks (", FormatBytes(allocated),
                           ") plus the request exceed it (", FormatBytes(memory_limit_), ")");
  } else if (f.free_cached_bytes >= rounded) {
    verdict = absl::StrCat("fragmentation: ", FormatBytes(f.free_cached_bytes),
                           " are free in the cache but the largest free block is ",
                           FormatBytes(f.largest_free_block), " and the device has no more");
  } else {
    verdict = "exhaustion: live blocks fill the device";
  }
  // What holds the memory, by tag (the allocating threads' tags).
  std::vector<TagUsage> usage = tags_.Usage();
  std::sort(usage.begin(), usage.end(), [](const TagUsage& a, const TagUsage& b) {
    return a.current_bytes > b.current_bytes;
  });
  std::string holders;
  constexpr std::size_t kTopHolders = 5;
  for (std::size_t i = 0; i < usage.size() && i < kTopHolders; ++i) {
    if (usage[i].current_bytes == 0) break;
    const std::string name = TagName(usage[i].tag);
    absl::StrAppend(&holders, holders.empty() ? "" : ", ",
                    name.empty() ? std::string("(untagged)") : absl::StrCat("'", name, "'"), " ",
                    FormatBytes(static_cast<std::uint64_t>(usage[i].current_bytes)), " in ",
                    usage[i].blocks, usage[i].blocks == 1 ? " block" : " blocks");
  }
  const std::string during = TagName(CurrentTag());
  return absl::StrFormat(
      "%s ccalloc: tried to allocate %s (%d bytes, rounded to %d) on "
      "device %d, stream %s%s. Why: %s. Reserved %s, allocated %s, free in cache %s, largest "
      "free block %s, fragmentation %.1f%%; memory limit %s; device free %s. Held by tag: %s. "
      "Cause: %s",
      PytorchOutOfMemoryText(rounded, info), FormatBytes(size), size, rounded,
      backend_->device(), Hex(stream),
      during.empty() ? std::string() : absl::StrCat(", during tag '", during, "'"), verdict,
      FormatBytes(reserved()), FormatBytes(allocated), FormatBytes(f.free_cached_bytes),
      FormatBytes(f.largest_free_block), 100.0 * f.ratio,
      memory_limit_ == 0 ? std::string("none") : FormatBytes(memory_limit_), device_free,
      holders.empty() ? std::string("nothing live") : holders, cause.message());
}

const Block* DeviceAllocator::BlockCovering(DevicePtr ptr) const {
  auto it = segments_.upper_bound(ptr);
  if (it == segments_.begin()) return nullptr;
  const Segment& segment = *std::prev(it)->second;
  if (ptr >= segment.end()) return nullptr;
  for (const Block* b = segment.head; b != nullptr; b = b->next) {
    if (ptr >= b->ptr && ptr < b->end()) return b;
  }
  return nullptr;
}

std::string DeviceAllocator::DescribeBadPointer(DevicePtr ptr, bool for_free) const {
  // Free keeps its familiar wording ("double free"); record_stream says what
  // it was given without suggesting a free happened.
  const std::string what = for_free ? absl::StrCat("free of ", Hex(ptr))
                                    : absl::StrCat("record_stream on ", Hex(ptr));
  if (const Block* b = BlockCovering(ptr)) {
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
  std::size_t hot_blocks = 0;
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
      // A borrowed block (cross_stream_reuse) is allocated memory of the
      // default pool's growable segment of another stream than its user's.
      if (b->borrowed && (b->state != BlockState::kAllocated || !segment->expandable ||
                          owner != nullptr || b->borrower == b->stream)) {
        return fail(absl::StrCat("block ", Hex(b->ptr), " is borrowed but not an allocated "
                                 "block of another stream's default growable segment"));
      }
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
          if (!pool.Contains(b)) {
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
        case BlockState::kHot:
          // Freed and held aside (HoldAside): counted as free, its
          // pages still as used (the store's check counts every block not
          // free), and only ever the one block hot_ names.
          if (b != hot_ || !segment->expandable || owner != nullptr || !b->stream_uses.empty()) {
            return fail(absl::StrCat("block ", Hex(b->ptr), " is held aside but is not the "
                                     "hot block of a default growable segment"));
          }
          ++hot_blocks;
          break;
        case BlockState::kPending:
          // No events yet: freed during a capture, waiting to record them.
          if (b->pending_events == 0 &&
              std::any_of(deferred_.begin(), deferred_.end(),
                          [b](const DeferredFree& d) { return d.block == b; })) {
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
  // Graph pools and regions alike: the segments they count, their indexes.
  auto check_pool = [&](PoolId id, const PrivatePool* pool) -> std::string {
    if (pool->id != id || pool->use_count < 0 || pool->region != ((id & kRegionPoolBit) != 0) ||
        (pool->region && pool->use_count != 1) || (pool->paused && !pool->region)) {
      return absl::StrCat("pool ", id, ": bad record");
    }
    auto counted = pool_segments.find(pool);
    const std::size_t owned = counted == pool_segments.end() ? 0 : counted->second;
    if (pool->segments != owned) {
      return absl::StrCat("pool ", id, " counts ", pool->segments, " segments but owns ", owned);
    }
    if (pool->use_count == 0 && owned == 0) {
      return absl::StrCat("pool ", id, " is released and owns nothing but is kept");
    }
    for (const BlockPool* index : {&pool->small, &pool->large}) {
      if (!index->Validate(&pool_why)) return absl::StrCat("pool ", id, ": ", pool_why);
      for (const Block* b : *index) {
        if (b->segment->owner != pool) {
          return absl::StrCat("free block ", Hex(b->ptr), " of pool ", b->segment->pool_id(),
                              " is in the index of pool ", id);
        }
      }
      indexed += index->size();
    }
    return "";
  };
  for (const auto& [id, pool] : pools_) {
    if (std::string problem = check_pool(id, pool.get()); !problem.empty()) return fail(problem);
  }
  std::int64_t paused = 0;
  std::int64_t backup = 0;
  std::int64_t backup_host = 0;
  for (const auto& [region, pool] : regions_) {
    if (std::string problem = check_pool(kRegionPoolBit | region, pool.get()); !problem.empty()) {
      return fail(problem);
    }
    if (!pool->paused && pool->paused_bytes != 0) {
      return fail(absl::StrCat("region ", region, " runs but counts paused bytes"));
    }
    paused += static_cast<std::int64_t>(pool->paused_bytes);
    // A backup exists only while paused; its runs are disjoint, by address,
    // inside the host buffer, and hold the allocated bytes counted.
    if (!pool->paused && (!pool->backup_runs.empty() || pool->backup_bytes != 0)) {
      return fail(absl::StrCat("region ", region, " runs but holds a backup"));
    }
    std::size_t held = 0;
    for (std::size_t i = 0; i < pool->backup_runs.size(); ++i) {
      const PrivatePool::BackupRun& run = pool->backup_runs[i];
      if ((i > 0 && pool->backup_runs[i - 1].ptr + pool->backup_runs[i - 1].bytes > run.ptr) ||
          run.offset != held || run.offset + run.bytes > pool->backup_capacity) {
        return fail(absl::StrCat("region ", region, "'s backup run ", i, " is out of place"));
      }
      held += run.bytes;
    }
    std::size_t live = 0;
    for (const auto& [base, segment] : segments_) {
      if (segment->owner != pool.get()) continue;
      for (const Block* b = segment->head; b != nullptr; b = b->next) {
        if (b->state == BlockState::kAllocated) live += BackedUpBytes(pool.get(), *b);
      }
    }
    if (pool->backup_bytes > held || (!pool->backup_runs.empty() && pool->backup_bytes != live)) {
      return fail(absl::StrCat("region ", region, " counts ", pool->backup_bytes,
                               " backed-up bytes; its runs hold ", held, ", its live blocks ",
                               live));
    }
    backup += static_cast<std::int64_t>(pool->backup_bytes);
    backup_host += static_cast<std::int64_t>(pool->backup_capacity);
  }
  if (paused != stats_.paused_bytes) {
    return fail(absl::StrCat("paused_bytes is ", stats_.paused_bytes, " but the regions gave back ",
                             paused));
  }
  if (backup != stats_.backup_bytes || backup_host != stats_.backup_host_bytes) {
    return fail(absl::StrCat("backup_bytes / backup_host_bytes are ", stats_.backup_bytes, " / ",
                             stats_.backup_host_bytes, " but the regions hold ", backup, " / ",
                             backup_host));
  }
  if (free_blocks != indexed) return fail("the pools index blocks that are not free");
  if (deferred_blocks != deferred_.size()) {
    return fail("the deferred-event list disagrees with the pending blocks");
  }
  // A position is kept only for a graph pool's block (only those can be
  // reused during a capture), and counted.
  std::size_t positioned = 0;
  for (const DeferredFree& d : deferred_) {
    if (d.after.nodes.empty()) continue;
    ++positioned;
    const PrivatePool* owner = d.block->segment->owner;
    if (owner == nullptr || owner->region) {
      return fail(absl::StrCat("deferred block ", Hex(d.block->ptr),
                               " has a capture position but is not a graph pool's"));
    }
  }
  if (positioned != positioned_) {
    return fail(absl::StrCat(positioned_, " deferred blocks are counted with a capture position, ",
                             positioned, " have one"));
  }
  if (hot_blocks != (hot_ != nullptr ? 1u : 0u)) {
    return fail("the held-aside block is not in a segment");
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
  if (std::string tags_why;
      !tags_.Validate(stats_.allocated_bytes[kStatAll].current, &tags_why)) {
    return fail(tags_why);
  }
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
