// Trace reading and writing.
//
// Traces run to millions of lines, and replay and the benchmarks load them on
// every run, so the parsers walk the text once with memchr and from_chars
// over string_views: no iostreams, no per-line allocation. The text is held
// whole in memory; decompressing first and parsing after keeps the parsers
// oblivious to gzip.

#include "stats/trace.h"

#if !CCALLOC_NO_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>  // The public API is std::string_view.
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace ccalloc {
namespace {

constexpr char kV1Header[] =
    "# caching-allocator trace v1: a <id> <bytes> <stream> | f <id>\n";

// Walks text line by line, keeping the 1-based number of the line last
// returned so that every error can cite it.
class LineReader {
 public:
  explicit LineReader(absl::string_view text) : text_(text) {}

  // Returns false at the end of the text. Strips a trailing '\r' so that
  // files written on Windows parse the same.
  bool Next(absl::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const char* begin = text_.data() + pos_;
    const size_t left = text_.size() - pos_;
    const void* nl = std::memchr(begin, '\n', left);
    size_t len = nl == nullptr ? left : static_cast<const char*>(nl) - begin;
    pos_ += len + 1;
    ++line_number_;
    if (len > 0 && begin[len - 1] == '\r') --len;
    line = absl::string_view(begin, len);
    return true;
  }

  uint64_t line_number() const { return line_number_; }

 private:
  absl::string_view text_;
  size_t pos_ = 0;
  uint64_t line_number_ = 0;
};

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Splits off the next blank-separated token; empty when none is left.
absl::string_view NextToken(absl::string_view& rest) {
  size_t i = 0;
  while (i < rest.size() && IsBlank(rest[i])) ++i;
  size_t j = i;
  while (j < rest.size() && !IsBlank(rest[j])) ++j;
  absl::string_view token = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return token;
}

// Strict: the whole token must be digits, and the value must fit.
bool ParseUint(absl::string_view token, int base, uint64_t& value) {
  if (token.empty()) return false;
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, value, base);
  return ec == std::errc() && ptr == end;
}

bool ParseHex(absl::string_view token, uint64_t& value) {
  if (absl::StartsWithIgnoreCase(token, "0x")) token.remove_prefix(2);
  return ParseUint(token, 16, value);
}

// RMM prints streams through iostreams, which gives hex for pointer-like
// handles ("0x0") but decimal from some wrappers; accept both.
bool ParseHexOrDecimal(absl::string_view token, uint64_t& value) {
  if (absl::StartsWithIgnoreCase(token, "0x")) return ParseHex(token, value);
  return ParseUint(token, 10, value);
}

absl::Status LineError(absl::string_view name, uint64_t line,
                       absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(name, ":", line, ": ", message));
}

// Comments and blank lines carry no events in either format.
bool IsSkippable(absl::string_view line) {
  absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
  return stripped.empty() || stripped.front() == '#';
}

size_t CountLines(absl::string_view text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
}

// --- ccalloc v1 text --------------------------------------------------------

absl::StatusOr<Trace> ParseV1(absl::string_view text, std::string name) {
  // Ids in a v1 file are used as they are, so that a trace's ids can be
  // looked up in the file. They must be dense, so no id can reach the number
  // of lines: that bounds the per-id table even for hostile input.
  const uint64_t max_ids = CountLines(text);
  struct IdState {
    uint64_t bytes = 0;
    uint64_t stream = 0;
    uint64_t alloc_line = 0;  // 0 while unallocated.
    bool freed = false;
  };
  std::vector<IdState> ids;

  Trace trace;
  trace.name = std::move(name);
  trace.events.reserve(max_ids);
  LineReader reader(text);
  absl::string_view line;
  while (reader.Next(line)) {
    if (const size_t hash = line.find('#'); hash != line.npos) {
      // One comment means something: how many training steps the trace covers.
      absl::string_view comment = absl::StripAsciiWhitespace(line.substr(hash + 1));
      if (absl::ConsumePrefix(&comment, "steps:")) {
        int steps = 0;
        if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(comment), &steps) || steps <= 0) {
          return LineError(trace.name, reader.line_number(),
                           "'# steps:' wants a count of steps > 0");
        }
        trace.steps = steps;
      }
      line = line.substr(0, hash);  // Whole-line and trailing comments.
    }
    absl::string_view rest = line;
    const absl::string_view op = NextToken(rest);
    if (op.empty()) continue;
    const uint64_t n = reader.line_number();
    auto error = [&](absl::string_view message) {
      return LineError(trace.name, n, message);
    };
    TraceEvent event;
    bool free_names_stream = false;
    if (op == "a") {
      event.op = TraceEvent::Op::kAlloc;
      uint64_t region = 0;
      const bool fields = ParseUint(NextToken(rest), 10, event.id) &&
                          ParseUint(NextToken(rest), 10, event.bytes) &&
                          ParseUint(NextToken(rest), 10, event.stream);
      const absl::string_view region_field = NextToken(rest);
      if (!fields || (!region_field.empty() && !ParseUint(region_field, 10, region)) ||
          region > 0xffffffffu || !NextToken(rest).empty()) {
        return error(absl::StrCat("expected 'a <id> <bytes> <stream> [<region>]', got '",
                                  line, "'"));
      }
      event.region = static_cast<uint32_t>(region);
    } else if (op == "f") {
      event.op = TraceEvent::Op::kFree;
      if (!ParseUint(NextToken(rest), 10, event.id)) {
        return error(
            absl::StrCat("expected 'f <id> [<stream>]', got '", line, "'"));
      }
      const absl::string_view stream = NextToken(rest);
      if ((!stream.empty() && !ParseUint(stream, 10, event.stream)) ||
          !NextToken(rest).empty()) {
        return error(
            absl::StrCat("expected 'f <id> [<stream>]', got '", line, "'"));
      }
      free_names_stream = !stream.empty();
    } else if (op == "p" || op == "r") {
      // Sleep and wake: the region and the bytes given back or taken. They
      // name no block, so the id checks below do not apply.
      event.op = op == "p" ? TraceEvent::Op::kPause : TraceEvent::Op::kResume;
      event.stream = 0;
      if (!ParseUint(NextToken(rest), 10, event.id) ||
          !ParseUint(NextToken(rest), 10, event.bytes) || !NextToken(rest).empty() ||
          event.id == 0 || event.id > 0xffffffffu) {
        return error(absl::StrCat("expected '", op, " <region 1..2^32-1> <bytes>', got '", line,
                                  "'"));
      }
      trace.events.push_back(event);
      continue;
    } else {
      return error(
          absl::StrCat("unknown operation '", op, "' (expected 'a', 'f', 'p' or 'r')"));
    }

    if (event.id >= max_ids) {
      return error(absl::StrCat("id ", event.id,
                                " is larger than the number of lines; ids "
                                "must be dense"));
    }
    if (event.id >= ids.size()) {
      ids.resize(std::min<uint64_t>(
          max_ids, std::max<uint64_t>(event.id + 1, 2 * ids.size())));
    }
    IdState& state = ids[event.id];
    if (event.op == TraceEvent::Op::kAlloc) {
      if (state.alloc_line != 0) {
        return error(absl::StrCat("id ", event.id,
                                  " allocated again (first allocated on line ",
                                  state.alloc_line, ")"));
      }
      state.alloc_line = n;
      state.bytes = event.bytes;
      state.stream = event.stream;
    } else {
      if (state.alloc_line == 0) {
        return error(absl::StrCat("free of unknown id ", event.id,
                                  " (not allocated before this line)"));
      }
      if (state.freed) {
        return error(absl::StrCat("id ", event.id, " freed twice"));
      }
      state.freed = true;
      event.bytes = state.bytes;
      if (!free_names_stream) event.stream = state.stream;
    }
    trace.events.push_back(event);
  }

  // The table may have been grown past the largest id; only ids up to the
  // largest one seen count.
  uint64_t num_ids = 0;
  uint64_t max_id_line = 0;
  for (uint64_t id = 0; id < ids.size(); ++id) {
    if (ids[id].alloc_line != 0) {
      num_ids = id + 1;
      max_id_line = ids[id].alloc_line;
    }
  }
  for (uint64_t id = 0; id < num_ids; ++id) {
    if (ids[id].alloc_line == 0) {
      return LineError(
          trace.name, max_id_line,
          absl::StrCat("id ", num_ids - 1, " is allocated here but id ", id,
                       " never is; ids must be dense"));
    }
  }
  trace.num_ids = num_ids;
  return trace;
}

// --- RMM logging_resource_adaptor CSV ----------------------------------------

// Splits a CSV row (RMM never quotes) into at most `max_fields` fields.
size_t SplitCsv(absl::string_view line, absl::string_view* fields,
                size_t max_fields) {
  size_t count = 0;
  while (count < max_fields) {
    const size_t comma = line.find(',');
    fields[count++] = absl::StripAsciiWhitespace(line.substr(0, comma));
    if (comma == line.npos) break;
    line.remove_prefix(comma + 1);
  }
  return count;
}

bool LooksLikeRmmHeader(absl::string_view line) {
  absl::string_view first;
  SplitCsv(line, &first, 1);
  return line.find(',') != line.npos && absl::EqualsIgnoreCase(first, "Thread");
}

absl::StatusOr<Trace> ParseRmmCsv(absl::string_view text, std::string name) {
  Trace trace;
  trace.name = std::move(name);
  LineReader reader(text);
  absl::string_view line;
  while (reader.Next(line) && IsSkippable(line)) {
  }

  // Columns are found by name so that a reordered or extended log still
  // reads.
  constexpr size_t kMaxFields = 16;
  absl::string_view fields[kMaxFields];
  const size_t header_fields = SplitCsv(line, fields, kMaxFields);
  const uint64_t header_line = reader.line_number();
  size_t action = kMaxFields, pointer = kMaxFields, size = kMaxFields,
         stream = kMaxFields;
  for (size_t i = 0; i < header_fields; ++i) {
    if (absl::EqualsIgnoreCase(fields[i], "Action")) action = i;
    if (absl::EqualsIgnoreCase(fields[i], "Pointer")) pointer = i;
    if (absl::EqualsIgnoreCase(fields[i], "Size")) size = i;
    if (absl::EqualsIgnoreCase(fields[i], "Stream")) stream = i;
  }
  if (action == kMaxFields || pointer == kMaxFields || size == kMaxFields ||
      stream == kMaxFields) {
    return LineError(trace.name, header_line,
                     absl::StrCat("RMM log header lacks one of Action, "
                                  "Pointer, Size, Stream: '",
                                  line, "'"));
  }
  const size_t needed = std::max({action, pointer, size, stream}) + 1;

  struct Live {
    uint64_t id;
    uint64_t bytes;
    uint64_t line;
  };
  // Keyed by pointer: RMM reuses addresses, and each allocation of a reused
  // address is a new block, so the id is assigned at allocation and the entry
  // dropped at free.
  absl::flat_hash_map<uint64_t, Live> live;
  trace.events.reserve(CountLines(text));
  while (reader.Next(line)) {
    if (IsSkippable(line)) continue;
    const uint64_t n = reader.line_number();
    auto error = [&](absl::string_view message) {
      return LineError(trace.name, n, message);
    };
    if (SplitCsv(line, fields, kMaxFields) < needed) {
      return error(absl::StrCat("expected ", header_fields,
                                " comma-separated fields, got '", line, "'"));
    }
    const absl::string_view act = fields[action];
    const bool is_alloc = act == "allocate";
    if (!is_alloc && act != "free") {
      // A failed allocation left nothing behind to replay.
      if (act == "allocate failure") continue;
      return error(absl::StrCat("unknown action '", act,
                                "' (expected allocate, free or allocate "
                                "failure)"));
    }
    uint64_t ptr, bytes, strm;
    if (!ParseHex(fields[pointer], ptr)) {
      return error(absl::StrCat("bad pointer '", fields[pointer], "'"));
    }
    if (!ParseUint(fields[size], 10, bytes)) {
      return error(absl::StrCat("bad size '", fields[size], "'"));
    }
    if (!ParseHexOrDecimal(fields[stream], strm)) {
      return error(absl::StrCat("bad stream '", fields[stream], "'"));
    }
    // Resources may hand out null for zero bytes, and freeing null is a
    // no-op in RMM; neither is a block an allocator would hold.
    if (ptr == 0) continue;

    if (is_alloc) {
      auto [it, inserted] =
          live.try_emplace(ptr, Live{trace.num_ids, bytes, n});
      if (!inserted) {
        return error(absl::StrFormat(
            "pointer 0x%x allocated again without a free (allocated on line "
            "%d)",
            ptr, it->second.line));
      }
      trace.events.push_back(
          {TraceEvent::Op::kAlloc, trace.num_ids++, bytes, strm});
    } else {
      auto it = live.find(ptr);
      if (it == live.end()) {
        return error(absl::StrFormat("free of unknown pointer 0x%x", ptr));
      }
      // The logged size of a free is what the caller passed to deallocate;
      // the allocation's size is what a replay must free.
      trace.events.push_back(
          {TraceEvent::Op::kFree, it->second.id, it->second.bytes, strm});
      live.erase(it);
    }
  }
  return trace;
}

// --- Files -------------------------------------------------------------------

// Built without zlib (CCALLOC_ZLIB=AUTO on a machine without its headers):
// gzipped traces are refused with this error.
[[maybe_unused]] absl::Status NoZlib(const std::string& path) {
  return absl::UnimplementedError(absl::StrCat(
      "cannot read or write ", path, ": ccalloc was built without zlib"));
}

#if CCALLOC_NO_ZLIB
absl::Status ReadGzip(const std::string& path, std::string& out) { return NoZlib(path); }
#else
absl::Status ReadGzip(const std::string& path, std::string& out) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  }
  gzbuffer(file, 1 << 18);
  constexpr size_t kChunk = 1 << 20;
  while (true) {
    const size_t old_size = out.size();
    out.resize(old_size + kChunk);
    const int got = gzread(file, out.data() + old_size, kChunk);
    if (got < 0) {
      int code;
      std::string message = gzerror(file, &code);
      gzclose(file);
      out.clear();
      return absl::DataLossError(
          absl::StrCat("cannot decompress ", path, ": ", message));
    }
    out.resize(old_size + static_cast<size_t>(got));
    if (static_cast<size_t>(got) < kChunk) break;
  }
  gzclose(file);
  return absl::OkStatus();
}
#endif

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// "traces/gpt2.trace.gz" -> "gpt2": the short name reports want.
std::string TraceNameFromPath(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (absl::string_view suffix : {".gz", ".trace", ".csv", ".log", ".txt"}) {
    if (name.size() > suffix.size() && absl::EndsWith(name, suffix)) {
      name.resize(name.size() - suffix.size());
    }
  }
  return name;
}

void AppendUint(std::string& out, uint64_t value) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, end);
}

}  // namespace

absl::StatusOr<Trace> ParseTrace(std::string_view std_text, std::string name) {
  // This Abseil is built with its own string_view type; convert once here.
  const absl::string_view text(std_text.data(), std_text.size());
  LineReader reader(text);
  absl::string_view line;
  while (reader.Next(line)) {
    if (IsSkippable(line)) continue;
    if (LooksLikeRmmHeader(line)) return ParseRmmCsv(text, std::move(name));
    break;
  }
  return ParseV1(text, std::move(name));
}

absl::StatusOr<Trace> ReadTrace(const std::string& path) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  }
  std::string text;
  unsigned char magic[2] = {0, 0};
  const size_t got = std::fread(magic, 1, 2, file.get());
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    file.reset();
    if (absl::Status s = ReadGzip(path, text); !s.ok()) return s;
  } else {
    text.assign(reinterpret_cast<const char*>(magic), got);
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), file.get())) > 0) {
      text.append(buf, n);
    }
    if (std::ferror(file.get())) {
      return absl::DataLossError(absl::StrCat("cannot read ", path));
    }
  }
  absl::StatusOr<Trace> trace = ParseTrace(text, path);
  if (trace.ok()) trace->name = TraceNameFromPath(path);
  return trace;
}

absl::Status WriteTrace(const Trace& trace, const std::string& path) {
  if (absl::Status s = ValidateTrace(trace); !s.ok()) return s;

  // Frees name their stream only when it differs from the allocation's, so
  // that ordinary single-stream traces stay in the plain v1 format.
  std::vector<uint64_t> alloc_stream(trace.num_ids);
  std::string text(kV1Header);
  text.reserve(trace.events.size() * 20 + text.size());
  for (const TraceEvent& e : trace.events) {
    if (e.op == TraceEvent::Op::kAlloc) {
      alloc_stream[e.id] = e.stream;
      text += "a ";
      AppendUint(text, e.id);
      text += ' ';
      AppendUint(text, e.bytes);
      text += ' ';
      AppendUint(text, e.stream);
      if (e.region != 0) {
        text += ' ';
        AppendUint(text, e.region);
      }
    } else if (e.op == TraceEvent::Op::kPause || e.op == TraceEvent::Op::kResume) {
      text += e.op == TraceEvent::Op::kPause ? "p " : "r ";
      AppendUint(text, e.id);
      text += ' ';
      AppendUint(text, e.bytes);
    } else {
      text += "f ";
      AppendUint(text, e.id);
      if (e.stream != alloc_stream[e.id]) {
        text += ' ';
        AppendUint(text, e.stream);
      }
    }
    text += '\n';
  }

  if (absl::EndsWith(path, ".gz")) {
#if CCALLOC_NO_ZLIB
    return NoZlib(path);
#else
    gzFile file = gzopen(path.c_str(), "wb6");
    if (file == nullptr) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot create ", path));
    }
    // gzwrite takes an unsigned length; write in bounded pieces.
    constexpr size_t kChunk = size_t{1} << 30;
    for (size_t off = 0; off < text.size(); off += kChunk) {
      const unsigned len =
          static_cast<unsigned>(std::min(kChunk, text.size() - off));
      if (gzwrite(file, text.data() + off, len) != static_cast<int>(len)) {
        int code;
        std::string message = gzerror(file, &code);
        gzclose(file);
        return absl::DataLossError(
            absl::StrCat("cannot write ", path, ": ", message));
      }
    }
    if (gzclose(file) != Z_OK) {
      return absl::DataLossError(absl::StrCat("cannot finish writing ", path));
    }
    return absl::OkStatus();
#endif
  }

  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot create ", path));
  }
  const bool written =
      std::fwrite(text.data(), 1, text.size(), file) == text.size();
  // fclose flushes, so its result matters as much as fwrite's.
  if (std::fclose(file) != 0 || !written) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

absl::Status ValidateTrace(const Trace& trace) {
  auto error = [&](size_t index, absl::string_view message) {
    return absl::InvalidArgumentError(
        absl::StrCat(trace.name, ": event ", index, ": ", message));
  };
  // Each id is allocated once, so more ids than events cannot be dense; this
  // also keeps a corrupt num_ids from sizing the table below.
  if (trace.num_ids > trace.events.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(trace.name, ": num_ids ", trace.num_ids, " exceeds the ",
                     trace.events.size(), " events"));
  }
  enum class State : uint8_t { kUnseen, kLive, kFreed };
  std::vector<State> state(trace.num_ids, State::kUnseen);
  std::vector<uint64_t> bytes(trace.num_ids);
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& e = trace.events[i];
    if (e.op == TraceEvent::Op::kPause || e.op == TraceEvent::Op::kResume) {
      if (e.id == 0 || e.id > 0xffffffffu) {
        return error(i, absl::StrCat("pause/resume of region ", e.id, " (1..2^32-1)"));
      }
      continue;
    }
    if (e.id >= trace.num_ids) {
      return error(i, absl::StrCat("id ", e.id, " is not below num_ids ",
                                   trace.num_ids));
    }
    switch (e.op) {
      case TraceEvent::Op::kAlloc:
        if (state[e.id] != State::kUnseen) {
          return error(i, absl::StrCat("id ", e.id, " allocated again"));
        }
        state[e.id] = State::kLive;
        bytes[e.id] = e.bytes;
        break;
      case TraceEvent::Op::kFree:
        if (state[e.id] == State::kUnseen) {
          return error(
              i, absl::StrCat("id ", e.id, " freed before it is allocated"));
        }
        if (state[e.id] == State::kFreed) {
          return error(i, absl::StrCat("id ", e.id, " freed twice"));
        }
        if (e.bytes != 0 && e.bytes != bytes[e.id]) {
          return error(
              i, absl::StrCat("free of id ", e.id, " says ", e.bytes,
                              " bytes, but ", bytes[e.id], " were allocated"));
        }
        state[e.id] = State::kFreed;
        break;
      default:
        return error(i, absl::StrCat("unknown op ", static_cast<int>(e.op)));
    }
  }
  for (uint64_t id = 0; id < trace.num_ids; ++id) {
    if (state[id] == State::kUnseen) {
      return absl::InvalidArgumentError(absl::StrCat(
          trace.name, ": id ", id, " is never allocated; ids must be dense"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ccalloc
