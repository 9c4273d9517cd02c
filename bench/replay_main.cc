// ccalloc-replay: replays allocation traces through allocator policies and
// prints how much memory each would have held, and at what host cost.
//
//   ccalloc-replay traces/gpt2.trace.gz traces/resnet.trace.gz
//   ccalloc-replay --policy ccalloc --capacity 24GiB --plot out/gpt2.svg traces/gpt2.trace.gz
//
// The work is in bench/replay.{h,cc}; this file is the command line.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "allocator/backends/cuda_backend.h"
#include "bench/replay.h"
#include "bench/scenarios.h"
#include "stats/snapshot.h"

namespace ccalloc::replay {
namespace {

constexpr char kUsage[] = R"(usage: ccalloc-replay [options] TRACE...

Replays each TRACE through each policy on a simulated card (or a GPU with
--device) and says per trace, in a few lines, how much memory each policy
would hold at its peak against PyTorch's allocator (pytorch-native) and what
it costs: modelled driver time a step after warm-up on the allocating thread,
host time per call, and any out-of-memory. Then one table, a row per trace,
and each policy's worst case. E.g.:

  gpt2: PyTorch's allocator would hold 50.5 GiB at its peak for 30.2 GiB in use
  (1.674x); ccalloc holds 30.8 GiB (1.022x), 19.7 GiB less (39%).
    Driver time a step after warm-up, on the allocating thread: PyTorch 0.23 ms,
    ccalloc 0.91 ms (modelled, NVIDIA H100 80GB HBM3 costs; the last half of 20 steps).

--verbose adds the full tables per trace (fragmentation, device traffic, OOM
retries, driver calls by kind, stream waits) and their legend; --json has
every figure.

TRACE                    a trace file: ccalloc v1 text (plain or .gz) or an RMM
                         logging_resource_adaptor CSV; or scenario:<name>[:<seed>]
options:
  --policy NAME[,NAME]   pytorch-native, ccalloc (repeatable; default: both);
                         custom: only the --conf policies
  --conf "CONF"          also replay a policy named "custom": CCALLOC_CONF syntax
                         (PyTorch's PYTORCH_CUDA_ALLOC_CONF keys) on ccalloc's defaults
  --capacity SIZE        the card's memory, e.g. 24GiB (default 80 GiB, an H100);
                         with --device, a memory limit instead
  --device N             replay on CUDA device N with real device memory; every
                         trace stream is mapped to the default stream
  --repeat N             timed replays for ns/op (default 5; 0 skips timing)
  --timeline FILE.csv    allocated and reserved bytes after every event, per policy
  --events FILE.csv      every event that made driver work, per policy: the chunks it
                         mapped, unmapped (on the replaying thread), took back, the
                         waits, where its block went, memory after it
  --plot FILE.svg        allocated and reserved over the replay, per policy
  --json FILE.json       every result as a JSON list (one object per trace and policy)
  --driver-costs FILE    price the driver calls with this cost table (default:
                         bench/driver_costs/h100.json of the source tree;
                         bench/driver_costs/README.md); "none": count calls only
  --steps N              training steps each trace covers, for per-step figures
                         (default: 20 for the bundled gpt2 and resnet traces, as
                         traces/README.md gives them; none for other traces)
  --gpu-lag N            the simulated GPU runs N trace events behind the host
                         (default 0: it keeps up); a trim that must wait for
                         queued work is then counted with the events waited for
  --layout-at N          the cache's free blocks holding memory just before trace
                         event N (0-based), and what the event cost: pages mapped
                         and unmapped, where its block went
  --verbose, -v          also the full tables per trace and the worst ratios
  --no-progress          no progress display (it is shown only on a terminal anyway)
  --list-scenarios       print the scenario names and exit
  -h, --help             this text
With several traces, FILE gets the trace name before its extension
(out.svg -> out.gpt2.svg).
)";

int Usage(const std::string& error) {
  std::fprintf(stderr, "ccalloc-replay: %s\n\n%s", error.c_str(), kUsage);
  return 2;
}

// out/plot.svg + gpt2 -> out/plot.gpt2.svg (only when there are several traces).
std::string PerTracePath(const std::string& path, const std::string& trace, bool several) {
  if (!several) return path;
  std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + trace + p.extension().string())).string();
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "ccalloc-replay: cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(stderr, "wrote %s\n", path.c_str());
  return true;
}

int Main(int argc, char** argv) {
  std::vector<std::string> policy_names;
  std::vector<std::string> confs;
  std::vector<std::string> traces;
  std::string timeline_path, plot_path, json_path, events_path;
  ReplayConfig config;
  bool progress = true;
  bool verbose = false;
  std::string driver_costs_path = DefaultDriverCostsPath();
  bool driver_costs_given = false;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) == 0) {
      if (std::size_t eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_value = true;
      }
    }
    auto need = [&](std::string* out) {
      if (has_value) {
        *out = value;
        return true;
      }
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--list-scenarios") {
      for (const std::string& s : scenarios::ScenarioNames()) std::printf("%s\n", s.c_str());
      return 0;
    } else if (arg == "--policy") {
      std::string v;
      if (!need(&v)) return Usage("--policy needs a value");
      for (absl::string_view name : absl::StrSplit(v, ',', absl::SkipEmpty())) {
        policy_names.emplace_back(name);
      }
    } else if (arg == "--conf") {
      std::string v;
      if (!need(&v)) return Usage("--conf needs a value");
      confs.push_back(v);
    } else if (arg == "--capacity") {
      std::string v;
      if (!need(&v)) return Usage("--capacity needs a value");
      absl::StatusOr<std::size_t> bytes = ParseByteSize(v);
      if (!bytes.ok()) return Usage(absl::StrCat("--capacity: ", bytes.status().message()));
      if (*bytes == 0) return Usage("--capacity must be more than 0");
      config.capacity = *bytes;
    } else if (arg == "--device") {
      std::string v;
      if (!need(&v)) return Usage("--device needs a value");
      if (!absl::SimpleAtoi(v, &config.device) || config.device < 0) {
        return Usage(absl::StrCat("--device: '", v, "' is not a device ordinal"));
      }
    } else if (arg == "--repeat") {
      std::string v;
      if (!need(&v)) return Usage("--repeat needs a value");
      if (!absl::SimpleAtoi(v, &config.timing_repetitions) || config.timing_repetitions < 0 ||
          config.timing_repetitions > 1000) {
        return Usage(absl::StrCat("--repeat: '", v, "' is not a count in 0..1000"));
      }
    } else if (arg == "--timeline") {
      if (!need(&timeline_path)) return Usage("--timeline needs a file");
    } else if (arg == "--events") {
      if (!need(&events_path)) return Usage("--events needs a file");
    } else if (arg == "--plot") {
      if (!need(&plot_path)) return Usage("--plot needs a file");
    } else if (arg == "--json") {
      if (!need(&json_path)) return Usage("--json needs a file");
    } else if (arg == "--driver-costs") {
      if (!need(&driver_costs_path)) return Usage("--driver-costs needs a file");
      driver_costs_given = true;
    } else if (arg == "--steps") {
      std::string v;
      if (!need(&v)) return Usage("--steps needs a value");
      if (!absl::SimpleAtoi(v, &config.steps) || config.steps <= 0) {
        return Usage(absl::StrCat("--steps: '", v, "' is not a count of steps > 0"));
      }
    } else if (arg == "--gpu-lag") {
      std::string v;
      if (!need(&v)) return Usage("--gpu-lag needs a value");
      if (!absl::SimpleAtoi(v, &config.gpu_lag)) {
        return Usage(absl::StrCat("--gpu-lag: '", v, "' is not a count of events >= 0"));
      }
    } else if (arg == "--layout-at") {
      std::string v;
      if (!need(&v)) return Usage("--layout-at needs a value");
      if (!absl::SimpleAtoi(v, &config.layout_at) || config.layout_at < 0) {
        return Usage(absl::StrCat("--layout-at: '", v, "' is not a trace event number >= 0"));
      }
    } else if (arg == "--no-progress") {
      progress = false;
    } else if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return Usage(absl::StrCat("unknown option '", arg, "'"));
    } else {
      traces.push_back(arg);
    }
  }
  if (traces.empty()) return Usage("no trace given");

  // Policies: the presets asked for (both by default), then the custom ones.
  std::vector<Policy> policies;
  if (policy_names.empty()) policy_names = PresetNames();
  std::set<std::string> seen;
  for (const std::string& name : policy_names) {
    if (!seen.insert(name).second) continue;
    // "custom" names the --conf policies, which follow: asked for alone, they
    // are all that is replayed.
    if (name == "custom") {
      if (confs.empty()) return Usage("--policy custom needs --conf");
      continue;
    }
    absl::StatusOr<Policy> p = PresetPolicy(name);
    if (!p.ok()) return Usage(std::string(p.status().message()));
    policies.push_back(*p);
  }
  for (std::size_t k = 0; k < confs.size(); ++k) {
    absl::StatusOr<Policy> p =
        CustomPolicy(confs[k], k == 0 ? "custom" : absl::StrCat("custom-", k + 1));
    if (!p.ok()) return Usage(std::string(p.status().message()));
    policies.push_back(*p);
  }

  if (driver_costs_path != "none") {
    absl::StatusOr<DriverCostTable> table = LoadDriverCostTable(driver_costs_path);
    if (table.ok()) {
      config.driver_costs = std::make_shared<const DriverCostTable>(*std::move(table));
    } else if (driver_costs_given || !absl::IsNotFound(table.status())) {
      // A table asked for, or a default one that is broken, is an error; only
      // a default table missing (an installed binary) goes without a model.
      std::fprintf(stderr, "ccalloc-replay: %s\n", std::string(table.status().message()).c_str());
      return 1;
    } else {
      std::fprintf(stderr, "ccalloc-replay: no driver cost table (%s); driver time not modelled\n",
                   std::string(table.status().message()).c_str());
    }
  }

  if (config.device >= 0 && !CudaDeviceAvailable()) {
    std::fprintf(stderr, "ccalloc-replay: --device %d: no CUDA device is available\n",
                 config.device);
    return 1;
  }
  config.progress = progress && isatty(STDERR_FILENO) == 1;
  config.record_timeline = !timeline_path.empty() || !plot_path.empty();
  config.record_events = !events_path.empty();

  const bool several = traces.size() > 1;
  std::vector<ReplayResult> all;
  bool ok = true;
  {
    std::vector<std::string> names;
    for (const Policy& p : policies) {
      names.push_back(p.name == "pytorch-native"
                          ? "pytorch-native (a model of PyTorch's native caching allocator)"
                          : p.name);
    }
    std::string listed = names.back();
    if (names.size() > 1) {
      listed = absl::StrCat(absl::StrJoin(names.begin(), names.end() - 1, ", "), " and ", listed);
    }
    std::printf(
        "ccalloc-replay: %zu trace%s through %s, on %s.\n\n", traces.size(), several ? "s" : "",
        listed.c_str(),
        config.device >= 0
            ? absl::StrCat("CUDA device ", config.device,
                           config.capacity > 0
                               ? absl::StrCat(" (memory limit ", FormatBytes(config.capacity), ")")
                               : "")
                  .c_str()
            : absl::StrCat("a simulated ",
                           FormatBytes(config.capacity > 0 ? config.capacity : kDefaultSimCapacity),
                           " card (no GPU)")
                  .c_str());
  }
  for (const std::string& spec : traces) {
    absl::StatusOr<Trace> trace = LoadTrace(spec);
    if (!trace.ok()) {
      std::fprintf(stderr, "ccalloc-replay: %s\n", std::string(trace.status().message()).c_str());
      return 1;
    }
    std::set<std::uint64_t> streams;
    std::uint64_t allocs = 0;
    for (const TraceEvent& e : trace->events) {
      if (e.op == TraceEvent::Op::kAlloc) {
        streams.insert(e.stream);
        ++allocs;
      }
    }
    std::string where =
        config.device >= 0
            ? absl::StrCat("CUDA device ", config.device,
                           streams.size() > 1 ? " (all trace streams on the default stream)" : "",
                           config.capacity > 0
                               ? absl::StrCat(", memory limit ", FormatBytes(config.capacity))
                               : "")
            : absl::StrCat(
                  "SimBackend, capacity ",
                  FormatBytes(config.capacity > 0 ? config.capacity : kDefaultSimCapacity));
    if (verbose) {
      std::printf("== %s (%s): %zu events, %llu allocations, %zu stream%s; %s; ns/op: %s\n",
                  trace->name.c_str(), spec.c_str(), trace->events.size(),
                  static_cast<unsigned long long>(allocs), streams.size(),
                  streams.size() == 1 ? "" : "s", where.c_str(),
                  config.timing_repetitions > 0
                      ? absl::StrCat("median of ", config.timing_repetitions,
                                     " timed replays (host time per allocate or free)")
                            .c_str()
                      : "not timed");
    }
    std::fflush(stdout);

    std::vector<ReplayResult> results;
    for (const Policy& policy : policies) {
      absl::StatusOr<ReplayResult> r = Replay(*trace, policy, config);
      if (!r.ok()) {
        std::fprintf(stderr, "ccalloc-replay: %s with %s: %s\n", trace->name.c_str(),
                     policy.name.c_str(), std::string(r.status().message()).c_str());
        return 1;
      }
      results.push_back(*std::move(r));
    }
    std::printf("%s", FormatTraceReport(results, verbose).c_str());
    std::fflush(stdout);

    if (!timeline_path.empty()) {
      absl::StatusOr<std::string> csv = TimelineCsv(results);
      ok = csv.ok() && WriteFile(PerTracePath(timeline_path, trace->name, several), *csv) && ok;
    }
    if (!events_path.empty()) {
      ok = WriteFile(PerTracePath(events_path, trace->name, several), EventCostsCsv(results)) && ok;
    }
    if (!plot_path.empty()) {
      absl::StatusOr<std::string> svg = PlotSvg(results);
      ok = svg.ok() && WriteFile(PerTracePath(plot_path, trace->name, several), *svg) && ok;
    }
    for (ReplayResult& r : results) {
      // The JSON carries no timelines; free them before the next trace.
      r.timeline_allocated = {};
      r.timeline_reserved = {};
      r.timeline_device_ops = {};
      r.event_costs = {};
      all.push_back(std::move(r));
    }
  }
  std::printf("%s", FormatOverview(all).c_str());
  if (verbose) {
    std::printf("\n%s", FormatSummary(all).c_str());
    std::printf(
        "ratio = peak reserved / peak allocated; frag run = 1 - peak allocated / peak reserved;\n"
        "frag@peak, frag@end = (free cached - largest free block) / free cached, when reserved\n"
        "first peaked and after the last event; (un)maps/1k = page maps + unmaps per 1,000\n"
        "allocations; free-alls = synchronize-and-free-everything steps of the OOM path.\n"
        "Driver calls: dev alloc/free = cuMemAlloc/cuMemFree; create, map (a chunk mapped with\n"
        "its access: cuMemMap + cuMemSetAccess), set acc (peers), unmap, release =\n"
        "cuMemCreate/Map/SetAccess/Unmap/Release; reserve, free rng = cuMemAddressReserve/\n"
        "Free; ev rec, ev query, ev sync = cuEventRecord/Query/Synchronize; dev sync =\n"
        "cuCtxSynchronize; stream waits = waits before unmapping memory freed by work that may\n"
        "still be queued (each an ev sync on a stream's mark or on a new event).\n");
  } else {
    std::printf(
        "Each trace's full tables (fragmentation, driver calls by kind, stream waits, OOM "
        "retries): --verbose; every figure: --json FILE.\n");
  }
  if (!json_path.empty()) ok = WriteFile(json_path, ResultsToJson(all)) && ok;
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace ccalloc::replay

int main(int argc, char** argv) { return ccalloc::replay::Main(argc, argv); }
