#include "allocator/cache/block_pool.h"

#include "absl/strings/str_cat.h"

namespace ccalloc {

Block* BlockPool::BestFit(StreamId stream, std::size_t size,
                          const SizePolicy& policy, bool expandable) const {
  auto it = blocks_.lower_bound(Entry{stream, size, 0, nullptr});
  if (it == blocks_.end() || it->stream != stream) return nullptr;
  if (!expandable && !policy.CanServe(it->size, size)) return nullptr;
  found_ = it;
  found_block_ = it->block;
  return it->block;
}

Block* BlockPool::FitOtherThan(StreamId stream, std::size_t size, const Block* skip) const {
  auto it = blocks_.lower_bound(Entry{stream, size, 0, nullptr});
  if (it != blocks_.end() && it->block == skip) ++it;
  return it == blocks_.end() || it->stream != stream ? nullptr : it->block;
}

void BlockPool::Rekey(Block* block, DevicePtr ptr, std::size_t size) {
  auto it = Find(block);
  found_block_ = nullptr;
  // The key after the change, against the neighbours'.
  const Entry key{block->stream, size, ptr, block};
  const Compare less;
  const bool in_place = (it == blocks_.begin() || less(*std::prev(it), key)) &&
                        (std::next(it) == blocks_.end() || less(key, *std::next(it)));
  block->ptr = ptr;
  block->size = size;
  if (in_place) {
    it->ptr = ptr;
    it->size = size;
    return;
  }
  // (Never empties the index on the way: a block alone in it is in place.)
  blocks_.erase(it);
  blocks_.insert(key);
}

bool BlockPool::Validate(std::string* why) const {
  const Entry* last = nullptr;
  for (const Entry& e : blocks_) {
    const Block* b = e.block;
    std::string problem;
    if (b->state != BlockState::kFree) {
      problem = "indexed block is not free";
    } else if (b->pool != kind_) {
      problem = "indexed block belongs to the other pool";
    } else if (e.stream != b->stream || e.size != b->size || e.ptr != b->ptr) {
      problem = "index entry's key is not its block's";
    } else if (last != nullptr && !Compare()(*last, e)) {
      problem = "index out of order";
    }
    if (!problem.empty()) {
      if (why) *why = absl::StrCat("BlockPool: ", problem, " at 0x", absl::Hex(b->ptr));
      return false;
    }
    last = &e;
  }
  return true;
}

}  // namespace ccalloc
