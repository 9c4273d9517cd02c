// driver_probe.h — what the standalone CUDA driver probes (bench/probes/*_probe.cu,
// each built alone with nvcc by scripts/gpu_round.sh) share: a driver call
// that fails ends the probe with its name and the driver's message, the
// primary context of a device made current, and a microsecond clock.
#ifndef CCALLOC_BENCH_DRIVER_PROBE_H_
#define CCALLOC_BENCH_DRIVER_PROBE_H_

#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace ccalloc::probe {

inline void Check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    std::fprintf(stderr, "%s: %s\n", what, s ? s : "?");
    std::exit(1);
  }
}

// Device `ordinal` with its primary context made current on this thread
// (another thread of the probe makes `context` current itself).
struct PrimaryContext {
  CUdevice device;
  CUcontext context;
};
inline PrimaryContext UsePrimaryContext(int ordinal) {
  PrimaryContext p{};
  Check(cuInit(0), "cuInit");
  Check(cuDeviceGet(&p.device, ordinal), "cuDeviceGet");
  Check(cuDevicePrimaryCtxRetain(&p.context, p.device), "cuDevicePrimaryCtxRetain");
  Check(cuCtxSetCurrent(p.context), "cuCtxSetCurrent");
  return p;
}

// A plain physical allocation of `bytes` on device `ordinal` (no exportable
// handle), and read-write access to it from that device.
inline CUmemGenericAllocationHandle CreatePhysical(std::size_t bytes, int ordinal) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  CUmemGenericAllocationHandle h = 0;
  Check(cuMemCreate(&h, bytes, &prop, 0), "cuMemCreate");
  return h;
}
inline CUmemAccessDesc ReadWrite(int ordinal) {
  CUmemAccessDesc a{};
  a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  a.location.id = ordinal;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return a;
}

// Microseconds on the steady clock.
inline double Now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ccalloc::probe

#endif  // CCALLOC_BENCH_DRIVER_PROBE_H_
