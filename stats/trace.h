// Allocation traces: the input of replay, the scenario generators and the
// benchmarks.
//
// A trace is a flat list of alloc/free events over dense block ids. It says
// nothing about addresses: an allocator replaying it decides those, which is
// what lets one trace measure the fragmentation of many policies.
//
// Two on-disk formats are read:
//   * ccalloc v1 text (traces/README.md), plain or gzipped:
//       # comment
//       a <id> <bytes> <stream> [<region>]
//       f <id> [<stream>]
//       p <region> <bytes>
//       r <region> <bytes>
//     The optional stream on a free line is a ccalloc extension: the stream
//     whose work must finish before the block may be reused, written only
//     when it differs from the allocation's stream (PyTorch's record_stream).
//     So are the optional region of an alloc line (sleep and wake: written
//     only when nonzero) and the pause / resume lines.
//   * RMM's logging_resource_adaptor CSV
//     (`Thread,Time,Action,Pointer,Size,Stream`), whose pointers are turned
//     into dense ids.
// Only v1 is written.

#ifndef CCALLOC_STATS_TRACE_H_
#define CCALLOC_STATS_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccalloc {

struct TraceEvent {
  // kPause / kResume (sleep and wake): `id` is the region's number, `bytes`
  // the device memory the allocator gave back or took; `stream` is 0. Their
  // lines ("p <region> <bytes>", "r <region> <bytes>") are a ccalloc
  // extension; a trace without them reads as before.
  enum class Op : uint8_t { kAlloc, kFree, kPause, kResume };

  Op op;
  // Dense: the i-th distinct block of a trace is usually id i, but ids need
  // not be allocated in order.
  uint64_t id;
  // For kAlloc the requested size. For kFree the allocation's size, filled in
  // by the readers and the generators so that a consumer needs no id->size
  // map; WriteTrace ignores it and ValidateTrace accepts 0 there.
  uint64_t bytes;
  // For kAlloc the stream the block is allocated on. For kFree the stream
  // whose pending work must complete before the block can be reused: the
  // allocation's stream unless the block was used on another one.
  uint64_t stream;
  // For kAlloc the region the block was allocated in (0: none). Written as an
  // optional fifth field of the alloc line ("a <id> <bytes> <stream>
  // <region>") only when nonzero, so traces without regions read and write
  // as before.
  uint32_t region = 0;

  friend bool operator==(const TraceEvent&, const TraceEvent&) = default;
};

struct Trace {
  // Shown in reports: the scenario name, or the file's base name.
  std::string name;
  std::vector<TraceEvent> events;
  // Ids are 0..num_ids-1, each allocated exactly once.
  uint64_t num_ids = 0;
  // Training steps the trace covers, from a "# steps: N" comment line (what
  // bench/compare_training.py --record-traces writes); 0 when not given.
  int steps = 0;
};

// Reads a trace file in either format, gzipped or not (detected from the
// content, not the name). The trace is named after the file with directories
// and the .gz/.trace/.csv/.log suffixes stripped; errors name the full path.
absl::StatusOr<Trace> ReadTrace(const std::string& path);

// Parses already decompressed text in either format. `name` becomes
// Trace::name and prefixes errors, which are InvalidArgument and carry the
// 1-based line number ("name:12: ..."). The result passes ValidateTrace.
absl::StatusOr<Trace> ParseTrace(std::string_view text, std::string name);

// Writes v1 text, gzipped if `path` ends in ".gz". Refuses (with
// ValidateTrace's error) a trace that ReadTrace could not read back.
absl::Status WriteTrace(const Trace& trace, const std::string& path);

// Checks that ids are dense (every id below num_ids allocated, none above),
// each allocated once, and freed at most once and only after its allocation.
// Blocks still live at the end are allowed.
absl::Status ValidateTrace(const Trace& trace);

}  // namespace ccalloc

#endif  // CCALLOC_STATS_TRACE_H_
