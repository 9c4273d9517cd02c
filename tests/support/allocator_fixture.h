// allocator_fixture.h — one behaviour suite, many allocator configurations.
//
// RMM writes each allocator behaviour once as a typed test and instantiates it
// per memory resource in a short file; ccalloc does the same per backend and
// segment policy. An AllocatorEnv stands for one configuration (SimBackend or
// CudaBackend, classic or growable segments) and gives the suite what differs
// between them: how to make an allocator, which streams to use, how to let the
// work on a stream finish, and whether failures can be injected.
//
// Every backend an env hands to an allocator is wrapped in a TrackingBackend
// that counts what is outstanding (device allocations, physical pages,
// mappings, address ranges, events). The real backend lives in the env, so it
// outlives the allocator: a test can destroy the allocator and then prove
// that nothing leaked, on the simulated device and on a real one alike.
//
// The second half of this header is the seeded random op stream and the
// reference model of live blocks shared by the random test and the threaded
// stress test.
#ifndef CCALLOC_TESTS_SUPPORT_ALLOCATOR_FIXTURE_H_
#define CCALLOC_TESTS_SUPPORT_ALLOCATOR_FIXTURE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/forwarding_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/size_policy.h"
#include "gtest/gtest.h"
#include "stats/counters.h"
#include "stats/snapshot.h"

namespace ccalloc::test {

inline constexpr std::size_t kKiB = std::size_t{1} << 10;

// ---------------------------------------------------------------------------
// TrackingBackend
// ---------------------------------------------------------------------------

// What a backend has handed out and not yet taken back, as seen through a
// TrackingBackend. Shared by every TrackingBackend of one env.
struct Outstanding {
  std::atomic<std::int64_t> bytes{0};  // plain allocations + physical memory
  std::atomic<std::int64_t> allocations{0};
  std::atomic<std::int64_t> physical{0};
  std::atomic<std::int64_t> mappings{0};
  std::atomic<std::int64_t> ranges{0};
  std::atomic<std::int64_t> events{0};

  bool Nothing() const {
    return bytes == 0 && allocations == 0 && physical == 0 && mappings == 0 && ranges == 0 &&
           events == 0;
  }
  std::string ToString() const;
};

// Forwards every call to a backend it does not own and counts what is
// outstanding. Physical sizes are remembered per handle so that releases are
// counted in bytes.
class TrackingBackend : public ForwardingBackend {
 public:
  TrackingBackend(DeviceBackend* real, Outstanding* outstanding)
      : ForwardingBackend(real), out_(outstanding) {}

  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override;
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override;
  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override;
  void DestroyEvent(EventHandle event) override;
  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override;
  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override;
  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override;
  absl::Status ReleasePhysical(PhysicalHandle handle) override;
  absl::Status Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) override;
  absl::Status Unmap(DevicePtr va, std::size_t bytes) override;
  // Forwarded whole, so that CudaBackend's one-access stretch is what the
  // GPU suites run; each chunk is a mapping.
  absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                         absl::Span<const int> peers) override;
  // Mapping by mapping (DeviceBackend's default), each through Unmap above.
  absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                        std::size_t* unmapped) override {
    return DeviceBackend::UnmapRun(va, bytes, bytes_each, unmapped);
  }
  // An imported handle is physical memory to release like any other, but
  // its bytes are the exporter's.
  absl::StatusOr<PhysicalHandle> ImportPhysical(SharedPhysical from) override;

 private:
  Outstanding* const out_;
  // Called only with the allocator's lock held, but the counters are read
  // from other threads: the sizes map has its own small lock.
  absl::Mutex mu_;
  std::map<PhysicalHandle, std::size_t> physical_sizes_ ABSL_GUARDED_BY(mu_);
};

// ---------------------------------------------------------------------------
// AllocatorEnv
// ---------------------------------------------------------------------------

enum class BackendKind { kSim, kCuda };

class AllocatorEnv {
 public:
  // Large enough for every behaviour test; tests that need memory pressure
  // pass their own capacity.
  static constexpr std::size_t kDefaultCapacity = std::size_t{80} << 30;

  AllocatorEnv(BackendKind kind, bool growable) : kind_(kind), growable_(growable) {}
  ~AllocatorEnv();
  AllocatorEnv(const AllocatorEnv&) = delete;
  AllocatorEnv& operator=(const AllocatorEnv&) = delete;

  // False (with the reason) where the configuration cannot run here: CUDA
  // without a device.
  bool Available(std::string* why) const;
  std::string Name() const;

  BackendKind kind() const { return kind_; }
  bool is_sim() const { return kind_ == BackendKind::kSim; }
  bool growable() const { return growable_; }

  // PyTorch's defaults with this env's segment kind.
  Options BaseOptions() const;

  // An allocator over a fresh backend. `options.expandable_segments` is set to
  // the env's segment kind. `capacity` is the simulated device's size; a real
  // device has the size it has. Events on the simulated device complete only
  // when CompleteStream (or a synchronize) says so.
  absl::StatusOr<std::unique_ptr<DeviceAllocator>> Make(Options options,
                                                        std::size_t capacity = kDefaultCapacity);

  // The simulated device behind the last Make(); null on CUDA. Tests that
  // inject failures or set a capacity skip themselves where it is null.
  SimBackend* sim() const { return last_sim_; }
  // The real backend behind the last Make() (not the tracking wrapper).
  DeviceBackend* backend() const { return last_backend_; }

  // Streams the suite may allocate on. The simulated device takes any
  // integer; on CUDA they are the legacy default stream (0) and the per-thread
  // default stream (CU_STREAM_PER_THREAD, 0x2), which need no creation.
  int num_streams() const { return is_sim() ? 3 : 2; }
  StreamId stream(int i) const;

  // Lets the work queued on `stream` so far finish: the simulated device
  // completes its events; on CUDA the device is synchronized.
  void CompleteStream(StreamId stream);
  void CompleteAll();
  // Whether an event can stay incomplete until CompleteStream. On CUDA an
  // event with no work before it completes at once, so "not reused before
  // the stream finishes" can only be observed on the simulated device.
  bool CanHoldEvents() const { return is_sim(); }

  // Device bytes held through this env's backends right now.
  std::int64_t BytesInUse() const { return outstanding_.bytes; }
  const Outstanding& outstanding() const { return outstanding_; }
  // True when every backend made by this env got everything back, by the
  // tracker's count and (on the simulated device) by SimBackend's own.
  ::testing::AssertionResult NothingOutstanding() const;

 private:
  const BackendKind kind_;
  const bool growable_;
  Outstanding outstanding_;
  std::vector<std::unique_ptr<DeviceBackend>> backends_;
  DeviceBackend* last_backend_ = nullptr;
  SimBackend* last_sim_ = nullptr;
};

// Type parameters of the typed suites: one per configuration.
struct SimClassic {
  static constexpr BackendKind kKind = BackendKind::kSim;
  static constexpr bool kGrowable = false;
  static constexpr const char* kName = "SimClassic";
};
struct SimGrowable {
  static constexpr BackendKind kKind = BackendKind::kSim;
  static constexpr bool kGrowable = true;
  static constexpr const char* kName = "SimGrowable";
};
struct CudaClassic {
  static constexpr BackendKind kKind = BackendKind::kCuda;
  static constexpr bool kGrowable = false;
  static constexpr const char* kName = "CudaClassic";
};
struct CudaGrowable {
  static constexpr BackendKind kKind = BackendKind::kCuda;
  static constexpr bool kGrowable = true;
  static constexpr const char* kName = "CudaGrowable";
};

// Names instantiations after the configuration ("SimClassic" rather than "0").
struct EnvNames {
  template <typename Config>
  static std::string GetName(int) {
    return Config::kName;
  }
};

// A fixture over one configuration: makes `alloc_` on demand, skips where the
// configuration is unavailable, and at the end of every test checks the
// invariants, destroys the allocator and proves nothing leaked.
template <typename Config>
class AllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!env_.Available(&why)) GTEST_SKIP() << why;
  }
  void TearDown() override {
    if (alloc_ != nullptr) {
      std::string why;
      EXPECT_TRUE(alloc_->Validate(&why)) << why;
      alloc_.reset();
    }
    EXPECT_TRUE(env_.NothingOutstanding());
  }

  DeviceAllocator& Make(const Options& options,
                        std::size_t capacity = AllocatorEnv::kDefaultCapacity) {
    alloc_.reset();
    absl::StatusOr<std::unique_ptr<DeviceAllocator>> made = env_.Make(options, capacity);
    if (!made.ok()) {
      // Available() vouched for the configuration, so this is a broken
      // environment; no test can go on without an allocator.
      std::fprintf(stderr, "%s: cannot make an allocator: %s\n", env_.Name().c_str(),
                   made.status().ToString().c_str());
      std::abort();
    }
    alloc_ = std::move(*made);
    return *alloc_;
  }
  DeviceAllocator& Make() { return Make(env_.BaseOptions()); }

  AllocatorEnv env_{Config::kKind, Config::kGrowable};
  std::unique_ptr<DeviceAllocator> alloc_;
};

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

constexpr std::size_t RoundUpTo(std::size_t size, std::size_t multiple) {
  return (size + multiple - 1) / multiple * multiple;
}

// The segment of a snapshot that holds `ptr`; null if none.
const SegmentInfo* SegmentOf(const Snapshot& snapshot, DevicePtr ptr);
// The block of a snapshot that starts at `ptr`; null if none.
const BlockInfo* BlockAt(const Snapshot& snapshot, DevicePtr ptr);

// Validate() as an assertion, with the allocator's reason on failure.
::testing::AssertionResult IsValid(const DeviceAllocator& alloc);

// torch.cuda.Stream.wait_stream on the simulated device: an event recorded
// on `from`, waited for by `waiter`, destroyed (inside a capture this joins
// `waiter` to it).
::testing::AssertionResult WaitStream(SimBackend& sim, StreamId waiter, StreamId from);

// Everything a failed call must leave as it was, in comparable form.
std::string StateFingerprint(const DeviceAllocator& alloc);

// ---------------------------------------------------------------------------
// Random op stream and reference model
// ---------------------------------------------------------------------------

// A live block as the test sees it.
struct LiveBlock {
  std::size_t size = 0;       // the block's size (what allocated_bytes counts)
  std::size_t rounded = 0;    // the request rounded by the 512-byte rule
  std::size_t requested = 0;  // what was asked for
  StreamId stream = 0;
  PoolKind pool = PoolKind::kLarge;
};

// What the allocator should report about live blocks, maintained by the test
// alone: per pool, the count, the block bytes and the requested bytes; and
// the live blocks by address so that an overlap is caught the moment it
// appears.
class ReferenceModel {
 public:
  // Adds a block; fails if it overlaps a live one or its address is taken.
  ::testing::AssertionResult Add(DevicePtr ptr, const LiveBlock& block);
  LiveBlock Remove(DevicePtr ptr);
  bool empty() const { return live_.empty(); }
  std::size_t count() const { return live_.size(); }
  const std::map<DevicePtr, LiveBlock>& live() const { return live_; }
  // A uniformly chosen live block (the model must not be empty).
  DevicePtr Pick(std::mt19937_64& rng) const;

  // The counters (allocation, allocated_bytes, requested_bytes; current,
  // each pool) agree with the model.
  ::testing::AssertionResult MatchesCounters(const MemoryStats& stats) const;
  // Every live block appears in the snapshot as an allocated block of the
  // size and requested size the model has, and no other allocated block
  // exists.
  ::testing::AssertionResult MatchesSnapshot(const Snapshot& snapshot) const;

 private:
  std::map<DevicePtr, LiveBlock> live_;
  std::int64_t count_[3] = {};
  std::int64_t bytes_[3] = {};
  std::int64_t requested_[3] = {};
};

// Requests log-uniformly distributed between `lo` and `hi` bytes (any value,
// not only multiples of 512), so that every order of magnitude is exercised
// as often as every other.
class LogUniformSizes {
 public:
  LogUniformSizes(std::size_t lo, std::size_t hi);
  std::size_t operator()(std::mt19937_64& rng);

 private:
  std::uniform_real_distribution<double> log_size_;
  std::size_t lo_, hi_;
};

struct RandomOpsConfig {
  std::uint64_t seed = 1;
  std::int64_t operations = 100000;
  std::size_t min_size = 512;
  std::size_t max_size = std::size_t{64} << 20;
  // Allocation is likelier while fewer blocks are live, freeing while more
  // are: the live set hovers around half of this.
  std::size_t max_live = 96;
  // Per mille probabilities of the occasional operations.
  int record_stream_per_mille = 60;
  int complete_stream_per_mille = 40;
  int empty_cache_per_mille = 2;
  // Streams to allocate on, and streams to record blocks on and complete
  // (empty: the allocation streams).
  std::vector<StreamId> streams;
  std::vector<StreamId> other_streams;
  // Single-threaded runs compare the global counters with the model after
  // every step; threaded runs own only part of the counters and cannot.
  bool check_counters = true;
  // Validate() every `validate_every` steps (0: never) and compare with a
  // snapshot every `snapshot_every` steps (0: never).
  std::int64_t validate_every = 1000;
  std::int64_t snapshot_every = 1000;
};

// What a random run did, for the test to report and to check its mix.
struct RandomOpsResult {
  std::int64_t allocations = 0;
  std::int64_t frees = 0;
  std::int64_t record_streams = 0;
  std::int64_t completes = 0;
  std::int64_t empty_caches = 0;
};

// Drives `alloc` with the seeded op stream, keeping `model` up to date and
// checking it after every step. `env` completes streams. Blocks still live at
// the end stay in `model`. The first failure stops the run.
::testing::AssertionResult RunRandomOps(DeviceAllocator& alloc, AllocatorEnv& env,
                                        const RandomOpsConfig& config, ReferenceModel& model,
                                        RandomOpsResult* result = nullptr);

}  // namespace ccalloc::test

#endif  // CCALLOC_TESTS_SUPPORT_ALLOCATOR_FIXTURE_H_
