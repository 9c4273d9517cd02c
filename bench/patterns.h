// patterns.h — the allocation patterns every micro-benchmark runs.
//
// ccalloc-bench (SimBackend), ccalloc-gpu-bench (ccalloc on a GPU against
// cudaMalloc and cudaMallocAsync) and torch_alloc_bench (PyTorch's caching
// allocator) must time exactly the same sequence of requests for their
// numbers to be comparable, so the sequence is defined once here. The header
// uses the standard library only: the PyTorch extension includes it too.
//
//   hot pair  allocate then free one size, over and over: the fast path.
//   churn     a window of W live blocks with log-uniform sizes (512 B .. 32 MiB);
//             each step frees one block chosen at random and allocates a new
//             one in its place: a cache under steady mixed pressure.
//
// Sizes and victims come from std::mt19937_64, whose output the standard
// fixes, mapped by hand (no std::*_distribution, whose output it does not),
// so every build and platform times the same requests.
#ifndef CCALLOC_BENCH_PATTERNS_H_
#define CCALLOC_BENCH_PATTERNS_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace ccalloc::bench {

inline constexpr std::size_t kHotPairSizes[] = {512, std::size_t{64} << 10, std::size_t{4} << 20,
                                                std::size_t{64} << 20};
inline constexpr int kChurnWindows[] = {100, 1000};
inline constexpr std::size_t kChurnMinBytes = 512;
inline constexpr std::size_t kChurnMaxBytes = std::size_t{32} << 20;
// Steps in one schedule; loops that run longer wrap around (a power of two).
inline constexpr std::size_t kChurnSteps = std::size_t{1} << 16;
inline constexpr std::uint64_t kChurnSeed = 42;

// A size between kChurnMinBytes and kChurnMaxBytes, uniform in log(size),
// rounded up to 512 bytes as PyTorch rounds its requests.
inline std::size_t LogUniformSize(std::mt19937_64& rng) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
  const double span = std::log(static_cast<double>(kChurnMaxBytes / kChurnMinBytes));
  auto bytes = static_cast<std::size_t>(static_cast<double>(kChurnMinBytes) * std::exp(u * span));
  bytes = (bytes + 511) / 512 * 512;
  if (bytes < kChurnMinBytes) bytes = kChurnMinBytes;
  if (bytes > kChurnMaxBytes) bytes = kChurnMaxBytes;
  return bytes;
}

struct ChurnSchedule {
  std::vector<std::size_t> prefill;    // the W blocks live before timing starts
  std::vector<std::size_t> sizes;      // step i allocates sizes[i] ...
  std::vector<std::uint32_t> victims;  // ... after freeing slot victims[i]
};

inline ChurnSchedule MakeChurnSchedule(int window, std::size_t steps = kChurnSteps,
                                       std::uint64_t seed = kChurnSeed) {
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(window));
  ChurnSchedule s;
  s.prefill.reserve(static_cast<std::size_t>(window));
  for (int i = 0; i < window; ++i) s.prefill.push_back(LogUniformSize(rng));
  s.sizes.reserve(steps);
  s.victims.reserve(steps);
  for (std::size_t i = 0; i < steps; ++i) {
    s.victims.push_back(static_cast<std::uint32_t>(rng() % static_cast<std::uint64_t>(window)));
    s.sizes.push_back(LogUniformSize(rng));
  }
  return s;
}

// The batch of `step`s that takes about `target_ms` (steps run 1, 4, 16, ...
// at a time until a run takes a quarter of that), and how many steps the
// calibration ran.
struct Calibration {
  std::size_t batch = 1;
  std::size_t steps = 0;
};
template <typename Step>
Calibration CalibrateBatch(Step&& step, int target_ms) {
  using Clock = std::chrono::steady_clock;
  const double target_s = target_ms / 1000.0;
  Calibration c;
  for (std::size_t batch = 1;; batch *= 4) {
    const auto start = Clock::now();
    for (std::size_t i = 0; i < batch; ++i) step();
    c.steps += batch;
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    if (took >= target_s / 4 || batch >= (std::size_t{1} << 24)) {
      const double per_step = took / static_cast<double>(batch);
      c.batch = std::max<std::size_t>(1, static_cast<std::size_t>(target_s / per_step));
      return c;
    }
  }
}

// Runs `batch` steps of `ops_per_step` operations; host ns per operation.
template <typename Step>
double TimeBatch(Step&& step, std::size_t batch, double ops_per_step) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (std::size_t i = 0; i < batch; ++i) step();
  const double took = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  return took / (static_cast<double>(batch) * ops_per_step);
}

// Times `step` (which performs `ops_per_step` operations) the same way in
// every benchmark: a calibration finds the batch of steps that takes about
// `target_ms`, then `reps` such batches are timed. Returns host nanoseconds
// per operation for each batch.
template <typename Step>
std::vector<double> TimeSteps(Step&& step, double ops_per_step, int reps, int target_ms) {
  const std::size_t batch = CalibrateBatch(step, target_ms).batch;
  std::vector<double> out;
  for (int r = 0; r < reps; ++r) out.push_back(TimeBatch(step, batch, ops_per_step));
  return out;
}

}  // namespace ccalloc::bench

#endif  // CCALLOC_BENCH_PATTERNS_H_
