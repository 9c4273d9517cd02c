// soak_main.cc — ccalloc-soak: millions of random operations on many threads.
//
// One DeviceAllocator on a SimBackend whose events complete only when a
// thread says its stream has caught up. Each thread allocates on its own
// stream and frees its own blocks; blocks also travel between threads through
// a shared set (guarded by a mutex), where other threads record them on their
// own streams and free them, so frees leave blocks pending on streams that
// other threads complete. A checker thread runs Validate() (which takes the
// allocator's lock, racing with everything) every --validate-every operations.
// At the end the live blocks the threads hold are compared with a snapshot
// and with the counters, everything is freed, the cache emptied, the
// allocator destroyed, and the device must hold nothing.
//
//   ccalloc-soak [--ops 10000000] [--threads 8] [--policy classic|growable|growable-own-streams|lending]
//                [--seconds 0 (no cap)] [--validate-every 100000] [--seed 1]
//                [--conf CCALLOC_CONF (on top of the policy: an option's own paths)]
//
// Prints ops/s, ops done, invariant violations and leaks; exits 1 unless both
// are 0. Not a ctest test: it is a long run, like a benchmark.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "allocator/cache/device_allocator.h"
#include "allocator/cache/options.h"
#include "allocator/backends/sim_backend.h"
#include "stats/counters.h"
#include "stats/snapshot.h"
#include "tests/reliability/reliability_support.h"

namespace ccalloc::reliability {
namespace {

using Clock = std::chrono::steady_clock;

// What --policy names: classic or growable segments and, for growable ones,
// how memory is lent across streams (cross_stream_reuse): the default's
// (growable: where the cache would move memory, ordered on the device), not
// at all (growable-own-streams: PyTorch's contract), or wherever a stream
// would map (lending), ordered on the device while the lender's work may
// still run.
struct Policy {
  const char* name;
  bool growable;
  Options::CrossStreamReuse lend;
};
constexpr Policy kPolicies[] = {
    {"classic", false, Options::CrossStreamReuse::kNever},
    {"growable", true, Options::CrossStreamReuse::kWhenMoving},
    {"growable-own-streams", true, Options::CrossStreamReuse::kNever},
    {"lending", true, Options::CrossStreamReuse::kAlways}};

struct Flags {
  std::int64_t ops = 10'000'000;
  int threads = 8;
  const Policy* policy = &kPolicies[1];
  double seconds = 0;  // 0: no cap
  std::int64_t validate_every = 100'000;
  std::uint64_t seed = 1;
  std::string conf;  // CCALLOC_CONF syntax, over the policy's options
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "ccalloc-soak: %s\nusage: ccalloc-soak [--ops N] [--threads N] "
               "[--policy classic|growable|growable-own-streams|lending] [--seconds S]\n"
               "  [--validate-every N] [--seed N] [--conf CCALLOC_CONF]\n",
               why);
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") Usage("help");
    if (i + 1 >= argc) Usage(absl::StrCat("missing value for ", arg).c_str());
    const char* value = argv[++i];
    bool ok = true;
    if (arg == "--ops") {
      ok = absl::SimpleAtoi(value, &f.ops) && f.ops > 0;
    } else if (arg == "--threads") {
      ok = absl::SimpleAtoi(value, &f.threads) && f.threads > 0 && f.threads <= 256;
    } else if (arg == "--policy") {
      const auto named =
          std::find_if(std::begin(kPolicies), std::end(kPolicies),
                       [&](const Policy& p) { return std::strcmp(value, p.name) == 0; });
      ok = named != std::end(kPolicies);
      if (ok) f.policy = named;
    } else if (arg == "--seconds") {
      ok = absl::SimpleAtod(value, &f.seconds) && f.seconds >= 0;
    } else if (arg == "--validate-every") {
      ok = absl::SimpleAtoi(value, &f.validate_every) && f.validate_every > 0;
    } else if (arg == "--seed") {
      ok = absl::SimpleAtoi(value, &f.seed);
    } else if (arg == "--conf") {
      f.conf = value;
    } else {
      Usage(absl::StrCat("unknown flag ", arg).c_str());
    }
    if (!ok) Usage(absl::StrCat("bad value '", value, "' for ", arg).c_str());
  }
  return f;
}

struct Held {
  DevicePtr ptr;
  std::size_t requested;
};

// Blocks any thread may record on its stream and free.
struct SharedSet {
  absl::Mutex mu;
  std::vector<Held> blocks ABSL_GUARDED_BY(mu);
};

struct ThreadResult {
  std::int64_t ops = 0, allocs = 0, frees = 0, records = 0, shared_in = 0, shared_out = 0;
  std::int64_t completes = 0, empty_caches = 0, bad_inputs = 0, ooms = 0;
  std::int64_t violations = 0;
  std::string first_violation;
  std::vector<Held> live;
};

class Soak {
 public:
  explicit Soak(const Flags& flags) : flags_(flags) {
    SimBackend::Config config;
    config.capacity = 16 * kGiB;
    config.auto_complete_events = false;
    sim_ = std::make_unique<SimBackend>(config);
    options_ = PytorchNativeOptions();
    options_.expandable_segments = flags.policy->growable;
    options_.cross_stream_reuse = flags.policy->lend;
    if (!flags.conf.empty()) {
      absl::StatusOr<Options> parsed = ParseOptions(flags.conf, options_);
      if (!parsed.ok()) Usage(std::string(parsed.status().message()).c_str());
      options_ = *std::move(parsed);
    }
    alloc_ =
        std::make_unique<DeviceAllocator>(std::make_unique<BorrowedBackend>(sim_.get()), options_);
  }

  int Run() {
    const Clock::time_point start = Clock::now();
    if (flags_.seconds > 0) {
      deadline_ = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(flags_.seconds));
    }
    std::vector<ThreadResult> results(static_cast<std::size_t>(flags_.threads));
    std::vector<std::thread> threads;
    for (int t = 0; t < flags_.threads; ++t) {
      threads.emplace_back(
          [this, t, &results] { Worker(t, results[static_cast<std::size_t>(t)]); });
    }
    std::thread checker([this] { Checker(); });
    for (std::thread& thread : threads) thread.join();
    workers_done_.store(true);
    checker.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

    ThreadResult total;
    std::vector<Held> live;
    for (ThreadResult& r : results) {
      total.ops += r.ops;
      total.allocs += r.allocs;
      total.frees += r.frees;
      total.records += r.records;
      total.shared_in += r.shared_in;
      total.shared_out += r.shared_out;
      total.completes += r.completes;
      total.empty_caches += r.empty_caches;
      total.bad_inputs += r.bad_inputs;
      total.ooms += r.ooms;
      total.violations += r.violations;
      if (total.first_violation.empty()) total.first_violation = r.first_violation;
      live.insert(live.end(), r.live.begin(), r.live.end());
    }
    {
      absl::MutexLock lock(&shared_.mu);
      live.insert(live.end(), shared_.blocks.begin(), shared_.blocks.end());
    }
    std::int64_t violations = total.violations + checker_violations_.load();
    std::string first = total.first_violation.empty() ? checker_first_ : total.first_violation;
    auto violation = [&](std::string what) {
      if (violations++ == 0 || first.empty()) first = std::move(what);
    };

    // The end state, single-threaded now: the live blocks the threads hold
    // are exactly the snapshot's allocated blocks, and the counters agree.
    const std::size_t live_at_end = live.size();
    CheckEndState(live, violation);

    // Give everything back; the device must then hold nothing.
    for (const Held& h : live) {
      if (absl::Status s = alloc_->Free(h.ptr); !s.ok()) {
        violation(absl::StrCat("final free: ", s.ToString()));
      }
    }
    if (absl::Status s = alloc_->EmptyCache(); !s.ok()) {
      violation(absl::StrCat("final EmptyCache: ", s.ToString()));
    }
    std::string why;
    if (!alloc_->Validate(&why)) violation(absl::StrCat("final Validate: ", why));
    const MemoryStats stats = alloc_->GetStats();
    if (stats.reserved_bytes[kStatAll].current != 0 || stats.allocation[kStatAll].current != 0 ||
        stats.active[kStatAll].current != 0) {
      violation(absl::StrCat("after freeing everything: reserved ",
                             stats.reserved_bytes[kStatAll].current, ", allocation ",
                             stats.allocation[kStatAll].current, ", active ",
                             stats.active[kStatAll].current));
    }
    const std::int64_t leaks_before = OutstandingItems(sim_->counts());
    alloc_.reset();
    const SimBackend::Counts end = sim_->counts();
    const std::int64_t leaks = OutstandingItems(end) + leaks_before;

    std::printf(
        "ccalloc-soak: policy %s, %d threads, %lld ops requested%s\n",
        flags_.policy->name, flags_.threads,
        static_cast<long long>(flags_.ops),
        flags_.seconds > 0 ? absl::StrCat(", capped at ", flags_.seconds, " s").c_str() : "");
    std::printf("  ops done            %lld in %.2f s (%s)\n", static_cast<long long>(total.ops),
                elapsed, total.ops < flags_.ops ? "stopped by the time cap" : "all");
    std::printf("  ops/s               %.0f\n", static_cast<double>(total.ops) / elapsed);
    std::printf(
        "  mix                 %lld allocate, %lld free, %lld record_stream, "
        "%lld shared in/%lld out, %lld complete, %lld empty_cache, %lld bad frees, "
        "%lld OOM\n",
        static_cast<long long>(total.allocs), static_cast<long long>(total.frees),
        static_cast<long long>(total.records), static_cast<long long>(total.shared_in),
        static_cast<long long>(total.shared_out), static_cast<long long>(total.completes),
        static_cast<long long>(total.empty_caches), static_cast<long long>(total.bad_inputs),
        static_cast<long long>(total.ooms));
    std::printf("  validations         %lld concurrent + end checks (%zu blocks live at end)\n",
                static_cast<long long>(validations_.load()), live_at_end);
    std::printf(
        "  peak reserved       %s, peak allocated %s\n",
        FormatBytes(static_cast<std::uint64_t>(stats.reserved_bytes[kStatAll].peak)).c_str(),
        FormatBytes(static_cast<std::uint64_t>(stats.allocated_bytes[kStatAll].peak)).c_str());
    if (flags_.policy->lend != Options::CrossStreamReuse::kNever) {
      std::printf("  cross-stream loans  %lld (device-side waits %lld)\n",
                  static_cast<long long>(stats.num_cross_stream_reuses),
                  static_cast<long long>(stats.num_device_waits));
    }
    std::printf("  invariant violations %lld%s%s\n", static_cast<long long>(violations),
                first.empty() ? "" : " — first: ", first.c_str());
    std::printf("  leaks               %lld (%s)\n", static_cast<long long>(leaks),
                DescribeOutstanding(end).c_str());
    return violations == 0 && leaks == 0 ? 0 : 1;
  }

 private:
  bool OutOfTime() const { return deadline_ != Clock::time_point{} && Clock::now() >= deadline_; }

  void Worker(int t, ThreadResult& r) {
    std::mt19937_64 rng(flags_.seed * 1'000'003 + static_cast<std::uint64_t>(t));
    std::uniform_real_distribution<double> log_size(0.0, 26.0);  // 1 B .. 64 MiB
    std::uniform_int_distribution<int> per_mille(0, 999);
    const StreamId own = static_cast<StreamId>(t + 1);
    const std::int64_t quota =
        flags_.ops / flags_.threads + (t < flags_.ops % flags_.threads ? 1 : 0);
    constexpr std::size_t kMaxLive = 48;
    const std::size_t kMaxShared = 4 * static_cast<std::size_t>(flags_.threads);
    auto fail = [&r](std::string what) {
      if (r.violations++ == 0) r.first_violation = std::move(what);
    };
    auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };

    for (std::int64_t i = 0; i < quota; ++i) {
      if ((i & 1023) == 0 && OutOfTime()) break;
      ++r.ops;
      ops_done_.fetch_add(1, std::memory_order_relaxed);
      const int roll = per_mille(rng);
      if (roll < 450 && r.live.size() < kMaxLive) {
        const auto size = static_cast<std::size_t>(std::exp2(log_size(rng)));
        absl::StatusOr<DevicePtr> ptr = alloc_->Allocate(size, own);
        if (ptr.ok()) {
          r.live.push_back(Held{*ptr, size});
          ++r.allocs;
        } else if (absl::IsResourceExhausted(ptr.status())) {
          ++r.ooms;  // 16 GiB for at most threads * 48 * 64 MiB: should not happen
        } else {
          fail(absl::StrCat("allocate ", size, ": ", ptr.status().ToString()));
        }
      } else if (roll < 800 && !r.live.empty()) {
        const std::size_t k = pick(r.live.size());
        if (absl::Status s = alloc_->Free(r.live[k].ptr); s.ok()) {
          r.live[k] = r.live.back();
          r.live.pop_back();
          ++r.frees;
        } else {
          fail(absl::StrCat("free: ", s.ToString()));
        }
      } else if (roll < 860 && !r.live.empty()) {
        // Used by another thread's stream too.
        const StreamId other = 1 + pick(static_cast<std::size_t>(flags_.threads));
        if (absl::Status s = alloc_->RecordStream(r.live[pick(r.live.size())].ptr, other); s.ok()) {
          ++r.records;
        } else {
          fail(absl::StrCat("record_stream: ", s.ToString()));
        }
      } else if (roll < 910 && !r.live.empty()) {
        const std::size_t k = pick(r.live.size());
        {
          absl::MutexLock lock(&shared_.mu);
          if (shared_.blocks.size() >= kMaxShared) continue;
          shared_.blocks.push_back(r.live[k]);
        }
        r.live[k] = r.live.back();
        r.live.pop_back();
        ++r.shared_in;
      } else if (roll < 950) {
        // Take a block another thread shared: use it on this stream, and
        // free it half of the time. The set's lock keeps the block from being
        // freed by someone else meanwhile.
        absl::MutexLock lock(&shared_.mu);
        if (shared_.blocks.empty()) continue;
        const std::size_t k = pick(shared_.blocks.size());
        const Held h = shared_.blocks[k];
        if (absl::Status s = alloc_->RecordStream(h.ptr, own); !s.ok()) {
          fail(absl::StrCat("record_stream of a shared block: ", s.ToString()));
        }
        ++r.records;
        if (rng() % 2 == 0) {
          if (absl::Status s = alloc_->Free(h.ptr); !s.ok()) {
            fail(absl::StrCat("free of a shared block: ", s.ToString()));
          }
          shared_.blocks[k] = shared_.blocks.back();
          shared_.blocks.pop_back();
          ++r.shared_out;
          ++r.frees;
        }
      } else if (roll < 990) {
        // This thread's stream caught up with its work.
        sim_->CompleteStream(own);
        ++r.completes;
      } else if (roll < 999) {
        // A pointer no allocator handed out: refused, nothing changes.
        const DevicePtr bogus = (DevicePtr{1} << 40) + (rng() % 4096) * 512;
        absl::Status s = alloc_->Free(bogus);
        if (!absl::IsInvalidArgument(s)) fail(absl::StrCat("bad free: ", s.ToString()));
        ++r.bad_inputs;
      } else {
        if (absl::Status s = alloc_->EmptyCache(); !s.ok()) {
          fail(absl::StrCat("empty_cache: ", s.ToString()));
        }
        ++r.empty_caches;
      }
    }
  }

  void Checker() {
    std::int64_t next = flags_.validate_every;
    while (!workers_done_.load()) {
      if (ops_done_.load(std::memory_order_relaxed) < next) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      next += flags_.validate_every;
      std::string why;
      validations_.fetch_add(1);
      if (!alloc_->Validate(&why) && checker_violations_.fetch_add(1) == 0) {
        checker_first_ =
            absl::StrCat("Validate after ~", next - flags_.validate_every, " ops: ", why);
      }
      // A stats copy taken concurrently must be self-consistent too.
      if (!alloc_->GetStats().Validate() && checker_violations_.fetch_add(1) == 0) {
        checker_first_ = "a concurrent GetStats() copy is inconsistent";
      }
    }
  }

  template <typename Violation>
  void CheckEndState(const std::vector<Held>& live, Violation&& violation) {
    std::string why;
    if (!alloc_->Validate(&why)) violation(absl::StrCat("end Validate: ", why));
    const Snapshot snap = alloc_->TakeSnapshot();
    std::map<DevicePtr, const BlockInfo*> allocated;
    for (const SegmentInfo& segment : snap.segments) {
      for (const BlockInfo& b : segment.blocks) {
        if (b.status == BlockStatus::kActiveAllocated) allocated.emplace(b.address, &b);
      }
    }
    ReferenceModel model;
    for (const Held& h : live) {
      auto it = allocated.find(h.ptr);
      if (it == allocated.end()) {
        violation(absl::StrCat("a block a thread holds (0x", absl::Hex(h.ptr),
                               ") is not allocated in the snapshot"));
        continue;
      }
      if (it->second->requested_size != h.requested) {
        violation(absl::StrCat("block 0x", absl::Hex(h.ptr), ": requested ",
                               it->second->requested_size, " in the snapshot, ", h.requested,
                               " by the thread"));
      }
      if (!model.Add(h.ptr, ModelBlock{it->second->size, h.requested, 0}, options_,
                     flags_.policy->growable, &why)) {
        violation(why);
      }
    }
    if (allocated.size() != live.size()) {
      violation(absl::StrCat("the snapshot has ", allocated.size(),
                             " allocated blocks, the threads hold ", live.size()));
    }
    if (!model.MatchesCounters(alloc_->GetStats(), &why)) violation(why);
  }

  const Flags flags_;
  Options options_;
  std::unique_ptr<SimBackend> sim_;  // outlives the allocator
  std::unique_ptr<DeviceAllocator> alloc_;
  SharedSet shared_;
  Clock::time_point deadline_{};
  std::atomic<std::int64_t> ops_done_{0};
  std::atomic<bool> workers_done_{false};
  std::atomic<std::int64_t> validations_{0};
  std::atomic<std::int64_t> checker_violations_{0};
  std::string checker_first_;  // written by the checker only, read after join
};

}  // namespace
}  // namespace ccalloc::reliability

int main(int argc, char** argv) {
  const ccalloc::reliability::Flags flags = ccalloc::reliability::ParseFlags(argc, argv);
  ccalloc::reliability::Soak soak(flags);
  return soak.Run();
}
