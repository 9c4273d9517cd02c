// device_allocator_ipc.cc — the producer side of IPC, and peer access.
//
// Kept apart from the cache in device_allocator.cc: nothing here changes a
// block, a counter or the page table. ExportIpc names memory the allocator
// already holds (a classic segment, or the physical chunks mapped under a
// growable block) in a form another process can open (allocator/ipc.h);
// AddPeerAccess widens who may touch the growable mappings, and MapChunk
// reads peers_ so that later mappings get the same access.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/device_allocator.h"
#include "allocator/ipc.h"

namespace ccalloc {
namespace {

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace

absl::StatusOr<const Block*> DeviceAllocator::AllocatedBlockHolding(
    DevicePtr ptr, absl::string_view what) const {
  if (auto it = allocated_.find(ptr); it != allocated_.end()) return it->second;
  auto it = segments_.upper_bound(ptr);
  if (it != segments_.begin()) {
    --it;
    const Segment& segment = *it->second;
    if (ptr < segment.end()) {
      for (const Block* b = segment.head; b != nullptr; b = b->next) {
        if (ptr < b->ptr || ptr >= b->end()) continue;
        switch (b->state) {
          case BlockState::kAllocated:
            return b;
          case BlockState::kPending:
            return absl::InvalidArgumentError(absl::StrCat(
                what, " of ", Hex(ptr), ": the block at ", Hex(b->ptr),
                " is already freed (waiting for other streams)"));
          case BlockState::kFree:
            return absl::InvalidArgumentError(absl::StrCat(
                what, " of ", Hex(ptr), ": the address lies in free cached memory"));
        }
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, " of ", Hex(ptr), ": not allocated by this allocator (device ", backend_->device(),
      ")"));
}

std::pair<DevicePtr, std::size_t> DeviceAllocator::SharedRange(const Block* block) const {
  const Segment* segment = block->segment;
  if (!segment->expandable) return {segment->base, segment->size};
  // Whole chunks: the driver maps (and so exports) a physical handle only
  // whole. An allocated block's pages are all mapped, so the chunks from the
  // one under its first byte to the one under its last are contiguous.
  const std::size_t first = (block->ptr - segment->base) / page_size_;
  const std::size_t last = (block->end() - 1 - segment->base) / page_size_;
  const std::size_t begin = segment->ChunkAround(first).first;
  const std::size_t end = segment->ChunkAround(last).second;
  return {segment->base + begin * page_size_, (end - begin) * page_size_};
}

absl::StatusOr<DeviceAllocator::IpcExport> DeviceAllocator::ExportIpc(DevicePtr ptr) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<const Block*> block = AllocatedBlockHolding(ptr, "ExportIpc");
  if (!block.ok()) return block.status();
  const Segment* segment = (*block)->segment;
  const auto [base, size] = SharedRange(*block);
  const std::string what = absl::StrCat("ExportIpc of ", Hex(ptr));
  if (!segment->expandable) {
    absl::StatusOr<std::string> mem_handle = backend_->ExportAllocation(base);
    if (!mem_handle.ok()) return Prefixed(mem_handle.status(), what);
    if (mem_handle->size() != kIpcMemHandleBytes) {
      return absl::InternalError(absl::StrCat(what, ": the backend's IPC handle has ",
                                              mem_handle->size(), " bytes"));
    }
    return IpcExport{EncodeClassicIpcHandle(*mem_handle), ptr - base};
  }
  std::vector<IpcChunk> chunks;
  int pid = 0;
  const std::size_t begin = (base - segment->base) / page_size_;
  const std::size_t end = begin + size / page_size_;
  for (std::size_t i = begin; i < end;) {
    const auto [first, last] = segment->ChunkAround(i);
    // Descriptors already made stay with their handles (the backend closes
    // them when the memory is released), so a failure here leaves nothing
    // to undo.
    absl::StatusOr<SharedPhysical> shared = backend_->ExportPhysical(segment->pages[i]);
    if (!shared.ok()) return Prefixed(shared.status(), what);
    pid = shared->pid;
    chunks.push_back(IpcChunk{(first - begin) * page_size_, (last - first) * page_size_,
                              shared->fd});
    i = last;
  }
  return IpcExport{EncodeGrowableIpcHandle(pid, size, chunks), ptr - base};
}

absl::StatusOr<std::pair<DevicePtr, std::size_t>> DeviceAllocator::BaseAllocation(
    DevicePtr ptr) const {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<const Block*> block = AllocatedBlockHolding(ptr, "BaseAllocation");
  if (!block.ok()) return block.status();
  return SharedRange(*block);
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
  absl::MutexLock lock(&mu_);
  if (std::find(peers_.begin(), peers_.end(), peer_device) != peers_.end()) {
    return absl::OkStatus();
  }
  if (absl::Status s = backend_->CheckPeer(peer_device); !s.ok()) {
    return Prefixed(s, "AddPeerAccess");
  }
  // One call per run of contiguous mapped pages: the driver sets access on
  // whole mappings, and several adjacent ones at once.
  const int devices[] = {peer_device};
  for (const auto& [base, segment] : segments_) {
    if (!segment->expandable) continue;
    for (std::size_t i = 0; i < segment->mapped_end;) {
      if (segment->pages[i] == 0) {
        ++i;
        continue;
      }
      std::size_t run_end = i + 1;
      while (run_end < segment->mapped_end && segment->pages[run_end] != 0) ++run_end;
      // On failure the peer is not recorded; the access granted so far is
      // harmless and a retry grants it again.
      if (absl::Status s = backend_->SetAccess(segment->base + i * page_size_,
                                               (run_end - i) * page_size_, devices);
          !s.ok()) {
        return Prefixed(s, "AddPeerAccess");
      }
      i = run_end;
    }
  }
  peers_.push_back(peer_device);
  return absl::OkStatus();
}

}  // namespace ccalloc
