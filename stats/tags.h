// tags.h — what an allocation was made for: a tag per block, counted per tag.
//
// A tag is a small integer naming what the program is doing ("step 3 /
// backward / encoder.layers.2", or whatever the caller chooses). The calling
// thread's current tag is a plain thread_local: setting it takes no lock and
// costs what a store costs, so it can change at every module boundary. The
// allocator copies the current tag onto each block it hands out and counts
// the bytes of live blocks per tag (current and peak), under the lock it
// already holds; a free counts against the block's own tag whichever thread
// frees it.
//
// Names are interned once into ids by a process-wide registry (locked; meant
// for the few calls that create tags, never for the hot path). Id 0 is the
// untagged tag, named "".
#ifndef CCALLOC_STATS_TAGS_H_
#define CCALLOC_STATS_TAGS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace ccalloc {

using TagId = std::uint32_t;
inline constexpr TagId kNoTag = 0;

// The id of `name` (the same id for the same name, for the life of the
// process); kNoTag for "". Thread-safe. Names longer than kMaxTagName bytes
// are cut there (a tag names a phase or a module, not a document).
inline constexpr std::size_t kMaxTagName = 256;
TagId InternTag(std::string_view name);
// The name of `tag`; "" for kNoTag or an id never handed out.
std::string TagName(TagId tag);
// How many ids have been handed out (so the largest is TagCount()).
TagId TagCount();

// The calling thread's current tag, and setting it (returns the previous).
// No lock; any id may be set, also one never interned (it is then counted
// under its number, with an empty name).
TagId CurrentTag();
TagId SetCurrentTag(TagId tag);

// Sets the current tag for a scope, then restores the one before.
class ScopedTag {
 public:
  explicit ScopedTag(TagId tag) : previous_(SetCurrentTag(tag)) {}
  explicit ScopedTag(std::string_view name) : ScopedTag(InternTag(name)) {}
  ~ScopedTag() { SetCurrentTag(previous_); }
  ScopedTag(const ScopedTag&) = delete;
  ScopedTag& operator=(const ScopedTag&) = delete;

 private:
  TagId previous_;
};

// Bytes of live blocks per tag, kept by one allocator under its lock.
struct TagUsage {
  TagId tag = kNoTag;
  std::int64_t current_bytes = 0;
  std::int64_t peak_bytes = 0;
  std::int64_t blocks = 0;  // live blocks now
};

class TagCounters {
 public:
  void Add(TagId tag, std::int64_t bytes) {
    TagUsage& u = Slot(tag);
    u.current_bytes += bytes;
    u.peak_bytes = std::max(u.peak_bytes, u.current_bytes);
    ++u.blocks;
  }
  void Remove(TagId tag, std::int64_t bytes) {
    TagUsage& u = Slot(tag);
    u.current_bytes -= bytes;
    --u.blocks;
  }
  // Peaks back to the current bytes (with the allocator's peak reset).
  void ResetPeaks();
  // Every tag ever counted, by id (tags whose blocks are all gone stay, at
  // zero current bytes, so their peaks remain readable).
  std::vector<TagUsage> Usage() const;
  // Sum of current bytes over all tags.
  std::int64_t TotalBytes() const;
  // Invariants: no negative counts, peaks at least current, and the total
  // equals `allocated_bytes` (the allocator's counter of the same blocks).
  bool Validate(std::int64_t allocated_bytes, std::string* why) const;

 private:
  TagUsage& Slot(TagId tag) {
    if (tag == kNoTag) {
      untagged_seen_ = true;
      return untagged_;
    }
    TagUsage& u = by_tag_[tag];
    u.tag = tag;
    return u;
  }
  // Calls f(usage) for every tag ever counted, the untagged slot first.
  template <typename F>
  void ForEach(F f) const {
    if (untagged_seen_) f(untagged_);
    for (const auto& entry : by_tag_) f(entry.second);
  }

  // Untagged blocks (every block of a program that sets no tag) are counted
  // in a slot of their own rather than the map, so that with tags unused the
  // allocation path pays no hash lookup for them.
  TagUsage untagged_;
  bool untagged_seen_ = false;
  absl::flat_hash_map<TagId, TagUsage> by_tag_;
};

// TagName(tag) as a JSON string literal.
std::string QuotedTagName(TagId tag);
// [{"tag":1,"name":"forward","current_bytes":...,"peak_bytes":...,"blocks":...}, ...]
std::string TagUsageToJson(const std::vector<TagUsage>& usage);

}  // namespace ccalloc

#endif  // CCALLOC_STATS_TAGS_H_
