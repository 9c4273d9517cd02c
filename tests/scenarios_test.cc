#include "bench/scenarios.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/patterns.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stats/trace.h"

namespace ccalloc::scenarios {
namespace {

using ::testing::Contains;
using ::testing::Ge;
using ::testing::HasSubstr;
using Op = TraceEvent::Op;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

// Per-id facts gathered in one pass over a trace.
struct Block {
  uint64_t bytes = 0;
  uint64_t stream = 0;
  size_t alloc_index = 0;
  size_t free_index = 0;
  uint64_t free_stream = 0;
};

std::vector<Block> Blocks(const Trace& t) {
  std::vector<Block> blocks(t.num_ids);
  for (size_t i = 0; i < t.events.size(); ++i) {
    const TraceEvent& e = t.events[i];
    Block& b = blocks[e.id];
    if (e.op == Op::kAlloc) {
      b.bytes = e.bytes;
      b.stream = e.stream;
      b.alloc_index = i;
    } else {
      b.free_index = i;
      b.free_stream = e.stream;
    }
  }
  return blocks;
}

Trace Make(const std::string& name, uint64_t seed) {
  absl::StatusOr<Trace> t = MakeScenario(name, seed);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace{};
}

class EveryScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryScenarioTest, IsValidRealisticAndFreesEverything) {
  const Trace t = Make(GetParam(), 1);
  EXPECT_EQ(t.name, GetParam());
  ASSERT_TRUE(ValidateTrace(t).ok()) << ValidateTrace(t);
  EXPECT_GE(t.events.size(), 10'000u);
  EXPECT_LE(t.events.size(), 200'000u);
  // Every id allocated once and freed once: nothing left live at the end.
  EXPECT_EQ(t.events.size(), 2 * t.num_ids);
  for (const TraceEvent& e : t.events) {
    ASSERT_GE(e.bytes, 512u);
    ASSERT_EQ(e.bytes % 512, 0u) << "PyTorch rounds to 512 bytes";
  }
}

TEST_P(EveryScenarioTest, IsDeterministicForASeed) {
  const Trace a = Make(GetParam(), 42);
  const Trace b = Make(GetParam(), 42);
  EXPECT_EQ(a.num_ids, b.num_ids);
  EXPECT_TRUE(a.events == b.events);
}

TEST_P(EveryScenarioTest, DiffersAcrossSeeds) {
  EXPECT_FALSE(Make(GetParam(), 1).events == Make(GetParam(), 2).events);
}

TEST_P(EveryScenarioTest, SurvivesAWriteReadRoundTrip) {
  const Trace t = Make(GetParam(), 3);
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / (GetParam() + ".trace.gz"))
          .string();
  ASSERT_TRUE(WriteTrace(t, path).ok());
  absl::StatusOr<Trace> read = ReadTrace(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->name, GetParam());
  EXPECT_TRUE(read->events == t.events);
}

INSTANTIATE_TEST_SUITE_P(All, EveryScenarioTest,
                         ::testing::ValuesIn(ScenarioNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(ScenariosTest, NamesAreTheDocumentedOnes) {
  EXPECT_THAT(ScenarioNames(),
              ::testing::ElementsAre("transformer", "growing", "pinned",
                                     "small-huge", "two-streams", "churn"));
}

TEST(ScenariosTest, UnknownNameListsTheKnownOnes) {
  absl::StatusOr<Trace> t = MakeScenario("nope", 1);
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("small-huge"));
}

TEST(ScenariosTest, TransformerKeepsWeightsAndVariesActivations) {
  const Trace t = Make("transformer", 1);
  const std::vector<Block> blocks = Blocks(t);
  // The weights (wte first) are allocated first and freed only at the end.
  EXPECT_EQ(blocks[0].alloc_index, 0u);
  EXPECT_GT(blocks[0].free_index, t.events.size() * 9 / 10);
  EXPECT_EQ(blocks[0].bytes, 50257u * 768 * 4);
  // A new sequence length each step gives many distinct activation sizes.
  std::set<uint64_t> sizes;
  for (const Block& b : blocks) sizes.insert(b.bytes);
  EXPECT_GT(sizes.size(), 100u);
  for (const Block& b : blocks) EXPECT_EQ(b.stream, 0u);
}

TEST(ScenariosTest, TransformerAttentionScalesWithSeqSquared) {
  TransformerOptions o;
  o.layers = 2;
  o.steps = 3;
  o.min_seq = o.max_seq = 256;
  const Trace t = TransformerTraining(o);
  ASSERT_TRUE(ValidateTrace(t).ok()) << ValidateTrace(t);
  const uint64_t attn = uint64_t{8} * 12 * 256 * 256 * 4;
  const uint64_t act = uint64_t{8} * 256 * 768 * 4;
  std::vector<uint64_t> alloc_sizes;
  for (const TraceEvent& e : t.events) {
    if (e.op == Op::kAlloc) alloc_sizes.push_back(e.bytes);
  }
  EXPECT_THAT(alloc_sizes, Contains(attn));
  EXPECT_THAT(alloc_sizes, Contains(act));
  EXPECT_THAT(alloc_sizes, Contains(4 * act));
  EXPECT_EQ(t.events.size(), 2 * t.num_ids);
}

TEST(ScenariosTest, GrowingBuffersAllocateLargerBeforeFreeingOld) {
  const Trace t = Make("growing", 1);
  const std::vector<Block> blocks = Blocks(t);
  // A resize shows up as an allocation immediately followed by the free of a
  // block about 1/1.25 its size.
  int resizes = 0;
  for (size_t i = 0; i + 1 < t.events.size(); ++i) {
    const TraceEvent& a = t.events[i];
    const TraceEvent& f = t.events[i + 1];
    if (a.op != Op::kAlloc || f.op != Op::kFree) continue;
    const double ratio = static_cast<double>(a.bytes) / blocks[f.id].bytes;
    if (ratio > 1.24 && ratio < 1.26) ++resizes;
  }
  EXPECT_GT(resizes, 2000 * 3 / 2);
  uint64_t largest = 0;
  for (const Block& b : blocks) largest = std::max(largest, b.bytes);
  EXPECT_GT(largest, kGiB);
}

TEST(ScenariosTest, PinnedHasLongLivedSmallBlocksAmongShortLivedOnes) {
  const Trace t = Make("pinned", 1);
  const std::vector<Block> blocks = Blocks(t);
  std::vector<size_t> lifetimes;
  int long_lived_small = 0;
  for (const Block& b : blocks) {
    const size_t life = b.free_index - b.alloc_index;
    lifetimes.push_back(life);
    if (life > t.events.size() / 20 && b.bytes <= 2 * kMiB) ++long_lived_small;
  }
  std::nth_element(lifetimes.begin(), lifetimes.begin() + lifetimes.size() / 2,
                   lifetimes.end());
  EXPECT_LT(lifetimes[lifetimes.size() / 2], 200u);
  EXPECT_GT(long_lived_small, 1000);
}

TEST(ScenariosTest, SmallHugeHasGigabyteBlocksAmongSmallOnes) {
  const Trace t = Make("small-huge", 1);
  int huge = 0, small = 0;
  for (const Block& b : Blocks(t)) {
    if (b.bytes >= kGiB) {
      ++huge;
      EXPECT_LE(b.bytes, 4 * kGiB);
    } else {
      ASSERT_LE(b.bytes, kMiB);
      ++small;
    }
  }
  EXPECT_THAT(huge, Ge(20));
  EXPECT_GT(small, 100 * huge);
}

TEST(ScenariosTest, TwoStreamsAllocatesOnBothAndCrossesStreams) {
  const Trace t = Make("two-streams", 1);
  std::set<uint64_t> streams;
  int crossing[2] = {0, 0};
  for (const Block& b : Blocks(t)) {
    streams.insert(b.stream);
    if (b.free_stream != b.stream) ++crossing[b.stream];
  }
  EXPECT_EQ(streams, (std::set<uint64_t>{0, 1}));
  EXPECT_GT(crossing[0], 100);
  EXPECT_GT(crossing[1], 100);
  // The streams interleave rather than take turns in long runs.
  int switches = 0;
  for (size_t i = 1; i < t.events.size(); ++i) {
    if (t.events[i].stream != t.events[i - 1].stream) ++switches;
  }
  EXPECT_GT(switches, static_cast<int>(t.events.size() / 4));
}

TEST(ScenariosTest, ChurnIsTheBenchmarksScheduleWithAFixedWindow) {
  const ChurnOptions options{.window = 100, .churn_steps = 5000, .seed = 42 + 100};
  const Trace t = Churn(options);
  ASSERT_TRUE(ValidateTrace(t).ok()) << ValidateTrace(t);
  EXPECT_EQ(t.steps, 5);
  // The prefill, then a free and an allocation per churn step, then the
  // window freed at the end.
  ASSERT_EQ(t.events.size(), 2u * (100 + 5000));
  const bench::ChurnSchedule schedule = bench::MakeChurnSchedule(100, 5000, 42 + 100);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(t.events[i].op, TraceEvent::Op::kAlloc);
    EXPECT_EQ(t.events[i].bytes, schedule.prefill[i]);
  }
  // Step i frees the block in slot victims[i] and allocates sizes[i] there;
  // the window never changes size.
  std::vector<uint64_t> slots(100);
  for (uint64_t k = 0; k < 100; ++k) slots[k] = k;
  std::set<uint64_t> live(slots.begin(), slots.end());
  for (std::size_t i = 0; i < 5000; ++i) {
    const TraceEvent& f = t.events[100 + 2 * i];
    const TraceEvent& a = t.events[100 + 2 * i + 1];
    ASSERT_EQ(f.op, TraceEvent::Op::kFree);
    ASSERT_EQ(f.id, slots[schedule.victims[i]]);
    ASSERT_EQ(a.op, TraceEvent::Op::kAlloc);
    ASSERT_EQ(a.bytes, schedule.sizes[i]);
    live.erase(f.id);
    live.insert(a.id);
    slots[schedule.victims[i]] = a.id;
    ASSERT_EQ(live.size(), 100u);
    ASSERT_GE(a.bytes, bench::kChurnMinBytes);
    ASSERT_LE(a.bytes, bench::kChurnMaxBytes);
  }
}

}  // namespace
}  // namespace ccalloc::scenarios
