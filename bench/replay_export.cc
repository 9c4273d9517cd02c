// replay_export.cc — replay.h's machine-readable outputs: the timeline and
// event-cost CSVs, the SVG plot of allocated and reserved memory over a
// replay, and the JSON with every figure (ResultsToJson, whose field names
// tools and tests read). They read ReplayResults; nothing here replays.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
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

namespace {

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  return absl::StrFormat("%.6g", v);
}

std::string XmlEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

absl::Status CheckTimelines(const std::vector<ReplayResult>& results) {
  if (results.empty()) return absl::InvalidArgumentError("no results");
  for (const ReplayResult& r : results) {
    if (r.timeline_reserved.size() != r.events || r.timeline_allocated.size() != r.events ||
        r.timeline_device_ops.size() != r.events ||
        r.events != results[0].events || r.trace != results[0].trace) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy ", r.policy, " on ", r.trace,
          " has no full timeline (replay with record_timeline) or belongs to another trace"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> TimelineCsv(const std::vector<ReplayResult>& results) {
  if (absl::Status s = CheckTimelines(results); !s.ok()) return s;
  std::string out = "event";
  for (const ReplayResult& r : results) {
    absl::StrAppend(&out, ",", r.policy, "_allocated_bytes,", r.policy, "_reserved_bytes,",
                    r.policy, "_device_ops");
  }
  out += "\n";
  out.reserve(out.size() + results[0].events * (8 + 24 * results.size()));
  for (std::size_t i = 0; i < results[0].events; ++i) {
    absl::StrAppend(&out, i);
    for (const ReplayResult& r : results) {
      absl::StrAppend(&out, ",", r.timeline_allocated[i], ",", r.timeline_reserved[i], ",",
                      r.timeline_device_ops[i]);
    }
    out += "\n";
  }
  return out;
}

std::string EventCostsCsv(const std::vector<ReplayResult>& results) {
  std::string out =
      "policy,event,op,id,bytes,stream,address,maps,unmaps,foreground_unmaps,returns,waits,"
      "device_allocs,device_frees,allocated_bytes,reserved_bytes\n";
  for (const ReplayResult& r : results) {
    for (const EventCost& c : r.event_costs) {
      absl::StrAppend(&out, r.policy, ",", c.event, ",", std::string(1, c.op), ",", c.id, ",",
                      c.bytes, ",", c.stream, ",0x", absl::Hex(c.address), ",", c.maps, ",",
                      c.unmaps, ",", c.foreground_unmaps, ",", c.returns, ",", c.waits, ",",
                      c.device_allocs, ",", c.device_frees, ",", c.allocated, ",", c.reserved,
                      "\n");
    }
  }
  return out;
}

absl::StatusOr<std::string> PlotSvg(const std::vector<ReplayResult>& results) {
  if (absl::Status s = CheckTimelines(results); !s.ok()) return s;
  static constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                            "#9467bd", "#ff7f0e", "#8c564b"};
  constexpr double kWidth = 1040, kHeight = 560;
  constexpr double kLeft = 70, kRight = 330, kTop = 60, kBottom = 60;
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  const std::size_t n = results[0].events;
  const std::vector<ReferenceRow> refs = ReferenceRows(results[0].trace);

  // The y range covers every series and reference line; ticks at 1, 2 or 5
  // times a power of ten GiB, at most 8 of them.
  double max_gib = 0;
  for (const ReplayResult& r : results) {
    max_gib = std::max(max_gib, static_cast<double>(r.peak_reserved_bytes) / kGiB);
    max_gib = std::max(max_gib, static_cast<double>(r.peak_allocated_bytes) / kGiB);
  }
  for (const ReferenceRow& ref : refs) {
    max_gib = std::max(max_gib, static_cast<double>(ref.peak_reserved_mib) / 1024.0);
  }
  if (max_gib <= 0) max_gib = 1;
  double step = std::pow(10.0, std::floor(std::log10(max_gib)));
  for (double mult : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0}) {
    if (max_gib / (step * mult) <= 8) {
      step *= mult;
      break;
    }
  }
  const double y_max = std::ceil(max_gib / step * 1.02) * step;
  auto X = [&](double event) {
    return kLeft + (n > 1 ? event / static_cast<double>(n - 1) : 0.0) * plot_w;
  };
  auto Y = [&](double bytes) { return kTop + plot_h - bytes / kGiB / y_max * plot_h; };

  // Down-samples to at most ~2 points per horizontal pixel, keeping each
  // bucket's lowest and highest value in the order they occurred, so the
  // peaks survive.
  auto Polyline = [&](const std::vector<std::int64_t>& v) {
    std::string pts;
    const std::size_t buckets = std::min<std::size_t>(n, 1200);
    for (std::size_t b = 0; b < buckets; ++b) {
      const std::size_t lo = b * n / buckets;
      const std::size_t hi = std::max(lo + 1, (b + 1) * n / buckets);
      std::size_t imin = lo, imax = lo;
      for (std::size_t i = lo; i < hi; ++i) {
        if (v[i] < v[imin]) imin = i;
        if (v[i] > v[imax]) imax = i;
      }
      for (std::size_t i : {std::min(imin, imax), std::max(imin, imax)}) {
        absl::StrAppend(&pts, absl::StrFormat("%.1f,%.1f ", X(static_cast<double>(i)),
                                              Y(static_cast<double>(v[i]))));
      }
    }
    return pts;
  };

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppend(&svg,
                  absl::StrFormat("<text x=\"%.0f\" y=\"24\" font-size=\"16\" font-weight=\"bold\">"
                                  "%s: allocated and reserved device memory during replay</text>\n",
                                  kLeft, XmlEscape(results[0].trace)));
  absl::StrAppend(
      &svg, absl::StrFormat("<text x=\"%.0f\" y=\"42\" fill=\"#555\">%s events, backend %s, "
                            "capacity %s</text>\n",
                            kLeft, Grouped(static_cast<std::int64_t>(n)),
                            XmlEscape(results[0].backend), XmlEscape(CapacityText(results[0]))));
  // Grid and y ticks.
  for (int k = 0; k * step <= y_max + step / 2; ++k) {
    const double g = k * step;
    const double y = Y(g * kGiB);
    absl::StrAppend(
        &svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"#e5e5e5\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                              "text-anchor=\"end\">%s</text>\n",
                              kLeft, y, kLeft + plot_w, y, kLeft - 6, y + 4,
                              step < 1 ? absl::StrFormat("%.1f", g) : absl::StrFormat("%.0f", g)));
  }
  // X ticks: 0, quarters, n-1.
  for (int q = 0; q <= 4; ++q) {
    const double event = n > 1 ? static_cast<double>(n - 1) * q / 4 : 0;
    absl::StrAppend(
        &svg,
        absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", X(event),
                        kTop + plot_h + 18, Grouped(static_cast<std::int64_t>(event))));
  }
  absl::StrAppend(&svg,
                  absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                  "fill=\"none\" stroke=\"#333\"/>\n",
                                  kLeft, kTop, plot_w, plot_h));
  absl::StrAppend(&svg,
                  absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">event index"
                                  "</text>\n<text transform=\"translate(20,%.1f) rotate(-90)\" "
                                  "text-anchor=\"middle\">GiB</text>\n",
                                  kLeft + plot_w / 2, kHeight - 16, kTop + plot_h / 2));

  struct Legend {
    std::string label, color, dash;
    double width;
  };
  std::vector<Legend> legend;
  // Reference lines first, underneath.
  static constexpr const char* kRefColors[] = {"#999999", "#bbbb55", "#55bbbb"};
  for (std::size_t k = 0; k < refs.size() && k < 3; ++k) {
    const double y = Y(static_cast<double>(refs[k].peak_reserved_mib) * kMiB);
    absl::StrAppend(
        &svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"2,3\"/>\n",
                              kLeft, y, kLeft + plot_w, y, kRefColors[k]));
    legend.push_back(
        {absl::StrCat(refs[k].label.substr(0, refs[k].label.size() - 2), ": measured peak"),
         kRefColors[k], "2,3", 1.5});
  }
  // Allocated is the same for policies that round alike: then one line.
  bool same_allocated = true;
  for (const ReplayResult& r : results) {
    same_allocated = same_allocated && r.timeline_allocated == results[0].timeline_allocated;
  }
  if (same_allocated) {
    absl::StrAppend(&svg, "<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1\" points=\"",
                    Polyline(results[0].timeline_allocated), "\"/>\n");
    legend.push_back({"allocated (every policy)", "#222", "", 1});
  }
  for (std::size_t k = 0; k < results.size(); ++k) {
    const ReplayResult& r = results[k];
    const std::string color = kColors[k % 6];
    if (!same_allocated) {
      // Solid and thin, not dashed: a dash gap would hide one-event spikes.
      absl::StrAppend(&svg, "<polyline fill=\"none\" stroke=\"", color,
                      "\" stroke-opacity=\"0.55\" stroke-width=\"0.8\" points=\"",
                      Polyline(r.timeline_allocated), "\"/>\n");
      legend.push_back({absl::StrFormat("%s: allocated (peak %s MiB)", r.policy,
                                        Grouped(ToMiB(r.peak_allocated_bytes))),
                        color, "", 0.8});
    }
    absl::StrAppend(&svg, "<polyline fill=\"none\" stroke=\"", color,
                    "\" stroke-width=\"1.8\" points=\"", Polyline(r.timeline_reserved), "\"/>\n");
    legend.push_back({absl::StrFormat("%s: reserved (peak %s MiB)", r.policy,
                                      Grouped(ToMiB(r.peak_reserved_bytes))),
                      color, "", 1.8});
  }
  const double lx = kLeft + plot_w + 14;
  for (std::size_t k = 0; k < legend.size(); ++k) {
    const double y = kTop + 10 + 20.0 * static_cast<double>(k);
    absl::StrAppend(
        &svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n"
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>\n",
                              lx, y, lx + 22, y, legend[k].color, legend[k].width,
                              legend[k].dash.empty()
                                  ? ""
                                  : absl::StrCat(" stroke-dasharray=\"", legend[k].dash, "\""),
                              lx + 28, y + 4, XmlEscape(legend[k].label)));
  }
  svg += "</svg>\n";
  return svg;
}

std::string ResultsToJson(const std::vector<ReplayResult>& results) {
  std::string out = "[";
  for (std::size_t k = 0; k < results.size(); ++k) {
    const ReplayResult& r = results[k];
    std::vector<std::string> passes;
    for (double p : r.ns_per_op_passes) passes.push_back(JsonNumber(p));
    absl::StrAppend(&out, k == 0 ? "\n" : ",\n", "  {");
    absl::StrAppend(
        &out, "\"trace\": ", JsonString(r.trace), ", \"policy\": ", JsonString(r.policy),
        ", \"options\": ", JsonString(r.options), ", \"backend\": ", JsonString(r.backend),
        ", \"capacity_bytes\": ", r.capacity_bytes, ",\n   ");
    absl::StrAppend(&out, "\"events\": ", r.events, ", \"allocs\": ", r.allocs,
                    ", \"frees\": ", r.frees, ",\n   ");
    absl::StrAppend(&out, "\"peak_allocated_bytes\": ", r.peak_allocated_bytes,
                    ", \"peak_reserved_bytes\": ", r.peak_reserved_bytes,
                    ", \"peak_allocated_mib\": ", ToMiB(r.peak_allocated_bytes),
                    ", \"peak_reserved_mib\": ", ToMiB(r.peak_reserved_bytes),
                    ", \"peak_active_bytes\": ", r.peak_active_bytes,
                    ", \"end_allocated_bytes\": ", r.end_allocated_bytes,
                    ", \"end_reserved_bytes\": ", r.end_reserved_bytes, ",\n   ");
    absl::StrAppend(&out, "\"ratio\": ", JsonNumber(r.ratio),
                    ", \"run_fragmentation\": ", JsonNumber(r.run_fragmentation),
                    ", \"peak_reserved_event\": ", r.peak_reserved_event,
                    ", \"fragmentation_at_peak\": ", JsonNumber(r.fragmentation_at_peak),
                    ", \"fragmentation_at_end\": ", JsonNumber(r.fragmentation_at_end),
                    ", \"peak_allocated_event\": ", r.peak_allocated_event,
                    ", \"page_floor_bytes\": ", r.page_floor_bytes,
                    ", \"page_floor_ratio\": ", JsonNumber(r.page_floor_ratio),
                    ", \"page_floor_at_reserved_peak_bytes\": ",
                    r.page_floor_at_reserved_peak_bytes,
                    ", \"chunk_floor_bytes\": ", r.chunk_floor_bytes,
                    ", \"chunk_floor_at_reserved_peak_bytes\": ",
                    r.chunk_floor_at_reserved_peak_bytes, ",\n   ");
    absl::StrAppend(&out, "\"device_allocs\": ", r.device_allocs,
                    ", \"device_frees\": ", r.device_frees, ", \"maps\": ", r.maps,
                    ", \"unmaps\": ", r.unmaps,
                    ", \"returns\": ", r.returns,
                    ", \"foreground_unmaps\": ", r.foreground_unmaps,
                    ", \"maps_per_1k_allocs\": ", JsonNumber(r.maps_per_1k_allocs),
                    ", \"unmaps_per_1k_allocs\": ", JsonNumber(r.unmaps_per_1k_allocs), ",\n   ");
    {
      std::vector<std::string> calls;
      for (int c = 0; c < kNumDriverCalls; ++c) {
        calls.push_back(absl::StrCat(JsonString(DriverCallName(static_cast<DriverCall>(c))), ": ",
                                     r.driver_calls[c]));
      }
      std::vector<std::string> late;
      for (int c = 0; c < kNumDriverCalls; ++c) {
        late.push_back(absl::StrCat(JsonString(DriverCallName(static_cast<DriverCall>(c))), ": [",
                                    r.late_driver_calls[c], ", ", r.late_background_calls[c], "]"));
      }
      absl::StrAppend(&out, "\"late_driver_calls\": {", absl::StrJoin(late, ", "), "},\n   ");
      absl::StrAppend(&out, "\"driver_calls\": {", absl::StrJoin(calls, ", "),
                      "}, \"driver_calls_total\": ", r.driver_calls_total,
                      ", \"stream_waits\": ", r.stream_waits,
                      ", \"stream_waits_by_site\": {\"under_block\": ", r.waits_under_block,
                      ", \"trim\": ", r.waits_trim, ", \"release\": ", r.waits_release, "}",
                      ", \"waited_events\": ", r.waited_events,
                      ", \"late_waited_events\": ", r.late_waited_events, ",\n   ");
      absl::StrAppend(&out, "\"steps\": ", r.steps,
                      ", \"steps_source\": ", JsonString(r.steps_source),
                      ", \"driver_calls_per_step\": ",
                      r.steps > 0 ? JsonNumber(r.driver_calls_per_step()) : "null", ",\n   ");
      if (r.driver_time_modelled) {
        absl::StrAppend(&out, "\"modelled_driver_ms\": ", JsonNumber(r.modelled_driver_us / 1000.0),
                        ", \"modelled_driver_ms_per_step\": ",
                        r.steps > 0 ? JsonNumber(r.modelled_driver_ms_per_step()) : "null",
                        ", \"background_driver_calls\": ", r.background_driver_calls,
                        ", \"background_driver_ms\": ", JsonNumber(r.background_driver_us / 1000.0),
                        ", \"caller_driver_ms_per_step\": ",
                        r.steps > 0 ? JsonNumber(r.foreground_driver_ms_per_step()) : "null",
                        ", \"late_driver_ms_per_step\": ",
                        r.steps > 1 ? JsonNumber(r.late_driver_ms_per_step()) : "null",
                        ", \"late_caller_driver_ms_per_step\": ",
                        r.steps > 1 ? JsonNumber(r.late_foreground_driver_ms_per_step()) : "null",
                        ", \"late_mapped_chunks\": ", r.late_mapped_chunks,
                        ", \"unpriced_driver_calls\": ", r.unpriced_driver_calls,
                        ", \"unpriced_driver_calls_by_kind\": ",
                        JsonString(r.unpriced_driver_calls_text),
                        ", \"driver_costs\": ", JsonString(r.driver_costs_path),
                        ", \"driver_costs_device\": ", JsonString(r.driver_costs_device),
                        ",\n   ");
      } else {
        out += "\"modelled_driver_ms\": null, \"modelled_driver_ms_per_step\": null,\n   ";
      }
    }
    absl::StrAppend(&out, "\"retries\": ", r.retries, ", \"free_alls\": ", r.free_alls,
                    ", \"ooms\": ", r.ooms, ", \"pauses\": ", r.pauses,
                    ", \"paused_bytes\": ", r.paused_bytes,
                    ", \"first_oom_event\": ", r.first_oom_event,
                    ", \"first_oom_message\": ", JsonString(r.first_oom_message),
                    ", \"fits\": ", r.fits ? "true" : "false", ",\n   ");
    absl::StrAppend(&out, "\"ns_per_op\": ", JsonNumber(r.ns_per_op), ", \"ns_per_op_passes\": [",
                    absl::StrJoin(passes, ", "), "], \"timing\": ",
                    JsonString("median over timed replays of (replay wall time / events)"));
    std::vector<ReferenceRow> refs = ReferenceRows(r.trace);
    if (!refs.empty()) {
      std::vector<std::string> items;
      for (const ReferenceRow& ref : refs) {
        items.push_back(absl::StrCat("{\"label\": ", JsonString(ref.label),
                                     ", \"peak_allocated_mib\": ", ref.peak_allocated_mib,
                                     ", \"peak_reserved_mib\": ", ref.peak_reserved_mib, "}"));
      }
      absl::StrAppend(&out, ",\n   \"pytorch_reference\": [", absl::StrJoin(items, ", "), "]");
    }
    out += "}";
  }
  out += results.empty() ? "]\n" : "\n]\n";
  return out;
}

}  // namespace ccalloc::replay
