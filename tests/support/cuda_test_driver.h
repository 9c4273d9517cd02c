// cuda_test_driver.h — the CUDA driver entry points the GPU suites call
// themselves, for what CudaBackend does not offer (contexts, streams,
// captures, events, plain copies and memsets), resolved once from
// libcuda.so.1 by the same exported names the backend uses (the legacy
// default-stream variants). The backend's own table (cuda_driver.h) is
// private to it; this one is the tests'.
#ifndef CCALLOC_TESTS_SUPPORT_CUDA_TEST_DRIVER_H_
#define CCALLOC_TESTS_SUPPORT_CUDA_TEST_DRIVER_H_

#include <cuda.h>

namespace ccalloc {

struct TestDriver {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) primary_ctx_release = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy_v2) stream_destroy = nullptr;
  decltype(&::cuStreamBeginCapture_v2) begin_capture = nullptr;
  decltype(&::cuStreamEndCapture) end_capture = nullptr;
  decltype(&::cuGraphDestroy) graph_destroy = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventDestroy_v2) event_destroy = nullptr;
  decltype(&::cuStreamWaitEvent) stream_wait_event = nullptr;
  decltype(&::cuMemsetD8_v2) memset_d8 = nullptr;
  decltype(&::cuMemsetD8Async) memset_d8_async = nullptr;
  decltype(&::cuMemcpyDtoH_v2) memcpy_dtoh = nullptr;
  decltype(&::cuMemcpyHtoD_v2) memcpy_htod = nullptr;
};

// Null when libcuda.so.1 or one of the symbols is missing. Loaded once and
// never unloaded, like the backend's table.
const TestDriver* LoadTestDriver();

}  // namespace ccalloc

#endif  // CCALLOC_TESTS_SUPPORT_CUDA_TEST_DRIVER_H_
