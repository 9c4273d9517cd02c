#include "allocator/cache/size_policy.h"

#include <bit>

#include "absl/strings/str_cat.h"

namespace ccalloc {
namespace {

std::size_t RoundUp(std::size_t size, std::size_t multiple) {
  return (size + multiple - 1) / multiple * multiple;
}

// Index into roundup_power2_divisions: 0 for sizes below 2 MiB, then one per
// doubling, saturating at the last interval.
int IntervalIndex(std::size_t size) {
  int log_size = std::bit_width(size) - 1;
  int start = std::bit_width(kSmallSize) - 1;
  int index = log_size > start ? log_size - start : 0;
  return index < kRoundupIntervals ? index : kRoundupIntervals - 1;
}

// Rounds `size` up to the next of `divisions` equal steps between the powers of
// two around it; a power of two is already a boundary.
std::size_t RoundToDivision(std::size_t size, std::uint32_t divisions) {
  if (std::has_single_bit(size)) return size;
  std::size_t floor = std::bit_floor(size);
  std::size_t step = floor / std::bit_floor(std::size_t{divisions});
  if (step == 0) return floor << 1;
  return RoundUp(size, step);
}

}  // namespace

absl::StatusOr<std::size_t> SizePolicy::RoundSize(std::size_t size) const {
  if (size > kMaxRequest) {
    return absl::InvalidArgumentError(absl::StrCat(
        "allocation of ", size, " bytes cannot be represented (limit ", kMaxRequest,
        " bytes)"));
  }
  if (size < kMinBlockSize) return kMinBlockSize;
  std::uint32_t divisions = options_.roundup_power2_divisions[IntervalIndex(size)];
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    return RoundToDivision(size, divisions);
  }
  return RoundUp(size, kMinBlockSize);
}

std::size_t SizePolicy::SegmentSize(std::size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return RoundUp(rounded, kRoundLarge);
}

bool SizePolicy::ShouldSplit(PoolKind pool, std::size_t block_size,
                             std::size_t request, bool expandable) const {
  std::size_t remaining = block_size - request;
  if (pool == PoolKind::kSmall || expandable) return remaining >= kMinBlockSize;
  return !IsOversize(request) && remaining > kSmallSize;
}

}  // namespace ccalloc
