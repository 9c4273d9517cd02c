// region.cc — the calling thread's current region (see block_pool.h).
#include <utility>

#include "allocator/cache/block_pool.h"

namespace ccalloc {
namespace {
thread_local RegionId current_region = 0;
}  // namespace

RegionId CurrentRegion() { return current_region; }
RegionId SetCurrentRegion(RegionId region) { return std::exchange(current_region, region); }

}  // namespace ccalloc
