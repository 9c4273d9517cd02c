// The extension's KnownRanges (python/ccalloc/csrc/mapped_ranges.h): which
// parts of the ranges mapped after a request are new, the source of the
// memory history's segment_alloc / segment_map entries.
#include "python/ccalloc/csrc/mapped_ranges.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ccalloc_ext::KnownRanges;
using ccalloc_ext::MappedRange;
using ccalloc_ext::TakenRanges;

constexpr uint64_t kMiB = uint64_t{1} << 20;

MappedRange R(uint64_t address, uint64_t size, bool expandable = true) {
  return MappedRange{address, size, nullptr, expandable};
}

std::vector<std::pair<uint64_t, uint64_t>> Spans(const std::vector<MappedRange>& v) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const MappedRange& r : v) out.emplace_back(r.address, r.size);
  return out;
}

using Span = std::pair<uint64_t, uint64_t>;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(KnownRangesTest, NeverReadIsStaleAndEverythingIsNew) {
  KnownRanges k;
  EXPECT_TRUE(k.Stale(0));
  EXPECT_THAT(Spans(k.Update({R(10 * kMiB, 2 * kMiB), R(2 * kMiB, 2 * kMiB)}, 4 * kMiB)),
              ElementsAre(Span{2 * kMiB, 2 * kMiB}, Span{10 * kMiB, 2 * kMiB}));
  EXPECT_FALSE(k.Stale(4 * kMiB));
  EXPECT_TRUE(k.Stale(2 * kMiB));
  EXPECT_TRUE(k.Validate());
}

TEST(KnownRangesTest, AGrowableRangeGrownAtEitherEndGivesOnlyTheAddedPages) {
  KnownRanges k;
  k.Refresh({R(4 * kMiB, 2 * kMiB)}, 2 * kMiB);
  // Grown by 2 MiB at the end and 2 at the start, in one stretch.
  std::vector<MappedRange> fresh = k.Update({R(2 * kMiB, 6 * kMiB)}, 6 * kMiB);
  EXPECT_THAT(Spans(fresh), ElementsAre(Span{2 * kMiB, 2 * kMiB}, Span{6 * kMiB, 2 * kMiB}));
  EXPECT_TRUE(fresh[0].expandable);
  EXPECT_THAT(Spans(k.known()), ElementsAre(Span{2 * kMiB, 6 * kMiB}));
}

TEST(KnownRangesTest, AGapBetweenTwoKnownRangesFilledIsOnePiece) {
  KnownRanges k;
  k.Refresh({R(0, 2 * kMiB), R(6 * kMiB, 2 * kMiB), R(20 * kMiB, kMiB)}, 5 * kMiB);
  EXPECT_THAT(Spans(k.Update({R(0, 8 * kMiB), R(20 * kMiB, kMiB)}, 9 * kMiB)),
              ElementsAre(Span{2 * kMiB, 4 * kMiB}));
}

TEST(KnownRangesTest, NothingNewWhenRangesShrankOrStayed) {
  KnownRanges k;
  k.Refresh({R(0, 8 * kMiB, false), R(32 * kMiB, 2 * kMiB, false)}, 10 * kMiB);
  EXPECT_THAT(k.Update({R(0, 8 * kMiB, false)}, 8 * kMiB), IsEmpty());
  EXPECT_THAT(k.Update({R(2 * kMiB, 2 * kMiB)}, 2 * kMiB), IsEmpty());
  EXPECT_THAT(Spans(k.known()), ElementsAre(Span{2 * kMiB, 2 * kMiB}));
}

TEST(KnownRangesTest, ARangeGivenBackAndTakenAgainIsNewOnceReadInBetween) {
  // What the extension does around empty_cache: reserved moved, so the ranges
  // are read again before the next request, and the same range mapped again
  // counts as new (PyTorch writes a fresh segment_alloc for it).
  KnownRanges k;
  k.Refresh({R(0, 2 * kMiB, false)}, 2 * kMiB);
  ASSERT_TRUE(k.Stale(0));
  EXPECT_THAT(Spans(k.Refresh({}, 0)), ElementsAre(Span{0, 2 * kMiB}));
  EXPECT_THAT(Spans(k.Update({R(0, 2 * kMiB, false)}, 2 * kMiB)),
              ElementsAre(Span{0, 2 * kMiB}));
  k.Clear();
  EXPECT_TRUE(k.Stale(2 * kMiB));
  EXPECT_THAT(k.known(), IsEmpty());
}

TEST(KnownRangesTest, EmptyRangesAreDroppedAndValidateHolds) {
  KnownRanges k;
  EXPECT_THAT(Spans(k.Update({R(4 * kMiB, 0), R(kMiB, kMiB)}, kMiB)),
              ElementsAre(Span{kMiB, kMiB}));
  EXPECT_TRUE(k.Validate());
}

// A fake plugin for TakenRanges: what is mapped on device 0, and how many
// times the ranges were read.
struct FakeDevice {
  static inline std::vector<MappedRange> mapped;
  static inline int range_reads = 0;
  static inline bool readable = true;
  static int64_t Reserved(int device) {
    if (device != 0 || !readable) return -1;
    int64_t sum = 0;
    for (const MappedRange& r : mapped) sum += static_cast<int64_t>(r.size);
    return sum;
  }
  static bool Ranges(int device, std::vector<MappedRange>* out) {
    ++range_reads;
    if (device != 0 || !readable) return false;
    *out = mapped;
    return true;
  }
};

TEST(TakenRangesTest, ARequestThatMapsGivesItsStretchAndOneThatDoesNotGivesNothing) {
  FakeDevice::mapped = {};
  FakeDevice::range_reads = 0;
  FakeDevice::readable = true;
  TakenRanges taken(&FakeDevice::Reserved, &FakeDevice::Ranges);
  std::vector<MappedRange> gone;
  int64_t before = taken.Before(0, &gone);
  EXPECT_EQ(before, 0);
  FakeDevice::mapped = {R(8 * kMiB, 2 * kMiB)};
  EXPECT_THAT(Spans(taken.After(0, before)), ElementsAre(Span{8 * kMiB, 2 * kMiB}));
  const int reads = FakeDevice::range_reads;
  // Served from what is mapped: reserved did not move, the ranges are not read.
  before = taken.Before(0, &gone);
  EXPECT_THAT(taken.After(0, before), IsEmpty());
  EXPECT_EQ(FakeDevice::range_reads, reads);
  // Grown at the end.
  before = taken.Before(0, &gone);
  FakeDevice::mapped = {R(8 * kMiB, 6 * kMiB)};
  EXPECT_THAT(Spans(taken.After(0, before)), ElementsAre(Span{10 * kMiB, 4 * kMiB}));
  EXPECT_TRUE(taken.Validate());
}

TEST(TakenRangesTest, MemoryGivenBackBetweenRequestsIsNewWhenTakenAgain) {
  FakeDevice::mapped = {R(0, 2 * kMiB, false)};
  FakeDevice::readable = true;
  TakenRanges taken(&FakeDevice::Reserved, &FakeDevice::Ranges);
  std::vector<MappedRange> gone;
  taken.After(0, taken.Before(0, &gone));
  EXPECT_THAT(gone, IsEmpty()) << "never read before: nothing is reported gone";
  FakeDevice::mapped = {};  // given back in the background, between requests
  const int64_t before = taken.Before(0, &gone);
  EXPECT_EQ(before, 0);
  EXPECT_THAT(Spans(gone), ElementsAre(Span{0, 2 * kMiB}));
  EXPECT_FALSE(gone[0].expandable);
  FakeDevice::mapped = {R(0, 2 * kMiB, false)};
  std::vector<MappedRange> fresh = taken.After(0, before);
  EXPECT_THAT(Spans(fresh), ElementsAre(Span{0, 2 * kMiB}));
  EXPECT_FALSE(fresh[0].expandable);
}

TEST(TakenRangesTest, UnreadableDevicesAndClearedHistoriesGiveNothingWrong) {
  FakeDevice::mapped = {R(0, 2 * kMiB)};
  FakeDevice::readable = false;
  TakenRanges taken(&FakeDevice::Reserved, &FakeDevice::Ranges);
  std::vector<MappedRange> gone;
  EXPECT_EQ(taken.Before(0, &gone), -1);
  EXPECT_THAT(taken.After(0, -1), IsEmpty());
  EXPECT_EQ(taken.Before(3, &gone), -1);
  FakeDevice::readable = true;
  EXPECT_EQ(taken.Before(0, &gone), static_cast<int64_t>(2 * kMiB));
  FakeDevice::mapped = {};
  taken.Clear();  // empty_cache wrote its own entries: the next request reads afresh
  const int reads = FakeDevice::range_reads;
  EXPECT_EQ(taken.Before(0, &gone), 0);
  EXPECT_EQ(FakeDevice::range_reads, reads + 1);
  EXPECT_THAT(gone, IsEmpty()) << "what went before a Clear is not reported twice";
  FakeDevice::mapped = {R(0, 2 * kMiB)};
  EXPECT_THAT(Spans(taken.After(0, 0)), ElementsAre(Span{0, 2 * kMiB}));
}

TEST(KnownRangesTest, RefreshGivesWhatWentAndUpdateWhatCame) {
  KnownRanges k;
  EXPECT_THAT(k.Refresh({R(0, 8 * kMiB)}, 8 * kMiB), IsEmpty()) << "never read: nothing went";
  // A growable range's middle and end unmapped, a new range elsewhere.
  EXPECT_THAT(Spans(k.Refresh({R(0, 2 * kMiB), R(4 * kMiB, 2 * kMiB), R(64 * kMiB, kMiB)},
                              5 * kMiB)),
              ElementsAre(Span{2 * kMiB, 2 * kMiB}, Span{6 * kMiB, 2 * kMiB}));
  EXPECT_THAT(Spans(k.known()),
              ElementsAre(Span{0, 2 * kMiB}, Span{4 * kMiB, 2 * kMiB}, Span{64 * kMiB, kMiB}));
  EXPECT_TRUE(k.Validate());
}

}  // namespace
