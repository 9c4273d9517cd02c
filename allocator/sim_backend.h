// sim_backend.h — a host-only device for tests, replay and benchmarks.
//
// Addresses are fake (never dereferenced), aligned like the driver's and never
// reused, so two live blocks can only overlap through an allocator bug. The
// simulated device has a capacity shared by plain allocations and physical
// pages; tests inject failures (the Nth call, anything above N bytes, a random
// fraction) and decide when events complete. Every byte handed out is counted
// so a test can prove that nothing leaked when the allocator is destroyed.
//
// A simulated stream capture (BeginCapture) refuses what a real CUDA graph
// capture in global mode refuses: synchronizing, querying events, events
// recorded into the capturing stream, and freeing, unmapping or releasing
// memory (a captured graph would replay into it). Each refusal returns
// FailedPrecondition and marks the capture invalidated, as the driver does.
// Allocating and mapping new memory stays allowed: CudaBackend runs those in
// relaxed capture mode.
#ifndef CCALLOC_ALLOCATOR_SIM_BACKEND_H_
#define CCALLOC_ALLOCATOR_SIM_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backend.h"

namespace ccalloc {

// Which backend call a failure is injected into.
enum class SimOp : int { kAllocate = 0, kCreatePhysical, kMap, kRecordEvent, kQueryEvent, kCount };

class SimBackend : public DeviceBackend {
 public:
  struct Config {
    std::size_t capacity = std::size_t{80} << 30;
    std::size_t page_size = std::size_t{2} << 20;
    bool virtual_memory = true;
    // Events complete as soon as they are recorded (replay and benchmarks
    // model a GPU that keeps up); tests that drive stream semantics turn it off.
    bool auto_complete_events = false;
    int device = 0;
  };

  SimBackend() : SimBackend(Config{}) {}
  explicit SimBackend(Config config);
  ~SimBackend() override;

  int device() const override { return config_.device; }
  const char* name() const override { return "sim"; }

  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo() override ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<bool> QueryEvent(EventHandle event) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SynchronizeEvent(EventHandle event) override ABSL_LOCKS_EXCLUDED(mu_);
  void DestroyEvent(EventHandle event) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SynchronizeDevice() override ABSL_LOCKS_EXCLUDED(mu_);

  bool SupportsVirtualMemory() const override { return config_.virtual_memory; }
  std::size_t PageSize() const override { return config_.page_size; }
  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ReleasePhysical(PhysicalHandle handle) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Unmap(DevicePtr va, std::size_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);

  // --- Test controls -------------------------------------------------------
  // Fail the nth call (1-based, counted from now) of `op`; 0 clears it.
  void FailNth(SimOp op, std::int64_t n) ABSL_LOCKS_EXCLUDED(mu_);
  // Fail every Allocate / CreatePhysical above `bytes` (0 clears it).
  void FailAbove(std::size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Fail each call of any SimOp with this probability (seeded; 0 clears it).
  void FailRandomly(double probability, std::uint64_t seed) ABSL_LOCKS_EXCLUDED(mu_);
  void SetCapacity(std::size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Completes every event recorded so far on `stream` / on all streams.
  void CompleteStream(StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  void CompleteAll() ABSL_LOCKS_EXCLUDED(mu_);

  // --- Simulated stream capture ----------------------------------------------
  // Starts capturing `stream`; FailedPrecondition if it is already captured.
  // The invalidation mark is cleared when the first capture begins.
  absl::Status BeginCapture(StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  // FailedPrecondition if `stream` is not being captured.
  absl::Status EndCapture(StreamId stream) ABSL_LOCKS_EXCLUDED(mu_);
  bool capturing() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a call was refused since the first capture began; the first
  // refused call's message is kept for test output.
  bool capture_invalidated() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string capture_violation() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Accounting ----------------------------------------------------------
  struct Counts {
    std::size_t bytes_in_use = 0;      // plain allocations + physical pages
    std::int64_t live_allocations = 0;
    std::int64_t live_physical = 0;
    std::int64_t live_mappings = 0;
    std::int64_t live_ranges = 0;
    std::int64_t live_events = 0;
    std::int64_t allocate_calls = 0;
    std::int64_t deallocate_calls = 0;
    std::int64_t map_calls = 0;
    std::int64_t unmap_calls = 0;
    std::int64_t failures_injected = 0;
    std::int64_t synchronize_calls = 0;
  };
  Counts counts() const ABSL_LOCKS_EXCLUDED(mu_);
  // True when everything taken has been given back (events included).
  bool NothingOutstanding() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct EventState {
    StreamId stream;
    bool complete;
  };
  struct Mapping {
    std::size_t bytes;
    PhysicalHandle handle;
  };

  bool ShouldFail(SimOp op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FailedPrecondition (and the capture invalidated) when a capture is
  // underway; OK otherwise.
  absl::Status RefuseDuringCapture(const char* what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Capacity may be lowered below what is in use; then nothing is free.
  std::size_t FreeBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return counts_.bytes_in_use >= capacity_ ? 0 : capacity_ - counts_.bytes_in_use;
  }
  DevicePtr NextAddress(std::size_t bytes, std::size_t alignment)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Config config_;
  mutable absl::Mutex mu_;
  std::size_t capacity_ ABSL_GUARDED_BY(mu_);
  DevicePtr next_address_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DevicePtr, std::size_t> allocations_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DevicePtr, std::size_t> ranges_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PhysicalHandle, std::size_t> physical_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PhysicalHandle, int> physical_map_count_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DevicePtr, Mapping> mappings_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<EventHandle, EventState> events_ ABSL_GUARDED_BY(mu_);
  EventHandle next_event_ ABSL_GUARDED_BY(mu_) = 1;
  PhysicalHandle next_physical_ ABSL_GUARDED_BY(mu_) = 1;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::int64_t fail_nth_[static_cast<int>(SimOp::kCount)] ABSL_GUARDED_BY(mu_) = {};
  std::size_t fail_above_ ABSL_GUARDED_BY(mu_) = 0;
  double fail_probability_ ABSL_GUARDED_BY(mu_) = 0.0;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<StreamId> captures_ ABSL_GUARDED_BY(mu_);
  std::string capture_violation_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_SIM_BACKEND_H_
