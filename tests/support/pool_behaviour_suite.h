// pool_behaviour_suite.h — private pools (CUDA graphs) and stream capture,
// written once for every allocator configuration.
//
// What PyTorch's graph machinery relies on: allocations routed into a
// private pool during a capture never share memory with eager code, the
// capture is never invalidated by the allocator (no synchronize, no event
// query, no freeing of memory while it is underway), a pool's memory stays
// put while its use count is above 0 and goes back once it drops to 0, and a
// checkpointed layout can be restored at the same addresses.
//
// The simulated device can capture a stream (SimBackend::BeginCapture) and
// refuses what a real capture refuses; tests that need it skip themselves on
// a real device, where the same routing runs without a capture.
//
// Include this header from exactly one file per test binary, next to
// allocator_behaviour_suite.h.
#ifndef CCALLOC_TESTS_SUPPORT_POOL_BEHAVIOUR_SUITE_H_
#define CCALLOC_TESTS_SUPPORT_POOL_BEHAVIOUR_SUITE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/backends/sim_backend.h"
#include "gtest/gtest.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "tests/support/allocator_behaviour_suite.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {

// Small and large, below and above the classic segment-size steps.
inline const std::vector<std::size_t>& PoolTestSizes() {
  static const std::vector<std::size_t> sizes = {
      std::size_t{1} << 10,  std::size_t{300} << 10, std::size_t{1} << 20,
      std::size_t{3} << 20,  std::size_t{12} << 20,  std::size_t{40} << 20};
  return sizes;
}

template <typename Config>
class PoolBehaviourTest : public AllocatorTest<Config> {
 protected:
  static std::function<bool(StreamId)> Only(StreamId stream) {
    return [stream](StreamId s) { return s == stream; };
  }
  std::int64_t Reserved() const {
    return this->alloc_->GetStats().reserved_bytes[kStatAll].current;
  }
  // The pool id of the segment holding `ptr` (-1 if none).
  std::int64_t PoolOfPtr(DevicePtr ptr) const {
    const Snapshot snapshot = this->alloc_->TakeSnapshot();  // outlives `segment`
    const SegmentInfo* segment = SegmentOf(snapshot, ptr);
    return segment == nullptr ? -1 : static_cast<std::int64_t>(segment->pool_id);
  }
  // Address ranges of every segment of `pool`.
  std::vector<std::pair<DevicePtr, DevicePtr>> PoolRanges(PoolId pool) const {
    std::vector<std::pair<DevicePtr, DevicePtr>> ranges;
    for (const SegmentInfo& s : this->alloc_->TakeSnapshot().segments) {
      if (s.pool_id == pool) ranges.emplace_back(s.address, s.address + s.total_size);
    }
    return ranges;
  }
  // Begins a simulated capture of `stream` and routes it into `pool`.
  void BeginCapture(PoolId pool, StreamId stream) {
    if (this->env_.sim() != nullptr) {
      absl::Status s = this->env_.sim()->BeginCapture(stream);
      ASSERT_TRUE(s.ok()) << s;
    }
    absl::Status s = this->alloc_->BeginAllocateToPool(pool, Only(stream));
    ASSERT_TRUE(s.ok()) << s;
  }
  // PyTorch's order: the routing ends before the capture does.
  void EndCapture(PoolId pool, StreamId stream) {
    absl::Status s = this->alloc_->EndAllocateToPool(pool);
    ASSERT_TRUE(s.ok()) << s;
    if (this->env_.sim() != nullptr) {
      s = this->env_.sim()->EndCapture(stream);
      ASSERT_TRUE(s.ok()) << s;
    }
  }
  ::testing::AssertionResult CaptureIntact() const {
    if (this->env_.sim() == nullptr || !this->env_.sim()->capture_invalidated()) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "the capture was invalidated: " << this->env_.sim()->capture_violation();
  }
};

TYPED_TEST_SUITE_P(PoolBehaviourTest);

// A capture allocates and frees temporaries of every kind into its private
// pool without a single call the capture refuses; eager allocations of the
// same sizes afterwards never land in the graph's memory, live or free.
TYPED_TEST_P(PoolBehaviourTest, CaptureStaysInItsPoolAndIsNeverInvalidated) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  // Free cached default-pool memory of every size: the capture must not take it.
  std::vector<DevicePtr> eager;
  for (std::size_t size : PoolTestSizes()) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, s));
    eager.push_back(p);
  }
  for (DevicePtr p : eager) ASSERT_TRUE(alloc.Free(p).ok());

  this->BeginCapture(1, s);
  std::vector<DevicePtr> kept;
  for (int round = 0; round < 3; ++round) {
    std::vector<DevicePtr> temps;
    for (std::size_t size : PoolTestSizes()) {
      CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, s));
      EXPECT_EQ(this->PoolOfPtr(p), 1) << "a captured allocation outside its pool";
      temps.push_back(p);
    }
    // Free every other one during the capture (temporaries), keep the rest.
    for (std::size_t i = 0; i < temps.size(); ++i) {
      if (i % 2 == 0) {
        ASSERT_TRUE(alloc.Free(temps[i]).ok());
      } else {
        kept.push_back(temps[i]);
      }
    }
  }
  this->EndCapture(1, s);
  EXPECT_TRUE(this->CaptureIntact());
  EXPECT_TRUE(IsValid(alloc));

  const std::vector<std::pair<DevicePtr, DevicePtr>> graph = this->PoolRanges(1);
  ASSERT_FALSE(graph.empty());
  for (int round = 0; round < 2; ++round) {
    for (std::size_t size : PoolTestSizes()) {
      CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, s));
      EXPECT_EQ(this->PoolOfPtr(p), 0);
      for (const auto& [lo, hi] : graph) {
        EXPECT_TRUE(p + size <= lo || p >= hi)
            << "eager block " << p << " overlaps the graph's memory [" << lo << ", " << hi << ")";
      }
      eager.push_back(p);
    }
  }
  for (std::size_t i = eager.size() - 2 * PoolTestSizes().size(); i < eager.size(); ++i) {
    ASSERT_TRUE(alloc.Free(eager[i]).ok());
  }
  for (DevicePtr p : kept) ASSERT_TRUE(alloc.Free(p).ok());
  EXPECT_TRUE(alloc.ReleasePool(1).ok());
}

// A second capture sharing the pool reuses the blocks the first one freed:
// same addresses, no new device memory.
TYPED_TEST_P(PoolBehaviourTest, SecondCaptureReusesThePoolsFreeBlocks) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  this->BeginCapture(7, s);
  std::vector<DevicePtr> first;
  for (std::size_t size : PoolTestSizes()) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, s));
    first.push_back(p);
  }
  for (DevicePtr p : first) ASSERT_TRUE(alloc.Free(p).ok());
  this->EndCapture(7, s);
  const std::int64_t device_allocs = alloc.GetStats().num_device_alloc;
  const std::int64_t reserved = this->Reserved();

  this->BeginCapture(7, s);
  EXPECT_EQ(*alloc.PoolUseCount(7), 2);
  std::vector<DevicePtr> second;
  for (std::size_t size : PoolTestSizes()) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size, s));
    second.push_back(p);
  }
  this->EndCapture(7, s);
  EXPECT_TRUE(this->CaptureIntact());
  EXPECT_EQ(second, first);
  EXPECT_EQ(alloc.GetStats().num_device_alloc, device_allocs);
  EXPECT_EQ(this->Reserved(), reserved);
  for (DevicePtr p : second) ASSERT_TRUE(alloc.Free(p).ok());
  EXPECT_TRUE(alloc.ReleasePool(7).ok());
  EXPECT_TRUE(alloc.ReleasePool(7).ok());
}

// ReleasePool to 0 gives back what is free at once and the rest as its live
// blocks are freed; then the pool record is gone. EmptyCache keeps a live
// pool's memory.
TYPED_TEST_P(PoolBehaviourTest, ReleasePoolReturnsTheMemoryAsItBecomesFree) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  const std::int64_t device_before = this->env_.BytesInUse();
  this->BeginCapture(3, s);
  std::vector<DevicePtr> outputs;
  for (std::size_t size : PoolTestSizes()) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr temp, alloc.Allocate(size, s));
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr out, alloc.Allocate(size, s));
    ASSERT_TRUE(alloc.Free(temp).ok());
    outputs.push_back(out);
  }
  this->EndCapture(3, s);
  const std::int64_t reserved = this->Reserved();
  ASSERT_GT(reserved, 0);

  // Live pool: neither EmptyCache nor EmptyCachePool touches its memory.
  ASSERT_TRUE(alloc.EmptyCache().ok());
  ASSERT_TRUE(alloc.EmptyCachePool(3).ok());
  EXPECT_EQ(this->Reserved(), reserved);
  // Freed outside the capture, the blocks stay cached in the pool.
  ASSERT_TRUE(alloc.Free(outputs.back()).ok());
  outputs.pop_back();
  ASSERT_TRUE(alloc.EmptyCache().ok());
  EXPECT_EQ(this->Reserved(), reserved);

  ASSERT_TRUE(alloc.ReleasePool(3).ok());
  EXPECT_EQ(*alloc.PoolUseCount(3), 0);
  const std::int64_t after_release = this->Reserved();
  EXPECT_LT(after_release, reserved) << "wholly free pool memory stayed";
  EXPECT_EQ(alloc.PoolLiveBlocks(3).size(), outputs.size());
  while (!outputs.empty()) {
    ASSERT_TRUE(alloc.Free(outputs.back()).ok());
    outputs.pop_back();
  }
  EXPECT_EQ(this->Reserved(), 0);
  EXPECT_EQ(this->env_.BytesInUse(), device_before);
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(3).status()));
  EXPECT_TRUE(IsValid(alloc));
}

// PyTorch's test_graph_memory_stats_and_use_result_after_destroy_graph: a
// graph's result outlives the graph. Its pool is released with that block
// live and the cache emptied twice; the block's memory stays where it was,
// mapped, with what the graph wrote in it, for every size of the test (one
// below a page, two sharing a page, one past the large-pool step).
TYPED_TEST_P(PoolBehaviourTest, AResultOutlivesItsReleasedGraphPool) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  SimBackend* sim = TypeParam::kGrowable ? this->env_.sim() : nullptr;
  const std::string mark = "graph result";
  PoolId pool = 40;
  for (std::size_t numel :
       {std::size_t{128}, std::size_t{1} << 18, (std::size_t{1} << 18) + 128,
        (std::size_t{10} << 18) - 128, (std::size_t{10} << 18) + 128}) {
    SCOPED_TRACE(numel);
    const std::size_t bytes = 4 * numel;
    ++pool;
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr a, alloc.Allocate(bytes, s));
    this->BeginCapture(pool, s);
    // b = a.clone(); five times b = b.clone() + 1: each step's clone and
    // sum are new blocks, the step before's go.
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr b, alloc.Allocate(bytes, s));
    for (int i = 0; i < 5; ++i) {
      CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr clone, alloc.Allocate(bytes, s));
      CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr sum, alloc.Allocate(bytes, s));
      ASSERT_TRUE(alloc.Free(b).ok());
      ASSERT_TRUE(alloc.Free(clone).ok());
      b = sum;
    }
    this->EndCapture(pool, s);
    ASSERT_TRUE(this->CaptureIntact());
    if (sim != nullptr) {
      absl::Status w = sim->WriteBytes(b + bytes - mark.size(), mark);
      ASSERT_TRUE(w.ok()) << w;
    }
    ASSERT_TRUE(alloc.EmptyCache().ok());
    ASSERT_TRUE(alloc.ReleasePool(pool).ok());  // del g
    ASSERT_TRUE(alloc.EmptyCache().ok());
    ASSERT_EQ(this->PoolOfPtr(b), static_cast<std::int64_t>(pool));
    EXPECT_EQ(alloc.PoolLiveBlocks(pool).size(), 1u);
    if (sim != nullptr) {
      absl::StatusOr<std::string> read = sim->ReadBytes(b, bytes);
      ASSERT_TRUE(read.ok()) << "the result's memory went with its graph: " << read.status();
      EXPECT_EQ(read->substr(bytes - mark.size()), mark);
    }
    EXPECT_TRUE(IsValid(alloc));
    ASSERT_TRUE(alloc.Free(a).ok());
    ASSERT_TRUE(alloc.Free(b).ok());
  }
  ASSERT_TRUE(alloc.EmptyCache().ok());
  EXPECT_EQ(this->Reserved(), 0);
}

// A graph's replays write its pool on whatever stream replays it, work no
// event of the blocks' own stream covers: a released pool's memory goes
// back only after a device synchronize, both what is free at ReleasePool and
// what a result freed later leaves (PyTorch's TestCuda hit an illegal
// memory access where growable pages went under a replay still running).
TYPED_TEST_P(PoolBehaviourTest, AReleasedPoolsMemoryGoesOnlyOnceTheDeviceHasFinished) {
  CCALLOC_SKIP_UNLESS_SIM("the simulated device's count of device synchronizes");
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  SimBackend& sim = *this->env_.sim();
  this->BeginCapture(9, s);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr out, alloc.Allocate(std::size_t{4} << 20, s));
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr temp, alloc.Allocate(std::size_t{6} << 20, s));
  ASSERT_TRUE(alloc.Free(temp).ok());
  this->EndCapture(9, s);
  ASSERT_TRUE(this->CaptureIntact());
  const std::int64_t reserved = this->Reserved();

  std::int64_t syncs = sim.counts().synchronize_calls;
  ASSERT_TRUE(alloc.ReleasePool(9).ok());  // del g, a replay maybe queued
  // Growable pages go at once; a classic segment only whole, with the result.
  if (TypeParam::kGrowable) {
    EXPECT_LT(this->Reserved(), reserved) << "the free temporary's memory stayed";
  }
  if (this->Reserved() < reserved) {
    EXPECT_GT(sim.counts().synchronize_calls, syncs)
        << "a released pool's memory went back without the device finishing its replays";
  } else {
    EXPECT_EQ(sim.counts().synchronize_calls, syncs) << "a synchronize that released nothing";
  }
  EXPECT_EQ(alloc.PoolLiveBlocks(9).size(), 1u);

  syncs = sim.counts().synchronize_calls;
  const std::int64_t with_result = this->Reserved();
  ASSERT_TRUE(alloc.Free(out).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr eager, alloc.Allocate(512, s));  // the next call
  EXPECT_TRUE(this->PoolRanges(9).empty());
  EXPECT_LT(this->Reserved(), with_result);
  EXPECT_GT(sim.counts().synchronize_calls, syncs)
      << "the result's memory went back without the device finishing";
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(9).status()));
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.Free(eager).ok());

  // A live pool's blocks freed outside any release make no synchronize.
  this->BeginCapture(10, s);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr live, alloc.Allocate(std::size_t{4} << 20, s));
  this->EndCapture(10, s);
  syncs = sim.counts().synchronize_calls;
  ASSERT_TRUE(alloc.Free(live).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(eager, alloc.Allocate(512, s));
  EXPECT_EQ(sim.counts().synchronize_calls, syncs);
  ASSERT_TRUE(alloc.Free(eager).ok());
  ASSERT_TRUE(alloc.ReleasePool(10).ok());
  EXPECT_TRUE(IsValid(alloc));
}

// A live graph's free blocks are its temporaries: every replay writes them.
// Eager work on other streams and on the capture's stream, on a device with
// little room left (so that free pages would rather move than be mapped
// anew, and the marks are tight), empty_cache, and a second capture into
// another pool never take their pages away while the pool is live: the
// temporaries stay mapped with what the graph wrote in them.
TYPED_TEST_P(PoolBehaviourTest, ALiveGraphsTemporariesKeepTheirPagesUnderPressure) {
  if (!TypeParam::kGrowable || !this->env_.is_sim()) {
    GTEST_SKIP() << "reads the simulated device's mappings";
  }
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), 160 * kMiB);
  SimBackend* sim = this->env_.sim();
  const StreamId s = this->env_.stream(0);
  const StreamId x = this->env_.stream(1);
  const std::string mark(64, 'g');
  // Eager memory freed on both streams first: free pages a later request
  // could take instead of mapping.
  std::vector<DevicePtr> early;
  for (StreamId st : {s, x, s, x}) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(12 * kMiB, st));
    early.push_back(p);
  }
  for (DevicePtr p : early) ASSERT_TRUE(alloc.Free(p).ok());
  this->env_.sim()->CompleteAll();
  this->BeginCapture(50, s);
  std::vector<std::pair<DevicePtr, std::size_t>> temporaries;
  std::vector<DevicePtr> outputs;
  for (std::size_t size : {std::size_t{3} << 20, std::size_t{10} << 20, std::size_t{1} << 19}) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr t, alloc.Allocate(size, s));
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr o, alloc.Allocate(size, s));
    ASSERT_TRUE(alloc.Free(t).ok());
    temporaries.emplace_back(t, size);
    outputs.push_back(o);
  }
  this->EndCapture(50, s);
  ASSERT_TRUE(this->CaptureIntact());
  for (const auto& [t, size] : temporaries) {
    ASSERT_TRUE(sim->WriteBytes(t + size - mark.size(), mark).ok());
  }
  auto temporaries_intact = [&]() -> ::testing::AssertionResult {
    for (const auto& [t, size] : temporaries) {
      absl::StatusOr<std::string> read = sim->ReadBytes(t + size - mark.size(), mark.size());
      if (!read.ok()) return ::testing::AssertionFailure() << "unmapped: " << read.status();
      if (*read != mark) return ::testing::AssertionFailure() << "overwritten";
    }
    return ::testing::AssertionSuccess();
  };
  // Eager churn on both streams, as close to the device's end as it goes.
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    std::vector<DevicePtr> live;
    for (StreamId st : {x, s, x, s, x}) {
      absl::StatusOr<DevicePtr> p = alloc.Allocate((round % 2 == 0 ? 20 : 7) * kMiB, st);
      if (p.ok()) live.push_back(*p);
      ASSERT_TRUE(temporaries_intact());
    }
    for (DevicePtr p : live) ASSERT_TRUE(alloc.Free(p).ok());
    this->env_.sim()->CompleteAll();
    ASSERT_TRUE(alloc.EmptyCache().ok());
    ASSERT_TRUE(temporaries_intact());
  }
  {
    // The pressure was real: memory moved, was lent or went back meanwhile.
    const MemoryStats stats = alloc.GetStats();
    EXPECT_GT(stats.num_unmaps + stats.num_returns + stats.num_cross_stream_reuses, 0)
        << "maps " << stats.num_maps;
  }
  // Another graph into another pool on the other stream.
  this->BeginCapture(51, x);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr other, alloc.Allocate(24 * kMiB, x));
  ASSERT_TRUE(alloc.Free(other).ok());
  this->EndCapture(51, x);
  EXPECT_TRUE(temporaries_intact());
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.ReleasePool(51).ok());
  ASSERT_TRUE(alloc.ReleasePool(50).ok());
  for (DevicePtr o : outputs) ASSERT_TRUE(alloc.Free(o).ok());
  this->env_.sim()->CompleteAll();
  ASSERT_TRUE(alloc.EmptyCache().ok());
  EXPECT_EQ(this->Reserved(), 0);
}

// A pool released while another capture is underway keeps its memory until
// no capture is: releasing it then would invalidate that capture.
TYPED_TEST_P(PoolBehaviourTest, ReleaseDuringAnotherCaptureWaitsForIt) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  const StreamId t = this->env_.stream(1);
  this->BeginCapture(1, s);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr a, alloc.Allocate(3 << 20, s));
  ASSERT_TRUE(alloc.Free(a).ok());
  this->EndCapture(1, s);
  const std::int64_t reserved = this->Reserved();

  this->BeginCapture(2, t);
  ASSERT_TRUE(alloc.ReleasePool(1).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr b, alloc.Allocate(1 << 10, t));
  ASSERT_TRUE(alloc.Free(b).ok());
  EXPECT_GE(this->Reserved(), reserved) << "pool 1 was released during a capture";
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.EmptyCache()));
  this->EndCapture(2, t);
  EXPECT_TRUE(this->CaptureIntact());
  // The next call with no capture underway releases pool 1.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr c, alloc.Allocate(1 << 10, s));
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(1).status()));
  EXPECT_TRUE(this->PoolRanges(1).empty());
  ASSERT_TRUE(alloc.Free(c).ok());
  ASSERT_TRUE(alloc.ReleasePool(2).ok());
  EXPECT_TRUE(IsValid(alloc));
}

// allocator_fuzz crash (release_pool ... keeps a wholly free segment): a
// released pool's last live block was freed with another stream's use, so it
// waited pending on that stream's event; once the event completed, the next
// Allocate reclaimed the block but kept its wholly free segment cached until
// some later call, although no routing was active.
TYPED_TEST_P(PoolBehaviourTest, ReleasedPoolGoesBackWhenItsLastPendingBlockCompletes) {
  CCALLOC_SKIP_UNLESS_SIM("events held incomplete and the simulated capture");
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  const StreamId other = this->env_.stream(1);
  this->BeginCapture(1, s);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(32 << 20, s));
  ASSERT_TRUE(alloc.RecordStream(p, other).ok());
  ASSERT_TRUE(alloc.Free(p).ok());  // deferred: the capture refuses the event
  this->EndCapture(1, s);
  EXPECT_TRUE(this->CaptureIntact());

  // Use count 0 with no routing: the event is recorded now, the block waits
  // (unless the release synchronized the device, for free memory of the
  // pool a replay may still write: growable segments have some here; then
  // the event has completed and the pool may go at once).
  const std::int64_t syncs = this->env_.sim()->counts().synchronize_calls;
  ASSERT_TRUE(alloc.ReleasePool(1).ok());
  if (this->env_.sim()->counts().synchronize_calls == syncs) {
    EXPECT_EQ(*alloc.PoolUseCount(1), 0);
    EXPECT_FALSE(this->PoolRanges(1).empty()) << "a pending block's memory went back";
  }

  // The other stream finishes; the next call reclaims the block and, the
  // pool's segment now being wholly free, gives it back in the same call.
  this->env_.CompleteStream(other);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr eager, alloc.Allocate(1, other));
  EXPECT_TRUE(this->PoolRanges(1).empty()) << "released pool 1 keeps a wholly free segment";
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(1).status()));
  EXPECT_TRUE(absl::IsNotFound(alloc.ReleasePool(1)));
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.Free(eager).ok());
}

// The same on the out-of-memory ladder: the synchronize that completes a
// released pool's pending block makes its memory available to the retry.
TYPED_TEST_P(PoolBehaviourTest, OutOfMemoryLadderTakesBackAReleasedPoolsPendingBlock) {
  CCALLOC_SKIP_UNLESS_SIM("a small capacity and events held incomplete");
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{64} << 20);
  const StreamId s = this->env_.stream(0);
  const StreamId other = this->env_.stream(1);
  this->BeginCapture(1, s);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(48 << 20, s));
  this->EndCapture(1, s);
  ASSERT_TRUE(alloc.RecordStream(p, other).ok());
  ASSERT_TRUE(alloc.Free(p).ok());  // pending on `other`'s event
  std::int64_t syncs = this->env_.sim()->counts().synchronize_calls;
  ASSERT_TRUE(alloc.ReleasePool(1).ok());
  // The release synchronizes the device where the pool has free memory a
  // replay may write (growable segments here): the block's event is then
  // complete and the pool gone already. Else the ladder must synchronize.
  const bool released_synced = this->env_.sim()->counts().synchronize_calls > syncs;
  EXPECT_EQ(this->PoolRanges(1).empty(), released_synced);

  syncs = this->env_.sim()->counts().synchronize_calls;
  absl::StatusOr<DevicePtr> q = alloc.Allocate(48 << 20, s);
  ASSERT_TRUE(q.ok()) << "the ladder kept a released pool's freed memory: " << q.status();
  if (!released_synced) EXPECT_GT(this->env_.sim()->counts().synchronize_calls, syncs);
  EXPECT_EQ(this->PoolOfPtr(*q), 0);
  EXPECT_TRUE(this->PoolRanges(1).empty());
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(1).status()));
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.Free(*q).ok());
}

// PyTorch's MemPool(use_on_oom=True): an allocation outside any pool that
// the ladder cannot serve takes a free block of such a pool, which stays the
// pool's; a released pool (a deleted MemPool) lends nothing.
TYPED_TEST_P(PoolBehaviourTest, AUseOnOomPoolLendsItsFreeMemoryWhenTheDeviceIsOut) {
  CCALLOC_SKIP_UNLESS_SIM("a small capacity");
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{64} << 20);
  const StreamId s = this->env_.stream(0);
  ASSERT_TRUE(alloc.CreateOrIncrefPool(3).ok());
  ASSERT_TRUE(alloc.BeginAllocateToPool(3, this->Only(s)).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr in_pool, alloc.Allocate(std::size_t{40} << 20, s));
  ASSERT_TRUE(alloc.EndAllocateToPool(3).ok());
  ASSERT_TRUE(alloc.ReleasePool(3).ok());  // use_mem_pool's; the MemPool's use stays
  ASSERT_TRUE(alloc.Free(in_pool).ok());   // the pool keeps the memory
  absl::StatusOr<DevicePtr> refused = alloc.Allocate(std::size_t{32} << 20, s);
  ASSERT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();

  ASSERT_TRUE(alloc.SetPoolUseOnOom(3, true).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr lent, alloc.Allocate(std::size_t{32} << 20, s));
  EXPECT_EQ(this->PoolOfPtr(lent), 3) << "not the pool's memory";
  EXPECT_EQ(alloc.PoolLiveBlocks(3).size(), 1u);
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.Free(lent).ok());
  EXPECT_TRUE(alloc.PoolLiveBlocks(3).empty());
  EXPECT_FALSE(this->PoolRanges(3).empty()) << "the lent block's free left the pool";

  // Turned off again, the pool keeps its memory to itself.
  ASSERT_TRUE(alloc.SetPoolUseOnOom(3, false).ok());
  refused = alloc.Allocate(std::size_t{32} << 20, s);
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();

  // A released pool (the MemPool deleted) lends nothing: its memory goes
  // back to the device.
  ASSERT_TRUE(alloc.SetPoolUseOnOom(3, true).ok());
  ASSERT_TRUE(alloc.ReleasePool(3).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr after, alloc.Allocate(std::size_t{32} << 20, s));
  EXPECT_EQ(this->PoolOfPtr(after), 0);
  EXPECT_TRUE(absl::IsNotFound(alloc.SetPoolUseOnOom(3, true)));
  EXPECT_TRUE(absl::IsNotFound(alloc.SetPoolUseOnOom(0, true)));
  EXPECT_TRUE(IsValid(alloc));
  ASSERT_TRUE(alloc.Free(after).ok());
}

// PoolLiveBlocks + AllocateAt restore a checkpointed pool layout at the same
// addresses, counted like allocations.
TYPED_TEST_P(PoolBehaviourTest, CheckpointLayoutIsRestoredAtTheSameAddresses) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  this->BeginCapture(9, s);
  std::vector<DevicePtr> ptrs;
  for (std::size_t size : PoolTestSizes()) {
    CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(size + 100, s));
    ptrs.push_back(p);
  }
  // A hole in the middle, so that restoring needs an interior carve.
  ASSERT_TRUE(alloc.Free(ptrs[1]).ok());
  this->EndCapture(9, s);
  const std::vector<ccalloc::LiveBlock> checkpoint = alloc.PoolLiveBlocks(9);
  ASSERT_EQ(checkpoint.size(), ptrs.size() - 1);
  for (std::size_t i = 1; i < checkpoint.size(); ++i) {
    EXPECT_LT(checkpoint[i - 1].ptr, checkpoint[i].ptr) << "not by address";
  }
  const MemoryStats stats = alloc.GetStats();
  for (const ccalloc::LiveBlock& b : checkpoint) ASSERT_TRUE(alloc.Free(b.ptr).ok());
  EXPECT_TRUE(alloc.PoolLiveBlocks(9).empty());

  // Restore in reverse order: each range is carved out of a larger free block.
  for (auto it = checkpoint.rbegin(); it != checkpoint.rend(); ++it) {
    absl::StatusOr<DevicePtr> p = alloc.AllocateAt(9, it->ptr, it->size, it->requested, it->stream);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(*p, it->ptr);
  }
  const std::vector<ccalloc::LiveBlock> restored = alloc.PoolLiveBlocks(9);
  ASSERT_EQ(restored.size(), checkpoint.size());
  for (std::size_t i = 0; i < restored.size(); ++i) {
    EXPECT_EQ(restored[i].ptr, checkpoint[i].ptr);
    EXPECT_EQ(restored[i].size, checkpoint[i].size);
    EXPECT_EQ(restored[i].requested, checkpoint[i].requested);
    EXPECT_EQ(restored[i].stream, checkpoint[i].stream);
  }
  const MemoryStats now = alloc.GetStats();
  for (int p : {0, 1, 2}) {
    EXPECT_EQ(now.allocated_bytes[p].current, stats.allocated_bytes[p].current);
    EXPECT_EQ(now.requested_bytes[p].current, stats.requested_bytes[p].current);
    EXPECT_EQ(now.allocation[p].current, stats.allocation[p].current);
  }
  EXPECT_TRUE(IsValid(alloc));
  for (const ccalloc::LiveBlock& b : restored) ASSERT_TRUE(alloc.Free(b.ptr).ok());
  ASSERT_TRUE(alloc.ReleasePool(9).ok());
}

// A block used on another stream and freed during a capture gets its event
// only after the capture (a capture refuses the event), and is not reused
// before that stream's work is done.
TYPED_TEST_P(PoolBehaviourTest, CrossStreamFreeDuringCaptureIsDeferred) {
  CCALLOC_SKIP_UNLESS_SIM("events held incomplete and the simulated capture");
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  const StreamId other = this->env_.stream(1);
  this->BeginCapture(4, s);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr p, alloc.Allocate(3 << 20, s));
  ASSERT_TRUE(alloc.RecordStream(p, other).ok());
  const std::int64_t events = this->env_.sim()->counts().live_events;
  ASSERT_TRUE(alloc.Free(p).ok());
  EXPECT_EQ(this->env_.sim()->counts().live_events, events) << "an event during capture";
  EXPECT_EQ(BlockAt(alloc.TakeSnapshot(), p)->status, BlockStatus::kActivePendingFree);
  // Not reusable during the capture either.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr q, alloc.Allocate(3 << 20, s));
  EXPECT_NE(q, p);
  ASSERT_TRUE(alloc.Free(q).ok());
  this->EndCapture(4, s);
  EXPECT_TRUE(this->CaptureIntact());
  EXPECT_EQ(this->env_.sim()->counts().live_events, events) << "EndAllocateToPool did work";

  // The next call after the capture records the event; the block waits for it.
  ASSERT_TRUE(alloc.BeginAllocateToPool(4, this->Only(s)).ok());
  ASSERT_TRUE(alloc.EndAllocateToPool(4).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr r, alloc.Allocate(1 << 10, other));
  EXPECT_EQ(this->env_.sim()->counts().live_events, events + 1);
  ASSERT_TRUE(alloc.Free(r).ok());
  ASSERT_TRUE(alloc.BeginAllocateToPool(4, this->Only(s)).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr before_done, alloc.Allocate(3 << 20, s));
  EXPECT_NE(before_done, p) << "reused before the other stream finished";
  ASSERT_TRUE(alloc.EndAllocateToPool(4).ok());
  this->env_.CompleteStream(other);
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr r2, alloc.Allocate(1 << 10, other));  // processes events
  ASSERT_TRUE(alloc.Free(r2).ok());
  ASSERT_TRUE(alloc.BeginAllocateToPool(4, this->Only(s)).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr after_done, alloc.Allocate(3 << 20, s));
  EXPECT_EQ(after_done, p);
  ASSERT_TRUE(alloc.EndAllocateToPool(4).ok());
  ASSERT_TRUE(alloc.Free(before_done).ok());
  ASSERT_TRUE(alloc.Free(after_done).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(alloc.ReleasePool(4).ok());
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(4).status()));
}

// Out of memory during a capture fails with the report and never
// synchronizes or frees (which would invalidate the capture).
TYPED_TEST_P(PoolBehaviourTest, OutOfMemoryDuringCaptureFailsWithoutSynchronizing) {
  CCALLOC_SKIP_UNLESS_SIM("a small capacity and the simulated capture");
  DeviceAllocator& alloc = this->Make(this->env_.BaseOptions(), std::size_t{64} << 20);
  const StreamId s = this->env_.stream(0);
  // Wholly free default-pool memory that the ladder would release outside capture.
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr eager, alloc.Allocate(24 << 20, s));
  ASSERT_TRUE(alloc.Free(eager).ok());
  this->BeginCapture(1, s);
  const std::int64_t syncs = this->env_.sim()->counts().synchronize_calls;
  absl::StatusOr<DevicePtr> p = alloc.Allocate(48 << 20, s);
  ASSERT_TRUE(absl::IsResourceExhausted(p.status())) << p.status();
  EXPECT_NE(p.status().message().find("out of memory"), absl::string_view::npos);
  EXPECT_EQ(this->env_.sim()->counts().synchronize_calls, syncs);
  this->EndCapture(1, s);
  EXPECT_TRUE(this->CaptureIntact());
  // Whatever the failed attempt mapped into the pool goes back with it; then
  // the ladder releases the cached default-pool memory and succeeds.
  ASSERT_TRUE(alloc.ReleasePool(1).ok());
  EXPECT_TRUE(this->PoolRanges(1).empty());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr q, alloc.Allocate(48 << 20, s));
  ASSERT_TRUE(alloc.Free(q).ok());
}

// Use counts follow PyTorch: create/begin +1, end 0, release -1.
TYPED_TEST_P(PoolBehaviourTest, UseCounts) {
  DeviceAllocator& alloc = this->Make();
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(5).status()));
  ASSERT_TRUE(alloc.CreateOrIncrefPool(5).ok());
  EXPECT_EQ(*alloc.PoolUseCount(5), 1);
  ASSERT_TRUE(alloc.CreateOrIncrefPool(5).ok());
  ASSERT_TRUE(alloc.BeginAllocateToPool(5, this->Only(this->env_.stream(0))).ok());
  EXPECT_EQ(*alloc.PoolUseCount(5), 3);
  ASSERT_TRUE(alloc.EndAllocateToPool(5).ok());
  EXPECT_EQ(*alloc.PoolUseCount(5), 3);
  ASSERT_TRUE(alloc.ReleasePool(5).ok());
  ASSERT_TRUE(alloc.ReleasePool(5).ok());
  EXPECT_EQ(*alloc.PoolUseCount(5), 1);
  ASSERT_TRUE(alloc.ReleasePool(5).ok());
  // No memory: the record goes at once.
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(5).status()));
}

// Bad input gets a clear error and changes nothing.
TYPED_TEST_P(PoolBehaviourTest, BadPoolInputChangesNothing) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  ASSERT_TRUE(alloc.BeginAllocateToPool(2, this->Only(s)).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr live, alloc.Allocate(3 << 20, s));
  ASSERT_TRUE(alloc.EndAllocateToPool(2).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr eager, alloc.Allocate(3 << 20, s));
  const std::string before = StateFingerprint(alloc);

  EXPECT_TRUE(absl::IsNotFound(alloc.ReleasePool(77)));
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(77).status()));
  EXPECT_TRUE(absl::IsNotFound(alloc.EmptyCachePool(77)));
  EXPECT_TRUE(alloc.PoolLiveBlocks(77).empty());
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.ReleasePool(0)));
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.CreateOrIncrefPool(0)));
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.BeginAllocateToPool(0, this->Only(s))));
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.BeginAllocateToPool(3, nullptr)));
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.EndAllocateToPool(2)));  // already ended
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.EndAllocateToPool(77)));
  // AllocateAt: inside a live block, in another pool's free memory, unknown
  // pool, unaligned, empty, on another stream.
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.AllocateAt(2, live, 512, 512, s).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(alloc.AllocateAt(2, eager + (3 << 20), 512, 512, s).status()));
  EXPECT_TRUE(absl::IsNotFound(alloc.AllocateAt(77, live, 512, 512, s).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.AllocateAt(2, live + 100, 512, 512, s).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.AllocateAt(2, live, 0, 0, s).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(alloc.AllocateAt(2, live, 512, 513, s).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      alloc.AllocateAt(2, 0x1000, 512, 512, s).status()));  // no segment there
  EXPECT_EQ(StateFingerprint(alloc), before);

  // While routing: a second begin of the same pool, the last release, and
  // EmptyCache are refused.
  ASSERT_TRUE(alloc.BeginAllocateToPool(2, this->Only(s)).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.BeginAllocateToPool(2, this->Only(s))));
  ASSERT_TRUE(alloc.ReleasePool(2).ok());  // 2 -> 1
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.ReleasePool(2)));
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.EmptyCache()));
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.EmptyCachePool(0)));
  EXPECT_EQ(*alloc.PoolUseCount(2), 1);
  ASSERT_TRUE(alloc.EndAllocateToPool(2).ok());
  ASSERT_TRUE(alloc.ReleasePool(2).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(alloc.ReleasePool(2)));  // already at 0
  ASSERT_TRUE(alloc.Free(live).ok());
  ASSERT_TRUE(alloc.Free(eager).ok());
  EXPECT_TRUE(absl::IsNotFound(alloc.PoolUseCount(2).status()));
}

// The snapshot names each segment's pool, in the struct and in JSON.
TYPED_TEST_P(PoolBehaviourTest, SnapshotNamesThePool) {
  DeviceAllocator& alloc = this->Make();
  const StreamId s = this->env_.stream(0);
  ASSERT_TRUE(alloc.BeginAllocateToPool(12345, this->Only(s)).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr pooled, alloc.Allocate(1 << 20, s));
  ASSERT_TRUE(alloc.EndAllocateToPool(12345).ok());
  CCALLOC_ASSERT_OK_AND_ASSIGN(DevicePtr eager, alloc.Allocate(1 << 20, s));
  const Snapshot snap = alloc.TakeSnapshot();
  ASSERT_NE(SegmentOf(snap, pooled), nullptr);
  EXPECT_EQ(SegmentOf(snap, pooled)->pool_id, 12345u);
  EXPECT_EQ(SegmentOf(snap, eager)->pool_id, 0u);
  const std::string json = SnapshotToJson(snap);
  EXPECT_NE(json.find("\"pool_id\":12345"), std::string::npos);
  EXPECT_NE(json.find("\"pool_id\":0"), std::string::npos);
  ASSERT_TRUE(alloc.Free(pooled).ok());
  ASSERT_TRUE(alloc.Free(eager).ok());
  ASSERT_TRUE(alloc.ReleasePool(12345).ok());
  EXPECT_TRUE(IsValid(alloc));
}

REGISTER_TYPED_TEST_SUITE_P(PoolBehaviourTest, AResultOutlivesItsReleasedGraphPool,
                            AReleasedPoolsMemoryGoesOnlyOnceTheDeviceHasFinished,
                            ALiveGraphsTemporariesKeepTheirPagesUnderPressure,
                            CaptureStaysInItsPoolAndIsNeverInvalidated,
                            SecondCaptureReusesThePoolsFreeBlocks,
                            ReleasePoolReturnsTheMemoryAsItBecomesFree,
                            ReleaseDuringAnotherCaptureWaitsForIt,
                            ReleasedPoolGoesBackWhenItsLastPendingBlockCompletes,
                            OutOfMemoryLadderTakesBackAReleasedPoolsPendingBlock,
                            AUseOnOomPoolLendsItsFreeMemoryWhenTheDeviceIsOut,
                            CheckpointLayoutIsRestoredAtTheSameAddresses,
                            CrossStreamFreeDuringCaptureIsDeferred,
                            OutOfMemoryDuringCaptureFailsWithoutSynchronizing, UseCounts,
                            BadPoolInputChangesNothing, SnapshotNamesThePool);

}  // namespace ccalloc::test

#endif  // CCALLOC_TESTS_SUPPORT_POOL_BEHAVIOUR_SUITE_H_
