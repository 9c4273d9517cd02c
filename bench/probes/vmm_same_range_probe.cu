// vmm_same_range_probe.cu — does mapping pages into the reservation that
// running kernels are using cost more than mapping into another one?
//
// bench/probes/vmm_stall_probe.py found the GPU unslowed by maps and their host
// price unchanged while matrix products ran, but its maps went into a
// reservation of their own. ccalloc maps a block's pages into the stream's
// one range, next to the live tensors the queued kernels are reading. If
// the driver serializes a map with work on memory of the same reservation
// (page tables shared, an invalidate that waits), a map during a training
// step costs more than the cost table says.
//
// A kernel streams over 1 GiB mapped at the start of reservation A, again
// and again (~100 ms queued per round); meanwhile the host maps, grants
// access to and unmaps a 2 MiB handle 200 times, (a) in A past the buffer,
// (b) in a reservation B of its own, (c) not at all. Per case: host us per
// triple and the kernels' time by CUDA events, rounds interleaved.
//
// Prints one JSON object. Build:
//   nvcc -O2 -std=c++17 -o vmm_same_range_probe bench/probes/vmm_same_range_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver_probe.h"

namespace {

using ccalloc::probe::Check;
using ccalloc::probe::Now;

constexpr std::size_t kPage = std::size_t{2} << 20;
constexpr std::size_t kBuffer = std::size_t{1} << 30;

__global__ void Stream(float* data, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    data[i] = data[i] * 0.999f + 1.0f;
  }
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, triples = 200, passes = 40;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (arg == "--triples") triples = std::atoi(argv[i + 1]);
    if (arg == "--passes") passes = std::atoi(argv[i + 1]);
  }
  const int dev = 0;
  (void)ccalloc::probe::UsePrimaryContext(dev);
  const CUmemAccessDesc access = ccalloc::probe::ReadWrite(dev);
  // Reservation A: the kernels' buffer, then room for the timed page.
  CUdeviceptr a = 0, b = 0;
  Check(cuMemAddressReserve(&a, kBuffer + 64 * kPage, kPage, 0, 0), "reserve A");
  Check(cuMemAddressReserve(&b, 64 * kPage, kPage, 0, 0), "reserve B");
  CUmemGenericAllocationHandle buffer = ccalloc::probe::CreatePhysical(kBuffer, dev);
  Check(cuMemMap(a, kBuffer, 0, buffer, 0), "map buffer");
  Check(cuMemSetAccess(a, kBuffer, &access, 1), "access buffer");
  Check(cuMemsetD32(a, 0, kBuffer / 4), "memset");
  CUmemGenericAllocationHandle page = ccalloc::probe::CreatePhysical(kPage, dev);
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float* data = reinterpret_cast<float*>(a);
  const std::size_t n = kBuffer / sizeof(float);

  // case: 0 none, 1 same reservation, 2 another reservation
  auto run = [&](int which, double* host_us, float* gpu_ms) {
    Check(cuCtxSynchronize(), "sync");
    cudaEventRecord(start, stream);
    for (int p = 0; p < passes; ++p) Stream<<<1056, 256, 0, stream>>>(data, n);
    cudaEventRecord(stop, stream);
    const CUdeviceptr at = which == 1 ? a + kBuffer + 8 * kPage : b + 8 * kPage;
    const double t0 = Now();
    if (which != 0) {
      for (int t = 0; t < triples; ++t) {
        Check(cuMemMap(at, kPage, 0, page, 0), "cuMemMap");
        Check(cuMemSetAccess(at, kPage, &access, 1), "cuMemSetAccess");
        Check(cuMemUnmap(at, kPage), "cuMemUnmap");
      }
    }
    *host_us = which != 0 ? (Now() - t0) / triples : 0;
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(gpu_ms, start, stop);
  };
  double h;
  float g;
  run(0, &h, &g);  // warm-up
  run(1, &h, &g);
  std::vector<double> host[3], gpu[3];
  for (int r = 0; r < rounds; ++r) {
    for (int which = 0; which < 3; ++which) {
      run(which, &h, &g);
      host[which].push_back(h);
      gpu[which].push_back(g);
    }
  }
  std::printf(
      "{\"rounds\": %d, \"triples\": %d, \"passes\": %d,\n"
      " \"gpu_ms_alone\": %.3f, \"gpu_ms_maps_same_reservation\": %.3f, "
      "\"gpu_ms_maps_other_reservation\": %.3f,\n"
      " \"host_us_per_triple_same_reservation\": %.2f, "
      "\"host_us_per_triple_other_reservation\": %.2f\n}\n",
      rounds, triples, passes, Mean(gpu[0]), Mean(gpu[1]), Mean(gpu[2]), Mean(host[1]),
      Mean(host[2]));
  Check(cuCtxSynchronize(), "sync");
  Check(cuMemUnmap(a, kBuffer), "unmap buffer");
  Check(cuMemRelease(buffer), "release");
  Check(cuMemRelease(page), "release");
  Check(cuMemAddressFree(a, kBuffer + 64 * kPage), "free A");
  Check(cuMemAddressFree(b, 64 * kPage), "free B");
  return 0;
}
