#include "stats/trace.h"

#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccalloc {

// Readable failure messages for event comparisons.
void PrintTo(const TraceEvent& e, std::ostream* os) {
  *os << (e.op == TraceEvent::Op::kAlloc ? "a " : "f ") << e.id << " "
      << e.bytes << " @" << e.stream;
}

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Op = TraceEvent::Op;

// The repository's traces/ folder, found without a compile definition so
// that the test runs from any build directory: $CCALLOC_SOURCE_DIR, then the
// current directory and its parents, then this file's location.
std::filesystem::path TracesDir() {
  namespace fs = std::filesystem;
  auto has_traces = [](const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / "traces" / "gpt2.trace.gz", ec);
  };
  if (const char* env = std::getenv("CCALLOC_SOURCE_DIR");
      env != nullptr && has_traces(env)) {
    return fs::path(env) / "traces";
  }
  std::error_code ec;
  for (fs::path dir = fs::current_path(ec); !dir.empty();
       dir = dir.parent_path()) {
    if (has_traces(dir)) return dir / "traces";
    if (dir == dir.parent_path()) break;
  }
  return fs::path(__FILE__).parent_path().parent_path() / "traces";
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// absl::Status::message() is absl::string_view, which gmock matchers for
// std::string do not take.
std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

Trace SmallTrace() {
  Trace t;
  t.name = "small";
  t.num_ids = 3;
  t.events = {
      {Op::kAlloc, 0, 512, 0},    {Op::kAlloc, 1, 2097152, 7},
      {Op::kFree, 0, 512, 0},     {Op::kAlloc, 2, 1024, 0},
      {Op::kFree, 1, 2097152, 0},  // Used last on stream 0: record_stream.
  };
  return t;  // Block 2 stays live, which traces allow.
}

TEST(TraceTest, RoundTripPlain) {
  const std::string path = TempPath("small.trace");
  ASSERT_TRUE(WriteTrace(SmallTrace(), path).ok());
  EXPECT_NE(ReadBytes(path).substr(0, 2), "\x1f\x8b");
  absl::StatusOr<Trace> read = ReadTrace(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->name, "small");
  EXPECT_EQ(read->num_ids, 3u);
  EXPECT_EQ(read->events, SmallTrace().events);
}

TEST(TraceTest, RoundTripGzip) {
  const std::string path = TempPath("small.trace.gz");
  ASSERT_TRUE(WriteTrace(SmallTrace(), path).ok());
  EXPECT_EQ(ReadBytes(path).substr(0, 2), "\x1f\x8b");
  absl::StatusOr<Trace> read = ReadTrace(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->name, "small");
  EXPECT_EQ(read->events, SmallTrace().events);
}

TEST(TraceTest, WritesPlainV1WithFreeStreamOnlyWhenItDiffers) {
  const std::string path = TempPath("format.trace");
  ASSERT_TRUE(WriteTrace(SmallTrace(), path).ok());
  const std::string text = ReadBytes(path);
  EXPECT_THAT(text, HasSubstr("\na 1 2097152 7\n"));
  EXPECT_THAT(text, HasSubstr("\nf 0\n"));
  EXPECT_THAT(text, HasSubstr("\nf 1 0\n"));
  EXPECT_EQ(text.front(), '#');
}

TEST(TraceTest, GzipIsDetectedByContentNotName) {
  const std::string path = TempPath("compressed_without_suffix");
  WriteGzip(path, "a 0 512 0\nf 0\n");
  absl::StatusOr<Trace> read = ReadTrace(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->events.size(), 2u);
}

// A "# steps: N" comment says how many training steps the trace covers (the
// replay's per-step figures); any other comment means nothing, and a steps
// line that is not a positive count is an error naming its line.
TEST(TraceTest, StepsCommentGivesTheStepCount) {
  absl::StatusOr<Trace> t = ParseTrace("# a comment\na 0 512 0\nf 0\n# steps: 7\n", "t");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->steps, 7);
  absl::StatusOr<Trace> none = ParseTrace("a 0 512 0\n# stepped\n", "t");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->steps, 0);
  for (const char* bad : {"# steps: x\n", "# steps: 0\n", "a 0 512 0\n# steps:\n"}) {
    absl::StatusOr<Trace> b = ParseTrace(bad, "t");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_THAT(b.status().message(), HasSubstr("steps")) << bad;
  }
}

TEST(TraceTest, ParsesV1WithCommentsBlankLinesAndCrlf) {
  absl::StatusOr<Trace> t = ParseTrace(
      "# caching-allocator trace v1\n"
      "\n"
      "a 0 1024 0\r\n"
      "   # indented comment\n"
      "a\t1  4096\t3   # trailing comment\n"
      "f 0\n"
      "f 1 0\n"
      "a 2 512 0",  // No final newline.
      "t");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->name, "t");
  EXPECT_EQ(t->num_ids, 3u);
  // Frees carry the allocation's size, and its stream unless they name one.
  EXPECT_THAT(t->events, ElementsAre(TraceEvent{Op::kAlloc, 0, 1024, 0},
                                     TraceEvent{Op::kAlloc, 1, 4096, 3},
                                     TraceEvent{Op::kFree, 0, 1024, 0},
                                     TraceEvent{Op::kFree, 1, 4096, 0},
                                     TraceEvent{Op::kAlloc, 2, 512, 0}));
  EXPECT_TRUE(ValidateTrace(*t).ok());
}

TEST(TraceTest, EmptyTextIsAnEmptyTrace) {
  absl::StatusOr<Trace> t = ParseTrace("# nothing\n\n", "empty");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->events.empty());
  EXPECT_EQ(t->num_ids, 0u);
}

TEST(TraceTest, IdsNeedNotBeAllocatedInOrder) {
  absl::StatusOr<Trace> t = ParseTrace("a 1 512 0\na 0 512 0\nf 1\n", "t");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->num_ids, 2u);
}

struct BadInput {
  const char* text;
  const char* where;  // "name:line:" expected at the start of the message.
  const char* what;
};

class MalformedV1Test : public ::testing::TestWithParam<BadInput> {};

TEST_P(MalformedV1Test, FailsWithLineNumber) {
  absl::StatusOr<Trace> t = ParseTrace(GetParam().text, "bad.trace");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(t.status()), ::testing::StartsWith(GetParam().where));
  EXPECT_THAT(Message(t.status()), HasSubstr(GetParam().what));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, MalformedV1Test,
    ::testing::Values(
        BadInput{"a 0 512 0\na 1 512\n", "bad.trace:2:", "expected 'a <id>"},
        BadInput{"a 0 512 0 9 1\n", "bad.trace:1:", "expected 'a <id>"},  // 5th: region
        BadInput{"a 0 -5 0\n", "bad.trace:1:", "expected 'a <id>"},
        BadInput{"a 0 12x 0\n", "bad.trace:1:", "expected 'a <id>"},
        BadInput{"a 0 99999999999999999999 0\n",
                 "bad.trace:1:", "expected 'a <id>"},
        BadInput{"a 0 512 0\nf\n", "bad.trace:2:", "expected 'f <id>"},
        BadInput{"a 0 512 0\nf 0 1 2\n", "bad.trace:2:", "expected 'f <id>"},
        BadInput{"# c\nx 0 512 0\n", "bad.trace:2:", "unknown operation 'x'"},
        BadInput{"a 0 512 0\n\nf 1\n", "bad.trace:3:", "free of unknown id 1"},
        BadInput{"a 0 512 0\nf 0\nf 0\n", "bad.trace:3:", "freed twice"},
        BadInput{"a 0 512 0\na 1 512 0\na 0 1024 0\n", "bad.trace:3:",
                 "id 0 allocated again (first allocated on line 1)"},
        BadInput{"a 0 512 0\na 2 512 0\n", "bad.trace:2:", "ids must be dense"},
        BadInput{"a 1000000000 512 0\n", "bad.trace:1:", "ids must be dense"}));

constexpr char kRmmLog[] =
    "Thread,Time,Action,Pointer,Size,Stream\n"
    "140,09:00:00.000001,allocate,0x7f0000000000,1024,0x0\n"
    "140,09:00:00.000002,allocate,0x7f0000100000,4096,0x5a\n"
    "140,09:00:00.000003,allocate failure,0x0,999999999999,0x0\n"
    "140,09:00:00.000004,free,0x7f0000000000,1024,0x0\n"
    // The same address again is a new block.
    "141,09:00:00.000005,allocate,0x7f0000000000,512,7\n"
    "141,09:00:00.000006,free,0x7f0000100000,4096,0x0\n";

TEST(TraceTest, ConvertsRmmLogWithPointerReuse) {
  absl::StatusOr<Trace> t = ParseTrace(kRmmLog, "rmm.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->num_ids, 3u);
  EXPECT_THAT(t->events, ElementsAre(TraceEvent{Op::kAlloc, 0, 1024, 0},
                                     TraceEvent{Op::kAlloc, 1, 4096, 0x5a},
                                     TraceEvent{Op::kFree, 0, 1024, 0},
                                     TraceEvent{Op::kAlloc, 2, 512, 7},
                                     TraceEvent{Op::kFree, 1, 4096, 0}));
  EXPECT_TRUE(ValidateTrace(*t).ok());
}

TEST(TraceTest, ReadsGzippedRmmLogAndNamesItAfterTheFile) {
  const std::string path = TempPath("run.csv.gz");
  WriteGzip(path, kRmmLog);
  absl::StatusOr<Trace> t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->name, "run");
  EXPECT_EQ(t->events.size(), 5u);
}

TEST(TraceTest, RmmColumnsAreFoundByName) {
  absl::StatusOr<Trace> t = ParseTrace(
      "Thread,Time,Stream,Size,Pointer,Action\n"
      "1,t,0x1,2048,0x10,allocate\n"
      "1,t,0x1,2048,0x10,free\n",
      "reordered.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->events, ElementsAre(TraceEvent{Op::kAlloc, 0, 2048, 1},
                                     TraceEvent{Op::kFree, 0, 2048, 1}));
}

class MalformedRmmTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(MalformedRmmTest, FailsWithLineNumber) {
  absl::StatusOr<Trace> t = ParseTrace(GetParam().text, "log.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(t.status()), ::testing::StartsWith(GetParam().where));
  EXPECT_THAT(Message(t.status()), HasSubstr(GetParam().what));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, MalformedRmmTest,
    ::testing::Values(BadInput{"Thread,Time,Action,Pointer,Size,Stream\n"
                               "1,t,allocate,0x10,512,0x0\n"
                               "1,t,free,0x20,512,0x0\n",
                               "log.csv:3:", "free of unknown pointer 0x20"},
                      BadInput{"Thread,Time,Action,Pointer,Size,Stream\n"
                               "1,t,allocate,0x10,512,0x0\n"
                               "1,t,allocate,0x10,512,0x0\n",
                               "log.csv:3:", "allocated again without a free"},
                      BadInput{"Thread,Time,Action,Pointer,Size,Stream\n"
                               "1,t,allocate,0x10,512\n",
                               "log.csv:2:", "comma-separated fields"},
                      BadInput{"Thread,Time,Action,Pointer,Size,Stream\n"
                               "1,t,allocate,0xzz,512,0x0\n",
                               "log.csv:2:", "bad pointer"},
                      BadInput{"Thread,Time,Action,Pointer,Size,Stream\n"
                               "1,t,allocate,0x10,big,0x0\n",
                               "log.csv:2:", "bad size"},
                      BadInput{"Thread,Time,Action,Pointer,Size,Stream\n"
                               "1,t,reallocate,0x10,512,0x0\n",
                               "log.csv:2:", "unknown action 'reallocate'"},
                      BadInput{"# comment\nThread,Time,Action,Pointer\n",
                               "log.csv:2:", "header lacks"}));

TEST(TraceTest, ValidateRejectsBrokenTraces) {
  Trace t = SmallTrace();
  EXPECT_TRUE(ValidateTrace(t).ok());

  Trace double_alloc = t;
  double_alloc.events.push_back({Op::kAlloc, 0, 512, 0});
  EXPECT_THAT(Message(ValidateTrace(double_alloc)),
              HasSubstr("event 5: id 0 allocated again"));

  Trace double_free = t;
  double_free.events.push_back({Op::kFree, 0, 0, 0});
  EXPECT_THAT(Message(ValidateTrace(double_free)), HasSubstr("freed twice"));

  Trace free_first = t;
  free_first.events.insert(free_first.events.begin(), {Op::kFree, 2, 0, 0});
  EXPECT_THAT(Message(ValidateTrace(free_first)),
              HasSubstr("freed before it is allocated"));

  Trace out_of_range = t;
  out_of_range.events.push_back({Op::kAlloc, 3, 512, 0});
  EXPECT_THAT(Message(ValidateTrace(out_of_range)),
              HasSubstr("not below num_ids"));

  Trace sparse = t;
  sparse.num_ids = 4;
  EXPECT_THAT(Message(ValidateTrace(sparse)),
              HasSubstr("id 3 is never allocated"));

  Trace wrong_size = t;
  wrong_size.events[2].bytes = 1024;
  EXPECT_THAT(Message(ValidateTrace(wrong_size)), HasSubstr("says 1024"));

  Trace huge_num_ids = t;
  huge_num_ids.num_ids = uint64_t{1} << 60;
  EXPECT_EQ(ValidateTrace(huge_num_ids).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TraceTest, FreeWithoutSizeIsValid) {
  Trace t = SmallTrace();
  t.events[2].bytes = 0;
  EXPECT_TRUE(ValidateTrace(t).ok());
}

TEST(TraceTest, WriteRefusesInvalidTrace) {
  Trace t = SmallTrace();
  t.events.push_back({Op::kFree, 0, 0, 0});
  EXPECT_EQ(WriteTrace(t, TempPath("invalid.trace")).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TraceTest, FileErrorsNameThePath) {
  absl::StatusOr<Trace> t = ReadTrace("/nonexistent/dir/x.trace");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(t.status()), HasSubstr("/nonexistent/dir/x.trace"));
  EXPECT_FALSE(WriteTrace(SmallTrace(), "/nonexistent/dir/x.trace").ok());
  EXPECT_FALSE(WriteTrace(SmallTrace(), "/nonexistent/dir/x.trace.gz").ok());
}

TEST(TraceTest, ParseErrorsInFilesNameThePath) {
  const std::string path = TempPath("broken.trace");
  WriteBytes(path, "a 0 512 0\nf 7\n");
  absl::StatusOr<Trace> t = ReadTrace(path);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(Message(t.status()), HasSubstr(path + ":2:"));
}

struct RealTrace {
  const char* file;
  size_t events;
};

class RealTraceTest : public ::testing::TestWithParam<RealTrace> {};

TEST_P(RealTraceTest, ReadsAndValidates) {
  const std::string path = (TracesDir() / GetParam().file).string();
  absl::StatusOr<Trace> t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events.size(), GetParam().events);
  EXPECT_TRUE(ValidateTrace(*t).ok());
  // Both runs used the default stream only. (Sizes are not all multiples of
  // 512 despite traces/README.md: they are PyTorch's requested sizes.)
  for (const TraceEvent& e : t->events) ASSERT_EQ(e.stream, 0u);

  // Writing and reading back changes nothing.
  const std::string copy = TempPath(std::string("copy_") + GetParam().file);
  ASSERT_TRUE(WriteTrace(*t, copy).ok());
  absl::StatusOr<Trace> again = ReadTrace(copy);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->events, t->events);
  EXPECT_EQ(again->num_ids, t->num_ids);
}

INSTANTIATE_TEST_SUITE_P(Shipped, RealTraceTest,
                         ::testing::Values(RealTrace{"gpt2.trace.gz", 42823},
                                           RealTrace{"resnet.trace.gz",
                                                     31283}));

}  // namespace
}  // namespace ccalloc
