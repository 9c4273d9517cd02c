// driver_costs.h — driver calls counted during a replay, a table of what each
// costs on a real device, and the modelled driver time that follows.
//
// The replay runs on SimBackend, which costs nothing, so the time a policy
// would spend in the driver is modelled: the allocator's calls are counted by
// kind and size (CountingBackend, a DeviceBackend decorator, so neither the
// allocator nor the backends change), and each is priced from a cost table
// that ccalloc-driver-cost measured on a GPU (bench/driver_costs/<gpu>.json),
// or from bench/driver_costs/default.json, which holds only figures with a
// stated source.
//
// The table (schema "ccalloc-driver-costs/1", bench/driver_costs/README.md):
//
//   {"schema": "ccalloc-driver-costs/1", "device": "NVIDIA H200",
//    "driver_version": "12.8", "source": "...", "note": "...",
//    "costs": [
//      {"call": "map", "bytes": 2097152, "us": 9.1, "mean_us": 9.1, "median_us": 8.7,
//       "samples": 200, "source": "..."},
//      {"call": "create+map", "bytes": 2097152, "us": 30, "source": "..."},
//      {"call": "event_record", "us": 1.9, "source": "..."}]}
//
// "us" is what the model multiplies: the mean host time per call (what a run
// pays in total is the mean times the count; the median hides the slow calls).
// An entry whose call joins kinds with '+' is a whole-operation figure: it
// prices one call of each kind at the same size together (a create followed by
// the map of that handle), for figures that were only ever measured together.
// Sized entries of one call are interpolated linearly by the call's bytes,
// held at the smallest entry below it and extrapolated along the last two
// entries above it (never below the largest entry's figure); a call with one
// sized entry costs that at every size (the driver's cost is per handle).
#ifndef CCALLOC_BENCH_DRIVER_COSTS_H_
#define CCALLOC_BENCH_DRIVER_COSTS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/forwarding_backend.h"

namespace ccalloc::replay {

// The device calls an allocator makes, by what they cost. Names are the
// table's "call" values.
enum class DriverCall : int {
  kDeviceAlloc = 0,    // device_alloc: cuMemAlloc (classic segment)
  kDeviceFree,         // device_free: cuMemFree
  kCreate,             // create: cuMemCreate (physical memory)
  kMap,                // map: cuMemMap + cuMemSetAccess, as CudaBackend::Map does it
  kSetAccess,          // set_access: cuMemSetAccess alone (peers)
  kUnmap,              // unmap: cuMemUnmap
  kRelease,            // release: cuMemRelease
  kReserve,            // reserve: cuMemAddressReserve
  kFreeRange,          // free_range: cuMemAddressFree
  kEventRecord,        // event_record: cuEventRecord (on a cached event)
  kEventQuery,         // event_query: cuEventQuery
  kEventSynchronize,   // event_synchronize: cuEventSynchronize (a stream wait)
  kDeviceSynchronize,  // device_synchronize: cuCtxSynchronize
  kStreamSynchronize,  // stream_synchronize: cuStreamSynchronize (probe only)
  kMapRun,             // map_run: a run of handles mapped (cuMemMap each) with one
                       // cuMemSetAccess, priced by the run's bytes
  kUnmapRun,           // unmap_run: one cuMemUnmap over a run of mappings
  kStreamWaitEvent,    // stream_wait_event: cuStreamWaitEvent (a device-side wait)
};
inline constexpr int kNumDriverCalls = 17;

absl::string_view DriverCallName(DriverCall call);
std::optional<DriverCall> DriverCallFromName(absl::string_view name);

// Calls by kind and by bytes (0 for calls without a size).
struct DriverCallCounts {
  std::array<std::map<std::uint64_t, std::int64_t>, kNumDriverCalls> by_bytes;

  void Add(DriverCall call, std::uint64_t bytes, std::int64_t n = 1) {
    by_bytes[static_cast<int>(call)][bytes] += n;
  }
  std::int64_t Total(DriverCall call) const;
  std::int64_t Total() const;
  // Chunks mapped: one per map call, and k per map_run of k pages of
  // `page_size` bytes (a MapChunks stretch counts as one).
  std::int64_t MappedChunks(std::uint64_t page_size) const;
};

// Forwards every call to `inner` and counts the device calls among them,
// failed ones too (a refused call still went to the driver). Thread-safe.
class CountingBackend : public ForwardingBackend {
 public:
  explicit CountingBackend(std::unique_ptr<DeviceBackend> inner)
      : ForwardingBackend(inner.get()), owned_(std::move(inner)) {}

  DriverCallCounts counts() const ABSL_LOCKS_EXCLUDED(mu_);
  // The calls among those made on threads other than the one that built
  // the backend (the allocator's unmap worker): not on the allocating thread.
  DriverCallCounts background_counts() const ABSL_LOCKS_EXCLUDED(mu_);

  // Counted. The rest is forwarded uncounted: a capture's graph walks (the
  // replay runs no capture, and the table prices none of them), sharing (a
  // replay never shares), host memory and copies, and DestroyEvent, which is
  // not a driver call on CUDA (CudaBackend caches the event for reuse).
  absl::StatusOr<DevicePtr> Allocate(std::size_t bytes) override;
  absl::Status Deallocate(DevicePtr ptr, std::size_t bytes) override;
  absl::StatusOr<EventHandle> RecordEvent(StreamId stream) override;
  absl::StatusOr<bool> QueryEvent(EventHandle event) override;
  absl::Status SynchronizeEvent(EventHandle event) override;
  absl::Status StreamWaitEvent(StreamId stream, EventHandle event) override;
  absl::Status SynchronizeDevice() override;
  absl::StatusOr<DevicePtr> ReserveAddressRange(std::size_t bytes) override;
  absl::Status ReleaseAddressRange(DevicePtr base, std::size_t bytes) override;
  absl::StatusOr<PhysicalHandle> CreatePhysical(std::size_t bytes) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ReleasePhysical(PhysicalHandle handle) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) override;
  absl::Status Unmap(DevicePtr va, std::size_t bytes) override;
  // One call, priced by the run's bytes (the driver's batch).
  absl::Status UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                        std::size_t* unmapped) override;
  // A stretch of k chunks is priced as a map_run of k page-sized handles:
  // the access call's cost is per handle, whatever its size (one chunk: a map).
  absl::Status MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                         absl::Span<const int> peers) override;
  absl::Status SetAccess(DevicePtr va, std::size_t bytes, absl::Span<const int> devices) override;

 private:
  void Count(DriverCall call, std::uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<DeviceBackend> owned_;  // the one ForwardingBackend calls
  mutable absl::Mutex mu_;
  DriverCallCounts counts_ ABSL_GUARDED_BY(mu_);
  DriverCallCounts background_ ABSL_GUARDED_BY(mu_);
  const std::thread::id owner_ = std::this_thread::get_id();
  // The size of each live physical handle, so that its release is priced by it.
  absl::flat_hash_map<PhysicalHandle, std::size_t> physical_bytes_ ABSL_GUARDED_BY(mu_);
};

// One row of the table.
struct DriverCostEntry {
  std::vector<DriverCall> calls;  // one kind, or several for a whole-operation figure
  std::uint64_t bytes = 0;        // 0: the figure holds for any size
  double us = 0;                  // modelled cost per call (or per operation)
  std::optional<double> median_us;
  std::optional<double> mean_us;
  std::optional<double> min_us;
  std::optional<double> max_us;
  std::int64_t samples = 0;  // 0: not recorded
  std::string source;
  std::string note;
};

struct DriverCostTable {
  std::string device;          // the GPU, or what the figures describe
  std::string driver_version;  // may be empty
  std::string source;
  std::string note;
  std::vector<DriverCostEntry> entries;
  std::string path;  // where it was read from (not part of the JSON)
};

inline constexpr absl::string_view kDriverCostSchema = "ccalloc-driver-costs/1";

// Parses a table. InvalidArgument naming `name` and what is wrong (where in the
// text for a JSON syntax error) for anything else: a wrong schema, an unknown
// call or key, a negative or missing figure, a duplicate (call, bytes), an entry
// without a source.
absl::StatusOr<DriverCostTable> ParseDriverCostTable(absl::string_view json,
                                                     absl::string_view name);
// Reads and parses a file (NotFound when it cannot be read).
absl::StatusOr<DriverCostTable> LoadDriverCostTable(const std::string& path);
// The table as JSON, in the layout of the committed files (one entry a line);
// ParseDriverCostTable reads it back to an equal table.
std::string DriverCostTableToJson(const DriverCostTable& table);

// The driver time a set of calls costs under a table.
struct DriverTimeModel {
  double us = 0;                  // Σ priced calls × cost
  std::int64_t priced_calls = 0;  // calls covered by an entry
  std::array<std::int64_t, kNumDriverCalls> unpriced{};  // calls no entry covers, by kind
  std::int64_t unpriced_total() const;
  // "create 12, unmap 3" or "" when every call was priced.
  std::string UnpricedText() const;
};
// Whole-operation entries are matched first (as many calls of their kinds at
// equal bytes as there are of the rarest kind), in the table's order; every
// remaining call is priced by its own kind's entries, or counted unpriced.
DriverTimeModel ModelDriverTime(const DriverCallCounts& counts, const DriverCostTable& table);

}  // namespace ccalloc::replay

#endif  // CCALLOC_BENCH_DRIVER_COSTS_H_
