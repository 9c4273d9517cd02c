// api.cc — the C++ API over DeviceAllocator.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "allocator/backends/cuda_backend.h"
#include "allocator/cache/device_allocator.h"
#include "stats/tags.h"
#include "allocator/backends/sim_backend.h"
#include "ccalloc/allocator.h"

namespace ccalloc {
namespace {

DevicePtr ToDevice(void* ptr) { return reinterpret_cast<DevicePtr>(ptr); }
StreamId ToStream(void* stream) { return reinterpret_cast<StreamId>(stream); }

}  // namespace

Allocator::Allocator(std::unique_ptr<DeviceAllocator> impl) : impl_(std::move(impl)) {}
Allocator::~Allocator() = default;

absl::StatusOr<std::unique_ptr<Allocator>> Allocator::Build(
    absl::StatusOr<std::unique_ptr<DeviceBackend>> backend, absl::string_view conf,
    bool from_env) {
  absl::StatusOr<Options> options =
      conf.empty() && from_env ? OptionsFromEnvironment() : ParseOptions(conf);
  if (!options.ok()) return options.status();
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<Allocator>(
      new Allocator(std::make_unique<DeviceAllocator>(std::move(*backend), *options)));
}

absl::StatusOr<std::unique_ptr<Allocator>> Allocator::Create(int device,
                                                             absl::string_view conf,
                                                             bool from_env) {
  return Build(CreateCudaBackend(device), conf, from_env);
}

absl::StatusOr<std::unique_ptr<Allocator>> Allocator::CreateSimulated(std::size_t capacity,
                                                                      absl::string_view conf,
                                                                      bool from_env) {
  SimBackend::Config config;
  config.capacity = capacity;
  // Nothing runs on a simulated device, so recorded work is finished at once.
  config.auto_complete_events = true;
  return Build(std::make_unique<SimBackend>(config), conf, from_env);
}

absl::StatusOr<void*> Allocator::Allocate(std::size_t size, void* stream) {
  absl::StatusOr<DevicePtr> ptr = impl_->Allocate(size, ToStream(stream));
  if (!ptr.ok()) return ptr.status();
  return reinterpret_cast<void*>(*ptr);
}

absl::Status Allocator::Free(void* ptr) { return impl_->Free(ToDevice(ptr)); }

absl::Status Allocator::RecordStream(void* ptr, void* stream) {
  return impl_->RecordStream(ToDevice(ptr), ToStream(stream));
}

absl::Status Allocator::EmptyCache() { return impl_->EmptyCache(); }
absl::Status Allocator::SetMemoryLimit(std::size_t bytes) {
  return impl_->SetMemoryLimit(bytes);
}
absl::Status Allocator::SetMemoryFraction(double fraction) {
  return impl_->SetMemoryFraction(fraction);
}

absl::Status Allocator::BeginAllocateToPool(std::uint64_t pool, void* stream) {
  const StreamId routed = ToStream(stream);
  return impl_->BeginAllocateToPool(pool, [routed](StreamId s) { return s == routed; });
}
absl::Status Allocator::EndAllocateToPool(std::uint64_t pool) {
  return impl_->EndAllocateToPool(pool);
}
absl::Status Allocator::ReleasePool(std::uint64_t pool) { return impl_->ReleasePool(pool); }

std::vector<std::pair<std::string, std::int64_t>> Allocator::Stats() const {
  return Flatten(impl_->GetStats());
}

std::uint32_t Allocator::InternTag(absl::string_view name) {
  return ::ccalloc::InternTag(std::string_view(name.data(), name.size()));
}
std::string Allocator::TagName(std::uint32_t tag) { return ::ccalloc::TagName(tag); }
std::uint32_t Allocator::SetCurrentTag(std::uint32_t tag) { return ::ccalloc::SetCurrentTag(tag); }
std::uint32_t Allocator::CurrentTag() { return ::ccalloc::CurrentTag(); }

std::uint32_t Allocator::SetCurrentRegion(std::uint32_t region) {
  return ::ccalloc::SetCurrentRegion(region);
}
std::uint32_t Allocator::CurrentRegion() { return ::ccalloc::CurrentRegion(); }
absl::StatusOr<std::size_t> Allocator::Pause(std::uint32_t region, PauseOptions options) {
  return impl_->Pause(region, DeviceAllocator::PauseOptions{options.backup});
}
absl::StatusOr<std::size_t> Allocator::Resume(std::uint32_t region) {
  return impl_->Resume(region);
}
absl::StatusOr<std::size_t> Allocator::ReserveBackup(std::uint32_t region) {
  return impl_->ReserveBackup(region);
}

std::vector<Allocator::TagStat> Allocator::TagStats() const {
  std::vector<TagStat> out;
  for (const TagUsage& u : impl_->TagStats()) {
    out.push_back(TagStat{u.tag, ::ccalloc::TagName(u.tag), u.current_bytes, u.peak_bytes,
                          u.blocks});
  }
  return out;
}

std::string Allocator::TagStatsJson() const { return TagUsageToJson(impl_->TagStats()); }

absl::StatusOr<std::int64_t> Allocator::Stat(absl::string_view key) const {
  std::vector<std::pair<std::string, std::int64_t>> stats = Stats();
  auto it = std::lower_bound(
      stats.begin(), stats.end(), key,
      [](const std::pair<std::string, std::int64_t>& e, absl::string_view k) {
        return e.first < k;
      });
  if (it == stats.end() || it->first != key) {
    return absl::InvalidArgumentError(absl::StrCat("unknown statistic '", key, "'"));
  }
  return it->second;
}

void Allocator::ResetPeakStats() { impl_->ResetPeakStats(); }
std::string Allocator::StatsJson() const { return StatsToJson(impl_->GetStats()); }
std::string Allocator::SnapshotJson() const { return SnapshotToJson(impl_->TakeSnapshot()); }
std::string Allocator::Summary() const { return SummaryText(impl_->TakeSnapshot()); }

}  // namespace ccalloc
