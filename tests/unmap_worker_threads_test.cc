// unmap_worker_threads_test.cc — the unmap worker (segments/unmap_worker.h)
// alone, and growable segments handing it their unmaps.
//
// The worker: jobs run off the submitting thread, in order, a release after
// the unmap before it and never after a failed one; WaitFor and Drain return
// only once the jobs are done; the inline mode runs them in Submit. The store:
// a trim's unmaps are not made on the allocating thread, the device holds
// what reserved says once the worker is done, and eight threads trimming at
// every growth keep the cache valid. Labelled `threads` (run under TSan).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/segments/unmap_worker.h"
#include "allocator/backends/sim_backend.h"
#include "gtest/gtest.h"
#include "tests/support/allocator_fixture.h"

namespace ccalloc::test {
namespace {

constexpr std::size_t kPage = std::size_t{2} << 20;

// A TrackingBackend that notes which thread made each unmap and release,
// and can hold unmaps until the test lets them through.
class ThreadNotingBackend : public TrackingBackend {
 public:
  using TrackingBackend::TrackingBackend;

  absl::Status Unmap(DevicePtr va, std::size_t bytes) override {
    {
      absl::MutexLock lock(&mu_);
      unmap_threads_.push_back(std::this_thread::get_id());
      order_.push_back(va);
      mu_.Await(absl::Condition(&open_));
    }
    return TrackingBackend::Unmap(va, bytes);
  }
  absl::Status ReleasePhysical(PhysicalHandle handle) override {
    {
      absl::MutexLock lock(&mu_);
      release_threads_.push_back(std::this_thread::get_id());
      order_.push_back(0);
    }
    return TrackingBackend::ReleasePhysical(handle);
  }
  void Hold(bool hold) {
    absl::MutexLock lock(&mu_);
    open_ = !hold;
  }
  std::vector<std::thread::id> unmap_threads() const {
    absl::MutexLock lock(&mu_);
    return unmap_threads_;
  }
  std::vector<std::thread::id> release_threads() const {
    absl::MutexLock lock(&mu_);
    return release_threads_;
  }
  // Unmapped addresses and releases (0) in the order they were made.
  std::vector<DevicePtr> order() const {
    absl::MutexLock lock(&mu_);
    return order_;
  }

 private:
  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<std::thread::id> unmap_threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> release_threads_ ABSL_GUARDED_BY(mu_);
  std::vector<DevicePtr> order_ ABSL_GUARDED_BY(mu_);
};

class UnmapWorkerTest : public ::testing::Test {
 protected:
  UnmapWorkerTest() : sim_(Config()), backend_(&sim_, &outstanding_) {}
  static SimBackend::Config Config() {
    SimBackend::Config c;
    c.capacity = std::size_t{1} << 30;
    return c;
  }
  // `n` page-sized handles mapped side by side at a new range.
  std::pair<DevicePtr, std::vector<PhysicalHandle>> MapPages(int n) {
    absl::StatusOr<DevicePtr> base = backend_.ReserveAddressRange(n * kPage);
    EXPECT_TRUE(base.ok());
    std::vector<PhysicalHandle> handles;
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<PhysicalHandle> h = backend_.CreatePhysical(kPage);
      EXPECT_TRUE(h.ok());
      EXPECT_TRUE(backend_.Map(*base + i * kPage, kPage, *h).ok());
      handles.push_back(*h);
    }
    return {*base, handles};
  }

  SimBackend sim_;
  Outstanding outstanding_;
  ThreadNotingBackend backend_;
};

TEST_F(UnmapWorkerTest, JobsRunOffTheCallerInOrderAndWaitForWaits) {
  auto [base, handles] = MapPages(3);
  UnmapWorker worker(backend_, /*threaded=*/true);
  backend_.Hold(true);  // the first unmap blocks on the worker
  std::vector<std::uint64_t> ids;
  ids.push_back(worker.Submit(base, kPage, handles[0]));
  // Once the worker runs a job, later ones queue behind it (a caller runs
  // the queue itself only while the worker runs nothing).
  while (backend_.unmap_threads().empty()) std::this_thread::yield();
  for (int i = 1; i < 3; ++i) ids.push_back(worker.Submit(base + i * kPage, kPage, handles[i]));
  // Submit returned with the unmaps held: they are not this thread's.
  EXPECT_EQ(worker.pending(), 3u);
  EXPECT_TRUE(worker.TakeResults().empty());
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    worker.WaitFor(ids[1]);
    waited = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited.load()) << "WaitFor returned before its job ran";
  backend_.Hold(false);
  waiter.join();
  EXPECT_TRUE(waited.load());
  worker.Drain();
  EXPECT_EQ(worker.pending(), 0u);
  std::string why;
  EXPECT_TRUE(worker.Validate(&why)) << why;

  const std::vector<UnmapWorker::Result> results = worker.TakeResults();
  ASSERT_EQ(results.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(results[i].id, ids[i]);
    EXPECT_EQ(results[i].release, handles[i]);
    EXPECT_TRUE(results[i].unmapped.ok()) << results[i].unmapped;
    EXPECT_TRUE(results[i].released.ok()) << results[i].released;
  }
  for (std::thread::id t : backend_.unmap_threads()) EXPECT_NE(t, std::this_thread::get_id());
  for (std::thread::id t : backend_.release_threads()) EXPECT_NE(t, std::this_thread::get_id());
  // Each release right after its own unmap, the jobs in submission order.
  const std::vector<DevicePtr> order = backend_.order();
  ASSERT_EQ(order.size(), 6u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(order[2 * i], base + i * kPage);
    EXPECT_EQ(order[2 * i + 1], 0u);
  }
  EXPECT_TRUE(backend_.ReleaseAddressRange(base, 3 * kPage).ok());
  EXPECT_TRUE(outstanding_.Nothing()) << outstanding_.ToString();
}

TEST_F(UnmapWorkerTest, AFailedUnmapReleasesNothingAndIsReported) {
  auto [base, handles] = MapPages(2);
  UnmapWorker worker(backend_, /*threaded=*/true);
  sim_.FailNth(SimOp::kUnmap, 1);
  const std::uint64_t failed = worker.Submit(base, kPage, handles[0]);
  const std::uint64_t fine = worker.Submit(base + kPage, kPage, handles[1]);
  worker.Drain();
  const std::vector<UnmapWorker::Result> results = worker.TakeResults();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].id, failed);
  EXPECT_FALSE(results[0].unmapped.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(results[0].released)) << results[0].released;
  EXPECT_EQ(results[1].id, fine);
  EXPECT_TRUE(results[1].unmapped.ok());
  EXPECT_TRUE(results[1].released.ok());
  // The failed one is still mapped and held: nothing was lost.
  EXPECT_EQ(outstanding_.mappings.load(), 1);
  EXPECT_EQ(outstanding_.physical.load(), 1);
  EXPECT_TRUE(backend_.Unmap(base, kPage).ok());
  EXPECT_TRUE(backend_.ReleasePhysical(handles[0]).ok());
  EXPECT_TRUE(backend_.ReleaseAddressRange(base, 2 * kPage).ok());
  EXPECT_TRUE(outstanding_.Nothing()) << outstanding_.ToString();
}

// One handle mapped twice (a move's old mapping and where the memory went).
// When the old mapping's unmap fails, the later job that unmaps the other
// mapping and releases the memory makes the unmap but keeps the memory
// (Result::kept): the old mapping still holds it, and freeing it then would
// leave the device holding memory the caller no longer counts. A release of
// other memory is not held back.
TEST_F(UnmapWorkerTest, AReleaseWaitsWhileAnOldMappingOfItFailedToUnmap) {
  for (const bool threaded : {true, false}) {
    SCOPED_TRACE(threaded ? "threaded" : "inline");
    absl::StatusOr<DevicePtr> base = backend_.ReserveAddressRange(3 * kPage);
    ASSERT_TRUE(base.ok());
    absl::StatusOr<PhysicalHandle> moved = backend_.CreatePhysical(kPage);
    absl::StatusOr<PhysicalHandle> other = backend_.CreatePhysical(kPage);
    ASSERT_TRUE(moved.ok() && other.ok());
    ASSERT_TRUE(backend_.Map(*base, kPage, *moved).ok());          // the old mapping
    ASSERT_TRUE(backend_.Map(*base + kPage, kPage, *moved).ok());  // where it went
    ASSERT_TRUE(backend_.Map(*base + 2 * kPage, kPage, *other).ok());
    {
      UnmapWorker worker(backend_, threaded);
      // Jobs {va, bytes, release, maps}, the first unmap failing; their results.
      struct Job {
        DevicePtr va;
        std::size_t bytes;
        PhysicalHandle release, maps;
      };
      auto run = [&](std::initializer_list<Job> jobs) {
        sim_.FailNth(SimOp::kUnmap, 1);
        for (const Job& j : jobs) worker.Submit(j.va, j.bytes, j.release, j.maps);
        worker.Drain();
        return worker.TakeResults();
      };
      const std::vector<UnmapWorker::Result> results =
          run({{*base, kPage, 0, *moved}, {*base + kPage, kPage, *moved, 0},
               {*base + 2 * kPage, kPage, *other, 0}});
      ASSERT_EQ(results.size(), 3u);
      EXPECT_FALSE(results[0].unmapped.ok());
      EXPECT_TRUE(results[1].unmapped.ok());
      EXPECT_TRUE(results[1].kept);
      EXPECT_TRUE(absl::IsFailedPrecondition(results[1].released)) << results[1].released;
      EXPECT_FALSE(results[2].kept);
      EXPECT_TRUE(results[2].released.ok()) << results[2].released;
      // The old mapping is still there and the memory still held.
      EXPECT_EQ(outstanding_.mappings.load(), 1);
      EXPECT_EQ(outstanding_.physical.load(), 1);
      // Its unmap fails once more, then succeeds when tried again: the
      // release after that is made.
      const std::vector<UnmapWorker::Result> again =
          run({{*base, kPage, 0, *moved}, {*base, kPage, 0, *moved}, {0, 0, *moved, 0}});
      ASSERT_EQ(again.size(), 3u);
      EXPECT_FALSE(again[0].unmapped.ok());
      EXPECT_TRUE(again[1].unmapped.ok());
      EXPECT_FALSE(again[2].kept);
      EXPECT_TRUE(again[2].released.ok()) << again[2].released;
      EXPECT_TRUE(worker.Validate(nullptr));
    }
    EXPECT_TRUE(backend_.ReleaseAddressRange(*base, 3 * kPage).ok());
    EXPECT_TRUE(outstanding_.Nothing()) << outstanding_.ToString();
  }
}

TEST_F(UnmapWorkerTest, InlineModeRunsJobsInSubmitAndTheDestructorFinishesQueuedOnes) {
  auto [base, handles] = MapPages(2);
  {
    UnmapWorker inline_worker(backend_, /*threaded=*/false);
    inline_worker.Submit(base, kPage, handles[0]);
    EXPECT_EQ(inline_worker.pending(), 0u);
    ASSERT_EQ(backend_.unmap_threads().size(), 1u);
    EXPECT_EQ(backend_.unmap_threads()[0], std::this_thread::get_id());
    EXPECT_EQ(inline_worker.TakeResults().size(), 1u);
  }
  {
    UnmapWorker worker(backend_, /*threaded=*/true);
    worker.Submit(base + kPage, kPage, handles[1]);  // not waited for
  }
  EXPECT_EQ(outstanding_.mappings.load(), 0) << "a queued job was dropped";
  EXPECT_EQ(outstanding_.physical.load(), 0);
  EXPECT_TRUE(backend_.ReleaseAddressRange(base, 2 * kPage).ok());
  EXPECT_TRUE(outstanding_.Nothing()) << outstanding_.ToString();
}

// A child of fork() has no worker thread: jobs there run on the caller,
// waiting returns, and destroying the worker neither joins nor aborts.
TEST_F(UnmapWorkerTest, AForkedChildRunsJobsItselfAndDestroysTheWorkerSafely) {
  auto [base, handles] = MapPages(2);
  auto worker = std::make_unique<UnmapWorker>(backend_, /*threaded=*/true);
  worker->Drain();
  worker->Submit(base, kPage, handles[0]);  // the thread starts
  worker->Drain();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe reporting here: the exit status says what failed.
    const std::uint64_t id = worker->Submit(base + kPage, kPage, handles[1]);
    if (worker->pending() != 0) _exit(2);
    worker->WaitFor(id);
    const std::vector<UnmapWorker::Result> results = worker->TakeResults();
    if (results.empty() || results.back().id != id || !results.back().unmapped.ok()) _exit(3);
    worker.reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit normally";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The parent's worker is untouched: its thread still runs its jobs.
  worker->Submit(base + kPage, kPage, handles[1]);
  worker->Drain();
  worker.reset();
  EXPECT_TRUE(backend_.ReleaseAddressRange(base, 2 * kPage).ok());
  EXPECT_TRUE(outstanding_.Nothing()) << outstanding_.ToString();
}

// Growable segments on the worker: an allocator over a ThreadNotingBackend.
class BackgroundUnmapTest : public UnmapWorkerTest {
 protected:
  std::unique_ptr<DeviceAllocator> Make(bool background) {
    Options options = DefaultOptions();
    options.expandable_segments = true;
    options.release_slack = 0;
    options.release_slack_max = 0;
    options.background_unmap = background;
    // A move's old mapping unmapped once its work is done, as these tests
    // watch (keep_old_mappings keeps it for a block that wants it back).
    options.keep_old_mappings = false;
    options.cross_stream_reuse = Options::CrossStreamReuse::kNever;  // a move, not a loan
    // The allocator owns a forwarding backend; the noting one stays here.
    struct Borrowed : TrackingBackend {
      explicit Borrowed(DeviceBackend* b, Outstanding* o) : TrackingBackend(b, o) {}
    };
    return std::make_unique<DeviceAllocator>(std::make_unique<Borrowed>(&backend_, &ignored_),
                                             options);
  }
  // A block freed, its work finished, then a growth on another stream past
  // the slack: the freed block's chunks are taken from under it.
  void GrowOverAFinishedFree(DeviceAllocator& alloc) {
    absl::StatusOr<DevicePtr> a = alloc.Allocate(24 * kMiB, 0);
    ASSERT_TRUE(a.ok());
    absl::StatusOr<DevicePtr> keep = alloc.Allocate(8 * kMiB, 0);
    ASSERT_TRUE(keep.ok());
    ASSERT_TRUE(alloc.Free(*a).ok());
    sim_.CompleteStream(0);
    absl::StatusOr<DevicePtr> c = alloc.Allocate(24 * kMiB, 1);
    ASSERT_TRUE(c.ok()) << c.status();
    blocks_ = {*keep, *c};
  }
  Outstanding ignored_;
  std::vector<DevicePtr> blocks_;
};

TEST_F(BackgroundUnmapTest, AGrowthsUnmapsLeaveTheAllocatingThread) {
  for (bool background : {true, false}) {
    SCOPED_TRACE(background ? "background_unmap:1" : "background_unmap:0");
    std::unique_ptr<DeviceAllocator> alloc = Make(background);
    // Up to five growths on one allocator. Where the worker is slow to pick
    // up a growth's first unmap (starting its thread under a sanitizer can
    // take longer than the 100 us a caller waits), the caller runs the
    // queue itself (Submit); a later growth finds the thread running.
    std::size_t off_thread = 0, unmaps = 0;
    for (int growth = 0; growth < 5 && (off_thread == 0 || !background); ++growth) {
      const std::size_t unmaps_before = backend_.unmap_threads().size();
      GrowOverAFinishedFree(*alloc);
      ASSERT_TRUE(alloc->FinishBackgroundWork().ok());
      const std::vector<std::thread::id> threads = backend_.unmap_threads();
      ASSERT_GT(threads.size(), unmaps_before) << "the growth moved nothing";
      for (std::size_t i = unmaps_before; i < threads.size(); ++i) {
        off_thread += threads[i] != std::this_thread::get_id();
      }
      unmaps += threads.size() - unmaps_before;
      // Once the worker is done the device holds what reserved says.
      const MemoryStats stats = alloc->GetStats();
      EXPECT_EQ(outstanding_.bytes.load(), stats.reserved_bytes[kStatAll].current);
      EXPECT_EQ(stats.num_maps - stats.num_unmaps, outstanding_.mappings.load());
      std::string why;
      EXPECT_TRUE(alloc->Validate(&why)) << why;
      for (DevicePtr p : blocks_) ASSERT_TRUE(alloc->Free(p).ok());
      sim_.CompleteStream(0);
      sim_.CompleteStream(1);
    }
    // Inline: every unmap on the allocating thread; on the worker, not.
    if (background) {
      EXPECT_GT(off_thread, 0u) << unmaps << " unmaps, all on the allocating thread";
    } else {
      EXPECT_EQ(off_thread, 0u);
    }
    ASSERT_TRUE(alloc->EmptyCache().ok());
    EXPECT_EQ(outstanding_.physical.load(), 0);
  }
}

TEST_F(BackgroundUnmapTest, ABlockLandingWhereAnUnmapIsQueuedWaitsForIt) {
  std::unique_ptr<DeviceAllocator> alloc = Make(true);
  absl::StatusOr<DevicePtr> a = alloc->Allocate(24 * kMiB, 0);
  absl::StatusOr<DevicePtr> keep = alloc->Allocate(8 * kMiB, 0);
  ASSERT_TRUE(a.ok() && keep.ok());
  ASSERT_TRUE(alloc->Free(*a).ok());
  sim_.CompleteStream(0);
  backend_.Hold(true);  // a's chunks stay mapped, their unmaps queued
  // (On its own thread: where the worker was slow to start, the growth may
  // run the queue itself and wait in the held unmap.)
  absl::StatusOr<DevicePtr> c = absl::UnknownError("not run");
  std::thread grow([&] { c = alloc->Allocate(24 * kMiB, 1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // a's hole is wanted again before the worker got through: the allocation
  // must wait for those unmaps (then map there afresh), not map over them.
  std::atomic<bool> done{false};
  absl::StatusOr<DevicePtr> again = absl::UnknownError("not run");
  std::thread t([&] {
    again = alloc->Allocate(24 * kMiB, 0);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(done.load()) << "a block was handed out over pages still being unmapped";
  backend_.Hold(false);
  grow.join();
  t.join();
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *a);
  std::string why;
  EXPECT_TRUE(alloc->Validate(&why)) << why;
  ASSERT_TRUE(alloc->FinishBackgroundWork().ok());
  EXPECT_EQ(outstanding_.bytes.load(), alloc->GetStats().reserved_bytes[kStatAll].current);
  for (DevicePtr p : {*keep, *c, *again}) ASSERT_TRUE(alloc->Free(p).ok());
  ASSERT_TRUE(alloc->EmptyCache().ok());
  alloc.reset();
  EXPECT_TRUE(outstanding_.Nothing()) << outstanding_.ToString();
}

TEST_F(BackgroundUnmapTest, EightThreadsTrimmingAtEveryGrowthStayValid) {
  std::unique_ptr<DeviceAllocator> alloc = Make(true);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const StreamId stream = static_cast<StreamId>(t + 1);
      std::vector<DevicePtr> live;
      std::uint64_t x = 0x9E3779B97F4A7C15ull * (t + 1);
      for (int i = 0; i < 1500; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (live.size() < 6 && (x & 3) != 0) {
          absl::StatusOr<DevicePtr> p = alloc->Allocate((1 + x % 12) * kMiB, stream);
          if (p.ok()) {
            live.push_back(*p);
          } else {
            failures.fetch_add(1);
          }
        } else if (!live.empty()) {
          const std::size_t k = x % live.size();
          if (!alloc->Free(live[k]).ok()) failures.fetch_add(1);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
          sim_.CompleteStream(stream);
        }
        if (i % 500 == 0) {
          std::string why;
          if (!alloc->Validate(&why)) failures.fetch_add(1);
        }
      }
      for (DevicePtr p : live) {
        if (!alloc->Free(p).ok()) failures.fetch_add(1);
      }
      sim_.CompleteStream(stream);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const MemoryStats stats = alloc->GetStats();
  EXPECT_GT(stats.num_unmaps, 0) << "nothing was trimmed";
  std::string why;
  EXPECT_TRUE(alloc->Validate(&why)) << why;
  ASSERT_TRUE(alloc->FinishBackgroundWork().ok());
  EXPECT_EQ(outstanding_.bytes.load(), alloc->GetStats().reserved_bytes[kStatAll].current);
  ASSERT_TRUE(alloc->EmptyCache().ok());
  alloc.reset();
  EXPECT_TRUE(outstanding_.Nothing()) << outstanding_.ToString();
}

}  // namespace
}  // namespace ccalloc::test
