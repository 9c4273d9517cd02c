// Scenario generators. Each one plays a workload forward step by step through
// a TraceBuilder, which hands out dense ids, applies PyTorch's 512-byte
// rounding and remembers what is live so that the trace can be closed
// cleanly. Frees that must happen later are parked in per-step buckets
// (Expiry) so their order is a pure function of the seed.

#include "bench/scenarios.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/patterns.h"
#include "stats/trace.h"

namespace ccalloc::scenarios {
namespace {

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kFloat = 4;  // Bytes per fp32 element.

// PyTorch rounds every request up to 512 bytes before its allocator sees
// it, zero-byte ones included.
uint64_t RoundUp512(uint64_t bytes) {
  return std::max<uint64_t>(512, (bytes + 511) & ~uint64_t{511});
}

// std::mt19937_64 output is fixed by the standard, but the std
// distributions are not (libstdc++ and libc++ disagree), so the few
// distributions needed are written here in integer arithmetic.
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}

  // Uniform in [0, n) for n > 0. The multiply-shift leaves a bias below
  // n / 2^64, far under anything a scenario can notice, and never loops.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(gen_()) * n) >>
                                 64);
  }

  // Uniform in [lo, hi].
  uint64_t Uniform(uint64_t lo, uint64_t hi) { return lo + Below(hi - lo + 1); }

  // True with probability p (p in [0, 1]), resolved to 2^-53.
  bool Chance(double p) {
    return static_cast<double>(gen_() >> 11) * 0x1.0p-53 < p;
  }

  // Roughly log-uniform in [lo, hi] (lo > 0): a uniform power-of-two
  // octave, then uniform within it. Allocation sizes spread over octaves
  // like this in real programs, and it needs no libm, whose results could
  // differ between platforms.
  uint64_t LogUniform(uint64_t lo, uint64_t hi) {
    const int lo_octave = std::bit_width(lo) - 1;
    const int hi_octave = std::bit_width(hi) - 1;
    const int octave = static_cast<int>(Uniform(lo_octave, hi_octave));
    const uint64_t base = uint64_t{1} << octave;
    const uint64_t top = octave == 63 ? ~uint64_t{0} : 2 * base - 1;
    return Uniform(std::max(lo, base), std::min(hi, top));
  }

  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  std::mt19937_64 gen_;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(std::string name) { trace_.name = std::move(name); }

  uint64_t Alloc(uint64_t bytes, uint64_t stream = 0) {
    const uint64_t id = trace_.num_ids++;
    const uint64_t rounded = RoundUp512(bytes);
    trace_.events.push_back({TraceEvent::Op::kAlloc, id, rounded, stream});
    blocks_.push_back({rounded, stream, true});
    return id;
  }

  // Frees on the allocation's stream.
  void Free(uint64_t id) { FreeAfterUseOn(id, blocks_[id].stream); }

  // Frees a block whose last use was on `stream`.
  void FreeAfterUseOn(uint64_t id, uint64_t stream) {
    Block& block = blocks_[id];
    block.live = false;
    trace_.events.push_back({TraceEvent::Op::kFree, id, block.bytes, stream});
  }

  // Frees whatever is still live, oldest first (the order a program tears
  // down its persistent state), and hands the trace over.
  Trace Finish() && {
    for (uint64_t id = 0; id < blocks_.size(); ++id) {
      if (blocks_[id].live) Free(id);
    }
    return std::move(trace_);
  }

 private:
  struct Block {
    uint64_t bytes;
    uint64_t stream;
    bool live;
  };
  Trace trace_;
  std::vector<Block> blocks_;
};

// A free scheduled for a later step.
struct PendingFree {
  uint64_t id;
  uint64_t stream;  // The stream of the block's last use.
};

// Buckets of frees by the step that performs them. Lifetimes past the last
// step land in the bucket that the end of the run drains.
class Expiry {
 public:
  explicit Expiry(int steps) : buckets_(static_cast<size_t>(steps) + 1) {}

  void At(int step, PendingFree free) {
    const size_t bucket =
        std::min(static_cast<size_t>(step), buckets_.size() - 1);
    buckets_[bucket].push_back(free);
  }

  std::vector<PendingFree> Take(int step) {
    return std::move(buckets_[static_cast<size_t>(step)]);
  }

  // Everything still pending, in the order it would have expired.
  void DrainInto(TraceBuilder& builder) {
    for (auto& bucket : buckets_) {
      for (const PendingFree& f : bucket)
        builder.FreeAfterUseOn(f.id, f.stream);
      bucket.clear();
    }
  }

 private:
  std::vector<std::vector<PendingFree>> buckets_;
};

}  // namespace

Trace TransformerTraining(const TransformerOptions& o) {
  Rng rng(o.seed);
  TraceBuilder b("transformer");
  const uint64_t h = static_cast<uint64_t>(o.hidden);

  // Weights, in the order a GPT-2 module constructs them. The LM head is
  // tied to the token embedding, so it has no weight of its own.
  std::vector<uint64_t> param_bytes = {
      static_cast<uint64_t>(o.vocab) * h * kFloat,     // wte
      static_cast<uint64_t>(o.max_seq) * h * kFloat};  // wpe
  const size_t first_layer_param = param_bytes.size();
  const std::vector<uint64_t> layer_params = {h,         h,      // ln_1
                                              h * 3 * h, 3 * h,  // attn.c_attn
                                              h * h,     h,      // attn.c_proj
                                              h,         h,      // ln_2
                                              h * 4 * h, 4 * h,  // mlp.c_fc
                                              4 * h * h, h};     // mlp.c_proj
  for (int l = 0; l < o.layers; ++l) {
    for (uint64_t elems : layer_params) param_bytes.push_back(elems * kFloat);
  }
  param_bytes.push_back(h * kFloat);  // ln_f
  param_bytes.push_back(h * kFloat);
  std::vector<uint64_t> params;
  for (uint64_t bytes : param_bytes) params.push_back(b.Alloc(bytes));
  std::vector<uint64_t> exp_avg, exp_avg_sq;  // AdamW state, lazily.

  for (int step = 0; step < o.steps; ++step) {
    const uint64_t t = rng.Uniform(o.min_seq, o.max_seq);
    const uint64_t bt = static_cast<uint64_t>(o.batch) * t;
    const uint64_t act = bt * h * kFloat;  // [B, T, h]
    const uint64_t stat = bt * kFloat;     // [B, T]
    const uint64_t attn =
        static_cast<uint64_t>(o.batch) * o.heads * t * t * kFloat;  // [B,H,T,T]
    const uint64_t logits_bytes = bt * o.vocab * kFloat;

    const uint64_t idx = b.Alloc(bt * 8);  // int64 token ids
    const uint64_t targets = b.Alloc(bt * 8);

    // Forward. `saved` holds what autograd keeps for backward, per layer.
    const uint64_t tok = b.Alloc(act);
    const uint64_t pos = b.Alloc(t * h * kFloat);
    uint64_t x = b.Alloc(act);
    b.Free(tok);
    b.Free(pos);
    // What autograd keeps for backward, per layer, with the size of the
    // gradient that flows back through each (0: none, as for the per-row
    // LayerNorm statistics).
    struct Saved {
      uint64_t id;
      uint64_t grad_bytes;
    };
    std::vector<std::vector<Saved>> saved(o.layers);
    for (int l = 0; l < o.layers; ++l) {
      std::vector<Saved>& s = saved[l];
      s.push_back({x, act});  // The layer input, which ln_1 backward reads.
      s.push_back({b.Alloc(act), act});          // ln_1 out
      s.push_back({b.Alloc(stat), 0});           // ln_1 mean
      s.push_back({b.Alloc(stat), 0});           // ln_1 rstd
      s.push_back({b.Alloc(3 * act), 3 * act});  // qkv
      // q @ k^T, scaled, masked: each op a new [B,H,T,T] tensor, of which
      // only the softmax output survives.
      const uint64_t scores = b.Alloc(attn);
      const uint64_t scaled = b.Alloc(attn);
      b.Free(scores);
      const uint64_t masked = b.Alloc(attn);
      b.Free(scaled);
      s.push_back({b.Alloc(attn), attn});  // softmax
      b.Free(masked);
      const uint64_t y = b.Alloc(act);   // att @ v, before the transpose
      s.push_back({b.Alloc(act), act});  // .contiguous(): c_proj input
      b.Free(y);
      const uint64_t proj = b.Alloc(act);
      s.push_back({b.Alloc(act), act});  // residual sum: ln_2 input
      b.Free(proj);
      s.push_back({b.Alloc(act), act});          // ln_2 out
      s.push_back({b.Alloc(stat), 0});           // ln_2 mean
      s.push_back({b.Alloc(stat), 0});           // ln_2 rstd
      s.push_back({b.Alloc(4 * act), 4 * act});  // c_fc out
      s.push_back({b.Alloc(4 * act), 4 * act});  // gelu out
      const uint64_t mlp = b.Alloc(act);
      x = b.Alloc(act);  // Residual sum: the next layer's input.
      b.Free(mlp);
    }
    const uint64_t lnf = b.Alloc(act);
    const uint64_t lnf_stats = b.Alloc(2 * stat);
    const uint64_t logits = b.Alloc(logits_bytes);
    const uint64_t log_probs = b.Alloc(logits_bytes);
    const uint64_t loss = b.Alloc(kFloat);

    // Backward. Gradients are allocated as autograd reaches each op;
    // saved activations are freed as soon as their op's backward is done.
    std::vector<uint64_t> grads(params.size(), ~uint64_t{0});
    auto param_grad = [&](size_t p) {
      if (grads[p] == ~uint64_t{0}) grads[p] = b.Alloc(param_bytes[p]);
    };
    uint64_t g = b.Alloc(logits_bytes);  // d loss / d logits
    b.Free(log_probs);
    param_grad(0);  // The tied head's weight gradient lands on wte.
    uint64_t g_next = b.Alloc(act);
    b.Free(g);
    g = g_next;
    param_grad(param_bytes.size() - 2);
    param_grad(param_bytes.size() - 1);
    b.Free(lnf);
    b.Free(lnf_stats);
    g_next = b.Alloc(act);
    b.Free(g);
    g = g_next;
    b.Free(x);
    for (int l = o.layers - 1; l >= 0; --l) {
      const std::vector<Saved>& s = saved[l];
      const size_t base = first_layer_param + l * layer_params.size();
      for (size_t i = s.size(); i-- > 0;) {
        // Spread the layer's parameter gradients over its backward, in
        // reverse, as each Linear / LayerNorm backward produces them.
        const size_t lo = layer_params.size() * i / s.size();
        const size_t hi = layer_params.size() * (i + 1) / s.size();
        for (size_t p = hi; p-- > lo;) param_grad(base + p);
        if (s[i].grad_bytes != 0) {
          g_next = b.Alloc(s[i].grad_bytes);
          if (s[i].grad_bytes == attn) {
            // Softmax backward's elementwise product.
            b.Free(b.Alloc(attn));
          }
          b.Free(g);
          g = g_next;
        }
        b.Free(s[i].id);
      }
    }
    // Embedding backward builds a dense [vocab, h] gradient and adds it to
    // wte's; position embedding gets its own.
    const uint64_t emb_tmp = b.Alloc(param_bytes[0]);
    b.Free(emb_tmp);
    param_grad(1);
    b.Free(g);

    // AdamW (foreach): state on the first step, then a sqrt(exp_avg_sq)
    // temporary per parameter, all live at once.
    if (exp_avg.empty()) {
      for (uint64_t bytes : param_bytes) {
        exp_avg.push_back(b.Alloc(bytes));
        exp_avg_sq.push_back(b.Alloc(bytes));
      }
    }
    std::vector<uint64_t> sqrt_tmp;
    for (uint64_t bytes : param_bytes) sqrt_tmp.push_back(b.Alloc(bytes));
    for (uint64_t id : sqrt_tmp) b.Free(id);
    // zero_grad(set_to_none=True).
    for (uint64_t id : grads) {
      if (id != ~uint64_t{0}) b.Free(id);
    }
    b.Free(loss);
    b.Free(logits);
    b.Free(targets);
    b.Free(idx);
  }
  return std::move(b).Finish();
}

Trace GrowingBuffers(const GrowingOptions& o) {
  Rng rng(o.seed);
  TraceBuilder b("growing");
  Expiry expiry(o.steps);
  struct Buffer {
    uint64_t id;
    uint64_t bytes;
  };
  std::vector<Buffer> buffers;
  for (int i = 0; i < o.buffers; ++i) {
    // Staggered starts so the buffers do not hit the same sizes together.
    const uint64_t bytes = o.initial_bytes * (i + 1);
    buffers.push_back({b.Alloc(bytes), bytes});
  }
  for (int step = 0; step < o.steps; ++step) {
    for (const PendingFree& f : expiry.Take(step)) b.Free(f.id);
    // -1 marks a medium allocation, >= 0 the buffer to grow; shuffled so
    // the resizes land among the churn.
    std::vector<int> actions(o.churn_per_step, -1);
    for (int i = 0; i < o.buffers; ++i) actions.push_back(i);
    rng.Shuffle(actions);
    for (int action : actions) {
      if (action < 0) {
        const uint64_t id = b.Alloc(rng.LogUniform(64 * kKiB, 16 * kMiB));
        expiry.At(step + static_cast<int>(rng.Uniform(1, 8)), {id, 0});
        continue;
      }
      Buffer& buf = buffers[action];
      uint64_t bytes =
          static_cast<uint64_t>(static_cast<double>(buf.bytes) * o.growth);
      if (bytes > o.max_bytes || bytes <= buf.bytes) bytes = o.initial_bytes;
      // A resize copies: the new buffer exists before the old one goes.
      const uint64_t id = b.Alloc(bytes);
      b.Free(buf.id);
      buf = {id, bytes};
    }
  }
  expiry.DrainInto(b);
  return std::move(b).Finish();
}

Trace PinnedAmongShortLived(const PinnedOptions& o) {
  Rng rng(o.seed);
  TraceBuilder b("pinned");
  Expiry expiry(o.steps);
  const int whole = static_cast<int>(o.long_lived_per_step);
  const double fraction = o.long_lived_per_step - whole;
  for (int step = 0; step < o.steps; ++step) {
    for (const PendingFree& f : expiry.Take(step)) b.Free(f.id);
    // 0 = short-lived, 1 = long-lived, in a random order.
    std::vector<int> kinds(o.short_lived_per_step, 0);
    const int long_lived = whole + (rng.Chance(fraction) ? 1 : 0);
    kinds.insert(kinds.end(), long_lived, 1);
    rng.Shuffle(kinds);
    for (int kind : kinds) {
      if (kind == 1) {
        const uint64_t id = b.Alloc(rng.LogUniform(512, 2 * kMiB));
        expiry.At(step + static_cast<int>(rng.Uniform(o.min_long_life_steps,
                                                      o.max_long_life_steps)),
                  {id, 0});
      } else {
        // Mostly gone by the next step; a few survive one more.
        const uint64_t id = b.Alloc(rng.LogUniform(4 * kKiB, 8 * kMiB));
        expiry.At(step + (rng.Chance(0.2) ? 2 : 1), {id, 0});
      }
    }
  }
  expiry.DrainInto(b);
  return std::move(b).Finish();
}

Trace SmallWithOccasionalHuge(const SmallHugeOptions& o) {
  Rng rng(o.seed);
  TraceBuilder b("small-huge");
  Expiry expiry(o.steps);
  for (int step = 0; step < o.steps; ++step) {
    for (const PendingFree& f : expiry.Take(step)) b.Free(f.id);
    // The huge block arrives mid-step, among the small ones.
    const bool huge = step % o.huge_every == o.huge_every / 2;
    const int huge_at = static_cast<int>(rng.Below(o.small_per_step + 1));
    for (int i = 0; i <= o.small_per_step; ++i) {
      if (huge && i == huge_at) {
        const uint64_t id =
            b.Alloc(rng.Uniform(o.min_huge_bytes, o.max_huge_bytes));
        expiry.At(step + static_cast<int>(rng.Uniform(1, 5)), {id, 0});
      }
      if (i == o.small_per_step) break;
      const uint64_t id = b.Alloc(rng.LogUniform(512, kMiB));
      // A few small blocks outlive several huge ones and keep the segments
      // around them busy.
      const int life = rng.Chance(0.05)
                           ? static_cast<int>(rng.Uniform(100, 1000))
                           : static_cast<int>(rng.Uniform(1, 16));
      expiry.At(step + life, {id, 0});
    }
  }
  expiry.DrainInto(b);
  return std::move(b).Finish();
}

Trace TwoStreams(const TwoStreamsOptions& o) {
  Rng rng(o.seed);
  TraceBuilder b("two-streams");
  Expiry expiry(o.steps);
  for (int step = 0; step < o.steps; ++step) {
    // Allocations and this step's frees interleave in a random order, as
    // two streams' host-side work does.
    std::vector<PendingFree> frees = expiry.Take(step);
    std::vector<int> order(frees.size(), -1);
    order.insert(order.end(), o.blocks_per_step, 1);
    rng.Shuffle(order);
    size_t next_free = 0;
    for (int op : order) {
      if (op < 0) {
        const PendingFree& f = frees[next_free++];
        b.FreeAfterUseOn(f.id, f.stream);
        continue;
      }
      // The compute stream does most of the allocating.
      const uint64_t stream = rng.Chance(0.6) ? 0 : 1;
      const uint64_t id = b.Alloc(rng.LogUniform(4 * kKiB, 64 * kMiB), stream);
      const uint64_t last_use =
          rng.Chance(o.cross_stream_fraction) ? 1 - stream : stream;
      expiry.At(step + static_cast<int>(rng.Uniform(1, 4)), {id, last_use});
    }
  }
  expiry.DrainInto(b);
  return std::move(b).Finish();
}

Trace Churn(const ChurnOptions& o) {
  const bench::ChurnSchedule schedule = bench::MakeChurnSchedule(
      o.window, static_cast<std::size_t>(o.churn_steps), o.seed);
  TraceBuilder b("churn");
  std::vector<uint64_t> slots;
  slots.reserve(schedule.prefill.size());
  for (const std::size_t bytes : schedule.prefill) slots.push_back(b.Alloc(bytes));
  for (std::size_t i = 0; i < schedule.sizes.size(); ++i) {
    uint64_t& slot = slots[schedule.victims[i]];
    b.Free(slot);
    slot = b.Alloc(schedule.sizes[i]);
  }
  Trace t = std::move(b).Finish();
  t.steps = o.churn_steps / 1000;
  return t;
}

std::vector<std::string> ScenarioNames() {
  return {"transformer", "growing", "pinned", "small-huge", "two-streams", "churn"};
}

absl::StatusOr<Trace> MakeScenario(std::string_view name, uint64_t seed) {
  if (name == "transformer") return TransformerTraining({.seed = seed});
  if (name == "growing") return GrowingBuffers({.seed = seed});
  if (name == "pinned") return PinnedAmongShortLived({.seed = seed});
  if (name == "small-huge") return SmallWithOccasionalHuge({.seed = seed});
  if (name == "two-streams") return TwoStreams({.seed = seed});
  if (name == "churn") return Churn({.seed = seed});
  return absl::InvalidArgumentError(
      absl::StrCat("unknown scenario '", std::string(name),
                   "'; known: ", absl::StrJoin(ScenarioNames(), ", ")));
}

}  // namespace ccalloc::scenarios
