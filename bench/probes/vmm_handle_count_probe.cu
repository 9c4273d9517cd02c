// vmm_handle_count_probe.cu — does a map cost more when many handles are
// already mapped?
//
// The cost table prices a map with its access at ~49 us (one 2 MiB handle)
// and ~17 us a call plus ~32 us a handle for a stretch, measured with
// almost nothing else mapped. In training, each chunk ccalloc maps costs
// 100-190 us of step time (bench/results/h100_training_move_costs.json),
// with ~1,000-5,000 handles of 2-8 MiB mapped by then. If cuMemSetAccess
// or cuMemUnmap walks the mappings already made, a map's price grows with
// the handles held, and what a move costs in training is not what the
// table says.
//
// For N = 0, 256, 1024, 4096 handles of 2 MiB mapped with access (held
// through the measurement, in range A), times R rounds of: map one more
// handle with its access and unmap it (in range A, and in a range B of its
// own), and map a stretch of 8 handles with one access call and unmap them
// (range A).
//
// Prints one JSON object. Build:
//   nvcc -O2 -std=c++17 -o vmm_handle_count_probe bench/probes/vmm_handle_count_probe.cu -lcuda
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver_probe.h"

namespace {

using ccalloc::probe::Check;
using ccalloc::probe::Now;

constexpr std::size_t kPage = std::size_t{2} << 20;

CUmemGenericAllocationHandle Create(int dev) { return ccalloc::probe::CreatePhysical(kPage, dev); }

struct Stat {
  std::vector<double> v;
  double Mean() const {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  }
  double Median() const {
    std::vector<double> s = v;
    std::sort(s.begin(), s.end());
    return s.empty() ? 0 : s[s.size() / 2];
  }
};

// Maps `handles` side by side at `va` with one access call, then unmaps
// them one by one; adds the two times.
void MapUnmap(CUdeviceptr va, const std::vector<CUmemGenericAllocationHandle>& handles,
              const CUmemAccessDesc& access, Stat* map, Stat* unmap) {
  const double t0 = Now();
  for (std::size_t i = 0; i < handles.size(); ++i) {
    Check(cuMemMap(va + i * kPage, kPage, 0, handles[i], 0), "cuMemMap");
  }
  Check(cuMemSetAccess(va, handles.size() * kPage, &access, 1), "cuMemSetAccess");
  const double t1 = Now();
  for (std::size_t i = 0; i < handles.size(); ++i) {
    Check(cuMemUnmap(va + i * kPage, kPage), "cuMemUnmap");
  }
  const double t2 = Now();
  map->v.push_back(t1 - t0);
  unmap->v.push_back(t2 - t1);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 100;
  if (argc > 2 && std::string(argv[1]) == "--reps") reps = std::atoi(argv[2]);
  const int dev = 0;
  (void)ccalloc::probe::UsePrimaryContext(dev);
  const CUmemAccessDesc access = ccalloc::probe::ReadWrite(dev);

  const std::vector<int> counts = {0, 256, 1024, 4096};
  const int max_held = counts.back();
  // Range A: the held handles every other page (so that none merges with
  // its neighbour into one mapping), then room for the timed ones.
  const std::size_t a_bytes = (2 * static_cast<std::size_t>(max_held) + 64) * kPage;
  CUdeviceptr a = 0, b = 0;
  Check(cuMemAddressReserve(&a, a_bytes, kPage, 0, 0), "reserve A");
  Check(cuMemAddressReserve(&b, 16 * kPage, kPage, 0, 0), "reserve B");
  const CUdeviceptr a_timed = a + 2 * static_cast<std::size_t>(max_held) * kPage;

  std::vector<CUmemGenericAllocationHandle> timed;
  for (int i = 0; i < 8; ++i) timed.push_back(Create(dev));
  const std::vector<CUmemGenericAllocationHandle> one(timed.begin(), timed.begin() + 1);

  std::vector<CUmemGenericAllocationHandle> held;
  std::string out = "{\"reps\": " + std::to_string(reps) + ", \"cases\": [";
  for (std::size_t c = 0; c < counts.size(); ++c) {
    while (static_cast<int>(held.size()) < counts[c]) {
      CUmemGenericAllocationHandle h = Create(dev);
      const CUdeviceptr at = a + 2 * held.size() * kPage;
      Check(cuMemMap(at, kPage, 0, h, 0), "map held");
      Check(cuMemSetAccess(at, kPage, &access, 1), "access held");
      held.push_back(h);
    }
    Stat map1a, unmap1a, map1b, unmap1b, map8, unmap8;
    for (int r = 0; r < reps; ++r) {  // interleaved, so drift falls alike
      MapUnmap(a_timed, one, access, &map1a, &unmap1a);
      MapUnmap(b, one, access, &map1b, &unmap1b);
      MapUnmap(a_timed, timed, access, &map8, &unmap8);
    }
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s\n  {\"held_handles\": %d, \"map1_same_range_us\": %.2f, "
                  "\"map1_same_range_median_us\": %.2f, \"unmap1_same_range_us\": %.2f, "
                  "\"map1_other_range_us\": %.2f, \"unmap1_other_range_us\": %.2f, "
                  "\"map8_stretch_us\": %.2f, \"unmap8_us\": %.2f}",
                  c == 0 ? "" : ",", counts[c], map1a.Mean(), map1a.Median(), unmap1a.Mean(),
                  map1b.Mean(), unmap1b.Mean(), map8.Mean(), unmap8.Mean());
    out += buf;
    std::fprintf(stderr, "held %d: map1 %.1f us\n", counts[c], map1a.Mean());
  }
  out += "\n]\n}\n";
  std::printf("%s", out.c_str());
  for (std::size_t i = 0; i < held.size(); ++i) {
    Check(cuMemUnmap(a + 2 * i * kPage, kPage), "unmap held");
    Check(cuMemRelease(held[i]), "release held");
  }
  for (CUmemGenericAllocationHandle h : timed) Check(cuMemRelease(h), "release");
  Check(cuMemAddressFree(a, a_bytes), "free A");
  Check(cuMemAddressFree(b, 16 * kPage), "free B");
  return 0;
}
