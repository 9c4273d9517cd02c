// growable_segments.cc — see growable_segments.h for the design.
#include "allocator/segments/growable_segments.h"

#include <algorithm>
#include <bit>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "allocator/ipc.h"

namespace ccalloc {
namespace {

constexpr std::size_t RoundUp(std::size_t size, std::size_t multiple) {
  return (size + multiple - 1) / multiple * multiple;
}

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

// The largest chunk a region maps (see Prepare): 16 GiB of a paused region
// then costs 256 unmaps and as many maps to resume.
constexpr std::size_t kRegionChunk = std::size_t{64} << 20;

std::size_t RangeSize(DeviceBackend& backend, std::size_t page_size) {
  // One range per stream and pool as large as the device: address space is
  // cheap, and a range that never runs out means its blocks always coalesce.
  std::size_t total = 64 * kGiB;
  if (absl::StatusOr<DeviceMemoryInfo> info = backend.MemoryInfo(); info.ok()) {
    total = info->total_bytes;
  }
  return RoundUp(std::max(total, page_size), page_size);
}

// Near the end of the cache's memory (GrowableSegments::SlackAt) the marks
// are at most these: reserved within 1% of the peak allocated with room for
// page rounding, and a trim waits for queued work past 0.8% (Options,
// release_slack: what each mark costs and buys; these were the defaults
// until the loose marks were measured against them, docs/steady_state.md).
constexpr double kTightSlack = 0.005;
constexpr double kTightSlackMax = 0.008;
constexpr double kTightSlackHard = 0.0095;
// ... from where memory held up to the hard mark past the peak would pass
// this fraction of the memory limit (or of the device's memory): the last
// tenth is where a growth that meets held memory must wait to trim it or
// fail, and where another process's memory on the same device begins.
constexpr double kRoomyUpTo = 0.9;
// ... where chunks mapped are at most this large (max_map_chunk_mb says why
// small chunks hold memory tighter).
constexpr std::size_t kTightChunk = std::size_t{4} << 20;

}  // namespace

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

bool GrowableSegment::Validate(std::string* why) const {
  auto fail = [&](absl::string_view problem) {
    if (why != nullptr) *why = absl::StrCat("segment ", Hex(base), ": ", problem);
    return false;
  };
  std::size_t mapped = 0;
  std::size_t leaving = 0;
  for (PhysicalHandle h : pages) {
    mapped += Holds(h);
    leaving += h == kLeaving;
  }
  if (mapped != mapped_pages) return fail("mapped page count is off");
  if (leaving != leaving_pages) return fail("leaving page count is off");
  if (freed.size() != pages.size()) return fail("free stamps do not cover the pages");
  if (held.size() != (pages.size() + 63) / 64) return fail("the held bits do not cover the pages");
  for (std::size_t p = 0; p < pages.size(); ++p) {
    if (((held[p / 64] >> (p % 64)) & 1) != static_cast<std::uint64_t>(Holds(pages[p]))) {
      return fail(absl::StrCat("page ", p, "'s held bit disagrees with its entry"));
    }
  }
  const std::size_t end = mapped_end;
  if (end > pages.size() || (end > 0 && pages[end - 1] == 0) ||
      std::any_of(pages.begin() + static_cast<std::ptrdiff_t>(end), pages.end(),
                  [](PhysicalHandle h) { return h != 0; })) {
    return fail("mapped_end is off");
  }
  return true;
}

namespace {

// The bits [lo, hi) of word `w` of a page bitmap (lo < hi, in pages).
std::uint64_t WordMask(std::size_t w, std::size_t lo, std::size_t hi) {
  const std::size_t from = std::max(lo, w * 64) - w * 64;
  const std::size_t to = std::min(hi, (w + 1) * 64) - w * 64;
  const std::uint64_t upto = to == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << to) - 1;
  return upto & ~((std::uint64_t{1} << from) - 1);
}

}  // namespace

void GrowableSegment::SetPages(std::size_t first, std::size_t n, PhysicalHandle h) {
  if (n == 0) return;
  std::fill_n(pages.begin() + static_cast<std::ptrdiff_t>(first), n, h);
  const bool holds = Holds(h);
  for (std::size_t w = first / 64; w <= (first + n - 1) / 64; ++w) {
    const std::uint64_t mask = WordMask(w, first, first + n);
    held[w] = holds ? held[w] | mask : held[w] & ~mask;
  }
}

std::size_t GrowableSegment::HeldIn(std::size_t first, std::size_t last) const {
  std::size_t n = 0;
  for (std::size_t w = first / 64; w <= last / 64; ++w) {
    n += static_cast<std::size_t>(std::popcount(held[w] & WordMask(w, first, last + 1)));
  }
  return n;
}

std::size_t GrowableSegment::NextRun(std::size_t from, std::size_t limit, bool holding) const {
  for (std::size_t p = from; p < limit;) {
    // The word's bits from p on, flipped where the run sought is of pages
    // that do not hold: the first set bit is the answer.
    std::uint64_t bits = held[p / 64] >> (p % 64);
    if (!holding) bits = ~bits & (~std::uint64_t{0} >> (p % 64));
    if (bits != 0) return std::min(limit, p + static_cast<std::size_t>(std::countr_zero(bits)));
    p = (p / 64 + 1) * 64;
  }
  return limit;
}

bool GrowableSegment::AllHeld(std::size_t first, std::size_t last) const {
  for (std::size_t w = first / 64; w <= last / 64; ++w) {
    const std::uint64_t mask = WordMask(w, first, last + 1);
    if ((held[w] & mask) != mask) return false;
  }
  return true;
}

GrowableSegments::GrowableSegments(absl::Mutex& mu, SegmentCache& cache,
                                   DeviceBackend& backend, const Options& options)
    : SegmentStore(mu, cache, backend, options),
      page_size_(backend.PageSize()),
      page_shift_(std::has_single_bit(page_size_) ? std::countr_zero(page_size_) : -1),
      va_size_(RangeSize(backend, page_size_)),
      worker_(backend, options.background_unmap) {}

absl::StatusOr<std::unique_ptr<Segment>> GrowableSegments::Create(CacheLock lock,
                                                                  std::size_t rounded,
                                                                  StreamId stream,
                                                                  PoolKind pool,
                                                                  PrivatePool* owner) {
  AssertHeld(lock);
  // A range is reserved (and a page table built) for the request itself
  // only when the device could ever back it.
  const std::size_t limit = cache_.reserve_limit();
  if (rounded > va_size_ || (limit > 0 && rounded > limit)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the request is larger than the device's memory (", FormatBytes(va_size_), ")",
        limit > 0 ? absl::StrCat(" or the memory limit (", FormatBytes(limit), ")") : ""));
  }
  const std::size_t size = std::max(va_size_, RoundUp(rounded, page_size_));
  absl::StatusOr<DevicePtr> base = backend_.ReserveAddressRange(size);
  if (!base.ok()) return base.status();
  auto segment = std::make_unique<GrowableSegment>();
  segment->base = *base;
  segment->size = size;
  segment->stream = stream;
  segment->pool = pool;
  segment->expandable = true;
  segment->owner = owner;
  segment->pages.assign(size / page_size_, 0);
  segment->held.assign((segment->pages.size() + 63) / 64, 0);
  segment->freed.assign(size / page_size_, 0);
  segment->live.assign(size / page_size_, 0);
  ranges_.emplace(segment->base, segment.get());
  return segment;
}

bool GrowableSegments::Ready(CacheLock lock, const Segment& range, DevicePtr begin,
                             std::size_t bytes) {
  AssertHeld(lock);
  // What Prepare would do for a block on memory already mapped: apply the
  // worker's results or hand it old mappings (then not ready), unpin the
  // block's edges when beyond the high mark (not ready), note the peak.
  // A cached allocation asks only this (the hot pair: ~20 ns less host time
  // than through Place and Prepare on the simulated card).
  if (unreaped_ > 0 || (!leaving_.empty() && !options_.keep_old_mappings)) {
    return false;
  }
  const GrowableSegment& segment = Of(range);
  const auto [first, last] = PagesOf(segment, begin, bytes);
  if (!segment.AllHeld(first, last)) return false;
  const std::size_t peak = NotePeak(bytes);
  const std::size_t held = reserved();
  const std::size_t limit = cache_.reserve_limit();
  if (limit > 0 && held > limit) return false;
  // Within the high mark, so that Prepare would unpin nothing. Memory held
  // once already is within it (Mark): the usual case, decided without the
  // floating-point mark (a sixth of a hot allocate+free pair's host time).
  if (options_.hold_reserved && held <= held_) return true;
  const Slack slack = SlackAt(peak);
  return held <= Mark(peak, slack.high, slack.tight);
}

std::size_t GrowableSegments::NotePeak(std::size_t bytes) {
  const MemoryStats& stats = cache_.stats();
  peak_allocated_ = std::max(
      {peak_allocated_, static_cast<std::size_t>(stats.allocated_bytes[kStatAll].peak),
       static_cast<std::size_t>(stats.allocated_bytes[kStatAll].current) + bytes});
  return peak_allocated_;
}

std::size_t GrowableSegments::PeakMark(std::size_t peak, double slack) const {
  return peak + std::max<std::size_t>(static_cast<std::size_t>(slack * static_cast<double>(peak)),
                                      2 * page_size_);
}

GrowableSegments::Slack GrowableSegments::SlackAt(std::size_t peak) const {
  const double low = options_.release_slack;
  const double high = std::max(low, options_.release_slack_max);
  const double hard = std::max(high, options_.release_slack_hard);
  if (RoomyAt(peak, hard)) return Slack{low, high, hard, /*tight=*/false};
  return Slack{std::min(low, kTightSlack), std::min(high, kTightSlackMax),
               std::min(hard, kTightSlackHard), /*tight=*/true};
}

bool GrowableSegments::RoomyAt(std::size_t peak, double hard) const {
  if (ran_short_) return false;
  // The end of the cache's memory: the memory limit where one is set, the
  // device's memory (what each range reserves) otherwise.
  const std::size_t limit = cache_.reserve_limit();
  const std::size_t end = limit > 0 ? std::min(limit, va_size_) : va_size_;
  return static_cast<double>(PeakMark(peak, hard)) <= kRoomyUpTo * static_cast<double>(end);
}

bool GrowableSegments::Roomy(CacheLock lock) const {
  AssertHeld(lock);
  const double hard = std::max(
      {options_.release_slack, options_.release_slack_max, options_.release_slack_hard});
  // Marks set as tight as the tight ones hold memory tight everywhere: no
  // room is left to spend on placements either.
  if (hard <= kTightSlackHard) return false;
  return RoomyAt(std::max(peak_allocated_, static_cast<std::size_t>(
                                               cache_.stats().allocated_bytes[kStatAll].peak)),
                 hard);
}

std::size_t GrowableSegments::Mark(std::size_t peak, double slack, bool tight) const {
  const std::size_t mark = PeakMark(peak, slack);
  if (!options_.hold_reserved) return mark;
  // Memory already held once since the cache was last emptied (held_) is
  // taken again freely: it raises no peak, and a cache that gives back what
  // it will take again soon pays a move (an unmap and a map) for each give
  // and take. Near the end of memory only up to the tight hard mark: what
  // was held while there was room goes back as the cache grows.
  const std::size_t held = tight ? std::min(held_, PeakMark(peak, kTightSlackHard)) : held_;
  return std::max(mark, held);
}

absl::Status GrowableSegments::Prepare(CacheLock lock, Segment& range, const Block& hole,
                                       DevicePtr begin, std::size_t bytes) {
  AssertHeld(lock);
  GrowableSegment* segment = &Of(range);
  const std::pair<std::size_t, std::size_t> touched = PagesOf(*segment, begin, bytes);
  const std::size_t first = touched.first, last = touched.second;
  // Whether the block covers its first and last pages only in part.
  const bool first_partial = !PageAligned(begin - segment->base);
  const bool last_partial = !PageAligned(begin + bytes - segment->base);
  // The worker's finished unmaps are applied, and chunks moved away whose
  // old work has finished are handed to it (event queries only; a failure
  // leaves them for later). Those under this block must be unmapped before
  // it is handed out, waiting if need be (the block lands where a chunk just
  // left).
  // A placement that waits for pages under it or maps memory counts its
  // host time from there (prepare_ns); one that does neither reads no clock.
  // Old mappings kept (keep_old_mappings) are not handed to the worker:
  // they wait here for a block that wants their memory back.
  std::optional<ElapsedNs> timed;
  if (unreaped_ > 0 || (!leaving_.empty() && !options_.keep_old_mappings)) {
    (void)FinishLeaving(/*wait=*/false);
  }
  if (segment->LeavingIn(first, last)) {
    timed.emplace(&cache_.stats().prepare_ns);
    // A move's old mapping under the block takes its memory back when it is
    // free where it went (the step after a move often wants the old place
    // again): no driver call, no wait. The rest are unmapped first.
    if (options_.keep_old_mappings && !cache_.capturing()) {
      // Only a chunk wholly under the block (the rest of one reaching past
      // it would stay pinned by the block until it is freed), and one of
      // several pages not over a page the block covers only partly (a
      // neighbour there would pin the rest: such pages get a chunk each).
      for (Leaving& l : leaving_) {
        if (l.segment == segment &&
            TakeableUnder(l, first, last, first_partial, last_partial)) {
          (void)Return(l, segment, first, last);
        }
      }
    }
    // The rest whose work is done are unmapped here, on this thread: the
    // block needs the pages now, and handing them to the worker would add
    // its queue to the wait. Those still in use, and any unmap that fails
    // here, go the worker's way (FinishLeaving waits for them).
    // (One pass that keeps the rest in order: erasing each record as it
    // went moved the whole list every time, most of a placement's own host
    // instructions where many old mappings are kept.)
    if (segment->LeavingIn(first, last) && !cache_.capturing()) {
      auto kept = leaving_.begin();
      for (auto it = leaving_.begin(); it != leaving_.end(); ++it) {
        Leaving& l = *it;
        const bool unmapped =
            l.Under(segment, first, last) && l.job == 0 && !l.release &&
            cache_.FreeCompleted(l.stream, l.freed_at) &&
            UnmapHere(segment->base + l.first * page_size_, l.pages * page_size_).ok();
        if (unmapped) {
          segment->Unmapped(l.first, l.pages);
          continue;
        }
        if (kept != it) *kept = std::move(*it);
        ++kept;
      }
      leaving_.erase(kept, leaving_.end());
      segment->TrimMappedEnd();
    }
    if (segment->LeavingIn(first, last)) {
      MemoryStats& stats = cache_.stats();
      const std::int64_t waits_before = stats.num_waits_under_block;
      absl::Status s = FinishLeaving(/*wait=*/true, segment, first, last);
      stats.wait_under_block_bytes +=
          (stats.num_waits_under_block - waits_before) * static_cast<std::int64_t>(bytes);
      if (!s.ok()) return s;
    }
  }
  // Budget, between a low and a high mark. New memory is taken while the
  // cache of free mapped memory stays within release_slack of the peak
  // allocated (the hysteresis that lets steady training steps map nothing).
  // Beyond it, wholly free chunks whose frees are known to have finished are
  // moved from under holes: the allocation path never waits for queued
  // work, so the GPU keeps its queue and the driver calls overlap its work.
  // Beyond release_slack_max (or the memory limit) chunks of holes of the
  // block's own stream move too, left mapped where they were until their
  // work is done; only with nothing else to take does a trim wait, for as
  // little of the queue as it can.
  const std::size_t peak = NotePeak(bytes);
  const Slack slack = SlackAt(peak);
  const std::size_t low_mark = Mark(peak, slack.low, slack.tight);
  const std::size_t high_mark = Mark(peak, slack.high, slack.tight);
  const std::size_t limit = cache_.reserve_limit();
  std::size_t missing = 0, need = 0, excess_low = 0, excess_high = 0;
  // (held is read by the caller: the lambda is outside the lock analysis.)
  auto budget = [&](std::size_t held) {
    // (Through a local pointer: the compiler cannot tell that the stores
    // to missing do not move the table, and reloads it every page.)
    const PhysicalHandle* pages = segment->pages.data();
    missing = static_cast<std::size_t>(
        std::count(pages + first, pages + last + 1, PhysicalHandle{0}));
    need = missing * page_size_;
    auto over = [&](std::size_t cap) { return held + need > cap ? held + need - cap : 0; };
    excess_low = over(low_mark);
    excess_high = over(high_mark);
    if (limit > 0) excess_high = std::max(excess_high, over(limit));
  };
  budget(reserved());
  // Chunks taken from under free holes are mapped again where a run of
  // missing pages has room for them (saving a release and a create); the
  // rest go back to the device before any new memory is created, so the
  // device never holds more than the counters say. On failure part of the
  // chunks may already be taken into `place`: they go back below.
  // Beyond the high mark no block pins free memory at its edges: the free
  // rest of a chunk it would share with its hole can never be moved while
  // the block lives, and what cannot be moved is what pushes the device
  // past the mark when the next peak wants memory. Below the mark the block
  // just takes the mapped pages: unpinning there would buy tighter memory
  // the marks do not ask for with two driver calls more each time (it was
  // the unpin_edges_mb option, 0 by default, never measured on a GPU to
  // pay for them).
  std::vector<std::pair<PhysicalHandle, std::size_t>> spares;
  if (excess_high > 0 && !cache_.capturing()) {
    UnpinEdges(segment, hole, begin, bytes, &spares);
    if (!spares.empty()) budget(reserved());
  }
  if (missing == 0) {
    for (const auto& [handle, pages] : spares) {
      (void)ReleaseChunk(handle);
    }
    return absl::OkStatus();
  }
  // From here on the placement makes driver calls: its host time is counted.
  if (!timed) timed.emplace(&cache_.stats().prepare_ns);
  // A capture refuses unmapping: the slack is exceeded for now and trimmed
  // by the first growth after it (the memory limit still holds in MapChunk).
  if (cache_.capturing()) excess_low = excess_high = 0;
  // The runs of missing pages to map. Pages the block covers only partly get
  // a handle of their own, so that a neighbour keeping one alive never pins
  // the rest; the pages wholly inside the block share chunks, because the
  // driver's cost is per handle (on an H200: ~30 us per 2 MiB handle mapped,
  // ~140 us for one 1 GiB handle).
  // A chunk is pinned as a whole by any block that later overlaps part of
  // it, so chunks stay small: at most max_map_chunk (Options says what it
  // costs), and no larger than the block. (The map_chunk_divisor option,
  // 1 by default, could cap them at a fraction of the block too: more
  // handles for less pinned, never chosen over max_map_chunk_mb.)
  // Regions are the exception: their blocks are long-lived (weights,
  // optimizer state), so pinning is rare, while every chunk costs a call on
  // each pause and resume; they map chunks of up to kRegionChunk.
  // Near the end of memory (slack.tight) at most kTightChunk: what a live
  // block pins there is what a later peak cannot get back.
  std::size_t max_chunk = MaxChunk(*segment);
  if (slack.tight && !IsRegion(*segment)) max_chunk = std::min(max_chunk, kTightChunk);
  std::size_t chunk_cap = std::max(page_size_, std::min(max_chunk, bytes));
  Placement place;
  for (std::size_t i = first; i <= last;) {
    if (segment->pages[i] != 0) {
      ++i;
      continue;
    }
    std::size_t run = 1;
    const bool edge = (i == first && first_partial) || (i == last && last_partial);
    if (!edge) {
      while (i + run <= last && segment->pages[i + run] == 0 &&
             !(i + run == last && last_partial) && run * page_size_ < chunk_cap) {
        ++run;
      }
    }
    place.runs.push_back(Placement::Run{i, run, 0});
    i += run;
  }
  for (const auto& [handle, pages] : spares) {
    if (Placement::Run* run = place.Fit(pages)) {
      place.Add(run, handle, pages, nullptr, 0);
    } else {
      (void)ReleaseChunk(handle);
    }
  }

  absl::Status status;
  // Holes of the default pool are what gets trimmed, whichever pool the
  // block is in.
  std::size_t moved = 0;
  if (excess_low > 0) {
    absl::StatusOr<std::size_t> n =
        UnmapFreeChunks(std::min(excess_low, need), begin, begin + bytes, &place, segment,
                        /*owner=*/nullptr, /*wait=*/false);
    if (n.ok()) moved = *n;
    status = n.status();
  }
  if (status.ok() && excess_high > moved) {
    // The whole excess, not only what this block maps: memory held past the
    // mark (a capture, or pinned memory that nothing could replace) goes
    // back at the first growth that can give it. Up to the hard mark (and
    // the memory limit) what only a wait could give stays held instead
    // (release_slack_hard): memory ends at most that far past the peak, and
    // the GPU's queue is not drained for a page or two. The hard mark is
    // the peak's own, not memory held once (hold_reserved), so held memory
    // never climbs on it.
    const std::size_t hard_mark = PeakMark(peak, slack.hard);
    std::size_t unwaited = hard_mark > high_mark ? hard_mark - high_mark : 0;
    if (limit > 0) unwaited = std::min(unwaited, limit > high_mark ? limit - high_mark : 0);
    status = UnmapFreeChunks(excess_high - moved, begin, begin + bytes, &place, segment,
                             /*owner=*/nullptr, /*wait=*/true, unwaited)
                 .status();
  }
  // The chunks taken go where they fit and new memory fills the rest of
  // each run; pieces that follow each other are mapped as one stretch with
  // one access call (MapChunks: the access is what the driver charges for,
  // ~17 us a call and ~32 us a handle on an H100). New memory is created
  // first, so that a refusal maps nothing. Whatever is not mapped goes back:
  // a chunk moved from where it is still mapped (leaving) to there, the rest
  // to the device.
  struct Piece {
    std::size_t first, pages;
    PhysicalHandle handle;
    const Placement::Move* move;  // null: new memory
  };
  std::vector<Piece> pieces;
  std::size_t mapped = 0;  // pieces [0, mapped) are mapped
  if (!status.ok()) {
    for (const Placement::Move& m : place.moves) {
      if (m.from != nullptr) {
        UndoLeaving(m.from, m.from_first);
      } else {
        (void)ReleaseChunk(m.handle);
      }
    }
  } else {
    std::size_t pending = 0;  // bytes about to be counted again, or anew
    for (const Placement::Move& m : place.moves) {
      pieces.push_back(Piece{m.dest, m.pages, m.handle, &m});
      pending += m.pages * page_size_;
    }
    for (const Placement::Run& r : place.runs) {
      if (r.filled >= r.pages) continue;
      const std::size_t pages = r.pages - r.filled;
      absl::StatusOr<PhysicalHandle> handle = CreateChunk(pages * page_size_, pending);
      if (!handle.ok()) {
        status = handle.status();
        break;
      }
      pieces.push_back(Piece{r.first + r.filled, pages, *handle, nullptr});
      pending += pages * page_size_;
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.first < b.first; });

    std::vector<DeviceBackend::ChunkToMap> stretch;
    while (status.ok() && mapped < pieces.size()) {
      std::size_t end = mapped + 1;
      while (end < pieces.size() &&
             pieces[end].first == pieces[end - 1].first + pieces[end - 1].pages) {
        ++end;
      }
      stretch.clear();
      for (std::size_t k = mapped; k < end; ++k) {
        stretch.push_back(DeviceBackend::ChunkToMap{pieces[k].pages * page_size_, pieces[k].handle});
      }
      worker_.NoteForegroundCall();  // the worker's unmaps wait until these are done
      {
        const ElapsedNs timed(&cache_.stats().map_ns);
        status = backend_.MapChunks(segment->base + pieces[mapped].first * page_size_, stretch,
                                    peers_);
      }
      if (!status.ok()) break;
      for (std::size_t k = mapped; k < end; ++k) {
        CommitChunk(segment, pieces[k].first, pieces[k].pages, pieces[k].handle,
                    /*moved=*/pieces[k].move != nullptr);
      }
      mapped = end;
    }
    for (std::size_t k = mapped; k < pieces.size(); ++k) {
      const Placement::Move* m = pieces[k].move;
      if (m != nullptr && m->from != nullptr) {
        UndoLeaving(m->from, m->from_first);
      } else {
        (void)ReleaseChunk(pieces[k].handle);
      }
    }
  }
  worker_.NoteForegroundCall();  // the quiet time starts after the last call
  return status;
}

bool GrowableSegments::IsRegion(const GrowableSegment& segment) {
  return segment.owner != nullptr && segment.owner->region;
}

std::size_t GrowableSegments::MaxChunk(const GrowableSegment& segment) const {
  return IsRegion(segment) ? std::max(options_.max_map_chunk, kRegionChunk)
                           : options_.max_map_chunk;
}

void GrowableSegments::UnpinEdges(GrowableSegment* segment, const Block& hole, DevicePtr begin,
                                  std::size_t bytes,
                                  std::vector<std::pair<PhysicalHandle, std::size_t>>* spares) {
  // A block that starts or ends inside a mapped chunk reaching past it into
  // the same free hole would pin the rest of that chunk until the block is
  // freed. Then the chunk (wholly free, its frees finished: never a wait)
  // is unmapped now and the block's part mapped again on its own: two calls
  // more, that memory kept movable.
  const std::size_t hole_lo = RoundUp(hole.ptr - segment->base, page_size_) / page_size_;
  const std::size_t hole_hi = (hole.end() - segment->base) / page_size_;
  const auto [first, last] = PagesOf(*segment, begin, bytes);
  for (const std::size_t page : {first, last}) {
    if (page >= segment->mapped_end || !GrowableSegment::Holds(segment->pages[page])) continue;
    const auto [lo, hi] = segment->ChunkAround(page);
    if (lo < hole_lo || hi > hole_hi) continue;  // a live neighbour pins it already
    const std::size_t used = std::min(hi, last + 1) - std::max(lo, first);
    if (used == hi - lo) continue;  // no rest to pin
    // The chunk's frees are asked about (an event query, perhaps a mark
    // left on its stream) only for a chunk worth unmapping: most blocks
    // share none with their hole, and beyond the high mark every Prepare
    // gets here.
    if (!cache_.FreeCompleted(hole.segment->stream, segment->FreedAt(lo, hi))) continue;
    const DevicePtr va = segment->base + lo * page_size_;
    const std::size_t chunk = (hi - lo) * page_size_;
    const PhysicalHandle handle = segment->pages[page];
    // A failed unmap leaves the chunk mapped and counted: it only stays pinned.
    // (Made here: the block's own pages are mapped again right after.)
    if (!UnmapHere(va, chunk).ok()) return;
    segment->SetPages(lo, hi - lo, 0);
    segment->mapped_pages -= hi - lo;
    segment->TrimMappedEnd();
    AddReserved(segment->pool, -static_cast<std::int64_t>(chunk));
    spares->emplace_back(handle, hi - lo);
    if (first == last) break;
  }
}

absl::Status GrowableSegments::UnmapHere(DevicePtr va, std::size_t bytes) {
  worker_.NoteForegroundCall();
  MemoryStats& stats = cache_.stats();
  absl::Status s;
  {
    const ElapsedNs timed(&stats.foreground_unmap_ns);
    s = backend_.Unmap(va, bytes);
  }
  if (s.ok()) {
    ++stats.num_unmaps;
    ++stats.num_foreground_unmaps;
  }
  return s;
}

absl::StatusOr<PhysicalHandle> GrowableSegments::CreateChunk(std::size_t bytes,
                                                             std::size_t pending) {
  if (!WithinLimit(pending + bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the memory limit (", FormatBytes(cache_.reserve_limit()), ") would be exceeded"));
  }
  worker_.NoteForegroundCall();
  absl::StatusOr<PhysicalHandle> handle;
  {
    const ElapsedNs timed(&cache_.stats().create_ns);
    handle = backend_.CreatePhysical(bytes);
  }
  if (!handle.ok() && absl::IsResourceExhausted(handle.status()) && unreaped_ > 0) {
    // Memory the worker has still to give back (counted as gone) is waited for.
    (void)Settle();
    const ElapsedNs timed(&cache_.stats().create_ns);
    handle = backend_.CreatePhysical(bytes);
  }
  if (!handle.ok()) {
    // The device ran short (another process, or memory outside the cache):
    // from now on the cache holds memory tight (SlackAt).
    if (absl::IsResourceExhausted(handle.status())) ran_short_ = true;
    return handle.status();
  }
  ++cache_.stats().num_device_alloc;
  return handle;
}

void GrowableSegments::CommitChunk(GrowableSegment* segment, std::size_t first_page,
                                   std::size_t pages, PhysicalHandle handle, bool moved) {
  segment->SetPages(first_page, pages, handle);
  segment->mapped_pages += pages;
  segment->mapped_end = std::max(segment->mapped_end, first_page + pages);
  // Old mappings of moved memory follow it (Return takes it from here);
  // new memory has none.
  if (moved) Retarget(handle, segment, first_page);
  ++cache_.stats().num_maps;
  AddReserved(segment->pool, static_cast<std::int64_t>(pages * page_size_));
  // A capture's growth is not held: it goes back at the first growth after.
  if (!cache_.capturing()) held_ = std::max(held_, reserved());
}

absl::Status GrowableSegments::MapChunk(GrowableSegment* segment, std::size_t first_page,
                                        std::size_t pages, PhysicalHandle reuse,
                                        bool release_reuse) {
  const std::size_t bytes = pages * page_size_;
  absl::StatusOr<PhysicalHandle> handle = reuse;
  if (reuse == 0) handle = CreateChunk(bytes, 0);
  if (!handle.ok()) return handle.status();
  const DevicePtr va = segment->base + first_page * page_size_;
  worker_.NoteForegroundCall();  // the worker's unmaps wait until these are done
  absl::Status mapped;
  {
    const ElapsedNs timed(&cache_.stats().map_ns);
    mapped = backend_.Map(va, bytes, *handle);
    // Peers given access (AddPeerAccess) get it on every new mapping too.
    if (mapped.ok() && !peers_.empty()) {
      mapped = backend_.SetAccess(va, bytes, peers_);
      if (!mapped.ok()) (void)backend_.Unmap(va, bytes);
    }
  }
  if (!mapped.ok()) {
    // A chunk that could not be mapped goes straight back: nothing is left
    // half-mapped and nothing leaks (one still mapped elsewhere stays with
    // the caller).
    if (reuse == 0 || release_reuse) (void)ReleaseChunk(*handle);
    return mapped;
  }
  CommitChunk(segment, first_page, pages, *handle, /*moved=*/reuse != 0);
  return absl::OkStatus();
}

absl::StatusOr<std::size_t> GrowableSegments::Trim(CacheLock lock, PrivatePool* owner) {
  AssertHeld(lock);
  // Unmaps handed to the worker by earlier calls first. A failure among them
  // was that call's, and its chunk is held (free) again and trimmed below
  // like any other: not this trim's failure.
  (void)Settle();
  // Old pages of moved chunks next: they hold no memory but their ranges
  // could not be released while mapped.
  if (absl::Status s = FinishLeaving(/*wait=*/true); !s.ok()) return s;
  absl::StatusOr<std::size_t> released = UnmapFreeChunks(
      static_cast<std::size_t>(-1), 0, 0, nullptr, nullptr, owner, /*wait=*/true);
  // A trim (empty_cache, the OOM ladder) returns with the memory back on
  // the device, not on its way there.
  absl::Status settled = Settle();
  // What was given back is not taken again freely: the hold starts over
  // from what is left (never above what was held: a capture's excess
  // still goes at the next growth).
  held_ = std::min(held_, reserved());
  if (!released.ok()) return released.status();
  if (!settled.ok()) return settled;
  return released;
}

absl::Status GrowableSegments::Quiesce(CacheLock lock) {
  AssertHeld(lock);
  (void)Settle();  // earlier calls' unmaps (as in Trim)
  // Old mappings of moved memory are unmapped now, nothing being left to a
  // capture (which refuses unmapping). What fails stays as it was and is
  // tried again after the capture: an old mapping still mapped holds no
  // memory (a block is placed past its pages during the capture, Place, and
  // refused cleanly only where no free block has room past them), memory
  // whose unmap or release failed stays held and counted.
  // None of it makes a capture unsafe, so none of it stops one (with
  // keep_old_mappings most moves leave such a mapping until here).
  (void)FinishLeaving(/*wait=*/true);
  (void)Settle();
  return absl::OkStatus();
}

absl::Status GrowableSegments::FinishBackground(CacheLock lock) {
  AssertHeld(lock);
  return Settle();
}

absl::Status GrowableSegments::FinishLeaving(bool wait, const GrowableSegment* only,
                                             std::size_t first, std::size_t last) {
  auto wanted = [&](const Leaving& l) {
    return only == nullptr || l.Under(only, first, last);
  };
  absl::Status status = Reap();
  if (cache_.capturing()) {
    // A capture refuses unmapping (Quiesce ran before it began, so this is
    // only a block that would need some unmapped during one).
    if (wait && std::any_of(leaving_.begin(), leaving_.end(), wanted)) {
      return absl::FailedPreconditionError(
          "memory moved away is still mapped here and a stream capture refuses unmapping");
    }
    return status;
  }
  // Kept old mappings stay until a block wants their pages or a trim, and
  // memory going back is handed to the worker when it is taken (Retire):
  // with keep_old_mappings nothing here needs a look unless a block waits.
  if (!wait && options_.keep_old_mappings) return status;
  std::uint64_t wait_for = 0;
  for (Leaving& l : leaving_) {
    if (!wanted(l)) continue;
    if (l.job == 0) {
      if (!wait && !cache_.FreeCompleted(l.stream, l.freed_at)) continue;
      if (absl::Status s = SubmitWhenDone(l, WaitSite::kUnderBlock); !s.ok()) return s;
    }
    wait_for = std::max(wait_for, l.job);
  }
  if (!wait || wait_for == 0) return status;
  {
    const ElapsedNs waited(&cache_.stats().wait_ns);
    worker_.WaitFor(wait_for);
  }
  absl::Status reaped = Reap();
  // What is still leaving there is a chunk whose unmap failed (kept, tried
  // again later). A chunk going back whose unmap failed is mapped and held
  // there again: nothing is in the way then.
  if (std::any_of(leaving_.begin(), leaving_.end(), wanted)) {
    return reaped.ok() ? absl::InternalError("a chunk moved away could not be unmapped") : reaped;
  }
  // For pages a caller wants free, failures elsewhere are not its concern
  // (they are kept and tried again).
  if (only != nullptr) return absl::OkStatus();
  return status.ok() ? reaped : status;
}

absl::Status GrowableSegments::WaitForFree(StreamId stream, std::uint64_t freed_at,
                                           WaitSite site) {
  MemoryStats& stats = cache_.stats();
  const std::int64_t ns_before = stats.wait_ns;
  const std::int64_t syncs_before = stats.num_stream_syncs;
  absl::Status s = cache_.WaitForFree(stream, freed_at);
  const std::int64_t ns = stats.wait_ns - ns_before;
  const std::int64_t syncs = stats.num_stream_syncs - syncs_before;
  switch (site) {
    case WaitSite::kUnderBlock:
      stats.wait_under_block_ns += ns;
      stats.num_waits_under_block += syncs;
      break;
    case WaitSite::kTrim:
      stats.wait_trim_ns += ns;
      stats.num_waits_trim += syncs;
      break;
    case WaitSite::kRelease:
      stats.wait_release_ns += ns;
      stats.num_waits_release += syncs;
      break;
  }
  return s;
}

absl::Status GrowableSegments::SubmitWhenDone(Leaving& l, WaitSite site) {
  if (!cache_.FreeCompleted(l.stream, l.freed_at)) {
    if (absl::Status s = WaitForFree(l.stream, l.freed_at, site); !s.ok()) return s;
  }
  Submit(l);
  return absl::OkStatus();
}

void GrowableSegments::Submit(Leaving& l) {
  l.job = worker_.Submit(l.segment->base + l.first * page_size_, l.pages * page_size_,
                         l.release ? l.handle : 0, l.release ? 0 : l.handle);
  ++unreaped_;
  ++cache_.stats().num_unmaps;
  if (l.release) ++cache_.stats().num_device_free;
}

absl::Status GrowableSegments::Retire(GrowableSegment* segment, std::size_t first,
                                      std::size_t pages, PhysicalHandle handle,
                                      StreamId stream, std::uint64_t freed_at, bool release) {
  // Memory going back to the device is released only after every old
  // mapping of it (a move's, still leaving) is unmapped: the worker runs its
  // jobs in order, so those are handed to it first.
  if (release) {
    for (Leaving& l : leaving_) {
      if (l.handle != handle || l.job != 0) continue;
      if (absl::Status s = SubmitWhenDone(l, WaitSite::kRelease); !s.ok()) return s;
    }
  }
  segment->SetPages(first, pages, GrowableSegment::kLeaving);
  segment->leaving_pages += pages;
  leaving_.push_back(Leaving{segment, first, pages, handle, stream, freed_at, 0, release});
  // A move's old mapping is kept for a block that wants the memory back.
  if (release || !options_.keep_old_mappings) Submit(leaving_.back());
  return absl::OkStatus();
}

absl::Status GrowableSegments::Reap() {
  if (unreaped_ == 0) return absl::OkStatus();
  absl::Status status;
  MemoryStats& stats = cache_.stats();
  for (UnmapWorker::Result& r : worker_.TakeResults()) {
    --unreaped_;
    stats.worker_ns += r.ns;
    auto it = std::find_if(leaving_.begin(), leaving_.end(),
                           [&](const Leaving& l) { return l.job == r.id; });
    if (it == leaving_.end()) {  // a release alone (ReleaseChunk)
      if (r.kept) {
        HoldWhereStillMapped(r.release);
      } else if (!r.released.ok()) {
        --stats.num_device_free;
        unreleased_.push_back(r.release);
        if (status.ok()) status = r.released;
      }
      continue;
    }
    GrowableSegment* segment = it->segment;
    if (!r.unmapped.ok()) {
      --stats.num_unmaps;
      if (status.ok()) status = r.unmapped;
      if (!it->release) {
        // A move's old mapping: its memory is counted where it went. Still
        // mapped here, so pending again, unmapped by a later call. Where
        // the memory is no longer mapped as that chunk (it was going back
        // to the device: Retire unmaps every old mapping of it first, and
        // its own unmap and release come after), it can never come back
        // here: the record forgets where it went (Return and Validate read
        // `to`).
        it->job = 0;
        if (it->to != nullptr && !it->to->HoldsChunk(it->to_first, it->pages, it->handle)) {
          it->to = nullptr;
        }
        continue;
      }
      // Memory that was going back stays mapped (not released after a
      // failed unmap): it is held and counted here again, free in its hole,
      // and a later trim gives it back.
      --stats.num_device_free;
      HoldAgain(*it);
      leaving_.erase(it);
      continue;
    }
    segment->Unmapped(it->first, it->pages);
    segment->TrimMappedEnd();
    const PhysicalHandle handle = it->handle;
    const bool kept = it->release && r.kept;
    if (it->release && !r.released.ok() && !kept) {
      --stats.num_device_free;
      unreleased_.push_back(handle);
      if (status.ok()) status = r.released;
    }
    leaving_.erase(it);
    if (kept) HoldWhereStillMapped(handle);
  }
  return status;
}

void GrowableSegments::HoldWhereStillMapped(PhysicalHandle handle) {
  // The memory was going back, but an old mapping of it failed to unmap and
  // the worker kept it (UnmapWorker::Result::kept): it is held there again,
  // counted, free in its hole, for a later trim to give back; other old
  // mappings of it point there. With none left (a later unmap made it),
  // the release is owed, as after a failed one. Either way the release
  // counted when the job was submitted did not happen.
  --cache_.stats().num_device_free;
  auto it = std::find_if(leaving_.begin(), leaving_.end(), [&](const Leaving& l) {
    return l.handle == handle && !l.release && l.job == 0;
  });
  if (it == leaving_.end()) {
    unreleased_.push_back(handle);  // Settle releases it (and counts it)
    return;
  }
  HoldAgain(*it);
  GrowableSegment* segment = it->segment;
  const std::size_t first = it->first;
  leaving_.erase(it);
  Retarget(handle, segment, first);
}

absl::Status GrowableSegments::Settle() {
  worker_.Drain();
  absl::Status status = Reap();
  // Releases that failed on the worker, once more, here.
  std::vector<PhysicalHandle> failed;
  for (PhysicalHandle handle : unreleased_) {
    if (absl::Status s = backend_.ReleasePhysical(handle); s.ok()) {
      ++cache_.stats().num_device_free;
    } else {
      failed.push_back(handle);
      if (status.ok()) status = s;
    }
  }
  unreleased_.swap(failed);
  return status;
}

absl::Status GrowableSegments::ReleaseChunk(PhysicalHandle handle) {
  // A chunk still mapped where it was moved from is unmapped there first:
  // the driver would keep the memory until then, uncounted. Its old work came
  // before the work on the memory's last block, on the same stream, and the
  // callers release only memory whose work has finished, so this never waits.
  // The worker runs jobs in order: that unmap, then this release.
  for (Leaving& l : leaving_) {
    if (l.handle != handle || l.job != 0) continue;
    if (cache_.capturing()) {
      return absl::FailedPreconditionError(
          "memory moved away is still mapped there and a stream capture refuses unmapping");
    }
    if (absl::Status s = SubmitWhenDone(l, WaitSite::kRelease); !s.ok()) return s;
  }
  worker_.Submit(0, 0, handle);
  ++unreaped_;
  ++cache_.stats().num_device_free;
  return absl::OkStatus();
}

bool GrowableSegments::CanReturn(const Leaving& l, const GrowableSegment* segment,
                                 std::size_t first, std::size_t last) {
  if (!FreeWhereItWent(l, segment, first, last)) return false;
  // The work there on the memory must come before the block's: queued
  // earlier on the same stream, or finished.
  return l.to->stream == segment->stream ||
         cache_.FreeCompleted(l.to->stream, l.to->FreedAt(l.to_first, l.to_first + l.pages));
}

bool GrowableSegments::FreeWhereItWent(const Leaving& l, const GrowableSegment* segment,
                                       std::size_t first, std::size_t last) const {
  if (l.release || l.job != 0 || l.to == nullptr) return false;
  const GrowableSegment* there = l.to;
  const std::size_t lo = l.to_first, hi = l.to_first + l.pages;
  // Only memory of the default pool moves (a private pool's may be replayed
  // into by a captured graph), only the whole chunk, not from under the
  // block itself, and only where it is still held (a later move or a
  // release left this mapping behind).
  if (there->owner != nullptr || (there == segment && lo <= last && hi > first) ||
      !there->HoldsChunk(lo, l.pages, l.handle)) {
    return false;
  }
  return FreeThroughout(*there, lo, hi);
}

bool GrowableSegments::Return(Leaving& l, GrowableSegment* segment, std::size_t first,
                              std::size_t last) {
  if (!CanReturn(l, segment, first, last)) return false;
  GrowableSegment* there = l.to;
  const std::size_t lo = l.to_first, hi = l.to_first + l.pages;
  const std::uint64_t freed_at = there->FreedAt(lo, hi);
  // Uncounted there before it is counted here: reserved never peaks on it.
  there->SetPages(lo, hi - lo, GrowableSegment::kLeaving);
  there->leaving_pages += l.pages;
  there->mapped_pages -= l.pages;
  AddReserved(there->pool, -static_cast<std::int64_t>(l.pages * page_size_));
  HoldAgain(l);
  ++cache_.stats().num_returns;
  // The pages left keep the mapping now; every old mapping of the memory
  // (this one included) points here.
  const std::size_t back = l.first;
  l = Leaving{there, lo, l.pages, l.handle, there->stream, freed_at, 0, false, segment, back};
  Retarget(l.handle, segment, back);
  return true;
}

bool GrowableSegments::WouldWait(const Leaving& l, const GrowableSegment* segment,
                                 std::size_t first, std::size_t last, bool first_partial,
                                 bool last_partial) {
  // A capture refuses unmapping, and no memory is taken back during one:
  // any old mapping under a block stops it (FinishLeaving refuses it).
  if (cache_.capturing()) return true;
  if (l.job != 0) return false;
  // What Prepare would take back instead (Return) waits for nothing.
  if (options_.keep_old_mappings &&
      TakeableUnder(l, first, last, first_partial, last_partial) &&
      CanReturn(l, segment, first, last)) {
    return false;
  }
  return !cache_.FreeCompleted(l.stream, l.freed_at);
}

std::size_t GrowableSegments::MissingPages(const GrowableSegment& segment, DevicePtr begin,
                                          std::size_t bytes) const {
  const auto [first, last] = PagesOf(segment, begin, bytes);
  return last + 1 - first - segment.HeldIn(first, last);
}

std::size_t GrowableSegments::BytesToMap(CacheLock lock, const Segment& range, DevicePtr begin,
                                         std::size_t bytes) {
  AssertHeld(lock);
  const std::size_t missing = bytes - HeldBytesIn(lock, range, begin, begin + bytes);
  const GrowableSegment& segment = Of(range);
  if (missing == 0 || !options_.keep_old_mappings || segment.leaving_pages == 0) return missing;
  // Old mappings under the place whose memory Prepare would take back
  // (Return) cost no call: a step that repeats an earlier shape maps
  // nothing there, and placing it elsewhere would undo that. Only memory
  // of the block's own stream counts: asking whether another stream's work
  // has finished queries (and records) events, which a question must not.
  const auto [first, last] = PagesOf(segment, begin, bytes);
  const bool first_partial = !PageAligned(begin - segment.base);
  const bool last_partial = !PageAligned(begin + bytes - segment.base);
  std::size_t back = 0;
  for (const Leaving& l : leaving_) {
    if (l.Under(&segment, first, last) &&
        TakeableUnder(l, first, last, first_partial, last_partial) &&
        FreeWhereItWent(l, &segment, first, last) && l.to->stream == segment.stream) {
      back += l.pages * page_size_;
    }
  }
  return missing - std::min(missing, back);
}

std::optional<DevicePtr> GrowableSegments::OffBusy(const GrowableSegment& segment,
                                                   const Block& hole, DevicePtr at,
                                                   std::size_t bytes) {
  // A few tries, each past the busy pages found; then none.
  DevicePtr place = at;
  for (int tries = 0; tries < 4; ++tries) {
    const auto [first, last] = PagesOf(segment, place, bytes);
    if (!segment.LeavingIn(first, last)) return place;
    const bool first_partial = !PageAligned(place - segment.base);
    const bool last_partial = !PageAligned(place + bytes - segment.base);
    std::size_t busy_end = 0;  // one past the last busy page, 0: none
    for (const Leaving& l : leaving_) {
      if (!l.Under(&segment, first, last)) continue;
      if (WouldWait(l, &segment, first, last, first_partial, last_partial)) {
        busy_end = std::max(busy_end, l.first + l.pages);
      }
    }
    if (busy_end == 0) return place;
    const DevicePtr past = segment.base + busy_end * page_size_;
    if (past + bytes > hole.end()) return std::nullopt;
    place = past;
  }
  return std::nullopt;
}

SegmentStore::Placing GrowableSegments::Place(CacheLock lock, const Block& hole, DevicePtr at,
                                              std::size_t bytes) {
  AssertHeld(lock);
  const GrowableSegment& segment = Of(*hole.segment);
  // Always off busy pages where the free block has room (it was the
  // skip_busy_pages switch): the pages are unmapped later by the worker,
  // with no wait on the allocating thread. During a capture an old mapping
  // under the block cannot go (a capture refuses unmapping): past it is the
  // only place that works, whatever it maps. (An old mapping whose unmap
  // failed before the capture began is such a case.)
  const bool capturing = cache_.capturing();
  if (segment.leaving_pages == 0 || bytes == 0) return {at, false};
  // Old mappings under the place whose work may still run make Prepare wait
  // for the GPU to reach their free: the queue's depth, 11-16 ms a wait on
  // an H100 running the seq2seq model and the UNet, whose GPU then idles
  // while the host queues work again. Past them the hole's pages are either
  // unmapped or mapped free memory: the block maps about as much there, and
  // the old mappings go later (the worker, or a block that takes their
  // memory back). A place that needs more pages mapped (unmapped or
  // leaving) than the first would cost more maps than the wait saves.
  const std::optional<DevicePtr> shifted = OffBusy(segment, hole, at, bytes);
  if (shifted == at) return {at, false};
  const std::size_t to_map = MissingPages(segment, at, bytes);
  if (shifted.has_value() &&
      (capturing || MissingPages(segment, *shifted, bytes) <= to_map)) {
    return {*shifted, false};
  }
  return {at, true, capturing ? ~std::size_t{0} : to_map};
}

std::optional<DevicePtr> GrowableSegments::PlaceElsewhere(CacheLock lock, const Block& other,
                                                          std::size_t bytes,
                                                          std::size_t max_pages_to_map) {
  AssertHeld(lock);
  if (other.size < bytes || !other.segment->expandable) return std::nullopt;
  const GrowableSegment& there = Of(*other.segment);
  const std::optional<DevicePtr> place = OffBusy(there, other, other.ptr, bytes);
  if (!place.has_value() || MissingPages(there, *place, bytes) > max_pages_to_map) {
    return std::nullopt;
  }
  return place;
}

void GrowableSegments::HoldAgain(const Leaving& l) {
  GrowableSegment* segment = l.segment;
  segment->SetPages(l.first, l.pages, l.handle);
  segment->leaving_pages -= l.pages;
  segment->mapped_pages += l.pages;
  AddReserved(segment->pool, static_cast<std::int64_t>(l.pages * page_size_));
}

void GrowableSegments::Retarget(PhysicalHandle handle, GrowableSegment* to,
                                std::size_t to_first) {
  for (Leaving& l : leaving_) {
    if (l.handle == handle && !l.release) {
      l.to = to;
      l.to_first = to_first;
    }
  }
}

void GrowableSegments::UndoLeaving(GrowableSegment* segment, std::size_t first) {
  auto it = std::find_if(leaving_.begin(), leaving_.end(), [&](const Leaving& l) {
    return l.segment == segment && l.first == first;
  });
  if (it == leaving_.end()) return;
  if (it->job != 0) {
    // Already being unmapped there: the memory goes back to the device
    // instead (after that unmap: the worker keeps the order).
    (void)ReleaseChunk(it->handle);
    return;
  }
  HoldAgain(*it);
  leaving_.erase(it);
}

absl::StatusOr<std::size_t> GrowableSegments::UnmapFreeChunks(
    std::size_t target, DevicePtr keep_begin, DevicePtr keep_end, Placement* place,
    const GrowableSegment* dest, PrivatePool* owner, bool wait, std::size_t unwaited) {
  std::size_t released = 0;
  // Unmapping during a capture would invalidate it, and a live private pool
  // is memory a captured graph replays into.
  if (cache_.capturing() || (owner != nullptr && owner->use_count > 0 && !owner->region)) {
    return released;
  }
  // Below the high mark (no wait) only chunks whose work has finished go,
  // and they go least recently freed first, as a cache evicts: the largest
  // holes, taken first before, are often the ones just freed and wanted
  // again within the step, and each such give and take is a move (the
  // replay: 83.9 modelled driver ms per step over the seven traces instead
  // of 99.7, at the same peaks). Beyond it the largest holes still go first
  // (least recently freed first there moved the checkpointed LM's peak to
  // 1.0112), and chunks whose work may still be queued and that cannot move
  // without a wait go only after every chunk that needs none, oldest free
  // first: a wait drains the queue up to the free it is for, and the GPU
  // then idles while the host queues work again (taking the largest holes
  // first instead waited for memory freed moments ago: at a replay lag of
  // 200 events, 22,484 events waited over the seven traces, 15,980 this way).
  // Below the high mark: of the chunks whose work has finished, the oldest
  // freed, ties in hole order; as every chunk is a page or more, the trim
  // takes at most `keep` of them, so only that many are kept (a heap whose
  // top is the newest kept) instead of every finished chunk sorted (a
  // tenth of the replay's host instructions on the checkpointed LM). A
  // member: reused, so that a trim allocates nothing once it has grown.
  std::vector<RankedChunk>& oldest = oldest_scratch_;
  oldest.clear();
  const std::size_t keep = target / page_size_ + (target % page_size_ != 0 ? 1 : 0);
  std::uint64_t position = 0;
  std::vector<Chunk> waiting;
  // Holes largest first (each index is ordered by stream, then size).
  for (PoolKind kind : {PoolKind::kLarge, PoolKind::kSmall}) {
    const BlockPool& pool = cache_.FreeBlocks(owner, kind);
    for (auto it = pool.rbegin(); it != pool.rend() && (!wait || released < target); ++it) {
      const Block* b = *it;
      if (!b->segment->expandable || b->size < page_size_) continue;
      const StreamId stream = b->segment->stream;
      // A chunk of a hole of the destination's stream may move before the
      // hole's work has finished (the new block's work queues after it), in
      // place of a wait: below the high mark new memory costs no more calls
      // than a move, and later steps often want the hole again. (Always: the
      // wait it saves would drain the GPU's queue, and the old mapping costs
      // only the unmap the move makes anyway. The switch that turned it off,
      // unwaited_moves, is gone: no user would set it.)
      const bool may_leave = wait && place != nullptr &&
                             dest != nullptr && dest->stream == stream;
      // The hole's newest free first: when its work is done, so is that of
      // every chunk in it. Below the high mark a hole whose newest free is
      // not known done is left alone: the workload is freeing into it now
      // and often wants it again (moving its old chunks too, the replay's
      // ckpt_lm peaks at 1.0101 instead of 1.0095 and unet moves 7% more).
      // Beyond it each chunk is asked about its own frees (FreedAt), so a
      // chunk that has been free a while moves without a wait, and a wait
      // is for as little of the queue as that chunk needs.
      const bool hole_finished = cache_.FreeCompleted(stream, b->freed_at);
      if (!hole_finished && !wait) continue;
      GrowableSegment* segment = &Of(*b->segment);
      // Only pages wholly inside the free block: its neighbours are in use.
      const std::size_t lo = RoundUp(b->ptr - segment->base, page_size_) / page_size_;
      const std::size_t hi = (b->end() - segment->base) / page_size_;
      std::size_t i = lo;
      const std::size_t scan_end = std::min(hi, segment->mapped_end);
      while (i < scan_end && (!wait || released < target)) {
        if (!GrowableSegment::Holds(segment->pages[i])) {
          ++i;
          continue;
        }
        // The whole chunk must lie inside the free pages and outside the range
        // being mapped: a chunk is unmapped only as the unit it was mapped as.
        const auto [start, end] = segment->ChunkAround(i);
        const DevicePtr va = segment->base + start * page_size_;
        const std::size_t bytes = (end - start) * page_size_;
        i = end;
        if (start < lo || end > hi || (va < keep_end && va + bytes > keep_begin)) continue;
        const Chunk chunk{segment, start, end, stream, segment->FreedAt(start, end)};
        if (!wait) {  // its hole's work has finished
          const RankedChunk ranked{chunk, position++};
          if (oldest.size() < keep) {
            oldest.push_back(ranked);
            std::push_heap(oldest.begin(), oldest.end(), RankedChunk::Older);
          } else if (keep > 0 && RankedChunk::Older(ranked, oldest.front())) {
            std::pop_heap(oldest.begin(), oldest.end(), RankedChunk::Older);
            oldest.back() = ranked;
            std::push_heap(oldest.begin(), oldest.end(), RankedChunk::Older);
          }
          continue;
        }
        const bool finished = hole_finished || cache_.FreeCompleted(stream, chunk.freed_at);
        // A chunk that would have to wait to go back may fill part of a run
        // instead (TakeChunk): no wait, as many bytes mapped. Always (it was
        // the partial_runs switch): in the replay at a GPU lag of 200 events
        // the nine traces then wait for trims 57 times instead of 104
        // (GPT-2's: drains of the GPU's queue, 30-40 ms each on an H100).
        Placement::Run* run =
            place != nullptr ? place->Fit(end - start, !finished && may_leave) : nullptr;
        const bool leave = !finished && run != nullptr && may_leave;
        if (!finished && !leave) {
          waiting.push_back(chunk);
          continue;
        }
        if (absl::Status s = TakeChunk(chunk, leave, place, &released); !s.ok()) return s;
      }
    }
  }
  auto oldest_first = [](const Chunk& a, const Chunk& b) { return a.freed_at < b.freed_at; };
  std::sort_heap(oldest.begin(), oldest.end(), RankedChunk::Older);
  for (const RankedChunk& r : oldest) {
    if (released >= target) break;
    if (absl::Status s = TakeChunk(r.chunk, /*leave=*/false, place, &released); !s.ok()) return s;
  }
  std::sort(waiting.begin(), waiting.end(), oldest_first);
  for (const Chunk& c : waiting) {
    if (released >= target) break;
    // What the hard mark can hold is not worth a drain of the queue: it stays
    // held, and a later growth takes it once its work is done.
    if (target - released <= unwaited) break;
    // Work queued before the chunk's blocks were freed may still touch it
    // (a wait for an older free may have covered it already: then none).
    if (absl::Status s = WaitForFree(c.stream, c.freed_at, WaitSite::kTrim); !s.ok()) return s;
    if (absl::Status s = TakeChunk(c, /*leave=*/false, place, &released); !s.ok()) return s;
  }
  return released;
}

absl::Status GrowableSegments::TakeChunk(const Chunk& c, bool leave, Placement* place,
                                         std::size_t* released) {
  GrowableSegment* segment = c.segment;
  const std::size_t pages = c.end - c.start;
  // A move left mapped where it was may fill part of a run (see
  // UnmapFreeChunks); the others only a run of their size.
  Placement::Run* run =
      place != nullptr ? place->Fit(pages, leave) : nullptr;
  const PhysicalHandle handle = segment->pages[c.start];
  if (leave) {
    segment->SetPages(c.start, c.end - c.start, GrowableSegment::kLeaving);
    segment->leaving_pages += pages;
    leaving_.push_back(Leaving{segment, c.start, pages, handle, c.stream, c.freed_at});
  } else if (absl::Status s = Retire(segment, c.start, pages, handle, c.stream, c.freed_at,
                                     /*release=*/run == nullptr);
             !s.ok()) {
    return s;
  }
  segment->mapped_pages -= pages;
  AddReserved(segment->pool, -static_cast<std::int64_t>(pages * page_size_));
  *released += pages * page_size_;
  if (run != nullptr) place->Add(run, handle, pages, leave ? segment : nullptr, c.start);
  return absl::OkStatus();
}

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

bool GrowableSegments::CanRelease(CacheLock lock, const Segment& segment) const {
  return Of(segment).mapped_pages == 0 && Of(segment).leaving_pages == 0;
}

absl::Status GrowableSegments::Release(CacheLock lock, Segment& segment) {
  AssertHeld(lock);
  if (absl::Status s = backend_.ReleaseAddressRange(segment.base, segment.size); !s.ok()) {
    return s;
  }
  ranges_.erase(segment.base);
  return absl::OkStatus();
}

std::pair<std::size_t, std::size_t> GrowableSegments::PagesOf(const GrowableSegment& segment,
                                                              DevicePtr begin,
                                                              std::size_t bytes) const {
  return {PageIndex(begin - segment.base), PageIndex(begin + bytes - 1 - segment.base)};
}

void GrowableSegments::NoteAllocated(CacheLock lock, Segment& range, DevicePtr begin,
                                     std::size_t bytes) {
  AssertHeld(lock);
  GrowableSegment& segment = Of(range);
  const auto [first, last] = PagesOf(segment, begin, bytes);
  // (Through a local pointer: the compiler need not reload the table for
  // every page.)
  std::uint32_t* live = segment.live.data();
  for (std::size_t p = first; p <= last; ++p) ++live[p];
}

void GrowableSegments::NoteFree(CacheLock lock, Segment& range, DevicePtr begin,
                                std::size_t bytes, std::uint64_t seq) {
  AssertHeld(lock);
  GrowableSegment& segment = Of(range);
  const auto [first, last] = PagesOf(segment, begin, bytes);
  std::uint64_t* freed = segment.freed.data();
  std::uint32_t* live = segment.live.data();
  for (std::size_t p = first; p <= last; ++p) {
    freed[p] = seq;
    --live[p];
  }
}

void GrowableSegments::Discard(CacheLock lock, Segment& range) {
  AssertHeld(lock);
  GrowableSegment& segment = Of(range);
  worker_.Drain();
  (void)Reap();
  for (PhysicalHandle handle : unreleased_) (void)backend_.ReleasePhysical(handle);
  unreleased_.clear();
  // The allocator is going: every old mapping of a moved chunk goes first
  // (its memory, owned where it went, is released only once unmapped).
  for (const Leaving& l : leaving_) {
    (void)backend_.Unmap(l.segment->base + l.first * page_size_, l.pages * page_size_);
    l.segment->Unmapped(l.first, l.pages);
  }
  leaving_.clear();
  for (std::size_t i = 0; i < segment.mapped_end;) {
    if (!GrowableSegment::Holds(segment.pages[i])) {
      ++i;
      continue;
    }
    const auto [first, last] = segment.ChunkAround(i);
    (void)backend_.Unmap(segment.base + first * page_size_, (last - first) * page_size_);
    (void)backend_.ReleasePhysical(segment.pages[i]);
    i = last;
  }
  (void)backend_.ReleaseAddressRange(segment.base, segment.size);
  ranges_.erase(segment.base);
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
  const std::size_t peak =
      std::max(peak_allocated_,
               static_cast<std::size_t>(cache_.stats().allocated_bytes[kStatAll].peak));
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
