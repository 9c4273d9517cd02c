// replay_driver_costs_test.cc — the driver calls a replay counts and the
// time it models from a cost table (bench/driver_costs.h): the counting
// backend agrees with the simulated device's own counts, the model is the
// hand-computed sum, the parser rejects malformed tables with a clear error
// and a table round-trips through its JSON, the committed H100 table states
// its sources, and the report and JSON carry the driver columns. The shared
// helpers are in tests/support/replay_fixture.h.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "allocator/backends/sim_backend.h"
#include "allocator/cache/device_allocator.h"
#include "bench/driver_costs.h"
#include "bench/replay.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stats/trace.h"
#include "tests/support/replay_fixture.h"

namespace ccalloc::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(DriverCostsTest, CountingBackendAgreesWithSimBackendsOwnCounts) {
  auto sim = std::make_unique<SimBackend>();
  SimBackend* raw = sim.get();
  auto counting = std::make_unique<CountingBackend>(std::move(sim));
  CountingBackend* counter = counting.get();
  {
    Options options = DefaultOptions();
    options.expandable_segments = true;
    DeviceAllocator allocator(std::move(counting), options);
    std::vector<DevicePtr> ptrs;
    for (std::size_t mib : {3, 40, 7, 100, 1}) {
      absl::StatusOr<DevicePtr> p = allocator.Allocate(mib * kMiBytes, 0);
      ASSERT_TRUE(p.ok()) << p.status();
      ptrs.push_back(*p);
    }
    for (DevicePtr p : ptrs) ASSERT_TRUE(allocator.Free(p).ok());
    ASSERT_TRUE(allocator.EmptyCache().ok());
    const DriverCallCounts calls = counter->counts();
    const SimBackend::Counts sim_counts = raw->counts();
    // The sim counts a map per chunk and the stretches apart.
    EXPECT_EQ(calls.MappedChunks(raw->PageSize()), sim_counts.map_calls);
    EXPECT_EQ(calls.Total(DriverCall::kMap) + calls.Total(DriverCall::kMapRun),
              sim_counts.map_stretches);
    EXPECT_GT(calls.Total(DriverCall::kMapRun), 0) << "no block mapped several chunks at once";
    EXPECT_EQ(calls.Total(DriverCall::kUnmap), sim_counts.unmap_calls);
    EXPECT_EQ(calls.Total(DriverCall::kDeviceAlloc), sim_counts.allocate_calls);
    EXPECT_EQ(calls.Total(DriverCall::kDeviceFree), sim_counts.deallocate_calls);
    EXPECT_EQ(calls.Total(DriverCall::kDeviceSynchronize), sim_counts.synchronize_calls);
    EXPECT_GT(calls.Total(DriverCall::kMap), 0);
    EXPECT_GT(calls.Total(DriverCall::kUnmap), 0);
    // Every chunk created was released, at the size it was created with.
    EXPECT_EQ(calls.by_bytes[static_cast<int>(DriverCall::kCreate)],
              calls.by_bytes[static_cast<int>(DriverCall::kRelease)]);
  }
}

DriverCostEntry Entry(std::vector<DriverCall> calls, std::uint64_t bytes, double us) {
  DriverCostEntry e;
  e.calls = std::move(calls);
  e.bytes = bytes;
  e.us = us;
  e.source = "test";
  return e;
}

TEST(DriverCostsTest, ModelIsTheHandComputedSum) {
  DriverCostTable table;
  table.device = "test";
  table.entries = {Entry({DriverCall::kCreate, DriverCall::kMap}, 2 * kMiBytes, 30),
                   Entry({DriverCall::kMap}, 2 * kMiBytes, 5),
                   Entry({DriverCall::kUnmap}, 2 * kMiBytes, 20),
                   Entry({DriverCall::kUnmap}, 6 * kMiBytes, 40),
                   Entry({DriverCall::kDeviceAlloc}, 2 * kMiBytes, 10),
                   Entry({DriverCall::kDeviceAlloc}, 4 * kMiBytes, 20)};
  DriverCallCounts counts;
  counts.Add(DriverCall::kCreate, 2 * kMiBytes, 3);
  counts.Add(DriverCall::kMap, 2 * kMiBytes, 5);
  counts.Add(DriverCall::kUnmap, 4 * kMiBytes, 2);       // between 2 and 6 MiB: 30 us
  counts.Add(DriverCall::kDeviceAlloc, 1 * kMiBytes, 1);  // below the smallest: 10 us
  counts.Add(DriverCall::kDeviceAlloc, 8 * kMiBytes, 1);  // beyond: 20 + 5 us/MiB * 4 MiB
  counts.Add(DriverCall::kEventRecord, 0, 7);             // no entry
  const DriverTimeModel m = ModelDriverTime(counts, table);
  // 3 creates pair with 3 maps (30 each), 2 maps alone (5), 2 unmaps (30),
  // allocs 10 + 40.
  EXPECT_DOUBLE_EQ(m.us, 3 * 30 + 2 * 5 + 2 * 30 + 10 + 40);
  EXPECT_EQ(m.priced_calls, 3 * 2 + 2 + 2 + 2);
  EXPECT_EQ(m.unpriced_total(), 7);
  EXPECT_EQ(m.UnpricedText(), "event_record 7");
}

TEST(DriverCostsTest, ReplayModelsTheSumOfItsCounts) {
  // pytorch-native puts 3 MiB and 5 MiB in one 20 MiB segment: one cuMemAlloc
  // of 20 MiB, priced between the 2 MiB and 256 MiB entries.
  const Trace t = Handmade("small", {{true, 0, 3 * kMiBytes},
                                     {true, 1, 5 * kMiBytes},
                                     {false, 0, 0},
                                     {false, 1, 0}});
  auto table = std::make_shared<DriverCostTable>();
  table->device = "test";
  table->entries = {Entry({DriverCall::kDeviceAlloc}, 2 * kMiBytes, 10),
                    Entry({DriverCall::kDeviceAlloc}, 256 * kMiBytes, 100)};
  ReplayConfig config;
  config.driver_costs = table;
  config.steps = 4;
  const ReplayResult native = ReplayWith(t, "pytorch-native", config);
  EXPECT_EQ(Calls(native, DriverCall::kDeviceAlloc), 1);
  EXPECT_EQ(native.driver_calls_total, 1);
  EXPECT_TRUE(native.driver_time_modelled);
  const double expected_us = 10 + 90.0 * (20 - 2) / (256 - 2);
  EXPECT_NEAR(native.modelled_driver_us, expected_us, 1e-9);
  EXPECT_NEAR(native.modelled_driver_ms_per_step(), expected_us / 1000 / 4, 1e-12);
  EXPECT_EQ(native.unpriced_driver_calls, 0);
  EXPECT_EQ(native.steps_source, "given");

  // Every kind priced at (its index + 1) us, whatever the size: the model is
  // exactly Σ calls × cost over the counts the replay reports.
  auto flat = std::make_shared<DriverCostTable>();
  flat->device = "flat";
  for (int k = 0; k < kNumDriverCalls; ++k) {
    flat->entries.push_back(Entry({static_cast<DriverCall>(k)}, 0, k + 1.0));
  }
  config.driver_costs = flat;
  const ReplayResult growable = ReplayWith(t, "ccalloc", config);
  double sum = 0;
  for (int k = 0; k < kNumDriverCalls; ++k) {
    sum += static_cast<double>(growable.driver_calls[k]) * (k + 1.0);
  }
  EXPECT_GT(growable.driver_calls_total, 0);
  EXPECT_DOUBLE_EQ(growable.modelled_driver_us, sum);
  EXPECT_EQ(growable.unpriced_driver_calls, 0);
}

TEST(DriverCostsTest, ParserRejectsMalformedTablesWithAClearError) {
  const std::string good = R"({"schema": "ccalloc-driver-costs/1", "device": "x",
    "costs": [{"call": "map", "bytes": 2097152, "us": 1.5, "source": "s"}]})";
  ASSERT_TRUE(ParseDriverCostTable(good, "good.json").ok())
      << ParseDriverCostTable(good, "good.json").status();
  struct Case {
    std::string json;
    std::string error;
  };
  const std::vector<Case> cases = {
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x", "costs": [)",
       "not valid JSON: unexpected end of text"},
      {R"({"schema": "ccalloc-driver-costs/1",
          "device": "x" "costs": []})",
       "bad.json:2:25: not valid JSON: expected ',' or '}'"},
      {R"([1, 2])", "not a JSON object"},
      {R"({"schema": "v0", "device": "x", "costs": []})", "\"schema\" is \"v0\""},
      {R"({"schema": "ccalloc-driver-costs/1", "costs": []})", "\"device\" is missing"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x"})", "\"costs\" is missing"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "mmap", "us": 1, "source": "s"}]})",
       "costs[0]: unknown call \"mmap\""},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "us": -1, "source": "s"}]})",
       "\"us\" in costs[0] must be a number of microseconds >= 0"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "us": 1}]})",
       "\"source\" is missing"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "byte": 2097152, "us": 1, "source": "s"}]})",
       "unknown key \"byte\" in costs[0]"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "bytes": 2097152, "us": 1, "source": "s"},
                    {"call": "map", "bytes": 2097152, "us": 2, "source": "s"}]})",
       "costs[1]: a second entry for map at 2097152 bytes"},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "bytes": 2097152, "us": 1, "source": "s"},
                    {"call": "map", "us": 2, "source": "s"}]})",
       "with and without \"bytes\""},
      {R"({"schema": "ccalloc-driver-costs/1", "device": "x",
          "costs": [{"call": "map", "bytes": 1.5, "us": 1, "source": "s"}]})",
       "\"bytes\" must be a whole number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    absl::StatusOr<DriverCostTable> t = ParseDriverCostTable(c.json, "bad.json");
    ASSERT_FALSE(t.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.error));
    EXPECT_THAT(std::string(t.status().message()), StartsWith("bad.json"));
  }
  EXPECT_TRUE(absl::IsNotFound(LoadDriverCostTable("/nonexistent/costs.json").status()));
}

TEST(DriverCostsTest, TableRoundTripsThroughItsJson) {
  DriverCostTable table;
  table.device = "NVIDIA \"Test\" GPU";
  table.driver_version = "12.8";
  table.source = "measured";
  DriverCostEntry e = Entry({DriverCall::kMap}, 2 * kMiBytes, 9.125);
  e.median_us = 8.5;
  e.mean_us = 9.125;
  e.min_us = 7;
  e.max_us = 30.25;
  e.samples = 50;
  table.entries = {e, Entry({DriverCall::kCreate, DriverCall::kMap}, 2 * kMiBytes, 30),
                   Entry({DriverCall::kEventRecord}, 0, 1.75)};
  const std::string json = DriverCostTableToJson(table);
  absl::StatusOr<DriverCostTable> back = ParseDriverCostTable(json, "round trip");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
  EXPECT_EQ(DriverCostTableToJson(*back), json);
  EXPECT_EQ(back->device, table.device);
  ASSERT_EQ(back->entries.size(), 3u);
  EXPECT_EQ(back->entries[0].median_us, 8.5);
  EXPECT_EQ(back->entries[0].samples, 50);
  EXPECT_EQ(back->entries[1].calls.size(), 2u);
}

TEST(DriverCostsTest, CommittedDefaultTableParsesAndStatesItsSources) {
  absl::StatusOr<DriverCostTable> t = LoadDriverCostTable(DefaultCostTablePath().string());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->entries.empty());
  for (const DriverCostEntry& e : t->entries) EXPECT_FALSE(e.source.empty());
}

TEST(DriverCostsTest, ReportAndJsonCarryDriverColumnsAndTheWorstRatio) {
  const Trace t = Handmade("small", {{true, 0, 3 * kMiBytes},
                                     {true, 1, 5 * kMiBytes},
                                     {false, 0, 0},
                                     {false, 1, 0}});
  absl::StatusOr<DriverCostTable> table = LoadDriverCostTable(DefaultCostTablePath().string());
  ASSERT_TRUE(table.ok()) << table.status();
  ReplayConfig config;
  config.driver_costs = std::make_shared<const DriverCostTable>(*table);
  config.steps = 2;
  std::vector<ReplayResult> results = {ReplayWith(t, "pytorch-native", config),
                                       ReplayWith(t, "ccalloc", config)};
  const std::string report = FormatDriverTable(results);
  EXPECT_THAT(report, HasSubstr("stream waits"));
  EXPECT_THAT(report, HasSubstr("driver ms/step"));
  EXPECT_THAT(report, HasSubstr("per step = total / 2 steps (--steps"));
  const std::string json = ResultsToJson(results);
  for (const char* key : {"\"driver_calls\": {\"device_alloc\": 1,", "\"stream_waits\": ",
                          "\"waited_events\": 0", "\"modelled_driver_ms_per_step\": ",
                          "\"steps\": 2"}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
  const std::string summary = FormatSummary(results);
  EXPECT_THAT(summary, StartsWith("worst ratio over all traces (1): pytorch-native "));
  EXPECT_THAT(summary, HasSubstr(", ccalloc 1."));
}
}  // namespace
}  // namespace ccalloc::replay
