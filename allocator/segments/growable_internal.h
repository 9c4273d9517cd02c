// growable_internal.h — private to the growable segments layer: the helpers
// and the Placement record that growable_segments.cc, growable_moves.cc and
// growable_regions.cc share. Nothing outside allocator/segments/growable_*.cc
// includes it; it may use only growable_segments.h and Abseil.
#ifndef CCALLOC_ALLOCATOR_SEGMENTS_GROWABLE_INTERNAL_H_
#define CCALLOC_ALLOCATOR_SEGMENTS_GROWABLE_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/segments/growable_segments.h"

namespace ccalloc {
namespace growable_internal {

constexpr std::size_t RoundUp(std::size_t size, std::size_t multiple) {
  return (size + multiple - 1) / multiple * multiple;
}

inline std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

// The largest chunk a region maps (see Prepare): 16 GiB of a paused region
// then costs 256 unmaps and as many maps to resume.
inline constexpr std::size_t kRegionChunk = std::size_t{64} << 20;

}  // namespace growable_internal

// The runs of missing pages of the block being prepared and the chunks taken
// for them: a chunk goes to a run of exactly its size. (Filling larger runs
// with smaller chunks reuses more but cuts the runs into more, smaller
// chunks, which every later move pays for: on the bundled traces it raised
// the steady driver calls by a quarter for no memory gained.)
struct GrowableSegments::Placement {
  struct Run {
    std::size_t first, pages, filled;
  };
  struct Move {
    PhysicalHandle handle;
    std::size_t dest, pages;
    // Where it was still mapped (Leaving), else null.
    GrowableSegment* from;
    std::size_t from_first;
  };
  std::vector<Run> runs;
  std::vector<Move> moves;

  // An empty run of exactly `pages`: the chunk maps as the one handle the
  // run would have had. With `partial`, else the run with the least room
  // left that has room for it: the run then maps as several handles.
  Run* Fit(std::size_t pages, bool partial = false) {
    for (Run& r : runs) {
      if (r.filled == 0 && r.pages == pages) return &r;
    }
    if (!partial) return nullptr;
    Run* best = nullptr;
    for (Run& r : runs) {
      const std::size_t room = r.pages - r.filled;
      if (room >= pages && (best == nullptr || room < best->pages - best->filled)) best = &r;
    }
    return best;
  }
  void Add(Run* run, PhysicalHandle handle, std::size_t pages, GrowableSegment* from,
           std::size_t from_first) {
    moves.push_back(Move{handle, run->first + run->filled, pages, from, from_first});
    run->filled += pages;
  }
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SEGMENTS_GROWABLE_INTERNAL_H_
