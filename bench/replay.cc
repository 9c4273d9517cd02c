// replay.cc — the replay engine of replay.h: the policies and traces a
// replay takes, Replay() itself (the measured pass, the pass up to the
// reserved peak, the timed passes) with the per-step figures drawn from its
// counters, and the published reference data the reports set beside them.
// The text reports are in replay_report.cc; the CSV, SVG and JSON exports in
// replay_export.cc.
#include "bench/replay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/backends/sim_backend.h"
#include "bench/replay_text.h"
#include "bench/scenarios.h"
#include "stats/counters.h"
#include "stats/snapshot.h"

namespace ccalloc::replay {

using internal::Grouped;
using internal::kCcalloc;
using internal::kNative;
using internal::MiB1;

namespace {

// ---------------------------------------------------------------------------
// Replaying
// ---------------------------------------------------------------------------

// With `counter`, the backend is wrapped in a CountingBackend left there.
// With `sim_out` and a GPU that lags (ReplayConfig::gpu_lag), the simulated
// backend whose clock the replay ticks; null otherwise.
absl::StatusOr<std::unique_ptr<DeviceAllocator>> MakeAllocator(const Policy& policy,
                                                               const ReplayConfig& config,
                                                               CountingBackend** counter = nullptr,
                                                               SimBackend** sim_out = nullptr) {
  Options options = policy.options;
  std::unique_ptr<DeviceBackend> backend;
  if (config.device >= 0) {
    absl::StatusOr<std::unique_ptr<DeviceBackend>> cuda = CreateCudaBackend(config.device);
    if (!cuda.ok()) return cuda.status();
    backend = std::move(*cuda);
    // A real card has the memory it has; the capacity becomes a limit instead
    // (the tighter one wins when the policy has its own).
    if (config.capacity > 0 &&
        (options.memory_limit == 0 || config.capacity < options.memory_limit)) {
      options.memory_limit = config.capacity;
    }
  } else {
    SimBackend::Config sim;
    sim.capacity = config.capacity > 0 ? config.capacity : kDefaultSimCapacity;
    // A replay models a GPU that keeps up: cross-stream frees become reusable
    // at the next allocation.
    sim.auto_complete_events = true;
    sim.gpu_lag = config.gpu_lag;
    backend = std::make_unique<SimBackend>(sim);
    if (sim_out != nullptr && config.gpu_lag > 0) {
      *sim_out = static_cast<SimBackend*>(backend.get());
    }
  }
  if (counter != nullptr) {
    auto counting = std::make_unique<CountingBackend>(std::move(backend));
    *counter = counting.get();
    backend = std::move(counting);
  }
  return std::make_unique<DeviceAllocator>(std::move(backend), options);
}

// Plays events one at a time into an allocator. A refused allocation leaves
// its id at pointer 0, so that its free (Free(0) is a no-op) is skipped too.
// With `clock`, each event first ticks the lagging GPU's clock.
// With `settle`, the unmap worker's jobs (background_unmap) are finished and
// applied before each event, so that a replay repeats itself: otherwise
// whether an old mapping has gone by the next placement depends on the
// thread's timing, and with a lagging GPU that moved peaks from one run to
// the next (two_streams at 200 events, every 16 frees marked: 3,622 to
// 3,630 MiB over 12 runs). The calls stay on the worker's thread, so they
// are still counted off the replaying thread. The timed passes leave the
// worker alone.
class Player {
 public:
  Player(const Trace& trace, DeviceAllocator& allocator, bool single_stream,
         SimBackend* clock = nullptr, bool settle = false)
      : trace_(trace),
        allocator_(allocator),
        clock_(clock),
        single_stream_(single_stream),
        settle_(settle),
        ptrs_(trace.num_ids, 0),
        alloc_stream_(trace.num_ids, 0) {}

  absl::Status Step(std::size_t i) {
    if (clock_ != nullptr) clock_->Tick();
    if (settle_) {
      if (absl::Status s = allocator_.FinishBackgroundWork(); !s.ok()) return Annotate(s, i);
    }
    const TraceEvent& e = trace_.events[i];
    // Sleep and wake: the region's memory leaves reserved at a pause (its
    // live blocks keep their addresses) and comes back at the resume. The
    // contents do not matter to a replay: no backup. Allocators that cannot
    // pause (classic segments) and regions never used replay them as no-ops.
    if (e.op == TraceEvent::Op::kPause || e.op == TraceEvent::Op::kResume) {
      const RegionId region = static_cast<RegionId>(e.id);
      absl::StatusOr<std::size_t> n = e.op == TraceEvent::Op::kPause
                                          ? allocator_.Pause(region)
                                          : allocator_.Resume(region);
      if (n.ok()) {
        if (e.op == TraceEvent::Op::kPause) {
          ++pauses_;
          paused_bytes_ += *n;
        }
        return absl::OkStatus();
      }
      if (absl::IsNotFound(n.status()) || absl::IsFailedPrecondition(n.status())) {
        return absl::OkStatus();
      }
      return Annotate(n.status(), i);
    }
    if (e.op == TraceEvent::Op::kAlloc) {
      const StreamId stream = single_stream_ ? 0 : static_cast<StreamId>(e.stream);
      // The block goes in the region the trace says (a thread-local setting:
      // the replay plays on one thread).
      const RegionId previous = SetCurrentRegion(e.region);
      absl::StatusOr<DevicePtr> ptr = allocator_.Allocate(e.bytes, stream);
      SetCurrentRegion(previous);
      if (ptr.ok()) {
        ptrs_[e.id] = *ptr;
        alloc_stream_[e.id] = e.stream;
        return absl::OkStatus();
      }
      if (!absl::IsResourceExhausted(ptr.status())) return Annotate(ptr.status(), i);
      ptrs_[e.id] = 0;
      ++ooms_;
      if (first_oom_event_ < 0) {
        first_oom_event_ = static_cast<std::int64_t>(i);
        first_oom_message_ = std::string(ptr.status().message());
      }
      return absl::OkStatus();
    }
    const DevicePtr ptr = ptrs_[e.id];
    if (ptr == 0) return absl::OkStatus();
    ptrs_[e.id] = 0;
    // The free names the stream whose work must finish before reuse: another
    // stream than the allocation's means the block was record_stream'ed.
    if (!single_stream_ && e.stream != alloc_stream_[e.id]) {
      if (absl::Status s = allocator_.RecordStream(ptr, static_cast<StreamId>(e.stream)); !s.ok()) {
        return Annotate(s, i);
      }
    }
    if (absl::Status s = allocator_.Free(ptr); !s.ok()) return Annotate(s, i);
    return absl::OkStatus();
  }

  std::int64_t ooms() const { return ooms_; }
  std::int64_t pauses() const { return pauses_; }
  std::uint64_t paused_bytes() const { return paused_bytes_; }
  // Where the block of trace id `id` was placed (0: not allocated, or freed).
  DevicePtr ptr(std::uint64_t id) const { return id < ptrs_.size() ? ptrs_[id] : 0; }
  std::int64_t first_oom_event() const { return first_oom_event_; }
  const std::string& first_oom_message() const { return first_oom_message_; }

 private:
  absl::Status Annotate(const absl::Status& s, std::size_t i) const {
    const TraceEvent& e = trace_.events[i];
    return absl::Status(
        s.code(), absl::StrCat(trace_.name, ": event ", i, " (",
                               e.op == TraceEvent::Op::kAlloc ? "allocate" : "free", " id ", e.id,
                               ", ", e.bytes, " bytes): ", s.message()));
  }

  const Trace& trace_;
  DeviceAllocator& allocator_;
  SimBackend* const clock_;
  const bool single_stream_;
  const bool settle_;
  std::vector<DevicePtr> ptrs_;
  std::vector<std::uint64_t> alloc_stream_;
  std::int64_t ooms_ = 0;
  std::int64_t pauses_ = 0;
  std::uint64_t paused_bytes_ = 0;  // summed over the pauses
  std::int64_t first_oom_event_ = -1;
  std::string first_oom_message_;
};

// "\r<label>: <phase> 42%" on stderr, redrawn about 200 times per pass.
class Progress {
 public:
  Progress(bool on, std::string label, std::size_t total)
      : on_(on && total > 0),
        label_(std::move(label)),
        total_(total),
        every_(std::max<std::size_t>(1, total / 200)) {}
  ~Progress() {
    if (on_) std::fprintf(stderr, "\r\033[K");
  }
  void Update(std::size_t i, absl::string_view phase) {
    if (!on_ || i % every_ != 0) return;
    std::fprintf(stderr, "\r\033[K%s: %.*s %3d%%", label_.c_str(), static_cast<int>(phase.size()),
                 phase.data(),
                 static_cast<int>(100.0 * static_cast<double>(i) / static_cast<double>(total_)));
    std::fflush(stderr);
  }

 private:
  const bool on_;
  const std::string label_;
  const std::size_t total_;
  const std::size_t every_;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double PerThousand(std::int64_t count, std::uint64_t allocs) {
  return allocs == 0 ? 0.0 : 1000.0 * static_cast<double>(count) / static_cast<double>(allocs);
}
}  // namespace

// ---------------------------------------------------------------------------
// Policies and traces
// ---------------------------------------------------------------------------

std::vector<std::string> PresetNames() { return {std::string(kNative), std::string(kCcalloc)}; }

absl::StatusOr<Policy> PresetPolicy(absl::string_view name) {
  if (name == kNative) return Policy{std::string(kNative), PytorchNativeOptions(), {}};
  if (name == kCcalloc) {
    Options options = DefaultOptions();
    options.expandable_segments = true;
    return Policy{std::string(kCcalloc), options, {}};
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown policy '", name,
                                                 "' (presets: ", absl::StrJoin(PresetNames(), ", "),
                                                 "; a custom policy comes from --conf)"));
}

absl::StatusOr<Policy> CustomPolicy(absl::string_view conf, std::string name) {
  absl::StatusOr<Options> options = ParseOptions(conf, DefaultOptions());
  if (!options.ok()) return options.status();
  return Policy{std::move(name), *options, std::string(conf)};
}

absl::StatusOr<Trace> LoadTrace(const std::string& spec) {
  constexpr absl::string_view kPrefix = "scenario:";
  if (!absl::StartsWith(spec, kPrefix)) return ReadTrace(spec);
  absl::string_view rest = absl::string_view(spec).substr(kPrefix.size());
  std::uint64_t seed = 1;
  if (std::size_t colon = rest.find(':'); colon != absl::string_view::npos) {
    if (!absl::SimpleAtoi(rest.substr(colon + 1), &seed)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad seed in '", spec, "' (scenario:<name>[:<seed>])"));
    }
    rest = rest.substr(0, colon);
  }
  return scenarios::MakeScenario(std::string_view(rest.data(), rest.size()), seed);
}

// ---------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------

namespace {

// ReplayResult's page and chunk floors of a snapshot: a classic segment
// whole; of a growable one each page, and each chunk, that a live or pending
// block overlaps, once (blocks and chunks are both in address order, so a
// page or chunk shared by neighbours is counted by the first).
struct Floors {
  std::int64_t pages = 0;
  std::int64_t chunks = 0;
};
Floors FloorsOf(const Snapshot& snap, std::uint64_t page) {
  std::uint64_t pages = 0, chunks = 0;
  for (const SegmentInfo& seg : snap.segments) {
    if (!seg.expandable) {
      pages += seg.total_size;
      chunks += seg.total_size;
      continue;
    }
    std::size_t c = 0;
    std::uint64_t pages_to = 0;   // the end of the last page counted
    std::uint64_t chunks_to = 0;  // the end of the last chunk counted
    for (const BlockInfo& b : seg.blocks) {
      if (b.status == BlockStatus::kInactive || b.size == 0) continue;
      const std::uint64_t end = b.address + b.size;
      const std::uint64_t lo = std::max(b.address / page * page, pages_to);
      const std::uint64_t hi = (end + page - 1) / page * page;
      if (hi > lo) pages += hi - lo;
      pages_to = std::max(pages_to, hi);
      while (c < seg.chunks.size() && seg.chunks[c].second <= b.address) ++c;
      for (std::size_t k = c; k < seg.chunks.size() && seg.chunks[k].first < end; ++k) {
        if (seg.chunks[k].first >= chunks_to) {
          chunks += seg.chunks[k].second - seg.chunks[k].first;
          chunks_to = seg.chunks[k].second;
        }
      }
    }
  }
  return Floors{static_cast<std::int64_t>(pages), static_cast<std::int64_t>(chunks)};
}

// ReplayConfig::layout_at: the free blocks that hold memory (at least one
// page's worth), by address within their segment, before `e`.
std::string DescribeLayoutBefore(const DeviceAllocator& allocator, const TraceEvent& e,
                                 std::size_t index) {
  const Snapshot snap = allocator.TakeSnapshot();
  std::string out = absl::StrFormat(
      "layout before event %d (%s %s MiB on stream %d): allocated %s MiB, reserved %s MiB\n",
      index, e.op == TraceEvent::Op::kAlloc ? "allocate" : "free", MiB1(e.bytes), e.stream,
      Grouped(ToMiB(snap.stats.allocated_bytes[kStatAll].current)),
      Grouped(ToMiB(snap.stats.reserved_bytes[kStatAll].current)));
  std::uint64_t small_held = 0;
  int small = 0;
  for (const SegmentInfo& seg : snap.segments) {
    for (const BlockInfo& b : seg.blocks) {
      if (b.status != BlockStatus::kInactive) continue;
      std::uint64_t held = seg.expandable ? 0 : b.size;
      for (const auto& [lo, hi] : seg.mapped_ranges) {
        const std::uint64_t l = std::max<std::uint64_t>(lo, b.address);
        const std::uint64_t h = std::min<std::uint64_t>(hi, b.address + b.size);
        if (h > l) held += h - l;
      }
      if (held == 0) continue;
      if (held < (std::uint64_t{2} << 20)) {
        small_held += held;
        ++small;
        continue;
      }
      absl::StrAppendFormat(&out, "  free at segment 0x%x + %s MiB: %s MiB, of it held %s MiB "
                            "(stream %d)\n",
                            seg.address, MiB1(b.address - seg.address), MiB1(b.size),
                            MiB1(held), seg.stream);
    }
  }
  if (small > 0) {
    absl::StrAppendFormat(&out, "  and %d free blocks holding less than 2 MiB each: %s MiB\n",
                          small, MiB1(small_held));
  }
  return out;
}

// The driver work between the counters `before` and `after` of one event,
// and the memory after it (the event's own fields left for the caller).
EventCost CostBetween(const MemoryStats& before, const MemoryStats& after) {
  EventCost c;
  c.maps = after.num_maps - before.num_maps;
  c.unmaps = after.num_unmaps - before.num_unmaps;
  c.foreground_unmaps = after.num_foreground_unmaps - before.num_foreground_unmaps;
  c.returns = after.num_returns - before.num_returns;
  c.waits = after.num_stream_syncs - before.num_stream_syncs;
  c.device_allocs = after.num_device_alloc - before.num_device_alloc;
  c.device_frees = after.num_device_free - before.num_device_free;
  c.allocated = after.allocated_bytes[kStatAll].current;
  c.reserved = after.reserved_bytes[kStatAll].current;
  return c;
}

// ReplayConfig::layout_at, after the event: where its block went (`at`, 0
// for a free) and the driver work between the counters `before` and `after`.
std::string DescribeEventCost(const DeviceAllocator& allocator, DevicePtr at,
                              const MemoryStats& before, const MemoryStats& after) {
  std::string where = "-";
  if (at != 0) {
    // (A snapshot taken now: the event may have made the segment.)
    for (const SegmentInfo& seg : allocator.TakeSnapshot().segments) {
      if (at >= seg.address && at < seg.address + seg.total_size) {
        where = absl::StrFormat("segment 0x%x + %s MiB", seg.address, MiB1(at - seg.address));
      }
    }
  }
  const EventCost c = CostBetween(before, after);
  return absl::StrCat("  placed at ", where, "; pages mapped ", c.maps, ", unmapped ", c.unmaps,
                      " (", c.foreground_unmaps, " on the allocating thread), device allocations ",
                      c.device_allocs, ", waits ", c.waits, "\n");
}

// ReplayConfig::record_events: appends `e`'s cost where it made driver work.
void RecordEventCost(const TraceEvent& e, std::size_t i, const Player& player,
                     const MemoryStats& before, const MemoryStats& after,
                     std::vector<EventCost>& out) {
  EventCost c = CostBetween(before, after);
  if (c.maps == 0 && c.unmaps == 0 && c.returns == 0 && c.waits == 0 && c.device_allocs == 0 &&
      c.device_frees == 0) {
    return;
  }
  c.event = static_cast<std::int64_t>(i);
  switch (e.op) {
    case TraceEvent::Op::kAlloc: c.op = 'a'; break;
    case TraceEvent::Op::kFree: c.op = 'f'; break;
    case TraceEvent::Op::kPause: c.op = 'p'; break;
    case TraceEvent::Op::kResume: c.op = 'r'; break;
  }
  c.id = e.id;
  c.bytes = e.bytes;
  c.stream = e.stream;
  if (e.op == TraceEvent::Op::kAlloc) c.address = player.ptr(e.id);
  out.push_back(c);
}

}  // namespace

absl::StatusOr<ReplayResult> Replay(const Trace& trace, const Policy& policy,
                                    const ReplayConfig& config) {
  if (absl::Status s = ValidateTrace(trace); !s.ok()) return s;
  if (config.timing_repetitions < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("timing repetitions must be >= 0, not ", config.timing_repetitions));
  }
  const bool single_stream = config.device >= 0;
  const std::size_t n = trace.events.size();

  ReplayResult r;
  r.trace = trace.name;
  r.policy = policy.name;
  r.options = policy.options.ToString();
  r.conf = policy.conf;
  r.backend = config.device >= 0 ? absl::StrCat("cuda:", config.device) : "sim";
  r.capacity_bytes = config.device >= 0    ? config.capacity
                     : config.capacity > 0 ? config.capacity
                                           : kDefaultSimCapacity;
  r.events = n;
  if (config.steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat("steps must be >= 0, not ", config.steps));
  }
  if (config.steps > 0) {
    r.steps = config.steps;
    r.steps_source = "given";
  } else if (trace.steps > 0) {
    r.steps = trace.steps;
    r.steps_source = "the trace's '# steps:' line";
  } else if (const int published = PublishedSteps(trace.name); published > 0) {
    r.steps = published;
    r.steps_source = "traces/README.md";
  }
  for (const TraceEvent& e : trace.events) {
    if (e.op == TraceEvent::Op::kAlloc) ++r.allocs;
    if (e.op == TraceEvent::Op::kFree) ++r.frees;
  }
  Progress progress(config.progress, absl::StrCat(trace.name, " / ", policy.name), n);

  // --- The measured pass: counters (and timeline) after every event. -------
  {
    CountingBackend* counter = nullptr;
    SimBackend* sim = nullptr;
    absl::StatusOr<std::unique_ptr<DeviceAllocator>> allocator =
        MakeAllocator(policy, config, &counter, &sim);
    if (!allocator.ok()) return allocator.status();
    Player player(trace, **allocator, single_stream, sim, /*settle=*/true);
    if (config.record_timeline) {
      r.timeline_allocated.reserve(n);
      r.timeline_reserved.reserve(n);
      r.timeline_device_ops.reserve(n);
    }
    std::int64_t max_reserved = -1;
    std::int64_t max_allocated = -1;
    MemoryStats last = (*allocator)->GetStats();  // record_events: before the event
    DriverCallCounts half_calls, half_background;
    std::uint64_t half_waited = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == n / 2) {  // the second half's figures start here
        half_calls = counter->counts();
        half_background = counter->background_counts();
        if (sim != nullptr) half_waited = sim->counts().waited_ticks;
      }
      progress.Update(i, "replay");
      const bool describe =
          config.layout_at >= 0 && i == static_cast<std::size_t>(config.layout_at);
      MemoryStats before;
      if (describe) {
        r.layout = DescribeLayoutBefore(**allocator, trace.events[i], i);
        before = (*allocator)->GetStats();
      }
      if (absl::Status s = player.Step(i); !s.ok()) return s;
      const MemoryStats stats = (*allocator)->GetStats();
      if (describe) {
        const TraceEvent& e = trace.events[i];
        r.layout += DescribeEventCost(**allocator,
                                      e.op == TraceEvent::Op::kAlloc ? player.ptr(e.id) : 0,
                                      before, stats);
      }
      if (config.record_events) {
        RecordEventCost(trace.events[i], i, player, last, stats, r.event_costs);
        last = stats;
      }
      const std::int64_t reserved = stats.reserved_bytes[kStatAll].current;
      if (reserved > max_reserved) {
        max_reserved = reserved;
        r.peak_reserved_event = static_cast<std::int64_t>(i);
      }
      const std::int64_t allocated = stats.allocated_bytes[kStatAll].current;
      if (allocated > max_allocated) {
        max_allocated = allocated;
        r.peak_allocated_event = static_cast<std::int64_t>(i);
      }
      if (config.record_timeline) {
        r.timeline_allocated.push_back(stats.allocated_bytes[kStatAll].current);
        r.timeline_reserved.push_back(reserved);
        r.timeline_device_ops.push_back(stats.num_device_alloc + stats.num_device_free +
                                        stats.num_maps + stats.num_unmaps +
                                        stats.num_stream_syncs);
      }
    }
    const MemoryStats stats = (*allocator)->GetStats();
    r.peak_allocated_bytes = stats.allocated_bytes[kStatAll].peak;
    r.peak_reserved_bytes = stats.reserved_bytes[kStatAll].peak;
    r.peak_active_bytes = stats.active_bytes[kStatAll].peak;
    r.end_allocated_bytes = stats.allocated_bytes[kStatAll].current;
    r.end_reserved_bytes = stats.reserved_bytes[kStatAll].current;
    r.ratio = r.peak_allocated_bytes > 0 ? static_cast<double>(r.peak_reserved_bytes) /
                                               static_cast<double>(r.peak_allocated_bytes)
                                         : 0.0;
    r.run_fragmentation = RunFragmentation(stats);
    r.fragmentation_at_end = (*allocator)->Fragmentation().ratio;
    r.device_allocs = stats.num_device_alloc;
    r.device_frees = stats.num_device_free;
    r.maps = stats.num_maps;
    r.unmaps = stats.num_unmaps;
    r.returns = stats.num_returns;
    r.maps_per_1k_allocs = PerThousand(r.maps, r.allocs);
    r.unmaps_per_1k_allocs = PerThousand(r.unmaps, r.allocs);
    r.retries = stats.num_alloc_retries;
    r.free_alls = stats.num_sync_all_streams;
    r.ooms = player.ooms();
    r.pauses = player.pauses();
    r.paused_bytes = player.paused_bytes();
    r.first_oom_event = player.first_oom_event();
    r.first_oom_message = player.first_oom_message();
    r.fits = r.ooms == 0;

    // Read before the allocator is destroyed: giving everything back at the
    // end is not part of the run. The unmap worker's calls are finished
    // first, so that every call the run made is counted.
    if (absl::Status s = (*allocator)->FinishBackgroundWork(); !s.ok()) return s;
    const DriverCallCounts calls = counter->counts();
    const DriverCallCounts background = counter->background_counts();
    r.background_driver_calls = background.Total();
    for (int k = 0; k < kNumDriverCalls; ++k) {
      r.driver_calls[k] = calls.Total(static_cast<DriverCall>(k));
    }
    r.driver_calls_total = calls.Total();
    r.mapped_chunks = calls.MappedChunks((*allocator)->backend().PageSize());
    r.stream_waits = stats.num_stream_syncs;
    r.foreground_unmaps = stats.num_foreground_unmaps;
    r.waits_under_block = stats.num_waits_under_block;
    r.waits_trim = stats.num_waits_trim;
    r.waits_release = stats.num_waits_release;
    if (sim != nullptr) {
      r.waited_events = sim->counts().waited_ticks;
      r.late_waited_events = r.waited_events - half_waited;
    }
    if (config.driver_costs != nullptr) {
      const DriverTimeModel model = ModelDriverTime(calls, *config.driver_costs);
      r.driver_time_modelled = true;
      r.driver_costs_device = config.driver_costs->device;
      r.driver_costs_path = config.driver_costs->path;
      r.modelled_driver_us = model.us;
      r.background_driver_us = ModelDriverTime(background, *config.driver_costs).us;
      r.unpriced_driver_calls = model.unpriced_total();
      r.unpriced_driver_calls_text = model.UnpricedText();
      r.late_driver_us = model.us - ModelDriverTime(half_calls, *config.driver_costs).us;
      r.late_background_driver_us =
          r.background_driver_us - ModelDriverTime(half_background, *config.driver_costs).us;
    }
    r.late_mapped_chunks =
        r.mapped_chunks - half_calls.MappedChunks((*allocator)->backend().PageSize());
    for (int k = 0; k < kNumDriverCalls; ++k) {
      const auto call = static_cast<DriverCall>(k);
      r.late_driver_calls[k] = calls.Total(call) - half_calls.Total(call);
      r.late_background_calls[k] = background.Total(call) - half_background.Total(call);
    }
  }

  // --- When reserved and allocated peaked: fragmentation, page and chunk
  // floors. One pass replayed to the later of the two events, measured at
  // each as it passes; separate because measuring after every event would
  // cost more than the replay itself.
  const std::int64_t last = std::max(r.peak_reserved_event, r.peak_allocated_event);
  if (last >= 0) {
    SimBackend* sim = nullptr;
    absl::StatusOr<std::unique_ptr<DeviceAllocator>> allocator =
        MakeAllocator(policy, config, nullptr, &sim);
    if (!allocator.ok()) return allocator.status();
    Player player(trace, **allocator, single_stream, sim, /*settle=*/true);
    const std::uint64_t page = (*allocator)->backend().PageSize();
    for (std::int64_t i = 0; i <= last; ++i) {
      if (absl::Status s = player.Step(static_cast<std::size_t>(i)); !s.ok()) return s;
      if (i == r.peak_reserved_event) {
        r.fragmentation_at_peak = (*allocator)->Fragmentation().ratio;
        const Floors floors = FloorsOf((*allocator)->TakeSnapshot(), page);
        r.page_floor_at_reserved_peak_bytes = floors.pages;
        r.chunk_floor_at_reserved_peak_bytes = floors.chunks;
      }
      if (i == r.peak_allocated_event && r.peak_allocated_bytes > 0) {
        const Floors floors = FloorsOf((*allocator)->TakeSnapshot(), page);
        r.page_floor_bytes = floors.pages;
        r.chunk_floor_bytes = floors.chunks;
        r.page_floor_ratio = static_cast<double>(r.page_floor_bytes) /
                             static_cast<double>(r.peak_allocated_bytes);
      }
    }
  }

  // --- Timed passes: allocator calls only, on a fresh allocator each. ------
  for (int rep = 0; rep < config.timing_repetitions && n > 0; ++rep) {
    SimBackend* sim = nullptr;
    absl::StatusOr<std::unique_ptr<DeviceAllocator>> allocator =
        MakeAllocator(policy, config, nullptr, &sim);
    if (!allocator.ok()) return allocator.status();
    Player player(trace, **allocator, single_stream, sim);
    progress.Update(0, absl::StrCat("timing ", rep + 1, "/", config.timing_repetitions));
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      if (absl::Status s = player.Step(i); !s.ok()) return s;
    }
    const auto stop = std::chrono::steady_clock::now();
    r.ns_per_op_passes.push_back(
        static_cast<double>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count()) /
        static_cast<double>(n));
  }
  r.ns_per_op = Median(r.ns_per_op_passes);
  return r;
}

double ReplayResult::driver_calls_per_step() const {
  return steps > 0 ? static_cast<double>(driver_calls_total) / steps : 0.0;
}

double ReplayResult::modelled_driver_ms_per_step() const {
  return steps > 0 && driver_time_modelled ? modelled_driver_us / 1000.0 / steps : 0.0;
}

double ReplayResult::late_driver_ms_per_step() const {
  return steps > 1 && driver_time_modelled ? late_driver_us / 1000.0 / (steps / 2.0) : 0.0;
}

double ReplayResult::late_foreground_driver_ms_per_step() const {
  return steps > 1 && driver_time_modelled
             ? (late_driver_us - late_background_driver_us) / 1000.0 / (steps / 2.0)
             : 0.0;
}

double ReplayResult::foreground_driver_ms_per_step() const {
  return steps > 0 && driver_time_modelled
             ? (modelled_driver_us - background_driver_us) / 1000.0 / steps
             : 0.0;
}

// ---------------------------------------------------------------------------
// Reference data
// ---------------------------------------------------------------------------

int PublishedSteps(absl::string_view trace_name) {
  // traces/README.md: "... 20 steps" for the two runs PyTorch recorded
  // (traces recorded through the plugin say so themselves: "# steps: N").
  if (trace_name == "gpt2" || trace_name == "resnet") return 20;
  return 0;
}

std::string DefaultDriverCostsPath() {
#ifdef CCALLOC_DEFAULT_DRIVER_COSTS
  return CCALLOC_DEFAULT_DRIVER_COSTS;
#else
  return "bench/driver_costs/h100.json";
#endif
}

std::vector<ReferenceRow> ReferenceRows(absl::string_view trace_name) {
  // traces/README.md: PyTorch 2.11 on one H100, the same runs the traces were
  // recorded from.
  if (trace_name == "gpt2") {
    return {{"PyTorch native *", 30886, 51698},
            {"PyTorch expandable_segments *", 30886, 31558},
            {"PyTorch cudaMallocAsync *", 30886, 32800}};
  }
  if (trace_name == "resnet") {
    return {{"PyTorch native *", 5724, 7628},
            {"PyTorch expandable_segments *", 5724, 5806},
            {"PyTorch cudaMallocAsync *", 5724, 6208}};
  }
  return {};
}

}  // namespace ccalloc::replay
