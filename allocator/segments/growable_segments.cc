// growable_segments.cc — the life of a growable range (see growable_segments.h
// for the design): the page table's bitmaps, Create/Ready/Release/Discard,
// the low and high marks (NotePeak, PeakMark, SlackAt, RoomyAt, Mark) and
// Prepare with the chunk calls it makes (CreateChunk, MapChunk, UnpinEdges).
// It may call the backend, the unmap worker and, for memory on its way out,
// growable_moves.cc (UnmapFreeChunks, FinishLeaving, Return, Settle,
// ReleaseChunk); growable_regions.cc holds pause/resume, IPC and the queries.
#include "allocator/segments/growable_segments.h"

#include <algorithm>
#include <bit>
#include <optional>

#include "absl/strings/str_cat.h"
#include "allocator/segments/growable_internal.h"

namespace ccalloc {

using growable_internal::Hex;
using growable_internal::kRegionChunk;
using growable_internal::RoundUp;

namespace {

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
// With room, chunks step down as the end comes nearer: max_map_chunk (32 MiB
// by default) only while memory held up to the hard mark past the peak stays
// within this fraction of the end of memory, at most kNearChunk past it. A
// chunk mapped now may stay pinned by a long-lived neighbour for the rest of
// the run, and memory pinned early is what the tight marks cannot get back
// near the end; far from the end it only costs memory there is room for,
// while every handle saved is a map (and an old mapping's unmap) fewer each
// time the memory moves (the driver charges per handle, whatever its size).
// Replayed over the 21 traces (docs/steady_state.md, "Fewer handles far
// from the end"): a quarter keeps every trace within 1.03 of its peak on a
// card 5% larger than it (gpt2 1.0055); a half let gpt2 reach 1.0101 there.
constexpr double kFarUpTo = 0.25;
constexpr std::size_t kNearChunk = std::size_t{16} << 20;

}  // namespace

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

std::size_t GrowableSegments::ChunkCapAt(std::size_t peak, const Slack& slack,
                                         const GrowableSegment& segment) const {
  const std::size_t max_chunk = MaxChunk(segment);
  if (IsRegion(segment)) return max_chunk;
  if (slack.tight) return std::min(max_chunk, kTightChunk);
  const std::size_t limit = cache_.reserve_limit();
  const std::size_t end = limit > 0 ? std::min(limit, va_size_) : va_size_;
  const bool far = static_cast<double>(PeakMark(peak, slack.hard)) <=
                   kFarUpTo * static_cast<double>(end);
  return far ? max_chunk : std::min(max_chunk, kNearChunk);
}

bool GrowableSegments::Roomy(CacheLock lock) const {
  AssertHeld(lock);
  const Slack slack = SlackAt(KnownPeak());
  // Marks set as tight as the tight ones hold memory tight everywhere: no
  // room is left to spend on placements either.
  return !slack.tight && slack.hard > kTightSlackHard;
}

std::size_t GrowableSegments::KnownPeak() const {
  return std::max(peak_allocated_,
                  static_cast<std::size_t>(cache_.stats().allocated_bytes[kStatAll].peak));
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
  // block pins there is what a later peak cannot get back; with room, at
  // most kNearChunk once the end is in sight (ChunkCapAt).
  const std::size_t max_chunk = ChunkCapAt(peak, slack, *segment);
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

}  // namespace ccalloc
