// device_allocator_release.cc — when freed memory may be used again and when
// cached memory goes back: the free marks of each stream (FreeCompleted,
// WaitForFree: has a free's stream work finished?), cross-stream events
// (ProcessEvents), releasing cached memory (ReleaseCached, EmptyCache,
// GarbageCollect, the OOM ladder's steps) and the memory limit and fraction.
//
// Part of the cache (see device_allocator.h); kept in its own file so that
// device_allocator.cc reads as the allocate/free path. It may call the
// backend (events, synchronize) and the segment stores (Release, Trim).
#include <algorithm>
#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"

namespace ccalloc {

// ---------------------------------------------------------------------------
// Free marks: whether a free's stream work has finished
// ---------------------------------------------------------------------------

absl::Status DeviceAllocator::SynchronizeStream(StreamId stream) {
  absl::StatusOr<EventHandle> event = backend_->RecordEvent(stream);
  if (!event.ok()) return event.status();
  absl::Status s = backend_->SynchronizeEvent(*event);
  backend_->DestroyEvent(*event);
  return s;
}

std::uint64_t DeviceAllocator::CoveredUpto(StreamId stream) const {
  auto synced = synced_upto_.find(stream);
  return std::max(device_synced_upto_, synced == synced_upto_.end() ? 0 : synced->second);
}

absl::Status DeviceAllocator::PollMarks(StreamId stream) {
  auto it = marks_.find(stream);
  if (it == marks_.end()) return absl::OkStatus();
  std::deque<FreeMark>& marks = it->second;
  while (!marks.empty()) {
    absl::StatusOr<bool> done = backend_->QueryEvent(marks.front().event);
    if (!done.ok()) return done.status();
    if (!*done) break;
    std::uint64_t& upto = synced_upto_[stream];
    upto = std::max(upto, marks.front().seq);
    backend_->DestroyEvent(marks.front().event);
    marks.pop_front();
  }
  return absl::OkStatus();
}

void DeviceAllocator::DestroyMarks() {
  for (auto& [stream, marks] : marks_) {
    for (const FreeMark& m : marks) backend_->DestroyEvent(m.event);
  }
  marks_.clear();
}

bool DeviceAllocator::FreeCompleted(StreamId stream, std::uint64_t freed_at) {
  if (capturing()) return false;  // a capture refuses event calls
  if (freed_at <= CoveredUpto(stream)) return true;
  if (std::uint64_t& polled = polled_in_[stream]; polled != prepare_epoch_) {
    polled = prepare_epoch_;
    if (!PollMarks(stream).ok()) return false;
    if (freed_at <= CoveredUpto(stream)) return true;
  }
  // Not yet: leave a mark covering this free unless one already does.
  const std::deque<FreeMark>& marks = marks_[stream];
  if ((marks.empty() || marks.back().seq < freed_at) && LeaveMark(stream)) {
    // With no older mark still pending the stream may be idle (the GPU
    // caught up, as after a step's synchronize): one query tells, and then
    // every free of the stream so far is done with.
    if (marks.size() == 1 && PollMarks(stream).ok() && freed_at <= CoveredUpto(stream)) {
      return true;
    }
  }
  return false;
}

bool DeviceAllocator::LeaveMark(StreamId stream) {
  std::deque<FreeMark>& marks = marks_[stream];
  if (marks.size() >= kMaxMarks) return false;
  absl::StatusOr<EventHandle> e = backend_->RecordEvent(stream);
  if (!e.ok()) return false;
  marks.push_back(FreeMark{*e, free_seq_});
  return true;
}

absl::Status DeviceAllocator::WaitForFree(StreamId stream, std::uint64_t freed_at) {
  // A wait since that free (of its stream, or of the device) already covers
  // it; otherwise wait for the first mark after that free if there is one
  // (less of the queue than all of it), else for the stream now, and
  // remember how far the wait reaches.
  if (freed_at <= CoveredUpto(stream)) return absl::OkStatus();
  if (absl::Status s = PollMarks(stream); !s.ok()) return s;
  if (freed_at <= CoveredUpto(stream)) return absl::OkStatus();
  ++stats_.num_stream_syncs;
  const ElapsedNs waited(&stats_.wait_ns);
  if (auto it = marks_.find(stream); it != marks_.end()) {
    std::deque<FreeMark>& marks = it->second;
    auto mark = MarkAfter(marks, freed_at);
    if (mark != marks.end()) {
      if (absl::Status s = backend_->SynchronizeEvent(mark->event); !s.ok()) return s;
      // Marks up to this one have completed too (same stream, in order).
      std::uint64_t& upto = synced_upto_[stream];
      for (auto m = marks.begin(); m != mark + 1; ++m) {
        upto = std::max(upto, m->seq);
        backend_->DestroyEvent(m->event);
      }
      marks.erase(marks.begin(), mark + 1);
      return absl::OkStatus();
    }
  }
  const std::uint64_t now = free_seq_;
  if (absl::Status s = SynchronizeStream(stream); !s.ok()) return s;
  synced_upto_[stream] = now;
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Events, release, limits
// ---------------------------------------------------------------------------

absl::Status DeviceAllocator::ProcessEvents() {
  if (capturing()) return absl::OkStatus();  // a capture refuses event queries
  for (auto& [stream, queue] : pending_) {
    while (!queue.empty()) {
      absl::StatusOr<bool> done = backend_->QueryEvent(queue.front().event);
      if (!done.ok()) return done.status();
      if (!*done) break;
      PendingEvent p = queue.front();
      queue.pop_front();
      --num_pending_;
      backend_->DestroyEvent(p.event);
      if (--p.block->pending_events == 0) FreeBlock(p.block);
    }
  }
  return absl::OkStatus();
}

absl::Status DeviceAllocator::SynchronizeAndFreeEvents() {
  if (absl::Status s = backend_->SynchronizeDevice(); !s.ok()) return s;
  ++stats_.num_sync_all_streams;
  device_synced_upto_ = free_seq_;
  DestroyMarks();  // all complete, and covered by the line above
  for (auto& [stream, queue] : pending_) {
    for (const PendingEvent& p : queue) {
      backend_->DestroyEvent(p.event);
      if (--p.block->pending_events == 0) FreeBlock(p.block);
    }
    queue.clear();
  }
  num_pending_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<std::size_t> DeviceAllocator::ReleaseCached(std::size_t target,
                                                           PrivatePool* owner) {
  // A region is held for good but its free memory may go (a live graph
  // pool's may not: a graph replays into it).
  if (capturing() || (owner != nullptr && owner->use_count > 0 && !owner->region)) {
    return std::size_t{0};
  }
  const std::size_t before = reserved();
  // Memory under free blocks that can go without whole segments (growable
  // pages), then the segments that are wholly free.
  absl::StatusOr<std::size_t> trimmed = store_->Trim(Locked(), owner);
  if (!trimmed.ok()) return trimmed.status();
  std::vector<Segment*> free_segments;
  for (auto& [base, segment] : segments_) {
    if (segment->owner == owner && segment->wholly_free() &&
        store_->CanRelease(Locked(), *segment)) {
      free_segments.push_back(segment.get());
    }
  }
  if (target > 0) {
    // Enough for `target`: the smallest single segment that covers it, else
    // the largest ones until it is covered.
    std::sort(free_segments.begin(), free_segments.end(),
              [](const Segment* a, const Segment* b) { return a->size < b->size; });
    auto fit = std::find_if(free_segments.begin(), free_segments.end(),
                            [target](const Segment* s) { return s->size >= target; });
    if (fit != free_segments.end()) {
      free_segments = {*fit};
    } else {
      std::reverse(free_segments.begin(), free_segments.end());
    }
  }
  for (Segment* segment : free_segments) {
    if (target > 0 && before - reserved() >= target) break;
    if (absl::Status s = ReleaseSegment(segment); !s.ok()) return s;
  }
  return before - reserved();
}

absl::StatusOr<std::size_t> DeviceAllocator::ReleaseRegionsCached() {
  // Regions keep their blocks apart, not their free memory.
  std::size_t released = 0;
  for (auto& [id, region] : regions_) {
    absl::StatusOr<std::size_t> r = ReleaseCached(0, region.get());
    if (!r.ok()) return r.status();
    released += *r;
  }
  return released;
}

absl::Status DeviceAllocator::ReleaseSegment(Segment* segment) {
  Block* head = segment->head;
  if (absl::Status s = store_->Release(Locked(), *segment); !s.ok()) return s;
  IndexOf(head).Erase(head);
  AccountInactive(head, -1);
  StatAdd(stats_.segment, segment->pool, -1);
  if (segment->owner != nullptr) --segment->owner->segments;
  DeleteBlock(head);
  segments_.erase(segment->base);
  return absl::OkStatus();
}

void DeviceAllocator::GarbageCollect() {
  const auto threshold = static_cast<std::size_t>(
      options_.garbage_collection_threshold * static_cast<double>(memory_limit_));
  if (reserved() <= threshold || capturing()) return;
  std::vector<Segment*> free_segments;
  for (auto& [base, segment] : segments_) {
    // Private pools: live ones keep their memory, released ones have given
    // back what is free already.
    if (!segment->expandable && segment->owner == nullptr && segment->wholly_free()) {
      free_segments.push_back(segment.get());
    }
  }
  // Largest first: the fewest releases that get back under the threshold.
  std::sort(free_segments.begin(), free_segments.end(),
            [](const Segment* a, const Segment* b) { return a->size > b->size; });
  for (Segment* segment : free_segments) {
    if (reserved() <= threshold) break;
    if (!ReleaseSegment(segment).ok()) break;
  }
}

absl::Status DeviceAllocator::SynchronizePending() {
  // Like torch.cuda.empty_cache(): blocks waiting on other streams are waited
  // for, so that everything the program has freed can go back.
  for (auto& [stream, queue] : pending_) {
    for (const PendingEvent& p : queue) {
      if (absl::Status s = backend_->SynchronizeEvent(p.event); !s.ok()) return s;
    }
  }
  return ProcessEvents();
}

absl::Status DeviceAllocator::EmptyCache() {
  FlushedLock lock(this);
  if (capturing()) {
    return absl::FailedPreconditionError(
        "empty_cache is not permitted while allocations are routed to a private pool (a "
        "stream capture may be underway: it would synchronize)");
  }
  // Deferred events first, so that their blocks are waited for below.
  if (absl::Status s = FlushPoolWork(); !s.ok()) return s;
  if (absl::Status s = SynchronizePending(); !s.ok()) return s;
  absl::StatusOr<std::size_t> released = ReleaseCached(0);
  if (!released.ok()) return released.status();
  if (absl::StatusOr<std::size_t> r = ReleaseRegionsCached(); !r.ok()) return r.status();
  if (absl::Status s = DropIdleBackups(); !s.ok()) return s;
  // Blocks of released pools that the wait freed.
  if (absl::Status s = FlushPoolWork(); !s.ok()) return s;
  // The waits above covered every free: the marks have nothing left to tell,
  // and an emptied cache holds no device resources, events included.
  DestroyMarks();
  DebugCheck();
  return absl::OkStatus();
}

absl::Status DeviceAllocator::FinishBackgroundWork() {
  FlushedLock lock(this);
  return store_->FinishBackground(Locked());
}

absl::Status DeviceAllocator::SetMemoryLimit(std::size_t bytes) {
  FlushedLock lock(this);
  memory_limit_ = bytes;
  memory_fraction_ = -1.0;
  return absl::OkStatus();
}

std::size_t DeviceAllocator::BytesForFraction(double fraction, std::size_t total) {
  return static_cast<std::size_t>(fraction * static_cast<double>(total));
}

std::size_t DeviceAllocator::LimitForFraction(double fraction, std::size_t total) {
  // A fraction of 0 caps at one byte: no block fits (0 would mean no cap).
  return std::max<std::size_t>(1, BytesForFraction(fraction, total));
}

absl::Status DeviceAllocator::SetMemoryFraction(double fraction) {
  // [0, 1], as torch.cuda.set_per_process_memory_fraction takes it.
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory fraction ", fraction, " is not in [0, 1]"));
  }
  absl::StatusOr<DeviceMemoryInfo> info = backend_->MemoryInfo();
  if (!info.ok()) return info.status();
  FlushedLock lock(this);
  memory_fraction_ = fraction;
  memory_limit_ = LimitForFraction(fraction, info->total_bytes);
  return absl::OkStatus();
}

double DeviceAllocator::MemoryFraction() const {
  std::size_t limit = 0;
  double fraction = -1.0;
  {
    absl::MutexLock lock(&mu_);
    fraction = memory_fraction_;
    limit = memory_limit_;
  }
  if (limit == 0) return 1.0;
  absl::StatusOr<DeviceMemoryInfo> info = backend_->MemoryInfo();
  if (!info.ok() || info->total_bytes == 0) return 1.0;
  const auto total = static_cast<double>(info->total_bytes);
  // As PyTorch computes it: the bytes the fraction allows over the total
  // (so 0 reads 0, 1 reads 1, and others as the whole bytes they allow).
  if (fraction >= 0) {
    return static_cast<double>(BytesForFraction(fraction, info->total_bytes)) / total;
  }
  return std::min(1.0, static_cast<double>(limit) / total);
}

void DeviceAllocator::SetRuntimeOptions(const Options& from) {
  FlushedLock lock(this);
  CopyRuntimeKeys(from, options_);
  policy_ = SizePolicy(options_);
  DebugCheck();
}

Options DeviceAllocator::options() const {
  absl::MutexLock lock(&mu_);
  return options_;
}

void DeviceAllocator::SetTraceRecorder(TraceRecorder* recorder) {
  FlushedLock lock(this);
  recorder_ = recorder;
}

std::size_t DeviceAllocator::memory_limit() const {
  absl::MutexLock lock(&mu_);
  return memory_limit_;
}

bool DeviceAllocator::WithinLimit(std::size_t extra) const {
  return memory_limit_ == 0 || reserved() + extra <= memory_limit_;
}

}  // namespace ccalloc
