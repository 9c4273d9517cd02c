// cuda_test_driver.cc — resolves the GPU suites' driver table (cuda_test_driver.h).
#include "tests/support/cuda_test_driver.h"

#include <dlfcn.h>

namespace ccalloc {
namespace {

template <typename Fn>
bool Resolve(void* library, const char* symbol, Fn& slot) {
  slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  return slot != nullptr;
}

}  // namespace

const TestDriver* LoadTestDriver() {
  static const TestDriver* const driver = []() -> const TestDriver* {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    auto* d = new TestDriver;
    const bool ok =
        Resolve(library, "cuDeviceGet", d->device_get) &&
        Resolve(library, "cuDevicePrimaryCtxRetain", d->primary_ctx_retain) &&
        Resolve(library, "cuDevicePrimaryCtxRelease_v2", d->primary_ctx_release) &&
        Resolve(library, "cuCtxGetCurrent", d->ctx_get_current) &&
        Resolve(library, "cuCtxSetCurrent", d->ctx_set_current) &&
        Resolve(library, "cuCtxSynchronize", d->ctx_synchronize) &&
        Resolve(library, "cuStreamCreate", d->stream_create) &&
        Resolve(library, "cuStreamDestroy_v2", d->stream_destroy) &&
        Resolve(library, "cuStreamBeginCapture_v2", d->begin_capture) &&
        Resolve(library, "cuStreamEndCapture", d->end_capture) &&
        Resolve(library, "cuGraphDestroy", d->graph_destroy) &&
        Resolve(library, "cuEventCreate", d->event_create) &&
        Resolve(library, "cuEventRecord", d->event_record) &&
        Resolve(library, "cuEventDestroy_v2", d->event_destroy) &&
        Resolve(library, "cuStreamWaitEvent", d->stream_wait_event) &&
        Resolve(library, "cuMemsetD8_v2", d->memset_d8) &&
        Resolve(library, "cuMemsetD8Async", d->memset_d8_async) &&
        Resolve(library, "cuMemcpyDtoH_v2", d->memcpy_dtoh) &&
        Resolve(library, "cuMemcpyHtoD_v2", d->memcpy_htod);
    if (!ok) {
      delete d;
      return nullptr;
    }
    return d;
  }();
  return driver;
}

}  // namespace ccalloc
