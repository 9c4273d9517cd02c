// block_pool.h — blocks, segments and the free-block index.
//
// A segment is one piece of device address space: a plain device allocation
// (classic) or a reserved virtual range that grows by mapping pages
// (expandable). Its blocks tile it exactly, in address order, linked through
// prev/next. Links never cross segments, so two neighbouring device
// allocations can never be coalesced into one block (they may not even be
// contiguous on the device).
//
// BlockPool indexes the free blocks of one pool (small or large) by
// (stream, size, address): a lower_bound gives the best fit on a stream, and
// ties go to the lowest address, which keeps reuse deterministic for replay.
#ifndef CCALLOC_ALLOCATOR_BLOCK_POOL_H_
#define CCALLOC_ALLOCATOR_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/inlined_vector.h"
#include "allocator/backend.h"
#include "allocator/size_policy.h"

namespace ccalloc {

struct Segment;

enum class BlockState : std::uint8_t {
  kFree,       // in a pool, reusable
  kAllocated,  // handed to the user
  kPending,    // freed by the user, waiting for events on other streams
};

struct Block {
  DevicePtr ptr = 0;
  std::size_t size = 0;
  std::size_t requested = 0;  // the user's size, before rounding
  StreamId stream = 0;
  PoolKind pool = PoolKind::kLarge;
  BlockState state = BlockState::kFree;
  Segment* segment = nullptr;
  Block* prev = nullptr;
  Block* next = nullptr;
  int pending_events = 0;
  // Free blocks: the allocator's free sequence number when the newest of the
  // bytes it covers was freed (see DeviceAllocator::synced_upto_).
  std::uint64_t freed_at = 0;
  // Streams other than `stream` that used the block (record_stream).
  absl::InlinedVector<StreamId, 1> stream_uses;

  bool is_split() const { return prev != nullptr || next != nullptr; }
  DevicePtr end() const { return ptr + size; }
};

struct Segment {
  DevicePtr base = 0;
  std::size_t size = 0;  // address space; for classic segments also the memory
  StreamId stream = 0;
  PoolKind pool = PoolKind::kLarge;
  bool expandable = false;
  Block* head = nullptr;
  // Expandable segments only: one entry per page, 0 when unmapped.
  std::vector<PhysicalHandle> pages;
  std::size_t mapped_pages = 0;
  // One past the highest mapped page: scans for mapped pages stop here
  // instead of walking the (usually unmapped) tail of a device-sized range.
  std::size_t mapped_end = 0;

  DevicePtr end() const { return base + size; }

  // The pages [first, last) of the chunk that maps `page` (a mapped page): a
  // chunk's pages all hold its handle, and handles are never shared.
  std::pair<std::size_t, std::size_t> ChunkAround(std::size_t page) const {
    const PhysicalHandle handle = pages[page];
    std::size_t first = page;
    while (first > 0 && pages[first - 1] == handle) --first;
    std::size_t last = page + 1;
    while (last < pages.size() && pages[last] == handle) ++last;
    return {first, last};
  }
};

class BlockPool {
 public:
  explicit BlockPool(PoolKind kind) : kind_(kind) {}

  void Insert(Block* block) { blocks_.insert(block); }
  void Erase(Block* block) { blocks_.erase(block); }
  bool Contains(Block* block) const { return blocks_.contains(block); }

  // The smallest free block on `stream` holding at least `size` bytes that
  // `policy` allows for it (oversize rules apply unless `expandable`: blocks
  // of growable segments are always splittable); null when there is none.
  Block* BestFit(StreamId stream, std::size_t size, const SizePolicy& policy,
                 bool expandable) const;

  std::size_t size() const { return blocks_.size(); }
  PoolKind kind() const { return kind_; }
  auto begin() const { return blocks_.begin(); }
  auto end() const { return blocks_.end(); }
  auto rbegin() const { return blocks_.rbegin(); }
  auto rend() const { return blocks_.rend(); }

  // Every indexed block is free, of this pool, and ordered by the key.
  bool Validate(std::string* why = nullptr) const;

 private:
  struct Compare {
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  PoolKind kind_;
  absl::btree_set<Block*, Compare> blocks_;
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_BLOCK_POOL_H_
