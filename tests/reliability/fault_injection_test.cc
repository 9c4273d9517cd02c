// fault_injection_test.cc — the device fails at random; nothing is lost.
//
// SimBackend::FailRandomly makes each Allocate, CreatePhysical, Map,
// RecordEvent and QueryEvent call fail with a fixed probability. A seeded
// stream of 50k allocate / free / record_stream / complete / empty_cache
// operations runs against it for each probability and segment kind, and after
// every operation:
//   * Validate() holds and the counters equal the reference model;
//   * the device's handed-out bytes equal reserved_bytes;
//   * a failed call returned ResourceExhausted (never a crash, never another
//     code) and changed no block the caller holds; a valid call only fails
//     when a failure was injected during it or the memory is really gone.
// At the end, with failures still being injected, the allocator is
// destroyed; the device must have every byte, page, range and event back.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "gtest/gtest.h"
#include "stats/counters.h"
#include "tests/reliability/reliability_support.h"

namespace ccalloc::reliability {
namespace {

constexpr std::int64_t kOperations = 50000;
constexpr std::size_t kCapacity = 2 * kGiB;
constexpr std::size_t kMaxLive = 64;
constexpr int kStreams = 3;

// What one run did, printed at the end of each test.
struct Tally {
  std::int64_t ops = 0;
  std::int64_t failed_ops = 0;          // calls that returned an error
  std::int64_t recovered_ops = 0;       // calls that succeeded although a failure was injected
  std::int64_t real_ooms = 0;           // failures with nothing injected (memory really gone)
  std::int64_t failed_by_kind[5] = {};  // allocate, free, (unused), empty_cache, teardown free
};

class FaultInjectionTest : public ::testing::TestWithParam<std::tuple<double, bool>> {
 protected:
  void SetUp() override {
    probability_ = std::get<0>(GetParam());
    growable_ = std::get<1>(GetParam());
    SimBackend::Config config;
    config.capacity = kCapacity;
    config.auto_complete_events = false;
    sim_ = std::make_unique<SimBackend>(config);
    options_ = PytorchNativeOptions();
    options_.expandable_segments = growable_;
    // Unmaps inline: the worker's jobs run inside Submit and are applied at
    // the next reap, as on its thread, so every injected failure meets the
    // operation that caused it. The thread itself is covered by the soak,
    // the TSan suites and unmap_worker_test.
    options_.background_unmap = false;
    alloc_ =
        std::make_unique<DeviceAllocator>(std::make_unique<BorrowedBackend>(sim_.get()), options_);
  }

  // The checks every operation is followed by.
  ::testing::AssertionResult Consistent() const {
    std::string why;
    // The unmap worker's results applied (see the fuzzer's Check).
    (void)alloc_->FinishBackgroundWork();
    if (!alloc_->Validate(&why)) return ::testing::AssertionFailure() << "Validate: " << why;
    const MemoryStats stats = alloc_->GetStats();
    if (!model_.MatchesCounters(stats, &why)) {
      return ::testing::AssertionFailure() << "counters: " << why;
    }
    if (!BackendMatchesStats(sim_->counts(), stats, growable_, &why)) {
      return ::testing::AssertionFailure() << "device: " << why;
    }
    return ::testing::AssertionSuccess();
  }

  // A failed call must be an injected failure (or a real shortage for
  // allocations) reported as ResourceExhausted.
  ::testing::AssertionResult FailureIsAccounted(const absl::Status& s, std::int64_t injected,
                                                std::size_t request) {
    if (!absl::IsResourceExhausted(s)) {
      return ::testing::AssertionFailure() << "unexpected error code: " << s;
    }
    if (sim_->counts().failures_injected > injected) return ::testing::AssertionSuccess();
    std::string why;
    if (request > 0 && OutOfMemoryIsReal(request, alloc_->GetStats(), kCapacity, growable_,
                                         sim_->PageSize(), &why)) {
      ++tally_.real_ooms;
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "failed with nothing injected: " << s << (why.empty() ? "" : " — ") << why;
  }

  double probability_ = 0;
  bool growable_ = false;
  Options options_;
  std::unique_ptr<SimBackend> sim_;  // outlives the allocator
  std::unique_ptr<DeviceAllocator> alloc_;
  ReferenceModel model_;
  Tally tally_;
};

TEST_P(FaultInjectionTest, EveryFailureSurfacesAndNothingLeaks) {
  const std::uint64_t seed =
      0x5eed + static_cast<std::uint64_t>(probability_ * 1000) + (growable_ ? 7 : 0);
  std::mt19937_64 rng(seed);
  sim_->FailRandomly(probability_, seed);
  // Log-uniform 1 B .. 64 MiB: every size class as often as every other.
  std::uniform_real_distribution<double> log_size(0.0, 26.0);
  std::uniform_int_distribution<int> per_mille(0, 999);

  for (std::int64_t i = 0; i < kOperations; ++i) {
    ++tally_.ops;
    const std::int64_t injected = sim_->counts().failures_injected;
    const int roll = per_mille(rng);
    // Allocation is likelier while few blocks are live.
    const int alloc_share = model_.count() < kMaxLive / 2 ? 550 : 400;
    std::string what;
    bool ok = true;
    if (roll < alloc_share || model_.empty()) {
      const auto size = static_cast<std::size_t>(std::exp2(log_size(rng))) +
                        static_cast<std::size_t>(rng() % 512);
      const StreamId stream = rng() % kStreams;
      what = absl::StrCat("allocate ", size);
      const std::int64_t bytes_before = alloc_->GetStats().allocated_bytes[kStatAll].current;
      absl::StatusOr<DevicePtr> ptr = alloc_->Allocate(size, stream);
      if (ptr.ok()) {
        ModelBlock block;
        block.size = static_cast<std::size_t>(alloc_->GetStats().allocated_bytes[kStatAll].current -
                                              bytes_before);
        block.requested = size;
        block.stream = stream;
        std::string why;
        ASSERT_TRUE(model_.Add(*ptr, block, options_, growable_, &why)) << why;
      } else {
        ok = false;
        ++tally_.failed_ops;
        ++tally_.failed_by_kind[0];
        ASSERT_TRUE(FailureIsAccounted(ptr.status(), injected, size)) << "op " << i << " " << what;
      }
    } else if (roll < 900) {
      const DevicePtr ptr = model_.Nth(rng());
      what = absl::StrCat("free 0x", absl::Hex(ptr));
      absl::Status s = alloc_->Free(ptr);
      if (s.ok()) {
        model_.Remove(ptr);
      } else {
        ok = false;
        ++tally_.failed_ops;
        ++tally_.failed_by_kind[1];
        ASSERT_TRUE(FailureIsAccounted(s, injected, 0)) << "op " << i << " " << what;
      }
    } else if (roll < 960) {
      const DevicePtr ptr = model_.Nth(rng());
      what = "record_stream";
      ASSERT_TRUE(alloc_->RecordStream(ptr, rng() % kStreams).ok()) << "op " << i;
    } else if (roll < 995) {
      what = "complete";
      sim_->CompleteStream(rng() % kStreams);
    } else {
      what = "empty_cache";
      absl::Status s = alloc_->EmptyCache();
      if (!s.ok()) {
        ok = false;
        ++tally_.failed_ops;
        ++tally_.failed_by_kind[3];
        ASSERT_TRUE(FailureIsAccounted(s, injected, 0)) << "op " << i << " " << what;
      }
    }
    if (sim_->counts().failures_injected > injected && ok) ++tally_.recovered_ops;
    ASSERT_TRUE(Consistent()) << "after op " << i << " (" << what << ")";
  }
  const SimBackend::Counts counts = sim_->counts();
  // With p >= 1% over 50k operations, failures must actually have happened:
  // otherwise the test would prove nothing.
  EXPECT_GT(counts.failures_injected, 0);
  EXPECT_GT(tally_.failed_ops, 0);

  // Free what is left while failures continue: a free that fails leaves its
  // block live, and the destructor must take that back too.
  for (const auto& [ptr, block] : std::map<DevicePtr, ModelBlock>(model_.live())) {
    const std::int64_t injected = sim_->counts().failures_injected;
    absl::Status s = alloc_->Free(ptr);
    if (s.ok()) {
      model_.Remove(ptr);
    } else {
      ++tally_.failed_by_kind[4];
      ASSERT_TRUE(FailureIsAccounted(s, injected, 0));
    }
    ASSERT_TRUE(Consistent());
  }
  const std::size_t live_at_destruction = model_.count();
  alloc_.reset();
  EXPECT_TRUE(sim_->NothingOutstanding()) << DescribeOutstanding(sim_->counts());

  const SimBackend::Counts end = sim_->counts();
  std::printf(
      "[ faults  ] p=%.2f %s: %lld ops, %lld faults injected, %lld calls failed "
      "(allocate %lld, free %lld, empty_cache %lld), %lld succeeded despite a fault, "
      "%lld real OOMs, %lld frees failed at teardown, %zu blocks live at destruction\n",
      probability_, growable_ ? "growable" : "classic", static_cast<long long>(tally_.ops),
      static_cast<long long>(end.failures_injected), static_cast<long long>(tally_.failed_ops),
      static_cast<long long>(tally_.failed_by_kind[0]),
      static_cast<long long>(tally_.failed_by_kind[1]),
      static_cast<long long>(tally_.failed_by_kind[3]),
      static_cast<long long>(tally_.recovered_ops), static_cast<long long>(tally_.real_ooms),
      static_cast<long long>(tally_.failed_by_kind[4]), live_at_destruction);
  RecordProperty("faults_injected", static_cast<int>(end.failures_injected));
  RecordProperty("failed_calls", static_cast<int>(tally_.failed_ops));
}

// Once injection stops, a cache that went through faults empties completely:
// no page, segment or event was orphaned along the way.
TEST_P(FaultInjectionTest, CacheEmptiesCompletelyAfterFaultsStop) {
  std::mt19937_64 rng(0xfa17 + static_cast<std::uint64_t>(probability_ * 1000));
  sim_->FailRandomly(probability_, rng());
  std::uniform_real_distribution<double> log_size(0.0, 25.0);
  for (int i = 0; i < 5000; ++i) {
    if (model_.count() < kMaxLive && rng() % 3 != 0) {
      const auto size = static_cast<std::size_t>(std::exp2(log_size(rng)));
      const StreamId stream = rng() % kStreams;
      const std::int64_t before = alloc_->GetStats().allocated_bytes[kStatAll].current;
      absl::StatusOr<DevicePtr> ptr = alloc_->Allocate(size, stream);
      if (ptr.ok()) {
        ModelBlock block{
            static_cast<std::size_t>(alloc_->GetStats().allocated_bytes[kStatAll].current - before),
            size, stream};
        std::string why;
        ASSERT_TRUE(model_.Add(*ptr, block, options_, growable_, &why)) << why;
      }
    } else if (!model_.empty()) {
      const DevicePtr ptr = model_.Nth(rng());
      if (rng() % 2 == 0) (void)alloc_->RecordStream(ptr, rng() % kStreams);
      if (alloc_->Free(ptr).ok()) model_.Remove(ptr);
    }
    ASSERT_TRUE(Consistent()) << "op " << i;
  }
  EXPECT_GT(sim_->counts().failures_injected, 0);
  sim_->FailRandomly(0.0, 0);
  while (!model_.empty()) {
    const DevicePtr ptr = model_.Nth(0);
    ASSERT_TRUE(alloc_->Free(ptr).ok());
    model_.Remove(ptr);
  }
  ASSERT_TRUE(alloc_->EmptyCache().ok());
  ASSERT_TRUE(Consistent());
  const MemoryStats stats = alloc_->GetStats();
  EXPECT_EQ(stats.reserved_bytes[kStatAll].current, 0);
  EXPECT_EQ(stats.segment[kStatAll].current, 0);
  EXPECT_EQ(stats.active[kStatAll].current, 0);
  EXPECT_TRUE(sim_->NothingOutstanding()) << DescribeOutstanding(sim_->counts());
  alloc_.reset();
  EXPECT_TRUE(sim_->NothingOutstanding()) << DescribeOutstanding(sim_->counts());
}

INSTANTIATE_TEST_SUITE_P(Probabilities, FaultInjectionTest,
                         ::testing::Combine(::testing::Values(0.01, 0.05, 0.2), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<double, bool>>& info) {
                           return absl::StrCat("p", static_cast<int>(std::get<0>(info.param) * 100),
                                               "_",
                                               std::get<1>(info.param) ? "growable" : "classic");
                         });

}  // namespace
}  // namespace ccalloc::reliability
