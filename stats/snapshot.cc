// snapshot.cc — JSON and text exporters. Hand-written JSON: the documents are
// flat and numeric, and a JSON library would be a dependency for ~50 lines.
#include "stats/snapshot.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "stats/tags.h"

namespace ccalloc {

const char* BlockStatusName(BlockStatus status) {
  switch (status) {
    case BlockStatus::kActiveAllocated:
      return "active_allocated";
    case BlockStatus::kActivePendingFree:
      return "active_pending_free";
    case BlockStatus::kInactive:
      return "inactive";
  }
  return "unknown";
}

std::string FormatBytes(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", v, kUnits[unit]);
}

std::string FormatSizeAsPytorch(std::uint64_t bytes) {
  constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  const double v = static_cast<double>(bytes);
  if (bytes <= kKiB) return absl::StrCat(bytes, " bytes");
  if (bytes <= kMiB) return absl::StrFormat("%.2f KiB", v / static_cast<double>(kKiB));
  if (bytes <= kGiB) return absl::StrFormat("%.2f MiB", v / static_cast<double>(kMiB));
  return absl::StrFormat("%.2f GiB", v / static_cast<double>(kGiB));
}

std::string StatsToJson(const MemoryStats& stats) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : Flatten(stats)) {
    absl::StrAppend(&out, first ? "" : ",", "\"", key, "\":", value);
    first = false;
  }
  out += "}";
  return out;
}

std::string SnapshotToJson(const Snapshot& snapshot) {
  std::string out = absl::StrCat("{\"device\":", snapshot.device, ",\"segments\":[");
  for (std::size_t i = 0; i < snapshot.segments.size(); ++i) {
    const SegmentInfo& s = snapshot.segments[i];
    absl::StrAppend(&out, i ? "," : "", "{\"device\":", snapshot.device,
                    ",\"address\":", s.address, ",\"total_size\":", s.total_size,
                    ",\"mapped_size\":", s.mapped_size,
                    ",\"allocated_size\":", s.allocated_size,
                    ",\"active_size\":", s.active_size,
                    ",\"requested_size\":", s.requested_size, ",\"stream\":", s.stream,
                    ",\"segment_type\":\"", s.small_pool ? "small" : "large", "\"",
                    ",\"is_expandable\":", s.expandable ? "true" : "false",
                    ",\"pool_id\":", s.pool_id, s.paused ? ",\"paused\":true" : "",
                    ",\"blocks\":[");
    for (std::size_t j = 0; j < s.blocks.size(); ++j) {
      const BlockInfo& b = s.blocks[j];
      absl::StrAppend(&out, j ? "," : "", "{\"address\":", b.address, ",\"size\":", b.size,
                      ",\"requested_size\":", b.requested_size, ",\"state\":\"",
                      BlockStatusName(b.status), "\"");
      // A block's stream differs from its segment's when it was lent across
      // streams (cross_stream_reuse) or its growable segment serves several.
      if (b.status != BlockStatus::kInactive) absl::StrAppend(&out, ",\"stream\":", b.stream);
      if (b.tag != 0) {
        absl::StrAppend(&out, ",\"tag\":", b.tag, ",\"tag_name\":", QuotedTagName(b.tag));
      }
      out += "}";
    }
    out += "],\"mapped_ranges\":[";
    for (std::size_t j = 0; j < s.mapped_ranges.size(); ++j) {
      absl::StrAppend(&out, j ? "," : "", "[", s.mapped_ranges[j].first, ",",
                      s.mapped_ranges[j].second, "]");
    }
    out += "]}";
  }
  absl::StrAppend(&out, "],\"stats\":", StatsToJson(snapshot.stats),
                  ",\"fragmentation\":{\"free_cached_bytes\":",
                  snapshot.fragmentation.free_cached_bytes,
                  ",\"largest_free_block\":", snapshot.fragmentation.largest_free_block,
                  ",\"ratio\":", snapshot.fragmentation.ratio,
                  ",\"run\":", RunFragmentation(snapshot.stats), "}}");
  return out;
}

std::string SummaryText(const Snapshot& snapshot) {
  const MemoryStats& s = snapshot.stats;
  std::string out = absl::StrFormat(
      "|===========================================================================|\n"
      "|                  ccalloc memory summary, device %-3d                        |\n"
      "|---------------------------------------------------------------------------|\n"
      "| %-24s | %14s | %14s | %14s |\n"
      "|---------------------------------------------------------------------------|\n",
      snapshot.device, "Metric", "Current", "Peak", "Total allocated");
  auto row = [&out](const char* name, const Stat& stat, bool bytes) {
    auto fmt = [bytes](std::int64_t v) {
      return bytes ? FormatBytes(static_cast<std::uint64_t>(v)) : absl::StrCat(v);
    };
    absl::StrAppendFormat(&out, "| %-24s | %14s | %14s | %14s |\n", name, fmt(stat.current),
                          fmt(stat.peak), fmt(stat.allocated));
  };
  row("Allocated memory", s.allocated_bytes[kStatAll], true);
  row("Active memory", s.active_bytes[kStatAll], true);
  row("Requested memory", s.requested_bytes[kStatAll], true);
  row("Reserved memory", s.reserved_bytes[kStatAll], true);
  row("Non-releasable memory", s.inactive_split_bytes[kStatAll], true);
  row("Allocations", s.allocation[kStatAll], false);
  row("Active allocs", s.active[kStatAll], false);
  row("Segments", s.segment[kStatAll], false);
  absl::StrAppendFormat(
      &out,
      "|---------------------------------------------------------------------------|\n"
      "| device allocs %-8d frees %-8d maps %-8d unmaps %-8d          |\n"
      "| retries %-6d OOMs %-6d syncs %-6d                                     |\n"
      "| fragmentation now %5.1f%% (free %s, largest %s), run %5.1f%%\n"
      "|===========================================================================|\n",
      s.num_device_alloc, s.num_device_free, s.num_maps, s.num_unmaps, s.num_alloc_retries,
      s.num_ooms, s.num_sync_all_streams, 100.0 * snapshot.fragmentation.ratio,
      FormatBytes(snapshot.fragmentation.free_cached_bytes),
      FormatBytes(snapshot.fragmentation.largest_free_block),
      100.0 * RunFragmentation(s));
  return out;
}

}  // namespace ccalloc
