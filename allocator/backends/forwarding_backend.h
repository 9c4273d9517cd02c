// forwarding_backend.h — a DeviceBackend that passes every call on to another.
//
// For backends that watch or change a few calls of a real one (the replay's
// driver-call counter, the tests' outstanding-resource tracker, a borrowed
// simulated card): they override those calls and inherit the rest, so a call
// added to DeviceBackend reaches the real backend through every wrapper
// instead of falling to DeviceBackend's "not supported" default in the ones
// nobody updated.
//
// MapChunks and UnmapRun are forwarded whole. A wrapper that watches Map or
// Unmap and must see each mapping of a stretch overrides them as well (or
// calls DeviceBackend's chunk-by-chunk defaults from its override).
#ifndef CCALLOC_ALLOCATOR_FORWARDING_BACKEND_H_
#define CCALLOC_ALLOCATOR_FORWARDING_BACKEND_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "allocator/backends/backend.h"

namespace ccalloc {

class ForwardingBackend : public DeviceBackend {
 public:
  // `inner` must outlive this backend (a wrapper that owns it keeps it in a
  // member of its own).
  explicit ForwardingBackend(DeviceBackend* inner) : inner_(inner) {}

  DeviceBackend& inner() const { return *inner_; }

  int device() const override { return inner_->device(); }
  const char* name() const override { return inner_->name(); }
  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override {
    return inner_->Allocate(bytes);
  }
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override {
    return inner_->Deallocate(ptr, bytes);
  }
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo() override { return inner_->MemoryInfo(); }
  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override {
    return inner_->RecordEvent(stream);
  }
  absl::StatusOr<bool> QueryEvent(EventHandle event) override { return inner_->QueryEvent(event); }
  absl::Status SynchronizeEvent(EventHandle event) override {
    return inner_->SynchronizeEvent(event);
  }
  absl::Status StreamWaitEvent(StreamId stream, EventHandle event) override {
    return inner_->StreamWaitEvent(stream, event);
  }
  void DestroyEvent(EventHandle event) override { inner_->DestroyEvent(event); }
  absl::Status SynchronizeDevice() override { return inner_->SynchronizeDevice(); }
  absl::StatusOr<CapturePosition> CapturePositionOf(StreamId stream) override {
    return inner_->CapturePositionOf(stream);
  }
  absl::StatusOr<bool> OrderedBefore(const CapturePosition& before, StreamId stream) override {
    return inner_->OrderedBefore(before, stream);
  }

  bool SupportsVirtualMemory() const override { return inner_->SupportsVirtualMemory(); }
  std::size_t PageSize() const override { return inner_->PageSize(); }
  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override {
    return inner_->ReserveAddressRange(bytes);
  }
  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override {
    return inner_->ReleaseAddressRange(base, bytes);
  }
  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override {
    return inner_->CreatePhysical(bytes);
  }
  absl::Status ReleasePhysical(PhysicalHandle handle) override {
    return inner_->ReleasePhysical(handle);
  }
  absl::Status Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) override {
    return inner_->Map(va, bytes, handle);
  }
  absl::Status Unmap(DevicePtr va, std::size_t bytes) override { return inner_->Unmap(va, bytes); }
  absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                         absl::Span<const int> peers) override {
    return inner_->MapChunks(va, chunks, peers);
  }
  absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                        std::size_t* unmapped) override {
    return inner_->UnmapRun(va, bytes, bytes_each, unmapped);
  }
  absl::Status SetAccess(DevicePtr va, std::size_t bytes, absl::Span<const int> devices) override {
    return inner_->SetAccess(va, bytes, devices);
  }
  absl::Status CheckPeer(int peer) override { return inner_->CheckPeer(peer); }

  absl::StatusOr<HostPtr> AllocateHost(std::size_t bytes) override {
    return inner_->AllocateHost(bytes);
  }
  absl::Status FreeHost(HostPtr ptr, std::size_t bytes) override {
    return inner_->FreeHost(ptr, bytes);
  }
  absl::Status CopyToHost(HostPtr dst, DevicePtr src, std::size_t bytes) override {
    return inner_->CopyToHost(dst, src, bytes);
  }
  absl::Status CopyToDevice(DevicePtr dst, HostPtr src, std::size_t bytes) override {
    return inner_->CopyToDevice(dst, src, bytes);
  }
  absl::Status WaitCopies() override { return inner_->WaitCopies(); }
  absl::StatusOr<CopyFence> RecordCopyFence() override { return inner_->RecordCopyFence(); }
  absl::Status WaitCopyFence(CopyFence fence) override { return inner_->WaitCopyFence(fence); }

  absl::StatusOr<std::string> ExportAllocation(DevicePtr base) override {
    return inner_->ExportAllocation(base);
  }
  absl::StatusOr<DevicePtr> OpenAllocation(absl::string_view handle) override {
    return inner_->OpenAllocation(handle);
  }
  absl::Status CloseAllocation(DevicePtr ptr) override { return inner_->CloseAllocation(ptr); }
  absl::StatusOr<SharedPhysical> ExportPhysical(PhysicalHandle handle) override {
    return inner_->ExportPhysical(handle);
  }
  absl::StatusOr<PhysicalHandle> ImportPhysical(SharedPhysical from) override {
    return inner_->ImportPhysical(from);
  }

 private:
  DeviceBackend* const inner_;
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_FORWARDING_BACKEND_H_
