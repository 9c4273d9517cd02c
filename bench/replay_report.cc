// replay_report.cc — the text reports of replay.h: the tables of one trace
// (FormatTable, FormatDriverTable, FormatComparison), the plain lines a
// newcomer reads first (FormatPlainSummary, and FormatTraceReport around
// them), and the views over all traces (FormatOverview, FormatSummary). They
// read ReplayResults; nothing here replays.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "allocator/cache/options.h"
#include "bench/driver_costs.h"
#include "bench/replay.h"
#include "bench/replay_text.h"

namespace ccalloc::replay {

using internal::CapacityText;
using internal::Grouped;
using internal::kNative;

namespace {

std::string Percent(double f) { return absl::StrFormat("%.1f%%", 100.0 * f); }

// A plain text table: first column left-aligned, the rest right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) {
    row.resize(rows_[0].size());
    rows_.push_back(std::move(row));
  }
  void AddRule() { rules_.push_back(rows_.size()); }
  std::string Render() const {
    std::vector<std::size_t> width(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    std::size_t total = 0;
    for (std::size_t w : width) total += w + 2;
    std::string out;
    auto rule = [&] { out += std::string(total - 2, '-') + "\n"; };
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      if (std::find(rules_.begin(), rules_.end(), r) != rules_.end()) rule();
      std::string line;
      for (std::size_t c = 0; c < rows_[r].size(); ++c) {
        const std::string& cell = rows_[r][c];
        const std::string pad(width[c] - cell.size(), ' ');
        line += c == 0 ? cell + pad : pad + cell;
        if (c + 1 < rows_[r].size()) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      if (r == 0) rule();
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> rules_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------

std::string FormatTable(const std::vector<ReplayResult>& results) {
  TextTable table({"policy", "peak alloc MiB", "peak rsv MiB", "ratio", "page floor",
                   "chunk floor", "frag run", "frag@peak",
                   "frag@end", "dev allocs", "dev frees", "maps", "unmaps", "(un)maps/1k",
                   "retries", "free-alls", "OOMs", "ns/op"});
  for (const ReplayResult& r : results) {
    table.Add({r.policy, Grouped(ToMiB(r.peak_allocated_bytes)),
               Grouped(ToMiB(r.peak_reserved_bytes)), absl::StrFormat("%.3f", r.ratio),
               r.page_floor_ratio > 0 ? absl::StrFormat("%.3f", r.page_floor_ratio) : "-",
               r.page_floor_ratio > 0
                   ? absl::StrFormat("%.3f", static_cast<double>(r.chunk_floor_bytes) /
                                                 static_cast<double>(r.peak_allocated_bytes))
                   : "-",
               Percent(r.run_fragmentation), Percent(r.fragmentation_at_peak),
               Percent(r.fragmentation_at_end), Grouped(r.device_allocs), Grouped(r.device_frees),
               Grouped(r.maps), Grouped(r.unmaps),
               absl::StrFormat("%.1f", r.maps_per_1k_allocs + r.unmaps_per_1k_allocs),
               Grouped(r.retries), Grouped(r.free_alls), Grouped(r.ooms),
               r.ns_per_op_passes.empty() ? "-" : absl::StrFormat("%.0f", r.ns_per_op)});
  }
  if (!results.empty()) {
    std::vector<ReferenceRow> refs = ReferenceRows(results[0].trace);
    if (!refs.empty()) table.AddRule();
    for (const ReferenceRow& ref : refs) {
      const double ratio =
          static_cast<double>(ref.peak_reserved_mib) / static_cast<double>(ref.peak_allocated_mib);
      table.Add({ref.label, Grouped(ref.peak_allocated_mib), Grouped(ref.peak_reserved_mib),
                 absl::StrFormat("%.3f", ratio), "-", "-", Percent(1.0 - 1.0 / ratio), "-", "-",
                 "-", "-",
                 "-", "-", "-", "-", "-", "-", "-"});
    }
  }
  std::string out = table.Render();
  // Blocks freed while another stream's work on them may still run cannot
  // be reused yet: say so where they raised the peak (ReplayResult).
  for (const ReplayResult& r : results) {
    if (r.peak_active_bytes * 1000 > r.peak_allocated_bytes * 1001) {
      absl::StrAppend(
          &out, r.policy, ": peak active ", Grouped(ToMiB(r.peak_active_bytes)),
          " MiB (allocated, and freed blocks it still counted as awaiting another "
          "stream's work, which the stream contract keeps from reuse); reserved / active ",
          absl::StrFormat("%.3f", static_cast<double>(r.peak_reserved_bytes) /
                                      static_cast<double>(r.peak_active_bytes)),
          "\n");
    }
  }
  if (!results.empty() && !ReferenceRows(results[0].trace).empty()) {
    out +=
        "* PyTorch 2.11's own allocators on the run this trace was recorded from (one H100),\n"
        "  as published in traces/README.md: reference data, not replayed.\n";
  }
  return out;
}

std::string FormatDriverTable(const std::vector<ReplayResult>& results) {
  using C = DriverCall;
  auto n = [](const ReplayResult& r, C c) { return Grouped(r.driver_calls[static_cast<int>(c)]); };
  // Single and batched calls of a kind share a column (they are priced apart).
  auto n2 = [](const ReplayResult& r, C c, C run) {
    return Grouped(r.driver_calls[static_cast<int>(c)] + r.driver_calls[static_cast<int>(run)]);
  };
  TextTable table({"policy", "dev alloc", "dev free", "create", "map", "set acc", "unmap",
                   "release", "reserve", "free rng", "ev rec", "ev query", "ev sync", "dev sync",
                   "stream waits", "waited ev", "calls", "calls/step", "driver ms", "driver ms/step",
                   "bg calls", "caller ms/step", "unpriced"});
  for (const ReplayResult& r : results) {
    const bool per_step = r.steps > 0;
    table.Add({r.policy, n(r, C::kDeviceAlloc), n(r, C::kDeviceFree), n(r, C::kCreate),
               n2(r, C::kMap, C::kMapRun), n(r, C::kSetAccess), n2(r, C::kUnmap, C::kUnmapRun),
               n(r, C::kRelease),
               n(r, C::kReserve), n(r, C::kFreeRange), n(r, C::kEventRecord),
               n(r, C::kEventQuery), n(r, C::kEventSynchronize), n(r, C::kDeviceSynchronize),
               Grouped(r.stream_waits), Grouped(static_cast<std::int64_t>(r.waited_events)),
               Grouped(r.driver_calls_total),
               per_step ? absl::StrFormat("%.1f", r.driver_calls_per_step()) : "-",
               r.driver_time_modelled ? absl::StrFormat("%.1f", r.modelled_driver_us / 1000.0)
                                      : "-",
               per_step && r.driver_time_modelled
                   ? absl::StrFormat("%.2f", r.modelled_driver_ms_per_step())
                   : "-",
               Grouped(r.background_driver_calls),
               per_step && r.driver_time_modelled
                   ? absl::StrFormat("%.2f", r.foreground_driver_ms_per_step())
                   : "-",
               r.driver_time_modelled ? Grouped(r.unpriced_driver_calls) : "-"});
  }
  std::string out = table.Render();
  if (results.empty()) return out;
  const ReplayResult& first = results[0];
  if (first.driver_time_modelled) {
    absl::StrAppend(&out, "driver ms = sum over calls of the cost per call from ", first.driver_costs_path,
                    " (", first.driver_costs_device,
                    "); unpriced calls (no entry in that table) add nothing to it");
    std::vector<std::string> unpriced;
    for (const ReplayResult& r : results) {
      if (!r.unpriced_driver_calls_text.empty()) {
        unpriced.push_back(absl::StrCat(r.policy, ": ", r.unpriced_driver_calls_text));
      }
    }
    if (!unpriced.empty()) absl::StrAppend(&out, " (", absl::StrJoin(unpriced, "; "), ")");
    out += ".\n";
  } else {
    out += "driver ms: not modelled (no cost table).\n";
  }
  if (first.steps > 0) {
    absl::StrAppend(&out, "per step = total / ", first.steps, " steps (",
                    first.steps_source == "given" ? "--steps"
                                                  : absl::StrCat("as ", first.steps_source,
                                                                 " gives them"),
                    "; the trace has no step markers).\n");
  } else {
    out += "per step: not known for this trace (give --steps N).\n";
  }
  out +=
      "bg calls = calls made off the replaying thread (the unmap worker, background_unmap); caller "
      "ms/step = modelled time of the rest. The split follows the replay's pace, not a GPU's: the "
      "worker waits for a pause in the caller's own calls, which a replay rarely makes.\n";
  return out;
}

std::string FormatSummary(const std::vector<ReplayResult>& results) {
  std::vector<std::string> policies;
  std::set<std::string> traces;
  for (const ReplayResult& r : results) {
    traces.insert(r.trace);
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end()) {
      policies.push_back(r.policy);
    }
  }
  std::vector<std::string> worst, driver;
  for (const std::string& p : policies) {
    const ReplayResult* w = nullptr;
    const ReplayResult* d = nullptr;
    for (const ReplayResult& r : results) {
      if (r.policy != p) continue;
      if (w == nullptr || r.ratio > w->ratio) w = &r;
      if (r.steps > 0 && r.driver_time_modelled &&
          (d == nullptr || r.modelled_driver_ms_per_step() > d->modelled_driver_ms_per_step())) {
        d = &r;
      }
    }
    worst.push_back(absl::StrFormat("%s %.4f (%s%s)", p, w->ratio, w->trace,
                                    w->fits ? "" : ", did not fit"));
    if (d != nullptr) {
      driver.push_back(absl::StrFormat(
          "%s %.2f (%s; %.2f of it on the allocating thread%s)", p,
          d->modelled_driver_ms_per_step(), d->trace, d->foreground_driver_ms_per_step(),
          d->unpriced_driver_calls == 0
              ? ""
              : absl::StrCat("; ", d->unpriced_driver_calls, " of ", d->driver_calls_total,
                             " calls unpriced, not counted")));
    }
  }
  std::string out = absl::StrCat("worst ratio over all traces (", traces.size(), "): ",
                                 absl::StrJoin(worst, ", "), "\n");
  if (!driver.empty()) {
    absl::StrAppend(&out, "most modelled driver ms per step over all traces: ",
                    absl::StrJoin(driver, ", "), "\n");
  }
  return out;
}

std::string FormatComparison(const std::vector<ReplayResult>& results) {
  std::string out;
  const ReplayResult* native = nullptr;
  for (const ReplayResult& r : results) {
    if (r.policy == kNative) native = &r;
  }
  std::int64_t measured_native = -1;
  std::int64_t measured_expandable = -1;
  if (!results.empty()) {
    std::vector<ReferenceRow> refs = ReferenceRows(results[0].trace);
    if (refs.size() >= 2) {
      measured_native = refs[0].peak_reserved_mib;
      measured_expandable = refs[1].peak_reserved_mib;
    }
  }
  for (const ReplayResult& r : results) {
    const std::int64_t mib = ToMiB(r.peak_reserved_bytes);
    if (&r == native) {
      // Only a replay that fitted is comparable with PyTorch's unconstrained run.
      if (measured_native >= 0 && r.fits) {
        absl::StrAppend(&out, r.policy, " vs PyTorch native (measured): ", Grouped(mib), " vs ",
                        Grouped(measured_native), " MiB peak reserved: ",
                        mib == measured_native
                            ? "identical"
                            : absl::StrCat("differs by ", Grouped(mib - measured_native), " MiB"),
                        "\n");
      }
      continue;
    }
    if (native != nullptr) {
      const std::int64_t base = ToMiB(native->peak_reserved_bytes);
      const std::int64_t saved = base - mib;
      absl::StrAppend(
          &out, r.policy, " vs ", native->policy, ": peak reserved ", Grouped(mib), " vs ",
          Grouped(base), " MiB (", saved >= 0 ? "saves " : "costs ",
          Grouped(saved >= 0 ? saved : -saved), " MiB, ",
          absl::StrFormat("%.1f%%", base > 0
                                        ? 100.0 * static_cast<double>(saved >= 0 ? saved : -saved) /
                                              static_cast<double>(base)
                                        : 0.0),
          saved >= 0 ? " less" : " more", "); ratio ",
          absl::StrFormat("%.3f vs %.3f", r.ratio, native->ratio));
      if (!r.ns_per_op_passes.empty() && !native->ns_per_op_passes.empty()) {
        absl::StrAppend(
            &out, absl::StrFormat("; host %.0f vs %.0f ns/op", r.ns_per_op, native->ns_per_op));
      }
      out += "\n";
    }
    if (measured_expandable >= 0 && r.fits) {
      absl::StrAppend(&out, r.policy, " vs PyTorch expandable_segments (measured): ", Grouped(mib),
                      " vs ", Grouped(measured_expandable), " MiB (",
                      mib <= measured_expandable ? "saves " : "costs ",
                      Grouped(mib <= measured_expandable ? measured_expandable - mib
                                                         : mib - measured_expandable),
                      " MiB)\n");
    }
  }
  for (const ReplayResult& r : results) {
    if (r.fits) {
      absl::StrAppend(&out, r.policy, ": fits in ", CapacityText(r), " (", r.retries, " retries, ",
                      r.free_alls, " free-alls)\n");
    } else {
      std::string why = r.first_oom_message;
      if (why.size() > 240) why = why.substr(0, 240) + "...";
      absl::StrAppend(&out, r.policy, ": does NOT fit in ", CapacityText(r), ": ", r.ooms,
                      " allocations refused and skipped, the first at event ", r.first_oom_event,
                      " (", r.retries, " retries, ", r.free_alls, " free-alls); first error: ", why,
                      "\n");
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The plain report: what a newcomer reads first
// ---------------------------------------------------------------------------

namespace {

// "PyTorch's allocator" for pytorch-native (the model of PyTorch's native
// caching allocator); the policy's own name otherwise.
std::string PlainName(const ReplayResult& r) {
  return r.policy == kNative ? "PyTorch's allocator" : r.policy;
}

// The same in a list of figures: "PyTorch 0.23 ms, ccalloc 0.91 ms".
std::string ShortName(const ReplayResult& r) { return r.policy == kNative ? "PyTorch" : r.policy; }

// The first mention of a custom policy names its settings too.
std::string PlainNameFirst(const ReplayResult& r) {
  return r.conf.empty() ? PlainName(r) : absl::StrCat(r.policy, " (", r.conf, ")");
}

// 54210000000 -> "50.5 GiB", 8388608 -> "8.0 MiB" (of the magnitude).
std::string PlainSize(std::int64_t bytes) {
  const double v = std::fabs(static_cast<double>(bytes));
  if (v >= static_cast<double>(kGiB)) return absl::StrFormat("%.1f GiB", v / kGiB);
  if (v >= static_cast<double>(kMiB)) return absl::StrFormat("%.1f MiB", v / kMiB);
  if (v >= 1024.0) return absl::StrFormat("%.1f KiB", v / 1024.0);
  return absl::StrFormat("%.0f B", v);
}

// 0.8964 -> "0.90", 23.51 -> "23.5", 1783.2 -> "1,783".
std::string PlainMs(double ms) {
  if (ms < 10) return absl::StrFormat("%.2f", ms);
  if (ms < 100) return absl::StrFormat("%.1f", ms);
  return Grouped(static_cast<std::int64_t>(std::llround(ms)));
}

// The card or the limit the replay ran under.
std::string PlainWhere(const ReplayResult& r) {
  if (r.backend == "sim")
    return absl::StrCat("the simulated ", PlainSize(r.capacity_bytes), " card");
  if (r.capacity_bytes > 0) {
    return absl::StrCat(r.backend, " under its ", PlainSize(r.capacity_bytes), " limit");
  }
  return r.backend;
}

// Modelled driver time on the allocating thread: a step after warm-up (the
// trace's second half) with two steps or more, the one step with one, the
// whole trace without steps.
double CallerDriverMs(const ReplayResult& r) {
  if (r.steps > 1) return r.late_foreground_driver_ms_per_step();
  if (r.steps == 1) return r.foreground_driver_ms_per_step();
  return (r.modelled_driver_us - r.background_driver_us) / 1000.0;
}

// "34%", "<1%" of `base` (bytes), by magnitude.
std::string PlainShare(std::int64_t d, std::int64_t base) {
  const double pct =
      base > 0 ? 100.0 * std::fabs(static_cast<double>(d)) / static_cast<double>(base) : 0.0;
  if (d != 0 && pct < 0.5) return "<1%";
  return absl::StrFormat("%.0f%%", pct);
}

// ", 17.4 GiB less (34%)" against `base`; with `name_base`, ", 17.4 GiB less
// than PyTorch's allocator (34%)".
std::string PlainAgainst(const ReplayResult& r, const ReplayResult& base, bool name_base) {
  const std::int64_t d = base.peak_reserved_bytes - r.peak_reserved_bytes;
  const std::string than = name_base ? absl::StrCat(" than ", PlainName(base)) : "";
  if (d == 0) return name_base ? absl::StrCat(", as much as ", PlainName(base)) : ", the same";
  return absl::StrCat(", ", PlainSize(d), d > 0 ? " less" : " more", than, " (",
                      PlainShare(d, base.peak_reserved_bytes), ")");
}

const ReplayResult* FindPolicy(const std::vector<ReplayResult>& results, absl::string_view p) {
  for (const ReplayResult& r : results) {
    if (r.policy == p) return &r;
  }
  return nullptr;
}

}  // namespace

std::string FormatPlainSummary(const std::vector<ReplayResult>& results) {
  if (results.empty()) return "";
  const ReplayResult* native = FindPolicy(results, kNative);
  std::vector<const ReplayResult*> others;
  for (const ReplayResult& r : results) {
    if (&r != native) others.push_back(&r);
  }
  const ReplayResult& first = results[0];
  auto held = [](const ReplayResult& r) {
    return absl::StrFormat("%s (%.3fx)", PlainSize(r.peak_reserved_bytes), r.ratio);
  };

  // What each would hold at its peak, against PyTorch's allocator.
  const ReplayResult& lead = native != nullptr ? *native : *others[0];
  std::string out = absl::StrFormat(
      "%s: %s would hold %s at its peak for %s in use (%.3fx)", first.trace, PlainNameFirst(lead),
      PlainSize(lead.peak_reserved_bytes), PlainSize(lead.peak_allocated_bytes), lead.ratio);
  for (std::size_t k = 0; k < others.size(); ++k) {
    const ReplayResult& r = *others[k];
    if (&r == &lead) continue;
    const bool in_sentence = k == 0 || (native == nullptr && k == 1);
    const std::string vs = native != nullptr ? PlainAgainst(r, *native, !in_sentence) : "";
    if (in_sentence) {
      absl::StrAppend(&out, "; ", PlainNameFirst(r), " holds ", held(r), vs);
    } else {
      absl::StrAppend(&out, ".\n  ", PlainNameFirst(r), " would hold ", held(r), vs);
    }
  }
  out += ".\n";

  // Out of memory, plainly.
  for (const ReplayResult& r : results) {
    if (r.fits) continue;
    absl::StrAppend(&out, "  ", PlainName(r), " ran OUT OF MEMORY on ", PlainWhere(r), ": ",
                    Grouped(r.ooms), r.ooms == 1 ? " allocation" : " allocations",
                    " refused (the first at event ", Grouped(r.first_oom_event),
                    ") and skipped, so its figures leave ", r.ooms == 1 ? "that block" : "them",
                    " out.\n");
  }

  // What it costs a step: modelled driver time on the allocating thread.
  std::vector<std::string> parts;
  if (first.driver_time_modelled) {
    std::vector<std::string> unpriced;
    for (const ReplayResult& r : results) {
      parts.push_back(absl::StrCat(ShortName(r), " ", PlainMs(CallerDriverMs(r)), " ms"));
      if (r.unpriced_driver_calls > 0) {
        unpriced.push_back(absl::StrCat(ShortName(r), "'s ", Grouped(r.unpriced_driver_calls)));
      }
    }
    const std::string costs = absl::StrCat(
        "modelled, ", first.driver_costs_device, " costs",
        unpriced.empty()
            ? ""
            : absl::StrCat("; ", absl::StrJoin(unpriced, ", "), " unpriced calls add nothing"));
    if (first.steps > 1) {
      absl::StrAppend(&out, "  Driver time a step after warm-up, on the allocating thread: ",
                      absl::StrJoin(parts, ", "), " (", costs, "; the last half of ", first.steps,
                      " steps).\n");
    } else if (first.steps == 1) {
      absl::StrAppend(&out, "  Driver time in its one step, on the allocating thread: ",
                      absl::StrJoin(parts, ", "), " (", costs, ").\n");
    } else {
      absl::StrAppend(&out, "  Driver time over the whole trace, on the allocating thread: ",
                      absl::StrJoin(parts, ", "), " (", costs,
                      "; steps unknown: --steps N gives it per step).\n");
    }
  } else {
    for (const ReplayResult& r : results) {
      parts.push_back(absl::StrCat(ShortName(r), " ", Grouped(r.driver_calls_total)));
    }
    absl::StrAppend(&out, "  Driver calls over the whole trace: ", absl::StrJoin(parts, ", "),
                    " (their time is not modelled: no cost table).\n");
  }

  // Host time per call, when timed.
  bool timed = true;
  for (const ReplayResult& r : results) timed = timed && !r.ns_per_op_passes.empty();
  if (timed) {
    parts.clear();
    for (const ReplayResult& r : results) {
      parts.push_back(absl::StrFormat("%s %.0f ns", ShortName(r), r.ns_per_op));
    }
    const std::size_t passes = first.ns_per_op_passes.size();
    absl::StrAppend(&out, "  Host time per allocate or free: ", absl::StrJoin(parts, ", "),
                    " (measured on this machine, ",
                    passes == 1 ? "one replay" : absl::StrCat("the median of ", passes, " replays"),
                    ").\n");
  }

  // PyTorch's own allocators on the recorded run, where published.
  const std::vector<ReferenceRow> refs = ReferenceRows(first.trace);
  if (!refs.empty()) {
    parts.clear();
    for (const ReferenceRow& ref : refs) {
      std::string label = ref.label;
      if (absl::StartsWith(label, "PyTorch ")) label = label.substr(8);
      if (absl::EndsWith(label, " *")) label.resize(label.size() - 2);
      parts.push_back(absl::StrCat(
          label, " ", PlainSize(ref.peak_reserved_mib * static_cast<std::int64_t>(kMiB))));
    }
    absl::StrAppend(&out,
                    "  PyTorch 2.11 itself on the recorded run (one H100; traces/README.md): ",
                    absl::StrJoin(parts, ", "), ".\n");
  }
  return out;
}

std::string FormatTraceReport(const std::vector<ReplayResult>& results, bool verbose) {
  // (The verbose part as ccalloc-replay printed it before the plain lines.)
  std::string out = FormatPlainSummary(results);
  if (verbose) {
    absl::StrAppend(&out, "\n", FormatTable(results), FormatDriverTable(results),
                    FormatComparison(results), "\n");
  }
  for (const ReplayResult& r : results) {
    if (!r.layout.empty()) absl::StrAppend(&out, r.policy, ": ", r.layout, "\n");
  }
  return verbose ? out : out + "\n";
}

std::string FormatOverview(const std::vector<ReplayResult>& results) {
  if (results.empty()) return "";
  std::vector<std::string> traces, policies;
  std::int64_t largest = 0;
  bool modelled = false;
  std::string device;
  for (const ReplayResult& r : results) {
    if (std::find(traces.begin(), traces.end(), r.trace) == traces.end()) traces.push_back(r.trace);
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end()) {
      policies.push_back(r.policy);
    }
    largest = std::max(largest, r.peak_reserved_bytes);
    if (r.driver_time_modelled && !modelled) {
      modelled = true;
      device = r.driver_costs_device;
    }
  }
  const bool has_native = std::find(policies.begin(), policies.end(), kNative) != policies.end();
  std::vector<std::string> others;
  for (const std::string& p : policies) {
    if (p != kNative) others.push_back(p);
  }
  const bool gib = largest >= static_cast<std::int64_t>(kGiB);
  const double unit = gib ? static_cast<double>(kGiB) : static_cast<double>(kMiB);
  const std::string unit_name = gib ? "GiB" : "MiB";
  auto amount = [&](std::int64_t bytes) {
    const double v = static_cast<double>(bytes) / unit;
    return gib ? absl::StrFormat("%.2f", v) : absl::StrFormat("%.1f", v);
  };
  auto find = [&](const std::string& trace, const std::string& policy) -> const ReplayResult* {
    for (const ReplayResult& r : results) {
      if (r.trace == trace && r.policy == policy) return &r;
    }
    return nullptr;
  };
  std::vector<std::string> header = {"trace"};
  if (has_native) {
    header.insert(header.end(), {absl::StrCat("PyTorch ", unit_name), "ratio", "ms/step"});
  }
  for (const std::string& p : others) {
    header.insert(header.end(), {absl::StrCat(p, " ", unit_name), "ratio", "ms/step"});
    if (has_native) header.push_back("saved");
  }
  TextTable table(header);
  bool any_oom = false, any_total = false;
  auto peak_cells = [&](const ReplayResult* r, std::vector<std::string>* row) {
    if (r == nullptr) {
      row->insert(row->end(), {"-", "-"});
      return;
    }
    any_oom = any_oom || !r->fits;
    row->push_back(absl::StrCat(amount(r->peak_reserved_bytes), r->fits ? "" : " OOM"));
    row->push_back(absl::StrFormat("%.3f", r->ratio));
  };
  auto driver_cell = [&](const ReplayResult* r) -> std::string {
    if (r == nullptr || !r->driver_time_modelled) return "-";
    if (r->steps == 0) {
      any_total = true;
      return absl::StrCat(PlainMs(CallerDriverMs(*r)), " total");
    }
    return PlainMs(CallerDriverMs(*r));
  };
  for (const std::string& t : traces) {
    std::vector<std::string> row = {t};
    const ReplayResult* native = has_native ? find(t, std::string(kNative)) : nullptr;
    if (has_native) {
      peak_cells(native, &row);
      row.push_back(driver_cell(native));
    }
    for (const std::string& p : others) {
      const ReplayResult* r = find(t, p);
      peak_cells(r, &row);
      row.push_back(driver_cell(r));
      if (has_native) {
        if (r == nullptr || native == nullptr) {
          row.push_back("-");
        } else {
          // Negative: it held more than PyTorch.
          const std::int64_t d = native->peak_reserved_bytes - r->peak_reserved_bytes;
          const std::string size = amount(d < 0 ? -d : d);
          const bool minus = d < 0 && size.find_first_not_of("0.") != std::string::npos;
          const std::string share = PlainShare(d, native->peak_reserved_bytes);
          row.push_back(absl::StrCat(minus ? "-" : "", size, " (",
                                     minus && share != "<1%" ? "-" : "", share, ")"));
        }
      }
    }
    table.Add(std::move(row));
  }
  std::string out = table.Render();

  // The worst case of each policy over the traces.
  std::vector<std::string> worst;
  for (const std::string& p : policies) {
    const ReplayResult *w = nullptr, *least = nullptr, *costly = nullptr;
    std::vector<std::string> ooms;
    double least_saved = 0;
    for (const ReplayResult& r : results) {
      if (r.policy != p) continue;
      if (w == nullptr || r.ratio > w->ratio) w = &r;
      if (!r.fits) ooms.push_back(r.trace);
      if (r.driver_time_modelled && r.steps > 0 &&
          (costly == nullptr || CallerDriverMs(r) > CallerDriverMs(*costly))) {
        costly = &r;
      }
      // (Only where both fitted: a refused block is memory neither held.)
      if (p != kNative && has_native && r.fits) {
        if (const ReplayResult* n = find(r.trace, std::string(kNative)); n != nullptr && n->fits) {
          const double saved = static_cast<double>(n->peak_reserved_bytes - r.peak_reserved_bytes);
          if (least == nullptr || saved < least_saved) {
            least = &r;
            least_saved = saved;
          }
        }
      }
    }
    std::string line =
        absl::StrFormat("%s holds at most %.4fx its peak in use (%s)",
                        p == kNative ? "PyTorch's allocator" : p, w->ratio, w->trace);
    if (least != nullptr) {
      const ReplayResult& n = *find(least->trace, std::string(kNative));
      const auto d = static_cast<std::int64_t>(least_saved);
      absl::StrAppend(&line,
                      d > 0    ? ", saves least on "
                      : d == 0 ? ", saves nothing on "
                               : ", holds more than PyTorch's allocator on ",
                      least->trace);
      if (d != 0) {
        absl::StrAppend(&line, " (", PlainSize(d), ", ", PlainShare(d, n.peak_reserved_bytes), ")");
      }
    }
    if (costly != nullptr && p != kNative) {
      absl::StrAppend(&line, ", spends most driver time on ", costly->trace, " (",
                      PlainMs(CallerDriverMs(*costly)), " ms a step)");
    }
    if (!ooms.empty()) {
      absl::StrAppend(&line, ", ran out of memory on ", absl::StrJoin(ooms, ", "));
    }
    worst.push_back(line);
  }
  absl::StrAppend(&out, "Worst case over ", traces.size(),
                  traces.size() == 1 ? " trace:" : " traces:");
  for (const std::string& line : worst) absl::StrAppend(&out, "\n  ", line, ".");
  out += "\n";

  // What the columns mean.
  absl::StrAppend(&out, unit_name,
                  " = peak reserved, the memory held from the device; ratio = peak reserved / "
                  "peak allocated\n(1.000: nothing held unused)");
  if (has_native) out += "; saved = against PyTorch (pytorch-native, as modelled)";
  if (modelled) {
    absl::StrAppend(&out,
                    ";\nms/step = modelled driver time a step after warm-up (the trace's last "
                    "half) on the allocating\nthread, ",
                    device, " costs");
    if (any_total) out += " (\"total\": steps unknown, the whole trace)";
  } else {
    out += "; ms/step: not modelled (no cost table)";
  }
  out += ".\n";
  if (any_oom) out += "OOM: ran out of memory; the refused allocations were skipped.\n";
  return out;
}

}  // namespace ccalloc::replay
