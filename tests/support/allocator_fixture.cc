// allocator_fixture.cc — see allocator_fixture.h.
#include "tests/support/allocator_fixture.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "allocator/backends/cuda_backend.h"

namespace ccalloc::test {
namespace {

int PoolIndex(PoolKind pool) { return pool == PoolKind::kSmall ? 1 : 2; }

std::string Hex(std::uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

// The stream value CUDA reserves for the calling thread's default stream
// (CU_STREAM_PER_THREAD); usable without creating anything.
constexpr StreamId kCudaPerThreadStream = 0x2;

}  // namespace

// ---------------------------------------------------------------------------
// TrackingBackend
// ---------------------------------------------------------------------------

std::string Outstanding::ToString() const {
  return absl::StrCat("bytes=", bytes.load(), " allocations=", allocations.load(),
                      " physical=", physical.load(), " mappings=", mappings.load(),
                      " ranges=", ranges.load(), " events=", events.load());
}

absl::StatusOr<DevicePtr> TrackingBackend::Allocate(std::size_t bytes) {
  absl::StatusOr<DevicePtr> ptr = inner().Allocate(bytes);
  if (ptr.ok()) {
    out_->bytes += static_cast<std::int64_t>(bytes);
    ++out_->allocations;
  }
  return ptr;
}

absl::Status TrackingBackend::Deallocate(DevicePtr ptr, std::size_t bytes) {
  absl::Status s = inner().Deallocate(ptr, bytes);
  if (s.ok()) {
    out_->bytes -= static_cast<std::int64_t>(bytes);
    --out_->allocations;
  }
  return s;
}

absl::StatusOr<EventHandle> TrackingBackend::RecordEvent(StreamId stream) {
  absl::StatusOr<EventHandle> event = inner().RecordEvent(stream);
  if (event.ok()) ++out_->events;
  return event;
}

void TrackingBackend::DestroyEvent(EventHandle event) {
  inner().DestroyEvent(event);
  --out_->events;
}

absl::StatusOr<DevicePtr> TrackingBackend::ReserveAddressRange(std::size_t bytes) {
  absl::StatusOr<DevicePtr> base = inner().ReserveAddressRange(bytes);
  if (base.ok()) ++out_->ranges;
  return base;
}

absl::Status TrackingBackend::ReleaseAddressRange(DevicePtr base, std::size_t bytes) {
  absl::Status s = inner().ReleaseAddressRange(base, bytes);
  if (s.ok()) --out_->ranges;
  return s;
}

absl::StatusOr<PhysicalHandle> TrackingBackend::CreatePhysical(std::size_t bytes) {
  absl::StatusOr<PhysicalHandle> handle = inner().CreatePhysical(bytes);
  if (handle.ok()) {
    out_->bytes += static_cast<std::int64_t>(bytes);
    ++out_->physical;
    absl::MutexLock lock(&mu_);
    physical_sizes_[*handle] = bytes;
  }
  return handle;
}

absl::Status TrackingBackend::ReleasePhysical(PhysicalHandle handle) {
  absl::Status s = inner().ReleasePhysical(handle);
  if (s.ok()) {
    absl::MutexLock lock(&mu_);
    auto it = physical_sizes_.find(handle);
    if (it != physical_sizes_.end()) {
      out_->bytes -= static_cast<std::int64_t>(it->second);
      physical_sizes_.erase(it);
    }
    --out_->physical;
  }
  return s;
}

absl::StatusOr<PhysicalHandle> TrackingBackend::ImportPhysical(SharedPhysical from) {
  absl::StatusOr<PhysicalHandle> handle = inner().ImportPhysical(from);
  if (handle.ok()) ++out_->physical;
  return handle;
}

absl::Status TrackingBackend::Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) {
  absl::Status s = inner().Map(va, bytes, handle);
  if (s.ok()) ++out_->mappings;
  return s;
}

absl::Status TrackingBackend::MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                                        absl::Span<const int> peers) {
  absl::Status s = inner().MapChunks(va, chunks, peers);
  if (s.ok()) out_->mappings += static_cast<std::int64_t>(chunks.size());
  return s;
}

absl::Status TrackingBackend::Unmap(DevicePtr va, std::size_t bytes) {
  absl::Status s = inner().Unmap(va, bytes);
  if (s.ok()) --out_->mappings;
  return s;
}

// ---------------------------------------------------------------------------
// AllocatorEnv
// ---------------------------------------------------------------------------

AllocatorEnv::~AllocatorEnv() = default;

bool AllocatorEnv::Available(std::string* why) const {
  if (is_sim()) return true;
  if (!CudaDeviceAvailable()) {
    if (why != nullptr) {
      *why = "no CUDA driver or device on this machine (CudaDeviceAvailable() is false)";
    }
    return false;
  }
  if (growable_) {
    absl::StatusOr<std::unique_ptr<DeviceBackend>> backend = CreateCudaBackend(0);
    if (!backend.ok()) {
      if (why != nullptr)
        *why = absl::StrCat("CreateCudaBackend(0): ", backend.status().ToString());
      return false;
    }
    if (!(*backend)->SupportsVirtualMemory()) {
      if (why != nullptr) *why = "device 0 does not support virtual memory management";
      return false;
    }
  }
  return true;
}

std::string AllocatorEnv::Name() const {
  return absl::StrCat(is_sim() ? "Sim" : "Cuda", growable_ ? "Growable" : "Classic");
}

Options AllocatorEnv::BaseOptions() const {
  Options options = PytorchNativeOptions();
  options.expandable_segments = growable_;
  return options;
}

absl::StatusOr<std::unique_ptr<DeviceAllocator>> AllocatorEnv::Make(Options options,
                                                                    std::size_t capacity) {
  options.expandable_segments = growable_;
  std::unique_ptr<DeviceBackend> real;
  SimBackend* sim = nullptr;
  if (is_sim()) {
    SimBackend::Config config;
    config.capacity = capacity;
    config.virtual_memory = true;
    config.auto_complete_events = false;
    auto backend = std::make_unique<SimBackend>(config);
    sim = backend.get();
    real = std::move(backend);
  } else {
    absl::StatusOr<std::unique_ptr<DeviceBackend>> cuda = CreateCudaBackend(0);
    if (!cuda.ok()) return cuda.status();
    real = std::move(*cuda);
    if (growable_ && !real->SupportsVirtualMemory()) {
      return absl::UnavailableError("the CUDA device does not support virtual memory");
    }
  }
  last_backend_ = real.get();
  last_sim_ = sim;
  auto tracking = std::make_unique<TrackingBackend>(real.get(), &outstanding_);
  backends_.push_back(std::move(real));
  return std::make_unique<DeviceAllocator>(std::move(tracking), options);
}

StreamId AllocatorEnv::stream(int i) const {
  if (is_sim()) return static_cast<StreamId>(i);
  return i == 0 ? StreamId{0} : kCudaPerThreadStream;
}

void AllocatorEnv::CompleteStream(StreamId stream) {
  if (last_sim_ != nullptr) {
    last_sim_->CompleteStream(stream);
  } else if (last_backend_ != nullptr) {
    EXPECT_TRUE(last_backend_->SynchronizeDevice().ok());
  }
}

void AllocatorEnv::CompleteAll() {
  if (last_sim_ != nullptr) {
    last_sim_->CompleteAll();
  } else if (last_backend_ != nullptr) {
    EXPECT_TRUE(last_backend_->SynchronizeDevice().ok());
  }
}

::testing::AssertionResult AllocatorEnv::NothingOutstanding() const {
  if (!outstanding_.Nothing()) {
    return ::testing::AssertionFailure()
           << Name() << ": still outstanding: " << outstanding_.ToString();
  }
  for (const auto& backend : backends_) {
    if (auto* sim = dynamic_cast<SimBackend*>(backend.get());
        sim != nullptr && !sim->NothingOutstanding()) {
      SimBackend::Counts c = sim->counts();
      return ::testing::AssertionFailure()
             << "SimBackend has outstanding resources: bytes_in_use=" << c.bytes_in_use
             << " allocations=" << c.live_allocations << " physical=" << c.live_physical
             << " mappings=" << c.live_mappings << " ranges=" << c.live_ranges
             << " events=" << c.live_events;
    }
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

const SegmentInfo* SegmentOf(const Snapshot& snapshot, DevicePtr ptr) {
  for (const SegmentInfo& s : snapshot.segments) {
    if (ptr >= s.address && ptr < s.address + s.total_size) return &s;
  }
  return nullptr;
}

const BlockInfo* BlockAt(const Snapshot& snapshot, DevicePtr ptr) {
  const SegmentInfo* segment = SegmentOf(snapshot, ptr);
  if (segment == nullptr) return nullptr;
  for (const BlockInfo& b : segment->blocks) {
    if (b.address == ptr) return &b;
  }
  return nullptr;
}

::testing::AssertionResult WaitStream(SimBackend& sim, StreamId waiter, StreamId from) {
  absl::StatusOr<EventHandle> event = sim.RecordEvent(from);
  if (!event.ok()) return ::testing::AssertionFailure() << event.status();
  absl::Status s = sim.StreamWaitEvent(waiter, *event);
  sim.DestroyEvent(*event);
  if (!s.ok()) return ::testing::AssertionFailure() << s;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult IsValid(const DeviceAllocator& alloc) {
  std::string why;
  if (alloc.Validate(&why)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "Validate() failed: " << why;
}

std::string StateFingerprint(const DeviceAllocator& alloc) {
  return SnapshotToJson(alloc.TakeSnapshot());
}

// ---------------------------------------------------------------------------
// ReferenceModel
// ---------------------------------------------------------------------------

::testing::AssertionResult ReferenceModel::Add(DevicePtr ptr, const LiveBlock& block) {
  const std::size_t extent = std::max(block.size, block.rounded);
  auto next = live_.lower_bound(ptr);
  if (next != live_.end() && next->first < ptr + extent) {
    return ::testing::AssertionFailure() << "new block " << Hex(ptr) << " (" << extent
                                         << " bytes) overlaps live block " << Hex(next->first);
  }
  if (next != live_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + std::max(prev->second.size, prev->second.rounded) > ptr) {
      return ::testing::AssertionFailure()
             << "new block " << Hex(ptr) << " lies inside live block " << Hex(prev->first) << " ("
             << std::max(prev->second.size, prev->second.rounded) << " bytes)";
    }
  }
  live_.emplace(ptr, block);
  for (int p : {0, PoolIndex(block.pool)}) {
    count_[p] += 1;
    bytes_[p] += static_cast<std::int64_t>(block.size);
    requested_[p] += static_cast<std::int64_t>(block.requested);
  }
  return ::testing::AssertionSuccess();
}

LiveBlock ReferenceModel::Remove(DevicePtr ptr) {
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    ADD_FAILURE() << "the reference model has no block at " << Hex(ptr);
    return LiveBlock{};
  }
  LiveBlock block = it->second;
  live_.erase(it);
  for (int p : {0, PoolIndex(block.pool)}) {
    count_[p] -= 1;
    bytes_[p] -= static_cast<std::int64_t>(block.size);
    requested_[p] -= static_cast<std::int64_t>(block.requested);
  }
  return block;
}

DevicePtr ReferenceModel::Pick(std::mt19937_64& rng) const {
  std::uniform_int_distribution<std::size_t> index(0, live_.size() - 1);
  // std::map has no random access; the live set is small (tens of blocks).
  return std::next(live_.begin(), static_cast<std::ptrdiff_t>(index(rng)))->first;
}

::testing::AssertionResult ReferenceModel::MatchesCounters(const MemoryStats& stats) const {
  static constexpr const char* kPool[3] = {"all", "small_pool", "large_pool"};
  for (int p = 0; p < 3; ++p) {
    if (stats.allocation[p].current != count_[p]) {
      return ::testing::AssertionFailure()
             << "allocation." << kPool[p] << ".current is " << stats.allocation[p].current
             << ", the model has " << count_[p] << " live blocks";
    }
    if (stats.allocated_bytes[p].current != bytes_[p]) {
      return ::testing::AssertionFailure()
             << "allocated_bytes." << kPool[p] << ".current is " << stats.allocated_bytes[p].current
             << ", the model has " << bytes_[p];
    }
    if (stats.requested_bytes[p].current != requested_[p]) {
      return ::testing::AssertionFailure()
             << "requested_bytes." << kPool[p] << ".current is " << stats.requested_bytes[p].current
             << ", the model has " << requested_[p];
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult ReferenceModel::MatchesSnapshot(const Snapshot& snapshot) const {
  std::size_t allocated_in_snapshot = 0;
  for (const SegmentInfo& segment : snapshot.segments) {
    for (const BlockInfo& b : segment.blocks) {
      if (b.status != BlockStatus::kActiveAllocated) continue;
      ++allocated_in_snapshot;
      auto it = live_.find(b.address);
      if (it == live_.end()) {
        return ::testing::AssertionFailure() << "the snapshot has an allocated block at "
                                             << Hex(b.address) << " that the program does not hold";
      }
      const LiveBlock& m = it->second;
      if (b.size < m.rounded || (m.size != 0 && b.size != m.size) ||
          b.requested_size != m.requested || (segment.small_pool != (m.pool == PoolKind::kSmall)) ||
          b.stream != m.stream) {
        return ::testing::AssertionFailure()
               << "block " << Hex(b.address) << ": snapshot size " << b.size << " requested "
               << b.requested_size << " stream " << b.stream << " small_pool "
               << segment.small_pool << "; the model has size " << m.size << " (rounded "
               << m.rounded << ") requested " << m.requested << " stream " << m.stream;
      }
    }
  }
  if (allocated_in_snapshot != live_.size()) {
    return ::testing::AssertionFailure() << "the snapshot shows " << allocated_in_snapshot
                                         << " allocated blocks, the program holds " << live_.size();
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// Random op stream
// ---------------------------------------------------------------------------

LogUniformSizes::LogUniformSizes(std::size_t lo, std::size_t hi)
    : log_size_(std::log(static_cast<double>(lo)), std::log(static_cast<double>(hi))),
      lo_(lo),
      hi_(hi) {}

std::size_t LogUniformSizes::operator()(std::mt19937_64& rng) {
  auto size = static_cast<std::size_t>(std::exp(log_size_(rng)));
  return std::clamp(size, lo_, hi_);
}

::testing::AssertionResult RunRandomOps(DeviceAllocator& alloc, AllocatorEnv& env,
                                        const RandomOpsConfig& config, ReferenceModel& model,
                                        RandomOpsResult* result) {
  if (config.streams.empty()) {
    return ::testing::AssertionFailure() << "RandomOpsConfig.streams is empty";
  }
  RandomOpsResult local;
  RandomOpsResult& r = result != nullptr ? *result : local;
  std::mt19937_64 rng(config.seed);
  LogUniformSizes sizes(config.min_size, config.max_size);
  std::uniform_int_distribution<int> per_mille(0, 999);
  const std::vector<StreamId>& others =
      config.other_streams.empty() ? config.streams : config.other_streams;
  std::uniform_int_distribution<std::size_t> pick_stream(0, config.streams.size() - 1);
  std::uniform_int_distribution<std::size_t> pick_other(0, others.size() - 1);
  std::uniform_int_distribution<std::size_t> live_target(0, config.max_live);
  // Only this test's requests are rounded by the plain 512-byte rule: the
  // model knows nothing of roundup_power2_divisions.
  const bool growable = alloc.options().expandable_segments;

  for (std::int64_t step = 0; step < config.operations; ++step) {
    const int roll = per_mille(rng);
    int threshold = config.empty_cache_per_mille;
    auto where = [&config, step] {
      return absl::StrCat(" (seed ", config.seed, ", step ", step, ")");
    };
    if (roll < threshold) {
      if (absl::Status s = alloc.EmptyCache(); !s.ok()) {
        return ::testing::AssertionFailure() << "EmptyCache: " << s << where();
      }
      ++r.empty_caches;
    } else if (roll < (threshold += config.complete_stream_per_mille)) {
      env.CompleteStream(others[pick_other(rng)]);
      ++r.completes;
    } else if (roll < (threshold += config.record_stream_per_mille) && !model.empty()) {
      DevicePtr ptr = model.Pick(rng);
      if (absl::Status s = alloc.RecordStream(ptr, others[pick_other(rng)]); !s.ok()) {
        return ::testing::AssertionFailure() << "RecordStream: " << s << where();
      }
      ++r.record_streams;
    } else if (model.empty() || live_target(rng) >= model.count()) {
      const std::size_t size = sizes(rng);
      const StreamId stream = config.streams[pick_stream(rng)];
      LiveBlock block;
      block.requested = size;
      block.rounded = RoundUpTo(std::max(size, kMinBlockSize), kMinBlockSize);
      block.pool = SizePolicy::PoolFor(block.rounded);
      block.stream = stream;
      MemoryStats before;
      if (config.check_counters) before = alloc.GetStats();
      absl::StatusOr<DevicePtr> ptr = alloc.Allocate(size, stream);
      if (!ptr.ok()) {
        return ::testing::AssertionFailure()
               << "Allocate(" << size << "): " << ptr.status() << where();
      }
      if (*ptr == 0) return ::testing::AssertionFailure() << "Allocate gave null" << where();
      if (config.check_counters) {
        // The block's size, as the counters saw it. A classic large block
        // keeps a remainder of up to 1 MiB rather than split it off; every
        // other block is exactly the rounded request.
        const MemoryStats after = alloc.GetStats();
        block.size = static_cast<std::size_t>(after.allocated_bytes[0].current -
                                              before.allocated_bytes[0].current);
        const std::size_t slack = block.pool == PoolKind::kLarge && !growable ? kSmallSize : 0;
        if (block.size < block.rounded || block.size > block.rounded + slack) {
          return ::testing::AssertionFailure()
                 << "a request of " << size << " bytes (rounded " << block.rounded
                 << ") got a block of " << block.size << " bytes" << where();
        }
      }
      if (::testing::AssertionResult added = model.Add(*ptr, block); !added) {
        return added << where();
      }
      ++r.allocations;
    } else {
      DevicePtr ptr = model.Pick(rng);
      if (absl::Status s = alloc.Free(ptr); !s.ok()) {
        return ::testing::AssertionFailure() << "Free: " << s << where();
      }
      model.Remove(ptr);
      ++r.frees;
    }

    if (config.check_counters) {
      if (::testing::AssertionResult m = model.MatchesCounters(alloc.GetStats()); !m) {
        return m << where();
      }
    }
    if (config.validate_every > 0 && (step + 1) % config.validate_every == 0) {
      if (::testing::AssertionResult v = IsValid(alloc); !v) return v << where();
    }
    if (config.snapshot_every > 0 && (step + 1) % config.snapshot_every == 0) {
      if (::testing::AssertionResult m = model.MatchesSnapshot(alloc.TakeSnapshot()); !m) {
        return m << where();
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ccalloc::test
