// device_allocator_placement.cc — where a request's block goes once best
// fit (or a new segment) has chosen a free block: the cache's placement
// policy in one unit. On growable segments: memory already mapped where best
// fit puts the block is handed out at once; else, by mapped_fit, mapped free
// memory of another free block of the stream; by cross_stream_reuse, mapped
// free memory of another stream's; and a place within the block (or one of
// the next few by size) where the store would not wait for queued work. Then
// the store prepares the bytes (maps what is missing) and the block is
// carved. Classic segments go straight to the last step.
//
// Part of the cache (see device_allocator.h); kept in its own file so that
// device_allocator.cc reads as the allocate/free path and every question the
// placement asks the segment store is here.
#include <optional>

#include "allocator/cache/device_allocator.h"

namespace ccalloc {

absl::StatusOr<Block*> DeviceAllocator::Place(BlockPool& free_blocks, Block* block,
                                              std::size_t rounded, std::size_t requested,
                                              StreamId stream, PrivatePool* owner) {
  // Growable segments (mapped_fit): where the best fit would need pages
  // mapped, already mapped free memory of a larger free block serves
  // instead; no driver call is made for it. Always (True), or only while
  // the cache holds memory beyond its marks (auto): Options says why.
  DevicePtr at = block->ptr;
  // Memory already mapped where best fit puts the block, with nothing for
  // the store to do first (most cached allocations): handed out at once.
  if (growable_ && store_->Ready(Locked(), *block->segment, at, rounded)) {
    TakenBack(at, rounded);
    return Carve(block, rounded, requested);
  }
  if (growable_ && block->segment->expandable && WantsHeldFit(*block, rounded)) {
    block = HeldFit(free_blocks, block, rounded,
                    /*first_found=*/options_.mapped_fit == Options::MappedFit::kWhenSlack &&
                        !store_->Roomy(Locked()),
                    &at);
  }
  // cross_stream_reuse: where the stream's own memory would need pages
  // mapped (auto: and the store would move memory to map them, not take
  // new), mapped free memory of another stream serves, ordered after that
  // stream's work on the device (Options says why).
  if (growable_ && options_.cross_stream_reuse != Options::CrossStreamReuse::kNever &&
      owner == nullptr && !capturing() && block->segment->expandable &&
      free_blocks.HasOtherStreams(stream) &&  // (one stream: nothing to borrow, no page walk)
      store_->HeldBytesIn(Locked(), *block->segment, at, at + rounded) != rounded &&
      (options_.cross_stream_reuse == Options::CrossStreamReuse::kAlways ||
       store_->WouldMove(Locked(), store_->BytesToMap(Locked(), *block->segment, at, rounded)))) {
    if (Block* borrowed = Borrow(free_blocks, stream, rounded, requested); borrowed != nullptr) {
      return borrowed;
    }
  }
  // The store may move the block within its free block, off pages that
  // would make it wait (growable: old mappings still in use); where it still
  // would, the next few free blocks by size are asked for a place that does
  // not, at no more cost (best fit's next choices). Always (these were the
  // skip_busy_pages and skip_busy_holes switches): on an H100 in one call
  // (bench/results/h100_skip_busy_holes_ab.json, 2 rounds) the checkpointed
  // LM waited 0.32 ms a step instead of 1.35 and spent 15.2 ms instead of
  // 16.6 mapping; GPT-2 waited 2.82 instead of 2.19 and mapped 62 chunks a
  // step instead of 50; the UNet about the same. In the replay at a GPU lag
  // of 200 events: 209 waits over the nine traces instead of 331, 44,404
  // chunk maps instead of 51,750, worst trace 1.0091. (Before partial runs
  // it cost GPT-2 668 maps in one step and waits of 30-42 ms on an H100.)
  ++prepare_epoch_;  // FreeCompleted polls each stream once per Prepare
  if (growable_ && block->segment->expandable && at == block->ptr) {
    const SegmentStore::Placing placing = store_->Place(Locked(), *block, at, rounded);
    at = placing.at;
    // (During a capture too: a place over old mappings would fail then.)
    if (placing.waits) {
      // The next few free blocks by size, at no more maps.
      int asked = 0;
      for (auto it = free_blocks.After(block);
           it != free_blocks.end() && (*it)->stream == stream && asked < kBusyAlternatives;
           ++it, ++asked) {
        std::optional<DevicePtr> p =
            store_->PlaceElsewhere(Locked(), **it, rounded, placing.pages_to_map);
        if (p.has_value()) {
          block = *it;
          at = *p;
          break;
        }
      }
    }
  }
  // Make the block's bytes usable before handing it out; on failure the
  // block is still free and indexed, so there is nothing to undo.
  if (absl::Status s = store_->Prepare(Locked(), *block->segment, *block, at, rounded);
      !s.ok()) {
    return s;
  }
  if (at != block->ptr) return CarveAt(block, at, rounded, requested);
  return Carve(block, rounded, requested);
}

bool DeviceAllocator::WantsHeldFit(const Block& best, std::size_t rounded) {
  switch (options_.mapped_fit) {
    case Options::MappedFit::kNever:
      return false;
    case Options::MappedFit::kAlways:
      return true;
    case Options::MappedFit::kWhenSlack: {
      // Also for a request whose best fit would map at least 64 MiB: pages
      // neither held nor taken back there without a call
      // (SegmentStore::BytesToMap). A move's cost is its chunks, whatever
      // the request's size: 64 MiB was 16 chunks of the 4 MiB max_map_chunk
      // it was measured with, ~1 ms of the launching thread's time at the
      // measured ~60 us a chunk (a map, and the unmap of what was under it),
      // a cost worth some pinning. It is what makes a workload whose steady
      // steps move memory rather than grow it cheap: the checkpointed LM,
      // whose huge logits change size every step, mapped 102 chunks a step
      // instead of 246 and trained at 1.003x expandable_segments' step time
      // instead of 1.113x in 6 interleaved rounds on an H100, at the same
      // 1.0078 reserved/allocated
      // (bench/results/h100_ckpt_lm_mapped_fit_missing_ab.json). Counting
      // memory taken back as free keeps bucketed shapes free (gpt2_cycle in
      // the replay: 0.61 ms of driver time a step, as with no such rule,
      // against 6.4 when the pages under old mappings counted as missing).
      // (It was the mapped_fit_missing_mb option, 64 by default, 0: none.)
      constexpr std::size_t kMissing = std::size_t{64} << 20;
      // (Cheapest first: BytesToMap walks the old mappings, and only a
      // request as large as the threshold can map that much.)
      return store_->Roomy(Locked()) || store_->HoldsSlack(Locked()) ||
             (rounded >= kMissing &&
              store_->BytesToMap(Locked(), *best.segment, best.ptr, rounded) >= kMissing);
    }
  }
  return false;
}

Block* DeviceAllocator::HeldFit(const BlockPool& free_blocks, Block* best, std::size_t rounded,
                                bool first_found, DevicePtr* at) {
  // Mapped where best fit puts it (most requests): nothing to search.
  if (store_->HeldBytesIn(Locked(), *best->segment, best->ptr, best->ptr + rounded) == rounded) {
    return best;
  }
  auto [start, len] =
      store_->HeldStretch(Locked(), *best->segment, best->ptr, best->end(), rounded);
  Block* host = len == 0 ? nullptr : best;
  for (auto it = free_blocks.After(best); it != free_blocks.end() &&
                                          (*it)->stream == best->stream && len != rounded &&
                                          !(first_found && host != nullptr);
       ++it) {
    auto [s, l] = store_->HeldStretch(Locked(), *(*it)->segment, (*it)->ptr, (*it)->end(),
                                      rounded);
    if (l != 0 && (len == 0 || l < len)) {
      start = s;
      len = l;
      host = *it;
    }
  }
  if (host == nullptr) return best;
  *at = start;
  return host;
}

Block* DeviceAllocator::Borrow(const BlockPool& free_blocks, StreamId stream,
                              std::size_t rounded, std::size_t requested) {
  // A few candidates a stream, smallest first: enough to find a mapped one
  // where there is one, without walking a large index on every request
  // that would map.
  const CacheLock lock = Locked();
  Block* other = free_blocks.FitOnOtherStreams(stream, rounded, kBorrowCandidates, [&](Block* b) {
    mu_.AssertHeld();  // called within Borrow, under the lock (tells clang)
    return b->segment->expandable && b->segment->owner == nullptr &&
           store_->HeldBytesIn(lock, *b->segment, b->ptr, b->ptr + rounded) == rounded;
  });
  if (other == nullptr) return nullptr;
  // The lender's work on the memory comes first: its stream's work up to
  // the block's newest free, on the device (no host wait). A refused wait
  // borrows nothing. Memory whose work may still run is lent too, always
  // (it was the cross_stream_wait switch, on by default): lending only
  // memory an event query says is done, with the borrowed block going back
  // pending on the borrower's work as a record_stream's use, left memory
  // its own stream could not take back meanwhile, so that stream mapped in
  // its place (the replay: 1.0859 reserved/allocated at a GPU lag of 150
  // events with cross_stream_reuse:True).
  if (!OrderAfterFree(stream, other->stream, other->freed_at).ok()) return nullptr;
  ++prepare_epoch_;
  // Mapped throughout: nothing for the store to do but its bookkeeping.
  if (!store_->Prepare(lock, *other->segment, *other, other->ptr, rounded).ok()) {
    return nullptr;
  }
  Block* taken = Carve(other, rounded, requested);
  taken->borrower = stream;
  taken->borrowed = true;
  ++stats_.num_cross_stream_reuses;
  return taken;
}

}  // namespace ccalloc
