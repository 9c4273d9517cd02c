// torch_alloc_bench.cpp — PyTorch's CUDA caching allocator on the patterns of
// bench/patterns.h, timed in C++ so that Python's own overhead is not counted.
//
// Built at run time by bench/torch_alloc_bench.py with
// torch.utils.cpp_extension.load() (on the GPU machine, against the installed
// torch). Each function returns host nanoseconds per allocate or free, one
// value per repetition; the script takes the median and puts the numbers next
// to ccalloc-gpu-bench's. raw_alloc / raw_delete are the allocator's entry
// points without tensor overhead, on the current stream (the default one).
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/extension.h>
// std::vector<double> return values become Python lists.
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "patterns.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace bench = ccalloc::bench;

void* Allocate(std::size_t bytes) {
  void* p = c10::cuda::CUDACachingAllocator::raw_alloc(bytes);
  if (p == nullptr) throw std::runtime_error("raw_alloc returned null");
  return p;
}

void Free(void* p) { c10::cuda::CUDACachingAllocator::raw_delete(p); }

std::vector<double> HotPair(std::int64_t bytes, std::int64_t reps) {
  if (bytes <= 0 || reps <= 0) throw std::invalid_argument("bytes and reps must be positive");
  const auto size = static_cast<std::size_t>(bytes);
  Free(Allocate(size));  // the cached path is what is measured
  return bench::TimeSteps(
      [size] {
        void* p = Allocate(size);
        Free(p);
      },
      2.0, static_cast<int>(reps), 40);
}

std::vector<double> Churn(std::int64_t window, std::int64_t reps) {
  if (window <= 0 || reps <= 0) throw std::invalid_argument("window and reps must be positive");
  const bench::ChurnSchedule schedule = bench::MakeChurnSchedule(static_cast<int>(window));
  std::vector<void*> live;
  live.reserve(schedule.prefill.size());
  for (std::size_t bytes : schedule.prefill) live.push_back(Allocate(bytes));
  std::size_t next = 0;
  auto step = [&] {
    const std::size_t i = next++ & (bench::kChurnSteps - 1);
    void*& slot = live[schedule.victims[i]];
    Free(slot);
    slot = Allocate(schedule.sizes[i]);
  };
  const auto warm_until = Clock::now() + std::chrono::seconds(2);
  for (std::size_t i = 0; i < bench::kChurnSteps && Clock::now() < warm_until; ++i) step();
  std::vector<double> out = bench::TimeSteps(step, 2.0, static_cast<int>(reps), 60);
  for (void* p : live) Free(p);
  return out;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("hot_pair", &HotPair, "host ns per op, per repetition: allocate+free of one size",
        pybind11::arg("bytes"), pybind11::arg("reps"));
  m.def("churn", &Churn, "host ns per op, per repetition: churn over a window of live blocks",
        pybind11::arg("window"), pybind11::arg("reps"));
}
