// ccalloc-gpu-bench: host cost per allocate or free on a real GPU, ccalloc
// against the CUDA allocators, in one process.
//
//   (a) ccalloc on CudaBackend: the pytorch-native policy, the default,
//       the default with inline unmaps, and the default again as the last
//       column (what the place in the order costs)
//   (b) cudaMalloc / cudaFree
//   (c) cudaMallocAsync / cudaFreeAsync on the default stream, from the
//       device's default memory pool with its release threshold at UINT64_MAX
//       so that it caches (as PyTorch's cudaMallocAsync backend sets it)
//
// The patterns are bench/patterns.h (hot pair of 512 B, 64 KiB, 4 MiB,
// 64 MiB; churn with W = 100 and 1000), the same ones ccalloc-bench and
// bench/torch_alloc_bench.py time. Each measurement is repeated (7 times by
// default); a repetition times a batch of operations with steady_clock and
// divides by their number, the repetitions of the allocators on one pattern
// taking turns (rounds), and the report gives the median, then ccalloc's
// driver calls per 1,000 operations. Time is host time: stream-ordered
// frees return before the GPU has done anything.
//
// Not Google Benchmark: a plain program can put any allocator in the same
// table. The CUDA runtime is linked statically and opens the driver itself,
// so the binary starts anywhere; without a device it says so and exits 0.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "allocator/backends/cuda_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "bench/patterns.h"

namespace ccalloc::bench {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "ccalloc-gpu-bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) Die(absl::StrCat(what, ": ", cudaGetErrorString(e)));
}

// One allocator under test. Allocate returns null on failure (then the
// benchmark stops with a message): a benchmark has nothing to recover.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string name() const = 0;
  virtual void* Allocate(std::size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  // Driver calls made so far that an operation can cause (maps, unmaps,
  // creates and releases or device allocations, stream waits), or -1 where
  // the allocator does not count them: a hot path that should make none
  // shows whether it did.
  virtual std::int64_t DriverCalls() const { return -1; }
};

class CcallocAllocator : public Allocator {
 public:
  CcallocAllocator(std::string policy, const Options& options, int device) : name_(policy) {
    absl::StatusOr<std::unique_ptr<DeviceBackend>> backend = CreateCudaBackend(device);
    if (!backend.ok()) Die(std::string(backend.status().message()));
    allocator_ = std::make_unique<DeviceAllocator>(std::move(*backend), options);
  }
  std::string name() const override { return absl::StrCat("ccalloc:", name_); }
  std::int64_t DriverCalls() const override {
    const MemoryStats s = allocator_->GetStats();
    return s.num_maps + s.num_unmaps + s.num_device_alloc + s.num_device_free +
           s.num_stream_syncs;
  }
  void* Allocate(std::size_t bytes) override {
    absl::StatusOr<DevicePtr> p = allocator_->Allocate(bytes, 0);
    if (!p.ok()) Die(std::string(p.status().message()));
    return reinterpret_cast<void*>(*p);
  }
  void Free(void* ptr) override {
    if (absl::Status s = allocator_->Free(reinterpret_cast<DevicePtr>(ptr)); !s.ok()) {
      Die(std::string(s.message()));
    }
  }

 private:
  std::string name_;
  std::unique_ptr<DeviceAllocator> allocator_;
};

class CudaMallocAllocator : public Allocator {
 public:
  std::string name() const override { return "cudaMalloc"; }
  void* Allocate(std::size_t bytes) override {
    void* p = nullptr;
    Check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
  }
  void Free(void* ptr) override { Check(cudaFree(ptr), "cudaFree"); }
};

class CudaMallocAsyncAllocator : public Allocator {
 public:
  explicit CudaMallocAsyncAllocator(int device) {
    Check(cudaDeviceGetDefaultMemPool(&pool_, device), "cudaDeviceGetDefaultMemPool");
    std::uint64_t threshold = UINT64_MAX;
    Check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold),
          "cudaMemPoolSetAttribute(release threshold)");
  }
  ~CudaMallocAsyncAllocator() override {
    // Give the cached memory back so the next allocator starts from the same
    // device state.
    (void)cudaDeviceSynchronize();
    (void)cudaMemPoolTrimTo(pool_, 0);
  }
  std::string name() const override { return "cudaMallocAsync"; }
  void* Allocate(std::size_t bytes) override {
    void* p = nullptr;
    Check(cudaMallocAsync(&p, bytes, cudaStreamLegacy), "cudaMallocAsync");
    return p;
  }
  void Free(void* ptr) override { Check(cudaFreeAsync(ptr, cudaStreamLegacy), "cudaFreeAsync"); }

 private:
  cudaMemPool_t pool_ = nullptr;
};

// No allocator: a fixed amount of host work per call (a chain of 32
// dependent shift-xor-multiplies, which no compiler folds: ~41 ns on the
// build machine), timed in the same rounds as the allocators. The host
// runs in states whose speed differs by 2x (an
// H100 machine, 2026-11-26: every allocator's hot pair read 51-81 ns in
// some rounds and 102-137 in others, the classic policy's and PyTorch's
// alike); this column says which state a round ran in, so that a slow
// round is seen to be the host's and not an allocator's.
class HostReference : public Allocator {
 public:
  std::string name() const override { return "host-ref"; }
  void* Allocate(std::size_t bytes) override {
    Work(bytes);
    return reinterpret_cast<void*>(std::uintptr_t{1} << 12);  // never dereferenced
  }
  void Free(void* ptr) override { Work(reinterpret_cast<std::uintptr_t>(ptr)); }

 private:
  void Work(std::uint64_t seed) {
    std::uint64_t x = state_ ^ seed;
    for (int i = 0; i < 32; ++i) x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ULL;
    state_ = x;
  }
  // Kept across calls so the chain cannot be folded away.
  volatile std::uint64_t state_ = 0;
};

struct Measurement {
  std::string allocator;
  std::string pattern;  // "hot_pair/65536", "churn/W:1000"
  double ns_per_op = 0;
  std::vector<double> reps;
  // Driver calls per 1,000 operations over the timed repetitions (and the
  // batch sizing before them), or -1 where the allocator does not count.
  double calls_per_1k_ops = -1;
};

// One allocator on one pattern, set up and ready to time: its batch of steps
// (about `target_ms` long, found by calibration) is timed once per round.
struct Case {
  std::unique_ptr<Allocator> allocator;
  std::function<void()> step;
  double ops_per_step = 2.0;
  std::size_t batch = 1;
  std::int64_t steps = 0;  // steps taken since calls_before was read
  std::int64_t calls_before = -1;
  std::vector<void*> live;  // a churn's live blocks, freed at the end
  Measurement m;
};

// Finds the batch of `c`'s steps that takes about `target_ms`.
void Calibrate(Case& c, int target_ms) {
  c.calls_before = c.allocator->DriverCalls();
  const Calibration cal = CalibrateBatch(c.step, target_ms);
  c.batch = cal.batch;
  c.steps += static_cast<std::int64_t>(cal.steps);
}

// One timed batch of `c`: host ns per operation.
void TimeOnce(Case& c) {
  c.m.reps.push_back(TimeBatch(c.step, c.batch, c.ops_per_step));
  c.steps += static_cast<std::int64_t>(c.batch);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Sets `c` up for the hot pair of `bytes`: the cached path is what is timed.
void SetUpHotPair(Case& c, std::size_t bytes) {
  Allocator* a = c.allocator.get();
  a->Free(a->Allocate(bytes));
  c.step = [a, bytes] { a->Free(a->Allocate(bytes)); };
  c.m.pattern = absl::StrCat("hot_pair/", bytes);
}

// Sets `c` up for the churn of `window`: W blocks live, then each step
// frees one and allocates another, after one warming pass over the schedule
// (at most two seconds: cudaMalloc has no cache to warm and is slow).
void SetUpChurn(Case& c, int window) {
  auto schedule = std::make_shared<const ChurnSchedule>(MakeChurnSchedule(window));
  Allocator* a = c.allocator.get();
  for (std::size_t bytes : schedule->prefill) c.live.push_back(a->Allocate(bytes));
  auto next = std::make_shared<std::size_t>(0);
  std::vector<void*>* live = &c.live;
  c.step = [a, schedule, next, live] {
    const std::size_t i = (*next)++ & (kChurnSteps - 1);
    void*& slot = (*live)[schedule->victims[i]];
    a->Free(slot);
    slot = a->Allocate(schedule->sizes[i]);
  };
  const auto warm_until = Clock::now() + std::chrono::seconds(2);
  for (std::size_t i = 0; i < kChurnSteps && Clock::now() < warm_until; ++i) c.step();
  c.m.pattern = absl::StrCat("churn/W:", window);
}

std::string Json(const std::string& device, const std::vector<Measurement>& ms) {
  std::string out = absl::StrCat("{\"device\": \"", device, "\", \"results\": [");
  for (std::size_t k = 0; k < ms.size(); ++k) {
    std::vector<std::string> reps;
    for (double r : ms[k].reps) reps.push_back(absl::StrFormat("%.2f", r));
    absl::StrAppend(&out, k == 0 ? "\n" : ",\n",
                    absl::StrFormat("  {\"allocator\": \"%s\", \"pattern\": \"%s\", "
                                    "\"ns_per_op\": %.2f, \"driver_calls_per_1k_ops\": %.3f, "
                                    "\"reps\": [%s]}",
                                    ms[k].allocator, ms[k].pattern, ms[k].ns_per_op,
                                    ms[k].calls_per_1k_ops, absl::StrJoin(reps, ", ")));
  }
  out += "\n]}\n";
  return out;
}

int Main(int argc, char** argv) {
  std::string json_path;
  std::vector<std::string> confs;
  int reps = 7;
  int device = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(absl::StrCat(arg, " needs a value"));
      return argv[++i];
    };
    if (arg == "--json") {
      json_path = value();
    } else if (arg == "--reps") {
      if (!absl::SimpleAtoi(value(), &reps) || reps < 1 || reps > 100) Die("--reps: 1..100");
    } else if (arg == "--device") {
      if (!absl::SimpleAtoi(value(), &device) || device < 0) Die("--device: an ordinal");
    } else if (arg == "--conf") {
      confs.push_back(value());
    } else if (arg == "-h" || arg == "--help") {
      std::printf(
          "usage: ccalloc-gpu-bench [--json FILE] [--reps N (7)] [--device N (0)] [--conf CONF]...\n"
          "Host ns per allocate or free: ccalloc (both policies), cudaMalloc and\n"
          "cudaMallocAsync, on the hot-pair and churn patterns of bench/patterns.h;\n"
          "\"host-ref\" is no allocator but a fixed amount of host work per call, timed\n"
          "in the same rounds: the host's speed in each round.\n"
          "--conf CONF (repeatable) adds a column \"conf<i>\": ccalloc's defaults with\n"
          "CONF (CCALLOC_CONF syntax) on top, timed in the same rounds as the rest.\n");
      return 0;
    } else {
      Die(absl::StrCat("unknown argument '", arg, "' (see --help)"));
    }
  }

  Options ours = DefaultOptions();
  ours.expandable_segments = true;
  // Parsed before anything is timed: a bad CONF fails the run at once.
  std::vector<Options> conf_options;
  for (const std::string& conf : confs) {
    absl::StatusOr<Options> parsed = ParseOptions(conf, ours);
    if (!parsed.ok()) Die(absl::StrCat("--conf '", conf, "': ", parsed.status().message()));
    conf_options.push_back(*parsed);
  }

  int count = 0;
  if (!CudaDeviceAvailable() || cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: skipped\n");
    return 0;
  }
  if (device >= count) Die(absl::StrCat("--device ", device, ": only ", count, " devices"));
  Check(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  Check(cudaFree(nullptr), "cudaFree(0)");  // create the primary context up front
  std::printf("device %d: %s; %d repetitions, median shown; host ns per allocate or free\n", device,
              prop.name, reps);

  using Factory = std::function<std::unique_ptr<Allocator>()>;
  std::vector<Factory> factories = {
      [&] {
        return std::make_unique<CcallocAllocator>("pytorch-native", PytorchNativeOptions(), device);
      },
      [&] { return std::make_unique<CcallocAllocator>("ccalloc", ours, device); },
      // The default with its unmaps made on the allocating thread
      // (background_unmap:0): what the unmap worker takes off it.
      [&] {
        Options inline_unmaps = ours;
        inline_unmaps.background_unmap = false;
        return std::make_unique<CcallocAllocator>("ccalloc-inline-unmap", inline_unmaps, device);
      },
      [] { return std::make_unique<CudaMallocAllocator>(); },
      [&] { return std::make_unique<CudaMallocAsyncAllocator>(device); },
      // The default once more, last: the same code as the second column, so
      // a gap between the two is the place in the order (the CPU, the
      // driver's state), not the policy.
      [&] { return std::make_unique<CcallocAllocator>("ccalloc-again", ours, device); },
      [] { return std::make_unique<HostReference>(); },
  };
  for (std::size_t i = 0; i < conf_options.size(); ++i) {
    factories.push_back([&, i] {
      return std::make_unique<CcallocAllocator>(absl::StrCat("conf", i + 1), conf_options[i],
                                                device);
    });
  }

  std::vector<std::string> patterns;
  for (std::size_t bytes : kHotPairSizes) patterns.push_back(absl::StrCat("hot_pair/", bytes));
  for (int w : kChurnWindows) patterns.push_back(absl::StrCat("churn/W:", w));

  std::vector<Measurement> all;
  std::vector<std::string> names;
  // Pattern by pattern, every allocator set up side by side (a fresh one per
  // pattern: no pattern inherits another's cache), then timed in rounds: each
  // round times one batch of every allocator, starting one further along
  // each time. Whatever slows the host for a while (another process on the
  // CPU, the driver's housekeeping) then falls on one round of every
  // allocator alike, and the median over the rounds drops it, instead of
  // landing on all the repetitions of whichever allocator ran then.
  for (const std::string& pattern : patterns) {
    std::vector<Case> cases;
    cases.reserve(factories.size());  // a churn's step points into its Case
    for (const Factory& make : factories) {
      Case& c = cases.emplace_back();
      c.allocator = make();
      c.m.allocator = c.allocator->name();
      if (std::find(names.begin(), names.end(), c.m.allocator) == names.end()) {
        names.push_back(c.m.allocator);
      }
      std::fprintf(stderr, "  %s %s...\n", c.m.allocator.c_str(), pattern.c_str());
      if (pattern.rfind("hot_pair/", 0) == 0) {
        std::size_t bytes = 0;
        (void)absl::SimpleAtoi(pattern.substr(9), &bytes);
        SetUpHotPair(c, bytes);
        Calibrate(c, 40);
      } else {
        int w = 0;
        (void)absl::SimpleAtoi(pattern.substr(8), &w);
        SetUpChurn(c, w);
        Calibrate(c, 60);
      }
    }
    for (int r = 0; r < reps; ++r) {
      for (std::size_t k = 0; k < cases.size(); ++k) {
        TimeOnce(cases[(k + static_cast<std::size_t>(r)) % cases.size()]);
      }
    }
    for (Case& c : cases) {
      if (c.calls_before >= 0 && c.steps > 0) {
        c.m.calls_per_1k_ops = 1000.0 *
                               static_cast<double>(c.allocator->DriverCalls() - c.calls_before) /
                               (c.ops_per_step * static_cast<double>(c.steps));
      }
      c.m.ns_per_op = Median(c.m.reps);
      for (void* p : c.live) c.allocator->Free(p);
      all.push_back(std::move(c.m));
    }
    cases.clear();
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  auto find = [&](const std::string& alloc, const std::string& pattern) -> double {
    for (const Measurement& m : all) {
      if (m.allocator == alloc && m.pattern == pattern) return m.ns_per_op;
    }
    return 0;
  };
  std::printf("%-16s", "pattern");
  for (const std::string& n : names) std::printf(" %22s", n.c_str());
  std::printf("   %s\n", "ccalloc:ccalloc vs cudaMalloc / vs cudaMallocAsync");
  for (const std::string& p : patterns) {
    std::printf("%-16s", p.c_str());
    for (const std::string& n : names) std::printf(" %22.1f", find(n, p));
    const double ours_ns = find("ccalloc:ccalloc", p);
    std::printf("   %.3fx / %.3fx\n", ours_ns / find("cudaMalloc", p),
                ours_ns / find("cudaMallocAsync", p));
  }
  std::printf("(ratios below 1 mean ccalloc takes less host time per operation)\n");
  std::printf("driver calls per 1,000 operations (maps, unmaps, creates, releases, waits):\n");
  for (const std::string& p : patterns) {
    std::printf("%-16s", p.c_str());
    for (const std::string& n : names) {
      double calls = -1;
      for (const Measurement& m : all) {
        if (m.allocator == n && m.pattern == p) calls = m.calls_per_1k_ops;
      }
      if (calls < 0) {
        std::printf(" %22s", "-");
      } else {
        std::printf(" %22.3f", calls);
      }
    }
    std::printf("\n");
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << Json(prop.name, all);
    if (!out) Die(absl::StrCat("cannot write ", json_path));
    std::fprintf(stderr, "wrote %s\n", json_path.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace ccalloc::bench

int main(int argc, char** argv) { return ccalloc::bench::Main(argc, argv); }
