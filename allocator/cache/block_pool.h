// block_pool.h — blocks, segments and the free-block index.
//
// A segment is one piece of device address space: a plain device allocation
// (classic) or a reserved virtual range that grows by mapping pages
// (expandable); allocator/segments/ makes and backs them. Its blocks tile it exactly, in address order, linked through
// prev/next. Links never cross segments, so two neighbouring device
// allocations can never be coalesced into one block (they may not even be
// contiguous on the device).
//
// BlockPool indexes the free blocks of one pool (small or large) by
// (stream, size, address): a lower_bound gives the best fit on a stream, and
// ties go to the lowest address, which keeps reuse deterministic for replay.
//
// Every segment belongs to one pool id: the default pool (0) or a private
// pool (a CUDA graph's memory pool). A private pool has its own pair of
// indexes, so its free blocks are only ever found by allocations routed to
// it, and a captured graph's memory is never handed to eager code.
#ifndef CCALLOC_ALLOCATOR_BLOCK_POOL_H_
#define CCALLOC_ALLOCATOR_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/inlined_vector.h"
#include "allocator/backends/backend.h"
#include "allocator/cache/size_policy.h"
#include "stats/tags.h"

namespace ccalloc {

struct Segment;
struct PrivatePool;

// 0 is the default pool; any other value names a private pool.
using PoolId = std::uint64_t;
// Regions (sleep and wake) are pools whose id has this bit set.
inline constexpr PoolId kRegionPoolBit = PoolId{1} << 63;
// A region's number; 0 is none.
using RegionId = std::uint32_t;
// The region a pool id names; 0 for the default pool and graph pools.
inline constexpr RegionId RegionOfPool(PoolId pool) {
  return (pool & kRegionPoolBit) != 0 ? static_cast<RegionId>(pool & ~kRegionPoolBit) : 0;
}
// The calling thread's current region (allocations go to its segments), and
// setting it (returns the previous). A plain thread_local: no lock.
RegionId CurrentRegion();
RegionId SetCurrentRegion(RegionId region);

enum class BlockState : std::uint8_t {
  kFree,       // in a pool, reusable
  kAllocated,  // handed to the user
  kPending,    // freed by the user, waiting for events on other streams
  kHot,        // freed by the user, held aside uncoalesced (DeviceAllocator::HoldAside)
};

struct Block {
  DevicePtr ptr = 0;
  std::size_t size = 0;
  std::size_t requested = 0;  // the user's size, before rounding (free: the last one freed into it)
  StreamId stream = 0;
  PoolKind pool = PoolKind::kLarge;
  BlockState state = BlockState::kFree;
  Segment* segment = nullptr;
  Block* prev = nullptr;
  Block* next = nullptr;
  int pending_events = 0;
  // Allocated blocks: the allocating thread's tag (stats/tags.h).
  TagId tag = kNoTag;
  // Free blocks: the allocator's free sequence number when the newest of the
  // bytes it covers was freed (see DeviceAllocator::synced_upto_).
  std::uint64_t freed_at = 0;
  // Streams other than `stream` that used the block (record_stream).
  absl::InlinedVector<StreamId, 1> stream_uses;
  // Allocated blocks (cross_stream_reuse): allocated for `borrower`, a
  // stream other than its segment's, which at the free is ordered after
  // the borrower's work.
  bool borrowed = false;
  StreamId borrower = 0;
  // Allocated blocks: counted in oversize_allocations when handed out (the
  // threshold can change before the block is freed).
  bool oversize = false;

  bool is_split() const { return prev != nullptr || next != nullptr; }
  DevicePtr end() const { return ptr + size; }
};

// The cache's record of a segment: its address space and its blocks. The
// memory under it is the business of the segment store that created it
// (allocator/segments/): a growable store's segments are a subclass with a
// page table, which the cache never looks into.
struct Segment {
  virtual ~Segment() = default;

  DevicePtr base = 0;
  std::size_t size = 0;  // address space; for classic segments also the memory
  StreamId stream = 0;
  PoolKind pool = PoolKind::kLarge;
  // A growable range: its free blocks are always splittable, and a free block
  // holds memory only where pages are mapped under it.
  bool expandable = false;
  // The private pool owning the segment; null for the default pool. Blocks
  // are indexed in their owner's BlockPools, never in another pool's.
  PrivatePool* owner = nullptr;
  Block* head = nullptr;
  // Classic segments: counted in oversize_segments when made.
  bool oversize = false;

  DevicePtr end() const { return base + size; }
  inline PoolId pool_id() const;
  // Every block of the segment is free (one block covers it all).
  bool wholly_free() const {
    return head->state == BlockState::kFree && head->next == nullptr;
  }
};

class BlockPool {
 private:
  // An index entry carries the block's key, so a search compares entries in
  // the tree's own nodes instead of loading every block it passes (in the
  // churn benchmark the index was half of the host time with a comparator
  // that read the blocks). `size` and `ptr` are mutable for Rekey's in-place
  // change, which keeps the order; they always equal the block's.
  struct Entry {
    StreamId stream;
    mutable std::size_t size;
    mutable DevicePtr ptr;
    Block* block;
  };
  struct Compare {
    // Nodes are searched front to back: with the compare below that beats a
    // binary search, whose every step is a branch the CPU cannot predict.
    using absl_btree_prefer_linear_node_search = std::true_type;
    bool operator()(const Entry& a, const Entry& b) const {
      // Streams almost always tie (one stream, or one at a time), so that
      // branch predicts; (size, address) compares as one 128-bit number,
      // without a branch that a search would mispredict half the time.
      if (a.stream != b.stream) return a.stream < b.stream;
      using U128 = unsigned __int128;
      return ((U128{a.size} << 64) | a.ptr) < ((U128{b.size} << 64) | b.ptr);
    }
  };
  using Set = absl::btree_set<Entry, Compare>;
  static Entry KeyOf(const Block* b) { return Entry{b->stream, b->size, b->ptr, nullptr}; }

 public:
  // Walks the index in key order, yielding the blocks.
  class Iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = Block*;
    using difference_type = std::ptrdiff_t;
    using pointer = Block* const*;
    using reference = Block*;
    Iterator() = default;
    explicit Iterator(Set::const_iterator it) : it_(it) {}
    Block* operator*() const { return it_->block; }
    Iterator& operator++() { ++it_; return *this; }
    Iterator operator++(int) { Iterator t = *this; ++it_; return t; }
    Iterator& operator--() { --it_; return *this; }
    Iterator operator--(int) { Iterator t = *this; --it_; return t; }
    bool operator==(const Iterator& o) const { return it_ == o.it_; }

   private:
    Set::const_iterator it_;
  };

  explicit BlockPool(PoolKind kind) : kind_(kind) {}

  void Insert(Block* block) {
    found_block_ = nullptr;
    blocks_.insert(Entry{block->stream, block->size, block->ptr, block});
  }
  // (A block not indexed is left alone, as erasing an absent key would.)
  void Erase(Block* block) {
    auto it = Find(block);
    found_block_ = nullptr;
    if (it != blocks_.end() && it->block == block) blocks_.erase(it);
  }
  // Gives the indexed `block` a new start and size. In place where the new
  // key keeps its place among its neighbours (a split off the front of the
  // largest hole, or a merge into it: the hot path), else by erasing and
  // inserting it again.
  void Rekey(Block* block, DevicePtr ptr, std::size_t size);
  bool Contains(const Block* block) const {
    auto it = Find(block);
    return it != blocks_.end() && it->block == block;
  }

  // The smallest free block on `stream` holding at least `size` bytes that
  // `policy` allows for it (oversize rules apply unless `expandable`: blocks
  // of growable segments are always splittable); null when there is none.
  Block* BestFit(StreamId stream, std::size_t size, const SizePolicy& policy,
                 bool expandable) const;
  // BestFit for growable segments passing over `skip`, and without
  // remembering what it found (nothing is taken out after it): the smallest
  // free block on `stream` of at least `size` bytes other than `skip`.
  Block* FitOtherThan(StreamId stream, std::size_t size, const Block* skip) const;

  // The smallest free block of at least `size` bytes on a stream other than
  // `except` that `usable` accepts, looking at no more than `per_stream`
  // candidates of each stream (smallest first); null when there is none.
  template <typename Usable>
  Block* FitOnOtherStreams(StreamId except, std::size_t size, int per_stream,
                           Usable&& usable) const {
    Block* best = nullptr;
    for (auto it = blocks_.begin(); it != blocks_.end();) {
      const StreamId s = it->stream;
      if (s != except) {
        auto c = blocks_.lower_bound(Entry{s, size, 0, nullptr});
        for (int n = 0; c != blocks_.end() && c->stream == s && n < per_stream; ++c, ++n) {
          if (best != nullptr && c->size >= best->size) break;
          if (usable(c->block)) {
            best = c->block;
            break;
          }
        }
      }
      if (s == ~StreamId{0}) break;
      it = blocks_.lower_bound(Entry{s + 1, 0, 0, nullptr});  // the next stream's first
    }
    return best;
  }

  // Whether a free block lies on a stream other than `stream` (entries are
  // ordered by stream first: the first and the last say it).
  bool HasOtherStreams(StreamId stream) const {
    return !blocks_.empty() &&
           (blocks_.begin()->stream != stream || std::prev(blocks_.end())->stream != stream);
  }

  // The indexed blocks after `block` (larger, or as large at a higher address).
  Iterator After(const Block* block) const {
    return Iterator(std::next(Find(block)));
  }

  std::size_t size() const { return blocks_.size(); }
  PoolKind kind() const { return kind_; }
  Iterator begin() const { return Iterator(blocks_.begin()); }
  Iterator end() const { return Iterator(blocks_.end()); }
  auto rbegin() const { return std::reverse_iterator<Iterator>(end()); }
  auto rend() const { return std::reverse_iterator<Iterator>(begin()); }

  // Every indexed block is free, of this pool, keyed by its own start, size
  // and stream, and ordered by the key.
  bool Validate(std::string* why = nullptr) const;

 private:
  // The entry of an indexed `block` (end() for one not indexed): BestFit's
  // answer without a second search when it is that block (allocation asks
  // for the block it was just given, to carve it).
  Set::const_iterator Find(const Block* block) const {
    return block == found_block_ ? found_ : blocks_.find(KeyOf(block));
  }

  PoolKind kind_;
  Set blocks_;
  // BestFit's last answer; any change to the index forgets it (a btree's
  // iterators do not survive an insert or an erase).
  mutable Set::const_iterator found_;
  mutable const Block* found_block_ = nullptr;
};

// A private pool: its free-block indexes and how many users hold it. While
// use_count > 0 a captured graph may replay into its memory at any time, so
// none of it goes back to the device; once it drops to 0 the pool's wholly
// free memory is released, and the record goes when it owns no segment.
struct PrivatePool {
  explicit PrivatePool(PoolId pool_id) : id(pool_id) {}
  PoolId id;
  int use_count = 0;
  // A region (DeviceAllocator::Pause): allocations made while it is the
  // thread's current region, in segments of its own; its id is
  // kRegionPoolBit | the region's number. Held for the allocator's life
  // (use count 1), so trims of other pools never touch it.
  bool region = false;
  // Paused: its memory is given back; its blocks keep their addresses.
  bool paused = false;
  // PyTorch's MemPool(use_on_oom=True): its free blocks serve allocations
  // outside any pool that would otherwise fail for want of memory
  // (DeviceAllocator::SetPoolUseOnOom).
  bool use_on_oom = false;
  std::size_t paused_bytes = 0;  // what the pause gave back
  // The backup of a region paused with one: the bytes of the blocks that
  // were allocated at the pause, in page-locked host memory. Pending frees
  // were completed first (the pause waits for the device), so free memory
  // is never copied. `runs` are maximal spans of adjacent allocated blocks,
  // by address; Resume copies back only what is still allocated, so a
  // block freed while paused simply drops out (backup_bytes counts what is
  // left). The host buffer stays after Resume, for the next pause (pinning
  // many GiB takes seconds); EmptyCache and the allocator's end free it.
  struct BackupRun {
    DevicePtr ptr;
    std::size_t bytes;
    std::size_t offset;  // in the host buffer
  };
  std::vector<BackupRun> backup_runs;
  std::size_t backup_bytes = 0;
  HostPtr backup_host = 0;
  std::size_t backup_capacity = 0;
  // Taken ahead by ReserveBackup: EmptyCache keeps it.
  bool backup_reserved = false;
  std::size_t segments = 0;
  BlockPool small{PoolKind::kSmall};
  BlockPool large{PoolKind::kLarge};

  BlockPool& Of(PoolKind kind) { return kind == PoolKind::kSmall ? small : large; }
  const BlockPool& Of(PoolKind kind) const {
    return kind == PoolKind::kSmall ? small : large;
  }
};

PoolId Segment::pool_id() const { return owner == nullptr ? 0 : owner->id; }

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_BLOCK_POOL_H_
