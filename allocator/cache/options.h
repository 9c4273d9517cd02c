// options.h — every knob of the allocator, and the parser for CCALLOC_CONF.
//
// The syntax and key names are PyTorch's PYTORCH_CUDA_ALLOC_CONF
// ("key:value,key:value"), so a user's settings carry over unchanged. Keys that
// only concern PyTorch's pinned host allocator are accepted and ignored; an
// unknown key or a bad value is an InvalidArgument naming it, never a silent
// default. docs/options.md says when a user would change each key.
#ifndef CCALLOC_ALLOCATOR_OPTIONS_H_
#define CCALLOC_ALLOCATOR_OPTIONS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace ccalloc {

inline constexpr std::size_t kMiB = std::size_t{1} << 20;
inline constexpr std::size_t kGiB = std::size_t{1} << 30;
inline constexpr std::size_t kNoMaxSplit = std::numeric_limits<std::size_t>::max();
// roundup_power2_divisions has one entry per power-of-two interval from 1 MiB up.
inline constexpr int kRoundupIntervals = 16;

struct Options {
  // --- PyTorch keys -------------------------------------------------------
  // Blocks of at least this size are never split (max_split_size_mb).
  std::size_t max_split_size = kNoMaxSplit;
  // Divisions per power-of-two interval (index 0: sizes below 2 MiB, then
  // one per doubling); 0 or 1 means plain 512-byte rounding.
  std::array<std::uint32_t, kRoundupIntervals> roundup_power2_divisions{};
  // Free cached memory early once reserved exceeds this fraction of the
  // memory limit (0 disables it).
  double garbage_collection_threshold = 0.0;
  // Growable virtual-memory segments instead of one device allocation each
  // (on by default in DefaultOptions(); backends without virtual memory fall
  // back to classic segments).
  bool expandable_segments = false;
  // During a stream capture, a block freed while other streams used it
  // (record_stream) may be reused within the same capture once the
  // capture's graph orders all of their work before the reusing stream's
  // next work (graph_capture_record_stream_reuse, PyTorch's key, off by
  // default as in PyTorch). Off, or where the graph cannot show it, the
  // block waits for the capture to end (DeviceAllocator::PromoteOrdered).
  bool graph_capture_record_stream_reuse = false;

  // --- ccalloc keys -------------------------------------------------------
  // Cap on reserved bytes (memory_limit, with units: "24GiB", "512MB").
  std::size_t memory_limit = 0;
  // Cap as a fraction of the device's total memory (PyTorch's
  // per_process_memory_fraction, in [0, 1], where 0 lets nothing be
  // allocated); below 0: none.
  double per_process_memory_fraction = -1.0;
  // Growable segments: the marks, as fractions of the peak allocated, that
  // free mapped memory may reach past it. Up to release_slack new memory is
  // taken for a growth; past it, chunks whose frees are known to have
  // finished are moved from under free holes (an unmap and a map each);
  // past release_slack_max chunks whose work may still be queued move too;
  // past release_slack_hard a trim waits for that work. Each is at least the
  // one before it.
  //
  // These hold while the cache has room: while memory held up to the hard
  // mark stays under 90% of the memory limit (memory_limit,
  // per_process_memory_fraction), or of the device's memory when none is
  // set, and the device has never refused memory. Past that the marks tighten to 0.5%,
  // 0.8% and 0.95% (kTightSlack in growable_segments.cc): reserved within
  // 1% of the peak, at the cost of moves in steady steps. Room bought with
  // memory: a GNN on random graph sizes trained at 1.215x expandable_
  // segments' step time with the tight marks (53.6 driver calls a step) and
  // at 0.982x with these (7.2), holding 1.077 of its peak instead of 1.008
  // (docs/steady_state.md). Set them to the tight values to hold memory
  // tight everywhere.
  double release_slack = 0.05;
  double release_slack_max = 0.08;
  double release_slack_hard = 0.10;
  // Growable segments (hold_reserved): memory held once since the cache was
  // last emptied (empty_cache, the OOM ladder) may be taken again without
  // moving any, even where the marks above would move it: the peak reserved
  // does not rise, and a workload whose live bytes swing below its peak
  // (churn, the phases of a step) maps nothing for it. False: the marks
  // alone decide, and reserved follows allocated down between peaks at
  // the cost of a move for each give and take (replayed on 2026-11-27: the
  // UNet's repeated shapes map 37 chunks instead of 358 at a GPU lag of 200
  // events, but the checkpointed LM 5-10% more and two cycle traces rise to
  // 1.0080-1.0088).
  bool hold_reserved = true;
  // Growable segments (mapped_fit): a request whose best-fitting free block
  // would need pages mapped is placed instead where free memory is already
  // mapped in a larger free block of its stream, so no move is made for it.
  // It costs memory where memory is tight: such placements cut into mapped
  // chunks that the best fit would have left whole, and the free rest of a
  // chunk a live block covers in part cannot move at the next peak.
  //   kAlways (mapped_fit:True): on every such request, on the smallest
  //     mapped stretch. The checkpointed LM then trains at expandable_
  //     segments' speed (H200: 1.007x and 1.000x against 1.128x and 1.033x,
  //     153 chunks mapped a step instead of ~262), but two streams peak at
  //     1.013 reserved/allocated (bench/results/h200_mapped_fit_ab.json).
  //   kWhenSlack (mapped_fit:auto, the default): as kAlways while the
  //     cache has room (the loose marks of release_slack hold: memory it
  //     holds costs nobody anything); near the end of its memory only while
  //     it holds clearly more than the high mark allows above the peak allocated
  //     (memory held once, hold_reserved: GrowableSegments::HoldsSlack), so
  //     the memory it costs is memory the cache holds anyway, and on the
  //     first larger free block that has such a stretch (a bounded search).
  //     A training loop's peaks keep the cache within the marks, and there
  //     it is the best fit; a churn whose live bytes swing below the peak
  //     maps half as often (H200, churn W=1000: 410-424 host ns an
  //     operation against 473-510 in the same call,
  //     bench/results/h200_churn_mapped_fit_when_slack.json). And, whatever
  //     the cache holds, for a request whose best fit would map at least
  //     64 MiB (DeviceAllocator::WantsHeldFit says why).
  //   kNever (mapped_fit:False): best fit by size alone.
  enum class MappedFit : std::uint8_t { kNever, kWhenSlack, kAlways };
  MappedFit mapped_fit = MappedFit::kWhenSlack;
  // Growable segments (background_unmap): unmaps and releases whose queued
  // work has finished are made on a thread of their own
  // (segments/unmap_worker.h), not on the thread allocating, which in
  // training is the one launching kernels. False: made inline, as they come.
  bool background_unmap = true;
  // Growable segments (keep_old_mappings): a chunk moved away stays mapped
  // at its old pages (no memory counted there, no block handed out over
  // them) instead of being unmapped, and a block that later wants those
  // pages takes the memory back without a driver call when it is free
  // where it went: a training step that moves memory one way and the next
  // step back costs no calls for either after the first. Such a mapping is
  // unmapped only when a block wants its pages and cannot take it back, at
  // a trim, or before a capture. False: unmapped once its work is done.
  bool keep_old_mappings = true;
  // Growable segments (cross_stream_reuse): a request whose own stream's
  // memory would need pages mapped takes instead the start of a free block
  // of another stream's segment that is mapped throughout, so memory passes
  // between streams with no driver call: two streams whose demands trade
  // places from step to step (two towers of varying size) stop moving their
  // difference through the driver, chunk by chunk. Nothing is lent during a
  // capture, nor from or to a private pool. Memory whose lender's work may
  // still run is lent too, ordered on the device (DeviceAllocator::Borrow):
  // no host thread waits.
  //   kWhenMoving (cross_stream_reuse:auto, the default): only where the
  //     cache would otherwise move memory from under holes to map it (its
  //     free memory past the low mark, release_slack: a new peak, or the
  //     demand passing from one stream to the other), not where it would
  //     take new memory. So a training loop's steady steps lend nothing and
  //     add no ordering between its streams; the steps that would move lend
  //     instead. On an H100, side by side with expandable_segments (the
  //     two-tower workload, 14 rounds): 13.5 chunks mapped a step instead
  //     of 35.2, 1.24 ms of placements instead of 4.54, 82 loans and 134
  //     device-side waits a step, step time 0.988x expandable_segments'
  //     against kNever's 1.023x in the same rounds, memory 1.0071
  //     (bench/results/h100_cross_stream_reuse_auto_ab.json); in a
  //     second call, with an A/A control, 1.016x against the control's
  //     1.000x (h100_cross_stream_reuse_auto_aa.json): 1.003x
  //     (0.983..1.024) over the 29 rounds, where kNever had read 1.032x
  //     (1.018..1.047) over 47. In the replay of the two 60-step two-stream
  //     traces it halves the launching thread's modelled driver time at
  //     every GPU lag from 0 to 500 (5.0 -> 2.1-2.8 ms a step at 200), at
  //     1.0047-1.0107 reserved/allocated (kNever: 1.0063-1.0093).
  //   kAlways (True): whenever the own stream's memory would need pages.
  //     Lending on every such request orders the streams ~3x as often: 240
  //     loans and 387 device-side waits a step, placements 0.88 ms a step,
  //     but 1.027x expandable_segments' step time against the old default's
  //     1.017x (bench/results/h100_cross_stream_reuse_always_2c606e3.json).
  //   kNever (False): each stream's requests are served from its own
  //     segments only (PyTorch's contract), memory passing between streams
  //     only by moves (an unmap and a map a chunk).
  enum class CrossStreamReuse : std::uint8_t { kNever, kWhenMoving, kAlways };
  CrossStreamReuse cross_stream_reuse = CrossStreamReuse::kWhenMoving;
  // Growable segments: the largest physical chunk mapped at once
  // (max_map_chunk_mb). The driver charges per handle (a map's
  // cuMemSetAccess, 35-44 us on an H100, bench/driver_costs/README.md), and
  // kernels stream 16 MiB handles at 0.990 of one handle's bandwidth
  // against 0.969 for 4 MiB; smaller chunks pin less, since a live block
  // covering part of a chunk keeps all of it mapped (the checkpointed LM:
  // 1.0161 reserved/allocated with 16 MiB chunks against 1.0087 with 8 MiB
  // on an H100, tight marks: bench/results/h100_max_map_chunk_sizes.json).
  // Far from the end of memory, 32 MiB; with room but the peak's hard mark
  // past a quarter of the memory, at most 16 MiB; near the end at most
  // 4 MiB (GrowableSegments::ChunkCapAt). 32 MiB far from the end halves
  // the handles a large block moves: the checkpointed LM's replayed driver
  // time after warm-up fell from 2.15 to 0.84 ms a step, its peak 1.049 ->
  // 1.048 (docs/steady_state.md). What chunks mapped while there was room
  // still pin near the end: replayed on a card 1.5% larger than each
  // trace's peak, two of 21 traces were refused memory that 4 MiB chunks
  // throughout would have found; on one 3% larger, none.
  std::size_t max_map_chunk = std::size_t{32} << 20;

  std::string ToString() const;
};

// ccalloc's default: the best policy it has.
Options DefaultOptions();
// A faithful model of PyTorch's native caching allocator with default
// settings; the baseline every other policy is judged against.
Options PytorchNativeOptions();

// PyTorch's keys that torch.cuda.memory._set_allocator_settings() changes
// while a program runs (its allocator reads them at every request):
// max_split_size, roundup_power2_divisions, garbage_collection_threshold,
// graph_capture_record_stream_reuse, copied from `from` into `to`; the rest
// of `to` stays.
void CopyRuntimeKeys(const Options& from, Options& to);

// Parses `conf` on top of `base`. Empty `conf` returns `base`.
absl::StatusOr<Options> ParseOptions(absl::string_view conf,
                                     const Options& base = DefaultOptions());
// Parses the CCALLOC_CONF environment variable (unset: `base`).
absl::StatusOr<Options> OptionsFromEnvironment(
    const Options& base = DefaultOptions());

// "24GiB", "512MB", "1.5G", "1048576" → bytes (binary units).
absl::StatusOr<std::size_t> ParseByteSize(absl::string_view text);

}  // namespace ccalloc

#endif  // CCALLOC_ALLOCATOR_OPTIONS_H_
