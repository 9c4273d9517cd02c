// device_allocator_regions.cc — sleep and wake: regions, Pause and Resume,
// and the backup of a paused region's contents in host memory.
//
// A region is a private pool held for the allocator's life (block_pool.h).
// Pause waits for the device (so the region's pending frees complete and no
// kernel touches its memory), optionally copies the allocated blocks to
// page-locked host memory, then has the segment store unmap and release
// every chunk; addresses stay. Resume maps memory again under the blocks
// still allocated and copies their bytes back. The copies are the driver's
// asynchronous ones on the backend's own stream, one per run of adjacent
// allocated blocks (split only at batch borders, below), so per-call costs
// are paid once per run and the link runs at its bandwidth.
//
// The backup is a pipeline, so that a pause costs the copy and little more:
// every copy is queued at once, with a copy fence after every 64 MiB; then,
// fence by fence, the chunks lying wholly below the bytes that fence covers
// (live or free: all their live bytes are in host memory) are unmapped and
// released while the later copies run. The unmaps after the last fence are
// the only ones not hidden.
//
// Failure rules: a failed backup leaves the region running with every live
// byte in place. Before the first fence passed nothing is unmapped; a copy
// failing later is undone: the chunks given back under live blocks are
// mapped again and the bytes the passed fences cover copied back (memory of
// free blocks may stay given back). Only if that undo fails too does the
// region stay paused, its backup holding what was copied and the chunks
// not given back still mapped under their blocks, so Resume restores it.
// An unmap failing after every copy passed leaves the region paused, as
// without backup. A failed resume, mapping or copying, leaves the region
// paused as before, backup included, so it can be retried.
//
// Part of the cache (see device_allocator.h).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"

namespace ccalloc {
namespace {
// Host buffers are rounded to this, so that a region whose live bytes grow a
// little between pauses still reuses its buffer.
constexpr std::size_t kHostRounding = std::size_t{2} << 20;
}  // namespace

PrivatePool* DeviceAllocator::RegionPool(RegionId region) {
  std::unique_ptr<PrivatePool>& slot = regions_[region];
  if (slot == nullptr) {
    slot = std::make_unique<PrivatePool>(kRegionPoolBit | region);
    slot->region = true;
    slot->use_count = 1;  // held for the allocator's life
  }
  return slot.get();
}

absl::StatusOr<PrivatePool*> DeviceAllocator::UsedRegion(RegionId region) {
  auto it = regions_.find(region);
  if (region == 0 || it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("region ", region, " was never allocated in"));
  }
  return it->second.get();
}

bool DeviceAllocator::IsPaused(RegionId region) const {
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(region);
  return it != regions_.end() && it->second->paused;
}

absl::Status DeviceAllocator::FreeBackupHost(PrivatePool* owner) {
  if (owner->backup_host == 0) return absl::OkStatus();
  if (absl::Status s = backend_->FreeHost(owner->backup_host, owner->backup_capacity); !s.ok()) {
    return s;
  }
  stats_.backup_host_bytes -= static_cast<std::int64_t>(owner->backup_capacity);
  owner->backup_host = 0;
  owner->backup_capacity = 0;
  return absl::OkStatus();
}

std::vector<DeviceAllocator::LiveRun> DeviceAllocator::LiveRuns(PrivatePool* owner,
                                                                std::size_t* total) {
  std::vector<LiveRun> runs;
  *total = 0;
  for (auto& [base, segment] : segments_) {
    if (segment->owner != owner) continue;
    for (const Block* b = segment->head; b != nullptr; b = b->next) {
      if (b->state != BlockState::kAllocated) continue;
      // Adjacent blocks of one segment merge whatever chunks they lie on;
      // never across segments (mapped apart).
      if (!runs.empty() && runs.back().segment == segment.get() &&
          runs.back().run.ptr + runs.back().run.bytes == b->ptr) {
        runs.back().run.bytes += b->size;
      } else {
        runs.push_back(LiveRun{segment.get(), PrivatePool::BackupRun{b->ptr, b->size, *total}});
      }
      *total += b->size;
    }
  }
  return runs;
}

absl::Status DeviceAllocator::ReserveHost(PrivatePool* owner, std::size_t total) {
  if (total <= owner->backup_capacity) return absl::OkStatus();
  // A buffer too small for this pause goes first: keeping both would
  // double the host memory held at the worst moment.
  if (absl::Status s = FreeBackupHost(owner); !s.ok()) return s;
  const std::size_t bytes = (total + kHostRounding - 1) / kHostRounding * kHostRounding;
  absl::StatusOr<HostPtr> host = backend_->AllocateHost(bytes);
  if (!host.ok()) {
    return absl::Status(host.status().code(),
                        absl::StrCat("backup of region ", RegionOfPool(owner->id), ": ",
                                     bytes, " bytes of page-locked host memory refused: ",
                                     host.status().message()));
  }
  owner->backup_host = *host;
  owner->backup_capacity = bytes;
  stats_.backup_host_bytes += static_cast<std::int64_t>(bytes);
  return absl::OkStatus();
}

absl::Status DeviceAllocator::BackUpAndRelease(PrivatePool* owner, absl::Status* release) {
  std::size_t total = 0;
  std::vector<LiveRun> runs = LiveRuns(owner, &total);
  if (absl::Status s = ReserveHost(owner, total); !s.ok()) return s;
  std::vector<Segment*> segments;
  for (auto& [base, segment] : segments_) {
    if (segment->owner == owner) segments.push_back(segment.get());
  }
  // Queue every copy, a fence after each batch. A batch ends inside a run
  // only where the run is longer than what the batch has left.
  struct Batch {
    CopyFence fence;
    Segment* segment;  // the last bytes covered lie in it ...
    DevicePtr end;     // ... below this address
    std::size_t safe;  // host bytes covered, from offset 0
  };
  std::vector<Batch> batches;
  // The copies are fenced every 64 MiB (it was the backup_batch_mb option),
  // and the chunks whose bytes a passed fence covers are given back while
  // the later copies run: 64 MiB is ~1.3 ms of copying at 50 GB/s, long
  // enough to hide a few unmaps, short enough that the unmaps after the
  // last fence are few.
  constexpr std::size_t kBatchBytes = std::size_t{64} << 20;
  std::size_t pending = 0;
  absl::Status status;
  auto fence = [&](Segment* segment, DevicePtr end, std::size_t safe) {
    absl::StatusOr<CopyFence> f = backend_->RecordCopyFence();
    if (!f.ok()) return f.status();
    batches.push_back(Batch{*f, segment, end, safe});
    pending = 0;
    return absl::OkStatus();
  };
  for (const LiveRun& r : runs) {
    for (std::size_t done = 0; done < r.run.bytes && status.ok();) {
      const std::size_t n = std::min(r.run.bytes - done, kBatchBytes - pending);
      status = backend_->CopyToHost(owner->backup_host + r.run.offset + done, r.run.ptr + done, n);
      done += n;
      pending += n;
      if (status.ok() && pending == kBatchBytes) {
        status = fence(r.segment, r.run.ptr + done, r.run.offset + done);
      }
    }
    if (!status.ok()) break;
  }
  if (status.ok() && pending > 0) {
    status = fence(runs.back().segment, runs.back().run.ptr + runs.back().run.bytes, total);
  }
  // Fence by fence, give back what the copies passed so far have made safe.
  const std::size_t before = reserved();
  std::size_t next = 0;  // segments before it are wholly given back
  std::size_t safe = 0;
  for (const Batch& batch : batches) {
    if (!status.ok()) break;
    if (status = backend_->WaitCopyFence(batch.fence); !status.ok()) break;
    safe = batch.safe;
    if (!release->ok()) continue;  // an unmap failed: only copy now
    for (; release->ok() && segments[next] != batch.segment; ++next) {
      *release = store_->Pause(Locked(), *segments[next], ~DevicePtr{0}).status();
    }
    if (release->ok()) *release = store_->Pause(Locked(), *batch.segment, batch.end).status();
  }
  // Always wait, also after a failure: copies still queued must not outlive
  // the call (the memory they read could be unmapped next).
  if (absl::Status s = backend_->WaitCopies(); status.ok()) status = s;
  if (status.ok()) {
    for (; release->ok() && next < segments.size(); ++next) {
      *release = store_->Pause(Locked(), *segments[next], ~DevicePtr{0}).status();
    }
    owner->backup_runs.clear();
    for (const LiveRun& r : runs) owner->backup_runs.push_back(r.run);
    owner->backup_bytes = total;
    stats_.backup_bytes += static_cast<std::int64_t>(total);
    return absl::OkStatus();
  }
  if (reserved() == before) return status;  // nothing went: nothing to undo
  // Undo: map again under the live blocks, copy back the bytes made safe.
  absl::Status undo;
  for (Segment* segment : segments) {
    if (undo = store_->Resume(Locked(), *segment).status(); !undo.ok()) break;
  }
  for (const LiveRun& r : runs) {
    if (!undo.ok() || r.run.offset >= safe) break;
    undo = backend_->CopyToDevice(r.run.ptr, owner->backup_host + r.run.offset,
                                  std::min(r.run.bytes, safe - r.run.offset));
  }
  if (absl::Status s = backend_->WaitCopies(); undo.ok()) undo = s;
  if (undo.ok()) return status;
  // The undo failed too: the region stays paused with what was copied;
  // Resume maps what is missing and restores it.
  owner->paused = true;
  owner->backup_runs.clear();
  std::size_t held = 0;
  for (const LiveRun& r : runs) {
    if (r.run.offset >= safe) break;
    owner->backup_runs.push_back(r.run);
    owner->backup_runs.back().bytes = std::min(r.run.bytes, safe - r.run.offset);
  }
  for (auto& [base, segment] : segments_) {
    if (segment->owner != owner) continue;
    for (const Block* b = segment->head; b != nullptr; b = b->next) {
      if (b->state == BlockState::kAllocated) held += BackedUpBytes(owner, *b);
    }
  }
  owner->backup_bytes = held;
  stats_.backup_bytes += static_cast<std::int64_t>(held);
  return absl::Status(status.code(),
                      absl::StrCat(status.message(), "; undoing the backup failed too (",
                                   undo.message(), "): the region is paused, Resume restores it"));
}

std::size_t DeviceAllocator::BackedUpBytes(const PrivatePool* owner, const Block& block) const {
  const std::vector<PrivatePool::BackupRun>& runs = owner->backup_runs;
  auto it = std::upper_bound(runs.begin(), runs.end(), block.ptr,
                             [](DevicePtr p, const PrivatePool::BackupRun& r) { return p < r.ptr; });
  if (it != runs.begin()) --it;
  std::size_t bytes = 0;
  for (; it != runs.end() && it->ptr < block.end(); ++it) {
    const DevicePtr lo = std::max(it->ptr, block.ptr);
    const DevicePtr hi = std::min(it->ptr + it->bytes, block.end());
    if (lo < hi) bytes += hi - lo;
  }
  return bytes;
}

absl::Status DeviceAllocator::Restore(PrivatePool* owner) {
  const std::vector<PrivatePool::BackupRun>& runs = owner->backup_runs;
  if (runs.empty()) return absl::OkStatus();
  // The pieces of runs under blocks still allocated, merged while both the
  // device and the host side stay contiguous (adjacent live blocks). Every
  // block allocated now was allocated at the pause (a paused region refuses
  // allocations); one run holds it whole, except after a failed undo
  // (BackUpAndRelease), which may have backed up a block's head only.
  DevicePtr dst = 0;
  HostPtr src = 0;
  std::size_t len = 0;
  absl::Status status;
  auto flush = [&] {
    if (len > 0 && status.ok()) status = backend_->CopyToDevice(dst, src, len);
    len = 0;
  };
  for (auto& [base, segment] : segments_) {
    if (segment->owner != owner) continue;
    for (const Block* b = segment->head; b != nullptr && status.ok(); b = b->next) {
      if (b->state != BlockState::kAllocated) continue;
      auto it = std::upper_bound(
          runs.begin(), runs.end(), b->ptr,
          [](DevicePtr p, const PrivatePool::BackupRun& r) { return p < r.ptr; });
      if (it != runs.begin()) --it;
      for (; it != runs.end() && it->ptr < b->end(); ++it) {
        const DevicePtr lo = std::max(it->ptr, b->ptr);
        const DevicePtr hi = std::min(it->ptr + it->bytes, b->end());
        if (lo >= hi) continue;
        const HostPtr from = owner->backup_host + it->offset + (lo - it->ptr);
        if (len > 0 && dst + len == lo && src + len == from) {
          len += hi - lo;
          continue;
        }
        flush();
        dst = lo;
        src = from;
        len = hi - lo;
      }
    }
  }
  flush();
  if (absl::Status s = backend_->WaitCopies(); status.ok()) status = s;
  return status;
}

void DeviceAllocator::DropBackup(PrivatePool* owner) {
  stats_.backup_bytes -= static_cast<std::int64_t>(owner->backup_bytes);
  owner->backup_bytes = 0;
  owner->backup_runs.clear();
}

void DeviceAllocator::DropBackupOf(const Block* block) {
  PrivatePool* owner = block->segment->owner;
  if (owner == nullptr || !owner->paused || owner->backup_runs.empty()) return;
  // Its bytes are not restored now.
  const std::size_t bytes = std::min(BackedUpBytes(owner, *block), owner->backup_bytes);
  owner->backup_bytes -= bytes;
  stats_.backup_bytes -= static_cast<std::int64_t>(bytes);
  // Nothing left to restore: the backup goes, so EmptyCache can free its
  // buffer even while the region stays paused.
  if (owner->backup_bytes == 0) DropBackup(owner);
}

std::size_t DeviceAllocator::AccountPaused(PrivatePool* owner, std::size_t before) {
  // A failed backup whose undo worked leaves the region running: memory
  // under free blocks it gave back is simply no longer cached.
  if (!owner->paused) return 0;
  const std::size_t released = before - reserved();
  owner->paused_bytes += released;
  stats_.paused_bytes += static_cast<std::int64_t>(released);
  return released;
}

absl::StatusOr<std::size_t> DeviceAllocator::Pause(RegionId region, PauseOptions options) {
  FlushedLock lock(this);
  absl::StatusOr<PrivatePool*> found = UsedRegion(region);
  if (!found.ok()) return found.status();
  PrivatePool* owner = *found;
  if (owner->paused) {
    return absl::FailedPreconditionError(absl::StrCat("region ", region, " is already paused"));
  }
  if (capturing()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "region ", region, " cannot be paused while a stream capture may be underway"));
  }
  if (!growable_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "region ", region, " lives in classic segments, which cannot give memory back under "
        "live blocks (pausing needs expandable_segments:True)"));
  }
  // Work queued on the region's memory must be done before it goes: wait
  // for the device (pending frees complete with it).
  if (absl::Status s = SynchronizeAndFreeEvents(); !s.ok()) return s;
  if (pool_work_) (void)FlushPoolWork();
  // What went is what reserved lost, also when a chunk failed to go.
  const std::size_t before = reserved();
  absl::Status status;
  if (options.backup) {
    // Chunks go as their bytes are safe; a failed copy leaves the region
    // running with its live bytes in place (see the banner).
    if (absl::Status s = BackUpAndRelease(owner, &status); !s.ok()) {
      AccountPaused(owner, before);
      DebugCheck();
      return s;
    }
  }
  // From here the region is paused even if a chunk fails to go: what went
  // is gone, and Resume maps whatever is missing.
  owner->paused = true;
  for (auto& [base, segment] : segments_) {
    if (!status.ok()) break;
    if (segment->owner != owner) continue;
    status = store_->Pause(Locked(), *segment, ~DevicePtr{0}).status();
  }
  const std::size_t released = AccountPaused(owner, before);
  if (recorder_ != nullptr) recorder_->OnPause(region, released);
  DebugCheck();
  if (!status.ok()) return status;
  return released;
}

absl::StatusOr<std::size_t> DeviceAllocator::Resume(RegionId region) {
  FlushedLock lock(this);
  absl::StatusOr<PrivatePool*> found = UsedRegion(region);
  if (!found.ok()) return found.status();
  PrivatePool* owner = *found;
  if (!owner->paused) {
    return absl::FailedPreconditionError(absl::StrCat("region ", region, " is not paused"));
  }
  if (capturing()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "region ", region, " cannot be resumed while a stream capture may be underway"));
  }
  std::vector<Segment*> resumed;
  const std::size_t before = reserved();
  std::size_t taken = 0;
  absl::Status status;
  for (auto& [base, segment] : segments_) {
    if (segment->owner != owner) continue;
    absl::StatusOr<std::size_t> n = store_->Resume(Locked(), *segment);
    if (!n.ok()) {
      status = n.status();
      break;
    }
    resumed.push_back(segment.get());
    taken += *n;
  }
  if (status.ok()) status = Restore(owner);
  if (!status.ok()) {
    // All or nothing: the segments resumed so far give their memory back,
    // and the region stays paused with its backup.
    for (Segment* segment : resumed) (void)store_->Pause(Locked(), *segment, ~DevicePtr{0});
    // Memory a failed undo left mapped is no longer given back; memory of an
    // earlier half-failed pause that the undo gave back now is.
    const std::size_t now = reserved();
    if (now >= before) {
      const std::size_t stayed = std::min(now - before, owner->paused_bytes);
      owner->paused_bytes -= stayed;
      stats_.paused_bytes -= static_cast<std::int64_t>(stayed);
    } else {
      owner->paused_bytes += before - now;
      stats_.paused_bytes += static_cast<std::int64_t>(before - now);
    }
    DebugCheck();
    return status;
  }
  owner->paused = false;
  stats_.paused_bytes -= static_cast<std::int64_t>(owner->paused_bytes);
  owner->paused_bytes = 0;
  DropBackup(owner);
  if (recorder_ != nullptr) recorder_->OnResume(region, taken);
  DebugCheck();
  return taken;
}

absl::StatusOr<std::size_t> DeviceAllocator::ReserveBackup(RegionId region) {
  FlushedLock lock(this);
  absl::StatusOr<PrivatePool*> found = UsedRegion(region);
  if (!found.ok()) return found.status();
  PrivatePool* owner = *found;
  if (owner->paused) {
    return absl::FailedPreconditionError(absl::StrCat("region ", region, " is paused"));
  }
  std::size_t total = 0;
  (void)LiveRuns(owner, &total);
  if (absl::Status s = ReserveHost(owner, std::max<std::size_t>(total, 1)); !s.ok()) return s;
  owner->backup_reserved = true;
  DebugCheck();
  return owner->backup_capacity;
}

absl::Status DeviceAllocator::DropIdleBackups() {
  for (auto& [region, owner] : regions_) {
    if (owner->paused && !owner->backup_runs.empty()) continue;  // still needed
    if (owner->backup_reserved) continue;                       // asked for ahead
    if (absl::Status s = FreeBackupHost(owner.get()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace ccalloc
