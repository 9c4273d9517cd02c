// device_allocator_ipc.cc — the producer side of IPC, and peer access.
//
// Kept apart from the cache in device_allocator.cc: nothing here changes a
// block or a counter. The cache finds the allocated block a pointer lies in;
// the segment store (allocator/segments/) names the memory under it (a
// classic segment, or the physical chunks mapped under a growable block) in a
// form another process can open (allocator/cache/ipc.h), and widens who may touch
// the memory it maps, now and later.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"

namespace ccalloc {
namespace {

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

}  // namespace

absl::StatusOr<const Block*> DeviceAllocator::AllocatedBlockHolding(
    DevicePtr ptr, absl::string_view what) const {
  if (auto it = allocated_.find(ptr); it != allocated_.end()) return it->second;
  if (const Block* b = BlockCovering(ptr)) {
    switch (b->state) {
      case BlockState::kAllocated:
        return b;
      case BlockState::kPending:
        return absl::InvalidArgumentError(absl::StrCat(
            what, " of ", Hex(ptr), ": the block at ", Hex(b->ptr),
            " is already freed (waiting for other streams)"));
      case BlockState::kFree:
      case BlockState::kHot:  // (every caller returned it first: FlushHot)
        return absl::InvalidArgumentError(absl::StrCat(
            what, " of ", Hex(ptr), ": the address lies in free cached memory"));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, " of ", Hex(ptr), ": not allocated by this allocator (device ", backend_->device(),
      ")"));
}

absl::StatusOr<DeviceAllocator::IpcExport> DeviceAllocator::ExportIpc(DevicePtr ptr) {
  FlushedLock lock(this);
  absl::StatusOr<const Block*> block = AllocatedBlockHolding(ptr, "ExportIpc");
  if (!block.ok()) return block.status();
  if (const PrivatePool* owner = (*block)->segment->owner; owner != nullptr && owner->paused) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ExportIpc of ", Hex(ptr), ": its region is paused (no memory under it until Resume)"));
  }
  return store_->ExportIpc(Locked(), **block, ptr, absl::StrCat("ExportIpc of ", Hex(ptr)));
}

absl::StatusOr<std::pair<DevicePtr, std::size_t>> DeviceAllocator::BaseAllocation(
    DevicePtr ptr) const {
  FlushedLock lock(this);
  absl::StatusOr<const Block*> block = AllocatedBlockHolding(ptr, "BaseAllocation");
  if (!block.ok()) return block.status();
  return store_->SharedRange(Locked(), **block);
}

absl::Status DeviceAllocator::AddPeerAccess(int peer_device) {
  if (peer_device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddPeerAccess: ", peer_device, " is not a device ordinal"));
  }
  if (peer_device == backend_->device()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AddPeerAccess: device ", peer_device, " is this allocator's own device"));
  }
  FlushedLock lock(this);
  return store_->AddPeerAccess(Locked(), peer_device);
}

}  // namespace ccalloc
