// block_pool_test.cc — the free-block index: best fit, and Rekey, which
// moves a block in the index only when its new key changes its place.
#include "allocator/cache/block_pool.h"

#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "allocator/cache/options.h"
#include "allocator/cache/size_policy.h"
#include "gtest/gtest.h"

namespace ccalloc {
namespace {

class BlockPoolTest : public ::testing::Test {
 protected:
  Block* Add(DevicePtr ptr, std::size_t size, StreamId stream = 0) {
    auto b = std::make_unique<Block>();
    b->ptr = ptr;
    b->size = size;
    b->stream = stream;
    b->pool = PoolKind::kLarge;
    b->state = BlockState::kFree;
    pool_.Insert(b.get());
    blocks_.push_back(std::move(b));
    return blocks_.back().get();
  }
  // The blocks in index order.
  std::vector<const Block*> Order() const {
    return std::vector<const Block*>(pool_.begin(), pool_.end());
  }
  void ExpectValid() const {
    std::string why;
    EXPECT_TRUE(pool_.Validate(&why)) << why;
  }

  BlockPool pool_{PoolKind::kLarge};
  std::vector<std::unique_ptr<Block>> blocks_;
};

TEST_F(BlockPoolTest, RekeyInPlaceKeepsTheLargestHoleLargest) {
  Block* small = Add(0x1000, 4 << 20);
  Block* large = Add(0x10000000, 1 << 30);
  // A split off the front of the largest hole: still the largest.
  pool_.Rekey(large, large->ptr + (2 << 20), large->size - (2 << 20));
  ExpectValid();
  EXPECT_EQ(large->ptr, 0x10000000u + (2 << 20));
  EXPECT_EQ(large->size, (std::size_t{1} << 30) - (2 << 20));
  EXPECT_EQ(Order(), (std::vector<const Block*>{small, large}));
  // Best fit finds it at its new key.
  const Options options = DefaultOptions();
  const SizePolicy policy(options);
  EXPECT_EQ(pool_.BestFit(0, 8 << 20, policy, /*expandable=*/true), large);
}

// HasOtherStreams: whether a loan across streams has anything to look at
// (the allocation path asks it before walking any page table).
TEST_F(BlockPoolTest, HasOtherStreamsSeesEveryStreamButTheOneAsked) {
  EXPECT_FALSE(pool_.HasOtherStreams(0)) << "an empty index";
  Add(0x1000, 4 << 20, /*stream=*/3);
  Add(0x800000, 8 << 20, /*stream=*/3);
  EXPECT_FALSE(pool_.HasOtherStreams(3));
  EXPECT_TRUE(pool_.HasOtherStreams(0));
  EXPECT_TRUE(pool_.HasOtherStreams(5));
  Add(0x2000000, 2 << 20, /*stream=*/7);  // after stream 3's blocks
  EXPECT_TRUE(pool_.HasOtherStreams(3));
  EXPECT_TRUE(pool_.HasOtherStreams(7));
  Add(0x4000000, 2 << 20, /*stream=*/1);  // before them
  EXPECT_TRUE(pool_.HasOtherStreams(1));
  ExpectValid();
}

TEST_F(BlockPoolTest, RekeyMovesABlockWhoseKeyPassesANeighbour) {
  Block* a = Add(0x1000, 4 << 20);
  Block* b = Add(0x2000000, 8 << 20);
  Block* c = Add(0x4000000, 16 << 20);
  // `c` shrinks below `a`: it must move to the front of the index.
  pool_.Rekey(c, c->ptr + (14 << 20), 2 << 20);
  ExpectValid();
  EXPECT_EQ(Order(), (std::vector<const Block*>{c, a, b}));
  // `a` grows past `b`.
  pool_.Rekey(a, a->ptr, 12 << 20);
  ExpectValid();
  EXPECT_EQ(Order(), (std::vector<const Block*>{c, b, a}));
  const Options options = DefaultOptions();
  const SizePolicy policy(options);
  EXPECT_EQ(pool_.BestFit(0, 10 << 20, policy, /*expandable=*/true), a);
  EXPECT_EQ(pool_.BestFit(0, 3 << 20, policy, /*expandable=*/true), b);
}

TEST_F(BlockPoolTest, RekeyRespectsStreamsAndAddressTies) {
  Block* s1 = Add(0x9000000, 2 << 20, /*stream=*/1);
  Block* s0_high = Add(0x8000000, 4 << 20, /*stream=*/0);
  Block* s0_low = Add(0x1000000, 4 << 20, /*stream=*/0);
  EXPECT_EQ(Order(), (std::vector<const Block*>{s0_low, s0_high, s1}));
  // Same size, address moved past its twin: the tie is broken by address.
  pool_.Rekey(s0_low, 0xA000000, 4 << 20);
  ExpectValid();
  EXPECT_EQ(Order(), (std::vector<const Block*>{s0_high, s0_low, s1}));
  // Growing a stream-0 block never carries it into stream 1's part.
  pool_.Rekey(s0_high, s0_high->ptr, 64 << 20);
  ExpectValid();
  EXPECT_EQ(Order(), (std::vector<const Block*>{s0_low, s0_high, s1}));
}

TEST_F(BlockPoolTest, RandomRekeysKeepTheIndexOrdered) {
  std::mt19937_64 rng(7);
  std::vector<Block*> live;
  for (int i = 0; i < 200; ++i) {
    live.push_back(Add(0x100000000ull + static_cast<DevicePtr>(i) * (64 << 20),
                       (1 + rng() % 32) << 20, /*stream=*/rng() % 3));
  }
  for (int step = 0; step < 5000; ++step) {
    Block* b = live[rng() % live.size()];
    // Keep addresses unique: move within the block's own 64 MiB slot.
    const DevicePtr slot = b->ptr - (b->ptr - 0x100000000ull) % (64 << 20);
    const std::size_t size = (1 + rng() % 32) << 20;
    const DevicePtr ptr = slot + (rng() % 32) * (1 << 20);
    pool_.Rekey(b, ptr, size);
    ASSERT_EQ(b->ptr, ptr);
    ASSERT_EQ(b->size, size);
    ASSERT_EQ(pool_.size(), live.size());
    std::string why;
    ASSERT_TRUE(pool_.Validate(&why)) << "step " << step << ": " << why;
  }
}

// BestFit remembers its answer for the carve that follows; any change to the
// index in between must make the carve search again (a btree's iterators do
// not survive an insert or an erase: a stale one would rekey the wrong entry).
TEST_F(BlockPoolTest, ChangesBetweenBestFitAndRekeyAreSeen) {
  const Options options = DefaultOptions();
  const SizePolicy policy(options);
  std::vector<Block*> holes;
  for (int i = 0; i < 64; ++i) {
    holes.push_back(Add(0x100000000ull + static_cast<DevicePtr>(i) * (64 << 20),
                        static_cast<std::size_t>(i + 1) << 20));
  }
  Block* fit = pool_.BestFit(0, 20 << 20, policy, /*expandable=*/true);
  ASSERT_EQ(fit, holes[19]);
  // Enough inserts and erases to split and merge nodes around the answer.
  for (int i = 0; i < 32; ++i) {
    Add(0x200000000ull + static_cast<DevicePtr>(i) * (64 << 20), (20 << 20) + 512 * (i + 1));
  }
  for (int i = 0; i < 19; ++i) pool_.Erase(holes[i]);
  pool_.Rekey(fit, fit->ptr + (1 << 20), 19 << 20);
  ExpectValid();
  EXPECT_TRUE(pool_.Contains(fit));
  EXPECT_EQ(pool_.size(), 64u - 19u + 32u);
  EXPECT_EQ(pool_.BestFit(0, 1, policy, /*expandable=*/true), fit);
  // And the answer itself, carved away whole right after it was found.
  Block* next = pool_.BestFit(0, 21 << 20, policy, /*expandable=*/true);
  ASSERT_NE(next, nullptr);
  pool_.Erase(next);
  EXPECT_FALSE(pool_.Contains(next));
  ExpectValid();
  // Erasing it again (not indexed) changes nothing.
  const std::size_t before = pool_.size();
  pool_.Erase(next);
  EXPECT_EQ(pool_.size(), before);
  ExpectValid();
}

// Each index entry carries its block's key; Validate catches a block whose
// size changed behind the index's back.
TEST_F(BlockPoolTest, ValidateCatchesABlockChangedBehindTheIndex) {
  Block* a = Add(0x1000, 4 << 20);
  Add(0x2000000, 8 << 20);
  ExpectValid();
  a->size = 6 << 20;
  std::string why;
  EXPECT_FALSE(pool_.Validate(&why));
  EXPECT_NE(why.find("key"), std::string::npos) << why;
  a->size = 4 << 20;
  ExpectValid();
}

}  // namespace
}  // namespace ccalloc
