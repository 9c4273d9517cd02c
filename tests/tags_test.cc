// tags_test.cc — tags on allocations (stats/tags.h) on the simulated device:
// each block counts under the tag current on the thread that allocated it,
// through splits and coalescing, on any stream, freed from any thread, and
// the counts always add up to the allocated bytes.
#include "stats/tags.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/cache/device_allocator.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

constexpr std::size_t kBig = std::size_t{24} << 20;

TagUsage UsageOf(const DeviceAllocator& alloc, TagId tag) {
  for (const TagUsage& u : alloc.TagStats()) {
    if (u.tag == tag) return u;
  }
  return TagUsage{tag, 0, 0, 0};
}

std::int64_t Allocated(const DeviceAllocator& alloc) {
  return alloc.GetStats().allocated_bytes[kStatAll].current;
}

TEST(TagRegistryTest, SameNameSameIdAndNamesComeBack) {
  const TagId a = InternTag("registry/forward");
  const TagId b = InternTag("registry/backward");
  EXPECT_NE(a, kNoTag);
  EXPECT_NE(a, b);
  EXPECT_EQ(InternTag("registry/forward"), a);
  EXPECT_EQ(TagName(a), "registry/forward");
  EXPECT_EQ(TagName(b), "registry/backward");
  EXPECT_EQ(InternTag(""), kNoTag);
  EXPECT_EQ(TagName(kNoTag), "");
  EXPECT_EQ(TagName(TagCount() + 1000), "") << "an id never handed out has no name";
  const std::string long_name(1000, 'x');
  EXPECT_EQ(TagName(InternTag(long_name)).size(), kMaxTagName);
}

TEST(TagRegistryTest, CurrentTagIsPerThreadAndScoped) {
  const TagId outer = InternTag("scope/outer");
  const TagId before = SetCurrentTag(outer);
  {
    ScopedTag inner("scope/inner");
    EXPECT_EQ(TagName(CurrentTag()), "scope/inner");
    TagId seen_elsewhere = outer;
    std::thread([&] { seen_elsewhere = CurrentTag(); }).join();
    EXPECT_EQ(seen_elsewhere, kNoTag) << "a new thread starts untagged";
  }
  EXPECT_EQ(CurrentTag(), outer);
  SetCurrentTag(before);
}

TEST(TagCountersTest, ValidateCatchesWhatDoesNotAddUp) {
  TagCounters c;
  c.Add(1, 100);
  c.Add(2, 50);
  std::string why;
  EXPECT_TRUE(c.Validate(150, &why)) << why;
  EXPECT_FALSE(c.Validate(149, &why));
  EXPECT_NE(why.find("150"), std::string::npos) << why;
  c.Remove(2, 60);
  EXPECT_FALSE(c.Validate(90, &why)) << "a negative count passed";
}

template <typename Config>
class TagsTest : public AllocatorTest<Config> {};
using Configs = ::testing::Types<SimClassic, SimGrowable>;
TYPED_TEST_SUITE(TagsTest, Configs, EnvNames);

// Blocks carved from one freed hole count under the tags current when each
// was carved, the hole's old tag is gone, and coalescing back changes nothing
// but the counts of what was freed.
TYPED_TEST(TagsTest, SplitAndCoalesceCountUnderTheAllocatingTag) {
  DeviceAllocator& alloc = this->Make();
  const TagId big = InternTag("split/big");
  const TagId left = InternTag("split/left");
  const TagId right = InternTag("split/right");
  DevicePtr p = 0;
  {
    ScopedTag t(big);
    p = *alloc.Allocate(kBig, 0);
  }
  EXPECT_EQ(UsageOf(alloc, big).current_bytes, static_cast<std::int64_t>(kBig));
  ASSERT_TRUE(alloc.Free(p).ok());
  EXPECT_EQ(UsageOf(alloc, big).current_bytes, 0);
  EXPECT_EQ(UsageOf(alloc, big).peak_bytes, static_cast<std::int64_t>(kBig));

  DevicePtr a = 0, b = 0;
  {
    ScopedTag t(left);
    a = *alloc.Allocate(kBig / 2, 0);
  }
  {
    ScopedTag t(right);
    b = *alloc.Allocate(kBig / 4, 0);
  }
  EXPECT_EQ(UsageOf(alloc, left).current_bytes, static_cast<std::int64_t>(kBig / 2));
  EXPECT_EQ(UsageOf(alloc, right).current_bytes, static_cast<std::int64_t>(kBig / 4));
  EXPECT_EQ(UsageOf(alloc, big).current_bytes, 0);
  EXPECT_EQ(UsageOf(alloc, left).blocks, 1);
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.Free(a).ok());
  EXPECT_EQ(UsageOf(alloc, left).current_bytes, 0);
  EXPECT_EQ(UsageOf(alloc, right).current_bytes, static_cast<std::int64_t>(kBig / 4));
  ASSERT_TRUE(alloc.Free(b).ok());
  EXPECT_EQ(UsageOf(alloc, right).current_bytes, 0);
  EXPECT_TRUE(IsValid(alloc));
}

// A block used on another stream counts until its free, like allocated_bytes
// (the memory is reused only once that stream's work is done, but it is no
// longer the tag's); untagged blocks count under kNoTag.
TYPED_TEST(TagsTest, StreamsAndRecordStreamFollowAllocatedBytes) {
  DeviceAllocator& alloc = this->Make();
  const TagId tag = InternTag("streams/activations");
  const std::int64_t untagged_before = UsageOf(alloc, kNoTag).current_bytes;
  DevicePtr p = 0;
  {
    ScopedTag t(tag);
    p = *alloc.Allocate(kBig, 1);
  }
  const DevicePtr plain = *alloc.Allocate(4096, 2);
  EXPECT_EQ(UsageOf(alloc, kNoTag).current_bytes - untagged_before, 4096);
  ASSERT_TRUE(alloc.RecordStream(p, 3).ok());
  ASSERT_TRUE(alloc.Free(p).ok());  // pending on stream 3
  EXPECT_EQ(UsageOf(alloc, tag).current_bytes, 0);
  EXPECT_EQ(alloc.TagStats().size() >= 2, true);
  EXPECT_TRUE(IsValid(alloc));
  this->env_.CompleteStream(3);
  ASSERT_TRUE(alloc.Free(plain).ok());
  EXPECT_TRUE(IsValid(alloc));
}

// A free counts against the block's own tag whichever thread frees it, and
// threads allocating at once each count under their own current tag.
TYPED_TEST(TagsTest, FreesFromAnotherThreadAndConcurrentTags) {
  DeviceAllocator& alloc = this->Make();
  constexpr int kThreads = 4;
  constexpr int kBlocks = 64;
  std::vector<TagId> tags;
  for (int t = 0; t < kThreads; ++t) tags.push_back(InternTag("threads/" + std::to_string(t)));
  std::vector<std::vector<DevicePtr>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ScopedTag tag(tags[t]);
      for (int i = 0; i < kBlocks; ++i) {
        absl::StatusOr<DevicePtr> p = alloc.Allocate(std::size_t{1} << (10 + i % 12), t);
        if (p.ok()) made[t].push_back(*p);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  threads.clear();
  std::int64_t counted = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(UsageOf(alloc, tags[t]).blocks, static_cast<std::int64_t>(made[t].size()));
    counted += UsageOf(alloc, tags[t]).current_bytes;
  }
  EXPECT_EQ(counted + UsageOf(alloc, kNoTag).current_bytes, Allocated(alloc));
  // Each thread frees the blocks of the next one, under a tag of its own.
  const TagId freer = InternTag("threads/freer");
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ScopedTag tag(freer);
      for (DevicePtr p : made[(t + 1) % kThreads]) EXPECT_TRUE(alloc.Free(p).ok());
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(UsageOf(alloc, tags[t]).current_bytes, 0) << "thread " << t;
    EXPECT_GT(UsageOf(alloc, tags[t]).peak_bytes, 0) << "thread " << t;
  }
  EXPECT_EQ(UsageOf(alloc, freer).blocks, 0) << "a free moved bytes to the freeing thread's tag";
  EXPECT_TRUE(IsValid(alloc));
}

// Peaks follow the allocator's own: reset with ResetPeakStats.
TYPED_TEST(TagsTest, PeaksResetWithTheAllocatorsPeaks) {
  DeviceAllocator& alloc = this->Make();
  const TagId tag = InternTag("peaks/optimizer");
  ScopedTag t(tag);
  const DevicePtr a = *alloc.Allocate(kBig, 0);
  const DevicePtr b = *alloc.Allocate(kBig, 0);
  ASSERT_TRUE(alloc.Free(b).ok());
  EXPECT_EQ(UsageOf(alloc, tag).peak_bytes, static_cast<std::int64_t>(2 * kBig));
  alloc.ResetPeakStats();
  EXPECT_EQ(UsageOf(alloc, tag).peak_bytes, static_cast<std::int64_t>(kBig));
  ASSERT_TRUE(alloc.Free(a).ok());
}

// The out-of-memory report says during which tag, why (exhaustion or the
// memory limit), and which tags hold the memory, largest first.
TYPED_TEST(TagsTest, OutOfMemoryReportSaysWhyAndWhoHoldsTheMemory) {
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{64} << 20);
  const TagId weights = InternTag("oom/weights");
  const TagId grads = InternTag("oom/grads");
  DevicePtr w = 0, g = 0;
  {
    ScopedTag t(weights);
    w = *alloc.Allocate(std::size_t{30} << 20, 0);
  }
  {
    ScopedTag t(grads);
    g = *alloc.Allocate(std::size_t{10} << 20, 0);
  }
  {
    ScopedTag t("oom/optimizer");
    absl::StatusOr<DevicePtr> p = alloc.Allocate(std::size_t{40} << 20, 0);
    ASSERT_FALSE(p.ok());
    const std::string report(p.status().message());
    EXPECT_NE(report.find("during tag 'oom/optimizer'"), std::string::npos) << report;
    EXPECT_NE(report.find("Why: exhaustion"), std::string::npos) << report;
    const std::size_t at_w = report.find("'oom/weights' 30.00 MiB in 1 block");
    const std::size_t at_g = report.find("'oom/grads' 10.00 MiB in 1 block");
    EXPECT_NE(at_w, std::string::npos) << report;
    EXPECT_LT(at_w, at_g) << "holders are not largest first: " << report;
  }
  ASSERT_TRUE(alloc.SetMemoryLimit(std::size_t{48} << 20).ok());
  absl::StatusOr<DevicePtr> p = alloc.Allocate(std::size_t{16} << 20, 0);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("Why: the memory limit"), std::string::npos)
      << p.status().message();
  for (DevicePtr q : {w, g}) ASSERT_TRUE(alloc.Free(q).ok());
}

// Classic segments: free memory in pieces that no request fits is called
// fragmentation, with how much is free and the largest piece.
TEST(OutOfMemoryReportTest, FragmentationIsToldApart) {
  AllocatorEnv env(SimClassic::kKind, SimClassic::kGrowable);
  absl::StatusOr<std::unique_ptr<DeviceAllocator>> made =
      env.Make(env.BaseOptions(), std::size_t{64} << 20);
  ASSERT_TRUE(made.ok()) << made.status();
  DeviceAllocator& alloc = **made;
  std::vector<DevicePtr> blocks;
  while (true) {
    absl::StatusOr<DevicePtr> p = alloc.Allocate(std::size_t{3} << 20, 0);
    if (!p.ok()) break;
    blocks.push_back(*p);
  }
  ASSERT_GE(blocks.size(), 12u);
  for (std::size_t i = 0; i < blocks.size(); i += 2) ASSERT_TRUE(alloc.Free(blocks[i]).ok());
  absl::StatusOr<DevicePtr> p = alloc.Allocate(std::size_t{8} << 20, 0);
  ASSERT_FALSE(p.ok());
  const std::string report(p.status().message());
  EXPECT_NE(report.find("Why: fragmentation:"), std::string::npos) << report;
  EXPECT_NE(report.find("the largest free block is"), std::string::npos) << report;
  for (std::size_t i = 1; i < blocks.size(); i += 2) ASSERT_TRUE(alloc.Free(blocks[i]).ok());
}

TEST(TagJsonTest, NamesAreQuoted) {
  const TagId tag = InternTag("json/\"quoted\"\\\n");
  const std::string json = TagUsageToJson({TagUsage{tag, 10, 20, 1}});
  EXPECT_NE(json.find("\"name\":\"json/\\\"quoted\\\"\\\\\\u000a\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"current_bytes\":10,\"peak_bytes\":20,\"blocks\":1"), std::string::npos)
      << json;
}

}  // namespace
}  // namespace ccalloc::test
