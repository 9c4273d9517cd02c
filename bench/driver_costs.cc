// driver_costs.cc — see driver_costs.h.
#include "bench/driver_costs.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccalloc::replay {
namespace {

constexpr absl::string_view kCallNames[kNumDriverCalls] = {
    "device_alloc", "device_free", "create",      "map",
    "set_access",   "unmap",       "release",     "reserve",
    "free_range",   "event_record", "event_query", "event_synchronize",
    "device_synchronize", "stream_synchronize", "map_run", "unmap_run", "stream_wait_event"};

// ---------------------------------------------------------------------------
// A small JSON reader: just enough for the cost table, with errors that say
// where (line:column) the text went wrong.
// ---------------------------------------------------------------------------

struct Json;
using JsonObject = std::vector<std::pair<std::string, Json>>;  // in file order
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::monostate, bool, double, std::string, JsonArray, JsonObject> value;
  bool is_null() const { return std::holds_alternative<std::monostate>(value); }
};

class JsonReader {
 public:
  JsonReader(absl::string_view text, absl::string_view name) : text_(text), name_(name) {}

  absl::StatusOr<Json> Document() {
    absl::StatusOr<Json> v = Value(0);
    if (!v.ok()) return v;
    SkipSpace();
    if (pos_ != text_.size()) return Error("text after the JSON value");
    return v;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line, ":", column, ": not valid JSON: ", what));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::StatusOr<Json> Value(int depth) {
    if (depth > 32) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of text");
    const char c = text_[pos_];
    if (c == '{') return Object(depth);
    if (c == '[') return Array(depth);
    if (c == '"') {
      absl::StatusOr<std::string> s = String();
      if (!s.ok()) return s.status();
      return Json{*std::move(s)};
    }
    if (Eat("true")) return Json{true};
    if (Eat("false")) return Json{false};
    if (Eat("null")) return Json{};
    if (c == '-' || (c >= '0' && c <= '9')) return Number();
    return Error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  absl::StatusOr<Json> Number() {
    const std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           ((text_[pos_] >= '0' && text_[pos_] <= '9') || text_[pos_] == '.' ||
            text_[pos_] == 'e' || text_[pos_] == 'E' || text_[pos_] == '+' || text_[pos_] == '-')) {
      ++pos_;
    }
    const std::string token(text_.substr(start, pos_ - start));
    std::istringstream in(token);
    in.imbue(std::locale::classic());
    double v = 0;
    in >> v;
    if (in.fail() || !in.eof() || !std::isfinite(v)) {
      pos_ = start;
      return Error(absl::StrCat("bad number '", token, "'"));
    }
    return Json{v};
  }

  absl::StatusOr<std::string> String() {
    ++pos_;  // the opening quote
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      c = text_[pos_++];
      switch (c) {
        case '"': case '\\': case '/': out += c; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return Error("short \\u escape");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = text_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') code |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= static_cast<unsigned>(h - 'A' + 10);
            else return Error("bad \\u escape");
          }
          // UTF-8 for the Basic Multilingual Plane (surrogates are kept as-is).
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default:
          return Error(absl::StrCat("bad escape '\\", std::string(1, c), "'"));
      }
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;  // the closing quote
    return out;
  }

  absl::StatusOr<Json> Array(int depth) {
    ++pos_;
    JsonArray items;
    SkipSpace();
    if (Eat("]")) return Json{std::move(items)};
    while (true) {
      absl::StatusOr<Json> v = Value(depth + 1);
      if (!v.ok()) return v;
      items.push_back(*std::move(v));
      SkipSpace();
      if (Eat(",")) continue;
      if (Eat("]")) return Json{std::move(items)};
      return Error("expected ',' or ']' in an array");
    }
  }

  absl::StatusOr<Json> Object(int depth) {
    ++pos_;
    JsonObject members;
    SkipSpace();
    if (Eat("}")) return Json{std::move(members)};
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected a key string");
      absl::StatusOr<std::string> key = String();
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Eat(":")) return Error("expected ':' after a key");
      absl::StatusOr<Json> v = Value(depth + 1);
      if (!v.ok()) return v;
      for (const auto& [k, unused] : members) {
        if (k == *key) return Error(absl::StrCat("duplicate key \"", *key, "\""));
      }
      members.emplace_back(*std::move(key), *std::move(v));
      SkipSpace();
      if (Eat(",")) continue;
      if (Eat("}")) return Json{std::move(members)};
      return Error("expected ',' or '}' in an object");
    }
  }

  const absl::string_view text_;
  const std::string name_;
  std::size_t pos_ = 0;
};

// --- Reading the table out of the JSON value. ------------------------------

absl::Status TableError(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": not a driver cost table (", kDriverCostSchema, "): ", what));
}

absl::Status CheckKeys(const JsonObject& object, std::initializer_list<absl::string_view> allowed,
                       absl::string_view where, absl::string_view name) {
  for (const auto& [key, unused] : object) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return TableError(name, absl::StrCat("unknown key \"", key, "\" in ", where, " (allowed: ",
                                           absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

const Json* Find(const JsonObject& object, absl::string_view key) {
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

// An optional string member ("" when absent or null).
absl::StatusOr<std::string> OptionalString(const JsonObject& object, absl::string_view key,
                                           absl::string_view where, absl::string_view name) {
  const Json* v = Find(object, key);
  if (v == nullptr || v->is_null()) return std::string();
  if (const auto* s = std::get_if<std::string>(&v->value)) return *s;
  return TableError(name, absl::StrCat("\"", key, "\" in ", where, " must be a string"));
}

absl::StatusOr<std::optional<double>> OptionalMicros(const JsonObject& object,
                                                     absl::string_view key,
                                                     absl::string_view where,
                                                     absl::string_view name) {
  const Json* v = Find(object, key);
  if (v == nullptr || v->is_null()) return std::optional<double>();
  const auto* d = std::get_if<double>(&v->value);
  if (d == nullptr || *d < 0) {
    return TableError(name, absl::StrCat("\"", key, "\" in ", where,
                                         " must be a number of microseconds >= 0"));
  }
  return std::optional<double>(*d);
}

std::string FormatMicros(double us) { return absl::StrFormat("%.6g", us); }

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string CallsName(const std::vector<DriverCall>& calls) {
  std::vector<std::string> names;
  for (DriverCall c : calls) names.emplace_back(DriverCallName(c));
  return absl::StrJoin(names, "+");
}

// The cost of one call (or operation) of `bytes` from entries of one call
// list, sorted by bytes; see driver_costs.h for the rule.
double Interpolate(const std::vector<const DriverCostEntry*>& sorted, std::uint64_t bytes) {
  if (sorted.size() == 1 || bytes <= sorted.front()->bytes) return sorted.front()->us;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    const DriverCostEntry& lo = *sorted[i - 1];
    const DriverCostEntry& hi = *sorted[i];
    if (bytes <= hi.bytes) {
      const double f = static_cast<double>(bytes - lo.bytes) / static_cast<double>(hi.bytes - lo.bytes);
      return lo.us + f * (hi.us - lo.us);
    }
  }
  const DriverCostEntry& lo = *sorted[sorted.size() - 2];
  const DriverCostEntry& hi = *sorted.back();
  const double slope = (hi.us - lo.us) / static_cast<double>(hi.bytes - lo.bytes);
  return hi.us + std::max(0.0, slope) * static_cast<double>(bytes - hi.bytes);
}

}  // namespace

absl::string_view DriverCallName(DriverCall call) { return kCallNames[static_cast<int>(call)]; }

std::optional<DriverCall> DriverCallFromName(absl::string_view name) {
  for (int i = 0; i < kNumDriverCalls; ++i) {
    if (kCallNames[i] == name) return static_cast<DriverCall>(i);
  }
  return std::nullopt;
}

std::int64_t DriverCallCounts::Total(DriverCall call) const {
  std::int64_t n = 0;
  for (const auto& [bytes, count] : by_bytes[static_cast<int>(call)]) n += count;
  return n;
}

std::int64_t DriverCallCounts::Total() const {
  std::int64_t n = 0;
  for (int i = 0; i < kNumDriverCalls; ++i) n += Total(static_cast<DriverCall>(i));
  return n;
}

// --- CountingBackend ---------------------------------------------------------

void CountingBackend::Count(DriverCall call, std::uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  counts_.Add(call, bytes);
  if (std::this_thread::get_id() != owner_) background_.Add(call, bytes);
}

DriverCallCounts CountingBackend::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

DriverCallCounts CountingBackend::background_counts() const {
  absl::MutexLock lock(&mu_);
  return background_;
}

absl::StatusOr<DevicePtr> CountingBackend::Allocate(std::size_t bytes) {
  Count(DriverCall::kDeviceAlloc, bytes);
  return inner().Allocate(bytes);
}
absl::Status CountingBackend::Deallocate(DevicePtr ptr, std::size_t bytes) {
  Count(DriverCall::kDeviceFree, bytes);
  return inner().Deallocate(ptr, bytes);
}
absl::StatusOr<EventHandle> CountingBackend::RecordEvent(StreamId stream) {
  Count(DriverCall::kEventRecord, 0);
  return inner().RecordEvent(stream);
}
absl::StatusOr<bool> CountingBackend::QueryEvent(EventHandle event) {
  Count(DriverCall::kEventQuery, 0);
  return inner().QueryEvent(event);
}
absl::Status CountingBackend::SynchronizeEvent(EventHandle event) {
  Count(DriverCall::kEventSynchronize, 0);
  return inner().SynchronizeEvent(event);
}
absl::Status CountingBackend::StreamWaitEvent(StreamId stream, EventHandle event) {
  Count(DriverCall::kStreamWaitEvent, 0);
  return inner().StreamWaitEvent(stream, event);
}
absl::Status CountingBackend::SynchronizeDevice() {
  Count(DriverCall::kDeviceSynchronize, 0);
  return inner().SynchronizeDevice();
}
absl::StatusOr<DevicePtr> CountingBackend::ReserveAddressRange(std::size_t bytes) {
  Count(DriverCall::kReserve, bytes);
  return inner().ReserveAddressRange(bytes);
}
absl::Status CountingBackend::ReleaseAddressRange(DevicePtr base, std::size_t bytes) {
  Count(DriverCall::kFreeRange, bytes);
  return inner().ReleaseAddressRange(base, bytes);
}
absl::StatusOr<PhysicalHandle> CountingBackend::CreatePhysical(std::size_t bytes) {
  Count(DriverCall::kCreate, bytes);
  absl::StatusOr<PhysicalHandle> handle = inner().CreatePhysical(bytes);
  if (handle.ok()) {
    absl::MutexLock lock(&mu_);
    physical_bytes_[*handle] = bytes;
  }
  return handle;
}
absl::Status CountingBackend::ReleasePhysical(PhysicalHandle handle) {
  {
    absl::MutexLock lock(&mu_);
    auto it = physical_bytes_.find(handle);
    // An imported handle has no size here; it is counted at 0 bytes.
    counts_.Add(DriverCall::kRelease, it == physical_bytes_.end() ? 0 : it->second);
  }
  absl::Status s = inner().ReleasePhysical(handle);
  if (s.ok()) {
    absl::MutexLock lock(&mu_);
    physical_bytes_.erase(handle);
  }
  return s;
}
absl::Status CountingBackend::Map(DevicePtr va, std::size_t bytes, PhysicalHandle handle) {
  Count(DriverCall::kMap, bytes);
  return inner().Map(va, bytes, handle);
}
absl::Status CountingBackend::Unmap(DevicePtr va, std::size_t bytes) {
  Count(DriverCall::kUnmap, bytes);
  return inner().Unmap(va, bytes);
}
std::int64_t DriverCallCounts::MappedChunks(std::uint64_t page_size) const {
  std::int64_t n = Total(DriverCall::kMap);
  for (const auto& [bytes, count] : by_bytes[static_cast<int>(DriverCall::kMapRun)]) {
    n += count * static_cast<std::int64_t>(page_size == 0 ? 0 : bytes / page_size);
  }
  return n;
}

absl::Status CountingBackend::MapChunks(DevicePtr va, absl::Span<const ChunkToMap> chunks,
                                        absl::Span<const int> peers) {
  if (chunks.size() == 1) {
    Count(DriverCall::kMap, chunks[0].bytes);
  } else if (!chunks.empty()) {
    Count(DriverCall::kMapRun, chunks.size() * inner().PageSize());
  }
  return inner().MapChunks(va, chunks, peers);
}
absl::Status CountingBackend::UnmapRun(DevicePtr va, std::size_t bytes, std::size_t bytes_each,
                                       std::size_t* unmapped) {
  Count(DriverCall::kUnmapRun, bytes);
  return inner().UnmapRun(va, bytes, bytes_each, unmapped);
}
absl::Status CountingBackend::SetAccess(DevicePtr va, std::size_t bytes,
                                        absl::Span<const int> devices) {
  Count(DriverCall::kSetAccess, bytes);
  return inner().SetAccess(va, bytes, devices);
}

// --- The table -----------------------------------------------------------------

absl::StatusOr<DriverCostTable> ParseDriverCostTable(absl::string_view json,
                                                     absl::string_view name) {
  absl::StatusOr<Json> doc = JsonReader(json, name).Document();
  if (!doc.ok()) return doc.status();
  const auto* top = std::get_if<JsonObject>(&doc->value);
  if (top == nullptr) return TableError(name, "the document is not a JSON object");
  if (absl::Status s = CheckKeys(*top, {"schema", "device", "driver_version", "source", "note",
                                        "costs"},
                                 "the table", name);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> schema = OptionalString(*top, "schema", "the table", name);
  if (!schema.ok()) return schema.status();
  if (*schema != kDriverCostSchema) {
    return TableError(name, absl::StrCat("\"schema\" is \"", *schema, "\", not \"",
                                         kDriverCostSchema, "\""));
  }
  DriverCostTable table;
  for (auto [key, field] : {std::pair{"device", &table.device},
                            std::pair{"driver_version", &table.driver_version},
                            std::pair{"source", &table.source}, std::pair{"note", &table.note}}) {
    absl::StatusOr<std::string> v = OptionalString(*top, key, "the table", name);
    if (!v.ok()) return v.status();
    *field = *std::move(v);
  }
  if (table.device.empty()) return TableError(name, "\"device\" is missing or empty");
  const Json* costs = Find(*top, "costs");
  const auto* list = costs == nullptr ? nullptr : std::get_if<JsonArray>(&costs->value);
  if (list == nullptr) return TableError(name, "\"costs\" is missing or not a list");

  std::set<std::pair<std::string, std::uint64_t>> seen;
  std::map<std::string, std::pair<int, int>> sized_unsized;  // per call list
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string where = absl::StrCat("costs[", i, "]");
    const auto* object = std::get_if<JsonObject>(&(*list)[i].value);
    if (object == nullptr) return TableError(name, absl::StrCat(where, " is not an object"));
    if (absl::Status s = CheckKeys(*object, {"call", "bytes", "us", "median_us", "mean_us",
                                             "min_us", "max_us", "samples", "source", "note"},
                                   where, name);
        !s.ok()) {
      return s;
    }
    DriverCostEntry e;
    absl::StatusOr<std::string> call = OptionalString(*object, "call", where, name);
    if (!call.ok()) return call.status();
    if (call->empty()) return TableError(name, absl::StrCat(where, " has no \"call\""));
    for (absl::string_view part : absl::StrSplit(*call, '+')) {
      std::optional<DriverCall> c = DriverCallFromName(part);
      if (!c.has_value()) {
        return TableError(name, absl::StrCat(where, ": unknown call \"", part, "\" (known: ",
                                             absl::StrJoin(kCallNames, ", "), ")"));
      }
      if (std::find(e.calls.begin(), e.calls.end(), *c) != e.calls.end()) {
        return TableError(name, absl::StrCat(where, ": \"", part, "\" twice in \"", *call, "\""));
      }
      e.calls.push_back(*c);
    }
    if (const Json* b = Find(*object, "bytes"); b != nullptr && !b->is_null()) {
      const auto* d = std::get_if<double>(&b->value);
      if (d == nullptr || *d < 1 || *d > 9.0e18 || std::floor(*d) != *d) {
        return TableError(name, absl::StrCat(where, ": \"bytes\" must be a whole number > 0"));
      }
      e.bytes = static_cast<std::uint64_t>(*d);
    }
    absl::StatusOr<std::optional<double>> us = OptionalMicros(*object, "us", where, name);
    if (!us.ok()) return us.status();
    if (!us->has_value()) {
      return TableError(name, absl::StrCat(where, " (", *call, "): \"us\" is missing"));
    }
    e.us = **us;
    for (auto [key, field] : {std::pair{"median_us", &e.median_us},
                              std::pair{"mean_us", &e.mean_us}, std::pair{"min_us", &e.min_us},
                              std::pair{"max_us", &e.max_us}}) {
      absl::StatusOr<std::optional<double>> v = OptionalMicros(*object, key, where, name);
      if (!v.ok()) return v.status();
      *field = *v;
    }
    if (const Json* n = Find(*object, "samples"); n != nullptr && !n->is_null()) {
      const auto* d = std::get_if<double>(&n->value);
      if (d == nullptr || *d < 0 || std::floor(*d) != *d) {
        return TableError(name, absl::StrCat(where, ": \"samples\" must be a whole number"));
      }
      e.samples = static_cast<std::int64_t>(*d);
    }
    absl::StatusOr<std::string> source = OptionalString(*object, "source", where, name);
    if (!source.ok()) return source.status();
    if (source->empty()) {
      return TableError(name, absl::StrCat(where, " (", *call,
                                           "): \"source\" is missing: every figure says where "
                                           "it comes from"));
    }
    e.source = *std::move(source);
    absl::StatusOr<std::string> note = OptionalString(*object, "note", where, name);
    if (!note.ok()) return note.status();
    e.note = *std::move(note);
    const std::string key = CallsName(e.calls);
    if (!seen.emplace(key, e.bytes).second) {
      return TableError(name, absl::StrCat(where, ": a second entry for ", key,
                                           e.bytes == 0 ? "" : absl::StrCat(" at ", e.bytes, " bytes")));
    }
    auto& [sized, unsized] = sized_unsized[key];
    ++(e.bytes == 0 ? unsized : sized);
    if (sized > 0 && unsized > 0) {
      return TableError(name, absl::StrCat(where, ": ", key,
                                           " has entries with and without \"bytes\"; give "
                                           "every entry of a call a size or none"));
    }
    table.entries.push_back(std::move(e));
  }
  return table;
}

absl::StatusOr<DriverCostTable> LoadDriverCostTable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read driver cost table ", path));
  std::ostringstream text;
  text << in.rdbuf();
  absl::StatusOr<DriverCostTable> table = ParseDriverCostTable(text.str(), path);
  if (table.ok()) table->path = path;
  return table;
}

std::string DriverCostTableToJson(const DriverCostTable& table) {
  std::string out = absl::StrCat("{\n  \"schema\": ", JsonQuote(kDriverCostSchema),
                                 ",\n  \"device\": ", JsonQuote(table.device),
                                 ",\n  \"driver_version\": ", JsonQuote(table.driver_version),
                                 ",\n  \"source\": ", JsonQuote(table.source));
  if (!table.note.empty()) absl::StrAppend(&out, ",\n  \"note\": ", JsonQuote(table.note));
  out += ",\n  \"costs\": [";
  for (std::size_t i = 0; i < table.entries.size(); ++i) {
    const DriverCostEntry& e = table.entries[i];
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    {\"call\": ", JsonQuote(CallsName(e.calls)));
    if (e.bytes != 0) absl::StrAppend(&out, ", \"bytes\": ", e.bytes);
    absl::StrAppend(&out, ", \"us\": ", FormatMicros(e.us));
    for (auto [key, v] : {std::pair{"median_us", e.median_us}, std::pair{"mean_us", e.mean_us},
                          std::pair{"min_us", e.min_us}, std::pair{"max_us", e.max_us}}) {
      if (v.has_value()) absl::StrAppend(&out, ", \"", key, "\": ", FormatMicros(*v));
    }
    if (e.samples > 0) absl::StrAppend(&out, ", \"samples\": ", e.samples);
    absl::StrAppend(&out, ",\n     \"source\": ", JsonQuote(e.source));
    if (!e.note.empty()) absl::StrAppend(&out, ",\n     \"note\": ", JsonQuote(e.note));
    out += "}";
  }
  out += table.entries.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

// --- The model -------------------------------------------------------------------

std::int64_t DriverTimeModel::unpriced_total() const {
  std::int64_t n = 0;
  for (std::int64_t u : unpriced) n += u;
  return n;
}

std::string DriverTimeModel::UnpricedText() const {
  std::vector<std::string> parts;
  for (int i = 0; i < kNumDriverCalls; ++i) {
    if (unpriced[i] > 0) {
      parts.push_back(absl::StrCat(DriverCallName(static_cast<DriverCall>(i)), " ", unpriced[i]));
    }
  }
  return absl::StrJoin(parts, ", ");
}

DriverTimeModel ModelDriverTime(const DriverCallCounts& counts, const DriverCostTable& table) {
  // Entries grouped by call list, in the table's order of first appearance,
  // each group sorted by bytes.
  std::vector<std::pair<std::vector<DriverCall>, std::vector<const DriverCostEntry*>>> groups;
  for (const DriverCostEntry& e : table.entries) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == e.calls; });
    if (it == groups.end()) {
      groups.push_back({e.calls, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(&e);
  }
  for (auto& [calls, entries] : groups) {
    std::sort(entries.begin(), entries.end(),
              [](const DriverCostEntry* a, const DriverCostEntry* b) { return a->bytes < b->bytes; });
  }
  DriverCallCounts left = counts;
  DriverTimeModel model;
  // Whole operations first, then single calls.
  for (bool whole : {true, false}) {
    for (const auto& [calls, entries] : groups) {
      if ((calls.size() > 1) != whole) continue;
      auto& first = left.by_bytes[static_cast<int>(calls[0])];
      for (auto& [bytes, count] : first) {
        std::int64_t n = count;
        for (DriverCall c : calls) {
          auto& m = left.by_bytes[static_cast<int>(c)];
          auto found = m.find(bytes);
          n = std::min(n, found == m.end() ? 0 : found->second);
        }
        if (n <= 0) continue;
        model.us += static_cast<double>(n) * Interpolate(entries, bytes);
        model.priced_calls += n * static_cast<std::int64_t>(calls.size());
        for (DriverCall c : calls) left.by_bytes[static_cast<int>(c)][bytes] -= n;
      }
    }
  }
  for (int i = 0; i < kNumDriverCalls; ++i) {
    for (const auto& [bytes, count] : left.by_bytes[i]) model.unpriced[i] += count;
  }
  return model;
}

}  // namespace ccalloc::replay
