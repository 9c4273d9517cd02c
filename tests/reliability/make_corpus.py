#!/usr/bin/env python3
"""Writes the seed corpus of allocator_fuzz (tests/reliability/corpus/seed-*).

Each seed is a short, readable program in the input format documented at the
top of allocator_fuzz.cc, chosen so that fuzzing starts from every corner the
harness knows about: both segment kinds, a small device that runs out,
cross-stream frees, bad pointers, sizes at the representable limit, injected
failures, memory limits, oversize blocks, 64 KiB pages, mapped fit and
destruction with live blocks. Re-run after changing the input format:

    python3 tests/reliability/make_corpus.py

Inputs on which the fuzzer once crashed are committed to the corpus verbatim
(crash-<sha1>, as libFuzzer named them; this script does not write them) and
re-encoded here as regress_* seeds, which keep the same operations when the
format changes.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# Configuration bits (byte 0).
GROWABLE, SMALL_DEVICE, OVERSIZE, GC, DESTROY_LIVE, PAGE_64K, NO_SLACK, MAPPED_FIT = (
    1, 2, 4, 8, 16, 32, 64, 128)
# SimOp values, in sim_backend.h order.
ALLOCATE, CREATE_PHYSICAL, MAP, RECORD_EVENT, QUERY_EVENT = range(5)


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def alloc(stream, exponent, mantissa=0):
    """A request of 2**exponent + mantissa % 2**exponent bytes (exponent < 28)."""
    return bytes([0, stream, exponent]) + u32(mantissa)


def alloc_special(stream, kind, arg=0):
    """kind 232-235: zero; 236-239: SIZE_MAX - arg; 240/241: 2**52 / 2**52 + 1;
    244+: a size-class boundary (arg indexes the table)."""
    return bytes([0, stream, kind, arg])


def free(index):
    return bytes([5, index])


def bad_free(kind, arg=0):  # kind: 0 foreign, 1 interior, 2 freed, 3 past a block
    return bytes([8, kind]) + u32(arg)


def record(index, stream):
    return bytes([9, index, stream])


def bad_record(kind, arg=0):
    return bytes([10, kind]) + u32(arg)


def complete(which):  # 0-3: that stream, 4: all
    return bytes([11, which])


def empty_cache():
    return bytes([12])


def set_limit(v):  # 0: none, else 64 MiB << (v % 9)
    return bytes([13, v])


def fail_nth(op, n):  # the (1 + n % 8)-th call of op fails
    return bytes([14, op, n])


def misc(which):
    # 0 alloc(0), 1 free(0), 2 record(0), 3 bad fraction, 4 fraction,
    # 5 reset peaks, 6 snapshot check, 7 region 1 on/off, 8 pause/resume region 1
    return bytes([15, which])


def begin_pool(pool, stream):  # pool 1 + pool % 3, routed from `stream`, captured
    return bytes([16, pool, stream])


def end_pool(pool):
    return bytes([17, pool])


def release_pool(pool):
    return bytes([18, pool])


def mixed_workload():
    ops = [alloc(0, 9), alloc(0, 12, 77), alloc(1, 20, 5), alloc(0, 21), alloc(2, 23, 999),
           alloc(0, 25, 12345), free(1), alloc(0, 11), free(0), alloc(3, 24), misc(6),
           free(2), free(0), alloc(1, 19, 3), empty_cache(), misc(6)]
    return b"".join(ops)


SEEDS = {
    "classic_basic": bytes([0]) + mixed_workload(),
    "growable_basic": bytes([GROWABLE]) + mixed_workload(),
    "cross_stream_pending": bytes([0]) + b"".join([
        alloc(0, 22), alloc(0, 15), record(0, 1), record(0, 2), free(0),
        bad_free(2), alloc(0, 22), complete(1), alloc(0, 22), complete(4), alloc(0, 22),
        record(1, 3), free(1), empty_cache(), misc(6)]),
    "cross_stream_growable": bytes([GROWABLE]) + b"".join([
        alloc(0, 26), alloc(1, 13), record(0, 2), free(0), alloc(0, 26), complete(2),
        alloc(0, 25), bad_record(2), free(0), empty_cache()]),
    "bad_pointers": bytes([0]) + b"".join([
        alloc(0, 16), alloc(1, 21), bad_free(0, 0x1234), bad_free(0, 0x1235),
        bad_free(1, 0x10203), bad_free(3), free(0), bad_free(2), bad_record(0, 77),
        bad_record(1, 0x400), bad_record(2), misc(0), misc(1), misc(2), misc(3)]),
    "huge_sizes_classic": bytes([0]) + b"".join([
        alloc(0, 20), alloc_special(0, 232), alloc_special(0, 236, 0),
        alloc_special(0, 237, 255), alloc_special(0, 241), alloc_special(0, 240), misc(6)]),
    "small_device_oom": bytes([SMALL_DEVICE]) + b"".join(
        [alloc(0, 27, i) for i in range(6)] + [free(0), alloc(1, 27), free(2), empty_cache(),
                                               alloc(1, 27, 7)]),
    "small_device_oom_growable": bytes([SMALL_DEVICE | GROWABLE]) + b"".join(
        [alloc(i % 4, 27, i * 1000) for i in range(6)] + [free(1), alloc(0, 26), misc(6)]),
    "faults_classic": bytes([0]) + b"".join([
        fail_nth(ALLOCATE, 0), alloc(0, 22), alloc(0, 10), record(1, 1), fail_nth(RECORD_EVENT, 0),
        free(1), free(1), fail_nth(QUERY_EVENT, 0), alloc(0, 12), complete(1), alloc(0, 12),
        empty_cache()]),
    "faults_growable": bytes([GROWABLE]) + b"".join([
        fail_nth(CREATE_PHYSICAL, 0), alloc(0, 24), fail_nth(MAP, 1), alloc(0, 26, 3),
        alloc(1, 22), record(0, 2), free(0), fail_nth(RECORD_EVENT, 0), empty_cache(),
        fail_nth(QUERY_EVENT, 0), alloc(2, 21), empty_cache()]),
    # Memory freed on one stream taken by others (cross_stream_reuse), with
    # record_stream, frees while the lender's work is queued, a capture's
    # routing and a failed event on the way.
    "cross_stream_lending": bytes([GROWABLE | GC]) + b"".join([
        alloc(0, 26), alloc(0, 12), free(0), alloc(1, 26), alloc(2, 24), record(1, 3),
        free(1), alloc(0, 26), complete(0), fail_nth(RECORD_EVENT, 0), free(1), free(1),
        alloc(3, 25), misc(6), free(0), complete(4), alloc(1, 26), empty_cache(), misc(6)]),
    "limit_and_gc": bytes([GC]) + b"".join([
        set_limit(3), alloc(0, 26), alloc(0, 26), free(0), alloc(0, 27), alloc(1, 25),
        misc(4), alloc(0, 24), set_limit(0), alloc(0, 27), misc(5), empty_cache()]),
    "oversize_blocks": bytes([OVERSIZE]) + b"".join([
        alloc_special(0, 244, 12), alloc_special(0, 245, 13), alloc(0, 26, 5), free(0),
        alloc(0, 26, 6 << 20), free(1), alloc_special(0, 246, 14), misc(6)]),
    # Holes whose memory moves under a larger block, then requests that
    # would map there placed on the mapped memory instead (mapped fit), with
    # a failed map on the way and frees on another stream.
    "mapped_fit_growable": bytes([GROWABLE | MAPPED_FIT]) + b"".join([
        alloc(0, 24), alloc(0, 12), alloc(0, 25), alloc(0, 12), free(0), free(1),
        complete(4), alloc(0, 26), free(2), complete(4), alloc(0, 24, 7), alloc(1, 23),
        fail_nth(MAP, 0), alloc(0, 25), record(0, 2), free(0), alloc(0, 24), misc(6),
        empty_cache()]),
    "destroy_with_live": bytes([DESTROY_LIVE | GROWABLE]) + b"".join([
        alloc(0, 21), alloc(1, 14), record(0, 3), free(0), alloc(2, 25), record(0, 1)]),
    # A graph capture: temporaries in the pool, a cross-stream free deferred,
    # a second capture sharing the pool, another pool beside it, release.
    "graph_pools_classic": bytes([0]) + b"".join([
        alloc(0, 21), free(0), begin_pool(0, 1), alloc(1, 9), alloc(1, 22), alloc(1, 25),
        record(1, 2), free(1), free(0), empty_cache(), alloc(0, 22), end_pool(0),
        alloc(1, 22), begin_pool(0, 1), alloc(1, 22, 7), begin_pool(1, 3), alloc(3, 12),
        end_pool(0), end_pool(1), end_pool(1), release_pool(0), release_pool(1), free(0),
        complete(4), alloc(2, 20), release_pool(0), free(0), free(0), release_pool(0),
        misc(6), empty_cache()]),
    "graph_pools_growable": bytes([GROWABLE]) + b"".join([
        alloc(0, 26), free(0), begin_pool(2, 0), alloc(0, 24), alloc(0, 13), free(0),
        alloc(0, 25), record(1, 3), release_pool(2), free(1), end_pool(2), alloc(3, 20),
        release_pool(2), complete(3), alloc(0, 24), free(0), free(0), free(0), misc(6),
        empty_cache()]),
    "graph_pools_oom": bytes([SMALL_DEVICE | GROWABLE]) + b"".join(
        [alloc(0, 27, i) for i in range(3)] + [free(0), begin_pool(0, 0)] +
        [alloc(0, 27, i) for i in range(4)] + [end_pool(0), release_pool(0), alloc(1, 27)]),
    # Regressions, the two allocator_fuzz crash inputs re-encoded op for op
    # (the raw files are committed beside them as crash-<sha1>): pool 1's
    # block, also used on stream 2, is freed during the capture; pool 1 is
    # released to 0 with no routing active; stream 2 completes and the next
    # Allocate reclaims the block, which must give the now wholly free
    # segment back to the device in that same call.
    "regress_released_pool_pending_93af8b93": bytes([0]) + b"".join([
        alloc(0, 21), free(0), begin_pool(0, 1), alloc(1, 9), alloc(1, 22), alloc(1, 25),
        record(1, 2), free(1), free(48), alloc(0, 0), alloc(0, 17, 65536), alloc(0, 0),
        alloc(1, 22, 7), begin_pool(1, 3), alloc(3, 12), end_pool(0), end_pool(1), end_pool(1),
        release_pool(0), release_pool(1), free(0), complete(2), bad_free(1, 0xEB), alloc(2, 0),
        release_pool(0), misc(6), empty_cache()]),
    "regress_released_pool_pending_ad982f93": bytes([0]) + b"".join([
        alloc(0, 21), free(0), begin_pool(0, 1), alloc(1, 9), alloc(1, 0), alloc(1, 25),
        record(1, 2), free(1), free(0), empty_cache(), alloc(0, 22, 8), end_pool(0),
        alloc(1, 22), free(16), alloc(1, 0), alloc(0, 0), alloc(0, 0), alloc(1, 1, 1),
        release_pool(0), free(0), complete(4), alloc(2, 20), release_pool(0), free(0),
        alloc(1, 18, 134912)]),
    "no_slack_growable": bytes([GROWABLE | NO_SLACK]) + mixed_workload(),
    "unmap_fault": bytes([GROWABLE]) + b"".join([
        alloc(0, 26), alloc(0, 20), free(0), fail_nth(MAP, 0x80), empty_cache(), alloc(1, 25),
        free(0), fail_nth(ALLOCATE, 0x81), alloc(1, 26), misc(6), empty_cache()]),
    # Regions: misc(7) toggles region 1 for later allocations, misc(8) pauses
    # or resumes it.
    "regions_pause_growable": bytes([GROWABLE]) + b"".join([
        misc(7), alloc(0, 22), alloc(0, 24, 5), alloc(1, 21), record(0, 1), free(2), misc(8),
        alloc(0, 20), free(0), misc(7), alloc(0, 21), misc(8), misc(7), alloc(0, 23), misc(6),
        misc(8), free(0), misc(8), empty_cache(), misc(6)]),
    "regions_resume_fault": bytes([GROWABLE]) + b"".join([
        misc(7), alloc(0, 26), alloc(0, 25), misc(8), fail_nth(MAP, 1), misc(8), misc(8),
        misc(6), free(0), misc(8), misc(8), empty_cache()]),
    "regions_classic": bytes([0]) + b"".join([misc(7), alloc(0, 22), misc(8), free(0)]),
    "page64k_boundaries": bytes([PAGE_64K | SMALL_DEVICE | GROWABLE]) + b"".join(
        [alloc_special(i % 4, 244 + i, i) for i in range(12)] + [free(3), free(5), misc(6),
                                                                 empty_cache()]),
}


def main():
    corpus = os.path.join(HERE, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(corpus, "seed-" + name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {corpus}")


if __name__ == "__main__":
    main()
