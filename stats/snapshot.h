// snapshot.h — a picture of every segment and block, and its exporters.
//
// The snapshot is what a user looks at to see where memory went: each segment
// with its blocks in address order and their states (PyTorch's names:
// active_allocated, active_pending_free, inactive), and for growable segments
// the ranges that are backed by physical pages.
#ifndef CCALLOC_STATS_SNAPSHOT_H_
#define CCALLOC_STATS_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stats/counters.h"

namespace ccalloc {

enum class BlockStatus : std::uint8_t { kActiveAllocated, kActivePendingFree, kInactive };
const char* BlockStatusName(BlockStatus status);

struct BlockInfo {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t requested_size = 0;
  BlockStatus status = BlockStatus::kInactive;
  // Allocated blocks: the allocating thread's tag (stats/tags.h); 0 if none.
  std::uint32_t tag = 0;
  // The stream the block is allocated for: its segment's, or another stream
  // that borrowed the memory (Options::cross_stream_reuse).
  std::uint64_t stream = 0;
};

struct SegmentInfo {
  std::uint64_t address = 0;
  std::uint64_t total_size = 0;      // bytes of address space
  std::uint64_t mapped_size = 0;     // bytes backed by memory (== total for classic)
  std::uint64_t allocated_size = 0;
  std::uint64_t active_size = 0;
  std::uint64_t requested_size = 0;
  std::uint64_t stream = 0;
  bool small_pool = false;
  bool expandable = false;
  // The pool owning the segment: 0 is the default pool, any other value a
  // private pool (a CUDA graph's).
  std::uint64_t pool_id = 0;
  // A paused region's segment: its blocks keep their addresses over memory
  // given back (mapped_size 0 after a whole pause).
  bool paused = false;
  std::vector<BlockInfo> blocks;
  // Growable segments: [begin, end) address ranges that are mapped.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> mapped_ranges;
  // Growable segments: [begin, end) of each chunk mapped there (one physical
  // handle each, whose memory goes back only whole), by address.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks;
};

// Fragmentation now: (free - largest free block) / free over cached memory.
struct FragmentationNow {
  std::uint64_t free_cached_bytes = 0;  // reserved - active
  std::uint64_t largest_free_block = 0;
  double ratio = 0.0;
};

struct Snapshot {
  int device = 0;
  std::vector<SegmentInfo> segments;  // by address
  MemoryStats stats;
  FragmentationNow fragmentation;
};

std::string StatsToJson(const MemoryStats& stats);
std::string SnapshotToJson(const Snapshot& snapshot);
// A human-readable table, in the spirit of torch.cuda.memory_summary().
std::string SummaryText(const Snapshot& snapshot);

// Pretty byte counts: "1.50 GiB", "512 B".
std::string FormatBytes(std::uint64_t bytes);
// Byte counts as PyTorch's caching allocator writes them in its messages
// ("800 bytes", "20.00 MiB", "800000000.00 GiB": up to 1024 in bytes, up to
// 1 MiB in KiB, up to 1 GiB in MiB, GiB beyond), so that text users and
// tests match on (the out-of-memory message) reads the same.
std::string FormatSizeAsPytorch(std::uint64_t bytes);

}  // namespace ccalloc

#endif  // CCALLOC_STATS_SNAPSHOT_H_
