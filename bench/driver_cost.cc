// ccalloc-driver-cost: host time per driver call on a real GPU, written as the
// cost table the replay models driver time with (bench/driver_costs.h).
//
//   ccalloc-driver-cost [--device N] [--reps N] [--out FILE.json]
//
// Every device call is timed through CudaBackend, the way the allocator pays
// for it (making the primary context current and the relaxed capture mode
// included), one call at a time with steady_clock, after a few untimed
// warm-up calls:
//   device_alloc / device_free   cuMemAlloc / cuMemFree at 2, 20, 256 MiB
//   create / release             cuMemCreate / cuMemRelease at 2, 16, 64 MiB
//   map                          cuMemMap + cuMemSetAccess (CudaBackend::Map)
//   set_access                   cuMemSetAccess alone on a mapped range
//   unmap                        cuMemUnmap
//   map_run / unmap_run          CudaBackend::MapRun / UnmapRun of 1, 4, 16, 64
//                                page-sized handles
//   (printed only)               a run of 1, 4, 16 mappings of 4 MiB unmapped
//                                by one UnmapRun and by one Unmap each
//   reserve / free_range         cuMemAddressReserve / cuMemAddressFree of one
//                                growable segment's range (the device's memory)
//   event_record / event_query / event_synchronize   on a cached event of the
//                                idle legacy default stream
//   device_synchronize           cuCtxSynchronize on an idle device
//   stream_synchronize           cuStreamSynchronize on an idle stream (the
//                                driver directly: no backend call does it)
// Each entry keeps median, mean, min and max; "us" is the mean, what a run
// pays per call on average. Without a device it says why and exits 0.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_backend.h"
#include "bench/driver_costs.h"

namespace ccalloc::replay {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMiB = std::size_t{1} << 20;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "ccalloc-driver-cost: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Must(absl::StatusOr<T> v, absl::string_view what) {
  if (!v.ok()) Die(absl::StrCat(what, ": ", v.status().message()));
  return *std::move(v);
}
void Must(const absl::Status& s, absl::string_view what) {
  if (!s.ok()) Die(absl::StrCat(what, ": ", s.message()));
}

// The mean of samples (at least one).
double Mean(const std::vector<double>& us) {
  return std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
}

// Microseconds that `fn` took.
double Time(const std::function<void()>& fn) {
  const auto start = Clock::now();
  fn();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// The few driver entry points no backend call covers, from the same
// libcuda.so.1 CudaBackend opened (dlopen returns the loaded library).
struct Raw {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) primary_ctx_release = nullptr;
  decltype(&::cuCtxPushCurrent_v2) ctx_push = nullptr;
  decltype(&::cuCtxPopCurrent_v2) ctx_pop = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuStreamDestroy_v2) stream_destroy = nullptr;
  decltype(&::cuMemUnmap) mem_unmap = nullptr;
};

Raw LoadRaw() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) Die("cannot load libcuda.so.1");
  Raw raw;
  auto get = [&](const char* symbol, auto& slot) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(library, symbol));
    if (slot == nullptr) Die(absl::StrCat("libcuda.so.1 has no ", symbol));
  };
  get("cuDeviceGet", raw.device_get);
  get("cuDeviceGetName", raw.device_get_name);
  get("cuDriverGetVersion", raw.driver_get_version);
  get("cuDevicePrimaryCtxRetain", raw.primary_ctx_retain);
  get("cuDevicePrimaryCtxRelease_v2", raw.primary_ctx_release);
  get("cuCtxPushCurrent_v2", raw.ctx_push);
  get("cuCtxPopCurrent_v2", raw.ctx_pop);
  get("cuStreamCreate", raw.stream_create);
  get("cuStreamSynchronize", raw.stream_synchronize);
  get("cuStreamDestroy_v2", raw.stream_destroy);
  get("cuMemUnmap", raw.mem_unmap);
  return raw;
}

void CheckCu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) Die(absl::StrCat(what, " failed: CUresult ", static_cast<int>(r)));
}

class Probe {
 public:
  Probe(int reps, int warmup) : reps_(reps), warmup_(warmup) {}

  // Runs `fn` warmup + reps times; `fn(timed)` returns the microseconds of the
  // call it measures (and does any untimed setup around it itself).
  void Measure(DriverCall call, std::uint64_t bytes, absl::string_view how,
               const std::function<double()>& fn) {
    for (int i = 0; i < warmup_; ++i) (void)fn();
    std::vector<double> us;
    us.reserve(reps_);
    for (int i = 0; i < reps_; ++i) us.push_back(fn());
    Add(call, bytes, how, std::move(us));
  }

  // Several calls measured in one loop (create, map, unmap, release of one
  // handle): one sample list per call.
  void Add(DriverCall call, std::uint64_t bytes, absl::string_view how, std::vector<double> us) {
    std::sort(us.begin(), us.end());
    const std::size_t n = us.size();
    DriverCostEntry e;
    e.calls = {call};
    e.bytes = bytes;
    e.mean_us = Mean(us);
    e.median_us = n % 2 == 1 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
    e.min_us = us.front();
    e.max_us = us.back();
    e.us = *e.mean_us;
    e.samples = static_cast<std::int64_t>(n);
    e.source = absl::StrCat("ccalloc-driver-cost: ", how);
    std::printf("%-20s %12s  median %9.2f us  mean %9.2f us  min %9.2f  max %9.2f  (%lld calls)\n",
                std::string(DriverCallName(call)).c_str(),
                bytes == 0 ? "" : absl::StrCat(bytes / kMiB, " MiB").c_str(), *e.median_us,
                *e.mean_us, *e.min_us, *e.max_us, static_cast<long long>(n));
    std::fflush(stdout);
    entries_.push_back(std::move(e));
  }

  int reps() const { return reps_; }
  int warmup() const { return warmup_; }
  std::vector<DriverCostEntry>& entries() { return entries_; }

 private:
  const int reps_;
  const int warmup_;
  std::vector<DriverCostEntry> entries_;
};

int Main(int argc, char** argv) {
  int device = 0;
  int reps = 50;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(absl::StrCat(arg, " needs a value"));
      return argv[++i];
    };
    if (arg == "--device") {
      if (!absl::SimpleAtoi(value(), &device) || device < 0) Die("--device: not an ordinal");
    } else if (arg == "--reps") {
      if (!absl::SimpleAtoi(value(), &reps) || reps < 1 || reps > 100000) {
        Die("--reps: not a count in 1..100000");
      }
    } else if (arg == "--out") {
      out_path = value();
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: ccalloc-driver-cost [--device N] [--reps N (50)] [--out FILE.json]\n"
                  "Host time per driver call on CUDA device N, as a cost table for\n"
                  "ccalloc-replay --driver-costs (bench/driver_costs/README.md). Without\n"
                  "--out the table goes to stdout after the human-readable lines.\n");
      return 0;
    } else {
      Die(absl::StrCat("unknown argument '", arg, "' (--help)"));
    }
  }

  absl::StatusOr<int> count = CudaDeviceCount();
  if (!count.ok() || *count == 0) {
    std::printf("ccalloc-driver-cost: no CUDA device (%s); nothing measured, no table written\n",
                count.ok() ? "the driver reports none" : std::string(count.status().message()).c_str());
    return 0;
  }
  std::unique_ptr<DeviceBackend> backend = Must(CreateCudaBackend(device), "CreateCudaBackend");
  const Raw raw = LoadRaw();
  CUdevice handle = 0;
  CheckCu(raw.device_get(&handle, device), "cuDeviceGet");
  char name[256] = {};
  CheckCu(raw.device_get_name(name, sizeof(name) - 1, handle), "cuDeviceGetName");
  int version = 0;
  CheckCu(raw.driver_get_version(&version), "cuDriverGetVersion");
  const DeviceMemoryInfo info = Must(backend->MemoryInfo(), "MemoryInfo");
  std::printf("ccalloc-driver-cost: %s (device %d, driver %d.%d, %zu MiB), %d timed calls per "
              "entry after 3 warm-up calls\n",
              name, device, version / 1000, (version % 1000) / 10, info.total_bytes / kMiB, reps);

  Probe probe(reps, /*warmup=*/3);
  DeviceBackend& b = *backend;

  // --- Classic segments. ---------------------------------------------------
  for (std::size_t mib : {2, 20, 256}) {
    const std::size_t bytes = mib * kMiB;
    std::vector<double> alloc_us, free_us;
    for (int i = 0; i < probe.warmup() + probe.reps(); ++i) {
      DevicePtr p = 0;
      const double a = Time([&] { p = Must(b.Allocate(bytes), "Allocate"); });
      const double f = Time([&] { Must(b.Deallocate(p, bytes), "Deallocate"); });
      if (i >= probe.warmup()) {
        alloc_us.push_back(a);
        free_us.push_back(f);
      }
    }
    probe.Add(DriverCall::kDeviceAlloc, bytes, "CudaBackend::Allocate (cuMemAlloc)", alloc_us);
    probe.Add(DriverCall::kDeviceFree, bytes, "CudaBackend::Deallocate (cuMemFree)", free_us);
  }

  // --- Growable segments: physical memory, mapping, address ranges. --------
  if (b.SupportsVirtualMemory()) {
    const std::size_t page = b.PageSize();
    const std::size_t range = (info.total_bytes + page - 1) / page * page;
    std::vector<double> reserve_us, free_range_us;
    for (int i = 0; i < probe.warmup() + probe.reps(); ++i) {
      DevicePtr base = 0;
      const double r = Time([&] { base = Must(b.ReserveAddressRange(range), "Reserve"); });
      const double f = Time([&] { Must(b.ReleaseAddressRange(base, range), "ReleaseRange"); });
      if (i >= probe.warmup()) {
        reserve_us.push_back(r);
        free_range_us.push_back(f);
      }
    }
    probe.Add(DriverCall::kReserve, range,
              "CudaBackend::ReserveAddressRange (cuMemAddressReserve) of the device's memory, "
              "the range of one growable segment",
              reserve_us);
    probe.Add(DriverCall::kFreeRange, range,
              "CudaBackend::ReleaseAddressRange (cuMemAddressFree)", free_range_us);

    const DevicePtr base = Must(b.ReserveAddressRange(range), "ReserveAddressRange");
    const int self[] = {device};
    for (std::size_t mib : {2, 16, 64}) {
      const std::size_t bytes = std::max(page, mib * kMiB / page * page);
      std::vector<double> create_us, map_us, access_us, unmap_us, release_us;
      for (int i = 0; i < probe.warmup() + probe.reps(); ++i) {
        PhysicalHandle h = 0;
        const double c = Time([&] { h = Must(b.CreatePhysical(bytes), "CreatePhysical"); });
        const double m = Time([&] { Must(b.Map(base, bytes, h), "Map"); });
        const double a = Time([&] { Must(b.SetAccess(base, bytes, self), "SetAccess"); });
        const double u = Time([&] { Must(b.Unmap(base, bytes), "Unmap"); });
        const double r = Time([&] { Must(b.ReleasePhysical(h), "ReleasePhysical"); });
        if (i >= probe.warmup()) {
          create_us.push_back(c);
          map_us.push_back(m);
          access_us.push_back(a);
          unmap_us.push_back(u);
          release_us.push_back(r);
        }
      }
      probe.Add(DriverCall::kCreate, bytes, "CudaBackend::CreatePhysical (cuMemCreate, pinned, "
                "POSIX-fd exportable when the driver allows)", create_us);
      probe.Add(DriverCall::kMap, bytes,
                "CudaBackend::Map (cuMemMap + cuMemSetAccess for this device)", map_us);
      probe.Add(DriverCall::kSetAccess, bytes,
                "CudaBackend::SetAccess (cuMemSetAccess alone; this device again, as no peer "
                "may exist)",
                access_us);
      probe.Add(DriverCall::kUnmap, bytes, "CudaBackend::Unmap (cuMemUnmap)", unmap_us);
      probe.Add(DriverCall::kRelease, bytes, "CudaBackend::ReleasePhysical (cuMemRelease)",
                release_us);
    }
    // Runs of page-sized handles, as growable segments map and unmap them:
    // what a run costs as it grows says how much of the cost is per call.
    {
      constexpr std::size_t kMaxRun = 64;
      std::vector<PhysicalHandle> handles;
      for (std::size_t i = 0; i < kMaxRun; ++i) {
        handles.push_back(Must(b.CreatePhysical(page), "CreatePhysical"));
      }
      for (std::size_t run : {std::size_t{1}, std::size_t{4}, std::size_t{16}, kMaxRun}) {
        std::vector<double> map_us, unmap_us;
        const absl::Span<const PhysicalHandle> these(handles.data(), run);
        for (int i = 0; i < probe.warmup() + probe.reps(); ++i) {
          const double m = Time([&] { Must(b.MapRun(base, page, these, {}), "MapRun"); });
          const double u =
              Time([&] { Must(b.UnmapRun(base, run * page, page, nullptr), "UnmapRun"); });
          if (i >= probe.warmup()) {
            map_us.push_back(m);
            unmap_us.push_back(u);
          }
        }
        probe.Add(DriverCall::kMapRun, run * page,
                  absl::StrCat("CudaBackend::MapRun of ", run, " page-sized handles (cuMemMap "
                               "each, one cuMemSetAccess)"),
                  map_us);
        probe.Add(DriverCall::kUnmapRun, run * page,
                  absl::StrCat("CudaBackend::UnmapRun of ", run, " page-sized mappings (one "
                               "cuMemUnmap where the driver takes it)"),
                  unmap_us);
      }
      for (PhysicalHandle h : handles) Must(b.ReleasePhysical(h), "ReleasePhysical");
    }
    // Runs of chunk-sized mappings (growable segments' 4 MiB chunks), printed
    // beside the table: whether the driver takes one cuMemUnmap over several
    // mappings, and what a run of them costs unmapped in one call against
    // one call each, back to back (whether a placement's unmaps are worth
    // batching: bench/driver_costs/README.md).
    {
      const std::size_t chunk = std::max(page, 4 * kMiB / page * page);
      constexpr std::size_t kMaxRun = 16;
      std::vector<PhysicalHandle> handles;
      for (std::size_t i = 0; i < kMaxRun; ++i) {
        handles.push_back(Must(b.CreatePhysical(chunk), "CreatePhysical"));
      }
      Must(b.MapRun(base, chunk, absl::MakeSpan(handles.data(), 2), {}), "MapRun");
      const CUresult whole = raw.mem_unmap(static_cast<CUdeviceptr>(base), 2 * chunk);
      if (whole != CUDA_SUCCESS) {
        Must(b.Unmap(base, chunk), "Unmap");
        Must(b.Unmap(base + chunk, chunk), "Unmap");
      }
      std::printf("one cuMemUnmap over two %zu MiB mappings: %s\n", chunk / kMiB,
                  whole == CUDA_SUCCESS ? "taken"
                                        : absl::StrCat("refused (CUresult ",
                                                       static_cast<int>(whole), ")").c_str());
      for (std::size_t run : {std::size_t{1}, std::size_t{4}, kMaxRun}) {
        const absl::Span<const PhysicalHandle> these(handles.data(), run);
        std::vector<double> one_call, each;
        for (int i = 0; i < probe.warmup() + probe.reps(); ++i) {
          Must(b.MapRun(base, chunk, these, {}), "MapRun");
          const double r =
              Time([&] { Must(b.UnmapRun(base, run * chunk, chunk, nullptr), "UnmapRun"); });
          Must(b.MapRun(base, chunk, these, {}), "MapRun");
          const double e = Time([&] {
            for (std::size_t k = 0; k < run; ++k) Must(b.Unmap(base + k * chunk, chunk), "Unmap");
          });
          if (i >= probe.warmup()) {
            one_call.push_back(r);
            each.push_back(e);
          }
        }
        const double r = Mean(one_call);
        const double e = Mean(each);
        std::printf("unmap of %zu %zu MiB mappings: UnmapRun %.1f us (%.1f a mapping), %zu Unmap "
                    "calls %.1f us (%.1f a mapping)\n",
                    run, chunk / kMiB, r, r / static_cast<double>(run), run, e,
                    e / static_cast<double>(run));
      }
      for (PhysicalHandle h : handles) Must(b.ReleasePhysical(h), "ReleasePhysical");
    }
    Must(b.ReleaseAddressRange(base, range), "ReleaseAddressRange");
  } else {
    std::printf("device %d has no virtual memory management: no create/map/unmap figures\n",
                device);
  }

  // --- Events and synchronization on an idle device. -----------------------
  {
    std::vector<double> record_us, query_us, sync_us;
    for (int i = 0; i < probe.warmup() + probe.reps(); ++i) {
      EventHandle e = 0;
      const double r = Time([&] { e = Must(b.RecordEvent(0), "RecordEvent"); });
      const double q = Time([&] { (void)Must(b.QueryEvent(e), "QueryEvent"); });
      const double s = Time([&] { Must(b.SynchronizeEvent(e), "SynchronizeEvent"); });
      b.DestroyEvent(e);  // cached for the next record, as in the allocator
      if (i >= probe.warmup()) {
        record_us.push_back(r);
        query_us.push_back(q);
        sync_us.push_back(s);
      }
    }
    probe.Add(DriverCall::kEventRecord, 0,
              "CudaBackend::RecordEvent (cuEventRecord on a cached event, legacy default stream)",
              record_us);
    probe.Add(DriverCall::kEventQuery, 0, "CudaBackend::QueryEvent (cuEventQuery, completed)",
              query_us);
    probe.Add(DriverCall::kEventSynchronize, 0,
              "CudaBackend::SynchronizeEvent (cuEventSynchronize, idle stream)", sync_us);
    probe.Measure(DriverCall::kDeviceSynchronize, 0,
                  "CudaBackend::SynchronizeDevice (cuCtxSynchronize, idle device)", [&] {
                    return Time([&] { Must(b.SynchronizeDevice(), "SynchronizeDevice"); });
                  });
  }
  {
    CUcontext context = nullptr;
    CheckCu(raw.primary_ctx_retain(&context, handle), "cuDevicePrimaryCtxRetain");
    CheckCu(raw.ctx_push(context), "cuCtxPushCurrent");
    CUstream stream = nullptr;
    CheckCu(raw.stream_create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    probe.Measure(DriverCall::kStreamSynchronize, 0,
                  "cuStreamSynchronize on an idle non-blocking stream (driver directly)", [&] {
                    return Time([&] {
                      CheckCu(raw.stream_synchronize(stream), "cuStreamSynchronize");
                    });
                  });
    // A device-side wait of that stream on an event of the default stream
    // (cross_stream_reuse orders a borrowed block's users this way).
    std::vector<double> wait_us;
    for (int i = 0; i < probe.warmup() + probe.reps(); ++i) {
      EventHandle e = Must(b.RecordEvent(0), "RecordEvent");
      const double w = Time([&] {
        Must(b.StreamWaitEvent(reinterpret_cast<StreamId>(stream), e), "StreamWaitEvent");
      });
      b.DestroyEvent(e);
      if (i >= probe.warmup()) wait_us.push_back(w);
    }
    probe.Add(DriverCall::kStreamWaitEvent, 0,
              "CudaBackend::StreamWaitEvent (cuStreamWaitEvent of a non-blocking stream on an "
              "event of the legacy default stream, idle device)",
              wait_us);
    CheckCu(raw.stream_synchronize(stream), "cuStreamSynchronize");
    CheckCu(raw.stream_destroy(stream), "cuStreamDestroy");
    CUcontext popped = nullptr;
    raw.ctx_pop(&popped);
    raw.primary_ctx_release(handle);
  }

  DriverCostTable table;
  table.device = name;
  table.driver_version = absl::StrCat(version / 1000, ".", (version % 1000) / 10);
  table.source = absl::StrCat(
      "measured by ccalloc-driver-cost on device ", device, ": host time per call through "
      "CudaBackend (primary-context switch included), ", reps, " timed calls per entry after ",
      probe.warmup(), " warm-up calls; us = mean");
  table.entries = std::move(probe.entries());
  const std::string json = DriverCostTableToJson(table);
  // The table must read back: a probe that wrote what the replay refuses
  // would be found only later.
  Must(ParseDriverCostTable(json, "the table just measured").status(), "self-check");
  if (out_path.empty()) {
    std::fputs(json.c_str(), stdout);
  } else {
    std::ofstream out(out_path, std::ios::binary);
    out << json;
    out.close();
    if (!out) Die(absl::StrCat("cannot write ", out_path));
    std::printf("wrote %s\n", out_path.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace ccalloc::replay

int main(int argc, char** argv) { return ccalloc::replay::Main(argc, argv); }
