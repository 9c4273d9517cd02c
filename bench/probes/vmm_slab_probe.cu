// vmm_slab_probe.cu — does the driver charge a map per physical handle or
// per mapping?
//
// A map's price is its access call: ~17 us a call plus ~32 us for each
// handle in the range (bench/driver_costs/README.md, map_run). Every run
// measured so far had one mapping per handle, so the ~32 us could belong to
// either. cuMemMap takes an offset into the handle (a multiple of the
// granularity, CUDA 12+), so one large handle (a slab) can back many pages
// mapped apart. If the driver charges per handle, pages cut from one slab
// would cost one handle's price however they are mapped, and the pinning
// that bounds chunk sizes today (a live block keeps its whole chunk mapped)
// would shrink to a page.
//
// Cases, k pages of 2 MiB mapped side by side with one cuMemSetAccess over
// them, then unmapped page by page:
//   handles    k handles of one page each (today's runs)
//   slab       k page-sized mappings cut from one handle of k pages, in order
//   slab_rev   the same, pages taken from the slab in reverse order
//   whole      one mapping of one handle of k pages (today's single chunk)
// and two checks: that a page cut from a slab aliases the slab's bytes at
// its offset (a word written through the page is read through a mapping of
// the whole slab), and whether a page in the middle of one whole mapping can
// be unmapped alone (the driver's answer is printed, not assumed).
//
// Whether the driver takes an offset at all is asked first (offset_map): on
// an H100 with driver 580.159.04 (2026-11-25) the first mapping at a
// non-zero offset was refused with CUDA_ERROR_NOT_SUPPORTED, so the slab
// cases and the checks that need them are skipped there and reported so.
//
// Prints one JSON object. Build:
//   nvcc -O2 -std=c++17 -o vmm_slab_probe bench/probes/vmm_slab_probe.cu -lcuda
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver_probe.h"

namespace {

using ccalloc::probe::Check;
using ccalloc::probe::CreatePhysical;
using ccalloc::probe::ReadWrite;
using ccalloc::probe::Now;

constexpr std::size_t kPage = std::size_t{2} << 20;

struct Times {
  std::vector<double> map, access, unmap;
};

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One timed round of a case: maps (as `pieces` gives them: handle and
// offset for each page, or one piece for `whole`), one access call over the
// k pages, unmaps of each mapping.
struct Piece {
  CUmemGenericAllocationHandle handle;
  std::size_t offset;
  std::size_t bytes;
};

void Round(CUdeviceptr va, const std::vector<Piece>& pieces, int dev, Times* t) {
  const CUmemAccessDesc access = ReadWrite(dev);
  std::size_t bytes = 0;
  double t0 = Now();
  for (const Piece& p : pieces) {
    Check(cuMemMap(va + bytes, p.bytes, p.offset, p.handle, 0), "cuMemMap");
    bytes += p.bytes;
  }
  double t1 = Now();
  Check(cuMemSetAccess(va, bytes, &access, 1), "cuMemSetAccess");
  double t2 = Now();
  std::size_t at = 0;
  for (const Piece& p : pieces) {
    Check(cuMemUnmap(va + at, p.bytes), "cuMemUnmap");
    at += p.bytes;
  }
  double t3 = Now();
  t->map.push_back(t1 - t0);
  t->access.push_back(t2 - t1);
  t->unmap.push_back(t3 - t2);
}

std::string CaseJson(const char* name, int k, const Times& t) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "{\"case\": \"%s\", \"pages\": %d, \"map_us\": %.2f, \"access_us\": %.2f, "
                "\"access_median_us\": %.2f, \"unmap_us\": %.2f, \"samples\": %zu}",
                name, k, Mean(t.map), Mean(t.access), Median(t.access), Mean(t.unmap),
                t.access.size());
  return buf;
}

// Writes through page `i` of a slab cut into pages (mapped in reverse
// order), reads through a whole mapping of the slab: the word must be at
// slab offset i * kPage.
std::string AliasCheck(int dev, int k) {
  const CUmemAccessDesc access = ReadWrite(dev);
  CUmemGenericAllocationHandle slab = CreatePhysical(k * kPage, dev);
  CUdeviceptr cut = 0, whole = 0;
  Check(cuMemAddressReserve(&cut, k * kPage, kPage, 0, 0), "reserve");
  Check(cuMemAddressReserve(&whole, k * kPage, kPage, 0, 0), "reserve");
  for (int i = 0; i < k; ++i) {
    // Virtual page i holds slab page k-1-i.
    Check(cuMemMap(cut + i * kPage, kPage, (k - 1 - i) * kPage, slab, 0), "cuMemMap cut");
  }
  Check(cuMemSetAccess(cut, k * kPage, &access, 1), "access cut");
  Check(cuMemMap(whole, k * kPage, 0, slab, 0), "cuMemMap whole");
  Check(cuMemSetAccess(whole, k * kPage, &access, 1), "access whole");
  int wrong = 0;
  for (int i = 0; i < k; ++i) {
    Check(cuMemsetD32(cut + i * kPage, 0x1000u + static_cast<unsigned>(i), kPage / 4), "memset");
  }
  Check(cuCtxSynchronize(), "sync");
  for (int i = 0; i < k; ++i) {
    std::uint32_t word = 0;
    Check(cuMemcpyDtoH(&word, whole + (k - 1 - i) * kPage + 4096, 4), "read");
    if (word != 0x1000u + static_cast<unsigned>(i)) ++wrong;
  }
  for (int i = 0; i < k; ++i) Check(cuMemUnmap(cut + i * kPage, kPage), "unmap cut");
  Check(cuMemUnmap(whole, k * kPage), "unmap whole");
  Check(cuMemRelease(slab), "release");
  Check(cuMemAddressFree(cut, k * kPage), "free");
  Check(cuMemAddressFree(whole, k * kPage), "free");
  char buf[128];
  std::snprintf(buf, sizeof buf, "{\"pages\": %d, \"wrong_pages\": %d}", k, wrong);
  return buf;
}

// One mapping of a 4-page handle; unmap page 1 alone. Reports the driver's
// answer and, if it said yes, whether pages 0 and 2 are still usable.
std::string PartialUnmap(int dev) {
  const CUmemAccessDesc access = ReadWrite(dev);
  CUmemGenericAllocationHandle h = CreatePhysical(4 * kPage, dev);
  CUdeviceptr va = 0;
  Check(cuMemAddressReserve(&va, 4 * kPage, kPage, 0, 0), "reserve");
  Check(cuMemMap(va, 4 * kPage, 0, h, 0), "map");
  Check(cuMemSetAccess(va, 4 * kPage, &access, 1), "access");
  const CUresult r = cuMemUnmap(va + kPage, kPage);
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::string rest = "not tried";
  if (r == CUDA_SUCCESS) {
    const CUresult w0 = cuMemsetD32(va, 7, kPage / 4);
    const CUresult w2 = cuMemsetD32(va + 2 * kPage, 7, kPage / 4);
    const CUresult s = cuCtxSynchronize();
    rest = (w0 == CUDA_SUCCESS && w2 == CUDA_SUCCESS && s == CUDA_SUCCESS) ? "usable" : "failed";
    (void)cuMemUnmap(va, kPage);
    (void)cuMemUnmap(va + 2 * kPage, 2 * kPage);
  } else {
    Check(cuMemUnmap(va, 4 * kPage), "unmap whole");
  }
  Check(cuMemRelease(h), "release");
  Check(cuMemAddressFree(va, 4 * kPage), "free");
  return std::string("{\"unmap_middle_page\": \"") + (name ? name : "?") +
         "\", \"pages_beside\": \"" + rest + "\"}";
}

// The driver's answer to mapping the second page of a two-page handle alone.
std::string OffsetMap(int dev) {
  CUmemGenericAllocationHandle h = CreatePhysical(2 * kPage, dev);
  CUdeviceptr va = 0;
  Check(cuMemAddressReserve(&va, kPage, kPage, 0, 0), "reserve");
  const CUresult r = cuMemMap(va, kPage, kPage, h, 0);
  if (r == CUDA_SUCCESS) Check(cuMemUnmap(va, kPage), "unmap");
  Check(cuMemRelease(h), "release");
  Check(cuMemAddressFree(va, kPage), "free");
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  return name != nullptr ? name : "?";
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 50;
  if (argc > 2 && std::string(argv[1]) == "--reps") reps = std::atoi(argv[2]);
  const int dev = 0;
  (void)ccalloc::probe::UsePrimaryContext(dev);
  const std::vector<int> ks = {1, 4, 16, 32};
  const int kmax = 32;
  const std::string offset_map = OffsetMap(dev);
  const bool slabs = offset_map == "CUDA_SUCCESS";
  CUdeviceptr va = 0;
  Check(cuMemAddressReserve(&va, kmax * kPage, kPage, 0, 0), "reserve");

  std::vector<std::string> cases;
  for (int k : ks) {
    std::vector<CUmemGenericAllocationHandle> pages;
    for (int i = 0; i < k; ++i) pages.push_back(CreatePhysical(kPage, dev));
    CUmemGenericAllocationHandle slab = CreatePhysical(k * kPage, dev);
    std::vector<Piece> handles, cut, cut_rev, whole;
    for (int i = 0; i < k; ++i) {
      handles.push_back({pages[i], 0, kPage});
      cut.push_back({slab, i * kPage, kPage});
      cut_rev.push_back({slab, (k - 1 - i) * kPage, kPage});
    }
    whole.push_back({slab, 0, k * kPage});
    Times th, ts, tr, tw;
    // Interleaved, so drift in the driver falls on every case alike.
    for (int r = 0; r < reps; ++r) {
      Round(va, handles, dev, &th);
      if (slabs) {
        Round(va, cut, dev, &ts);
        Round(va, cut_rev, dev, &tr);
      }
      Round(va, whole, dev, &tw);
    }
    cases.push_back(CaseJson("handles", k, th));
    if (slabs) {
      cases.push_back(CaseJson("slab", k, ts));
      cases.push_back(CaseJson("slab_rev", k, tr));
    }
    cases.push_back(CaseJson("whole", k, tw));
    for (CUmemGenericAllocationHandle h : pages) Check(cuMemRelease(h), "release");
    Check(cuMemRelease(slab), "release");
    std::fprintf(stderr, "k=%d done\n", k);
  }
  Check(cuMemAddressFree(va, kmax * kPage), "free");

  std::printf("{\"reps\": %d, \"offset_map\": \"%s\", \"cases\": [", reps,
              offset_map.c_str());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::printf("%s\n  %s", i == 0 ? "" : ",", cases[i].c_str());
  }
  std::printf("],\n \"alias\": %s,\n \"partial_unmap\": %s\n}\n",
              slabs ? AliasCheck(dev, 8).c_str() : "null", PartialUnmap(dev).c_str());
  return 0;
}
