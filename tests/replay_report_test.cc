// replay_report_test.cc — the plain report of ccalloc-replay, the first
// lines a newcomer reads: the replay's figures in a sentence, host time when
// timed, totals without steps, which policy ran out of memory, other
// policies compared with PyTorch's, --verbose adding the full tables
// unchanged, and the overview of several traces with the worst case. The
// shared helpers are in tests/support/replay_fixture.h.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/driver_costs.h"
#include "bench/replay.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stats/trace.h"
#include "tests/support/replay_fixture.h"

namespace ccalloc::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Two 1 GiB blocks, the first freed, then 1.5 GiB, twice over: PyTorch's
// native policy cannot put the 1.5 GiB block in the 1 GiB hole and holds 3.5
// GiB for 2.5 GiB in use; ccalloc moves pages instead. Two steps.
Trace FragmentingTrace(const std::string& name = "frag") {
  Trace t = Handmade(name, {{true, 0, kGiBytes},
                            {true, 1, kGiBytes},
                            {false, 0, 0},
                            {true, 2, 3 * kGiBytes / 2},
                            {false, 2, 0},
                            {false, 1, 0},
                            {true, 3, kGiBytes},
                            {true, 4, kGiBytes},
                            {false, 3, 0},
                            {true, 5, 3 * kGiBytes / 2},
                            {false, 5, 0},
                            {false, 4, 0}});
  t.steps = 2;
  return t;
}

ReplayConfig PricedConfig() {
  absl::StatusOr<DriverCostTable> table = LoadDriverCostTable(DefaultCostTablePath().string());
  EXPECT_TRUE(table.ok()) << table.status();
  ReplayConfig config;
  if (table.ok()) config.driver_costs = std::make_shared<const DriverCostTable>(*table);
  return config;
}

// Milliseconds as the plain report gives them: 2 decimals below 10, 1 below 100.
std::string Ms(double ms) {
  return ms < 10 ? absl::StrFormat("%.2f", ms) : absl::StrFormat("%.1f", ms);
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(ReplayReportTest, FirstLinesStateTheReplaysFigures) {
  const Trace t = FragmentingTrace();
  const ReplayConfig config = PricedConfig();
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config)};
  const ReplayResult& native = results[0];
  const ReplayResult& ours = results[1];
  // The figures the sentence is made of, known by hand for the native policy.
  ASSERT_EQ(native.peak_reserved_bytes, 7 * kGiBytes / 2);
  ASSERT_EQ(native.peak_allocated_bytes, 5 * kGiBytes / 2);
  ASSERT_LT(ours.peak_reserved_bytes, native.peak_reserved_bytes);
  ASSERT_TRUE(native.fits && ours.fits);

  const std::string text = FormatPlainSummary(results);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 2u) << text;
  EXPECT_LE(lines.size(), 4u) << text;
  const double saved = static_cast<double>(native.peak_reserved_bytes - ours.peak_reserved_bytes);
  EXPECT_EQ(lines[0],
            absl::StrFormat(
                "frag: PyTorch's allocator would hold 3.5 GiB at its peak for 2.5 GiB "
                "in use (1.400x); ccalloc holds %.1f GiB (%.3fx), %.1f MiB less (%.0f%%).",
                static_cast<double>(ours.peak_reserved_bytes) / kGiBytes, ours.ratio,
                saved / kMiBytes, 100.0 * saved / static_cast<double>(native.peak_reserved_bytes)))
      << text;
  // Driver time a step after warm-up on the allocating thread, each policy's.
  ASSERT_GT(ours.late_foreground_driver_ms_per_step(), 0)
      << "ccalloc maps pages in the second step";
  EXPECT_THAT(lines[1],
              StartsWith("  Driver time a step after warm-up, on the allocating thread: "));
  EXPECT_THAT(lines[1],
              HasSubstr(absl::StrCat("PyTorch ", Ms(native.late_foreground_driver_ms_per_step()),
                                     " ms, ccalloc ", Ms(ours.late_foreground_driver_ms_per_step()),
                                     " ms (modelled, ", ours.driver_costs_device,
                                     " costs; the last half of 2 steps)")));
  EXPECT_THAT(text, Not(HasSubstr("OUT OF MEMORY")));
  EXPECT_THAT(text, Not(HasSubstr("Host time"))) << "not timed";
}

TEST(ReplayReportTest, HostTimeWhenTimedAndTotalsWithoutSteps) {
  Trace t = FragmentingTrace();
  t.steps = 0;  // and not a published trace: no per-step figures
  ReplayConfig config = PricedConfig();
  config.timing_repetitions = 0;
  absl::StatusOr<ReplayResult> native = Replay(t, *PresetPolicy("pytorch-native"), config);
  config.timing_repetitions = 3;
  absl::StatusOr<ReplayResult> ours = Replay(t, *PresetPolicy("ccalloc"), config);
  ASSERT_TRUE(native.ok() && ours.ok());
  ASSERT_EQ(ours->steps, 0);
  native->ns_per_op_passes = {100, 110, 120};  // as if timed
  native->ns_per_op = 110;
  const std::string text = FormatPlainSummary({*native, *ours});
  auto total_ms = [](const ReplayResult& r) {
    return Ms((r.modelled_driver_us - r.background_driver_us) / 1000.0);
  };
  ASSERT_GT(ours->modelled_driver_us, 0);
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "  Driver time over the whole trace, on the allocating thread: PyTorch ",
                        total_ms(*native), " ms, ccalloc ", total_ms(*ours), " ms")))
      << text;
  EXPECT_THAT(text, HasSubstr("steps unknown: --steps N gives it per step"));
  EXPECT_THAT(text, HasSubstr(absl::StrFormat(
                        "  Host time per allocate or free: PyTorch 110 ns, ccalloc %.0f ns "
                        "(measured on this machine, the median of 3 replays).",
                        ours->ns_per_op)));

  // Without a cost table: the calls, counted.
  const ReplayResult uncosted = ReplayWith(t, "ccalloc");
  ASSERT_FALSE(uncosted.driver_time_modelled);
  EXPECT_THAT(FormatPlainSummary({uncosted}),
              HasSubstr(absl::StrCat("  Driver calls over the whole trace: ccalloc ",
                                     uncosted.driver_calls_total, " (their time is not modelled")));
}

TEST(ReplayReportTest, SaysPlainlyWhichPolicyRanOutOfMemory) {
  // 2.5 GiB are in use at once: a 2 GiB card is too small for either policy.
  const Trace t = FragmentingTrace();
  ReplayConfig config = PricedConfig();
  config.capacity = 2 * kGiBytes;
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config)};
  for (const ReplayResult& r : results) {
    ASSERT_FALSE(r.fits) << r.policy;
  }
  const std::string text = FormatPlainSummary(results);
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "  PyTorch's allocator ran OUT OF MEMORY on the simulated 2.0 GiB card: ",
                        results[0].ooms, results[0].ooms == 1 ? " allocation" : " allocations",
                        " refused (the first at event ", results[0].first_oom_event, ")")))
      << text;
  EXPECT_THAT(text, HasSubstr(absl::StrCat("  ccalloc ran OUT OF MEMORY on the simulated 2.0 GiB "
                                           "card: ",
                                           results[1].ooms)));
  const std::string overview = FormatOverview(results);
  EXPECT_THAT(overview, HasSubstr(" OOM"));
  EXPECT_THAT(overview, HasSubstr("ran out of memory on frag"));

  // One that fits says nothing of it.
  config.capacity = 0;
  const std::string roomy = FormatPlainSummary(
      {ReplayWith(t, "pytorch-native", config), ReplayWith(t, "ccalloc", config)});
  EXPECT_THAT(roomy, Not(HasSubstr("OUT OF MEMORY")));
}

TEST(ReplayReportTest, NamesOtherPoliciesAndComparesEachWithPytorch) {
  const Trace t = FragmentingTrace();
  const ReplayConfig config = PricedConfig();
  ReplayConfig timing_off = config;
  timing_off.timing_repetitions = 0;
  absl::StatusOr<Policy> classic = CustomPolicy("expandable_segments:False");
  ASSERT_TRUE(classic.ok());
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config),
                                             *Replay(t, *classic, timing_off)};
  ASSERT_EQ(results[2].policy, "custom");
  const std::string text = FormatPlainSummary(results);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 3u) << text;
  EXPECT_THAT(lines[0], HasSubstr("; ccalloc holds ")) << text;
  // The custom policy by name and settings, against PyTorch's allocator.
  const ReplayResult& custom = results[2];
  const std::int64_t d = results[0].peak_reserved_bytes - custom.peak_reserved_bytes;
  EXPECT_THAT(lines[1],
              StartsWith(absl::StrFormat(
                  "  custom (expandable_segments:False) would hold %.1f GiB (%.3fx), ",
                  static_cast<double>(custom.peak_reserved_bytes) / kGiBytes, custom.ratio)))
      << text;
  if (d == 0) {
    EXPECT_THAT(lines[1], HasSubstr("as much as PyTorch's allocator"));
  } else {
    EXPECT_THAT(lines[1], HasSubstr(d > 0 ? "less than PyTorch's allocator"
                                          : "more than PyTorch's allocator"));
  }
  EXPECT_THAT(text, HasSubstr(", custom "));  // in the driver line

  // Without pytorch-native nothing is "less": the first policy leads.
  const std::string alone = FormatPlainSummary({results[1]});
  EXPECT_THAT(alone, StartsWith("frag: ccalloc would hold "));
  EXPECT_THAT(alone, Not(HasSubstr("less")));
}

TEST(ReplayReportTest, VerboseAddsTheFullTablesUnchanged) {
  const Trace t = FragmentingTrace();
  ReplayConfig config = PricedConfig();
  config.layout_at = 3;
  const std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                             ReplayWith(t, "ccalloc", config)};
  const std::string plain = FormatTraceReport(results, /*verbose=*/false);
  const std::string verbose = FormatTraceReport(results, /*verbose=*/true);
  EXPECT_THAT(plain, StartsWith(FormatPlainSummary(results)));
  EXPECT_THAT(verbose, StartsWith(FormatPlainSummary(results)));
  // The old tables' headers, only with verbose.
  for (const char* header : {"peak alloc MiB", "frag@peak", "(un)maps/1k", "stream waits",
                             "caller ms/step", "does NOT fit", " fits in "}) {
    EXPECT_THAT(plain, Not(HasSubstr(header))) << header;
  }
  EXPECT_THAT(verbose, HasSubstr("peak alloc MiB"));
  EXPECT_THAT(verbose, HasSubstr("caller ms/step"));
  EXPECT_THAT(verbose, HasSubstr(FormatTable(results) + FormatDriverTable(results) +
                                 FormatComparison(results)));
  // An asked-for layout either way.
  ASSERT_FALSE(results[1].layout.empty());
  EXPECT_THAT(plain, HasSubstr(absl::StrCat("ccalloc: ", results[1].layout)));
  EXPECT_THAT(verbose, HasSubstr(absl::StrCat("ccalloc: ", results[1].layout)));
}

TEST(ReplayReportTest, OverviewHasARowPerTraceAndTheWorstCase) {
  const ReplayConfig config = PricedConfig();
  const Trace frag = FragmentingTrace();
  // A trace without fragmentation: both hold what is in use.
  Trace flat =
      Handmade("flat", {{true, 0, kGiBytes}, {false, 0, 0}, {true, 1, kGiBytes}, {false, 1, 0}});
  flat.steps = 2;
  std::vector<ReplayResult> results;
  for (const Trace* t : {&frag, static_cast<const Trace*>(&flat)}) {
    for (const char* p : {"pytorch-native", "ccalloc"})
      results.push_back(ReplayWith(*t, p, config));
  }
  ASSERT_GT(results[0].ratio, results[2].ratio);
  const std::string text = FormatOverview(results);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 6u) << text;
  EXPECT_THAT(lines[0],
              StartsWith("trace  PyTorch GiB  ratio  ms/step  ccalloc GiB  ratio  ms/step"));
  EXPECT_THAT(lines[0], HasSubstr("saved"));
  auto row = [&](const std::string& trace) {
    for (const std::string& l : lines) {
      if (absl::StartsWith(l, trace + " ")) return l;
    }
    return std::string();
  };
  const std::string frag_row = row("frag");
  const std::vector<std::string> cells = absl::StrSplit(frag_row, ' ', absl::SkipEmpty());
  ASSERT_EQ(cells.size(), 9u) << frag_row;
  EXPECT_EQ(cells[1], "3.50");
  EXPECT_EQ(cells[2], "1.400");
  EXPECT_EQ(cells[4], absl::StrFormat(
                          "%.2f", static_cast<double>(results[1].peak_reserved_bytes) / kGiBytes));
  EXPECT_EQ(cells[5], absl::StrFormat("%.3f", results[1].ratio));
  EXPECT_EQ(cells[6], Ms(results[1].late_foreground_driver_ms_per_step()));
  EXPECT_EQ(cells[7], absl::StrFormat("%.2f", static_cast<double>(results[0].peak_reserved_bytes -
                                                                  results[1].peak_reserved_bytes) /
                                                  kGiBytes));
  EXPECT_FALSE(row("flat").empty()) << text;
  EXPECT_THAT(text, HasSubstr("Worst case over 2 traces:"));
  EXPECT_THAT(text, HasSubstr("PyTorch's allocator holds at most 1.4000x its peak in use (frag)"));
  EXPECT_THAT(text,
              HasSubstr(absl::StrFormat("ccalloc holds at most %.4fx its peak in use (%s)",
                                        std::max(results[1].ratio, results[3].ratio),
                                        results[1].ratio >= results[3].ratio ? "frag" : "flat")));
  ASSERT_EQ(results[2].peak_reserved_bytes, results[3].peak_reserved_bytes);
  EXPECT_THAT(text, HasSubstr("saves nothing on flat")) << "frag saves 0.9 GiB";
  EXPECT_THAT(text, Not(HasSubstr("OOM")));
}
}  // namespace
}  // namespace ccalloc::replay
