// growable_regions.cc — what other layers ask of a growable range beyond
// allocating in it: pause/resume of a region (unmap and remap at the same
// addresses), IPC export and peer access, the held-memory queries
// (HeldBytes, HeldBytesIn, HeldStretch, WouldMove, HoldsSlack), Describe and
// the validators. It may call the backend, the chunk calls and marks of
// growable_segments.cc and the leaving/worker calls of growable_moves.cc.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/ipc.h"
#include "allocator/segments/growable_internal.h"
#include "allocator/segments/growable_segments.h"

namespace ccalloc {

using growable_internal::Hex;
using growable_internal::kRegionChunk;

absl::StatusOr<std::size_t> GrowableSegments::Pause(CacheLock lock, Segment& range,
                                                    DevicePtr end) {
  AssertHeld(lock);
  GrowableSegment& segment = Of(range);
  std::size_t released = 0;
  // Old pages of chunks moved away are unmapped first (moves take from the
  // default pool's holes, a region's never, so this is for completeness).
  absl::Status status;
  if (segment.leaving_pages > 0) status = FinishLeaving(/*wait=*/true, &segment);
  if (!status.ok()) return status;
  for (std::size_t i = 0; i < segment.mapped_end;) {
    if (segment.pages[i] == 0) {
      ++i;
      continue;
    }
    const auto [first, last] = segment.ChunkAround(i);
    const DevicePtr va = segment.base + first * page_size_;
    const std::size_t bytes = (last - first) * page_size_;
    if (va + bytes > end) break;  // chunks are in address order
    // A chunk that cannot be unmapped stays mapped and counted: the pause
    // fails there and what was given back so far stays given back.
    if (status = backend_.Unmap(va, bytes); !status.ok()) break;
    const PhysicalHandle handle = segment.pages[i];
    segment.SetPages(first, last - first, 0);
    segment.mapped_pages -= last - first;
    ++cache_.stats().num_unmaps;
    AddReserved(segment.pool, -static_cast<std::int64_t>(bytes));
    released += bytes;
    (void)ReleaseChunk(handle);
    i = last;
  }
  segment.TrimMappedEnd();
  // The memory is back on the device when Pause returns (another job may
  // take it at once).
  absl::Status settled = Settle();
  if (!status.ok()) return status;
  if (!settled.ok()) return settled;
  return released;
}

absl::StatusOr<std::size_t> GrowableSegments::Resume(CacheLock lock, Segment& range) {
  AssertHeld(lock);
  GrowableSegment& segment = Of(range);
  // The pages under every block that is not free, in chunks as Prepare maps
  // them for a region (one per partly covered page, the interior in chunks
  // of at most kRegionChunk): the memory is taken again whatever the slack
  // says.
  std::vector<std::pair<std::size_t, std::size_t>> done;  // (first page, pages)
  absl::Status status;
  for (const Block* b = segment.head; b != nullptr && status.ok(); b = b->next) {
    if (b->state == BlockState::kFree) continue;
    const auto [first, last] = PagesOf(segment, b->ptr, b->size);
    const std::size_t cap = std::max(page_size_, MaxChunk(segment));
    for (std::size_t i = first; i <= last && status.ok();) {
      if (segment.pages[i] != 0) {
        ++i;
        continue;
      }
      std::size_t run = 1;
      while (i + run <= last && segment.pages[i + run] == 0 && (run + 1) * page_size_ <= cap) {
        ++run;
      }
      status = MapChunk(&segment, i, run, 0);
      if (status.ok()) done.emplace_back(i, run);
      i += run;
    }
  }
  if (status.ok()) {
    std::size_t bytes = 0;
    for (const auto& [first, pages] : done) bytes += pages * page_size_;
    return bytes;
  }
  // Nothing of a failed resume stays: the segment is paused as before.
  for (const auto& [first, pages] : done) {
    const DevicePtr va = segment.base + first * page_size_;
    const PhysicalHandle handle = segment.pages[first];
    if (!backend_.Unmap(va, pages * page_size_).ok()) continue;  // stays mapped, counted
    segment.SetPages(first, pages, 0);
    segment.mapped_pages -= pages;
    ++cache_.stats().num_unmaps;
    AddReserved(segment.pool, -static_cast<std::int64_t>(pages * page_size_));
    if (backend_.ReleasePhysical(handle).ok()) ++cache_.stats().num_device_free;
  }
  segment.TrimMappedEnd();
  return status;
}

std::size_t GrowableSegments::HeldBytes(CacheLock lock, const Segment& segment) const {
  return Of(segment).mapped_pages * page_size_;
}

std::size_t GrowableSegments::HeldBytesIn(CacheLock lock, const Segment& range,
                                          DevicePtr begin, DevicePtr end) const {
  // Only the mapped part of a hole is memory held.
  const GrowableSegment& s = Of(range);
  std::size_t held = 0;
  const std::size_t first = PageIndex(begin - s.base);
  const std::size_t last = std::min(PageIndex(end - 1 - s.base) + 1, s.mapped_end);
  s.ForEachHeldRun(first, last, [&](std::size_t i, std::size_t j) {
    held += std::min(end, s.base + j * page_size_) - std::max(begin, s.base + i * page_size_);
  });
  return held;
}

std::pair<DevicePtr, std::size_t> GrowableSegments::HeldStretch(CacheLock lock,
                                                                const Segment& range,
                                                                DevicePtr begin, DevicePtr end,
                                                                std::size_t bytes) const {
  const GrowableSegment& s = Of(range);
  std::pair<DevicePtr, std::size_t> best{0, 0};
  const std::size_t first = PageIndex(begin - s.base);
  const std::size_t last = std::min(PageIndex(end - 1 - s.base) + 1, s.mapped_end);
  s.ForEachHeldRun(first, last, [&](std::size_t i, std::size_t j) {
    const DevicePtr lo = std::max(begin, s.base + i * page_size_);
    const DevicePtr hi = std::min(end, s.base + j * page_size_);
    if (hi - lo >= bytes && (best.second == 0 || hi - lo < best.second)) best = {lo, hi - lo};
  });
  return best;
}

bool GrowableSegments::WouldMove(CacheLock lock, std::size_t bytes) {
  AssertHeld(lock);
  // Prepare's first test (excess_low): memory held past the low mark is
  // moved from under holes before any is created. (NotePeak(0): the request
  // is not counted as allocated yet; Prepare counts it, so this may say no
  // where Prepare then moves a little.)
  const std::size_t peak = NotePeak(0);
  const Slack slack = SlackAt(peak);
  return reserved() + bytes > Mark(peak, slack.low, slack.tight);
}

bool GrowableSegments::HoldsSlack(CacheLock lock) const {
  AssertHeld(lock);
  // Twice the high mark's slack: between the marks and a little past the
  // high one the cache is at a peak or trimming to it (memory another
  // stream still uses cannot go back at once), and placements there decide
  // what the next peak can move.
  const std::size_t peak = KnownPeak();
  const double slack = SlackAt(peak).high;
  const std::size_t mark =
      peak + std::max<std::size_t>(static_cast<std::size_t>(2 * slack * static_cast<double>(peak)),
                                   4 * page_size_);
  return reserved() > mark;
}

void GrowableSegments::Describe(CacheLock lock, const Segment& range,
                                SegmentInfo* info) const {
  const GrowableSegment& segment = Of(range);
  info->mapped_size = segment.mapped_pages * page_size_;
  for (std::size_t i = 0; i < segment.mapped_end; ++i) {
    if (!GrowableSegment::Holds(segment.pages[i])) continue;
    const DevicePtr lo = segment.base + i * page_size_;
    if (!info->mapped_ranges.empty() && info->mapped_ranges.back().second == lo) {
      info->mapped_ranges.back().second = lo + page_size_;
    } else {
      info->mapped_ranges.emplace_back(lo, lo + page_size_);
    }
    // A chunk is a run of pages holding one handle.
    if (i > 0 && segment.pages[i - 1] == segment.pages[i] && !info->chunks.empty() &&
        info->chunks.back().second == lo) {
      info->chunks.back().second = lo + page_size_;
    } else {
      info->chunks.emplace_back(lo, lo + page_size_);
    }
  }
}

std::pair<DevicePtr, std::size_t> GrowableSegments::SharedRange(CacheLock lock,
                                                                const Block& block) const {
  const GrowableSegment& segment = Of(*block.segment);
  // Whole chunks: the driver maps (and so exports) a physical handle only
  // whole. An allocated block's pages are all mapped, so the chunks from the
  // one under its first byte to the one under its last are contiguous.
  const auto [first, last] = PagesOf(segment, block.ptr, block.size);
  const std::size_t begin = segment.ChunkAround(first).first;
  const std::size_t end = segment.ChunkAround(last).second;
  return {segment.base + begin * page_size_, (end - begin) * page_size_};
}

absl::StatusOr<IpcExport> GrowableSegments::ExportIpc(CacheLock lock, const Block& block,
                                                      DevicePtr ptr, const std::string& what) {
  AssertHeld(lock);
  const GrowableSegment& segment = Of(*block.segment);
  const auto [base, size] = SharedRange(lock, block);
  std::vector<IpcChunk> chunks;
  int pid = 0;
  const std::size_t begin = (base - segment.base) / page_size_;
  const std::size_t end = begin + size / page_size_;
  for (std::size_t i = begin; i < end;) {
    const auto [first, last] = segment.ChunkAround(i);
    // Descriptors already made stay with their handles (the backend closes
    // them when the memory is released), so a failure here leaves nothing
    // to undo.
    absl::StatusOr<SharedPhysical> shared = backend_.ExportPhysical(segment.pages[i]);
    if (!shared.ok()) {
      return absl::Status(shared.status().code(),
                          absl::StrCat(what, ": ", shared.status().message()));
    }
    pid = shared->pid;
    chunks.push_back(IpcChunk{(first - begin) * page_size_, (last - first) * page_size_,
                              shared->fd});
    i = last;
  }
  return IpcExport{EncodeGrowableIpcHandle(pid, size, chunks), ptr - base};
}

absl::Status GrowableSegments::GrantPeer(CacheLock lock, int peer_device) {
  AssertHeld(lock);
  // One call per run of contiguous mapped pages: the driver sets access on
  // whole mappings, and several adjacent ones at once.
  const int devices[] = {peer_device};
  // Old mappings kept for a move back have no access for the new peer:
  // they go first.
  if (absl::Status s = FinishLeaving(/*wait=*/true); !s.ok()) return s;
  for (const auto& [base, segment] : ranges_) {
    for (std::size_t i = 0; i < segment->mapped_end;) {
      if (!GrowableSegment::Holds(segment->pages[i])) {
        ++i;
        continue;
      }
      std::size_t run_end = i + 1;
      while (run_end < segment->mapped_end && GrowableSegment::Holds(segment->pages[run_end])) {
        ++run_end;
      }
      if (absl::Status s = backend_.SetAccess(segment->base + i * page_size_,
                                              (run_end - i) * page_size_, devices);
          !s.ok()) {
        return s;
      }
      i = run_end;
    }
  }
  return absl::OkStatus();
}

bool GrowableSegments::ValidateSegment(CacheLock lock, const Segment& range,
                                       std::string* why) const {
  AssertHeld(lock);
  auto fail = [why](std::string message) {
    if (why != nullptr) *why = std::move(message);
    return false;
  };
  if (!range.expandable) {
    return fail(absl::StrCat("segment ", Hex(range.base), ": a classic segment in the "
                             "growable store"));
  }
  const GrowableSegment& segment = Of(range);
  auto it = ranges_.find(segment.base);
  if (it == ranges_.end() || it->second != &segment) {
    return fail(absl::StrCat("segment ", Hex(segment.base), ": not a range of the store"));
  }
  if (segment.pages.size() != segment.size / page_size_) {
    return fail(absl::StrCat("segment ", Hex(segment.base), ": the page table is not the "
                             "range's size"));
  }
  if (segment.live.size() != segment.pages.size()) {
    return fail(absl::StrCat("segment ", Hex(segment.base), ": the live counts do not cover "
                             "the pages"));
  }
  // One walk over the blocks in use: each page's count of them, and (unless
  // the region is paused, its memory given back) memory under each.
  const bool paused = segment.owner != nullptr && segment.owner->paused;
  std::vector<std::uint32_t> live(segment.pages.size(), 0);
  for (const Block* b = segment.head; b != nullptr; b = b->next) {
    if (b->state == BlockState::kFree) continue;
    const auto [first, last] = PagesOf(segment, b->ptr, b->size);
    for (std::size_t i = first; i <= last; ++i) {
      ++live[i];
      if (!paused && !GrowableSegment::Holds(segment.pages[i])) {
        return fail(absl::StrCat("block ", Hex(b->ptr), " in use over a page holding no memory"));
      }
    }
  }
  if (live != segment.live) {
    return fail(absl::StrCat("segment ", Hex(segment.base), ": the count of blocks in use "
                             "on a page is off"));
  }
  return segment.Validate(why);
}

bool GrowableSegments::Validate(CacheLock lock, std::size_t segments,
                                std::string* why) const {
  AssertHeld(lock);
  if (ranges_.size() != segments) {
    if (why != nullptr) {
      *why = absl::StrCat("the growable store knows ", ranges_.size(),
                          " ranges but the cache has ", segments, " segments");
    }
    return false;
  }
  // Every leaving chunk lies on kLeaving pages of a range of the store, and
  // those pages are the leaving chunks'.
  absl::flat_hash_map<const GrowableSegment*, std::size_t> leaving;
  if (!worker_.Validate(why)) return false;
  // Every chunk handed to the worker is a job not yet reaped.
  if (static_cast<std::size_t>(std::count_if(leaving_.begin(), leaving_.end(), [](const Leaving& l) {
        return l.job != 0;
      })) > unreaped_) {
    if (why != nullptr) *why = "more leaving chunks are with the worker than jobs unreaped";
    return false;
  }
  for (const Leaving& l : leaving_) {
    auto it = ranges_.find(l.segment->base);
    const bool ok = it != ranges_.end() && it->second == l.segment && l.pages > 0 &&
                    l.first + l.pages <= l.segment->pages.size() &&
                    std::all_of(l.segment->pages.begin() + static_cast<std::ptrdiff_t>(l.first),
                                l.segment->pages.begin() +
                                    static_cast<std::ptrdiff_t>(l.first + l.pages),
                                [](PhysicalHandle h) { return h == GrowableSegment::kLeaving; });
    if (!ok) {
      if (why != nullptr) {
        *why = absl::StrCat("a leaving chunk at page ", l.first, " of ", Hex(l.segment->base),
                            " is not on leaving pages of a range");
      }
      return false;
    }
    leaving[l.segment] += l.pages;
    // An old mapping waiting for its memory to come back points where the
    // memory is: a range of the store (Return reads it), never one released.
    if (l.job == 0 && !l.release && l.to != nullptr) {
      const bool in_store = std::any_of(ranges_.begin(), ranges_.end(),
                                        [&](const auto& r) { return r.second == l.to; });
      if (!in_store || l.to_first + l.pages > l.to->pages.size()) {
        if (why != nullptr) {
          *why = absl::StrCat("an old mapping at page ", l.first, " of ", Hex(l.segment->base),
                              " points at memory outside the store's ranges");
        }
        return false;
      }
      // ... and the memory is mapped there, as the chunk it was here:
      // Return takes it back from those pages.
      if (!l.to->HoldsChunk(l.to_first, l.pages, l.handle)) {
        if (why != nullptr) {
          *why = absl::StrCat("an old mapping at page ", l.first, " of ", Hex(l.segment->base),
                              " points at page ", l.to_first, " of ", Hex(l.to->base),
                              ", which does not hold its memory");
        }
        return false;
      }
    }
  }
  for (const auto& [base, segment] : ranges_) {
    auto it = leaving.find(segment);
    if (segment->leaving_pages != (it == leaving.end() ? 0 : it->second)) {
      if (why != nullptr) {
        *why = absl::StrCat("segment ", Hex(base), " has ", segment->leaving_pages,
                            " leaving pages but its leaving chunks cover another count");
      }
      return false;
    }
  }
  return true;
}

}  // namespace ccalloc
