// backend.cc — the default run calls of DeviceBackend: one mapping at a time,
// for backends without a cheaper way (see backend.h).
#include "allocator/backend.h"

#include <vector>

namespace ccalloc {

absl::Status DeviceBackend::MapRun(DevicePtr va, std::size_t bytes_each,
                                   absl::Span<const PhysicalHandle> handles,
                                   absl::Span<const int> peers) {
  std::vector<ChunkToMap> chunks;
  chunks.reserve(handles.size());
  for (PhysicalHandle h : handles) chunks.push_back(ChunkToMap{bytes_each, h});
  return MapChunks(va, chunks, peers);
}

absl::Status DeviceBackend::MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                                      absl::Span<const int> peers) {
  std::size_t done = 0, offset = 0;
  absl::Status status;
  for (; done < chunks.size(); ++done) {
    const DevicePtr at = va + offset;
    status = Map(at, chunks[done].bytes, chunks[done].handle);
    if (status.ok() && !peers.empty()) {
      status = SetAccess(at, chunks[done].bytes, peers);
      if (!status.ok()) (void)Unmap(at, chunks[done].bytes);
    }
    if (!status.ok()) break;
    offset += chunks[done].bytes;
  }
  if (status.ok()) return status;
  // Nothing of a failed stretch stays mapped.
  offset = 0;
  for (std::size_t i = 0; i < done; ++i) {
    (void)Unmap(va + offset, chunks[i].bytes);
    offset += chunks[i].bytes;
  }
  return status;
}

absl::Status DeviceBackend::UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                                     std::size_t* unmapped) {
  std::size_t done = 0;
  absl::Status status;
  for (; done < bytes && status.ok(); done += bytes_each) {
    status = Unmap(va + done, bytes_each);
    if (!status.ok()) break;
  }
  if (unmapped != nullptr) *unmapped = done;
  return status;
}

}  // namespace ccalloc
