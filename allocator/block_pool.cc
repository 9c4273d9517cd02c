#include "allocator/block_pool.h"

#include "absl/strings/str_cat.h"

namespace ccalloc {

Block* BlockPool::BestFit(StreamId stream, std::size_t size,
                          const SizePolicy& policy, bool expandable) const {
  Block key;
  key.stream = stream;
  key.size = size;
  key.ptr = 0;
  auto it = blocks_.lower_bound(&key);
  if (it == blocks_.end() || (*it)->stream != stream) return nullptr;
  if (expandable) return *it;
  return policy.CanServe((*it)->size, size) ? *it : nullptr;
}

void BlockPool::Rekey(Block* block, DevicePtr ptr, std::size_t size) {
  auto it = blocks_.find(block);
  // The key after the change, against the neighbours'.
  Block key;
  key.stream = block->stream;
  key.size = size;
  key.ptr = ptr;
  const Compare less;
  const bool in_place = (it == blocks_.begin() || less(*std::prev(it), &key)) &&
                        (std::next(it) == blocks_.end() || less(&key, *std::next(it)));
  if (in_place) {
    block->ptr = ptr;
    block->size = size;
    return;
  }
  // (Never empties the index on the way: a block alone in it is in place.)
  blocks_.erase(it);
  block->ptr = ptr;
  block->size = size;
  blocks_.insert(block);
}

bool BlockPool::Validate(std::string* why) const {
  const Block* last = nullptr;
  for (const Block* b : blocks_) {
    std::string problem;
    if (b->state != BlockState::kFree) {
      problem = "indexed block is not free";
    } else if (b->pool != kind_) {
      problem = "indexed block belongs to the other pool";
    } else if (last != nullptr && !Compare()(last, b)) {
      problem = "index out of order";
    }
    if (!problem.empty()) {
      if (why) *why = absl::StrCat("BlockPool: ", problem, " at 0x", absl::Hex(b->ptr));
      return false;
    }
    last = b;
  }
  return true;
}

}  // namespace ccalloc
