// segments.cc — what both segment stores share: choosing one, the memory
// limit, the reserved counters and the list of peer devices.
#include "allocator/segments/segments.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "allocator/segments/classic_segments.h"
#include "allocator/segments/growable_segments.h"

namespace ccalloc {

std::unique_ptr<SegmentStore> SegmentStore::Make(absl::Mutex& mu, SegmentCache& cache,
                                                 DeviceBackend& backend,
                                                 const Options& options) {
  if (options.expandable_segments && backend.SupportsVirtualMemory()) {
    return std::make_unique<GrowableSegments>(mu, cache, backend, options);
  }
  return std::make_unique<ClassicSegments>(mu, cache, backend, options);
}

bool SegmentStore::WithinLimit(std::size_t extra) const {
  const std::size_t limit = cache_.reserve_limit();
  return limit == 0 || reserved() + extra <= limit;
}

void SegmentStore::AddReserved(PoolKind pool, std::int64_t bytes) {
  StatArray& reserved = cache_.stats().reserved_bytes;
  Stat& of_pool = reserved[pool == PoolKind::kSmall ? 1 : 2];
  if (bytes >= 0) {
    reserved[kStatAll].Increase(bytes);
    of_pool.Increase(bytes);
  } else {
    reserved[kStatAll].Decrease(-bytes);
    of_pool.Decrease(-bytes);
  }
}

absl::Status SegmentStore::AddPeerAccess(CacheLock lock, int peer_device) {
  AssertHeld(lock);
  if (std::find(peers_.begin(), peers_.end(), peer_device) != peers_.end()) {
    return absl::OkStatus();
  }
  absl::Status s = backend_.CheckPeer(peer_device);
  // On failure the peer is not recorded; access granted so far is harmless
  // and a retry grants it again.
  if (s.ok()) s = GrantPeer(lock, peer_device);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("AddPeerAccess: ", s.message()));
  peers_.push_back(peer_device);
  return absl::OkStatus();
}

}  // namespace ccalloc
