// backend.cc — the default run calls of DeviceBackend (one mapping at a time,
// for backends without a cheaper way) and the count of its driver calls by
// thread (see backend.h).
#include "allocator/backends/backend.h"

#include <vector>

namespace ccalloc {
namespace {

// Whether this thread's calls are background calls (BackgroundCalls).
thread_local int background_depth = 0;

}  // namespace

BackgroundCalls::BackgroundCalls() { ++background_depth; }
BackgroundCalls::~BackgroundCalls() { --background_depth; }
bool BackgroundCalls::active() { return background_depth > 0; }

DriverCallTotals DeviceBackend::driver_calls() const {
  DriverCallTotals t;
  t.calls = calls_[0].load(std::memory_order_relaxed);
  t.ns = ns_[0].load(std::memory_order_relaxed);
  t.background_calls = calls_[1].load(std::memory_order_relaxed);
  t.background_ns = ns_[1].load(std::memory_order_relaxed);
  return t;
}

DeviceBackend::CountedCall::CountedCall(const DeviceBackend& backend, bool timed)
    : backend_(backend), slot_(BackgroundCalls::active() ? 1 : 0), timed_(timed) {
  backend_.calls_[slot_].fetch_add(1, std::memory_order_relaxed);
  if (timed_) start_ = std::chrono::steady_clock::now();
}

DeviceBackend::CountedCall::~CountedCall() {
  if (!timed_) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start_)
                      .count();
  backend_.ns_[slot_].fetch_add(ns, std::memory_order_relaxed);
}

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
