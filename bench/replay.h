// replay.h — replays allocation traces through allocator policies and reports
// what each policy would have held.
//
// A trace (stats/trace.h) says which blocks a program asked for and when it
// gave them back, but nothing about addresses. Replaying it through a
// DeviceAllocator on SimBackend therefore measures a policy's fragmentation on
// any machine, and replaying it through CudaBackend measures the same policy
// against a real driver. The library holds everything the ccalloc-replay tool
// does short of parsing its command line, so tests can call it directly.
//
// Host time is measured apart from the statistics: a measured pass collects
// the counters (and the timeline) after every event, then `timing_repetitions`
// further passes run the allocator calls alone, each on a fresh allocator,
// timed as a whole with std::chrono::steady_clock. ns_per_op is the median
// over those passes of (pass time / events): timing each call on its own would
// add the clock's own ~20 ns to a call that itself takes about 100 ns.
#ifndef CCALLOC_BENCH_REPLAY_H_
#define CCALLOC_BENCH_REPLAY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "allocator/cache/options.h"
#include "bench/driver_costs.h"
#include "stats/trace.h"

namespace ccalloc::replay {

// A named set of options to replay with.
struct Policy {
  std::string name;
  Options options;
  std::string conf;  // the CCALLOC_CONF string of a custom policy; empty for a preset
};

// "pytorch-native" (PyTorch's native caching allocator: classic segments) and
// "ccalloc" (ccalloc's defaults with growable virtual-memory segments).
std::vector<std::string> PresetNames();
// InvalidArgument naming the presets for an unknown name.
absl::StatusOr<Policy> PresetPolicy(absl::string_view name);
// `conf` in CCALLOC_CONF syntax, on top of ccalloc's defaults (as the library
// reads CCALLOC_CONF). InvalidArgument for a bad string.
absl::StatusOr<Policy> CustomPolicy(absl::string_view conf, std::string name = "custom");

// A trace file (v1 text, gzipped or not, or RMM CSV), or "scenario:<name>" /
// "scenario:<name>:<seed>" for a generated one (bench/scenarios.h).
absl::StatusOr<Trace> LoadTrace(const std::string& spec);

// The capacity of the simulated card when none is given: an 80 GiB H100, the
// card the bundled traces were recorded on.
inline constexpr std::size_t kDefaultSimCapacity = std::size_t{80} << 30;

struct ReplayConfig {
  // SimBackend: the card's memory (0: kDefaultSimCapacity). On a GPU: the
  // allocator's memory limit (0: none).
  std::size_t capacity = 0;
  // >= 0 replays on that CUDA device through CreateCudaBackend. Every trace
  // stream is then mapped to the legacy default stream 0: trace streams are
  // opaque numbers, not streams that exist in this process.
  int device = -1;
  // Timed passes for ns_per_op (0: not timed).
  int timing_repetitions = 5;
  // Keep allocated/reserved after every event (ReplayResult::timeline_*).
  bool record_timeline = false;
  // Progress on stderr (the caller checks that stderr is a terminal).
  bool progress = false;
  // Prices the driver calls of the measured pass (bench/driver_costs.h).
  // Null: the calls are counted, no driver time is modelled.
  std::shared_ptr<const DriverCostTable> driver_costs;
  // Training steps the trace covers, for the per-step figures. 0: the count
  // published for a bundled trace (PublishedSteps), else no per-step figure.
  int steps = 0;
  // SimBackend: the GPU runs this many trace events behind the host (0: it
  // keeps up, every free is finished at the next call). With a lag, a trim
  // that waits for queued work is counted with the events it waited for
  // (ReplayResult::waited_events).
  std::uint64_t gpu_lag = 0;
  // >= 0: ReplayResult::layout describes the cache just before this trace
  // event (its free blocks holding memory) and what the event cost: how a
  // placement that moves memory met the memory it had.
  std::int64_t layout_at = -1;
  // Keep, for every event that made driver work, what it made and where its
  // block went (ReplayResult::event_costs): which requests move memory.
  bool record_events = false;
};

// One event that made driver work (ReplayConfig::record_events): the
// counters' change over the event and the memory after it.
struct EventCost {
  std::int64_t event = 0;       // 0-based index in the trace
  char op = 'a';                // 'a' allocate, 'f' free, 'p' pause, 'r' resume
  std::uint64_t id = 0;
  std::uint64_t bytes = 0;
  std::uint64_t stream = 0;
  std::uint64_t address = 0;    // where the block went (allocations; 0 otherwise)
  std::int64_t maps = 0;        // chunks mapped
  std::int64_t unmaps = 0;      // chunks unmapped (the unmap worker's at the event that reaps them)
  std::int64_t foreground_unmaps = 0;  // ... of them by the replaying thread
  std::int64_t returns = 0;     // moved memory taken back without a call
  std::int64_t waits = 0;       // waits for queued work
  std::int64_t device_allocs = 0;
  std::int64_t device_frees = 0;
  std::int64_t allocated = 0;   // bytes, after the event
  std::int64_t reserved = 0;
};

// The training steps of a bundled trace as traces/README.md gives them (the
// trace formats carry no step markers); 0 for any other trace.
int PublishedSteps(absl::string_view trace_name);

// The table ccalloc-replay uses without --driver-costs: the source tree's
// bench/driver_costs/default.json.
std::string DefaultDriverCostsPath();

struct ReplayResult {
  std::string trace;
  std::string policy;
  std::string options;               // Options::ToString() of the policy
  std::string conf;                  // Policy::conf (not in the JSON: options says it all)
  std::string backend;               // "sim" or "cuda:<device>"
  std::uint64_t capacity_bytes = 0;  // 0: no limit (GPU without --capacity)
  std::uint64_t events = 0;
  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;

  // Rounded block bytes, as torch.cuda.memory_stats() counts them.
  std::int64_t peak_allocated_bytes = 0;
  std::int64_t peak_reserved_bytes = 0;
  std::int64_t end_allocated_bytes = 0;
  std::int64_t end_reserved_bytes = 0;
  // Allocated blocks and freed ones the policy still counted as awaiting
  // another stream's work (record_stream), at their peak: memory the
  // stream contract kept it from reusing. A policy that asks its events at
  // every allocation, as ccalloc does, counts them no longer than their
  // work runs, so for it this is near a floor for any policy that keeps
  // the contract. Equal to the allocated peak when no block is used across
  // streams.
  std::int64_t peak_active_bytes = 0;
  double ratio = 0;              // peak reserved / peak allocated
  double run_fragmentation = 0;  // 1 - peak allocated / peak reserved
  // The event after which reserved first reached its peak, and the
  // fragmentation of the cache, (free - largest free block) / free, then and
  // after the last event.
  std::int64_t peak_reserved_event = -1;
  double fragmentation_at_peak = 0;
  double fragmentation_at_end = 0;
  // The event after which allocated first reached its peak, and the memory
  // then under the pages that live (or pending) blocks touch: a growable
  // segment's pages overlapping them, a classic segment whole. No policy of
  // giving pages back can hold less with the blocks where this one put
  // them, so page_floor_ratio (that over the allocated peak) is the floor
  // of `ratio` for this placement: the rest of the way to 1.000 is where
  // blocks are placed (sub-page pieces), not what is unmapped.
  std::int64_t peak_allocated_event = -1;
  std::int64_t page_floor_bytes = 0;
  double page_floor_ratio = 0;
  // The same when reserved first peaked (peak_reserved_event): what no
  // policy could have given back at the moment that sets `ratio`.
  std::int64_t page_floor_at_reserved_peak_bytes = 0;
  // The same two counts by chunks instead of pages: every chunk (one
  // physical handle, given back only whole) that a live block overlaps.
  // Between the page floor and this is what chunk size pins.
  std::int64_t chunk_floor_bytes = 0;
  std::int64_t chunk_floor_at_reserved_peak_bytes = 0;

  std::int64_t device_allocs = 0;  // num_device_alloc (segments or pages)
  std::int64_t device_frees = 0;
  std::int64_t maps = 0;  // pages mapped into growable segments
  std::int64_t unmaps = 0;
  // Moved memory taken back to pages that kept its old mapping: no calls.
  std::int64_t returns = 0;
  double maps_per_1k_allocs = 0;
  double unmaps_per_1k_allocs = 0;
  std::int64_t retries = 0;    // num_alloc_retries
  std::int64_t free_alls = 0;  // num_sync_all_streams
  std::int64_t ooms = 0;       // allocations refused (their blocks are skipped)
  // Pause lines replayed, and the bytes they gave back (summed).
  std::int64_t pauses = 0;
  std::uint64_t paused_bytes = 0;
  std::int64_t first_oom_event = -1;
  std::string first_oom_message;
  bool fits = true;  // no OOM

  // Device calls the allocator made during the measured pass (its destruction
  // at the end not included), by kind (DriverCall order), on the simulated card
  // or the GPU alike.
  std::array<std::int64_t, kNumDriverCalls> driver_calls{};
  std::int64_t driver_calls_total = 0;
  // Chunks those calls mapped (a stretch maps several in one map_run call).
  std::int64_t mapped_chunks = 0;
  std::int64_t foreground_unmaps = 0;  // of the unmaps, the allocating thread's own
  std::int64_t stream_waits = 0;  // num_stream_syncs: waits on a stream before unmapping
  // ... by what waited (MemoryStats::num_waits_under_block and the two after).
  std::int64_t waits_under_block = 0;
  std::int64_t waits_trim = 0;
  std::int64_t waits_release = 0;
  // With ReplayConfig::gpu_lag: the trace events the waits left the GPU to
  // catch up on, together (the host stood still meanwhile).
  std::uint64_t waited_events = 0;
  // ... of them, those of waits in the second half of the trace (the warm
  // steps: late_mapped_chunks' half).
  std::uint64_t late_waited_events = 0;
  // Modelled driver time: Σ calls × cost per call from the cost table.
  bool driver_time_modelled = false;  // false: no table
  std::string driver_costs_device;    // the table's "device"
  std::string driver_costs_path;
  double modelled_driver_us = 0;  // priced calls only
  // Of those, the calls made off the allocating thread (the unmap worker)
  // and their modelled time: host time that overlaps the caller's.
  std::int64_t background_driver_calls = 0;
  double background_driver_us = 0;
  std::int64_t unpriced_driver_calls = 0;
  std::string unpriced_driver_calls_text;  // "create 12, unmap 3"
  // Steps for the per-step figures (0: none) and where the count came from.
  int steps = 0;
  std::string steps_source;
  double driver_calls_per_step() const;   // 0 without steps
  double modelled_driver_ms_per_step() const;  // 0 without steps or table
  // The same over the trace's second half only (its events from n/2 on, as
  // steps / 2 steps): training time is measured after warm-up, and the
  // first steps' growth (every handle created and mapped once) would
  // otherwise dominate the per-step figure. 0 without steps or table.
  double late_driver_us = 0;             // priced calls made in the second half
  double late_background_driver_us = 0;  // of those, off the allocating thread
  std::int64_t late_mapped_chunks = 0;
  // The second half's calls by kind (DriverCall order), and of those the
  // ones off the allocating thread: which calls a warm step pays for.
  std::array<std::int64_t, kNumDriverCalls> late_driver_calls{};
  std::array<std::int64_t, kNumDriverCalls> late_background_calls{};
  double late_driver_ms_per_step() const;
  double late_foreground_driver_ms_per_step() const;
  // The part of it on the allocating thread (what a training step waits for).
  double foreground_driver_ms_per_step() const;

  double ns_per_op = 0;  // median over the timed passes; 0 when not timed
  std::vector<double> ns_per_op_passes;

  // ReplayConfig::layout_at's report (empty without it).
  std::string layout;

  std::vector<std::int64_t> timeline_allocated;
  std::vector<std::int64_t> timeline_reserved;
  // Device operations so far (device allocs and frees, maps, unmaps, stream
  // waits) after every event: where in a run the driver work falls.
  std::vector<std::int64_t> timeline_device_ops;
  // ReplayConfig::record_events: the events that made driver work, in order.
  std::vector<EventCost> event_costs;
};

// Replays `trace` with `policy`. Out-of-memory is part of the result (the
// block is skipped and the trace goes on); any other allocator or backend
// error, or an unusable config, is returned.
absl::StatusOr<ReplayResult> Replay(const Trace& trace, const Policy& policy,
                                    const ReplayConfig& config);

// PyTorch's own allocators on the bundled traces, as measured on an H100 and
// published in traces/README.md: reference data for the report, not results.
struct ReferenceRow {
  std::string label;
  std::int64_t peak_allocated_mib = 0;
  std::int64_t peak_reserved_mib = 0;
};
// Empty for traces other than "gpt2" and "resnet".
std::vector<ReferenceRow> ReferenceRows(absl::string_view trace_name);

// MiB as reported everywhere here: floor(bytes / 2^20).
inline std::int64_t ToMiB(std::int64_t bytes) { return bytes >> 20; }

// The report pieces. Each takes the results of one trace, in policy order.
// One row per policy plus PyTorch's reference rows when the trace has them.
std::string FormatTable(const std::vector<ReplayResult>& results);
// One line per policy against "pytorch-native" (when it was replayed) and
// against PyTorch's measured expandable_segments figure (when known); plus a
// line per policy on whether the trace fits the capacity.
std::string FormatComparison(const std::vector<ReplayResult>& results);
// Driver calls by kind, stream waits and modelled driver time (total and per
// step), one row per policy, with a line saying which cost table priced them
// and how steps were counted.
std::string FormatDriverTable(const std::vector<ReplayResult>& results);
// The first lines of a trace's report, in plain words: what PyTorch's
// native allocator ("pytorch-native") would hold at its peak against what is
// in use, what every other policy would hold and how much less (or more)
// than it; each policy's driver time on the allocating thread per step after
// warm-up (the trace's second half; in total when the steps are unknown);
// the host time per call when timed; which policy ran out of memory; and,
// for gpt2 and resnet, what PyTorch's own allocators held on the recorded
// run. "gpt2: PyTorch's allocator would hold 50.5 GiB at its peak ..."
std::string FormatPlainSummary(const std::vector<ReplayResult>& results);
// A trace's report as ccalloc-replay prints it: FormatPlainSummary; with
// `verbose` then FormatTable, FormatDriverTable and FormatComparison as they
// were before the plain lines came; and any --layout-at report.
std::string FormatTraceReport(const std::vector<ReplayResult>& results, bool verbose);
// After all traces (any results): one row per trace with each policy's peak
// reserved and ratio, what it saves against pytorch-native and its driver
// ms per step after warm-up on the allocating thread, then the worst case
// of each policy ("worst case: ccalloc 1.0093x (ckpt_lm_cycle) ...") and a
// line of what the columns mean.
std::string FormatOverview(const std::vector<ReplayResult>& results);
// Over all results (any traces): per policy, the worst peak ratio and the
// trace it came from, and the largest modelled driver ms per step:
// "worst ratio over all traces (2): ccalloc 1.007 (resnet), ...".
std::string FormatSummary(const std::vector<ReplayResult>& results);
// "event,<policy>_allocated,<policy>_reserved,...": one row per event.
// InvalidArgument unless every result has a timeline of the same length.
absl::StatusOr<std::string> TimelineCsv(const std::vector<ReplayResult>& results);
// Allocated and reserved over the replay, one line per policy, as a
// standalone SVG document. Same requirement as TimelineCsv.
absl::StatusOr<std::string> PlotSvg(const std::vector<ReplayResult>& results);

// "policy,event,op,id,bytes,stream,address,maps,...": a row per EventCost of
// every result, in the results' order.
std::string EventCostsCsv(const std::vector<ReplayResult>& results);

// A JSON list with one object per result (any traces).
std::string ResultsToJson(const std::vector<ReplayResult>& results);

}  // namespace ccalloc::replay

#endif  // CCALLOC_BENCH_REPLAY_H_
