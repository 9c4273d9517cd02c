// vmm_thread_probe.cu — can the driver's mapping work leave the launching
// thread? Measures, on one device, whether map/unmap calls made on a second
// host thread slow the first thread's kernel launches and its own maps
// (a driver lock shared between threads would make a background mover
// useless: the launching thread would wait for it anyway).
//
// Rounds alternate (alone, with a background thread mapping and unmapping
// 2 MiB handles back to back, with one doing it at a training-like duty of
// one map+unmap per `--gap-us`):
//   launch_us: host time per launch of an empty kernel, in batches of 256
//              followed by a synchronize (not timed), so the queue never fills;
//   map_us:    host time of cuMemMap + cuMemSetAccess of a 2 MiB handle on
//              the launching thread, and of its cuMemUnmap.
// Prints one JSON object.
//
// Build: nvcc -O2 -std=c++17 -o vmm_thread_probe bench/probes/vmm_thread_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "driver_probe.h"

namespace {

using ccalloc::probe::Check;
using ccalloc::probe::Now;

__global__ void Empty() {}

struct Vmm {
  CUmemAllocationProp prop{};
  CUmemAccessDesc access{};
  std::size_t page = 2 << 20;
  explicit Vmm(int dev) {
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  CUmemGenericAllocationHandle Create() {
    CUmemGenericAllocationHandle h;
    Check(cuMemCreate(&h, page, &prop, 0), "cuMemCreate");
    return h;
  }
  CUdeviceptr Reserve(std::size_t pages) {
    CUdeviceptr va;
    Check(cuMemAddressReserve(&va, pages * page, 0, 0, 0), "reserve");
    return va;
  }
  void Map(CUdeviceptr va, CUmemGenericAllocationHandle h) {
    Check(cuMemMap(va, page, 0, h, 0), "cuMemMap");
    Check(cuMemSetAccess(va, page, &access, 1), "cuMemSetAccess");
  }
  void Unmap(CUdeviceptr va) { Check(cuMemUnmap(va, page), "cuMemUnmap"); }
};

// The background thread: maps and unmaps its own handles at its own
// addresses until told to stop, sleeping gap_us between pairs.
struct Background {
  std::atomic<bool> stop{false};
  std::atomic<long> pairs{0};
  std::thread thread;
  void Start(Vmm* vmm, CUcontext ctx, CUdeviceptr va, CUmemGenericAllocationHandle h,
             int gap_us) {
    stop = false;
    pairs = 0;
    thread = std::thread([this, vmm, ctx, va, h, gap_us] {
      Check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
      while (!stop.load(std::memory_order_relaxed)) {
        vmm->Map(va, h);
        vmm->Unmap(va);
        pairs.fetch_add(1, std::memory_order_relaxed);
        if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
      }
    });
  }
  void Stop() {
    stop = true;
    thread.join();
  }
};

double LaunchUs(cudaStream_t stream, int batches) {
  double total = 0;
  for (int b = 0; b < batches; ++b) {
    const double t0 = Now();
    for (int i = 0; i < 256; ++i) Empty<<<1, 32, 0, stream>>>();
    total += Now() - t0;
    cudaStreamSynchronize(stream);
  }
  return total / (batches * 256.0);
}

std::pair<double, double> MapUs(Vmm& vmm, CUdeviceptr va, CUmemGenericAllocationHandle h,
                                int n) {
  double map = 0, unmap = 0;
  for (int i = 0; i < n; ++i) {
    double t0 = Now();
    vmm.Map(va, h);
    map += Now() - t0;
    t0 = Now();
    vmm.Unmap(va);
    unmap += Now() - t0;
  }
  return {map / n, unmap / n};
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, gap_us = 200, batches = 200, maps = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--rounds") rounds = v;
    else if (k == "--gap-us") gap_us = v;
    else if (k == "--batches") batches = v;
    else if (k == "--maps") maps = v;
  }
  cudaSetDevice(0);
  cudaFree(nullptr);
  CUcontext ctx;
  Check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  Vmm vmm(0);
  CUdeviceptr mine = vmm.Reserve(1), theirs = vmm.Reserve(1);
  CUmemGenericAllocationHandle hm = vmm.Create(), ht = vmm.Create();
  LaunchUs(stream, 20);  // warm-up
  MapUs(vmm, mine, hm, 10);
  const char* modes[] = {"alone", "busy", "duty"};
  std::vector<double> launch[3], map[3], unmap[3];
  double bg_pairs_per_ms[3] = {0, 0, 0};
  for (int r = 0; r < rounds; ++r) {
    for (int m = 0; m < 3; ++m) {
      Background bg;
      if (m > 0) bg.Start(&vmm, ctx, theirs, ht, m == 1 ? 0 : gap_us);
      const double t0 = Now();
      launch[m].push_back(LaunchUs(stream, batches));
      const auto [mu, uu] = MapUs(vmm, mine, hm, maps);
      map[m].push_back(mu);
      unmap[m].push_back(uu);
      if (m > 0) {
        bg.Stop();
        bg_pairs_per_ms[m] += bg.pairs / ((Now() - t0) / 1000.0) / rounds;
      }
    }
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / v.size();
  };
  auto list = [](const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("{\n \"gpu\": \"%s\",\n \"rounds\": %d,\n \"gap_us\": %d,\n", prop.name, rounds,
              gap_us);
  for (int m = 0; m < 3; ++m) {
    std::printf(
        " \"%s\": {\"launch_us\": %.3f, \"map_access_us\": %.2f, \"unmap_us\": %.2f, "
        "\"background_pairs_per_ms\": %.2f,\n   \"launch_us_rounds\": %s,\n   "
        "\"map_access_us_rounds\": %s}%s\n",
        modes[m], mean(launch[m]), mean(map[m]), mean(unmap[m]), bg_pairs_per_ms[m],
        list(launch[m]).c_str(), list(map[m]).c_str(), m < 2 ? "," : "");
  }
  std::printf("}\n");
  return 0;
}
