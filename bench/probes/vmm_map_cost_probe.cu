// vmm_map_cost_probe.cu — what makes a map (cuMemMap + cuMemSetAccess) and
// an unmap cost what they cost?
//
// The cost table (ccalloc-driver-cost, through CudaBackend) prices a 2 MiB
// map with its access at ~49 us and an unmap at ~28 on an H100, while
// bench/probes/vmm_thread_probe.cu, mapping a plain handle in a small range, saw
// ~22 us and ~15. The two differ in the range the handle is mapped into
// (CudaBackend reserves the device's whole memory per growable segment)
// and in the handle (CudaBackend asks for a POSIX file descriptor as an
// exportable handle type, for IPC). This probe times cuMemMap,
// cuMemSetAccess and cuMemUnmap apart for each combination, with one
// handle remapped again and again at the same address, and with a fresh
// handle each time.
//
// Prints one JSON object: per case, mean and median us of each call.
// Build: nvcc -O2 -std=c++17 -o vmm_map_cost_probe bench/probes/vmm_map_cost_probe.cu -lcuda
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver_probe.h"

namespace {

using ccalloc::probe::Check;
using ccalloc::probe::Now;

struct Stat {
  std::vector<double> v;
  std::string Json() const {
    std::vector<double> s = v;
    std::sort(s.begin(), s.end());
    double sum = 0;
    for (double x : s) sum += x;
    char buf[96];
    std::snprintf(buf, sizeof buf, "{\"mean\": %.2f, \"median\": %.2f}", sum / s.size(),
                  s[s.size() / 2]);
    return buf;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 200;
  if (argc > 2 && std::string(argv[1]) == "--reps") reps = std::atoi(argv[2]);
  const CUdevice dev = ccalloc::probe::UsePrimaryContext(0).device;
  std::size_t total = 0;
  Check(cuDeviceTotalMem(&total, dev), "total mem");
  const std::size_t page = std::size_t{2} << 20;
  const std::size_t big_range = total / page * page;

  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 0;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

  std::printf("{\"device_total_bytes\": %zu, \"reps\": %d, \"cases\": [\n", total, reps);
  bool first_case = true;
  for (int round = 0; round < 2; ++round) {
    for (bool exportable : {false, true}) {
      for (bool big : {false, true}) {
        for (bool fresh : {false, true}) {
          CUmemAllocationProp prop{};
          prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
          prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
          prop.location.id = 0;
          if (exportable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
          const std::size_t range = big ? big_range : 64 * page;
          CUdeviceptr base;
          Check(cuMemAddressReserve(&base, range, page, 0, 0), "reserve");
          // Somewhere inside the range, as a growable segment maps.
          const CUdeviceptr va = base + (big ? 1024 * page : 8 * page);
          CUmemGenericAllocationHandle h = 0;
          Check(cuMemCreate(&h, page, &prop, 0), "create");
          Stat map, acc, unmap;
          for (int i = 0; i < reps + 5; ++i) {
            if (fresh && i > 0) {
              Check(cuMemRelease(h), "release");
              Check(cuMemCreate(&h, page, &prop, 0), "create");
            }
            double t0 = Now();
            Check(cuMemMap(va, page, 0, h, 0), "map");
            double t1 = Now();
            Check(cuMemSetAccess(va, page, &access, 1), "access");
            double t2 = Now();
            Check(cuMemUnmap(va, page), "unmap");
            double t3 = Now();
            if (i >= 5) {
              map.v.push_back(t1 - t0);
              acc.v.push_back(t2 - t1);
              unmap.v.push_back(t3 - t2);
            }
          }
          Check(cuMemRelease(h), "release");
          Check(cuMemAddressFree(base, range), "free range");
          std::printf("%s  {\"round\": %d, \"exportable_fd\": %s, \"range\": \"%s\", \"handle\": "
                      "\"%s\", \"map_us\": %s, \"access_us\": %s, \"unmap_us\": %s}",
                      first_case ? "" : ",\n", round, exportable ? "true" : "false",
                      big ? "device-sized" : "64 pages", fresh ? "fresh" : "reused",
                      map.Json().c_str(), acc.Json().c_str(), unmap.Json().c_str());
          first_case = false;
        }
      }
    }
  }
  std::printf("\n]}\n");
  return 0;
}
