// allocator.h — C++ API of ccalloc: one caching allocator per device.
//
//   auto alloc = ccalloc::Allocator::Create(/*device=*/0);   // CCALLOC_CONF
//   absl::StatusOr<void*> p = (*alloc)->Allocate(1 << 20, stream);
//   (*alloc)->Free(*p);
//
// Errors are absl::Status: ResourceExhausted for out of memory (the message
// carries the report), InvalidArgument for bad input, Unavailable when there is
// no device. Every method is thread-safe. A stream must stay alive while the
// allocator caches memory for it (events are recorded on it at frees, and it
// may be waited for): destroy it only after its blocks are freed and
// EmptyCache has returned, or after the allocator is gone (ccalloc.h).
#ifndef CCALLOC_ALLOCATOR_H_
#define CCALLOC_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccalloc {

class DeviceAllocator;
class DeviceBackend;

class Allocator {
 public:
  // An allocator on CUDA device `device`. `conf` uses PYTORCH_CUDA_ALLOC_CONF
  // syntax; nullopt-like empty view with `from_env` reads CCALLOC_CONF.
  static absl::StatusOr<std::unique_ptr<Allocator>> Create(int device,
                                                           absl::string_view conf = {},
                                                           bool from_env = true);
  // An allocator on a simulated device of `capacity` bytes (fake addresses).
  static absl::StatusOr<std::unique_ptr<Allocator>> CreateSimulated(
      std::size_t capacity, absl::string_view conf = {}, bool from_env = false);
  ~Allocator();

  absl::StatusOr<void*> Allocate(std::size_t size, void* stream = nullptr);
  absl::Status Free(void* ptr);
  absl::Status RecordStream(void* ptr, void* stream);
  absl::Status EmptyCache();
  absl::Status SetMemoryLimit(std::size_t bytes);
  absl::Status SetMemoryFraction(double fraction);

  // CUDA graphs: allocations on `stream` go to private pool `pool` (nonzero;
  // created, or shared with a +1 use count) until EndAllocateToPool. Its
  // memory is kept for the graph until ReleasePool drops the last use.
  absl::Status BeginAllocateToPool(std::uint64_t pool, void* stream);
  absl::Status EndAllocateToPool(std::uint64_t pool);
  absl::Status ReleasePool(std::uint64_t pool);

  // Counters under torch.cuda.memory_stats() keys.
  std::vector<std::pair<std::string, std::int64_t>> Stats() const;
  absl::StatusOr<std::int64_t> Stat(absl::string_view key) const;
  void ResetPeakStats();
  std::string StatsJson() const;
  std::string SnapshotJson() const;
  std::string Summary() const;

  // --- Tags: what an allocation was made for ------------------------------
  // A tag is a nonzero id for a name ("forward", "encoder.layers.2", ...);
  // 0 is untagged. The calling thread's current tag is copied onto every
  // block it allocates, from any allocator; setting it takes no lock, so it
  // can change at every phase or module boundary. Each allocator counts the
  // bytes of live blocks per tag; a free counts against the block's own tag
  // whichever thread frees it. Names are interned for the process's life.
  static std::uint32_t InternTag(absl::string_view name);
  static std::string TagName(std::uint32_t tag);
  // Sets the calling thread's current tag; returns the previous one.
  static std::uint32_t SetCurrentTag(std::uint32_t tag);
  static std::uint32_t CurrentTag();
  struct TagStat {
    std::uint32_t tag = 0;
    std::string name;
    std::int64_t current_bytes = 0;  // bytes of live blocks now
    std::int64_t peak_bytes = 0;     // since creation or ResetPeakStats
    std::int64_t blocks = 0;         // live blocks now
  };
  // Every tag this allocator has counted, by id; current bytes add up to
  // "allocated_bytes.all.current".
  std::vector<TagStat> TagStats() const;
  std::string TagStatsJson() const;

  // --- Sleep and wake: regions -------------------------------------------
  // Allocations made while a region (a nonzero number) is the calling
  // thread's current region live in segments of that region only. Pause
  // waits for the device and gives back all the memory the region holds,
  // live blocks' too, keeping every address. With `backup` the live blocks'
  // bytes go to page-locked host memory first (kept for the next pause;
  // EmptyCache frees it) and Resume copies them back; without, they are
  // lost. A failed backup changes nothing. Resume takes memory again under
  // the live blocks at the same addresses, or fails leaving the region
  // paused (backup included). Needs growable segments. Both return the bytes
  // of device memory given back or taken.
  struct PauseOptions {
    bool backup = false;
  };
  static std::uint32_t SetCurrentRegion(std::uint32_t region);  // returns the previous
  static std::uint32_t CurrentRegion();
  absl::StatusOr<std::size_t> Pause(std::uint32_t region, PauseOptions options);
  absl::StatusOr<std::size_t> Pause(std::uint32_t region) { return Pause(region, PauseOptions()); }
  absl::StatusOr<std::size_t> Resume(std::uint32_t region);
  // Pins the host buffer a backup of `region` needs now (its live bytes), so
  // the first Pause with backup is as fast as the next ones: call it once
  // after building the model, outside the timed path. Kept until the
  // allocator goes (EmptyCache keeps it). Returns the buffer's bytes.
  absl::StatusOr<std::size_t> ReserveBackup(std::uint32_t region);

  // The engine, for tools that need more than this API (internal header).
  DeviceAllocator& device_allocator() { return *impl_; }

 private:
  explicit Allocator(std::unique_ptr<DeviceAllocator> impl);
  // Options from `conf` (or CCALLOC_CONF when it is empty and `from_env`)
  // over `backend`; a bad configuration is reported before a bad backend.
  static absl::StatusOr<std::unique_ptr<Allocator>> Build(
      absl::StatusOr<std::unique_ptr<DeviceBackend>> backend, absl::string_view conf,
      bool from_env);
  std::unique_ptr<DeviceAllocator> impl_;
};

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_H_
