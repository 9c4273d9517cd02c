#include "stats/counters.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ccalloc {
namespace {

constexpr const char* kPoolNames[3] = {"all", "small_pool", "large_pool"};

template <typename F>
void ForEachArray(MemoryStats& s, F f) {
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split,
                       &s.allocated_bytes, &s.reserved_bytes, &s.active_bytes,
                       &s.inactive_split_bytes, &s.requested_bytes}) {
    for (Stat& stat : *a) f(stat);
  }
  f(s.oversize_allocations);
  f(s.oversize_segments);
}

void AddArray(std::vector<std::pair<std::string, std::int64_t>>& out,
              const char* name, const StatArray& a) {
  for (int i = 0; i < 3; ++i) {
    std::string prefix = absl::StrCat(name, ".", kPoolNames[i], ".");
    out.emplace_back(prefix + "current", a[i].current);
    out.emplace_back(prefix + "peak", a[i].peak);
    out.emplace_back(prefix + "allocated", a[i].allocated);
    out.emplace_back(prefix + "freed", a[i].freed);
  }
}

void AddStat(std::vector<std::pair<std::string, std::int64_t>>& out,
             const char* name, const Stat& s) {
  out.emplace_back(absl::StrCat(name, ".current"), s.current);
  out.emplace_back(absl::StrCat(name, ".peak"), s.peak);
  out.emplace_back(absl::StrCat(name, ".allocated"), s.allocated);
  out.emplace_back(absl::StrCat(name, ".freed"), s.freed);
}

}  // namespace

void MemoryStats::ResetPeaks() {
  ForEachArray(*this, [](Stat& s) { s.ResetPeak(); });
}

void MemoryStats::ResetAccumulated() {
  ForEachArray(*this, [](Stat& s) { s.ResetAccumulated(); });
  num_alloc_retries = num_ooms = num_sync_all_streams = 0;
  num_device_alloc = num_device_free = 0;
  num_maps = num_unmaps = num_returns = num_allocs = num_stream_syncs = 0;
  num_foreground_unmaps = foreground_unmap_ns = 0;
  map_ns = create_ns = 0;
  num_cross_stream_reuses = num_device_waits = 0;
  prepare_ns = wait_ns = worker_ns = 0;
  wait_under_block_ns = wait_trim_ns = wait_release_ns = 0;
  num_waits_under_block = num_waits_trim = num_waits_release = 0;
  wait_under_block_bytes = 0;
}

bool MemoryStats::Validate() const {
  bool ok = true;
  MemoryStats copy = *this;
  ForEachArray(copy, [&ok](Stat& s) { ok = ok && s.Validate(); });
  // The "all" row is the sum of the two pools.
  for (const StatArray* a : {&allocation, &segment, &active, &inactive_split,
                             &allocated_bytes, &reserved_bytes, &active_bytes,
                             &inactive_split_bytes, &requested_bytes}) {
    ok = ok && (*a)[0].current == (*a)[1].current + (*a)[2].current;
  }
  // Blocks of a paused region are active over memory given back.
  ok = ok && allocated_bytes[0].current <= active_bytes[0].current &&
       active_bytes[0].current <= reserved_bytes[0].current + paused_bytes && paused_bytes >= 0 &&
       backup_bytes >= 0 && backup_bytes <= backup_host_bytes;
  return ok;
}

std::vector<std::pair<std::string, std::int64_t>> Flatten(const MemoryStats& s) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  out.reserve(128);
  AddArray(out, "active", s.active);
  AddArray(out, "active_bytes", s.active_bytes);
  AddArray(out, "allocated_bytes", s.allocated_bytes);
  AddArray(out, "allocation", s.allocation);
  AddArray(out, "inactive_split", s.inactive_split);
  AddArray(out, "inactive_split_bytes", s.inactive_split_bytes);
  AddArray(out, "requested_bytes", s.requested_bytes);
  AddArray(out, "reserved_bytes", s.reserved_bytes);
  AddArray(out, "segment", s.segment);
  AddStat(out, "oversize_allocations", s.oversize_allocations);
  AddStat(out, "oversize_segments", s.oversize_segments);
  out.emplace_back("max_split_size", s.max_split_size);
  out.emplace_back("num_alloc_retries", s.num_alloc_retries);
  out.emplace_back("num_device_alloc", s.num_device_alloc);
  out.emplace_back("num_device_free", s.num_device_free);
  out.emplace_back("num_ooms", s.num_ooms);
  out.emplace_back("num_sync_all_streams", s.num_sync_all_streams);
  out.emplace_back("ccalloc.num_allocs", s.num_allocs);
  out.emplace_back("ccalloc.num_maps", s.num_maps);
  out.emplace_back("ccalloc.num_returns", s.num_returns);
  out.emplace_back("ccalloc.num_stream_syncs", s.num_stream_syncs);
  out.emplace_back("ccalloc.num_cross_stream_reuses", s.num_cross_stream_reuses);
  out.emplace_back("ccalloc.num_device_waits", s.num_device_waits);
  out.emplace_back("ccalloc.num_unmaps", s.num_unmaps);
  out.emplace_back("ccalloc.num_foreground_unmaps", s.num_foreground_unmaps);
  out.emplace_back("ccalloc.foreground_unmap_ns", s.foreground_unmap_ns);
  out.emplace_back("ccalloc.map_ns", s.map_ns);
  out.emplace_back("ccalloc.create_ns", s.create_ns);
  out.emplace_back("ccalloc.prepare_ns", s.prepare_ns);
  out.emplace_back("ccalloc.wait_ns", s.wait_ns);
  out.emplace_back("ccalloc.worker_ns", s.worker_ns);
  out.emplace_back("ccalloc.wait_under_block_ns", s.wait_under_block_ns);
  out.emplace_back("ccalloc.wait_trim_ns", s.wait_trim_ns);
  out.emplace_back("ccalloc.wait_release_ns", s.wait_release_ns);
  out.emplace_back("ccalloc.num_waits_under_block", s.num_waits_under_block);
  out.emplace_back("ccalloc.num_waits_trim", s.num_waits_trim);
  out.emplace_back("ccalloc.num_waits_release", s.num_waits_release);
  out.emplace_back("ccalloc.wait_under_block_bytes", s.wait_under_block_bytes);
  out.emplace_back("ccalloc.driver_calls", s.driver_calls);
  out.emplace_back("ccalloc.driver_ns", s.driver_ns);
  out.emplace_back("ccalloc.background_driver_calls", s.background_driver_calls);
  out.emplace_back("ccalloc.background_driver_ns", s.background_driver_ns);
  out.emplace_back("ccalloc.paused_bytes", s.paused_bytes);
  out.emplace_back("ccalloc.backup_bytes", s.backup_bytes);
  out.emplace_back("ccalloc.backup_host_bytes", s.backup_host_bytes);
  std::sort(out.begin(), out.end());
  return out;
}

double RunFragmentation(const MemoryStats& stats) {
  std::int64_t reserved = stats.reserved_bytes[kStatAll].peak;
  if (reserved <= 0) return 0.0;
  return 1.0 - static_cast<double>(stats.allocated_bytes[kStatAll].peak) /
                   static_cast<double>(reserved);
}

}  // namespace ccalloc
