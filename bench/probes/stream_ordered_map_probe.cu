// stream_ordered_map_probe.cu — can a page mapping be made after the work
// that uses it is queued, by another thread, with the stream told to wait?
//
// The question behind asynchronous maps (tried as Options::async_map, not
// landed): the allocating thread queues "wait until flag >= n" on the
// block's stream (cuStreamWaitValue64 on page-locked host memory), returns
// the block at once, and a second thread maps the pages and then stores n.
//
//   --mode async   per iteration the launching thread queues the wait, a
//                  64-byte memset, a fill and a check kernel and an 8-byte
//                  copy on chunk c (i % 32), and an event; the mapper thread
//                  waits for the event of the chunk's previous use (--poll 1:
//                  queries it instead), unmaps it, maps it again (map +
//                  access), sleeps 0-60 us at random (so the GPU sometimes
//                  reaches the wait first and spins there), stores the flag.
//   --mode split   the launching thread maps (cuMemMap alone) and the mapper
//                  only grants access (cuMemSetAccess) before the flag.
//   --mode inline  the launching thread unmaps and maps itself (no wait).
//   --mode memcpy  one copy and one memset queued behind the wait on an
//                  address not mapped yet: what the API says at once.
//   --fresh-handles 1: each remap also releases and creates its handle.
//   --max-ahead N: the launching thread waits while N jobs are queued.
//
// Every word of every chunk is written and read back ("errors"); a fault
// shows at the final synchronize ("sync"); "enqueue_errors" counts copies
// and memsets refused when queued. Prints one JSON object per run, with the
// launching thread's us per iteration (mean) and the wall time.
//
// What it found on an H100 (bench/results/h100_stream_ordered_map_probe.json):
// the GPU side works (kernels behind the wait saw every mapping), and map,
// access, unmap, create and release on the mapper never deadlocked, but an
// event synchronize there did (the launching thread, blocked on a full
// launch queue, holds a lock it needs). And the API side does not: a copy
// or memset resolves its pointer, mapping and access both, when queued
// (CUDA_ERROR_INVALID_VALUE), so a block must be mapped, with access, before
// it is handed out.
//
// Build: nvcc -O2 -std=c++20 -o stream_ordered_map_probe \
//            bench/probes/stream_ordered_map_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "driver_probe.h"

namespace {

using ccalloc::probe::Check;
using ccalloc::probe::Now;

__global__ void Fill(std::uint64_t* p, std::size_t words, std::uint64_t tag) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    p[i] = tag * 0x9E3779B97F4A7C15ull + i;
  }
}

__global__ void Verify(const std::uint64_t* p, std::size_t words, std::uint64_t tag,
                       unsigned long long* errors) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (p[i] != tag * 0x9E3779B97F4A7C15ull + i) atomicAdd(errors, 1ull);
  }
}

// Spins the GPU for about `ns` so the launching thread gets ahead.
__global__ void Spin(std::uint64_t ns) {
  std::uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  std::uint64_t now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

struct Job {
  int chunk;
  std::uint64_t seq;
  CUevent prev;  // the chunk's previous use
};

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "async";
  int iterations = 4000;
  int chunks = 32;
  bool fresh_handles = false;  // --fresh-handles 1: each remap releases and creates
  bool poll = false;  // --poll 1: the mapper queries events instead of waiting
  int max_ahead = 0;  // >0: the launching thread waits while more jobs are queued
  std::size_t chunk_bytes = std::size_t{2} << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mode")) mode = argv[i + 1];
    if (!std::strcmp(argv[i], "--iterations")) iterations = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--fresh-handles")) fresh_handles = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--poll")) poll = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--max-ahead")) max_ahead = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--chunk-mb")) chunk_bytes = std::size_t(std::atoi(argv[i + 1])) << 20;
  }
  // split: the launching thread maps (cuMemMap alone), the mapper thread
  // grants access (cuMemSetAccess) and raises the flag.
  const bool split = mode == "split";
  const bool async = mode == "async" || split;
  const CUcontext ctx = ccalloc::probe::UsePrimaryContext(0).context;
  CUstream stream;
  Check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream");

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUdeviceptr base;
  Check(cuMemAddressReserve(&base, chunk_bytes * chunks, 0, 0, 0), "reserve");
  std::vector<CUmemGenericAllocationHandle> handles(chunks);
  std::vector<bool> mapped(chunks, false);
  // The event recorded after each chunk's last use (null before its first):
  // each use gets an event of its own, handed to the job that remaps it next.
  std::vector<CUevent> last_use(chunks, nullptr);
  for (int c = 0; c < chunks; ++c) {
    Check(cuMemCreate(&handles[c], chunk_bytes, &prop, 0), "create");
  }
  // The flag the stream waits on: pinned host memory the GPU can read.
  std::uint64_t* flag_host = nullptr;
  Check(cuMemHostAlloc(reinterpret_cast<void**>(&flag_host), 64, CU_MEMHOSTALLOC_DEVICEMAP),
        "host alloc");
  *flag_host = 0;
  CUdeviceptr flag_dev;
  Check(cuMemHostGetDevicePointer(&flag_dev, flag_host, 0), "host device pointer");
  unsigned long long* errors = nullptr;
  cudaMalloc(&errors, sizeof(unsigned long long));
  cudaMemset(errors, 0, sizeof(unsigned long long));

  auto remap = [&](int c, CUevent prev) {
    const CUdeviceptr va = base + chunk_bytes * c;
    if (prev != nullptr) {  // its last use is done
      if (poll) {
        // Only queries, the event kept: rules out the event calls as the
        // ones that block behind the launching thread.
        CUresult q;
        while ((q = cuEventQuery(prev)) == CUDA_ERROR_NOT_READY) std::this_thread::yield();
        Check(q, "event query");
      } else {
        Check(cuEventSynchronize(prev), "event sync");
        Check(cuEventDestroy(prev), "event destroy");
      }
    }
    if (mapped[c]) Check(cuMemUnmap(va, chunk_bytes), "unmap");
    if (mapped[c] && fresh_handles) {  // a release and a create as well
      Check(cuMemRelease(handles[c]), "release");
      Check(cuMemCreate(&handles[c], chunk_bytes, &prop, 0), "create");
    }
    Check(cuMemMap(va, chunk_bytes, 0, handles[c], 0), "map");
    Check(cuMemSetAccess(va, chunk_bytes, &access, 1), "access");
    mapped[c] = true;
  };

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> jobs;
  bool done = false;
  std::uint64_t jobs_done = 0;
  std::thread mapper;
  if (async) {
    mapper = std::thread([&] {
      Check(cuCtxSetCurrent(ctx), "mapper set current");
      std::mt19937 rng(7);
      for (;;) {
        Job job;
        {
          std::unique_lock<std::mutex> l(mu);
          cv.wait(l, [&] { return done || !jobs.empty(); });
          if (jobs.empty()) return;
          job = jobs.front();
          jobs.pop_front();
        }
        if (split) {
          Check(cuMemSetAccess(base + chunk_bytes * job.chunk, chunk_bytes, &access, 1), "access");
        } else {
          remap(job.chunk, job.prev);
        }
        const int delay = static_cast<int>(rng() % 61);
        const double until = Now() + delay;
        while (Now() < until) {
        }
        std::atomic_ref<std::uint64_t>(*flag_host).store(job.seq, std::memory_order_release);
        {
          std::lock_guard<std::mutex> l(mu);
          ++jobs_done;
        }
        cv.notify_all();
        if (job.seq % 1000 == 0) std::fprintf(stderr, "mapped %llu\n", (unsigned long long)job.seq);
      }
    });
  }

  if (mode == "memcpy") {
    // What the CUDA API says about an address whose map is still queued
    // behind the stream's wait: a copy resolves its pointers when it is
    // queued, not when it runs.
    const CUdeviceptr va = base;  // reserved, not mapped yet
    Check(cuStreamWaitValue64(stream, flag_dev, 1, CU_STREAM_WAIT_VALUE_GEQ), "wait value");
    std::uint64_t host_word = 0;
    const CUresult copy = cuMemcpyDtoHAsync(&host_word, va, 8, stream);
    const CUresult set = cuMemsetD8Async(va, 0, 8, stream);
    const char* copy_name = nullptr;
    const char* set_name = nullptr;
    cuGetErrorName(copy, &copy_name);
    cuGetErrorName(set, &set_name);
    remap(0, nullptr);
    std::atomic_ref<std::uint64_t>(*flag_host).store(1, std::memory_order_release);
    const CUresult sync = cuStreamSynchronize(stream);
    const char* sync_name = nullptr;
    cuGetErrorName(sync, &sync_name);
    std::printf("{\"mode\": \"memcpy\", \"copy_queued_before_map\": \"%s\", "
                "\"memset_queued_before_map\": \"%s\", \"sync\": \"%s\"}\n",
                copy_name ? copy_name : "?", set_name ? set_name : "?",
                sync_name ? sync_name : "?");
    return copy == CUDA_SUCCESS && set == CUDA_SUCCESS ? 0 : 1;
  }

  const std::size_t words = chunk_bytes / 8;
  double caller_us = 0;
  long long enqueue_errors = 0;
  std::uint64_t* copy_target = nullptr;
  Check(cuMemHostAlloc(reinterpret_cast<void**>(&copy_target), 64, 0), "host alloc");
  std::uint64_t& copied_word = *copy_target;
  const double t0 = Now();
  std::mt19937 rng(11);
  for (int i = 0; i < iterations; ++i) {
    const int c = i % chunks;
    const CUdeviceptr va = base + chunk_bytes * c;
    // Now and then the GPU gets work ahead of it, so the map lands while
    // kernels run; otherwise it reaches the wait first and spins there.
    if (rng() % 4 == 0) Spin<<<1, 1, 0, stream>>>(20000);
    if (split) {
      // Untimed: the chunk's previous use (whose access the mapper granted
      // before the flag let it run) is done; its mapping goes.
      if (last_use[c] != nullptr) {
        Check(cuEventSynchronize(last_use[c]), "event sync");
        Check(cuEventDestroy(last_use[c]), "event destroy");
        last_use[c] = nullptr;
      }
      if (mapped[c]) Check(cuMemUnmap(va, chunk_bytes), "unmap");
    }
    const double a = Now();
    if (split) {
      Check(cuMemMap(va, chunk_bytes, 0, handles[c], 0), "map");
      mapped[c] = true;
    }
    if (async) {
      {
        std::unique_lock<std::mutex> l(mu);
        if (max_ahead > 0) {
          cv.wait(l, [&] { return static_cast<int>(i - jobs_done) < max_ahead; });
        }
        jobs.push_back(Job{c, static_cast<std::uint64_t>(i) + 1, last_use[c]});
      }
      cv.notify_all();
      Check(cuStreamWaitValue64(stream, flag_dev, static_cast<std::uint64_t>(i) + 1,
                                CU_STREAM_WAIT_VALUE_GEQ),
            "wait value");
    } else {
      remap(c, last_use[c]);
    }
    caller_us += Now() - a;
    if ((i + 1) % 1000 == 0) std::fprintf(stderr, "queued %d\n", i + 1);
    auto* p = reinterpret_cast<std::uint64_t*>(va);
    // What PyTorch queues right after allocating: a memset and a copy, whose
    // pointers the driver resolves when they are queued.
    if (cuMemsetD8Async(va, 0, 64, stream) != CUDA_SUCCESS) ++enqueue_errors;
    Fill<<<264, 256, 0, stream>>>(p, words, static_cast<std::uint64_t>(i));
    Verify<<<264, 256, 0, stream>>>(p, words, static_cast<std::uint64_t>(i), errors);
    if (cuMemcpyDtoHAsync(&copied_word, va, 8, stream) != CUDA_SUCCESS) ++enqueue_errors;
    Check(cuEventCreate(&last_use[c], CU_EVENT_DISABLE_TIMING), "event");
    Check(cuEventRecord(last_use[c], stream), "record");
  }
  const CUresult sync = cuStreamSynchronize(stream);
  const double wall_ms = (Now() - t0) / 1000;
  {
    std::lock_guard<std::mutex> l(mu);
    done = true;
  }
  cv.notify_one();
  if (mapper.joinable()) mapper.join();
  unsigned long long host_errors = ~0ull;
  if (sync == CUDA_SUCCESS) cudaMemcpy(&host_errors, errors, sizeof(host_errors), cudaMemcpyDeviceToHost);
  const char* why = nullptr;
  cuGetErrorString(sync, &why);
  std::printf(
      "{\"mode\": \"%s\", \"iterations\": %d, \"chunk_mb\": %zu, \"sync\": \"%s\", "
      "\"errors\": %llu, \"enqueue_errors\": %lld, \"caller_us_per_iteration\": %.2f, "
      "\"wall_ms\": %.1f}\n",
      mode.c_str(), iterations, chunk_bytes >> 20, why ? why : "?", host_errors, enqueue_errors,
      caller_us / iterations, wall_ms);
  return sync == CUDA_SUCCESS && host_errors == 0 && enqueue_errors == 0 ? 0 : 1;
}
