// classic_segments.h — one device allocation per segment.
//
// The layout PyTorch's native allocator uses: a request that finds no free
// block gets a segment of SizePolicy::SegmentSize (kSmallBuffer for the small
// pool, kLargeBuffer below kMinLargeAlloc, the request rounded to kRoundLarge
// above), allocated from the
// device in one call (cuMemAlloc) and given back in one call once every
// block of it is free. The memory of a segment is all there from the start,
// so nothing needs preparing before a block is handed out and nothing can be
// given back short of the whole segment: Trim is empty, and the cache's
// release path frees wholly free segments (oversize ones first when it looks
// for a target). Blocks of two segments never merge, so holes between
// segments are the fragmentation this layout pays.
//
// IPC exports the whole device allocation (cuIpcGetMemHandle); peer access is
// the runtime's business (cudaDeviceEnablePeerAccess covers every
// allocation), so a peer only needs checking here.
#ifndef CCALLOC_ALLOCATOR_SEGMENTS_CLASSIC_SEGMENTS_H_
#define CCALLOC_ALLOCATOR_SEGMENTS_CLASSIC_SEGMENTS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "allocator/segments/segments.h"
#include "allocator/cache/size_policy.h"

namespace ccalloc {

class ClassicSegments final : public SegmentStore {
 public:
  ClassicSegments(absl::Mutex& mu, SegmentCache& cache, DeviceBackend& backend,
                  const Options& options)
      : SegmentStore(mu, cache, backend, options) {}

  bool growable() const override { return false; }
  absl::StatusOr<std::unique_ptr<Segment>> Create(CacheLock lock, std::size_t rounded,
                                                  StreamId stream, PoolKind pool,
                                                  PrivatePool* owner) override;
  absl::Status Prepare(CacheLock lock, Segment& segment, const Block& hole, DevicePtr begin,
                       std::size_t bytes) override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::size_t> Pause(CacheLock lock, Segment& segment, DevicePtr end) override {
    return absl::FailedPreconditionError(
        "a classic segment cannot be paused: its memory is one device allocation that live "
        "blocks use (pausing needs growable segments, expandable_segments:True)");
  }
  absl::StatusOr<std::size_t> Resume(CacheLock lock, Segment& segment) override {
    return absl::FailedPreconditionError("a classic segment cannot be paused or resumed");
  }
  absl::StatusOr<std::size_t> Trim(CacheLock lock, PrivatePool* owner) override {
    return std::size_t{0};
  }
  bool CanRelease(CacheLock lock, const Segment& segment) const override { return true; }
  absl::Status Quiesce(CacheLock lock) override { return absl::OkStatus(); }
  absl::Status FinishBackground(CacheLock lock) override { return absl::OkStatus(); }
  absl::Status Release(CacheLock lock, Segment& segment) override;
  void Discard(CacheLock lock, Segment& segment) override;

  std::size_t HeldBytes(CacheLock lock, const Segment& segment) const override {
    return segment.size;
  }
  std::size_t HeldBytesIn(CacheLock lock, const Segment& segment, DevicePtr begin,
                          DevicePtr end) const override {
    return end - begin;
  }
  std::pair<DevicePtr, std::size_t> HeldStretch(CacheLock lock, const Segment& segment,
                                                DevicePtr begin, DevicePtr end,
                                                std::size_t bytes) const override {
    if (end - begin < bytes) return {0, 0};
    return {begin, end - begin};
  }
  void Describe(CacheLock lock, const Segment& segment, SegmentInfo* info) const override {
    info->mapped_size = segment.size;
  }

  std::pair<DevicePtr, std::size_t> SharedRange(CacheLock lock,
                                                const Block& block) const override {
    return {block.segment->base, block.segment->size};
  }
  absl::StatusOr<IpcExport> ExportIpc(CacheLock lock, const Block& block, DevicePtr ptr,
                                      const std::string& what) override;

  bool ValidateSegment(CacheLock lock, const Segment& segment,
                       std::string* why) const override;
  bool Validate(CacheLock lock, std::size_t segments, std::string* why) const override {
    return true;
  }

 protected:
  absl::Status GrantPeer(CacheLock lock, int peer_device) override {
    return absl::OkStatus();
  }

 private:
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SEGMENTS_CLASSIC_SEGMENTS_H_
