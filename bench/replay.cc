// replay.cc — see replay.h.
#include "bench/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
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
#include "bench/scenarios.h"
#include "stats/counters.h"
#include "stats/snapshot.h"

namespace ccalloc::replay {
namespace {

constexpr absl::string_view kNative = "pytorch-native";
constexpr absl::string_view kCcalloc = "ccalloc";

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

// ---------------------------------------------------------------------------
// Formatting helpers
// ---------------------------------------------------------------------------

// 51698 -> "51,698".
std::string Grouped(std::int64_t v) {
  std::string digits = absl::StrCat(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? absl::StrCat("-", out) : out;
}

std::string Percent(double f) { return absl::StrFormat("%.1f%%", 100.0 * f); }

// 3460300 -> "3.3" (MiB, one decimal).
std::string MiB1(std::uint64_t bytes) {
  return absl::StrFormat("%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string CapacityText(const ReplayResult& r) {
  if (r.capacity_bytes == 0) return "no limit";
  return FormatBytes(r.capacity_bytes);
}

// A plain text table: first column left-aligned, the rest right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) {
    row.resize(rows_[0].size());
    rows_.push_back(std::move(row));
  }
  void AddRule() { rules_.push_back(rows_.size()); }
  std::string Render() const {
    std::vector<std::size_t> width(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    std::size_t total = 0;
    for (std::size_t w : width) total += w + 2;
    std::string out;
    auto rule = [&] { out += std::string(total - 2, '-') + "\n"; };
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      if (std::find(rules_.begin(), rules_.end(), r) != rules_.end()) rule();
      std::string line;
      for (std::size_t c = 0; c < rows_[r].size(); ++c) {
        const std::string& cell = rows_[r][c];
        const std::string pad(width[c] - cell.size(), ' ');
        line += c == 0 ? cell + pad : pad + cell;
        if (c + 1 < rows_[r].size()) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      if (r == 0) rule();
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> rules_;
};

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  return absl::StrFormat("%.6g", v);
}

std::string XmlEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

absl::Status CheckTimelines(const std::vector<ReplayResult>& results) {
  if (results.empty()) return absl::InvalidArgumentError("no results");
  for (const ReplayResult& r : results) {
    if (r.timeline_reserved.size() != r.events || r.timeline_allocated.size() != r.events ||
        r.timeline_device_ops.size() != r.events ||
        r.events != results[0].events || r.trace != results[0].trace) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy ", r.policy, " on ", r.trace,
          " has no full timeline (replay with record_timeline) or belongs to another trace"));
    }
  }
  return absl::OkStatus();
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

  // --- Fragmentation when reserved peaked: replay up to that event. --------
  // A separate pass because computing it after every event would cost more
  // than the replay itself.
  if (r.peak_reserved_event >= 0) {
    SimBackend* sim = nullptr;
    absl::StatusOr<std::unique_ptr<DeviceAllocator>> allocator =
        MakeAllocator(policy, config, nullptr, &sim);
    if (!allocator.ok()) return allocator.status();
    Player player(trace, **allocator, single_stream, sim, /*settle=*/true);
    for (std::size_t i = 0; i <= static_cast<std::size_t>(r.peak_reserved_event); ++i) {
      if (absl::Status s = player.Step(i); !s.ok()) return s;
    }
    r.fragmentation_at_peak = (*allocator)->Fragmentation().ratio;
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

// ---------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------

std::string FormatTable(const std::vector<ReplayResult>& results) {
  TextTable table({"policy", "peak alloc MiB", "peak rsv MiB", "ratio", "frag run", "frag@peak",
                   "frag@end", "dev allocs", "dev frees", "maps", "unmaps", "(un)maps/1k",
                   "retries", "free-alls", "OOMs", "ns/op"});
  for (const ReplayResult& r : results) {
    table.Add({r.policy, Grouped(ToMiB(r.peak_allocated_bytes)),
               Grouped(ToMiB(r.peak_reserved_bytes)), absl::StrFormat("%.3f", r.ratio),
               Percent(r.run_fragmentation), Percent(r.fragmentation_at_peak),
               Percent(r.fragmentation_at_end), Grouped(r.device_allocs), Grouped(r.device_frees),
               Grouped(r.maps), Grouped(r.unmaps),
               absl::StrFormat("%.1f", r.maps_per_1k_allocs + r.unmaps_per_1k_allocs),
               Grouped(r.retries), Grouped(r.free_alls), Grouped(r.ooms),
               r.ns_per_op_passes.empty() ? "-" : absl::StrFormat("%.0f", r.ns_per_op)});
  }
  if (!results.empty()) {
    std::vector<ReferenceRow> refs = ReferenceRows(results[0].trace);
    if (!refs.empty()) table.AddRule();
    for (const ReferenceRow& ref : refs) {
      const double ratio =
          static_cast<double>(ref.peak_reserved_mib) / static_cast<double>(ref.peak_allocated_mib);
      table.Add({ref.label, Grouped(ref.peak_allocated_mib), Grouped(ref.peak_reserved_mib),
                 absl::StrFormat("%.3f", ratio), Percent(1.0 - 1.0 / ratio), "-", "-", "-", "-",
                 "-", "-", "-", "-", "-", "-", "-"});
    }
  }
  std::string out = table.Render();
  // Blocks freed while another stream's work on them may still run cannot
  // be reused yet: say so where they raised the peak (ReplayResult).
  for (const ReplayResult& r : results) {
    if (r.peak_active_bytes * 1000 > r.peak_allocated_bytes * 1001) {
      absl::StrAppend(
          &out, r.policy, ": peak active ", Grouped(ToMiB(r.peak_active_bytes)),
          " MiB (allocated, and freed blocks it still counted as awaiting another "
          "stream's work, which the stream contract keeps from reuse); reserved / active ",
          absl::StrFormat("%.3f", static_cast<double>(r.peak_reserved_bytes) /
                                      static_cast<double>(r.peak_active_bytes)),
          "\n");
    }
  }
  if (!results.empty() && !ReferenceRows(results[0].trace).empty()) {
    out +=
        "* PyTorch 2.11's own allocators on the run this trace was recorded from (one H100),\n"
        "  as published in traces/README.md: reference data, not replayed.\n";
  }
  return out;
}

std::string FormatDriverTable(const std::vector<ReplayResult>& results) {
  using C = DriverCall;
  auto n = [](const ReplayResult& r, C c) { return Grouped(r.driver_calls[static_cast<int>(c)]); };
  // Single and batched calls of a kind share a column (they are priced apart).
  auto n2 = [](const ReplayResult& r, C c, C run) {
    return Grouped(r.driver_calls[static_cast<int>(c)] + r.driver_calls[static_cast<int>(run)]);
  };
  TextTable table({"policy", "dev alloc", "dev free", "create", "map", "set acc", "unmap",
                   "release", "reserve", "free rng", "ev rec", "ev query", "ev sync", "dev sync",
                   "stream waits", "waited ev", "calls", "calls/step", "driver ms", "driver ms/step",
                   "bg calls", "caller ms/step", "unpriced"});
  for (const ReplayResult& r : results) {
    const bool per_step = r.steps > 0;
    table.Add({r.policy, n(r, C::kDeviceAlloc), n(r, C::kDeviceFree), n(r, C::kCreate),
               n2(r, C::kMap, C::kMapRun), n(r, C::kSetAccess), n2(r, C::kUnmap, C::kUnmapRun),
               n(r, C::kRelease),
               n(r, C::kReserve), n(r, C::kFreeRange), n(r, C::kEventRecord),
               n(r, C::kEventQuery), n(r, C::kEventSynchronize), n(r, C::kDeviceSynchronize),
               Grouped(r.stream_waits), Grouped(static_cast<std::int64_t>(r.waited_events)),
               Grouped(r.driver_calls_total),
               per_step ? absl::StrFormat("%.1f", r.driver_calls_per_step()) : "-",
               r.driver_time_modelled ? absl::StrFormat("%.1f", r.modelled_driver_us / 1000.0)
                                      : "-",
               per_step && r.driver_time_modelled
                   ? absl::StrFormat("%.2f", r.modelled_driver_ms_per_step())
                   : "-",
               Grouped(r.background_driver_calls),
               per_step && r.driver_time_modelled
                   ? absl::StrFormat("%.2f", r.foreground_driver_ms_per_step())
                   : "-",
               r.driver_time_modelled ? Grouped(r.unpriced_driver_calls) : "-"});
  }
  std::string out = table.Render();
  if (results.empty()) return out;
  const ReplayResult& first = results[0];
  if (first.driver_time_modelled) {
    absl::StrAppend(&out, "driver ms = sum over calls of the cost per call from ", first.driver_costs_path,
                    " (", first.driver_costs_device,
                    "); unpriced calls (no entry in that table) add nothing to it");
    std::vector<std::string> unpriced;
    for (const ReplayResult& r : results) {
      if (!r.unpriced_driver_calls_text.empty()) {
        unpriced.push_back(absl::StrCat(r.policy, ": ", r.unpriced_driver_calls_text));
      }
    }
    if (!unpriced.empty()) absl::StrAppend(&out, " (", absl::StrJoin(unpriced, "; "), ")");
    out += ".\n";
  } else {
    out += "driver ms: not modelled (no cost table).\n";
  }
  if (first.steps > 0) {
    absl::StrAppend(&out, "per step = total / ", first.steps, " steps (",
                    first.steps_source == "given" ? "--steps"
                                                  : absl::StrCat("as ", first.steps_source,
                                                                 " gives them"),
                    "; the trace has no step markers).\n");
  } else {
    out += "per step: not known for this trace (give --steps N).\n";
  }
  out +=
      "bg calls = calls made off the replaying thread (the unmap worker, background_unmap); caller "
      "ms/step = modelled time of the rest. The split follows the replay's pace, not a GPU's: the "
      "worker waits for a pause in the caller's own calls, which a replay rarely makes.\n";
  return out;
}

std::string FormatSummary(const std::vector<ReplayResult>& results) {
  std::vector<std::string> policies;
  std::set<std::string> traces;
  for (const ReplayResult& r : results) {
    traces.insert(r.trace);
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end()) {
      policies.push_back(r.policy);
    }
  }
  std::vector<std::string> worst, driver;
  for (const std::string& p : policies) {
    const ReplayResult* w = nullptr;
    const ReplayResult* d = nullptr;
    for (const ReplayResult& r : results) {
      if (r.policy != p) continue;
      if (w == nullptr || r.ratio > w->ratio) w = &r;
      if (r.steps > 0 && r.driver_time_modelled &&
          (d == nullptr || r.modelled_driver_ms_per_step() > d->modelled_driver_ms_per_step())) {
        d = &r;
      }
    }
    worst.push_back(absl::StrFormat("%s %.4f (%s%s)", p, w->ratio, w->trace,
                                    w->fits ? "" : ", did not fit"));
    if (d != nullptr) {
      driver.push_back(absl::StrFormat(
          "%s %.2f (%s; %.2f of it on the allocating thread%s)", p,
          d->modelled_driver_ms_per_step(), d->trace, d->foreground_driver_ms_per_step(),
          d->unpriced_driver_calls == 0
              ? ""
              : absl::StrCat("; ", d->unpriced_driver_calls, " of ", d->driver_calls_total,
                             " calls unpriced, not counted")));
    }
  }
  std::string out = absl::StrCat("worst ratio over all traces (", traces.size(), "): ",
                                 absl::StrJoin(worst, ", "), "\n");
  if (!driver.empty()) {
    absl::StrAppend(&out, "most modelled driver ms per step over all traces: ",
                    absl::StrJoin(driver, ", "), "\n");
  }
  return out;
}

std::string FormatComparison(const std::vector<ReplayResult>& results) {
  std::string out;
  const ReplayResult* native = nullptr;
  for (const ReplayResult& r : results) {
    if (r.policy == kNative) native = &r;
  }
  std::int64_t measured_native = -1;
  std::int64_t measured_expandable = -1;
  if (!results.empty()) {
    std::vector<ReferenceRow> refs = ReferenceRows(results[0].trace);
    if (refs.size() >= 2) {
      measured_native = refs[0].peak_reserved_mib;
      measured_expandable = refs[1].peak_reserved_mib;
    }
  }
  for (const ReplayResult& r : results) {
    const std::int64_t mib = ToMiB(r.peak_reserved_bytes);
    if (&r == native) {
      // Only a replay that fitted is comparable with PyTorch's unconstrained run.
      if (measured_native >= 0 && r.fits) {
        absl::StrAppend(&out, r.policy, " vs PyTorch native (measured): ", Grouped(mib), " vs ",
                        Grouped(measured_native), " MiB peak reserved: ",
                        mib == measured_native
                            ? "identical"
                            : absl::StrCat("differs by ", Grouped(mib - measured_native), " MiB"),
                        "\n");
      }
      continue;
    }
    if (native != nullptr) {
      const std::int64_t base = ToMiB(native->peak_reserved_bytes);
      const std::int64_t saved = base - mib;
      absl::StrAppend(
          &out, r.policy, " vs ", native->policy, ": peak reserved ", Grouped(mib), " vs ",
          Grouped(base), " MiB (", saved >= 0 ? "saves " : "costs ",
          Grouped(saved >= 0 ? saved : -saved), " MiB, ",
          absl::StrFormat("%.1f%%", base > 0
                                        ? 100.0 * static_cast<double>(saved >= 0 ? saved : -saved) /
                                              static_cast<double>(base)
                                        : 0.0),
          saved >= 0 ? " less" : " more", "); ratio ",
          absl::StrFormat("%.3f vs %.3f", r.ratio, native->ratio));
      if (!r.ns_per_op_passes.empty() && !native->ns_per_op_passes.empty()) {
        absl::StrAppend(
            &out, absl::StrFormat("; host %.0f vs %.0f ns/op", r.ns_per_op, native->ns_per_op));
      }
      out += "\n";
    }
    if (measured_expandable >= 0 && r.fits) {
      absl::StrAppend(&out, r.policy, " vs PyTorch expandable_segments (measured): ", Grouped(mib),
                      " vs ", Grouped(measured_expandable), " MiB (",
                      mib <= measured_expandable ? "saves " : "costs ",
                      Grouped(mib <= measured_expandable ? measured_expandable - mib
                                                         : mib - measured_expandable),
                      " MiB)\n");
    }
  }
  for (const ReplayResult& r : results) {
    if (r.fits) {
      absl::StrAppend(&out, r.policy, ": fits in ", CapacityText(r), " (", r.retries, " retries, ",
                      r.free_alls, " free-alls)\n");
    } else {
      std::string why = r.first_oom_message;
      if (why.size() > 240) why = why.substr(0, 240) + "...";
      absl::StrAppend(&out, r.policy, ": does NOT fit in ", CapacityText(r), ": ", r.ooms,
                      " allocations refused and skipped, the first at event ", r.first_oom_event,
                      " (", r.retries, " retries, ", r.free_alls, " free-alls); first error: ", why,
                      "\n");
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The plain report: what a newcomer reads first
// ---------------------------------------------------------------------------

namespace {

// "PyTorch's allocator" for pytorch-native (the model of PyTorch's native
// caching allocator); the policy's own name otherwise.
std::string PlainName(const ReplayResult& r) {
  return r.policy == kNative ? "PyTorch's allocator" : r.policy;
}

// The same in a list of figures: "PyTorch 0.23 ms, ccalloc 0.91 ms".
std::string ShortName(const ReplayResult& r) { return r.policy == kNative ? "PyTorch" : r.policy; }

// The first mention of a custom policy names its settings too.
std::string PlainNameFirst(const ReplayResult& r) {
  return r.conf.empty() ? PlainName(r) : absl::StrCat(r.policy, " (", r.conf, ")");
}

// 54210000000 -> "50.5 GiB", 8388608 -> "8.0 MiB" (of the magnitude).
std::string PlainSize(std::int64_t bytes) {
  const double v = std::fabs(static_cast<double>(bytes));
  if (v >= static_cast<double>(kGiB)) return absl::StrFormat("%.1f GiB", v / kGiB);
  if (v >= static_cast<double>(kMiB)) return absl::StrFormat("%.1f MiB", v / kMiB);
  if (v >= 1024.0) return absl::StrFormat("%.1f KiB", v / 1024.0);
  return absl::StrFormat("%.0f B", v);
}

// 0.8964 -> "0.90", 23.51 -> "23.5", 1783.2 -> "1,783".
std::string PlainMs(double ms) {
  if (ms < 10) return absl::StrFormat("%.2f", ms);
  if (ms < 100) return absl::StrFormat("%.1f", ms);
  return Grouped(static_cast<std::int64_t>(std::llround(ms)));
}

// The card or the limit the replay ran under.
std::string PlainWhere(const ReplayResult& r) {
  if (r.backend == "sim")
    return absl::StrCat("the simulated ", PlainSize(r.capacity_bytes), " card");
  if (r.capacity_bytes > 0) {
    return absl::StrCat(r.backend, " under its ", PlainSize(r.capacity_bytes), " limit");
  }
  return r.backend;
}

// Modelled driver time on the allocating thread: a step after warm-up (the
// trace's second half) with two steps or more, the one step with one, the
// whole trace without steps.
double CallerDriverMs(const ReplayResult& r) {
  if (r.steps > 1) return r.late_foreground_driver_ms_per_step();
  if (r.steps == 1) return r.foreground_driver_ms_per_step();
  return (r.modelled_driver_us - r.background_driver_us) / 1000.0;
}

// "34%", "<1%" of `base` (bytes), by magnitude.
std::string PlainShare(std::int64_t d, std::int64_t base) {
  const double pct =
      base > 0 ? 100.0 * std::fabs(static_cast<double>(d)) / static_cast<double>(base) : 0.0;
  if (d != 0 && pct < 0.5) return "<1%";
  return absl::StrFormat("%.0f%%", pct);
}

// ", 17.4 GiB less (34%)" against `base`; with `name_base`, ", 17.4 GiB less
// than PyTorch's allocator (34%)".
std::string PlainAgainst(const ReplayResult& r, const ReplayResult& base, bool name_base) {
  const std::int64_t d = base.peak_reserved_bytes - r.peak_reserved_bytes;
  const std::string than = name_base ? absl::StrCat(" than ", PlainName(base)) : "";
  if (d == 0) return name_base ? absl::StrCat(", as much as ", PlainName(base)) : ", the same";
  return absl::StrCat(", ", PlainSize(d), d > 0 ? " less" : " more", than, " (",
                      PlainShare(d, base.peak_reserved_bytes), ")");
}

const ReplayResult* FindPolicy(const std::vector<ReplayResult>& results, absl::string_view p) {
  for (const ReplayResult& r : results) {
    if (r.policy == p) return &r;
  }
  return nullptr;
}

}  // namespace

std::string FormatPlainSummary(const std::vector<ReplayResult>& results) {
  if (results.empty()) return "";
  const ReplayResult* native = FindPolicy(results, kNative);
  std::vector<const ReplayResult*> others;
  for (const ReplayResult& r : results) {
    if (&r != native) others.push_back(&r);
  }
  const ReplayResult& first = results[0];
  auto held = [](const ReplayResult& r) {
    return absl::StrFormat("%s (%.3fx)", PlainSize(r.peak_reserved_bytes), r.ratio);
  };

  // What each would hold at its peak, against PyTorch's allocator.
  const ReplayResult& lead = native != nullptr ? *native : *others[0];
  std::string out = absl::StrFormat(
      "%s: %s would hold %s at its peak for %s in use (%.3fx)", first.trace, PlainNameFirst(lead),
      PlainSize(lead.peak_reserved_bytes), PlainSize(lead.peak_allocated_bytes), lead.ratio);
  for (std::size_t k = 0; k < others.size(); ++k) {
    const ReplayResult& r = *others[k];
    if (&r == &lead) continue;
    const bool in_sentence = k == 0 || (native == nullptr && k == 1);
    const std::string vs = native != nullptr ? PlainAgainst(r, *native, !in_sentence) : "";
    if (in_sentence) {
      absl::StrAppend(&out, "; ", PlainNameFirst(r), " holds ", held(r), vs);
    } else {
      absl::StrAppend(&out, ".\n  ", PlainNameFirst(r), " would hold ", held(r), vs);
    }
  }
  out += ".\n";

  // Out of memory, plainly.
  for (const ReplayResult& r : results) {
    if (r.fits) continue;
    absl::StrAppend(&out, "  ", PlainName(r), " ran OUT OF MEMORY on ", PlainWhere(r), ": ",
                    Grouped(r.ooms), r.ooms == 1 ? " allocation" : " allocations",
                    " refused (the first at event ", Grouped(r.first_oom_event),
                    ") and skipped, so its figures leave ", r.ooms == 1 ? "that block" : "them",
                    " out.\n");
  }

  // What it costs a step: modelled driver time on the allocating thread.
  std::vector<std::string> parts;
  if (first.driver_time_modelled) {
    std::vector<std::string> unpriced;
    for (const ReplayResult& r : results) {
      parts.push_back(absl::StrCat(ShortName(r), " ", PlainMs(CallerDriverMs(r)), " ms"));
      if (r.unpriced_driver_calls > 0) {
        unpriced.push_back(absl::StrCat(ShortName(r), "'s ", Grouped(r.unpriced_driver_calls)));
      }
    }
    const std::string costs = absl::StrCat(
        "modelled, ", first.driver_costs_device, " costs",
        unpriced.empty()
            ? ""
            : absl::StrCat("; ", absl::StrJoin(unpriced, ", "), " unpriced calls add nothing"));
    if (first.steps > 1) {
      absl::StrAppend(&out, "  Driver time a step after warm-up, on the allocating thread: ",
                      absl::StrJoin(parts, ", "), " (", costs, "; the last half of ", first.steps,
                      " steps).\n");
    } else if (first.steps == 1) {
      absl::StrAppend(&out, "  Driver time in its one step, on the allocating thread: ",
                      absl::StrJoin(parts, ", "), " (", costs, ").\n");
    } else {
      absl::StrAppend(&out, "  Driver time over the whole trace, on the allocating thread: ",
                      absl::StrJoin(parts, ", "), " (", costs,
                      "; steps unknown: --steps N gives it per step).\n");
    }
  } else {
    for (const ReplayResult& r : results) {
      parts.push_back(absl::StrCat(ShortName(r), " ", Grouped(r.driver_calls_total)));
    }
    absl::StrAppend(&out, "  Driver calls over the whole trace: ", absl::StrJoin(parts, ", "),
                    " (their time is not modelled: no cost table).\n");
  }

  // Host time per call, when timed.
  bool timed = true;
  for (const ReplayResult& r : results) timed = timed && !r.ns_per_op_passes.empty();
  if (timed) {
    parts.clear();
    for (const ReplayResult& r : results) {
      parts.push_back(absl::StrFormat("%s %.0f ns", ShortName(r), r.ns_per_op));
    }
    const std::size_t passes = first.ns_per_op_passes.size();
    absl::StrAppend(&out, "  Host time per allocate or free: ", absl::StrJoin(parts, ", "),
                    " (measured on this machine, ",
                    passes == 1 ? "one replay" : absl::StrCat("the median of ", passes, " replays"),
                    ").\n");
  }

  // PyTorch's own allocators on the recorded run, where published.
  const std::vector<ReferenceRow> refs = ReferenceRows(first.trace);
  if (!refs.empty()) {
    parts.clear();
    for (const ReferenceRow& ref : refs) {
      std::string label = ref.label;
      if (absl::StartsWith(label, "PyTorch ")) label = label.substr(8);
      if (absl::EndsWith(label, " *")) label.resize(label.size() - 2);
      parts.push_back(absl::StrCat(
          label, " ", PlainSize(ref.peak_reserved_mib * static_cast<std::int64_t>(kMiB))));
    }
    absl::StrAppend(&out,
                    "  PyTorch 2.11 itself on the recorded run (one H100; traces/README.md): ",
                    absl::StrJoin(parts, ", "), ".\n");
  }
  return out;
}

std::string FormatTraceReport(const std::vector<ReplayResult>& results, bool verbose) {
  // (The verbose part as ccalloc-replay printed it before the plain lines.)
  std::string out = FormatPlainSummary(results);
  if (verbose) {
    absl::StrAppend(&out, "\n", FormatTable(results), FormatDriverTable(results),
                    FormatComparison(results), "\n");
  }
  for (const ReplayResult& r : results) {
    if (!r.layout.empty()) absl::StrAppend(&out, r.policy, ": ", r.layout, "\n");
  }
  return verbose ? out : out + "\n";
}

std::string FormatOverview(const std::vector<ReplayResult>& results) {
  if (results.empty()) return "";
  std::vector<std::string> traces, policies;
  std::int64_t largest = 0;
  bool modelled = false;
  std::string device;
  for (const ReplayResult& r : results) {
    if (std::find(traces.begin(), traces.end(), r.trace) == traces.end()) traces.push_back(r.trace);
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end()) {
      policies.push_back(r.policy);
    }
    largest = std::max(largest, r.peak_reserved_bytes);
    if (r.driver_time_modelled && !modelled) {
      modelled = true;
      device = r.driver_costs_device;
    }
  }
  const bool has_native = std::find(policies.begin(), policies.end(), kNative) != policies.end();
  std::vector<std::string> others;
  for (const std::string& p : policies) {
    if (p != kNative) others.push_back(p);
  }
  const bool gib = largest >= static_cast<std::int64_t>(kGiB);
  const double unit = gib ? static_cast<double>(kGiB) : static_cast<double>(kMiB);
  const std::string unit_name = gib ? "GiB" : "MiB";
  auto amount = [&](std::int64_t bytes) {
    const double v = static_cast<double>(bytes) / unit;
    return gib ? absl::StrFormat("%.2f", v) : absl::StrFormat("%.1f", v);
  };
  auto find = [&](const std::string& trace, const std::string& policy) -> const ReplayResult* {
    for (const ReplayResult& r : results) {
      if (r.trace == trace && r.policy == policy) return &r;
    }
    return nullptr;
  };
  std::vector<std::string> header = {"trace"};
  if (has_native) {
    header.insert(header.end(), {absl::StrCat("PyTorch ", unit_name), "ratio", "ms/step"});
  }
  for (const std::string& p : others) {
    header.insert(header.end(), {absl::StrCat(p, " ", unit_name), "ratio", "ms/step"});
    if (has_native) header.push_back("saved");
  }
  TextTable table(header);
  bool any_oom = false, any_total = false;
  auto peak_cells = [&](const ReplayResult* r, std::vector<std::string>* row) {
    if (r == nullptr) {
      row->insert(row->end(), {"-", "-"});
      return;
    }
    any_oom = any_oom || !r->fits;
    row->push_back(absl::StrCat(amount(r->peak_reserved_bytes), r->fits ? "" : " OOM"));
    row->push_back(absl::StrFormat("%.3f", r->ratio));
  };
  auto driver_cell = [&](const ReplayResult* r) -> std::string {
    if (r == nullptr || !r->driver_time_modelled) return "-";
    if (r->steps == 0) {
      any_total = true;
      return absl::StrCat(PlainMs(CallerDriverMs(*r)), " total");
    }
    return PlainMs(CallerDriverMs(*r));
  };
  for (const std::string& t : traces) {
    std::vector<std::string> row = {t};
    const ReplayResult* native = has_native ? find(t, std::string(kNative)) : nullptr;
    if (has_native) {
      peak_cells(native, &row);
      row.push_back(driver_cell(native));
    }
    for (const std::string& p : others) {
      const ReplayResult* r = find(t, p);
      peak_cells(r, &row);
      row.push_back(driver_cell(r));
      if (has_native) {
        if (r == nullptr || native == nullptr) {
          row.push_back("-");
        } else {
          // Negative: it held more than PyTorch.
          const std::int64_t d = native->peak_reserved_bytes - r->peak_reserved_bytes;
          const std::string size = amount(d < 0 ? -d : d);
          const bool minus = d < 0 && size.find_first_not_of("0.") != std::string::npos;
          const std::string share = PlainShare(d, native->peak_reserved_bytes);
          row.push_back(absl::StrCat(minus ? "-" : "", size, " (",
                                     minus && share != "<1%" ? "-" : "", share, ")"));
        }
      }
    }
    table.Add(std::move(row));
  }
  std::string out = table.Render();

  // The worst case of each policy over the traces.
  std::vector<std::string> worst;
  for (const std::string& p : policies) {
    const ReplayResult *w = nullptr, *least = nullptr, *costly = nullptr;
    std::vector<std::string> ooms;
    double least_saved = 0;
    for (const ReplayResult& r : results) {
      if (r.policy != p) continue;
      if (w == nullptr || r.ratio > w->ratio) w = &r;
      if (!r.fits) ooms.push_back(r.trace);
      if (r.driver_time_modelled && r.steps > 0 &&
          (costly == nullptr || CallerDriverMs(r) > CallerDriverMs(*costly))) {
        costly = &r;
      }
      // (Only where both fitted: a refused block is memory neither held.)
      if (p != kNative && has_native && r.fits) {
        if (const ReplayResult* n = find(r.trace, std::string(kNative)); n != nullptr && n->fits) {
          const double saved = static_cast<double>(n->peak_reserved_bytes - r.peak_reserved_bytes);
          if (least == nullptr || saved < least_saved) {
            least = &r;
            least_saved = saved;
          }
        }
      }
    }
    std::string line =
        absl::StrFormat("%s holds at most %.4fx its peak in use (%s)",
                        p == kNative ? "PyTorch's allocator" : p, w->ratio, w->trace);
    if (least != nullptr) {
      const ReplayResult& n = *find(least->trace, std::string(kNative));
      const auto d = static_cast<std::int64_t>(least_saved);
      absl::StrAppend(&line,
                      d > 0    ? ", saves least on "
                      : d == 0 ? ", saves nothing on "
                               : ", holds more than PyTorch's allocator on ",
                      least->trace);
      if (d != 0) {
        absl::StrAppend(&line, " (", PlainSize(d), ", ", PlainShare(d, n.peak_reserved_bytes), ")");
      }
    }
    if (costly != nullptr && p != kNative) {
      absl::StrAppend(&line, ", spends most driver time on ", costly->trace, " (",
                      PlainMs(CallerDriverMs(*costly)), " ms a step)");
    }
    if (!ooms.empty()) {
      absl::StrAppend(&line, ", ran out of memory on ", absl::StrJoin(ooms, ", "));
    }
    worst.push_back(line);
  }
  absl::StrAppend(&out, "Worst case over ", traces.size(),
                  traces.size() == 1 ? " trace:" : " traces:");
  for (const std::string& line : worst) absl::StrAppend(&out, "\n  ", line, ".");
  out += "\n";

  // What the columns mean.
  absl::StrAppend(&out, unit_name,
                  " = peak reserved, the memory held from the device; ratio = peak reserved / "
                  "peak allocated\n(1.000: nothing held unused)");
  if (has_native) out += "; saved = against PyTorch (pytorch-native, as modelled)";
  if (modelled) {
    absl::StrAppend(&out,
                    ";\nms/step = modelled driver time a step after warm-up (the trace's last "
                    "half) on the allocating\nthread, ",
                    device, " costs");
    if (any_total) out += " (\"total\": steps unknown, the whole trace)";
  } else {
    out += "; ms/step: not modelled (no cost table)";
  }
  out += ".\n";
  if (any_oom) out += "OOM: ran out of memory; the refused allocations were skipped.\n";
  return out;
}

absl::StatusOr<std::string> TimelineCsv(const std::vector<ReplayResult>& results) {
  if (absl::Status s = CheckTimelines(results); !s.ok()) return s;
  std::string out = "event";
  for (const ReplayResult& r : results) {
    absl::StrAppend(&out, ",", r.policy, "_allocated_bytes,", r.policy, "_reserved_bytes,",
                    r.policy, "_device_ops");
  }
  out += "\n";
  out.reserve(out.size() + results[0].events * (8 + 24 * results.size()));
  for (std::size_t i = 0; i < results[0].events; ++i) {
    absl::StrAppend(&out, i);
    for (const ReplayResult& r : results) {
      absl::StrAppend(&out, ",", r.timeline_allocated[i], ",", r.timeline_reserved[i], ",",
                      r.timeline_device_ops[i]);
    }
    out += "\n";
  }
  return out;
}

std::string EventCostsCsv(const std::vector<ReplayResult>& results) {
  std::string out =
      "policy,event,op,id,bytes,stream,address,maps,unmaps,foreground_unmaps,returns,waits,"
      "device_allocs,device_frees,allocated_bytes,reserved_bytes\n";
  for (const ReplayResult& r : results) {
    for (const EventCost& c : r.event_costs) {
      absl::StrAppend(&out, r.policy, ",", c.event, ",", std::string(1, c.op), ",", c.id, ",",
                      c.bytes, ",", c.stream, ",0x", absl::Hex(c.address), ",", c.maps, ",",
                      c.unmaps, ",", c.foreground_unmaps, ",", c.returns, ",", c.waits, ",",
                      c.device_allocs, ",", c.device_frees, ",", c.allocated, ",", c.reserved,
                      "\n");
    }
  }
  return out;
}

absl::StatusOr<std::string> PlotSvg(const std::vector<ReplayResult>& results) {
  if (absl::Status s = CheckTimelines(results); !s.ok()) return s;
  static constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                            "#9467bd", "#ff7f0e", "#8c564b"};
  constexpr double kWidth = 1040, kHeight = 560;
  constexpr double kLeft = 70, kRight = 330, kTop = 60, kBottom = 60;
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  const std::size_t n = results[0].events;
  const std::vector<ReferenceRow> refs = ReferenceRows(results[0].trace);

  // The y range covers every series and reference line; ticks at 1, 2 or 5
  // times a power of ten GiB, at most 8 of them.
  double max_gib = 0;
  for (const ReplayResult& r : results) {
    max_gib = std::max(max_gib, static_cast<double>(r.peak_reserved_bytes) / kGiB);
    max_gib = std::max(max_gib, static_cast<double>(r.peak_allocated_bytes) / kGiB);
  }
  for (const ReferenceRow& ref : refs) {
    max_gib = std::max(max_gib, static_cast<double>(ref.peak_reserved_mib) / 1024.0);
  }
  if (max_gib <= 0) max_gib = 1;
  double step = std::pow(10.0, std::floor(std::log10(max_gib)));
  for (double mult : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0}) {
    if (max_gib / (step * mult) <= 8) {
      step *= mult;
      break;
    }
  }
  const double y_max = std::ceil(max_gib / step * 1.02) * step;
  auto X = [&](double event) {
    return kLeft + (n > 1 ? event / static_cast<double>(n - 1) : 0.0) * plot_w;
  };
  auto Y = [&](double bytes) { return kTop + plot_h - bytes / kGiB / y_max * plot_h; };

  // Down-samples to at most ~2 points per horizontal pixel, keeping each
  // bucket's lowest and highest value in the order they occurred, so the
  // peaks survive.
  auto Polyline = [&](const std::vector<std::int64_t>& v) {
    std::string pts;
    const std::size_t buckets = std::min<std::size_t>(n, 1200);
    for (std::size_t b = 0; b < buckets; ++b) {
      const std::size_t lo = b * n / buckets;
      const std::size_t hi = std::max(lo + 1, (b + 1) * n / buckets);
      std::size_t imin = lo, imax = lo;
      for (std::size_t i = lo; i < hi; ++i) {
        if (v[i] < v[imin]) imin = i;
        if (v[i] > v[imax]) imax = i;
      }
      for (std::size_t i : {std::min(imin, imax), std::max(imin, imax)}) {
        absl::StrAppend(&pts, absl::StrFormat("%.1f,%.1f ", X(static_cast<double>(i)),
                                              Y(static_cast<double>(v[i]))));
      }
    }
    return pts;
  };

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppend(&svg,
                  absl::StrFormat("<text x=\"%.0f\" y=\"24\" font-size=\"16\" font-weight=\"bold\">"
                                  "%s: allocated and reserved device memory during replay</text>\n",
                                  kLeft, XmlEscape(results[0].trace)));
  absl::StrAppend(
      &svg, absl::StrFormat("<text x=\"%.0f\" y=\"42\" fill=\"#555\">%s events, backend %s, "
                            "capacity %s</text>\n",
                            kLeft, Grouped(static_cast<std::int64_t>(n)),
                            XmlEscape(results[0].backend), XmlEscape(CapacityText(results[0]))));
  // Grid and y ticks.
  for (int k = 0; k * step <= y_max + step / 2; ++k) {
    const double g = k * step;
    const double y = Y(g * kGiB);
    absl::StrAppend(
        &svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"#e5e5e5\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                              "text-anchor=\"end\">%s</text>\n",
                              kLeft, y, kLeft + plot_w, y, kLeft - 6, y + 4,
                              step < 1 ? absl::StrFormat("%.1f", g) : absl::StrFormat("%.0f", g)));
  }
  // X ticks: 0, quarters, n-1.
  for (int q = 0; q <= 4; ++q) {
    const double event = n > 1 ? static_cast<double>(n - 1) * q / 4 : 0;
    absl::StrAppend(
        &svg,
        absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", X(event),
                        kTop + plot_h + 18, Grouped(static_cast<std::int64_t>(event))));
  }
  absl::StrAppend(&svg,
                  absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                  "fill=\"none\" stroke=\"#333\"/>\n",
                                  kLeft, kTop, plot_w, plot_h));
  absl::StrAppend(&svg,
                  absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">event index"
                                  "</text>\n<text transform=\"translate(20,%.1f) rotate(-90)\" "
                                  "text-anchor=\"middle\">GiB</text>\n",
                                  kLeft + plot_w / 2, kHeight - 16, kTop + plot_h / 2));

  struct Legend {
    std::string label, color, dash;
    double width;
  };
  std::vector<Legend> legend;
  // Reference lines first, underneath.
  static constexpr const char* kRefColors[] = {"#999999", "#bbbb55", "#55bbbb"};
  for (std::size_t k = 0; k < refs.size() && k < 3; ++k) {
    const double y = Y(static_cast<double>(refs[k].peak_reserved_mib) * kMiB);
    absl::StrAppend(
        &svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"2,3\"/>\n",
                              kLeft, y, kLeft + plot_w, y, kRefColors[k]));
    legend.push_back(
        {absl::StrCat(refs[k].label.substr(0, refs[k].label.size() - 2), ": measured peak"),
         kRefColors[k], "2,3", 1.5});
  }
  // Allocated is the same for policies that round alike: then one line.
  bool same_allocated = true;
  for (const ReplayResult& r : results) {
    same_allocated = same_allocated && r.timeline_allocated == results[0].timeline_allocated;
  }
  if (same_allocated) {
    absl::StrAppend(&svg, "<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1\" points=\"",
                    Polyline(results[0].timeline_allocated), "\"/>\n");
    legend.push_back({"allocated (every policy)", "#222", "", 1});
  }
  for (std::size_t k = 0; k < results.size(); ++k) {
    const ReplayResult& r = results[k];
    const std::string color = kColors[k % 6];
    if (!same_allocated) {
      // Solid and thin, not dashed: a dash gap would hide one-event spikes.
      absl::StrAppend(&svg, "<polyline fill=\"none\" stroke=\"", color,
                      "\" stroke-opacity=\"0.55\" stroke-width=\"0.8\" points=\"",
                      Polyline(r.timeline_allocated), "\"/>\n");
      legend.push_back({absl::StrFormat("%s: allocated (peak %s MiB)", r.policy,
                                        Grouped(ToMiB(r.peak_allocated_bytes))),
                        color, "", 0.8});
    }
    absl::StrAppend(&svg, "<polyline fill=\"none\" stroke=\"", color,
                    "\" stroke-width=\"1.8\" points=\"", Polyline(r.timeline_reserved), "\"/>\n");
    legend.push_back({absl::StrFormat("%s: reserved (peak %s MiB)", r.policy,
                                      Grouped(ToMiB(r.peak_reserved_bytes))),
                      color, "", 1.8});
  }
  const double lx = kLeft + plot_w + 14;
  for (std::size_t k = 0; k < legend.size(); ++k) {
    const double y = kTop + 10 + 20.0 * static_cast<double>(k);
    absl::StrAppend(
        &svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n"
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>\n",
                              lx, y, lx + 22, y, legend[k].color, legend[k].width,
                              legend[k].dash.empty()
                                  ? ""
                                  : absl::StrCat(" stroke-dasharray=\"", legend[k].dash, "\""),
                              lx + 28, y + 4, XmlEscape(legend[k].label)));
  }
  svg += "</svg>\n";
  return svg;
}

std::string ResultsToJson(const std::vector<ReplayResult>& results) {
  std::string out = "[";
  for (std::size_t k = 0; k < results.size(); ++k) {
    const ReplayResult& r = results[k];
    std::vector<std::string> passes;
    for (double p : r.ns_per_op_passes) passes.push_back(JsonNumber(p));
    absl::StrAppend(&out, k == 0 ? "\n" : ",\n", "  {");
    absl::StrAppend(
        &out, "\"trace\": ", JsonString(r.trace), ", \"policy\": ", JsonString(r.policy),
        ", \"options\": ", JsonString(r.options), ", \"backend\": ", JsonString(r.backend),
        ", \"capacity_bytes\": ", r.capacity_bytes, ",\n   ");
    absl::StrAppend(&out, "\"events\": ", r.events, ", \"allocs\": ", r.allocs,
                    ", \"frees\": ", r.frees, ",\n   ");
    absl::StrAppend(&out, "\"peak_allocated_bytes\": ", r.peak_allocated_bytes,
                    ", \"peak_reserved_bytes\": ", r.peak_reserved_bytes,
                    ", \"peak_allocated_mib\": ", ToMiB(r.peak_allocated_bytes),
                    ", \"peak_reserved_mib\": ", ToMiB(r.peak_reserved_bytes),
                    ", \"peak_active_bytes\": ", r.peak_active_bytes,
                    ", \"end_allocated_bytes\": ", r.end_allocated_bytes,
                    ", \"end_reserved_bytes\": ", r.end_reserved_bytes, ",\n   ");
    absl::StrAppend(&out, "\"ratio\": ", JsonNumber(r.ratio),
                    ", \"run_fragmentation\": ", JsonNumber(r.run_fragmentation),
                    ", \"peak_reserved_event\": ", r.peak_reserved_event,
                    ", \"fragmentation_at_peak\": ", JsonNumber(r.fragmentation_at_peak),
                    ", \"fragmentation_at_end\": ", JsonNumber(r.fragmentation_at_end), ",\n   ");
    absl::StrAppend(&out, "\"device_allocs\": ", r.device_allocs,
                    ", \"device_frees\": ", r.device_frees, ", \"maps\": ", r.maps,
                    ", \"unmaps\": ", r.unmaps,
                    ", \"returns\": ", r.returns,
                    ", \"foreground_unmaps\": ", r.foreground_unmaps,
                    ", \"maps_per_1k_allocs\": ", JsonNumber(r.maps_per_1k_allocs),
                    ", \"unmaps_per_1k_allocs\": ", JsonNumber(r.unmaps_per_1k_allocs), ",\n   ");
    {
      std::vector<std::string> calls;
      for (int c = 0; c < kNumDriverCalls; ++c) {
        calls.push_back(absl::StrCat(JsonString(DriverCallName(static_cast<DriverCall>(c))), ": ",
                                     r.driver_calls[c]));
      }
      std::vector<std::string> late;
      for (int c = 0; c < kNumDriverCalls; ++c) {
        late.push_back(absl::StrCat(JsonString(DriverCallName(static_cast<DriverCall>(c))), ": [",
                                    r.late_driver_calls[c], ", ", r.late_background_calls[c], "]"));
      }
      absl::StrAppend(&out, "\"late_driver_calls\": {", absl::StrJoin(late, ", "), "},\n   ");
      absl::StrAppend(&out, "\"driver_calls\": {", absl::StrJoin(calls, ", "),
                      "}, \"driver_calls_total\": ", r.driver_calls_total,
                      ", \"stream_waits\": ", r.stream_waits,
                      ", \"stream_waits_by_site\": {\"under_block\": ", r.waits_under_block,
                      ", \"trim\": ", r.waits_trim, ", \"release\": ", r.waits_release, "}",
                      ", \"waited_events\": ", r.waited_events,
                      ", \"late_waited_events\": ", r.late_waited_events, ",\n   ");
      absl::StrAppend(&out, "\"steps\": ", r.steps,
                      ", \"steps_source\": ", JsonString(r.steps_source),
                      ", \"driver_calls_per_step\": ",
                      r.steps > 0 ? JsonNumber(r.driver_calls_per_step()) : "null", ",\n   ");
      if (r.driver_time_modelled) {
        absl::StrAppend(&out, "\"modelled_driver_ms\": ", JsonNumber(r.modelled_driver_us / 1000.0),
                        ", \"modelled_driver_ms_per_step\": ",
                        r.steps > 0 ? JsonNumber(r.modelled_driver_ms_per_step()) : "null",
                        ", \"background_driver_calls\": ", r.background_driver_calls,
                        ", \"background_driver_ms\": ", JsonNumber(r.background_driver_us / 1000.0),
                        ", \"caller_driver_ms_per_step\": ",
                        r.steps > 0 ? JsonNumber(r.foreground_driver_ms_per_step()) : "null",
                        ", \"late_driver_ms_per_step\": ",
                        r.steps > 1 ? JsonNumber(r.late_driver_ms_per_step()) : "null",
                        ", \"late_caller_driver_ms_per_step\": ",
                        r.steps > 1 ? JsonNumber(r.late_foreground_driver_ms_per_step()) : "null",
                        ", \"late_mapped_chunks\": ", r.late_mapped_chunks,
                        ", \"unpriced_driver_calls\": ", r.unpriced_driver_calls,
                        ", \"unpriced_driver_calls_by_kind\": ",
                        JsonString(r.unpriced_driver_calls_text),
                        ", \"driver_costs\": ", JsonString(r.driver_costs_path),
                        ", \"driver_costs_device\": ", JsonString(r.driver_costs_device),
                        ",\n   ");
      } else {
        out += "\"modelled_driver_ms\": null, \"modelled_driver_ms_per_step\": null,\n   ";
      }
    }
    absl::StrAppend(&out, "\"retries\": ", r.retries, ", \"free_alls\": ", r.free_alls,
                    ", \"ooms\": ", r.ooms, ", \"pauses\": ", r.pauses,
                    ", \"paused_bytes\": ", r.paused_bytes,
                    ", \"first_oom_event\": ", r.first_oom_event,
                    ", \"first_oom_message\": ", JsonString(r.first_oom_message),
                    ", \"fits\": ", r.fits ? "true" : "false", ",\n   ");
    absl::StrAppend(&out, "\"ns_per_op\": ", JsonNumber(r.ns_per_op), ", \"ns_per_op_passes\": [",
                    absl::StrJoin(passes, ", "), "], \"timing\": ",
                    JsonString("median over timed replays of (replay wall time / events)"));
    std::vector<ReferenceRow> refs = ReferenceRows(r.trace);
    if (!refs.empty()) {
      std::vector<std::string> items;
      for (const ReferenceRow& ref : refs) {
        items.push_back(absl::StrCat("{\"label\": ", JsonString(ref.label),
                                     ", \"peak_allocated_mib\": ", ref.peak_allocated_mib,
                                     ", \"peak_reserved_mib\": ", ref.peak_reserved_mib, "}"));
      }
      absl::StrAppend(&out, ",\n   \"pytorch_reference\": [", absl::StrJoin(items, ", "), "]");
    }
    out += "}";
  }
  out += results.empty() ? "]\n" : "\n]\n";
  return out;
}

}  // namespace ccalloc::replay
