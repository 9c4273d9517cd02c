// growable_moves.cc — memory leaving a growable range (see
// growable_segments.h, "Old mappings kept"): unmapping wholly free chunks
// (UnmapFreeChunks, TakeChunk, Trim), the old mappings of moved chunks
// (Leaving: Retire, FinishLeaving, Return, Retarget, UndoLeaving), placing
// blocks off pages still leaving (Place, PlaceElsewhere, BytesToMap), and
// the interplay with the unmap worker (Submit, Reap, Settle, ReleaseChunk,
// Quiesce). It may call the backend, the worker, the page-table helpers of
// growable_segments.cc and HeldBytesIn (growable_regions.cc).
#include <algorithm>
#include <optional>

#include "allocator/segments/growable_internal.h"
#include "allocator/segments/growable_segments.h"

namespace ccalloc {

using growable_internal::RoundUp;

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

}  // namespace ccalloc
