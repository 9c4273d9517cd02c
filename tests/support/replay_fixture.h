// replay_fixture.h — helpers shared by the tests of the replay library behind
// ccalloc-replay (bench/replay.h): the bundled traces (traces/) and the
// committed cost table found from the source tree, a trace built by hand,
// replays under a preset policy, a CCALLOC_CONF string or the tight marks
// with the replay's result checked, and the driver calls a result counts.
//
// Included by replay_test.cc, replay_bundled_traces_test.cc,
// replay_driver_costs_test.cc and replay_report_test.cc, each its own test
// binary (tests/CMakeLists.txt links them to ccalloc_replay_lib).
#ifndef CCALLOC_TESTS_SUPPORT_REPLAY_FIXTURE_H_
#define CCALLOC_TESTS_SUPPORT_REPLAY_FIXTURE_H_

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "bench/driver_costs.h"
#include "bench/replay.h"
#include "gtest/gtest.h"
#include "stats/trace.h"

namespace ccalloc::replay {

inline constexpr std::int64_t kMiBytes = std::int64_t{1} << 20;
inline constexpr std::int64_t kGiBytes = std::int64_t{1} << 30;

// The source tree's traces/ (this header is tests/support/replay_fixture.h).
inline std::filesystem::path TracesDir() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "traces";
}

inline Trace LoadBundled(const std::string& name) {
  absl::StatusOr<Trace> t = LoadTrace((TracesDir() / (name + ".trace.gz")).string());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace{};
}

inline ReplayResult ReplayPolicy(const Trace& trace, const absl::StatusOr<Policy>& p,
                                 ReplayConfig config) {
  config.timing_repetitions = 0;  // speed is the benchmarks' business
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  absl::StatusOr<ReplayResult> r = Replay(trace, *p, config);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ReplayResult{};
}

// A preset policy ("pytorch-native", "ccalloc").
inline ReplayResult ReplayWith(const Trace& trace, absl::string_view policy,
                               ReplayConfig config = {}) {
  return ReplayPolicy(trace, PresetPolicy(policy), config);
}

// ccalloc's defaults with `conf` (CCALLOC_CONF syntax) on top.
inline ReplayResult ReplayConf(const Trace& trace, absl::string_view conf,
                               ReplayConfig config = {}) {
  return ReplayPolicy(trace, CustomPolicy(conf), config);
}

// ccalloc's defaults with the marks and chunks they tighten to near the end
// of memory (growable_segments.cc, kTightSlack), and `conf` after them: the
// regime the mechanics tests of replay_test.cc were written for, with room
// or without.
inline ReplayResult ReplayTight(const Trace& trace, absl::string_view conf = "",
                                ReplayConfig config = {}) {
  const std::string tight =
      "release_slack:0.005,release_slack_max:0.008,release_slack_hard:0.0095,max_map_chunk_mb:4";
  return ReplayConf(trace, conf.empty() ? tight : absl::StrCat(tight, ",", conf), config);
}

// A trace built by hand: each entry is {alloc?, id, bytes}.
inline Trace Handmade(const std::string& name,
                      const std::vector<std::tuple<bool, std::uint64_t, std::uint64_t>>& ops) {
  Trace t;
  t.name = name;
  for (const auto& [alloc, id, bytes] : ops) {
    const TraceEvent::Op op = alloc ? TraceEvent::Op::kAlloc : TraceEvent::Op::kFree;
    t.events.push_back(TraceEvent{op, id, bytes, 0});
    if (alloc) t.num_ids = std::max(t.num_ids, id + 1);
  }
  return t;
}

// The committed H100 cost table, bench/driver_costs/h100.json.
inline std::filesystem::path DefaultCostTablePath() {
  return TracesDir().parent_path() / "bench" / "driver_costs" / "h100.json";
}

// How many calls of kind `c` the replay made.
inline std::int64_t Calls(const ReplayResult& r, DriverCall c) {
  return r.driver_calls[static_cast<int>(c)];
}

}  // namespace ccalloc::replay

#endif  // CCALLOC_TESTS_SUPPORT_REPLAY_FIXTURE_H_
