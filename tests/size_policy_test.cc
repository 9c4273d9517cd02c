// size_policy_test.cc — rounding, pool choice, segment sizes and split rules,
// checked as properties over sizes from 1 B to 1 GiB (every size up to a bit
// past 1 MiB, then dense samples around and between every power of two).
#include "allocator/cache/size_policy.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccalloc {
namespace {

// Sizes in increasing order: every size up to 1 MiB + 64 KiB, then for each
// power of two up to 1 GiB the 1,025 sizes around it and 2,048 random ones
// between it and the next.
std::vector<std::size_t> SampleSizes() {
  std::vector<std::size_t> sizes;
  for (std::size_t s = 1; s <= kMiB + 65536; ++s) sizes.push_back(s);
  std::mt19937_64 rng(42);
  for (int bit = 20; bit <= 30; ++bit) {
    const std::size_t p = std::size_t{1} << bit;
    for (std::size_t s = p - 512; s <= p + 512; ++s) sizes.push_back(s);
    std::uniform_int_distribution<std::size_t> between(p, 2 * p - 1);
    for (int i = 0; i < 2048 && bit < 30; ++i) sizes.push_back(between(rng));
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

const std::vector<std::size_t>& Sizes() {
  static const std::vector<std::size_t>* const sizes = new std::vector<std::size_t>(SampleSizes());
  return *sizes;
}

// The properties every rounding policy must have, over every sampled size:
// at least the request, a multiple of 512, monotonic and idempotent; the
// overhead is below `max_overhead(size)`.
template <typename Overhead>
void CheckRounding(const SizePolicy& policy, Overhead max_overhead) {
  std::size_t previous_size = 0;
  std::size_t previous_rounded = 0;
  int failures = 0;
  for (std::size_t size : Sizes()) {
    absl::StatusOr<std::size_t> rounded = policy.RoundSize(size);
    ASSERT_TRUE(rounded.ok()) << size << ": " << rounded.status();
    const std::size_t r = *rounded;
    absl::StatusOr<std::size_t> again = policy.RoundSize(r);
    ASSERT_TRUE(again.ok());
    const bool ok = r >= size && r % kMinBlockSize == 0 && r >= previous_rounded && *again == r &&
                    r - size < max_overhead(size);
    if (!ok) {
      ADD_FAILURE() << "size " << size << " rounds to " << r << " (previous size " << previous_size
                    << " rounded to " << previous_rounded << "; rounding the result gives "
                    << *again << ")";
      if (++failures > 10) return;
    }
    previous_size = size;
    previous_rounded = r;
  }
}

TEST(SizePolicyTest, SampleCoversTheRange) {
  EXPECT_EQ(Sizes().front(), 1u);
  EXPECT_GE(Sizes().back(), kGiB);
  EXPECT_GT(Sizes().size(), std::size_t{1} << 20);
}

TEST(SizePolicyTest, PlainRoundingTo512Bytes) {
  const SizePolicy policy(PytorchNativeOptions());
  CheckRounding(policy, [](std::size_t) { return kMinBlockSize; });
  // Exactly the next multiple of 512, checked independently at the edges.
  for (std::size_t size : {std::size_t{1}, std::size_t{511}, std::size_t{512}, std::size_t{513},
                           kMiB - 1, kMiB, kMiB + 1}) {
    EXPECT_EQ(*policy.RoundSize(size), (size + 511) / 512 * 512) << size;
  }
}

TEST(SizePolicyTest, PowerOfTwoDivisions) {
  for (std::uint32_t divisions : {2u, 4u, 8u, 16u}) {
    SCOPED_TRACE(absl::StrCat("divisions ", divisions));
    Options options = PytorchNativeOptions();
    options.roundup_power2_divisions.fill(divisions);
    const SizePolicy policy(options);
    // Never more than one step (floor power of two / divisions) above the
    // request, and never less precise than the 512-byte rule below
    // 512 * divisions.
    CheckRounding(policy, [divisions](std::size_t size) {
      std::size_t floor = std::size_t{1} << (63 - __builtin_clzll(size));
      return std::max<std::size_t>(kMinBlockSize, floor / divisions);
    });
    // Every result is one of the division boundaries (or a 512 multiple for
    // small sizes): rounding lands on floor + k * floor / divisions.
    for (std::size_t size : Sizes()) {
      if (size <= kMinBlockSize * divisions) continue;
      const std::size_t r = *policy.RoundSize(size);
      const std::size_t floor = std::size_t{1} << (63 - __builtin_clzll(size));
      const std::size_t step = floor / divisions;
      ASSERT_EQ((r - floor) % step, 0u) << "size " << size << " rounds to " << r;
    }
  }
}

TEST(SizePolicyTest, DivisionsPerInterval) {
  // Only [4, 8) MiB (interval 2) uses divisions; the rest plain rounding.
  Options options = PytorchNativeOptions();
  options.roundup_power2_divisions[2] = 4;
  const SizePolicy policy(options);
  EXPECT_EQ(*policy.RoundSize(4 * kMiB + 1), 5 * kMiB);
  EXPECT_EQ(*policy.RoundSize(3 * kMiB + 1), 3 * kMiB + 512);
  EXPECT_EQ(*policy.RoundSize(8 * kMiB + 1), 8 * kMiB + 512);
  CheckRounding(policy, [](std::size_t size) {
    return size >= 4 * kMiB && size < 8 * kMiB ? kMiB : kMinBlockSize;
  });
}

TEST(SizePolicyTest, PoolAndSegmentChoiceIsConsistent) {
  const SizePolicy policy(PytorchNativeOptions());
  int failures = 0;
  for (std::size_t size : Sizes()) {
    const std::size_t r = *policy.RoundSize(size);
    const PoolKind pool = SizePolicy::PoolFor(r);
    const std::size_t segment = SizePolicy::SegmentSize(r);
    bool ok = segment >= r && segment % (2 * kMiB) == 0;
    if (r <= kSmallSize) {
      ok = ok && pool == PoolKind::kSmall && segment == kSmallBuffer;
    } else if (r < kMinLargeAlloc) {
      ok = ok && pool == PoolKind::kLarge && segment == kLargeBuffer;
    } else {
      ok = ok && pool == PoolKind::kLarge && segment - r < kRoundLarge;
    }
    // Rounding again changes neither the pool nor the segment.
    ok = ok && SizePolicy::PoolFor(*policy.RoundSize(r)) == pool &&
         SizePolicy::SegmentSize(*policy.RoundSize(r)) == segment;
    if (!ok) {
      ADD_FAILURE() << "size " << size << " rounded " << r << " pool " << static_cast<int>(pool)
                    << " segment " << segment;
      if (++failures > 10) return;
    }
  }
}

TEST(SizePolicyTest, SplitRules) {
  const SizePolicy policy(PytorchNativeOptions());
  // Small pool: any remainder of at least one minimum block is kept.
  EXPECT_TRUE(policy.ShouldSplit(PoolKind::kSmall, 2 * kMiB, 2 * kMiB - 512, false));
  EXPECT_FALSE(policy.ShouldSplit(PoolKind::kSmall, 2 * kMiB, 2 * kMiB, false));
  // Large pool, classic: only a remainder above 1 MiB.
  EXPECT_TRUE(policy.ShouldSplit(PoolKind::kLarge, 20 * kMiB, 19 * kMiB - 512, false));
  EXPECT_FALSE(policy.ShouldSplit(PoolKind::kLarge, 20 * kMiB, 19 * kMiB, false));
  // Growable segments keep every remainder: it can coalesce later.
  EXPECT_TRUE(policy.ShouldSplit(PoolKind::kLarge, 20 * kMiB, 20 * kMiB - 512, true));
  EXPECT_FALSE(policy.ShouldSplit(PoolKind::kLarge, 20 * kMiB, 20 * kMiB, true));
}

TEST(SizePolicyTest, OversizeRules) {
  Options options = PytorchNativeOptions();
  options.max_split_size = 64 * kMiB;
  const SizePolicy policy(options);
  EXPECT_FALSE(policy.IsOversize(64 * kMiB - 1));
  EXPECT_TRUE(policy.IsOversize(64 * kMiB));
  // Oversize blocks are never split.
  EXPECT_FALSE(policy.ShouldSplit(PoolKind::kLarge, 200 * kMiB, 64 * kMiB, false));
  // An oversize block serves an oversize request within 20 MiB of it.
  EXPECT_TRUE(policy.CanServe(100 * kMiB, 90 * kMiB));
  EXPECT_FALSE(policy.CanServe(100 * kMiB, 80 * kMiB));
  // Never a request below the limit, which a normal block serves.
  EXPECT_FALSE(policy.CanServe(100 * kMiB, 10 * kMiB));
  EXPECT_TRUE(policy.CanServe(20 * kMiB, 10 * kMiB));
  // Without a limit nothing is oversize.
  const SizePolicy unlimited(PytorchNativeOptions());
  EXPECT_FALSE(unlimited.IsOversize(std::size_t{1} << 40));
  EXPECT_TRUE(unlimited.CanServe(std::size_t{1} << 40, 10 * kMiB));
}

TEST(SizePolicyTest, UnrepresentableSizesAreInvalidArgument) {
  for (std::uint32_t divisions : {0u, 4u}) {
    Options options = PytorchNativeOptions();
    options.roundup_power2_divisions.fill(divisions);
    const SizePolicy policy(options);
    absl::StatusOr<std::size_t> largest = policy.RoundSize(kMaxRequest);
    ASSERT_TRUE(largest.ok()) << largest.status();
    EXPECT_GE(*largest, kMaxRequest);
    for (std::size_t bad : {kMaxRequest + 1, std::numeric_limits<std::size_t>::max(),
                            std::numeric_limits<std::size_t>::max() - 511}) {
      absl::StatusOr<std::size_t> r = policy.RoundSize(bad);
      ASSERT_FALSE(r.ok()) << bad;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace ccalloc
