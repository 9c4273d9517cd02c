// size_policy.h — rounding, pool choice, segment sizes and split rules.
//
// The numbers follow PyTorch's native caching allocator so that a user moving
// over sees the same block sizes and so that the pytorch-native preset replays
// traces to exactly PyTorch's figures:
//   requests round up to 512 B (or to a power-of-two division when configured);
//   requests up to 1 MiB live in the small pool, packed into 2 MiB segments;
//   larger ones in the large pool: 20 MiB segments below 10 MiB, otherwise the
//   request rounded up to 2 MiB.
// Overhead: at most 511 B per block from rounding; a small segment wastes less
// than one block; a large request below 10 MiB shares a 20 MiB segment.
#ifndef CCALLOC_ALLOCATOR_SIZE_POLICY_H_
#define CCALLOC_ALLOCATOR_SIZE_POLICY_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "allocator/cache/options.h"

namespace ccalloc {

inline constexpr std::size_t kMinBlockSize = 512;
inline constexpr std::size_t kSmallSize = 1 * kMiB;
inline constexpr std::size_t kSmallBuffer = 2 * kMiB;
inline constexpr std::size_t kLargeBuffer = 20 * kMiB;
inline constexpr std::size_t kMinLargeAlloc = 10 * kMiB;
inline constexpr std::size_t kRoundLarge = 2 * kMiB;
// Larger requests cannot be represented once rounded to segments (no device
// has 2^52 bytes); rejecting them early keeps every sum below overflow.
inline constexpr std::size_t kMaxRequest = std::size_t{1} << 52;

enum class PoolKind : std::uint8_t { kSmall = 0, kLarge = 1 };

class SizePolicy {
 public:
  explicit SizePolicy(const Options& options) : options_(options) {}

  // The block size a request of `size` bytes gets. InvalidArgument for sizes
  // that cannot be represented (above kMaxRequest).
  absl::StatusOr<std::size_t> RoundSize(std::size_t size) const;

  static PoolKind PoolFor(std::size_t rounded) {
    return rounded <= kSmallSize ? PoolKind::kSmall : PoolKind::kLarge;
  }

  // Size of a new classic segment for a block of `rounded` bytes.
  static std::size_t SegmentSize(std::size_t rounded);

  // Whether serving `request` from a free block of `block_size` leaves a
  // remainder worth keeping as its own block. In growable segments every
  // remainder is kept: it can coalesce with whatever is freed next to it.
  bool ShouldSplit(PoolKind pool, std::size_t block_size, std::size_t request,
                   bool expandable) const;

  // Oversize rules (max_split_size): an oversize block is never split and
  // serves only requests that are themselves oversize and within
  // kLargeBuffer of its size, so that a huge block is not wasted on a small
  // request.
  bool IsOversize(std::size_t size) const { return size >= options_.max_split_size; }
  bool CanServe(std::size_t block_size, std::size_t request) const {
    if (!IsOversize(request)) return !IsOversize(block_size);
    return block_size < request + kLargeBuffer;
  }

  std::size_t max_split_size() const { return options_.max_split_size; }

 private:
  Options options_;
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SIZE_POLICY_H_
