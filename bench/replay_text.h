// replay_text.h — the names and text helpers the replay's units share: the
// engine (replay.cc) names its presets and describes a cache's layout with
// them, the reports (replay_report.cc) and the exports (replay_export.cc)
// format their figures with them. Internal to bench/'s replay library, not
// part of replay.h's interface.
#ifndef CCALLOC_BENCH_REPLAY_TEXT_H_
#define CCALLOC_BENCH_REPLAY_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "bench/replay.h"
#include "stats/snapshot.h"

namespace ccalloc::replay::internal {

// The presets (PresetNames): the model of PyTorch's native allocator, which
// the reports set every other policy against, and ccalloc's defaults.
inline constexpr absl::string_view kNative = "pytorch-native";
inline constexpr absl::string_view kCcalloc = "ccalloc";

// 51698 -> "51,698".
inline std::string Grouped(std::int64_t v) {
  std::string digits = absl::StrCat(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? absl::StrCat("-", out) : out;
}

// 3460300 -> "3.3" (MiB, one decimal).
inline std::string MiB1(std::uint64_t bytes) {
  return absl::StrFormat("%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

// The memory the replay ran under: its capacity or limit, or "no limit".
inline std::string CapacityText(const ReplayResult& r) {
  if (r.capacity_bytes == 0) return "no limit";
  return FormatBytes(r.capacity_bytes);
}

}  // namespace ccalloc::replay::internal

#endif  // CCALLOC_BENCH_REPLAY_TEXT_H_
