// growable_fixture.h — the GrowableSegmentsTest fixture shared by the tests
// of growable (expandable) segments on the simulated device: the option sets
// the move and unmap tests were written against (Mechanics, NoSlackMechanics),
// the setups several tests repeat (two holes whose chunks move, a growth over
// a recent free) and the checks they make (what the device holds, which pages
// are mapped).
//
// Included by growable_segments_test.cc, growable_trims_test.cc,
// growable_placement_test.cc, growable_kept_mappings_test.cc and
// growable_cross_stream_test.cc, each its own test binary.
#ifndef CCALLOC_TESTS_SUPPORT_GROWABLE_FIXTURE_H_
#define CCALLOC_TESTS_SUPPORT_GROWABLE_FIXTURE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/device_allocator.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {

inline constexpr std::size_t kPage = std::size_t{2} << 20;

class GrowableSegmentsTest : public AllocatorTest<SimGrowable> {
 protected:
  // What the tests of moves and unmaps below were written against: the
  // tight marks (those the defaults tighten to near the end of memory; set,
  // they hold everywhere), 8 MiB chunks, and a move's old mapping unmapped
  // once its work is done (keep_old_mappings:False). The KeptMappings tests
  // cover the default of keeping it; every other suite runs the defaults.
  Options Mechanics() const {
    Options options = env_.BaseOptions();
    options.release_slack = 0.005;
    options.release_slack_max = 0.008;
    options.release_slack_hard = 0.0095;
    options.max_map_chunk = 8 * kMiB;
    options.keep_old_mappings = false;
    options.cross_stream_reuse = Options::CrossStreamReuse::kNever;  // moves, not loans
    return options;
  }
  // Mechanics with no slack and no memory held once taken again freely
  // (hold_reserved): every growth past the peak allocated moves or trims.
  Options NoSlackMechanics() const {
    Options options = Mechanics();
    options.release_slack = options.release_slack_max = options.release_slack_hard = 0;
    options.hold_reserved = false;
    return options;
  }
  // Two holes (16 and 32 MiB, each kept apart by a one-page block) whose
  // chunks then move under a 40 MiB block freed at once: the smallest hole
  // that fits a later request lies on pages moved away, while the large
  // block's memory stays mapped. The mapped_fit tests' setup.
  struct MovedHoles {
    DevicePtr a, k1, k2, big;
  };
  MovedHoles MoveTwoHolesUnderALargeBlock() {
    MovedHoles h;
    h.a = AllocateOk(16 * kMiB, 0);
    h.k1 = AllocateOk(kPage, 0);
    const DevicePtr b = AllocateOk(32 * kMiB, 0);
    h.k2 = AllocateOk(kPage, 0);
    FreeOk(h.a);
    FreeOk(b);
    env_.sim()->CompleteAll();
    // Too large for either hole: their chunks move under it.
    h.big = AllocateOk(40 * kMiB, 0);
    FreeOk(h.big);
    env_.sim()->CompleteAll();
    return h;
  }
  // The mapped_fit tests' request after MoveTwoHolesUnderALargeBlock: 12 MiB
  // on stream 0, with the driver calls it made (maps and device
  // allocations) and how reserved moved; the cache is checked after.
  struct Placed {
    DevicePtr ptr;
    std::int64_t calls;
    std::int64_t reserved_change;
  };
  Placed PlaceTwelveMiB() {
    const MemoryStats before = alloc_->GetStats();
    const DevicePtr c = AllocateOk(12 * kMiB, 0);
    const MemoryStats after = alloc_->GetStats();
    EXPECT_TRUE(IsValid(*alloc_));
    return {c,
            after.num_maps - before.num_maps + after.num_device_alloc - before.num_device_alloc,
            after.reserved_bytes[kStatAll].current - before.reserved_bytes[kStatAll].current};
  }
  DevicePtr AllocateOk(std::size_t size, StreamId stream = 0) {
    absl::StatusOr<DevicePtr> p = alloc_->Allocate(size, stream);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  }
  void FreeOk(DevicePtr p) {
    absl::Status s = alloc_->Free(p);
    EXPECT_TRUE(s.ok()) << s;
  }
  std::int64_t Reserved() const { return alloc_->GetStats().reserved_bytes[kStatAll].current; }
  // What the device holds once the unmap worker's calls are done (its
  // result, a failure injected there included, is the test's to check).
  SimBackend::Counts Device() {
    if (alloc_ != nullptr) (void)alloc_->FinishBackgroundWork();
    return env_.sim()->counts();
  }
  // Frees `ptrs` and empties the cache: nothing is left reserved or held
  // on the device, and the allocator is consistent.
  void FreeAllAndExpectNothingHeld(std::initializer_list<DevicePtr> ptrs) {
    for (DevicePtr p : ptrs) FreeOk(p);
    EXPECT_TRUE(alloc_->EmptyCache().ok());
    EXPECT_EQ(Reserved(), 0);
    EXPECT_EQ(Device().bytes_in_use, 0u);
    EXPECT_TRUE(IsValid(*alloc_));
  }
  // Frees `ptrs`, lets the queued work finish, empties the cache and ends
  // the allocator: the device holds nothing and nothing is outstanding.
  void FreeEmptyAndEnd(const std::vector<DevicePtr>& ptrs) {
    for (DevicePtr p : ptrs) FreeOk(p);
    env_.CompleteAll();
    ASSERT_TRUE(alloc_->EmptyCache().ok());
    EXPECT_EQ(Device().bytes_in_use, 0u);
    alloc_.reset();
    EXPECT_TRUE(env_.NothingOutstanding());
  }
  // Once the worker's calls are done, the device holds what reserved says.
  void ExpectDeviceHoldsReserved() {
    const std::int64_t device = static_cast<std::int64_t>(Device().bytes_in_use);
    EXPECT_EQ(device, Reserved());
  }
  // The bytes of [begin, begin + bytes) that are mapped, from a snapshot of
  // the range that holds `anchor`.
  std::size_t MappedBytes(DevicePtr anchor, DevicePtr begin, std::size_t bytes) {
    const Snapshot snap = alloc_->TakeSnapshot();
    const SegmentInfo* seg = SegmentOf(snap, anchor);
    EXPECT_NE(seg, nullptr);
    if (seg == nullptr) return 0;
    std::size_t mapped = 0;
    for (const std::pair<DevicePtr, DevicePtr>& range : seg->mapped_ranges) {
      const DevicePtr lo = std::max<DevicePtr>(range.first, begin);
      const DevicePtr hi = std::min<DevicePtr>(range.second, begin + bytes);
      mapped += hi > lo ? hi - lo : 0;
    }
    return mapped;
  }
  // Two holes on stream 0, each between live blocks: `older` (one 8 MiB
  // chunk) freed first, then `newer` (two, the larger hole).
  struct TwoHoles {
    DevicePtr older, keep, newer, keep2;
  };
  TwoHoles FreeTwoHoles() {
    TwoHoles h{};
    h.older = AllocateOk(8 * kMiB, 0);
    h.keep = AllocateOk(2 * kMiB, 0);
    h.newer = AllocateOk(16 * kMiB, 0);
    h.keep2 = AllocateOk(2 * kMiB, 0);
    FreeOk(h.older);
    FreeOk(h.newer);
    return h;
  }
  // The chunk taken was the older hole's; the newer hole kept its memory.
  void ExpectTheOlderHoleGave(const TwoHoles& h) {
    EXPECT_EQ(MappedBytes(h.keep, h.older, 8 * kMiB), 0u) << "the memory freed first stayed mapped";
    EXPECT_EQ(MappedBytes(h.keep, h.newer, 16 * kMiB), 16 * kMiB)
        << "the memory freed last was taken";
    ExpectDeviceHoldsReserved();
    EXPECT_TRUE(IsValid(*alloc_));
  }
  // An allocator whose trims start at `low` and may wait beyond `high`
  // (release_slack, release_slack_max).
  void MakeWithSlack(double low, double high) {
    Options options = Mechanics();
    options.release_slack = low;
    options.release_slack_max = options.release_slack_hard = high;
    Make(options);
  }
  // A growth on stream 0 that must move memory freed moments ago on the same
  // stream (with no slack): 24 MiB freed before an 8 MiB block that stays,
  // then 40 MiB, which does not fit the hole. Returns {kept, grown}.
  std::pair<DevicePtr, DevicePtr> GrowOverARecentFree() {
    const DevicePtr a = AllocateOk(24 * kMiB, 0);
    const DevicePtr keep = AllocateOk(8 * kMiB, 0);
    FreeOk(a);
    return {keep, AllocateOk(40 * kMiB, 0)};
  }
};

}  // namespace ccalloc::test

#endif  // CCALLOC_TESTS_SUPPORT_GROWABLE_FIXTURE_H_
