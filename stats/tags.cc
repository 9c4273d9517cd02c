// tags.cc — see tags.h.
#include "stats/tags.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace ccalloc {
namespace {

// Interned names; ids are 1 + the index in `names`. A deque so that names
// never move (TagName copies under the lock anyway).
struct Registry {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, TagId> ids ABSL_GUARDED_BY(mu);
  std::deque<std::string> names ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  // Leaked on purpose: allocations may be freed from static destructors of
  // other libraries after this one's would have run.
  static Registry* registry = new Registry;
  return *registry;
}

thread_local TagId current_tag = kNoTag;

// A JSON string literal of `text` (names are the caller's: quote everything
// JSON cannot hold raw).
std::string JsonQuoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      absl::StrAppend(&out, "\\u00", absl::Hex(u, absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace

TagId InternTag(std::string_view name) {
  if (name.empty()) return kNoTag;
  if (name.size() > kMaxTagName) name = name.substr(0, kMaxTagName);
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  auto [it, fresh] = r.ids.try_emplace(std::string(name), 0);
  if (fresh) {
    r.names.emplace_back(name);
    it->second = static_cast<TagId>(r.names.size());
  }
  return it->second;
}

std::string TagName(TagId tag) {
  if (tag == kNoTag) return "";
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  return tag <= r.names.size() ? r.names[tag - 1] : std::string();
}

TagId TagCount() {
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  return static_cast<TagId>(r.names.size());
}

TagId CurrentTag() { return current_tag; }

TagId SetCurrentTag(TagId tag) { return std::exchange(current_tag, tag); }

void TagCounters::ResetPeaks() {
  untagged_.peak_bytes = untagged_.current_bytes;
  for (auto& [tag, u] : by_tag_) u.peak_bytes = u.current_bytes;
}

std::vector<TagUsage> TagCounters::Usage() const {
  std::vector<TagUsage> out;
  out.reserve(by_tag_.size() + 1);
  ForEach([&out](const TagUsage& u) { out.push_back(u); });
  std::sort(out.begin(), out.end(),
            [](const TagUsage& a, const TagUsage& b) { return a.tag < b.tag; });
  return out;
}

std::int64_t TagCounters::TotalBytes() const {
  std::int64_t total = 0;
  ForEach([&total](const TagUsage& u) { total += u.current_bytes; });
  return total;
}

std::string QuotedTagName(TagId tag) { return JsonQuoted(TagName(tag)); }

std::string TagUsageToJson(const std::vector<TagUsage>& usage) {
  std::string out = "[";
  for (std::size_t i = 0; i < usage.size(); ++i) {
    const TagUsage& u = usage[i];
    absl::StrAppend(&out, i ? "," : "", "{\"tag\":", u.tag, ",\"name\":", JsonQuoted(TagName(u.tag)),
                    ",\"current_bytes\":", u.current_bytes, ",\"peak_bytes\":", u.peak_bytes,
                    ",\"blocks\":", u.blocks, "}");
  }
  out += "]";
  return out;
}

bool TagCounters::Validate(std::int64_t allocated_bytes, std::string* why) const {
  auto fail = [why](std::string problem) {
    if (why != nullptr) *why = std::move(problem);
    return false;
  };
  std::string problem;
  ForEach([&problem](const TagUsage& u) {
    if (problem.empty() &&
        (u.current_bytes < 0 || u.blocks < 0 || u.peak_bytes < u.current_bytes ||
         (u.blocks == 0) != (u.current_bytes == 0))) {
      problem = absl::StrCat("tag ", u.tag, ": current ", u.current_bytes, " bytes in ",
                             u.blocks, " blocks, peak ", u.peak_bytes);
    }
  });
  if (!problem.empty()) return fail(std::move(problem));
  if (const std::int64_t total = TotalBytes(); total != allocated_bytes) {
    return fail(absl::StrCat("the tags count ", total, " bytes but ", allocated_bytes,
                             " are allocated"));
  }
  return true;
}

}  // namespace ccalloc
