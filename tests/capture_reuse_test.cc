// capture_reuse_test.cc — graph_capture_record_stream_reuse on the simulated
// device, with classic and growable segments: during one stream capture a
// block freed while other streams used it is reused by its stream once the
// capture's graph orders all their work before that stream's (PyTorch's
// TestMemPool::test_graph_capture_reclaim_2_streams and _4_streams, step by
// step), and not before; with the setting off, for a stream that never
// joined the capture, or when the graph cannot be asked, the block waits for
// the capture's end as before, and is then handled once. (The simulated
// capture's graph itself: sim_capture_test.cc.)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "gtest/gtest.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

constexpr StreamId kS1 = 11, kS2 = 12, kS3 = 13, kS4 = 14;

template <typename Config>
class CaptureReuseTest : public AllocatorTest<Config> {
 protected:
  static constexpr PoolId kPool = 7;
  // torch.empty(8) of floats: a small block.
  static constexpr std::size_t kBytes = 8 * sizeof(float);

  DeviceAllocator& MakeWith(bool reuse) {
    Options options = this->env_.BaseOptions();
    options.graph_capture_record_stream_reuse = reuse;
    DeviceAllocator& alloc = this->Make(options);
    sim_ = this->env_.sim();
    return alloc;
  }
  // A capture begun on kS1, its allocations (on any of the four streams, as
  // PyTorch's filter takes every stream of the capture) routed into kPool.
  void Begin() {
    ASSERT_TRUE(sim_->BeginCapture(kS1).ok());
    absl::Status s = this->alloc_->BeginAllocateToPool(kPool, [](StreamId st) {
      return st == kS1 || st == kS2 || st == kS3 || st == kS4;
    });
    ASSERT_TRUE(s.ok()) << s;
  }
  // PyTorch's order: the routing ends, then the capture.
  void End() {
    ASSERT_TRUE(this->alloc_->EndAllocateToPool(kPool).ok());
    absl::Status s = sim_->EndCapture(kS1);
    ASSERT_TRUE(s.ok()) << s;
  }
  DevicePtr Alloc(StreamId stream) {
    absl::StatusOr<DevicePtr> p = this->alloc_->Allocate(kBytes, stream);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : 0;
  }
  void Free(DevicePtr p) {
    absl::Status s = this->alloc_->Free(p);
    EXPECT_TRUE(s.ok()) << s;
  }
  void Use(DevicePtr p, StreamId stream) {
    absl::Status s = this->alloc_->RecordStream(p, stream);
    EXPECT_TRUE(s.ok()) << s;
  }
  BlockStatus StatusOf(DevicePtr p) const {
    const Snapshot snapshot = this->alloc_->TakeSnapshot();
    const BlockInfo* block = BlockAt(snapshot, p);
    EXPECT_NE(block, nullptr) << "no block at " << p;
    return block == nullptr ? BlockStatus::kInactive : block->status;
  }
  // Blocks freed and not yet free (waiting for events or the capture's end).
  int Pending() const {
    int n = 0;
    for (const SegmentInfo& segment : this->alloc_->TakeSnapshot().segments) {
      for (const BlockInfo& block : segment.blocks) {
        n += block.status == BlockStatus::kActivePendingFree ? 1 : 0;
      }
    }
    return n;
  }
  // An allocation and free outside any routing: frees the blocks whose
  // events completed (and does the work a capture left).
  void Settle() { Free(Alloc(kS1)); }
  // The addresses of `n` blocks allocated in the pool on kS1 (a later
  // capture's), by address, freed again.
  std::vector<DevicePtr> PoolBlocks(int n) {
    EXPECT_TRUE(this->alloc_->BeginAllocateToPool(kPool, [](StreamId s) { return s == kS1; }).ok());
    std::vector<DevicePtr> blocks;
    for (int i = 0; i < n; ++i) blocks.push_back(Alloc(kS1));
    EXPECT_TRUE(this->alloc_->EndAllocateToPool(kPool).ok());
    for (DevicePtr b : blocks) Free(b);
    std::sort(blocks.begin(), blocks.end());
    return blocks;
  }
  static std::vector<DevicePtr> Sorted(std::vector<DevicePtr> v) {
    std::sort(v.begin(), v.end());
    return v;
  }
  std::int64_t Current(const StatArray& stat) const { return stat[kStatAll].current; }
  ::testing::AssertionResult CaptureIntact() const {
    if (!sim_->capture_invalidated()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "invalidated: " << sim_->capture_violation();
  }

  // test_graph_capture_reclaim_2_streams, step by step, up to the
  // allocation that PyTorch's test expects at data1's address (returned in
  // *data3; *data2 is the one it expects elsewhere). `between` runs right
  // before the join.
  void TwoStreams(DevicePtr* data1, DevicePtr* data2, DevicePtr* data3,
                  std::vector<DevicePtr>* live, const std::function<void()>& between = {}) {
    const DevicePtr sink1 = Alloc(kS1);
    *data1 = Alloc(kS1);
    ASSERT_TRUE(WaitStream(*sim_, kS2, kS1));
    const DevicePtr buf2 = Alloc(kS2);
    sim_->Launch(kS2);  // torch.add(data1, 2, out=buf2)
    Use(*data1, kS2);
    Free(*data1);  // del data1
    EXPECT_EQ(StatusOf(*data1), BlockStatus::kActivePendingFree);
    *data2 = Alloc(kS1);
    if (between) between();
    ASSERT_TRUE(WaitStream(*sim_, kS1, kS2));
    sim_->Launch(kS1);  // sink1.fill_(1)
    *data3 = Alloc(kS1);
    *live = {sink1, buf2, *data2, *data3};
  }

  SimBackend* sim_ = nullptr;
};

using SimConfigs = ::testing::Types<SimClassic, SimGrowable>;
TYPED_TEST_SUITE(CaptureReuseTest, SimConfigs, EnvNames);

TYPED_TEST(CaptureReuseTest, TwoStreamsReuseOnlyOnceTheUserStreamIsJoined) {
  DeviceAllocator& alloc = this->MakeWith(true);
  this->Begin();
  DevicePtr data1 = 0, data2 = 0, data3 = 0;
  std::vector<DevicePtr> live;
  this->TwoStreams(&data1, &data2, &data3, &live);
  EXPECT_NE(data2, data1) << "reused while kS2's use may still run";
  EXPECT_EQ(data3, data1) << "not reused once kS1 waited for kS2";
  EXPECT_EQ(this->StatusOf(data3), BlockStatus::kActiveAllocated);
  // Every block is live or free again: nothing pending, counted once.
  const MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(this->Current(stats.allocation), 4);
  EXPECT_EQ(this->Current(stats.active), 4);
  EXPECT_EQ(this->Current(stats.allocated_bytes), this->Current(stats.active_bytes));
  EXPECT_TRUE(IsValid(alloc));
  for (DevicePtr p : live) this->Free(p);
  const std::int64_t events = this->sim_->counts().live_events;
  this->End();
  EXPECT_TRUE(this->CaptureIntact());
  // The capture's end has nothing left to do for data1.
  const DevicePtr eager = this->Alloc(kS1);
  EXPECT_EQ(this->sim_->counts().live_events, events);
  this->Free(eager);
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
}

TYPED_TEST(CaptureReuseTest, FourStreamsReuseOnlyOnceEveryUserIsJoined) {
  DeviceAllocator& alloc = this->MakeWith(true);
  SimBackend& sim = *this->sim_;
  this->Begin();
  const DevicePtr sink1 = this->Alloc(kS1);
  const DevicePtr data1 = this->Alloc(kS1);
  std::vector<DevicePtr> live = {sink1};
  for (StreamId s : {kS2, kS3, kS4}) {
    ASSERT_TRUE(WaitStream(sim, s, kS1));
    live.push_back(this->Alloc(s));  // each stream's own result
    sim.Launch(s);                   // reads data1
    this->Use(data1, s);
  }
  this->Free(data1);
  ASSERT_TRUE(WaitStream(sim, kS1, kS2));
  ASSERT_TRUE(WaitStream(sim, kS3, kS4));
  sim.Launch(kS3);  // kS3 works on after kS4's work
  const DevicePtr data2 = this->Alloc(kS1);
  EXPECT_NE(data2, data1) << "reused while kS3's and kS4's uses may still run";
  ASSERT_TRUE(WaitStream(sim, kS1, kS3));
  sim.Launch(kS1);  // sink1.add_(sink3)
  const DevicePtr data3 = this->Alloc(kS1);
  EXPECT_EQ(data3, data1) << "not reused once kS1 is after all three users";
  EXPECT_TRUE(IsValid(alloc));
  live.push_back(data2);
  live.push_back(data3);
  for (DevicePtr p : live) this->Free(p);
  this->End();
  EXPECT_TRUE(this->CaptureIntact());
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
}

// PyTorch's default: the block waits for the capture's end, then for its
// event, as before the setting existed.
TYPED_TEST(CaptureReuseTest, SettingOffNeverReusesWithinTheCapture) {
  DeviceAllocator& alloc = this->MakeWith(false);
  EXPECT_FALSE(PytorchNativeOptions().graph_capture_record_stream_reuse);
  EXPECT_FALSE(DefaultOptions().graph_capture_record_stream_reuse);
  this->Begin();
  const std::int64_t queries = this->sim_->counts().failures_injected;
  this->sim_->FailNth(SimOp::kCaptureQuery, 1);  // the graph must not even be asked
  DevicePtr data1 = 0, data2 = 0, data3 = 0;
  std::vector<DevicePtr> live;
  this->TwoStreams(&data1, &data2, &data3, &live);
  EXPECT_NE(data2, data1);
  EXPECT_NE(data3, data1) << "reused within the capture with the setting off";
  EXPECT_EQ(this->StatusOf(data1), BlockStatus::kActivePendingFree);
  EXPECT_EQ(this->sim_->counts().failures_injected, queries) << "the graph was asked";
  this->sim_->FailNth(SimOp::kCaptureQuery, 0);
  for (DevicePtr p : live) this->Free(p);
  const std::int64_t events = this->sim_->counts().live_events;
  this->End();
  EXPECT_TRUE(this->CaptureIntact());
  // The next call records data1's event; once kS2 finished it is free.
  this->Settle();
  EXPECT_EQ(this->sim_->counts().live_events, events + 1);
  EXPECT_EQ(this->Pending(), 1);
  this->env_.CompleteStream(kS2);
  this->Settle();
  EXPECT_EQ(this->Pending(), 0);
  EXPECT_EQ(this->sim_->counts().live_events, events);
  // kS1's four blocks of the pool are free, each once, for its next capture.
  EXPECT_EQ(this->PoolBlocks(4), this->Sorted({live[0], data1, live[2], live[3]}));
  EXPECT_TRUE(IsValid(alloc));
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
}

// The setting at run time (SetRuntimeOptions, as _set_allocator_settings
// does): a block freed while it was off has no position and waits for the
// capture's end; one freed while it was on is reused only while it is on.
TYPED_TEST(CaptureReuseTest, RunTimeSettingAppliesToLaterFreesAndAllocations) {
  DeviceAllocator& alloc = this->MakeWith(false);
  Options on = this->env_.BaseOptions();
  on.graph_capture_record_stream_reuse = true;
  const Options off = this->env_.BaseOptions();
  this->Begin();
  DevicePtr data1 = 0, data2 = 0, data3 = 0;
  std::vector<DevicePtr> live;
  // Freed while off; on before the join.
  this->TwoStreams(&data1, &data2, &data3, &live, [&] { alloc.SetRuntimeOptions(on); });
  EXPECT_NE(data3, data1) << "a block freed while the setting was off";
  EXPECT_TRUE(alloc.options().graph_capture_record_stream_reuse);
  // Freed while on, the setting off at the join, on again.
  const DevicePtr data4 = this->Alloc(kS1);
  ASSERT_TRUE(WaitStream(*this->sim_, kS2, kS1));
  this->sim_->Launch(kS2);
  this->Use(data4, kS2);
  this->Free(data4);
  alloc.SetRuntimeOptions(off);
  ASSERT_TRUE(WaitStream(*this->sim_, kS1, kS2));
  this->sim_->Launch(kS1);
  const DevicePtr while_off = this->Alloc(kS1);
  EXPECT_NE(while_off, data4);
  alloc.SetRuntimeOptions(on);
  const DevicePtr again_on = this->Alloc(kS1);
  EXPECT_EQ(again_on, data4);
  EXPECT_TRUE(IsValid(alloc));
  live.push_back(while_off);
  live.push_back(again_on);
  for (DevicePtr p : live) this->Free(p);
  this->End();
  EXPECT_TRUE(this->CaptureIntact());
  this->env_.CompleteAll();
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
}

// Blocks the graph cannot prove free stay pending through the capture; at
// its end each gets its events once, a promoted block none, and each comes
// back free exactly once: one used by a stream outside the capture, one by
// a stream kS1 waits for only at the end, and a default-pool block (only a
// graph pool's blocks are reused within the capture).
TYPED_TEST(CaptureReuseTest, UnprovenBlocksWaitForTheEndAndAreHandledOnce) {
  DeviceAllocator& alloc = this->MakeWith(true);
  SimBackend& sim = *this->sim_;
  const DevicePtr eager = this->Alloc(kS1);
  this->Use(eager, kS2);
  this->Begin();
  const DevicePtr sink = this->Alloc(kS1);
  const DevicePtr p = this->Alloc(kS1);  // used by kS2, which is joined back
  const DevicePtr q = this->Alloc(kS1);  // used by kS3, never in the capture
  const DevicePtr r = this->Alloc(kS1);  // used by kS4, joined back only at the end
  ASSERT_TRUE(WaitStream(sim, kS2, kS1));
  ASSERT_TRUE(WaitStream(sim, kS4, kS1));
  for (StreamId s : {kS2, kS4}) sim.Launch(s);
  this->Use(p, kS2);
  this->Use(q, kS3);
  this->Use(r, kS4);
  for (DevicePtr b : {eager, p, q, r}) this->Free(b);
  ASSERT_TRUE(WaitStream(sim, kS1, kS2));
  sim.Launch(kS1);
  const DevicePtr reused = this->Alloc(kS1);
  EXPECT_EQ(reused, p);
  for (DevicePtr b : {eager, q, r}) {
    EXPECT_EQ(this->StatusOf(b), BlockStatus::kActivePendingFree) << b;
  }
  ASSERT_TRUE(WaitStream(sim, kS1, kS4));  // joined, so the capture can end
  EXPECT_TRUE(IsValid(alloc));
  this->Free(reused);
  this->Free(sink);
  const std::int64_t events = sim.counts().live_events;
  this->End();
  EXPECT_TRUE(this->CaptureIntact());
  // One event for each use of the three that waited; none for p.
  this->Settle();
  EXPECT_EQ(sim.counts().live_events, events + 3);
  EXPECT_EQ(this->Pending(), 3);
  this->env_.CompleteAll();
  this->Settle();
  EXPECT_EQ(sim.counts().live_events, events);
  EXPECT_EQ(this->Pending(), 0);
  const MemoryStats stats = alloc.GetStats();
  EXPECT_EQ(this->Current(stats.allocation), 0);
  EXPECT_EQ(this->Current(stats.active), 0);
  EXPECT_EQ(this->Current(stats.active_bytes), 0);
  EXPECT_TRUE(IsValid(alloc));
  // The pool's four blocks are free, each once, for its next capture.
  EXPECT_EQ(this->PoolBlocks(4), this->Sorted({sink, p, q, r}));
  EXPECT_TRUE(IsValid(alloc));
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
}

// A failed question to the graph proves nothing: at the free the block gets
// no position (it waits for the end); at an allocation it stays pending and
// the next allocation asks again.
TYPED_TEST(CaptureReuseTest, AFailedGraphQueryKeepsTheBlockPending) {
  DeviceAllocator& alloc = this->MakeWith(true);
  SimBackend& sim = *this->sim_;
  this->Begin();
  const DevicePtr sink = this->Alloc(kS1);
  const DevicePtr a = this->Alloc(kS1);
  const DevicePtr b = this->Alloc(kS1);
  ASSERT_TRUE(WaitStream(sim, kS2, kS1));
  sim.Launch(kS2);
  this->Use(a, kS2);
  this->Use(b, kS2);
  sim.FailNth(SimOp::kCaptureQuery, 1);  // a's free asks first
  this->Free(a);
  this->Free(b);
  ASSERT_TRUE(WaitStream(sim, kS1, kS2));
  sim.Launch(kS1);
  sim.FailNth(SimOp::kCaptureQuery, 1);  // the allocation's question about b
  const DevicePtr first = this->Alloc(kS1);
  EXPECT_NE(first, b);
  EXPECT_NE(first, a);
  EXPECT_EQ(this->StatusOf(b), BlockStatus::kActivePendingFree);
  const DevicePtr second = this->Alloc(kS1);
  EXPECT_EQ(second, b) << "a failed query lost the block's proof";
  EXPECT_EQ(this->StatusOf(a), BlockStatus::kActivePendingFree) << "a has no position";
  EXPECT_TRUE(IsValid(alloc));
  for (DevicePtr x : {sink, first, second}) this->Free(x);
  this->End();
  EXPECT_TRUE(this->CaptureIntact());
  this->env_.CompleteAll();
  EXPECT_TRUE(alloc.ReleasePool(this->kPool).ok());
}

}  // namespace
}  // namespace ccalloc::test
