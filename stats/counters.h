// counters.h — allocator counters with PyTorch's torch.cuda.memory_stats() names.
//
// Plain data: the core updates a MemoryStats under its lock and hands out
// copies, so readers never see a half-updated set. Flatten() produces exactly
// the keys torch.cuda.memory_stats() has ("allocated_bytes.all.current", ...)
// plus ccalloc's own under "ccalloc." so the two never collide.
#ifndef CCALLOC_STATS_COUNTERS_H_
#define CCALLOC_STATS_COUNTERS_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ccalloc {

struct Stat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t allocated = 0;  // total added since the last accumulated reset
  std::int64_t freed = 0;      // total removed since then
  // `current` when allocated/freed were last reset (PyTorch zeroes them and
  // keeps current), so that the invariant below survives a reset.
  std::int64_t current_at_reset = 0;

  void Increase(std::int64_t amount) {
    current += amount;
    allocated += amount;
    if (current > peak) peak = current;
  }
  void Decrease(std::int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void ResetPeak() { peak = current; }
  void ResetAccumulated() {
    allocated = freed = 0;
    current_at_reset = current;
  }
  // current == current_at_reset + allocated - freed and 0 <= current <= peak.
  bool Validate() const {
    return current >= 0 && current <= peak && current == current_at_reset + allocated - freed;
  }
};

// Index 0 is "all", 1 "small_pool", 2 "large_pool".
using StatArray = std::array<Stat, 3>;
inline constexpr int kStatAll = 0;

struct MemoryStats {
  StatArray allocation;            // blocks handed out and not yet freed
  StatArray segment;               // device allocations (or growable ranges)
  StatArray active;                // allocated + freed but awaiting stream events
  StatArray inactive_split;        // free blocks that are part of a split segment
  StatArray allocated_bytes;
  StatArray reserved_bytes;        // device memory held (mapped pages for VMM)
  StatArray active_bytes;
  StatArray inactive_split_bytes;
  StatArray requested_bytes;       // bytes asked for, before rounding
  Stat oversize_allocations;
  Stat oversize_segments;
  std::int64_t num_alloc_retries = 0;
  std::int64_t num_ooms = 0;
  std::int64_t num_sync_all_streams = 0;
  std::int64_t num_device_alloc = 0;
  std::int64_t num_device_free = 0;
  std::int64_t max_split_size = 0;
  // ccalloc's own.
  // Chunks (one physical handle each, one or more pages) mapped into and
  // unmapped from growable segments: one cuMemMap + cuMemSetAccess, or one
  // cuMemUnmap, each whatever its size. On an H100 a chunk moved (unmapped
  // in one place, mapped in another) costs a host-bound training step about
  // 75 us (bench/results/h100_unet_move_cost.json), so these are the
  // counters to watch for time.
  std::int64_t num_maps = 0;
  std::int64_t num_unmaps = 0;
  // Growable segments: moved memory taken back to pages that kept its old
  // mapping (keep_old_mappings), each instead of a map there and an unmap.
  std::int64_t num_returns = 0;
  // Of num_unmaps, those the allocating thread made itself (an old mapping
  // under a block it prepares, a chunk's free rest cut from under a block's
  // edge) rather than the unmap worker, and their host time: step time on
  // host-bound training, the part an earlier unmap could save.
  std::int64_t num_foreground_unmaps = 0;
  std::int64_t foreground_unmap_ns = 0;
  // The allocating thread's host time in the map calls (cuMemMap with its
  // cuMemSetAccess, a stretch at a time) and the creates of new physical
  // memory: with foreground_unmap_ns and wait_ns, what of prepare_ns is
  // the driver's and what is the cache's own bookkeeping.
  std::int64_t map_ns = 0;
  std::int64_t create_ns = 0;
  std::int64_t num_allocs = 0;   // successful Allocate calls (for rates)
  std::int64_t num_stream_syncs = 0;  // waits on one stream before unmapping
  // Growable segments (cross_stream_reuse): requests served from another
  // stream's finished, mapped free memory instead of a move.
  std::int64_t num_cross_stream_reuses = 0;
  // ... and the device-side waits that ordered them (a borrow whose lender's
  // free was not yet known finished, and each borrowed block's free).
  std::int64_t num_device_waits = 0;
  // Where the driver work's host time goes (ns, growable segments), so a
  // slow step can be told apart from one whose allocator made calls:
  // prepare_ns, the allocating thread's time in placements that mapped
  // memory or waited for pages under them to be unmapped (the trims,
  // moves, creates, maps and any waits they made); wait_ns, its time
  // waiting for queued work before an unmap (within prepare_ns where a
  // placement waited); worker_ns, the unmaps' and releases' time on the
  // unmap worker's thread (or the caller's without one). Read two clocks
  // per placement that maps or waits, none otherwise.
  std::int64_t prepare_ns = 0;
  std::int64_t wait_ns = 0;
  std::int64_t worker_ns = 0;
  // wait_ns by what waited: a block's pages still mapped to memory moved
  // away whose old work had not finished (wait_under_block_ns), memory
  // taken by a trim or a move beyond the marks before its work finished
  // (wait_trim_ns), memory going back to the device (wait_release_ns).
  // What is left of wait_ns is waits for the unmap worker's calls.
  std::int64_t wait_under_block_ns = 0;
  std::int64_t wait_trim_ns = 0;
  std::int64_t wait_release_ns = 0;
  // ... and num_stream_syncs the same way.
  std::int64_t num_waits_under_block = 0;
  std::int64_t num_waits_trim = 0;
  std::int64_t num_waits_release = 0;
  // The bytes of the blocks whose placement waited under them, a block's
  // size counted once for each of its waits: over num_waits_under_block,
  // the mean size of a block that waited (a huge block landing where memory
  // left earlier in its step, or small ones).
  std::int64_t wait_under_block_bytes = 0;
  // Every call the backend made into the driver, and its host time: those of
  // the allocating thread (driver_calls, driver_ns: in training the thread
  // that launches the kernels, so step time on a host-bound model) and those
  // of ccalloc's background thread (the unmap worker). Filled in from the
  // backend's own count (DeviceBackend::driver_calls) when the statistics are
  // read, since the last reset of the accumulated counters.
  std::int64_t driver_calls = 0;
  std::int64_t driver_ns = 0;
  std::int64_t background_driver_calls = 0;
  std::int64_t background_driver_ns = 0;
  // Memory given back by Pause and not yet taken again by Resume (a gauge:
  // not reset with the accumulated counters).
  std::int64_t paused_bytes = 0;
  // Bytes of live blocks of paused regions whose contents wait in host
  // memory for Resume (a gauge), and the page-locked host memory held for
  // backups, buffers kept for the next pause included (a gauge).
  std::int64_t backup_bytes = 0;
  std::int64_t backup_host_bytes = 0;

  void ResetPeaks();
  void ResetAccumulated();
  bool Validate() const;
};

// Adds the steady-clock time from its construction to its destruction to
// `*counter` (prepare_ns, wait_ns); the caller holds whatever guards it.
class ElapsedNs {
 public:
  explicit ElapsedNs(std::int64_t* counter)
      : counter_(counter), start_(std::chrono::steady_clock::now()) {}
  ~ElapsedNs() {
    *counter_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now() - start_)
                     .count();
  }
  ElapsedNs(const ElapsedNs&) = delete;
  ElapsedNs& operator=(const ElapsedNs&) = delete;

 private:
  std::int64_t* counter_;
  std::chrono::steady_clock::time_point start_;
};

// Every counter under its torch.cuda.memory_stats() key, sorted by key.
std::vector<std::pair<std::string, std::int64_t>> Flatten(const MemoryStats& stats);

// Fragmentation over a run: 1 - peak allocated / peak reserved (0 when
// nothing was reserved).
double RunFragmentation(const MemoryStats& stats);

}  // namespace ccalloc

#endif  // CCALLOC_STATS_COUNTERS_H_
