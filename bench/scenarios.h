// Synthetic allocation traces for the fragmentation patterns that hurt
// caching allocators in practice.
//
// Real traces (traces/*.trace.gz) show what one workload does; these
// generators isolate one pattern each, scale it with a few knobs, and vary it
// with a seed, so a policy change can be judged on the pattern it targets.
//
// Every generator is deterministic for a given options struct (seed
// included) on every platform: randomness comes from std::mt19937_64, whose
// output the standard fixes, and not from std::*_distribution, whose output
// it does not. Sizes are rounded up to multiples of 512 bytes as PyTorch does
// before asking its allocator. Every block is freed by the end of the trace;
// blocks meant to live for the whole run are freed last.

#ifndef CCALLOC_BENCH_SCENARIOS_H_
#define CCALLOC_BENCH_SCENARIOS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "stats/trace.h"

namespace ccalloc::scenarios {

// A GPT-like training loop in fp32: weights allocated up front, AdamW state
// allocated lazily at the first optimizer step (as torch.optim does), and per
// step a fresh sequence length, so activation sizes change every step. The
// forward pass saves per-layer activations (some O(seq), attention
// O(seq^2)) among short-lived temporaries; backward frees them in reverse
// while allocating gradients; the optimizer allocates foreach temporaries;
// zero_grad(set_to_none=True) frees the gradients.
struct TransformerOptions {
  int layers = 12;
  int hidden = 768;
  int heads = 12;
  int batch = 8;
  int vocab = 50257;
  int min_seq = 64;
  int max_seq = 1024;
  int steps = 20;
  uint64_t seed = 1;
};
Trace TransformerTraining(const TransformerOptions& options = {});

// Buffers reallocated larger each step (the new one allocated before the old
// one is freed, as a resize copies), e.g. a growing KV cache or bucketed
// gradient buffers, among medium-sized blocks that live a few steps. When a
// buffer would pass max_bytes it starts over at initial_bytes.
struct GrowingOptions {
  int buffers = 3;
  uint64_t initial_bytes = 1 << 20;
  double growth = 1.25;
  uint64_t max_bytes = uint64_t{2} << 30;
  int churn_per_step = 8;  // Medium blocks allocated per step.
  int steps = 2000;
  uint64_t seed = 1;
};
Trace GrowingBuffers(const GrowingOptions& options = {});

// Long-lived small and medium blocks allocated at random points among many
// short-lived ones, so that each long-lived block pins the segment it lands
// in long after its neighbours are gone.
struct PinnedOptions {
  int short_lived_per_step = 24;
  // Chance that a given step allocates a long-lived block (can be >1 per
  // step: the integer part is always allocated).
  double long_lived_per_step = 1.5;
  int min_long_life_steps = 200;
  int max_long_life_steps = 2000;
  int steps = 1500;
  uint64_t seed = 1;
};
Trace PinnedAmongShortLived(const PinnedOptions& options = {});

// Many small blocks (512 B .. 1 MiB, log-uniform) living a few steps, and
// every huge_every steps one huge block (1..4 GiB) that lives a few steps: a
// cache that keeps the freed huge segment, or splits it for small blocks,
// holds gigabytes that small requests never need.
struct SmallHugeOptions {
  int small_per_step = 10;
  int huge_every = 100;
  uint64_t min_huge_bytes = uint64_t{1} << 30;
  uint64_t max_huge_bytes = uint64_t{4} << 30;
  int steps = 3000;
  uint64_t seed = 1;
};
Trace SmallWithOccasionalHuge(const SmallHugeOptions& options = {});

// A compute stream (0) and a side stream (1: copies, communication)
// allocating and freeing interleaved. Some blocks cross streams: prefetch
// buffers allocated on 1 and consumed on 0, gradient buckets allocated on 0
// and reduced on 1. Their free events carry the stream that used them last
// (TraceEvent::stream), so a replay must treat them as record_stream'ed
// blocks that cannot be reused until that stream's work is done.
struct TwoStreamsOptions {
  int blocks_per_step = 16;
  double cross_stream_fraction = 0.25;
  int steps = 2000;
  uint64_t seed = 1;
};
Trace TwoStreams(const TwoStreamsOptions& options = {});

// The micro-benchmarks' churn (bench/patterns.h): `window` blocks of
// log-uniform sizes (512 B .. 32 MiB) live, and each churn step frees one
// chosen at random and allocates another in its place, with no training
// step's rhythm at all. ccalloc-bench and ccalloc-gpu-bench time exactly this
// sequence for seed 42 + window (bench/patterns.h); as a trace it shows what
// the churn costs in driver calls and modelled driver time (the replay's
// figures "per step" are per 1,000 churn steps: Trace::steps is
// churn_steps / 1000).
struct ChurnOptions {
  int window = 1000;
  int churn_steps = 65536;  // bench/patterns.h: kChurnSteps
  uint64_t seed = 1;
};
Trace Churn(const ChurnOptions& options = {});

// The names MakeScenario accepts: "transformer", "growing", "pinned",
// "small-huge", "two-streams", "churn".
std::vector<std::string> ScenarioNames();

// The named scenario with default options and the given seed;
// InvalidArgument naming the known scenarios for an unknown name.
absl::StatusOr<Trace> MakeScenario(std::string_view name, uint64_t seed);

}  // namespace ccalloc::scenarios

#endif  // CCALLOC_BENCH_SCENARIOS_H_
