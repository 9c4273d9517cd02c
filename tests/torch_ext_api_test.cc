// The plugin's C functions that the PyTorch extension calls
// (python/ccalloc/csrc/ccalloc_torch.h, allocator/torch/torch_ext_api.cc),
// through that header, on a simulated device (CCALLOC_TORCH_SIMULATE).
// Allocators live for the whole process, one per device: each test uses
// devices of its own.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "python/ccalloc/csrc/ccalloc_torch.h"

// The Python package's (not the extension's): the configuration for
// allocators made from now on.
extern "C" int ccalloc_torch_configure(const char* conf);

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

struct Visit {
  std::vector<ccalloc_torch_segment> segments;
  std::vector<std::vector<ccalloc_torch_block>> blocks;
  static void OnSegment(void* ctx, const ccalloc_torch_segment* s) {
    auto* v = static_cast<Visit*>(ctx);
    v->segments.push_back(*s);
    v->blocks.emplace_back();
  }
  static void OnBlock(void* ctx, const ccalloc_torch_block* b) {
    static_cast<Visit*>(ctx)->blocks.back().push_back(*b);
  }
};

Visit VisitSnapshot(int device) {
  Visit v;
  EXPECT_EQ(ccalloc_torch_visit_snapshot(device, &Visit::OnSegment, &Visit::OnBlock, &v), 0)
      << ccalloc_torch_last_error();
  return v;
}

int64_t Reserved(int device) {
  ccalloc_torch_stats stats{};
  EXPECT_EQ(ccalloc_torch_get_stats(device, &stats), 0);
  return stats.reserved_bytes[0].current;
}

class TorchExtApiTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("CCALLOC_TORCH_SIMULATE", "2GiB", 1); }
};

// As PyTorch reports its expandable segments: one segment per contiguous
// mapped range, its blocks tiling it, so that the segments' total_size adds
// up to reserved memory (memory_viz, and scripts that check the two), and
// every live block is in one of them, whole.
TEST_F(TorchExtApiTest, AGrowableSegmentIsVisitedAsItsMappedRanges) {
  const int dev = 30;
  void* a = nullptr;
  void* gap = nullptr;
  void* b = nullptr;
  ASSERT_EQ(ccalloc_torch_try_malloc(6 * kMiB, dev, nullptr, &a), 0);
  ASSERT_EQ(ccalloc_torch_try_malloc(40 * kMiB, dev, nullptr, &gap), 0);
  ASSERT_EQ(ccalloc_torch_try_malloc(6 * kMiB, dev, nullptr, &b), 0);
  ASSERT_EQ(ccalloc_torch_free_ptr(gap), 0);
  ASSERT_EQ(ccalloc_torch_empty_cache(dev), 0);  // the hole's pages go
  const Visit v = VisitSnapshot(dev);
  ASSERT_GE(v.segments.size(), 2u) << "the hole splits the range";
  uint64_t total = 0;
  int live = 0;
  for (std::size_t i = 0; i < v.segments.size(); ++i) {
    const ccalloc_torch_segment& s = v.segments[i];
    SCOPED_TRACE(absl::StrCat("segment at 0x", absl::Hex(s.address)));
    EXPECT_EQ(s.is_expandable, 1);
    EXPECT_EQ(s.mapped_size, s.total_size);
    total += s.total_size;
    uint64_t at = s.address;
    uint64_t allocated = 0;
    for (const ccalloc_torch_block& block : v.blocks[i]) {
      EXPECT_EQ(block.address, at) << "the blocks tile the segment";
      at += block.size;
      if (block.allocated) {
        allocated += block.size;
        ++live;
        EXPECT_TRUE(block.address == reinterpret_cast<uint64_t>(a) ||
                    block.address == reinterpret_cast<uint64_t>(b));
        EXPECT_EQ(block.size, 6 * kMiB);
        EXPECT_EQ(block.requested_size, 6 * kMiB);
      }
    }
    EXPECT_EQ(at, s.address + s.total_size);
    EXPECT_EQ(s.allocated_size, allocated);
  }
  EXPECT_EQ(static_cast<int64_t>(total), Reserved(dev));
  EXPECT_EQ(live, 2);
  ASSERT_EQ(ccalloc_torch_free_ptr(a), 0);
  ASSERT_EQ(ccalloc_torch_free_ptr(b), 0);
  ASSERT_EQ(ccalloc_torch_empty_cache(dev), 0);
  EXPECT_TRUE(VisitSnapshot(dev).segments.empty()) << "nothing mapped, nothing reported";
}

// Classic segments are visited whole, as before.
TEST_F(TorchExtApiTest, AClassicSegmentIsVisitedWhole) {
  const int dev = 31;
  ASSERT_EQ(ccalloc_torch_configure("expandable_segments:False"), 0);
  void* p = nullptr;
  ASSERT_EQ(ccalloc_torch_try_malloc(3 * kMiB, dev, nullptr, &p), 0);
  ASSERT_EQ(ccalloc_torch_configure(nullptr), 0);
  const Visit v = VisitSnapshot(dev);
  ASSERT_EQ(v.segments.size(), 1u);
  EXPECT_EQ(v.segments[0].is_expandable, 0);
  EXPECT_EQ(static_cast<int64_t>(v.segments[0].total_size), Reserved(dev));
  EXPECT_EQ(v.segments[0].allocated_size, 3 * kMiB);
  ASSERT_EQ(ccalloc_torch_free_ptr(p), 0);
}

// As PyTorch's blocks do, a free block keeps the requested size of the last
// allocation freed into it, merged or not, and the snapshot shows it on the
// inactive block (memory_viz and PyTorch's test_memory_plots read it there).
TEST_F(TorchExtApiTest, AFreeBlockShowsTheLastRequestFreedIntoIt) {
  int dev = 40;
  for (const char* conf : {"expandable_segments:True", "expandable_segments:False"}) {
    SCOPED_TRACE(conf);
    ASSERT_EQ(ccalloc_torch_configure(conf), 0);
    void* p = nullptr;
    void* q = nullptr;
    ASSERT_EQ(ccalloc_torch_try_malloc(65536, dev, nullptr, &p), 0);
    ASSERT_EQ(ccalloc_torch_try_malloc(200000, dev, nullptr, &q), 0);
    ASSERT_EQ(ccalloc_torch_configure(nullptr), 0);
    for (const auto& [freed, requested] : {std::pair{q, 200000}, std::pair{p, 65536}}) {
      ASSERT_EQ(ccalloc_torch_free_ptr(freed), 0);
      const Visit v = VisitSnapshot(dev);
      int found = 0;
      for (const auto& blocks : v.blocks) {
        for (const ccalloc_torch_block& block : blocks) {
          if (block.address != reinterpret_cast<uint64_t>(freed)) continue;
          ++found;
          EXPECT_EQ(block.allocated, 0);
          EXPECT_EQ(block.active, 0);
          EXPECT_EQ(block.requested_size, static_cast<uint64_t>(requested));
        }
      }
      EXPECT_EQ(found, 1) << "the freed block starts a block of the snapshot";
    }
    ++dev;
  }
}

}  // namespace
