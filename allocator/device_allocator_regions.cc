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
// allocated blocks, with a single wait at the end: per-call costs are paid
// once per run, and the link runs at its bandwidth.
//
// Failure rules: a failed backup changes nothing (nothing is unmapped before
// every byte is safely in host memory); a failed resume, mapping or copying,
// leaves the region paused as before, backup included, so it can be retried.
//
// Part of the cache (see device_allocator.h).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/device_allocator.h"

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

absl::Status DeviceAllocator::BackUp(PrivatePool* owner) {
  std::vector<PrivatePool::BackupRun> runs;
  std::size_t total = 0;
  for (auto& [base, segment] : segments_) {
    if (segment->owner != owner) continue;
    for (const Block* b = segment->head; b != nullptr; b = b->next) {
      if (b->state != BlockState::kAllocated) continue;
      if (!runs.empty() && runs.back().ptr + runs.back().bytes == b->ptr) {
        runs.back().bytes += b->size;
      } else {
        runs.push_back(PrivatePool::BackupRun{b->ptr, b->size, total});
      }
      total += b->size;
    }
  }
  if (total > owner->backup_capacity) {
    // A buffer too small for this pause goes first: keeping both would
    // double the host memory held at the worst moment.
    if (absl::Status s = FreeBackupHost(owner); !s.ok()) return s;
    const std::size_t bytes = (total + kHostRounding - 1) / kHostRounding * kHostRounding;
    absl::StatusOr<HostPtr> host = backend_->AllocateHost(bytes);
    if (!host.ok()) {
      return absl::Status(host.status().code(),
                          absl::StrCat("backup of region ", owner->id & ~kRegionPoolBit, ": ",
                                       bytes, " bytes of page-locked host memory refused: ",
                                       host.status().message()));
    }
    owner->backup_host = *host;
    owner->backup_capacity = bytes;
    stats_.backup_host_bytes += static_cast<std::int64_t>(bytes);
  }
  absl::Status status;
  for (const PrivatePool::BackupRun& run : runs) {
    status = backend_->CopyToHost(owner->backup_host + run.offset, run.ptr, run.bytes);
    if (!status.ok()) break;
  }
  // Always wait, also after a failed queue: copies already queued must not
  // outlive the call (the memory they read could be unmapped next).
  if (absl::Status s = backend_->WaitCopies(); status.ok()) status = s;
  if (!status.ok()) return status;
  owner->backup_runs = std::move(runs);
  owner->backup_bytes = total;
  stats_.backup_bytes += static_cast<std::int64_t>(total);
  return absl::OkStatus();
}

absl::Status DeviceAllocator::Restore(PrivatePool* owner) {
  const std::vector<PrivatePool::BackupRun>& runs = owner->backup_runs;
  if (runs.empty()) return absl::OkStatus();
  // Pieces of runs under blocks still allocated, merged while both the
  // device and the host side stay contiguous (adjacent live blocks).
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
      // The run holding the block: every block allocated now was allocated
      // at the pause (a paused region refuses allocations), so one run
      // holds it whole.
      auto it = std::upper_bound(
          runs.begin(), runs.end(), b->ptr,
          [](DevicePtr p, const PrivatePool::BackupRun& r) { return p < r.ptr; });
      if (it == runs.begin()) continue;
      --it;
      if (b->end() > it->ptr + it->bytes) continue;
      const HostPtr from = owner->backup_host + it->offset + (b->ptr - it->ptr);
      if (len > 0 && dst + len == b->ptr && src + len == from) {
        len += b->size;
        continue;
      }
      flush();
      dst = b->ptr;
      src = from;
      len = b->size;
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
  // Its bytes were backed up whole (see Restore); they are not restored now.
  const std::size_t bytes = std::min(block->size, owner->backup_bytes);
  owner->backup_bytes -= bytes;
  stats_.backup_bytes -= static_cast<std::int64_t>(bytes);
}

absl::StatusOr<std::size_t> DeviceAllocator::Pause(RegionId region, PauseOptions options) {
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(region);
  if (region == 0 || it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("region ", region, " was never allocated in"));
  }
  PrivatePool* owner = it->second.get();
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
  if (options.backup) {
    // Nothing is given back unless every byte is safe: a failed backup
    // leaves the region running and untouched.
    if (absl::Status s = BackUp(owner); !s.ok()) {
      DebugCheck();
      return s;
    }
  }
  // From here the region is paused even if a chunk fails to go: what went
  // is gone, and Resume maps whatever is missing.
  owner->paused = true;
  // What went is what reserved lost, also when a segment failed part way.
  const std::size_t before = reserved();
  absl::Status status;
  for (auto& [base, segment] : segments_) {
    if (segment->owner != owner) continue;
    if (absl::StatusOr<std::size_t> n = store_->Pause(Locked(), *segment); !n.ok()) {
      status = n.status();
      break;
    }
  }
  const std::size_t released = before - reserved();
  owner->paused_bytes += released;
  stats_.paused_bytes += static_cast<std::int64_t>(released);
  if (recorder_ != nullptr) recorder_->OnPause(region, released);
  DebugCheck();
  if (!status.ok()) return status;
  return released;
}

absl::StatusOr<std::size_t> DeviceAllocator::Resume(RegionId region) {
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(region);
  if (region == 0 || it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("region ", region, " was never allocated in"));
  }
  PrivatePool* owner = it->second.get();
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
    for (Segment* segment : resumed) (void)store_->Pause(Locked(), *segment);
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

absl::Status DeviceAllocator::DropIdleBackups() {
  for (auto& [region, owner] : regions_) {
    if (owner->paused && !owner->backup_runs.empty()) continue;  // still needed
    if (absl::Status s = FreeBackupHost(owner.get()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace ccalloc
