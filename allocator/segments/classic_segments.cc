// classic_segments.cc — see classic_segments.h for the design.
#include "allocator/segments/classic_segments.h"

#include "absl/strings/str_cat.h"
#include "allocator/cache/ipc.h"

namespace ccalloc {

absl::StatusOr<std::unique_ptr<Segment>> ClassicSegments::Create(CacheLock lock,
                                                                 std::size_t rounded,
                                                                 StreamId stream,
                                                                 PoolKind pool,
                                                                 PrivatePool* owner) {
  AssertHeld(lock);
  const std::size_t segment_size = SizePolicy::SegmentSize(rounded);
  if (!WithinLimit(segment_size)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the memory limit (", FormatBytes(cache_.reserve_limit()), ") would be exceeded"));
  }
  absl::StatusOr<DevicePtr> ptr = backend_.Allocate(segment_size);
  if (!ptr.ok()) return ptr.status();
  auto segment = std::make_unique<Segment>();
  segment->base = *ptr;
  segment->size = segment_size;
  segment->stream = stream;
  segment->pool = pool;
  segment->expandable = false;
  segment->owner = owner;
  MemoryStats& stats = cache_.stats();
  AddReserved(pool, static_cast<std::int64_t>(segment_size));
  segment->oversize = cache_.IsOversize(segment_size);
  if (segment->oversize) stats.oversize_segments.Increase(1);
  ++stats.num_device_alloc;
  return segment;
}

absl::Status ClassicSegments::Release(CacheLock lock, Segment& segment) {
  AssertHeld(lock);
  if (absl::Status s = backend_.Deallocate(segment.base, segment.size); !s.ok()) return s;
  MemoryStats& stats = cache_.stats();
  AddReserved(segment.pool, -static_cast<std::int64_t>(segment.size));
  if (segment.oversize) stats.oversize_segments.Decrease(1);
  ++stats.num_device_free;
  return absl::OkStatus();
}

void ClassicSegments::Discard(CacheLock lock, Segment& segment) {
  AssertHeld(lock);
  (void)backend_.Deallocate(segment.base, segment.size);
}

absl::StatusOr<IpcExport> ClassicSegments::ExportIpc(CacheLock lock, const Block& block,
                                                     DevicePtr ptr, const std::string& what) {
  AssertHeld(lock);
  const DevicePtr base = block.segment->base;
  absl::StatusOr<std::string> mem_handle = backend_.ExportAllocation(base);
  if (!mem_handle.ok()) {
    return absl::Status(mem_handle.status().code(),
                        absl::StrCat(what, ": ", mem_handle.status().message()));
  }
  if (mem_handle->size() != kIpcMemHandleBytes) {
    return absl::InternalError(absl::StrCat(what, ": the backend's IPC handle has ",
                                            mem_handle->size(), " bytes"));
  }
  return IpcExport{EncodeClassicIpcHandle(*mem_handle), ptr - base};
}

bool ClassicSegments::ValidateSegment(CacheLock lock, const Segment& segment,
                                      std::string* why) const {
  if (segment.expandable) {
    if (why != nullptr) {
      *why = absl::StrCat("segment 0x", absl::Hex(segment.base),
                          ": a growable segment in the classic store");
    }
    return false;
  }
  return true;
}

}  // namespace ccalloc
