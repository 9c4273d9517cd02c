// options.cc — CCALLOC_CONF parsing. Keeps PyTorch's names and value ranges so
// that a PYTORCH_CUDA_ALLOC_CONF string can be copied over as it is.
#include "allocator/cache/options.h"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ccalloc {
namespace {

absl::Status BadValue(absl::string_view key, absl::string_view value,
                      absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("CCALLOC_CONF: bad value '", value,
                                                 "' for key '", key, "': ", why));
}

// Sets *out from a True/False value (also true/false, 1/0).
absl::Status ParseBool(absl::string_view key, absl::string_view value, bool* out) {
  if (value == "True" || value == "true" || value == "1") {
    *out = true;
  } else if (value == "False" || value == "false" || value == "0") {
    *out = false;
  } else {
    return BadValue(key, value, "expected True or False");
  }
  return absl::OkStatus();
}

// Sets *out from True, False or auto, for a knob with a middle setting.
template <typename E>
absl::Status ParseAuto(absl::string_view key, absl::string_view value, E never, E automatic,
                       E always, E* out) {
  if (value == "auto") {
    *out = automatic;
    return absl::OkStatus();
  }
  bool on = false;
  if (!ParseBool(key, value, &on).ok()) return BadValue(key, value, "expected True, False or auto");
  *out = on ? always : never;
  return absl::OkStatus();
}

bool IsPowerOfTwo(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

absl::StatusOr<std::uint32_t> ParseDivision(absl::string_view key,
                                            absl::string_view value) {
  std::uint32_t d = 0;
  if (!absl::SimpleAtoi(value, &d)) return BadValue(key, value, "not an integer");
  // 0 and 1 both mean "no power-of-two rounding" for that interval.
  if (d > 1 && !IsPowerOfTwo(d)) {
    return BadValue(key, value, "divisions must be a power of two");
  }
  return d;
}

// "4" (every interval) or "[256:1,512:2,>:8]" (interval start in MiB → divisions;
// '>' sets every interval after the last one named).
absl::Status ParseRoundup(absl::string_view value, Options& options) {
  constexpr absl::string_view kKey = "roundup_power2_divisions";
  if (!absl::StartsWith(value, "[")) {
    absl::StatusOr<std::uint32_t> d = ParseDivision(kKey, value);
    if (!d.ok()) return d.status();
    options.roundup_power2_divisions.fill(*d);
    return absl::OkStatus();
  }
  if (!absl::EndsWith(value, "]")) return BadValue(kKey, value, "missing ']'");
  absl::string_view body = value.substr(1, value.size() - 2);
  int last_index = -1;
  for (absl::string_view item : absl::StrSplit(body, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, ':');
    if (kv.size() != 2) return BadValue(kKey, item, "expected <MiB>:<divisions>");
    absl::StatusOr<std::uint32_t> d = ParseDivision(kKey, kv[1]);
    if (!d.ok()) return d.status();
    if (kv[0] == ">") {
      for (int i = last_index + 1; i < kRoundupIntervals; ++i) {
        options.roundup_power2_divisions[i] = *d;
      }
      continue;
    }
    std::uint64_t mib = 0;
    if (!absl::SimpleAtoi(kv[0], &mib) || !IsPowerOfTwo(mib)) {
      return BadValue(kKey, item, "interval start must be a power of two in MiB");
    }
    int index = 0;
    while ((std::uint64_t{1} << index) < mib) ++index;
    if (index >= kRoundupIntervals) return BadValue(kKey, item, "interval too large");
    if (index <= last_index) return BadValue(kKey, item, "intervals must increase");
    options.roundup_power2_divisions[index] = *d;
    last_index = index;
  }
  return absl::OkStatus();
}

// garbage_collection_threshold: a fraction in (0, 1), as PyTorch takes it.
absl::StatusOr<double> ParseFraction(absl::string_view key, absl::string_view value) {
  double f = 0;
  if (!absl::SimpleAtod(value, &f) || !std::isfinite(f)) {
    return BadValue(key, value, "not a number");
  }
  if (f <= 0.0 || f >= 1.0) return BadValue(key, value, "must be in (0, 1)");
  return f;
}

// The release_slack keys: a fraction of the peak in [0, 1] (0 allowed).
absl::Status ParseSlack(absl::string_view key, absl::string_view value, double* out) {
  double f = 0;
  if (!absl::SimpleAtod(value, &f) || !(f >= 0.0 && f <= 1.0)) {
    return BadValue(key, value, "must be in [0, 1]");
  }
  *out = f;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::size_t> ParseByteSize(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  std::size_t split = 0;
  while (split < t.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(t[split])) || t[split] == '.')) {
    ++split;
  }
  double number = 0;
  if (split == 0 || !absl::SimpleAtod(t.substr(0, split), &number)) {
    return absl::InvalidArgumentError(absl::StrCat("bad byte size '", text, "'"));
  }
  std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(t.substr(split)));
  double scale = 1;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    scale = 1024.0;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    scale = 1024.0 * 1024;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("bad unit in byte size '", text, "'"));
  }
  double bytes = number * scale;
  if (bytes >= 9.0e18) {
    return absl::InvalidArgumentError(absl::StrCat("byte size '", text, "' too large"));
  }
  return static_cast<std::size_t>(bytes);
}

Options DefaultOptions() {
  Options options;
  // Growable segments keep reserved memory within release_slack of the peak
  // allocated; "expandable_segments:False" brings back classic segments.
  options.expandable_segments = true;
  return options;
}

Options PytorchNativeOptions() {
  Options options;
  options.expandable_segments = false;
  return options;
}

namespace {

// Splits "a:1,b:[x:1,y:2],c:3" on the commas outside brackets: list values
// (roundup_power2_divisions) contain commas of their own.
std::vector<absl::string_view> SplitItems(absl::string_view conf) {
  std::vector<absl::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= conf.size(); ++i) {
    if (i == conf.size() || (conf[i] == ',' && depth == 0)) {
      absl::string_view item = absl::StripAsciiWhitespace(conf.substr(start, i - start));
      if (!item.empty()) items.push_back(item);
      start = i + 1;
    } else if (conf[i] == '[') {
      ++depth;
    } else if (conf[i] == ']' && depth > 0) {
      --depth;
    }
  }
  return items;
}

}  // namespace

void CopyRuntimeKeys(const Options& from, Options& to) {
  to.max_split_size = from.max_split_size;
  to.roundup_power2_divisions = from.roundup_power2_divisions;
  to.garbage_collection_threshold = from.garbage_collection_threshold;
  to.graph_capture_record_stream_reuse = from.graph_capture_record_stream_reuse;
}

absl::StatusOr<Options> ParseOptions(absl::string_view conf, const Options& base) {
  Options options = base;
  for (absl::string_view item : SplitItems(conf)) {
    std::size_t colon = item.find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("CCALLOC_CONF: '", item, "' is not key:value"));
    }
    absl::string_view key = absl::StripAsciiWhitespace(item.substr(0, colon));
    absl::string_view value = absl::StripAsciiWhitespace(item.substr(colon + 1));
    if (key == "max_split_size_mb") {
      std::uint64_t mb = 0;
      if (!absl::SimpleAtoi(value, &mb)) return BadValue(key, value, "not an integer");
      // Oversize blocks serve requests within 20 MiB of their size, so a limit at
      // or below that would make every large block unsplittable (as PyTorch).
      if (mb <= 20) return BadValue(key, value, "must be > 20");
      if (mb > (kNoMaxSplit >> 20)) return BadValue(key, value, "too large");
      options.max_split_size = mb * kMiB;
    } else if (key == "roundup_power2_divisions") {
      if (absl::Status s = ParseRoundup(value, options); !s.ok()) return s;
    } else if (key == "garbage_collection_threshold") {
      absl::StatusOr<double> f = ParseFraction(key, value);
      if (!f.ok()) return f.status();
      options.garbage_collection_threshold = *f;
    } else if (key == "expandable_segments") {
      if (absl::Status s = ParseBool(key, value, &options.expandable_segments); !s.ok()) return s;
    } else if (key == "graph_capture_record_stream_reuse") {
      if (absl::Status s = ParseBool(key, value, &options.graph_capture_record_stream_reuse);
          !s.ok()) {
        return s;
      }
    } else if (key == "backend") {
      // ccalloc is the allocator; asking for another one here is a mistake.
      if (value != "native") {
        return BadValue(key, value, "ccalloc replaces the backend; only 'native' is accepted");
      }
    } else if (key == "release_lock_on_cudamalloc" ||
               key == "pinned_use_cuda_host_register" ||
               key == "pinned_use_background_threads") {
      // Meaningful only to PyTorch's own allocators: validated, then ignored.
      bool ignored = false;
      if (absl::Status s = ParseBool(key, value, &ignored); !s.ok()) return s;
    } else if (key == "pinned_num_register_threads") {
      std::uint32_t n = 0;
      if (!absl::SimpleAtoi(value, &n) || n == 0) {
        return BadValue(key, value, "expected a positive integer");
      }
    } else if (key == "memory_limit") {
      absl::StatusOr<std::size_t> bytes = ParseByteSize(value);
      if (!bytes.ok()) return BadValue(key, value, bytes.status().message());
      options.memory_limit = *bytes;
    } else if (key == "per_process_memory_fraction") {
      // PyTorch's (torch.cuda.set_per_process_memory_fraction at start-up):
      // 0 is a cap too.
      double f = 0;
      if (!absl::SimpleAtod(value, &f) || !(f >= 0.0 && f <= 1.0)) {
        // PyTorch's words first: scripts and PyTorch's tests match on them.
        return absl::InvalidArgumentError(absl::StrCat(
            "per_process_memory_fraction is invalid, set it in [0.0, 1.0] (CCALLOC_CONF: bad "
            "value '", value, "' for key 'per_process_memory_fraction')"));
      }
      options.per_process_memory_fraction = f;
    } else if (key == "max_map_chunk_mb") {
      std::uint64_t mb = 0;
      if (!absl::SimpleAtoi(value, &mb) || mb < 2 || mb > (std::uint64_t{1} << 20)) {
        return BadValue(key, value, "must be an integer in [2, 1048576]");
      }
      options.max_map_chunk = mb * kMiB;
    } else if (key == "release_slack") {
      if (absl::Status s = ParseSlack(key, value, &options.release_slack); !s.ok()) return s;
    } else if (key == "hold_reserved") {
      if (absl::Status s = ParseBool(key, value, &options.hold_reserved); !s.ok()) return s;
    } else if (key == "mapped_fit") {
      if (absl::Status s = ParseAuto(key, value, Options::MappedFit::kNever,
                                     Options::MappedFit::kWhenSlack, Options::MappedFit::kAlways,
                                     &options.mapped_fit);
          !s.ok()) {
        return s;
      }
    } else if (key == "background_unmap") {
      if (absl::Status s = ParseBool(key, value, &options.background_unmap); !s.ok()) return s;
    } else if (key == "cross_stream_reuse") {
      if (absl::Status s = ParseAuto(key, value, Options::CrossStreamReuse::kNever,
                                     Options::CrossStreamReuse::kWhenMoving,
                                     Options::CrossStreamReuse::kAlways, &options.cross_stream_reuse);
          !s.ok()) {
        return s;
      }
    } else if (key == "keep_old_mappings") {
      if (absl::Status s = ParseBool(key, value, &options.keep_old_mappings); !s.ok()) return s;
    } else if (key == "release_slack_max") {
      if (absl::Status s = ParseSlack(key, value, &options.release_slack_max); !s.ok()) return s;
    } else if (key == "release_slack_hard") {
      if (absl::Status s = ParseSlack(key, value, &options.release_slack_hard); !s.ok()) return s;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "CCALLOC_CONF: unknown key '", key,
          "' (known: max_split_size_mb, roundup_power2_divisions, "
          "garbage_collection_threshold, expandable_segments, "
          "graph_capture_record_stream_reuse, backend, memory_limit, "
          "per_process_memory_fraction, release_slack, release_slack_max, "
          "release_slack_hard, max_map_chunk_mb, "
          "hold_reserved, "
          "mapped_fit, "
          "background_unmap, keep_old_mappings, "
          "cross_stream_reuse)"));
    }
  }
  return options;
}

absl::StatusOr<Options> OptionsFromEnvironment(const Options& base) {
  const char* conf = std::getenv("CCALLOC_CONF");
  if (conf == nullptr) return base;
  return ParseOptions(conf, base);
}

std::string Options::ToString() const {
  std::string out = absl::StrCat(
      "max_split_size_mb:",
      max_split_size == kNoMaxSplit ? std::string("unlimited")
                                    : absl::StrCat(max_split_size / kMiB),
      ",roundup_power2_divisions:[", absl::StrJoin(roundup_power2_divisions, ","), "]",
      ",garbage_collection_threshold:", garbage_collection_threshold,
      ",expandable_segments:", expandable_segments ? "True" : "False",
      ",graph_capture_record_stream_reuse:", graph_capture_record_stream_reuse ? "True" : "False",
      ",memory_limit:", memory_limit, ",per_process_memory_fraction:",
      per_process_memory_fraction < 0 ? std::string("none")
                                      : absl::StrCat(per_process_memory_fraction),
      ",release_slack:", release_slack, ",release_slack_max:", release_slack_max,
      ",release_slack_hard:", release_slack_hard,
      ",max_map_chunk_mb:", max_map_chunk / kMiB,
                                 ",hold_reserved:", hold_reserved ? "True" : "False",
                                 ",mapped_fit:",
                                 mapped_fit == MappedFit::kAlways  ? "True"
                                 : mapped_fit == MappedFit::kNever ? "False"
                                                                   : "auto",
                                 ",background_unmap:", background_unmap ? "True" : "False",
                                 ",keep_old_mappings:", keep_old_mappings ? "True" : "False",
                                 ",cross_stream_reuse:",
                                 cross_stream_reuse == CrossStreamReuse::kAlways  ? "True"
                                 : cross_stream_reuse == CrossStreamReuse::kNever ? "False"
                                                                                  : "auto");
  return out;
}

}  // namespace ccalloc
