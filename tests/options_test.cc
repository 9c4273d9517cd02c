// options_test.cc — CCALLOC_CONF parsing: every key, PyTorch's syntax, and
// errors that name the key or value at fault.
#include "allocator/cache/options.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccalloc {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Parses on top of PyTorch's defaults, failing the test on an error.
Options ParseOk(const std::string& conf) {
  absl::StatusOr<Options> options = ParseOptions(conf, PytorchNativeOptions());
  EXPECT_TRUE(options.ok()) << conf << ": " << options.status();
  return options.ok() ? *options : PytorchNativeOptions();
}

// The error for `conf`, which must be InvalidArgument.
std::string ParseError(const std::string& conf) {
  absl::StatusOr<Options> options = ParseOptions(conf, PytorchNativeOptions());
  EXPECT_FALSE(options.ok()) << conf << " parsed";
  if (options.ok()) return "";
  EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument) << options.status();
  return std::string(options.status().message());
}

std::array<std::uint32_t, kRoundupIntervals> Divisions(std::uint32_t value) {
  std::array<std::uint32_t, kRoundupIntervals> d;
  d.fill(value);
  return d;
}

TEST(OptionsTest, PresetsDifferOnlyWhereDocumented) {
  const Options native = PytorchNativeOptions();
  EXPECT_FALSE(native.expandable_segments);
  EXPECT_EQ(native.max_split_size, kNoMaxSplit);
  EXPECT_EQ(native.roundup_power2_divisions, Divisions(0));
  EXPECT_EQ(native.garbage_collection_threshold, 0.0);
  EXPECT_EQ(native.memory_limit, 0u);
  EXPECT_LT(native.per_process_memory_fraction, 0.0) << "no fraction unless asked";
  const Options defaults = DefaultOptions();
  EXPECT_TRUE(defaults.expandable_segments);
  // Turning growable segments off gives PyTorch's behaviour back.
  absl::StatusOr<Options> classic = ParseOptions("expandable_segments:False", defaults);
  ASSERT_TRUE(classic.ok()) << classic.status();
  EXPECT_EQ(classic->ToString(), native.ToString());
}

TEST(OptionsTest, EmptyConfigurationKeepsTheBase) {
  Options base = PytorchNativeOptions();
  base.memory_limit = 123 * kMiB;
  for (const char* conf : {"", " ", ",", " , "}) {
    absl::StatusOr<Options> options = ParseOptions(conf, base);
    ASSERT_TRUE(options.ok()) << "'" << conf << "': " << options.status();
    EXPECT_EQ(options->ToString(), base.ToString()) << "'" << conf << "'";
  }
}

TEST(OptionsTest, MaxSplitSize) {
  EXPECT_EQ(ParseOk("max_split_size_mb:512").max_split_size, 512 * kMiB);
  EXPECT_EQ(ParseOk("max_split_size_mb:21").max_split_size, 21 * kMiB);
  for (const char* bad : {"max_split_size_mb:20", "max_split_size_mb:0", "max_split_size_mb:abc",
                          "max_split_size_mb:-5", "max_split_size_mb:1.5", "max_split_size_mb:"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("max_split_size_mb")) << bad;
  }
  EXPECT_THAT(ParseError("max_split_size_mb:abc"), HasSubstr("abc"));
}

TEST(OptionsTest, RoundupDivisionsSingleValue) {
  EXPECT_EQ(ParseOk("roundup_power2_divisions:4").roundup_power2_divisions, Divisions(4));
  EXPECT_EQ(ParseOk("roundup_power2_divisions:1").roundup_power2_divisions, Divisions(1));
  for (const char* bad : {"roundup_power2_divisions:3", "roundup_power2_divisions:x",
                          "roundup_power2_divisions:-4"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("roundup_power2_divisions")) << bad;
  }
}

TEST(OptionsTest, RoundupDivisionsListWithOneEntry) {
  // Interval starts are in MiB: 1 MiB is interval 0, 256 MiB interval 8.
  std::array<std::uint32_t, kRoundupIntervals> expected{};
  expected[8] = 2;
  EXPECT_EQ(ParseOk("roundup_power2_divisions:[256:2]").roundup_power2_divisions, expected);
  expected = {};
  expected[0] = 4;
  EXPECT_EQ(ParseOk("roundup_power2_divisions:[1:4]").roundup_power2_divisions, expected);
  // '>' alone sets every interval.
  EXPECT_EQ(ParseOk("roundup_power2_divisions:[>:8]").roundup_power2_divisions, Divisions(8));
}

// PyTorch's documented example (torch.cuda memory management notes): a list
// with several entries separated by commas inside the brackets, next to other
// keys.
TEST(OptionsTest, RoundupDivisionsPytorchListSyntax) {
  absl::StatusOr<Options> parsed =
      ParseOptions("roundup_power2_divisions:[256:1,512:2,1024:4,>:8],max_split_size_mb:128",
                   PytorchNativeOptions());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Options& options = *parsed;
  EXPECT_EQ(options.roundup_power2_divisions[8], 1u);   // [256, 512) MiB
  EXPECT_EQ(options.roundup_power2_divisions[9], 2u);   // [512, 1024) MiB
  EXPECT_EQ(options.roundup_power2_divisions[10], 4u);  // [1, 2) GiB
  for (int i = 11; i < kRoundupIntervals; ++i) {
    EXPECT_EQ(options.roundup_power2_divisions[i], 8u) << "interval " << i;
  }
  EXPECT_EQ(options.max_split_size, 128 * kMiB);
}

// Settings users put in PYTORCH_CUDA_ALLOC_CONF carry over as they are.
TEST(OptionsTest, PytorchConfigurationStringsCarryOver) {
  Options o = ParseOk("max_split_size_mb:128");
  EXPECT_EQ(o.max_split_size, 128 * kMiB);
  o = ParseOk("garbage_collection_threshold:0.6,max_split_size_mb:128");
  EXPECT_DOUBLE_EQ(o.garbage_collection_threshold, 0.6);
  EXPECT_EQ(o.max_split_size, 128 * kMiB);
  o = ParseOk("backend:native,expandable_segments:True");
  EXPECT_TRUE(o.expandable_segments);
  o = ParseOk("expandable_segments:True,roundup_power2_divisions:16");
  EXPECT_EQ(o.roundup_power2_divisions, Divisions(16));
}

TEST(OptionsTest, RoundupDivisionsBadLists) {
  for (const char* bad : {
           "roundup_power2_divisions:[256:1",     // no closing bracket
           "roundup_power2_divisions:[256:3]",    // divisions not a power of two
           "roundup_power2_divisions:[3:1]",      // interval not a power of two
           "roundup_power2_divisions:[256]",      // no divisions
           "roundup_power2_divisions:[65536:2]",  // beyond the last interval
       }) {
    EXPECT_THAT(ParseError(bad), HasSubstr("roundup_power2_divisions")) << bad;
  }
}

TEST(OptionsTest, GarbageCollectionThreshold) {
  EXPECT_DOUBLE_EQ(ParseOk("garbage_collection_threshold:0.6").garbage_collection_threshold, 0.6);
  for (const char* bad : {"garbage_collection_threshold:1.0", "garbage_collection_threshold:0",
                          "garbage_collection_threshold:-0.1", "garbage_collection_threshold:nan",
                          "garbage_collection_threshold:lots"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("garbage_collection_threshold")) << bad;
  }
}

TEST(OptionsTest, ExpandableSegments) {
  for (const char* yes : {"True", "true", "1"}) {
    EXPECT_TRUE(ParseOk(std::string("expandable_segments:") + yes).expandable_segments) << yes;
  }
  for (const char* no : {"False", "false", "0"}) {
    absl::StatusOr<Options> options =
        ParseOptions(std::string("expandable_segments:") + no, DefaultOptions());
    ASSERT_TRUE(options.ok()) << options.status();
    EXPECT_FALSE(options->expandable_segments) << no;
  }
  const std::string error = ParseError("expandable_segments:yes");
  EXPECT_THAT(error, HasSubstr("expandable_segments"));
  EXPECT_THAT(error, HasSubstr("yes"));
}

TEST(OptionsTest, BackendOnlyNative) {
  ParseOk("backend:native");
  EXPECT_THAT(ParseError("backend:cudaMallocAsync"), HasSubstr("backend"));
}

// PyTorch's graph_capture_record_stream_reuse: off by default as in
// PyTorch, a boolean, named by ToString, and one of the keys
// _set_allocator_settings changes at run time.
TEST(OptionsTest, GraphCaptureRecordStreamReuse) {
  EXPECT_FALSE(PytorchNativeOptions().graph_capture_record_stream_reuse);
  EXPECT_FALSE(DefaultOptions().graph_capture_record_stream_reuse);
  EXPECT_TRUE(ParseOk("graph_capture_record_stream_reuse:True").graph_capture_record_stream_reuse);
  EXPECT_FALSE(ParseOk("graph_capture_record_stream_reuse:True,graph_capture_record_stream_reuse:"
                       "False")
                   .graph_capture_record_stream_reuse);
  EXPECT_THAT(ParseOk("graph_capture_record_stream_reuse:True").ToString(),
              HasSubstr("graph_capture_record_stream_reuse:True"));
  EXPECT_THAT(PytorchNativeOptions().ToString(),
              HasSubstr("graph_capture_record_stream_reuse:False"));
  EXPECT_THAT(ParseError("graph_capture_record_stream_reuse:often"),
              AllOf(HasSubstr("graph_capture_record_stream_reuse"), HasSubstr("often")));
  EXPECT_THAT(ParseError("no_such_key:1"), HasSubstr("graph_capture_record_stream_reuse"))
      << "the unknown-key message lists it";
  Options to = PytorchNativeOptions();
  Options from = PytorchNativeOptions();
  from.graph_capture_record_stream_reuse = true;
  from.memory_limit = 5 * kMiB;  // not a run-time key
  CopyRuntimeKeys(from, to);
  EXPECT_TRUE(to.graph_capture_record_stream_reuse);
  EXPECT_EQ(to.memory_limit, 0u);
}

TEST(OptionsTest, PytorchOnlyKeysAreValidatedAndIgnored) {
  const Options options = ParseOk(
      "release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:False,"
      "pinned_num_register_threads:8,pinned_use_background_threads:True");
  EXPECT_EQ(options.ToString(), PytorchNativeOptions().ToString());
  EXPECT_THAT(ParseError("pinned_num_register_threads:0"),
              HasSubstr("pinned_num_register_threads"));
  EXPECT_THAT(ParseError("release_lock_on_cudamalloc:maybe"),
              HasSubstr("release_lock_on_cudamalloc"));
}

TEST(OptionsTest, MemoryLimitWithUnits) {
  EXPECT_EQ(ParseOk("memory_limit:24GiB").memory_limit, 24 * kGiB);
  EXPECT_EQ(ParseOk("memory_limit:512MB").memory_limit, 512 * kMiB);
  EXPECT_EQ(ParseOk("memory_limit:1.5G").memory_limit, 3 * kGiB / 2);
  EXPECT_EQ(ParseOk("memory_limit:1048576").memory_limit, kMiB);
  EXPECT_EQ(ParseOk("memory_limit:64k").memory_limit, 64u << 10);
  for (const char* bad : {"memory_limit:lots", "memory_limit:12 parsecs",
                          "memory_limit:", "memory_limit:99999999999TiB"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("memory_limit")) << bad;
  }
}

TEST(OptionsTest, PerProcessMemoryFraction) {
  EXPECT_DOUBLE_EQ(ParseOk("per_process_memory_fraction:0.5").per_process_memory_fraction, 0.5);
  EXPECT_DOUBLE_EQ(ParseOk("per_process_memory_fraction:1").per_process_memory_fraction, 1.0);
  EXPECT_DOUBLE_EQ(ParseOk("per_process_memory_fraction:0.25").per_process_memory_fraction, 0.25);
  // 0 too, as PyTorch takes it: nothing may be allocated.
  EXPECT_DOUBLE_EQ(ParseOk("per_process_memory_fraction:0").per_process_memory_fraction, 0.0);
  EXPECT_THAT(ParseOk("per_process_memory_fraction:0.25").ToString(),
              HasSubstr("per_process_memory_fraction:0.25"));
  for (const char* bad :
       {"per_process_memory_fraction:1.5", "per_process_memory_fraction:-1",
        "per_process_memory_fraction:half", "per_process_memory_fraction:inf",
        "per_process_memory_fraction:nan", "per_process_memory_fraction:"}) {
    // PyTorch's message, which its test_allocator_memory_fraction_setting
    // matches, begins it.
    EXPECT_THAT(ParseError(bad),
                StartsWith("per_process_memory_fraction is invalid, set it in [0.0, 1.0]"))
        << bad;
  }
  // ccalloc's own memory_fraction was the same cap under another name, in
  // (0, 1]: gone, PyTorch's key does it.
  EXPECT_THAT(ParseError("memory_fraction:0.5"), HasSubstr("unknown key"));
}

TEST(OptionsTest, ReleaseSlack) {
  EXPECT_DOUBLE_EQ(ParseOk("release_slack:0.01").release_slack, 0.01);
  EXPECT_DOUBLE_EQ(ParseOk("release_slack:0").release_slack, 0.0);
  for (const char* bad : {"release_slack:2", "release_slack:-0.1", "release_slack:x"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("release_slack")) << bad;
  }
  EXPECT_DOUBLE_EQ(ParseOk("release_slack_max:0.02").release_slack_max, 0.02);
  EXPECT_DOUBLE_EQ(ParseOk("release_slack:0.01").release_slack_max,
                   DefaultOptions().release_slack_max);
  for (const char* bad : {"release_slack_max:1.5", "release_slack_max:-1", "release_slack_max:"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("release_slack_max")) << bad;
  }
  EXPECT_DOUBLE_EQ(DefaultOptions().release_slack_hard, 0.10);
  EXPECT_DOUBLE_EQ(ParseOk("release_slack_hard:0.008").release_slack_hard, 0.008);
  EXPECT_THAT(ParseOk("release_slack_hard:0.009").ToString(), HasSubstr("release_slack_hard:0.009"));
  for (const char* bad : {"release_slack_hard:2", "release_slack_hard:-0.1", "release_slack_hard:"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("release_slack_hard")) << bad;
  }
}

TEST(OptionsTest, GrowableSegmentKeys) {
  // unwaited_moves was a switch no user would set: always on, an unknown key now.
  EXPECT_THAT(ParseError("unwaited_moves:False"), HasSubstr("unknown key"));
  EXPECT_TRUE(DefaultOptions().hold_reserved);
  EXPECT_FALSE(ParseOk("hold_reserved:False").hold_reserved);
  EXPECT_THAT(ParseError("hold_reserved:2"), HasSubstr("hold_reserved"));
  // Switches on by default: each parses, refuses a non-boolean by name and
  // is printed.
  const std::pair<const char*, bool Options::*> switches[] = {
      {"keep_old_mappings", &Options::keep_old_mappings},
  };
  for (const auto& [name, field] : switches) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(DefaultOptions().*field);
    EXPECT_FALSE(ParseOk(absl::StrCat(name, ":False")).*field);
    EXPECT_THAT(ParseError(absl::StrCat(name, ":sometimes")), HasSubstr(name));
    EXPECT_THAT(DefaultOptions().ToString(), HasSubstr(absl::StrCat(name, ":True")));
  }
  // cross_stream_reuse: by default (auto) streams lend where the cache
  // would otherwise move memory, ordered on the device; False is PyTorch's
  // per-stream reuse, True lends wherever a stream would map.
  EXPECT_EQ(DefaultOptions().cross_stream_reuse, Options::CrossStreamReuse::kWhenMoving);
  EXPECT_EQ(ParseOk("cross_stream_reuse:True").cross_stream_reuse,
            Options::CrossStreamReuse::kAlways);
  EXPECT_EQ(ParseOk("cross_stream_reuse:False").cross_stream_reuse,
            Options::CrossStreamReuse::kNever);
  EXPECT_EQ(ParseOk("cross_stream_reuse:False,cross_stream_reuse:auto").cross_stream_reuse,
            Options::CrossStreamReuse::kWhenMoving);
  EXPECT_THAT(ParseOk("cross_stream_reuse:True").ToString(),
              HasSubstr("cross_stream_reuse:True"));
  EXPECT_THAT(ParseOk("cross_stream_reuse:False").ToString(),
              HasSubstr("cross_stream_reuse:False"));
  EXPECT_THAT(DefaultOptions().ToString(), HasSubstr("cross_stream_reuse:auto"));
  EXPECT_THAT(ParseError("cross_stream_reuse:often"), HasSubstr("cross_stream_reuse"));
  EXPECT_THAT(ParseError("cross_stream_reuse:often"), HasSubstr("auto"));
  EXPECT_THAT(DefaultOptions().ToString(), HasSubstr("mapped_fit:auto"));
  // mapped_fit_min_mb and busy_wait_us were experiments whose answers are
  // known (docs/history.md): unknown keys now.
  for (const char* gone : {"mapped_fit_min_mb:32", "busy_wait_us:auto"}) {
    EXPECT_THAT(ParseError(gone), HasSubstr("unknown key")) << gone;
  }
  // ToString names each setting as it is written.
  for (const char* conf : {"mapped_fit:True", "mapped_fit:False", "mapped_fit:auto"}) {
    EXPECT_THAT(ParseOk(conf).ToString(), HasSubstr(conf));
  }
  EXPECT_EQ(DefaultOptions().mapped_fit, Options::MappedFit::kWhenSlack);
  EXPECT_EQ(ParseOk("mapped_fit:True").mapped_fit, Options::MappedFit::kAlways);
  EXPECT_EQ(ParseOk("mapped_fit:False").mapped_fit, Options::MappedFit::kNever);
  EXPECT_EQ(ParseOk("mapped_fit:True,mapped_fit:auto").mapped_fit,
            Options::MappedFit::kWhenSlack);
  EXPECT_THAT(ParseError("mapped_fit:yes please"),
              AllOf(HasSubstr("mapped_fit"), HasSubstr("auto")));
}

TEST(OptionsTest, MapChunks) {
  EXPECT_EQ(ParseOk("max_map_chunk_mb:64").max_map_chunk, 64 * kMiB);
  // map_chunk_scale was an experiment whose answer is known
  // (docs/steady_state.md): an unknown key now.
  EXPECT_THAT(ParseError("map_chunk_scale:16"), HasSubstr("map_chunk_scale"));
  for (const char* bad : {"max_map_chunk_mb:1", "max_map_chunk_mb:x"}) {
    EXPECT_THAT(ParseError(bad), HasSubstr("max_map_chunk_mb")) << bad;
  }
}

// Keys that were switches or numbers whose answer became known: their
// default is the only behaviour, and a configuration that still names one
// is told so rather than silently ignored.
TEST(OptionsTest, KeysWhoseAnswerIsKnownAreUnknownNow) {
  for (const char* gone :
       {"hot_slot:True", "skip_busy_pages:True", "skip_busy_holes:True", "partial_runs:True",
        "free_marks:16", "unpin_edges_mb:0", "map_chunk_divisor:1", "cross_stream_wait:True",
        "backup_batch_mb:64", "mapped_fit_missing_mb:64"}) {
    EXPECT_THAT(ParseError(gone), HasSubstr("unknown key")) << gone;
  }
}

TEST(OptionsTest, UnknownKeyIsNamed) {
  const std::string error = ParseError("max_split_size_mb:128,no_such_key:1");
  EXPECT_THAT(error, HasSubstr("no_such_key"));
  // A typo of a real key is not silently accepted either.
  EXPECT_THAT(ParseError("expandable_segment:True"), HasSubstr("expandable_segment"));
}

TEST(OptionsTest, TheUnknownKeyErrorListsEveryKeyTheParserTakes) {
  // A key parsed but missing from the list would send a user who mistyped
  // it away thinking it does not exist (per_process_memory_fraction was);
  // one listed but gone would send them to a key that fails.
  const std::string error = ParseError("no_such_key:1");
  const std::size_t open = error.find("(known: ");
  ASSERT_NE(open, std::string::npos) << error;
  const std::size_t close = error.rfind(')');
  ASSERT_GT(close, open) << error;
  const std::vector<std::string> listed =
      absl::StrSplit(error.substr(open + 8, close - open - 8), ", ");
  // Each listed key is one the parser knows (its value may be bad).
  for (const std::string& key : listed) {
    absl::StatusOr<Options> parsed = ParseOptions(key + ":bogus", DefaultOptions());
    if (!parsed.ok()) {
      EXPECT_THAT(std::string(parsed.status().message()), Not(HasSubstr("unknown key"))) << key;
    }
  }
  // Every key a configuration is written with (ToString) is listed.
  const std::string written = DefaultOptions().ToString();
  const std::regex key_re("(?:^|,)([a-z_0-9]+):");
  int keys = 0;
  for (auto it = std::sregex_iterator(written.begin(), written.end(), key_re);
       it != std::sregex_iterator(); ++it, ++keys) {
    EXPECT_THAT(listed, Contains((*it)[1].str())) << written;
  }
  EXPECT_GE(keys, 10) << written;
  EXPECT_THAT(listed, Contains("per_process_memory_fraction"));
}

// Options are for choices users make (docs/options.md): an experiment's
// answer is a constant, so ccalloc adds few keys to PyTorch's.
TEST(OptionsTest, CcallocAddsFewKeysToPytorchs) {
  const std::string error = ParseError("no_such_key:1");
  const std::size_t open = error.find("(known: ");
  ASSERT_NE(open, std::string::npos) << error;
  const std::size_t close = error.rfind(')');
  const std::vector<std::string> listed =
      absl::StrSplit(error.substr(open + 8, close - open - 8), ", ");
  const std::vector<std::string> pytorchs = {
      "max_split_size_mb", "roundup_power2_divisions", "garbage_collection_threshold",
      "expandable_segments", "per_process_memory_fraction"};
  for (const std::string& key : pytorchs) EXPECT_THAT(listed, Contains(key));
  std::vector<std::string> ours;
  for (const std::string& key : listed) {
    if (std::find(pytorchs.begin(), pytorchs.end(), key) == pytorchs.end()) ours.push_back(key);
  }
  EXPECT_LE(ours.size(), 12u) << absl::StrJoin(ours, ", ");
}

TEST(OptionsTest, ItemWithoutColonIsNamed) {
  EXPECT_THAT(ParseError("expandable_segments"), HasSubstr("expandable_segments"));
  EXPECT_THAT(ParseError("max_split_size_mb:128,garbage"), HasSubstr("garbage"));
}

TEST(OptionsTest, SeveralKeysWhitespaceAndOverrides) {
  const Options options = ParseOk(
      " max_split_size_mb : 256 , expandable_segments:True,garbage_collection_threshold:0.8,"
      "max_split_size_mb:512 ");
  EXPECT_EQ(options.max_split_size, 512 * kMiB) << "the later value wins";
  EXPECT_TRUE(options.expandable_segments);
  EXPECT_DOUBLE_EQ(options.garbage_collection_threshold, 0.8);
}

TEST(OptionsTest, AFailedParseLeavesTheBaseAlone) {
  Options base = PytorchNativeOptions();
  const std::string before = base.ToString();
  absl::StatusOr<Options> options = ParseOptions("max_split_size_mb:64,bogus:1", base);
  EXPECT_FALSE(options.ok());
  EXPECT_EQ(base.ToString(), before);
}

TEST(OptionsTest, ByteSizes) {
  struct Case {
    const char* text;
    std::size_t bytes;
  };
  for (const Case& c :
       {Case{"0", 0}, Case{"512", 512}, Case{"1k", 1024}, Case{"1KiB", 1024}, Case{"2m", 2 * kMiB},
        Case{"2MB", 2 * kMiB}, Case{"3G", 3 * kGiB}, Case{"0.5GiB", kGiB / 2},
        Case{"1T", kGiB * 1024}, Case{" 4 MiB ", 4 * kMiB}, Case{"7b", 7}}) {
    absl::StatusOr<std::size_t> bytes = ParseByteSize(c.text);
    ASSERT_TRUE(bytes.ok()) << c.text << ": " << bytes.status();
    EXPECT_EQ(*bytes, c.bytes) << c.text;
  }
  for (const char* bad : {"", "MiB", "-1", "1 XB", "1e3", "1.2.3M"}) {
    absl::StatusOr<std::size_t> bytes = ParseByteSize(bad);
    EXPECT_FALSE(bytes.ok()) << "'" << bad << "' gave " << (bytes.ok() ? *bytes : 0);
  }
}

TEST(OptionsTest, FromEnvironment) {
  Options base = PytorchNativeOptions();
  base.memory_limit = 7 * kMiB;
  ASSERT_EQ(unsetenv("CCALLOC_CONF"), 0);
  absl::StatusOr<Options> unset = OptionsFromEnvironment(base);
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_EQ(unset->ToString(), base.ToString());

  ASSERT_EQ(setenv("CCALLOC_CONF", "max_split_size_mb:64,memory_limit:1GiB", 1), 0);
  absl::StatusOr<Options> set = OptionsFromEnvironment(base);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->max_split_size, 64 * kMiB);
  EXPECT_EQ(set->memory_limit, kGiB);

  ASSERT_EQ(setenv("CCALLOC_CONF", "bogus_key:1", 1), 0);
  absl::StatusOr<Options> bad = OptionsFromEnvironment(base);
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("bogus_key"));
  unsetenv("CCALLOC_CONF");
}

}  // namespace
}  // namespace ccalloc
