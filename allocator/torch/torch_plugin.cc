// torch_plugin.cc — ccalloc as PyTorch's CUDA allocator, through
// torch.cuda.memory.CUDAPluggableAllocator (libccalloc_torch.so).
//
// PyTorch opens this library with ctypes and calls ccalloc_torch_malloc and
// ccalloc_torch_free through std::function objects; the Python package
// (python/ccalloc/torch.py) installs the hooks and reads the statistics. The
// functions the PyTorch extension calls are in torch_ext_api.cc, what the two
// files share in plugin_internal.h.
// What PyTorch's side does (torch/csrc/cuda/CUDAPluggableAllocator.cpp and
// Module.cpp) shapes this file:
//
//  * malloc's result is not checked: a null pointer becomes a tensor at
//    address 0 and the next kernel faults. So a failed allocation throws a
//    C++ exception, which PyTorch turns into a Python RuntimeError carrying
//    the message (an OutOfMemoryError when the Python package puts its small
//    shim, built against c10, in front; see ccalloc_torch_try_malloc).
//  * free is called from tensor deleters, inside destructors: it never throws.
//  * emptyCache, setMemoryFraction and recordStream reach the plugin only
//    through hooks set from Python on the allocator object (set_reset_fn,
//    set_memory_fraction_fn, set_record_stream_fn); the *_hook functions
//    below have exactly those signatures.
//  * getDeviceStats, snapshot, resetPeakStats and resetAccumulatedStats of a
//    pluggable allocator raise "does not yet support"; the Python package
//    serves them from the JSON exports here instead.
//
// One DeviceAllocator per device, created on first use with CCALLOC_CONF (or
// the string given to ccalloc_torch_configure) over DefaultOptions(), and
// never destroyed: PyTorch frees tensors during its own static destruction,
// after our destructors would have run, and the driver may be gone by then.
//
// CCALLOC_TORCH_SIMULATE=<capacity> (e.g. "8GiB") makes new allocators use a
// SimBackend of that capacity instead of the GPU: host-only tests of this
// library and of the Python package run on machines without one.
//
// Only the C functions below are exported (allocator/torch/plugin.cmake hides the
// rest with a version script).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "allocator/backends/backend.h"
#include "allocator/backends/cuda_backend.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/ipc.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/size_policy.h"
#include "allocator/cache/status_code.h"
#include "allocator/torch/plugin_internal.h"
#include "allocator/torch/source_pools.h"
#include "allocator/torch/uncached.h"
#include "ccalloc/ccalloc.h"
#include "ccalloc_torch.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "stats/tags.h"
#include "stats/trace_recorder.h"

namespace ccalloc {

// The allocators, published once created. Reads on the hot path are one
// acquire load; creation is serialised by creation_mu.
std::atomic<DeviceAllocator*> allocators[kMaxDevices];

absl::Mutex creation_mu(absl::kConstInit);
namespace {

// Set by ccalloc_torch_configure; unset means "read CCALLOC_CONF". On the heap
// and never freed, like the allocators: no destructor of ours runs at exit.
std::optional<std::string>* conf_override ABSL_GUARDED_BY(creation_mu) = nullptr;

// PyTorch's run-time settings (ccalloc_torch_set_allocator_settings), for
// allocators created after the call; null until the first call.
Options* runtime_options ABSL_GUARDED_BY(creation_mu) = nullptr;

}  // namespace

thread_local std::string last_error;
thread_local int last_error_code = CCALLOC_OK;

// Keeps the message for ccalloc_torch_last_error() and returns the code. The
// out-of-memory report already names ccalloc; every other message gets the
// prefix so that a user who sees it in a PyTorch traceback knows its source.
int Report(const absl::Status& status) {
  if (status.ok()) return CCALLOC_OK;
  last_error_code = StatusCode(status);
  last_error = last_error_code == CCALLOC_OUT_OF_MEMORY
                   ? std::string(status.message())
                   : absl::StrCat("ccalloc: ", status.message());
  return last_error_code;
}

absl::Status CheckDevice(int device) {
  if (device < 0 || device >= kMaxDevices) {
    return absl::InvalidArgumentError(
        absl::StrCat("device ", device, " is out of range [0, ", kMaxDevices, ")"));
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<Options> CurrentOptions() ABSL_EXCLUSIVE_LOCKS_REQUIRED(creation_mu) {
  if (conf_override != nullptr && conf_override->has_value()) {
    return ParseOptions(**conf_override, DefaultOptions());
  }
  return OptionsFromEnvironment(DefaultOptions());
}

absl::StatusOr<std::unique_ptr<DeviceBackend>> MakeBackend(int device) {
  const char* simulate = std::getenv("CCALLOC_TORCH_SIMULATE");
  if (simulate == nullptr || *simulate == '\0') return CreateCudaBackend(device);
  absl::StatusOr<std::size_t> capacity = ParseByteSize(simulate);
  if (!capacity.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CCALLOC_TORCH_SIMULATE='", simulate, "': ", capacity.status().message()));
  }
  SimBackend::Config config;
  config.capacity = *capacity;
  config.device = device;
  // Nothing runs on a simulated device, so recorded work is finished at once.
  config.auto_complete_events = true;
  return std::unique_ptr<DeviceBackend>(std::make_unique<SimBackend>(config));
}

// CCALLOC_TRACE=path records every allocation of the process as a trace that
// ccalloc-replay runs through any policy (one file per device: path, then
// path.dev1, ...). Written when the process exits; the allocators themselves
// are never destroyed, so a static object's destructor does the writing.
struct TraceFiles {
  absl::Mutex mu;
  std::vector<std::pair<std::string, std::unique_ptr<TraceRecorder>>> files ABSL_GUARDED_BY(mu);
  ~TraceFiles() {
    absl::MutexLock lock(&mu);
    for (auto& [path, recorder] : files) {
      if (absl::Status s = recorder->Write(path); !s.ok()) {
        std::fprintf(stderr, "ccalloc: writing the trace %s failed: %s\n", path.c_str(),
                     std::string(s.message()).c_str());
      }
      // The (leaked) allocators still point at their recorders, and frees can
      // come from static destructors that run after this one: leak the
      // recorders too rather than leave a dangling pointer.
      (void)recorder.release();
    }
  }
};
TraceFiles trace_files;

void AttachTraceRecorder(int device, DeviceAllocator* allocator) {
  const char* path = std::getenv("CCALLOC_TRACE");
  if (path == nullptr || *path == '\0') return;
  std::string file = device == 0 ? std::string(path) : absl::StrCat(path, ".dev", device);
  auto recorder = std::make_unique<TraceRecorder>(absl::StrCat("device", device));
  allocator->SetTraceRecorder(recorder.get());
  absl::MutexLock lock(&trace_files.mu);
  trace_files.files.emplace_back(std::move(file), std::move(recorder));
}

}  // namespace

DeviceAllocator* Existing(int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  return allocators[device].load(std::memory_order_acquire);
}

absl::StatusOr<std::unique_ptr<DeviceBackend>> NewBackend(int device) {
  if (absl::Status s = CheckDevice(device); !s.ok()) return s;
  return MakeBackend(device);
}

absl::StatusOr<DeviceAllocator*> GetOrCreate(int device) {
  if (absl::Status s = CheckDevice(device); !s.ok()) return s;
  if (DeviceAllocator* a = allocators[device].load(std::memory_order_acquire)) return a;
  absl::MutexLock lock(&creation_mu);
  if (DeviceAllocator* a = allocators[device].load(std::memory_order_relaxed)) return a;
  // Errors are not remembered: a fixed configuration or a device that shows
  // up later gets a fresh try.
  absl::StatusOr<Options> options = CurrentOptions();
  if (!options.ok()) return options.status();
  absl::StatusOr<std::unique_ptr<DeviceBackend>> backend = MakeBackend(device);
  if (!backend.ok()) return backend.status();
  // Deliberately leaked (see the banner). Made with the configured options
  // and then given the run-time settings, as the allocators that existed at
  // the call were, so that its max_split_size statistic is the configured
  // one as theirs is (PyTorch makes every device's allocator at start-up).
  auto* created = new DeviceAllocator(std::move(*backend), *options);
  if (runtime_options != nullptr) created->SetRuntimeOptions(*runtime_options);
  AttachTraceRecorder(device, created);
  allocators[device].store(created, std::memory_order_release);
  return created;
}

namespace {

// Runs `f` on the allocator of `device`, or on every existing one when
// device < 0; the first error wins but every allocator is visited.
template <typename F>
absl::Status ForDevices(int device, F f) {
  if (device >= 0) {
    if (absl::Status s = CheckDevice(device); !s.ok()) return s;
    DeviceAllocator* a = Existing(device);
    return a == nullptr ? absl::OkStatus() : f(*a);
  }
  absl::Status first;
  for (int d = 0; d < kMaxDevices; ++d) {
    if (DeviceAllocator* a = Existing(d)) first.Update(f(*a));
  }
  return first;
}

// Asks every allocator whether it owns `ptr` (PyTorch's record_stream hook
// does not say which device the tensor is on). NotFound when none does.
absl::Status RecordStreamAnywhere(void* ptr, cudaStream_t stream) {
  if (ptr == nullptr) return absl::OkStatus();
  const DevicePtr p = reinterpret_cast<DevicePtr>(ptr);
  const StreamId s = reinterpret_cast<StreamId>(stream);
  for (int d = 0; d < kMaxDevices; ++d) {
    DeviceAllocator* a = Existing(d);
    if (a == nullptr) continue;
    absl::Status status = a->RecordStream(p, s);
    // InvalidArgument means "not mine": ask the next device.
    if (!absl::IsInvalidArgument(status)) return status;
  }
  return absl::NotFoundError(absl::StrCat(
      "record_stream: 0x", absl::Hex(p), " was not allocated by ccalloc on any device"));
}

}  // namespace

std::size_t CopyOut(const std::string& text, char* buffer, std::size_t capacity) {
  if (buffer != nullptr && capacity > 0) {
    std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return text.size() + 1;
}

}  // namespace ccalloc

using ccalloc::Report;

// --- What PyTorch calls ------------------------------------------------------

// Like ccalloc_torch_malloc, but reports failure through the return code and
// ccalloc_torch_last_error() instead of an exception. The Python package's
// shim calls this and raises c10::OutOfMemoryError itself, which PyTorch
// turns into torch.OutOfMemoryError. Size 0 gives a null pointer and OK.
CCALLOC_TORCH_API int ccalloc_torch_try_malloc(size_t size, int device, void* stream,
                                               void** out) {
  if (out == nullptr) return Report(absl::InvalidArgumentError("out is NULL"));
  *out = nullptr;
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  // PyTorch's allocators refuse an exabyte or more before anything else,
  // with this text (its test_out_of_memory matches on it), and count no
  // out-of-memory error for it.
  constexpr std::size_t kOneExabyte = std::size_t{1} << 60;
  if (size >= kOneExabyte) {
    return Report(absl::ResourceExhaustedError(
        "CUDA out of memory. Tried to allocate more than 1EB memory."));
  }
  if (ABSL_PREDICT_FALSE(!ccalloc::uncached::CachingEnabled())) {
    if (size == 0) return CCALLOC_OK;
    absl::StatusOr<ccalloc::DevicePtr> ptr =
        ccalloc::uncached::Allocate((*allocator)->backend(), size);
    if (!ptr.ok()) {
      return Report(absl::ResourceExhaustedError(absl::StrCat(
          "CUDA out of memory. Tried to allocate ", size, " bytes with the caching allocator "
          "off (torch.cuda.caching_allocator_enable(False) or PYTORCH_NO_CUDA_MEMORY_CACHING): ",
          ptr.status().message())));
    }
    *out = reinterpret_cast<void*>(*ptr);
    return CCALLOC_OK;
  }
  absl::StatusOr<ccalloc::DevicePtr> ptr =
      (*allocator)->Allocate(size, reinterpret_cast<ccalloc::StreamId>(stream));
  if (!ptr.ok() && absl::IsInvalidArgument(ptr.status()) && size > ccalloc::kMaxRequest) {
    // PyTorch's allocator asks the driver for any size and reports its
    // refusal as out of memory (torch.OutOfMemoryError, num_ooms); so does
    // this one for a size past what it can represent.
    return Report(absl::ResourceExhaustedError(absl::StrCat(
        (*allocator)->RefuseAsOutOfMemory(size), " ccalloc: ", ptr.status().message())));
  }
  if (!ptr.ok()) return Report(ptr.status());
  *out = reinterpret_cast<void*>(*ptr);
  return CCALLOC_OK;
}

// PyTorch's malloc_fn. Throws std::runtime_error with ccalloc's report when
// the allocation fails (PyTorch would otherwise use the null pointer).
CCALLOC_TORCH_API void* ccalloc_torch_malloc(size_t size, int device, cudaStream_t stream) {
  void* ptr = nullptr;
  if (ccalloc_torch_try_malloc(size, device, static_cast<void*>(stream), &ptr) != CCALLOC_OK) {
    throw std::runtime_error(ccalloc::last_error);
  }
  return ptr;
}

// PyTorch's free_fn. Runs inside tensor destructors, so it never throws: a
// pointer ccalloc did not hand out (or a second free) is reported on stderr
// and through ccalloc_torch_last_error(), and changes nothing.
CCALLOC_TORCH_API void ccalloc_torch_free(void* ptr, size_t size, int device,
                                          cudaStream_t stream) noexcept {
  if (ptr == nullptr) return;
  if (std::optional<absl::Status> s =
          ccalloc::uncached::FreeIfOurs(reinterpret_cast<ccalloc::DevicePtr>(ptr))) {
    if (!s->ok()) {
      Report(*s);
      std::fprintf(stderr, "%s\n", ccalloc::last_error.c_str());
    }
    return;
  }
  ccalloc::DeviceAllocator* allocator = ccalloc::Existing(device);
  absl::Status status =
      allocator == nullptr
          ? absl::InvalidArgumentError(absl::StrCat("free: no allocator on device ", device))
          : allocator->Free(reinterpret_cast<ccalloc::DevicePtr>(ptr));
  if (!status.ok()) {
    Report(status);
    std::fprintf(stderr, "%s\n", ccalloc::last_error.c_str());
  }
}

// set_reset_fn: torch.cuda.empty_cache() on every device that has an allocator.
CCALLOC_TORCH_API void ccalloc_torch_empty_cache_hook(void) {
  absl::Status status = ccalloc::ForDevices(
      -1, [](ccalloc::DeviceAllocator& a) { return a.EmptyCache(); });
  if (Report(status) != CCALLOC_OK) throw std::runtime_error(ccalloc::last_error);
}

// set_memory_fraction_fn: torch.cuda.set_per_process_memory_fraction().
CCALLOC_TORCH_API void ccalloc_torch_memory_fraction_hook(double fraction, int device) {
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  absl::Status status =
      allocator.ok() ? (*allocator)->SetMemoryFraction(fraction) : allocator.status();
  if (Report(status) != CCALLOC_OK) throw std::runtime_error(ccalloc::last_error);
}

// set_record_stream_fn: Tensor.record_stream(). Like PyTorch's own allocator,
// a pointer that is not ours (a tensor from another library) is ignored;
// any other failure throws.
CCALLOC_TORCH_API void ccalloc_torch_record_stream_hook(void* ptr, cudaStream_t stream) {
  absl::Status status = ccalloc::RecordStreamAnywhere(ptr, stream);
  if (status.ok()) return;
  Report(status);
  if (!absl::IsNotFound(status)) throw std::runtime_error(ccalloc::last_error);
}

// --- What the Python package calls -------------------------------------------
// Every int-returning function returns a ccalloc_status (0 is OK); the message
// of a failure is in ccalloc_torch_last_error() on the same thread. A device
// below 0 means "every device that has an allocator" where noted.

// Configuration for allocators created from now on (PYTORCH_CUDA_ALLOC_CONF
// syntax, over DefaultOptions()); NULL goes back to CCALLOC_CONF. A bad string
// is an InvalidArgument and changes nothing.
CCALLOC_TORCH_API int ccalloc_torch_configure(const char* conf) {
  absl::MutexLock lock(&ccalloc::creation_mu);
  if (conf != nullptr) {
    absl::StatusOr<ccalloc::Options> options =
        ccalloc::ParseOptions(conf, ccalloc::DefaultOptions());
    if (!options.ok()) return Report(options.status());
  }
  if (ccalloc::conf_override == nullptr) {
    ccalloc::conf_override = new std::optional<std::string>();
  }
  if (conf == nullptr) {
    ccalloc::conf_override->reset();
  } else {
    *ccalloc::conf_override = std::string(conf);
  }
  return CCALLOC_OK;
}

// torch.cuda.memory._set_allocator_settings(conf): PyTorch's keys that its
// allocator reads at every request (max_split_size_mb,
// roundup_power2_divisions, garbage_collection_threshold) take their value
// from `conf`, or PyTorch's default where `conf` leaves them out (PyTorch
// resets the keys it is not given), on every allocator and on those created
// later; graph_capture_record_stream_reuse too, but left out it keeps its
// value, as PyTorch's CUDA allocator config keeps it. The other keys of
// `conf` change nothing here. A string ccalloc's parser refuses is an
// InvalidArgument and changes nothing.
CCALLOC_TORCH_API int ccalloc_torch_set_allocator_settings(const char* conf) {
  if (conf == nullptr) return Report(absl::InvalidArgumentError("conf is NULL"));
  absl::MutexLock lock(&ccalloc::creation_mu);
  ccalloc::Options base;
  if (ccalloc::runtime_options != nullptr) {
    base.graph_capture_record_stream_reuse =
        ccalloc::runtime_options->graph_capture_record_stream_reuse;
  } else if (absl::StatusOr<ccalloc::Options> configured = ccalloc::CurrentOptions();
             configured.ok()) {
    base.graph_capture_record_stream_reuse = configured->graph_capture_record_stream_reuse;
  }
  absl::StatusOr<ccalloc::Options> parsed = ccalloc::ParseOptions(conf, base);
  if (!parsed.ok()) return Report(parsed.status());
  if (ccalloc::runtime_options == nullptr) ccalloc::runtime_options = new ccalloc::Options();
  *ccalloc::runtime_options = *parsed;
  for (int device = 0; device < ccalloc::kMaxDevices; ++device) {
    if (ccalloc::DeviceAllocator* a = ccalloc::Existing(device)) a->SetRuntimeOptions(*parsed);
  }
  return CCALLOC_OK;
}

// torch.cuda.caching_allocator_enable(enabled) (allocator/torch/uncached.h).
CCALLOC_TORCH_API int ccalloc_torch_set_caching(int enabled) {
  ccalloc::uncached::SetCachingEnabled(enabled != 0);
  return CCALLOC_OK;
}
// 1 while requests go through the cache; 0 in the uncached mode.
CCALLOC_TORCH_API int ccalloc_torch_caching_enabled(void) {
  return ccalloc::uncached::CachingEnabled() ? 1 : 0;
}

// The options of the device's allocator, or the ones a new allocator would get.
CCALLOC_TORCH_API size_t ccalloc_torch_options(int device, char* buffer, size_t capacity) {
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) {
    Report(s);
    return 0;
  }
  if (ccalloc::DeviceAllocator* a = ccalloc::Existing(device)) {
    return ccalloc::CopyOut(a->options().ToString(), buffer, capacity);
  }
  absl::MutexLock lock(&ccalloc::creation_mu);
  absl::StatusOr<ccalloc::Options> options = ccalloc::CurrentOptions();
  if (!options.ok()) {
    Report(options.status());
    return 0;
  }
  // As GetOrCreate would make them: with the run-time settings.
  if (ccalloc::runtime_options != nullptr) CopyRuntimeKeys(*ccalloc::runtime_options, *options);
  return ccalloc::CopyOut(options->ToString(), buffer, capacity);
}

CCALLOC_TORCH_API int ccalloc_torch_empty_cache(int device) {
  return Report(ccalloc::ForDevices(
      device, [](ccalloc::DeviceAllocator& a) { return a.EmptyCache(); }));
}

CCALLOC_TORCH_API int ccalloc_torch_set_memory_fraction(int device, double fraction) {
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  return Report((*allocator)->SetMemoryFraction(fraction));
}

// A cap on reserved bytes; 0 removes it.
CCALLOC_TORCH_API int ccalloc_torch_set_memory_limit(int device, size_t bytes) {
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  return Report((*allocator)->SetMemoryLimit(bytes));
}

CCALLOC_TORCH_API int ccalloc_torch_memory_limit(int device, size_t* bytes) {
  if (bytes == nullptr) return Report(absl::InvalidArgumentError("bytes is NULL"));
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  *bytes = (*allocator)->memory_limit();
  return CCALLOC_OK;
}

// torch.cuda.get_per_process_memory_fraction(): DeviceAllocator::MemoryFraction.
CCALLOC_TORCH_API int ccalloc_torch_memory_fraction(int device, double* fraction) {
  if (fraction == nullptr) return Report(absl::InvalidArgumentError("fraction is NULL"));
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  *fraction = (*allocator)->MemoryFraction();
  return CCALLOC_OK;
}

// Total and free bytes of the device as its backend sees them (for the
// simulated device, its capacity).
CCALLOC_TORCH_API int ccalloc_torch_device_memory(int device, size_t* free_bytes,
                                                  size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return Report(absl::InvalidArgumentError("free_bytes or total_bytes is NULL"));
  }
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  absl::StatusOr<ccalloc::DeviceMemoryInfo> info = (*allocator)->backend().MemoryInfo();
  if (!info.ok()) return Report(info.status());
  *free_bytes = info->free_bytes;
  *total_bytes = info->total_bytes;
  return CCALLOC_OK;
}

// NotFound (CCALLOC_INVALID_ARGUMENT) when no allocator owns ptr.
CCALLOC_TORCH_API int ccalloc_torch_record_stream(void* ptr, void* stream) {
  return Report(ccalloc::RecordStreamAnywhere(ptr, static_cast<cudaStream_t>(stream)));
}

// The device's figures include its MemPool-allocator pools' (source_pools.h):
// they are reset with it.
CCALLOC_TORCH_API int ccalloc_torch_reset_peak_stats(int device) {
  if (device >= 0) {
    if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) return Report(s);
  }
  ccalloc::source_pools::ForEachOn(device, [](ccalloc::DeviceAllocator& a) { a.ResetPeakStats(); });
  return Report(ccalloc::ForDevices(device, [](ccalloc::DeviceAllocator& a) {
    a.ResetPeakStats();
    return absl::OkStatus();
  }));
}

CCALLOC_TORCH_API int ccalloc_torch_reset_accumulated_stats(int device) {
  if (device >= 0) {
    if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) return Report(s);
  }
  ccalloc::source_pools::ForEachOn(device,
                                   [](ccalloc::DeviceAllocator& a) { a.ResetAccumulatedStats(); });
  return Report(ccalloc::ForDevices(device, [](ccalloc::DeviceAllocator& a) {
    a.ResetAccumulatedStats();
    return absl::OkStatus();
  }));
}

// JSON documents, snprintf-like: at most `capacity` bytes are written
// (including the NUL) and the length the whole document needs is returned;
// 0 means an error (bad device). A device without an allocator yet has only
// zero counters and no segments. The documents can grow between two calls:
// call again while the result exceeds the capacity.
CCALLOC_TORCH_API size_t ccalloc_torch_stats_json(int device, char* buffer, size_t capacity) {
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) {
    Report(s);
    return 0;
  }
  ccalloc::DeviceAllocator* a = ccalloc::Existing(device);
  return ccalloc::CopyOut(
      ccalloc::StatsToJson(a == nullptr ? ccalloc::MemoryStats{} : a->GetStats()), buffer,
      capacity);
}

// Writes render(snapshot of `device`) like snprintf; a device that has no
// allocator yet gives an empty snapshot.
template <typename Render>
size_t WriteSnapshot(int device, char* buffer, size_t capacity, Render render) {
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) {
    Report(s);
    return 0;
  }
  ccalloc::Snapshot snapshot;
  snapshot.device = device;
  if (ccalloc::DeviceAllocator* a = ccalloc::Existing(device)) snapshot = a->TakeSnapshot();
  return ccalloc::CopyOut(render(snapshot), buffer, capacity);
}

CCALLOC_TORCH_API size_t ccalloc_torch_snapshot_json(int device, char* buffer,
                                                     size_t capacity) {
  return WriteSnapshot(device, buffer, capacity, ccalloc::SnapshotToJson);
}

CCALLOC_TORCH_API size_t ccalloc_torch_summary(int device, char* buffer, size_t capacity) {
  return WriteSnapshot(device, buffer, capacity, ccalloc::SummaryText);
}

// Tags (stats/tags.h): the Python profiler names phases and modules with
// them. Setting the calling thread's tag takes no lock.
CCALLOC_TORCH_API uint32_t ccalloc_torch_tag_intern(const char* name) {
  return name == nullptr ? ccalloc::kNoTag : ccalloc::InternTag(name);
}

CCALLOC_TORCH_API uint32_t ccalloc_torch_set_tag(uint32_t tag) {
  return ccalloc::SetCurrentTag(tag);
}

CCALLOC_TORCH_API uint32_t ccalloc_torch_current_tag(void) { return ccalloc::CurrentTag(); }

// Bytes of live blocks per tag on `device`, as JSON (stats/tags.h), like
// ccalloc_torch_stats_json.
CCALLOC_TORCH_API size_t ccalloc_torch_tag_usage_json(int device, char* buffer,
                                                      size_t capacity) {
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) {
    Report(s);
    return 0;
  }
  ccalloc::DeviceAllocator* a = ccalloc::Existing(device);
  return ccalloc::CopyOut(
      ccalloc::TagUsageToJson(a == nullptr ? std::vector<ccalloc::TagUsage>{} : a->TagStats()),
      buffer, capacity);
}

// The same without JSON, for per-boundary reads (the memory profiler): up
// to `capacity` entries of tag id, live bytes and peak bytes, by tag id;
// returns how many tags there are (more than capacity: call again with more
// room), -1 on error. Any output may be NULL when capacity is 0.
CCALLOC_TORCH_API int64_t ccalloc_torch_tag_usage(int device, uint32_t* tags, int64_t* current,
                                                  int64_t* peak, size_t capacity) {
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) {
    Report(s);
    return -1;
  }
  ccalloc::DeviceAllocator* a = ccalloc::Existing(device);
  if (a == nullptr) return 0;
  const std::vector<ccalloc::TagUsage> usage = a->TagStats();
  for (std::size_t i = 0; i < usage.size() && i < capacity; ++i) {
    tags[i] = usage[i].tag;
    current[i] = usage[i].current_bytes;
    peak[i] = usage[i].peak_bytes;
  }
  return static_cast<int64_t>(usage.size());
}

// Everything the memory profiler reads at a phase boundary, in one call: it
// takes eight per training step, the one that opens forward often while the
// GPU waits for the host, and each ctypes call and each Python object made
// from a result costs there. `out` receives int64s:
// allocated bytes, their peak, reserved bytes, the largest free block, then
// (tag id, live bytes, peak bytes) per tag by id: 4 + 3 * tags in all. With
// flags & 1 the peaks (ccalloc_torch_reset_peak_stats) are reset once read,
// so that the next read's peaks are the next phase's. Returns how many int64s
// the read needs, -1 on error; when that is more than `capacity` nothing is
// written and nothing is reset: call again with more room, and no peak is
// lost. The reads are not one atomic snapshot (each takes the allocator's
// lock on its own), as with the separate calls: tags first, then counters.
CCALLOC_TORCH_API int64_t ccalloc_torch_profile_read(int device, int64_t* out, size_t capacity,
                                                     uint32_t flags) {
  constexpr uint32_t kResetPeaks = 1;
  constexpr std::size_t kHead = 4;
  if ((flags & ~kResetPeaks) != 0) {
    Report(absl::InvalidArgumentError(
        absl::StrCat("ccalloc_torch_profile_read: unknown flags ", flags & ~kResetPeaks)));
    return -1;
  }
  if (absl::Status s = ccalloc::CheckDevice(device); !s.ok()) {
    Report(s);
    return -1;
  }
  ccalloc::DeviceAllocator* a = ccalloc::Existing(device);
  const std::vector<ccalloc::TagUsage> usage =
      a == nullptr ? std::vector<ccalloc::TagUsage>{} : a->TagStats();
  const std::size_t need = kHead + 3 * usage.size();
  if (need > capacity) return static_cast<int64_t>(need);
  if (out == nullptr) {
    Report(absl::InvalidArgumentError("out is NULL"));
    return -1;
  }
  std::fill(out, out + kHead, 0);
  if (a != nullptr) {
    const ccalloc::MemoryStats s = a->GetStats();
    out[0] = s.allocated_bytes[ccalloc::kStatAll].current;
    out[1] = s.allocated_bytes[ccalloc::kStatAll].peak;
    out[2] = s.reserved_bytes[ccalloc::kStatAll].current;
    out[3] = static_cast<int64_t>(a->Fragmentation().largest_free_block);
  }
  int64_t* t = out + kHead;
  for (const ccalloc::TagUsage& u : usage) {
    *t++ = u.tag;
    *t++ = u.current_bytes;
    *t++ = u.peak_bytes;
  }
  if (a != nullptr && (flags & kResetPeaks) != 0) a->ResetPeakStats();
  return static_cast<int64_t>(need);
}

// Sleep and wake (DeviceAllocator::Pause/Resume): the calling thread's
// region, and pausing or resuming one on `device` (bytes of device memory
// given back or taken in *bytes, which may be NULL). Flags of the _ex calls:
// 1 (pause only) backs the live contents up to host memory and resume
// restores them; 2 makes a region never allocated in on `device` a no-op
// (0 bytes) instead of an error, for "every device" loops. Unknown bits are
// an error.
CCALLOC_TORCH_API uint32_t ccalloc_torch_set_region(uint32_t region) {
  return ccalloc::SetCurrentRegion(region);
}

namespace {
constexpr uint32_t kPauseBackup = 1;
constexpr uint32_t kSkipUnused = 2;

int PauseOrResume(int device, uint32_t region, uint32_t flags, size_t* bytes, bool pause) {
  if (bytes != nullptr) *bytes = 0;
  const uint32_t known = pause ? (kPauseBackup | kSkipUnused) : kSkipUnused;
  if ((flags & ~known) != 0) {
    return Report(absl::InvalidArgumentError(absl::StrCat(
        pause ? "ccalloc_torch_pause_ex" : "ccalloc_torch_resume_ex", ": unknown flags ",
        flags & ~known)));
  }
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  absl::StatusOr<std::size_t> n =
      pause ? (*allocator)->Pause(region, ccalloc::DeviceAllocator::PauseOptions{
                                              .backup = (flags & kPauseBackup) != 0})
            : (*allocator)->Resume(region);
  if (!n.ok() && (flags & kSkipUnused) != 0 && absl::IsNotFound(n.status())) return CCALLOC_OK;
  if (!n.ok()) return Report(n.status());
  if (bytes != nullptr) *bytes = *n;
  return CCALLOC_OK;
}
}  // namespace

CCALLOC_TORCH_API int ccalloc_torch_pause(int device, uint32_t region, size_t* bytes) {
  return PauseOrResume(device, region, 0, bytes, /*pause=*/true);
}

CCALLOC_TORCH_API int ccalloc_torch_pause_ex(int device, uint32_t region, uint32_t flags,
                                             size_t* bytes) {
  return PauseOrResume(device, region, flags, bytes, /*pause=*/true);
}

CCALLOC_TORCH_API int ccalloc_torch_resume(int device, uint32_t region, size_t* bytes) {
  return PauseOrResume(device, region, 0, bytes, /*pause=*/false);
}

CCALLOC_TORCH_API int ccalloc_torch_resume_ex(int device, uint32_t region, uint32_t flags,
                                              size_t* bytes) {
  return PauseOrResume(device, region, flags, bytes, /*pause=*/false);
}

// Pins the host buffer of `region`'s backup now (DeviceAllocator::ReserveBackup).
// Flags: kSkipUnused.
CCALLOC_TORCH_API int ccalloc_torch_reserve_backup(int device, uint32_t region, uint32_t flags,
                                                   size_t* bytes) {
  if (bytes != nullptr) *bytes = 0;
  if ((flags & ~kSkipUnused) != 0) {
    return Report(absl::InvalidArgumentError(
        absl::StrCat("ccalloc_torch_reserve_backup: unknown flags ", flags & ~kSkipUnused)));
  }
  absl::StatusOr<ccalloc::DeviceAllocator*> allocator = ccalloc::GetOrCreate(device);
  if (!allocator.ok()) return Report(allocator.status());
  absl::StatusOr<std::size_t> n = (*allocator)->ReserveBackup(region);
  if (!n.ok() && (flags & kSkipUnused) != 0 && absl::IsNotFound(n.status())) return CCALLOC_OK;
  if (!n.ok()) return Report(n.status());
  if (bytes != nullptr) *bytes = *n;
  return CCALLOC_OK;
}

CCALLOC_TORCH_API int ccalloc_torch_devices(int* out, int capacity) {
  int count = 0;
  for (int d = 0; d < ccalloc::kMaxDevices; ++d) {
    if (ccalloc::Existing(d) == nullptr) continue;
    if (out != nullptr && count < capacity) out[count] = d;
    ++count;
  }
  return count;
}

// The message of the last failed call on this thread ("" if none).
CCALLOC_TORCH_API const char* ccalloc_torch_last_error(void) {
  return ccalloc::last_error.c_str();
}

// Its ccalloc_status (0 if no call failed on this thread).
CCALLOC_TORCH_API int ccalloc_torch_last_error_code(void) { return ccalloc::last_error_code; }
