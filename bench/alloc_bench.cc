// ccalloc-bench: host cost of the allocator's paths on SimBackend.
//
// The simulated device makes every device call nearly free, so these numbers
// are the allocator's own bookkeeping: what a program pays per allocate or
// free once the cache is warm. Each benchmark runs for both policies:
//   HotPair/<policy>/<bytes>             allocate + free of one size
//   Churn/<policy>/W:<window>            free a random live block, allocate another
//   Contention/<policy>/<stream>/threads:N  hot pair (64 KiB) from N threads on
//                                        one allocator, each thread on its own
//                                        stream or all on stream 0
//   PluginPair/<bytes>                   the hot pair through the PyTorch
//                                        plugin's C functions, the path every
//                                        tensor's allocate and free takes under
//                                        ccalloc.torch (its default policy)
// The patterns are bench/patterns.h, shared with ccalloc-gpu-bench and the
// PyTorch comparison. time_per_op is the CPU time per allocate or free (an
// iteration of HotPair or Churn is two operations); for Contention it is
// wall time divided by the operations of all threads (the aggregate rate).
// CCALLOC_CONF applies to the ccalloc policy (a bad one is an error), so one
// knob can be tried without a rebuild: CCALLOC_CONF=hold_reserved:False.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "bench/patterns.h"
#include "benchmark/benchmark.h"
#if CCALLOC_BENCH_PLUGIN
#include "python/ccalloc/csrc/ccalloc_torch.h"
#endif

namespace ccalloc::bench {
namespace {

struct NamedPolicy {
  const char* name;
  Options options;
};

// `ours`: ccalloc's policy as CCALLOC_CONF leaves it (see main).
std::vector<NamedPolicy> Policies(const Options& ours) {
  return {{"pytorch-native", PytorchNativeOptions()}, {"ccalloc", ours}};
}

std::unique_ptr<DeviceAllocator> MakeAllocator(const Options& options) {
  SimBackend::Config config;
  // An 80 GiB card (an H100), as the replay tool assumes: room for either
  // policy's cache under churn. Growable segments size their address range
  // after it, so it also sets how many pages a segment has.
  config.capacity = std::size_t{80} << 30;
  config.auto_complete_events = true;
  return std::make_unique<DeviceAllocator>(std::make_unique<SimBackend>(config), options);
}

// Seconds per operation (shown as e.g. "61.5ns"): the inverse of the rate of
// operations. Like items_per_second it is measured in CPU time unless the
// benchmark uses real time.
benchmark::Counter TimePerOp(double ops) {
  return benchmark::Counter(ops, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void HotPair(benchmark::State& state, const Options& options) {
  const auto size = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<DeviceAllocator> allocator = MakeAllocator(options);
  // The first pair creates the segment; the benchmark is the cached path.
  absl::StatusOr<DevicePtr> warm = allocator->Allocate(size, 0);
  if (!warm.ok() || !allocator->Free(*warm).ok()) {
    state.SkipWithError("warm-up allocation failed");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<DevicePtr> ptr = allocator->Allocate(size, 0);
    if (!ptr.ok()) {
      state.SkipWithError(std::string(ptr.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(*ptr);
    if (!allocator->Free(*ptr).ok()) {
      state.SkipWithError("free failed");
      break;
    }
  }
  const double ops = 2.0 * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(ops));
  state.counters["time_per_op"] = TimePerOp(ops);
}

void Churn(benchmark::State& state, const Options& options, int window) {
  const ChurnSchedule schedule = MakeChurnSchedule(window);
  std::unique_ptr<DeviceAllocator> allocator = MakeAllocator(options);
  std::vector<DevicePtr> live;
  live.reserve(schedule.prefill.size());
  for (std::size_t bytes : schedule.prefill) {
    absl::StatusOr<DevicePtr> ptr = allocator->Allocate(bytes, 0);
    if (!ptr.ok()) {
      state.SkipWithError("prefill failed");
      return;
    }
    live.push_back(*ptr);
  }
  // One pass over the schedule before timing, so the cache holds what the
  // pattern needs and the timed steps measure reuse, not growth.
  std::size_t step = 0;
  auto Step = [&]() -> bool {
    const std::size_t i = step++ & (kChurnSteps - 1);
    DevicePtr& slot = live[schedule.victims[i]];
    if (!allocator->Free(slot).ok()) return false;
    absl::StatusOr<DevicePtr> ptr = allocator->Allocate(schedule.sizes[i], 0);
    if (!ptr.ok()) return false;
    slot = *ptr;
    return true;
  };
  for (std::size_t i = 0; i < kChurnSteps; ++i) {
    if (!Step()) {
      state.SkipWithError("warm-up churn failed");
      return;
    }
  }
  const MemoryStats before = allocator->GetStats();
  for (auto _ : state) {
    if (!Step()) {
      state.SkipWithError("churn step failed");
      break;
    }
    benchmark::DoNotOptimize(live.data());
  }
  const double ops = 2.0 * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(ops));
  state.counters["time_per_op"] = TimePerOp(ops);
  const MemoryStats stats = allocator->GetStats();
  // Driver calls in the timed loop, per 1,000 operations: each costs tens of
  // microseconds on a GPU, which the simulated device does not charge, so a
  // policy that remaps under churn looks cheaper here than on a card.
  const double per_k = ops > 0 ? 1000.0 / ops : 0.0;
  state.counters["maps_per_kop"] = static_cast<double>(stats.num_maps - before.num_maps) * per_k;
  state.counters["unmaps_per_kop"] =
      static_cast<double>(stats.num_unmaps - before.num_unmaps) * per_k;
  state.counters["device_allocs_per_kop"] =
      static_cast<double>(stats.num_device_alloc - before.num_device_alloc) * per_k;
  state.counters["reserved_over_allocated"] =
      static_cast<double>(stats.reserved_bytes[kStatAll].peak) /
      static_cast<double>(stats.allocated_bytes[kStatAll].peak);
}

// Shared by the threads of one Contention run: thread 0 creates it before the
// loop (the loop's start barrier orders that before any other thread's use)
// and Teardown, which runs once all threads are done, destroys it.
std::unique_ptr<DeviceAllocator> g_shared;

void Contention(benchmark::State& state, const Options& options, bool own_stream) {
  constexpr std::size_t kSize = std::size_t{64} << 10;
  if (state.thread_index() == 0) g_shared = MakeAllocator(options);
  const StreamId stream = own_stream ? static_cast<StreamId>(state.thread_index() + 1) : 0;
  for (auto _ : state) {
    absl::StatusOr<DevicePtr> ptr = g_shared->Allocate(kSize, stream);
    if (!ptr.ok()) {
      state.SkipWithError("allocation failed");
      break;
    }
    benchmark::DoNotOptimize(*ptr);
    if (!g_shared->Free(*ptr).ok()) {
      state.SkipWithError("free failed");
      break;
    }
  }
  const double ops = 2.0 * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(ops));
  // Summed over threads and divided by wall time (UseRealTime): aggregate.
  state.counters["time_per_op"] = TimePerOp(ops);
}

#if CCALLOC_BENCH_PLUGIN
// What the extension adds above the core: finding the allocator of the
// device, the free's search for the owner (uncached and MemPool-allocator
// blocks first), the C boundary. On device 0 of the plugin's simulated card
// (main sets CCALLOC_TORCH_SIMULATE), warm as HotPair is.
void PluginPair(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  void* ptr = nullptr;
  if (ccalloc_torch_try_malloc(size, 0, nullptr, &ptr) != 0 || ccalloc_torch_free_ptr(ptr) != 0) {
    state.SkipWithError(ccalloc_torch_last_error());
    return;
  }
  for (auto _ : state) {
    if (ccalloc_torch_try_malloc(size, 0, nullptr, &ptr) != 0) {
      state.SkipWithError(ccalloc_torch_last_error());
      break;
    }
    benchmark::DoNotOptimize(ptr);
    if (ccalloc_torch_free_ptr(ptr) != 0) {
      state.SkipWithError(ccalloc_torch_last_error());
      break;
    }
  }
  const double ops = 2.0 * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(ops));
  state.counters["time_per_op"] = TimePerOp(ops);
}
#endif

void TearDownShared(const benchmark::State&) { g_shared.reset(); }

void RegisterAll(const Options& ours) {
  for (const NamedPolicy& p : Policies(ours)) {
    const Options options = p.options;
    for (std::size_t size : kHotPairSizes) {
      benchmark::RegisterBenchmark(absl::StrCat("HotPair/", p.name).c_str(),
                                   [options](benchmark::State& s) { HotPair(s, options); })
          ->Arg(static_cast<std::int64_t>(size));
    }
    for (int window : kChurnWindows) {
      benchmark::RegisterBenchmark(
          absl::StrCat("Churn/", p.name, "/W:", window).c_str(),
          [options, window](benchmark::State& s) { Churn(s, options, window); });
    }
    for (bool own : {true, false}) {
      benchmark::RegisterBenchmark(
          absl::StrCat("Contention/", p.name, own ? "/own-stream" : "/same-stream").c_str(),
          [options, own](benchmark::State& s) { Contention(s, options, own); })
          ->ThreadRange(1, 8)
          ->UseRealTime()
          ->Teardown(TearDownShared);
    }
  }
#if CCALLOC_BENCH_PLUGIN
  for (std::size_t size : kHotPairSizes) {
    benchmark::RegisterBenchmark("PluginPair", PluginPair)->Arg(static_cast<std::int64_t>(size));
  }
#endif
}

}  // namespace
}  // namespace ccalloc::bench

int main(int argc, char** argv) {
#if CCALLOC_BENCH_PLUGIN
  setenv("CCALLOC_TORCH_SIMULATE", "80GiB", 1);  // before the plugin's first allocator
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ccalloc::Options ours = ccalloc::DefaultOptions();
  ours.expandable_segments = true;
  absl::StatusOr<ccalloc::Options> conf = ccalloc::OptionsFromEnvironment(ours);
  if (!conf.ok()) {
    std::fprintf(stderr, "ccalloc-bench: %s\n", std::string(conf.status().message()).c_str());
    return 2;
  }
  ccalloc::bench::RegisterAll(*conf);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
