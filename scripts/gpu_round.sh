#!/usr/bin/env bash
# One round of GPU checks and benchmarks, for a machine with an NVIDIA GPU and
# PyTorch (the device tool's machines). Build and bundle here first:
#
#   cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
#         -DCMAKE_C_COMPILER=clang && cmake --build build-gpu -j2
#   scripts/gpu_bundle.sh build-gpu .gpu
#
# then, on the GPU machine (carrying .gpu), one part per command:
#
#   scripts/gpu_round.sh .gpu OUTDIR core      GPU test suites, the same under
#                                              compute-sanitizer memcheck, and a
#                                              replay of both traces on the device
#   scripts/gpu_round.sh .gpu OUTDIR bench     host ns per allocate/free against
#                                              PyTorch's allocator, cudaMalloc and
#                                              cudaMallocAsync, in one call, 3
#                                              interleaved rounds (about 3 minutes)
#   scripts/gpu_round.sh .gpu OUTDIR torch     the PyTorch plugin's pytest suite
#   scripts/gpu_round.sh .gpu OUTDIR sequential the training comparison of record
#                                              (bench/compare_training.py's defaults:
#                                              native_expandable, ccalloc and their A/A
#                                              twins, 6 rounds, one process at a time,
#                                              the order turning by round) for
#                                              SEQ_WORKLOADS (default gpt2; 24 processes
#                                              a family, one or two families a call;
#                                              SEQ_BUDGET seconds, default 520, skips
#                                              and reports what would not fit;
#                                              SEQ_CONFIGS replaces the allocators,
#                                              SEQ_KERNEL_PROFILE=N times N steps'
#                                              kernels apart from their launches):
#                                              OUTDIR/sequential.json and .log
#   scripts/gpu_round.sh .gpu OUTDIR twogpu    side by side with a GPU each (two GPUs:
#                                              --gpus 0,1), the LM and GPT-2, 200 steps,
#                                              native_expandable against ccalloc, turning
#                                              which gets which GPU: OUTDIR/twogpu.json
#                                              and .log (TWOGPU_WORKLOADS, _CONFIGS,
#                                              _GPUS, _ROUNDS, _STEPS, _BUDGET;
#                                              expandable_b and ccalloc_b are A/A twins)
#   scripts/gpu_round.sh .gpu OUTDIR repeat    GPT-2, the checkpointed LM, two streams and the
#                                              UNet on six repeated shapes (as a bucketing
#                                              data loader gives them:
#                                              bench/probes/shape_repeat_probe.py --no-profile,
#                                              6 passes), native_expandable and ccalloc, one
#                                              process each, 3 interleaved rounds while the
#                                              budget lasts: per pass ms a step, launch ms
#                                              and ccalloc's placements split into map
#                                              calls, creates, foreground unmaps and waits:
#                                              OUTDIR/repeat.log, and its summary
#                                              (bench/probes/shape_repeat_summary.py: ratios
#                                              by round from the third pass) in
#                                              repeat_summary.log and repeat.json (~8
#                                              minutes on an H100)
#   scripts/gpu_round.sh .gpu OUTDIR hostprofile where two streams' host time goes under
#                                              native_expandable and ccalloc
#                                              (bench/probes/host_profile.py: by operator and
#                                              CUDA call, GC pauses): OUTDIR/hostprofile.json and
#                                              .log (~4 minutes); its step is slower under
#                                              ccalloc by more than ccalloc's own clock says
#   scripts/gpu_round.sh .gpu OUTDIR traces    only the traces of every training
#                                              workload (about 2 minutes on an H100):
#                                              OUTDIR/traces.tar
#   scripts/gpu_round.sh .gpu OUTDIR pip       `pip install .` (the README's), then
#                                              ccalloc.torch from /tmp, ldd without
#                                              Abseil, host tests on the installed copy
#   scripts/gpu_round.sh .gpu OUTDIR costs     host time per driver call through
#                                              CudaBackend (ccalloc-driver-cost):
#                                              OUTDIR/driver_costs.json, in the format
#                                              of bench/driver_costs/ (commit it as
#                                              bench/driver_costs/<gpu>.json), and
#                                              OUTDIR/vmm_thread_probe.json (kernel
#                                              launches with map/unmap on another
#                                              thread: bench/probes/vmm_thread_probe.cu),
#                                              OUTDIR/vmm_map_cost_probe.json (map,
#                                              access and unmap timed apart),
#                                              OUTDIR/vmm_slab_probe.json (pages
#                                              mapped from an offset into one handle),
#                                              OUTDIR/vmm_handle_count_probe.json and
#                                              vmm_torch_context_probe.json (a map with
#                                              thousands of handles held),
#                                              OUTDIR/vmm_same_range_probe.json (maps
#                                              beside memory kernels are using) and
#                                              OUTDIR/stream_ordered_map_probe.log
#                                              (maps after the block is handed out:
#                                              the modes that cannot hang)
#   scripts/gpu_round.sh .gpu OUTDIR profile   where did my memory go (bench/memory_report.py):
#                                              the profiler on a seq2seq and a UNet (per-step
#                                              reports, kinds == memory_allocated() at every
#                                              boundary, plots, JSON), its overhead, an OOM
#                                              under it, and a memory-history dump with tags
#                                              for memory_viz: OUTDIR/profile.log and
#                                              OUTDIR/profile.tar (render the dump here with
#                                              scripts/render_memory_viz.sh); ~4 minutes
#   scripts/gpu_round.sh .gpu OUTDIR compat    every torch.cuda feature with ccalloc
#                                              as PyTorch's allocator against native
#                                              PyTorch (tests/python/test_torch_compat_gpu.py;
#                                              CUDA-graph case also under memcheck)
#   scripts/gpu_round.sh .gpu OUTDIR integrations the launcher (ccalloc-run, python -m
#                                              ccalloc.run, CCALLOC=1, torchrun, spawned
#                                              workers) and the trainer callbacks and CuPy
#                                              (tests/python/test_launcher_gpu.py,
#                                              test_integrations_gpu.py), each case's
#                                              served/profile line in the log, and one
#                                              Trainer callback's report as
#                                              OUTDIR/trainer_memory.{svg,txt} (~4 minutes)
#   scripts/gpu_round.sh .gpu OUTDIR ddp       DistributedDataParallel on every GPU of the
#                                              machine (two or more: nvidia-h100-x2), a
#                                              GPT-2-sized LM with a new length every step,
#                                              under expandable_segments, the default and
#                                              cross_stream_reuse:False, interleaved rounds
#                                              while 7 minutes last (bench/ddp_step_time.py):
#                                              OUTDIR/ddp.json and .log
#   scripts/gpu_round.sh .gpu OUTDIR peer      PyTorch's own test_cuda.py (and
#                                              test_cuda_expandable_segments.py;
#                                              test_cuda_multigpu.py on two GPUs or
#                                              more) under PyTorch's allocator, ccalloc
#                                              and ccalloc's classic segments in one
#                                              call, a pytest process per test class
#                                              (tests/peer/peer_suite.py): the tests
#                                              that pass natively and fail with ccalloc,
#                                              OUTDIR/peer.json, peer_summary.txt and
#                                              peer_logs.tar. The test files: PEER_TESTS
#                                              (default .scratch/pytorch_tests, from
#                                              scripts/fetch_peer_tests.sh; carry it);
#                                              PEER_K (the -k selection; default
#                                              "memory or snapshot or graph or oom or
#                                              alloc", empty: every test), PEER_BUDGET
#                                              (seconds, default 540: the serial tests alone take ~300 s over the three configurations), PEER_JOBS
#                                              (processes at once, default 4),
#                                              PEER_CONFIGS (default
#                                              native,ccalloc,ccalloc_classic),
#                                              PEER_FILES
#   scripts/gpu_round.sh .gpu OUTDIR sleep     sleep and wake acceptance (bench/sleep_wake.py):
#                                              model A paused with backup while job B
#                                              uses the memory, bit-identical losses and
#                                              CUDA-graph replays against a reference run,
#                                              backup/restore GiB/s against a pinned copy_,
#                                              16 GiB paused without backup; CHECK/MEASURE
#                                              lines, OUTDIR/sleep.json (~2-3 minutes)
#
# Each part writes its logs and JSON under OUTDIR; the exit status is non-zero
# if anything failed. With GPU_ROUND_PACK_LOGS=1 the logs and test XML go
# into one OUTDIR/logs.tar at the end (the JSON, gpu.txt and other tars stay
# as they are): the device tool brings back at most 8 files from a call, and
# `core costs` alone writes more than twenty. Unpack it with
# `tar -xf logs.tar`.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUNDLE=$(cd "${1:?usage: $0 BUNDLE OUTDIR PART...}" && pwd)
OUT=${2:?usage: $0 BUNDLE OUTDIR PART...}
shift 2
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export LD_LIBRARY_PATH="$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
cd "$ROOT"
# What a PyTorch process of the parts below needs to use this checkout's
# ccalloc package with the bundle's plugin (the extension cached across parts).
torch_env=(PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
  CCALLOC_TORCH_LIBRARY="$BUNDLE/allocator/libccalloc_torch.so"
  CCALLOC_CACHE="${TMPDIR:-/tmp}/ccalloc-cache")
rc=0
run() {  # run NAME CMD...: runs, tees to OUT/NAME.log, records failure
  local name=$1
  shift
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$OUT/$name.log"
  local t=${PIPESTATUS[0]}
  echo "=== $name exit $t"
  [[ $t -eq 0 ]] || rc=1
}

gpu_count() {  # the GPUs this machine shows
  nvidia-smi --query-gpu=name --format=csv,noheader | wc -l
}

# build_extension NAME: builds (and caches) ccalloc's PyTorch extension in a
# step of its own, logged as NAME, before a part's timed processes start: none
# of them then waits for a compiler, nor, side by side, shares the host with
# one while its partner trains.
build_extension() {
  run "$1" env "${torch_env[@]}" timeout 150 python3 -c \
    'import ccalloc.torch as ct; print("ccalloc.torch mode:", ct.enable()["mode"])'
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for part in "$@"; do
  case "$part" in
    core)
      for t in "$BUNDLE"/tests/*_gpu_test; do
        run "$(basename "$t")" "$t" --gtest_brief=1 --gtest_output="xml:$OUT/$(basename "$t").xml"
      done
      # memcheck: every device access of the suites checked, leaks reported.
      # API errors are not counted: the suites provoke out-of-memory on purpose.
      for t in "$BUNDLE"/tests/*_gpu_test; do
        run "memcheck_$(basename "$t")" compute-sanitizer --tool memcheck --leak-check full \
          --report-api-errors no --error-exitcode 1 "$t" --gtest_brief=1
      done
      run replay_gpu "$BUNDLE/bench/ccalloc-replay" --device 0 --repeat 3 --verbose \
        --json "$OUT/replay_gpu.json" traces/gpt2.trace.gz traces/resnet.trace.gz
      ;;
    bench)
      # Three interleaved rounds: the host's speed drifts by a third between
      # back-to-back runs (bench/torch_alloc_bench.py --rounds).
      run torch_alloc_bench python3 bench/torch_alloc_bench.py --rounds 3 \
        --gpu-bench "$BUNDLE/bench/ccalloc-gpu-bench" --out "$OUT/bench.json"
      ;;
    torch)
      run gpu_torch_tests scripts/gpu_torch.sh "$BUNDLE" "$OUT" tests
      ;;
    pip)
      # The README's install for PyTorch users, then the package used from
      # another directory; the plugin must not need Abseil.
      run pip_install python3 -m pip install --no-index -v .
      run pip_enable bash -c 'cd /tmp && python3 -c "import ccalloc.torch as ct, torch
i = ct.enable(); x = torch.ones(1 << 20, device=\"cuda\")
print(i[\"mode\"], i[\"library\"], torch.cuda.memory.get_allocator_backend(),
      torch.cuda.memory_allocated(), float(x.sum()))"'
      run pip_ldd bash -c 'L=$(cd /tmp && python3 -c "import ccalloc; print(ccalloc.find_library())");
ldd "$L"; ! ldd "$L" | grep -i absl'
      run pip_host_tests bash -c "cd /tmp && CCALLOC_TEST_INSTALLED=1 python3 $ROOT/tests/python/test_package_host.py"
      ;;
    compat)
      # The installed package when `pip` ran first, else this checkout and the
      # bundle's plugin.
      if [[ -n "${CCALLOC_TEST_INSTALLED:-}" ]]; then
        compat_env=(CCALLOC_TEST_INSTALLED=1)
      else
        compat_env=(PYTHONPATH="$ROOT/python" CCALLOC_TORCH_LIBRARY="$BUNDLE/allocator/libccalloc_torch.so")
      fi
      run torch_compat env "${compat_env[@]}" \
        CCALLOC_CACHE="${TMPDIR:-/tmp}/ccalloc-cache" CCALLOC_COMPAT_MEMCHECK=1 \
        python3 -m pytest -v -rA -p no:cacheprovider tests/python/test_torch_compat_gpu.py \
        --junitxml="$OUT/compat_junit.xml"
      ;;
    integrations)
      it_tmp="${TMPDIR:-/tmp}/ccalloc-integrations"
      rm -rf "$it_tmp"
      build_extension integrations_build_extension
      run launcher_gpu env "${torch_env[@]}" python3 -m pytest -v -rA -p no:cacheprovider \
        tests/python/test_launcher_gpu.py
      run integrations_gpu env "${torch_env[@]}" python3 -m pytest -v -s -rA -p no:cacheprovider \
        --basetemp="$it_tmp" tests/python/test_integrations_gpu.py
      report=$(find "$it_tmp" -path '*transformers_trainer_env*' -name memory.svg | head -1)
      if [[ -n "$report" ]]; then
        cp "$report" "$OUT/trainer_memory.svg"
        cp "$(dirname "$report")/memory.txt" "$OUT/trainer_memory.txt"
        echo "=== the Trainer callback's report (CCALLOC=1 python train.py): $report"
      else
        echo "=== integrations: no Trainer callback report under $it_tmp" >&2
        rc=1
      fi
      ;;
    costs)
      run driver_cost "$BUNDLE/bench/ccalloc-driver-cost" --device 0 --reps 50 \
        --out "$OUT/driver_costs.json"
      if [[ ! -s "$OUT/driver_costs.json" ]]; then
        echo "=== driver_cost wrote no $OUT/driver_costs.json" >&2
        rc=1
      fi
      # Standalone probes, built here (nvcc is on the machine): NAME, the
      # sed range that cuts its JSON from its log, then its arguments.
      probe() {
        local name=$1 json_end=$2
        shift 2
        if nvcc -O2 -std=c++17 -o "$OUT/$name" "bench/probes/$name.cu" -lcuda; then
          run "$name" "$OUT/$name" "$@"
          sed -n "/^{/,/^${json_end}/p" "$OUT/$name.log" > "$OUT/$name.json"
          rm -f "$OUT/$name"
        else
          rc=1
        fi
      }
      # Whether a second thread's map/unmap calls slow kernel launches (the
      # premise of the unmap worker), and where a map's cost is
      # (bench/driver_costs/README.md).
      probe vmm_thread_probe '}' --rounds 5
      probe vmm_map_cost_probe ']}' --reps 200
      # Whether a page can be mapped from an offset into a larger handle,
      # and whether the driver then charges per handle or per mapping.
      probe vmm_slab_probe '}' --reps 40
      # Whether a map costs more with thousands of handles held, bare and
      # in a PyTorch process that has trained.
      probe vmm_handle_count_probe '}' --reps 100
      run vmm_torch_context_probe python3 bench/probes/vmm_torch_context_probe.py --reps 100 \
        --out "$OUT/vmm_torch_context_probe.json"
      # Whether a map into the reservation that running kernels use costs
      # them or the host more than one into another reservation.
      probe vmm_same_range_probe '}' --rounds 5 --passes 60
      # Why maps stay on the allocating thread: a copy queued before its map
      # is refused (memcpy), and mapping on a second thread that only polls
      # events (async --poll 1; synchronizing there can deadlock). The
      # probe's exit status is its finding (non-zero: refused copies), so it
      # does not fail the part; a hang does (timeout).
      if nvcc -O2 -std=c++20 -o "$OUT/somp" bench/probes/stream_ordered_map_probe.cu -lcuda; then
        for mode in "--mode memcpy" "--mode split --iterations 2000" \
                    "--mode async --iterations 2000 --poll 1" "--mode inline --iterations 2000"; do
          # shellcheck disable=SC2086
          timeout 60 "$OUT/somp" $mode 2>/dev/null | tail -1 >> "$OUT/stream_ordered_map_probe.log"
          [[ ${PIPESTATUS[0]} -eq 124 ]] && { echo "=== stream_ordered_map_probe $mode hung" >&2; rc=1; }
        done
        rm -f "$OUT/somp"
      else
        rc=1
      fi
      ;;
    sequential)
      # The extension is built (and cached) first, so no timed process
      # waits for a compiler.
      build_extension sequential_build_extension
      run sequential env "${torch_env[@]}" python3 bench/compare_training.py \
        --workloads "${SEQ_WORKLOADS:-gpt2}" --time-budget "${SEQ_BUDGET:-520}" --timeout 120 \
        ${SEQ_CONFIGS:+--configs "$SEQ_CONFIGS"} --kernel-profile "${SEQ_KERNEL_PROFILE:-0}" \
        --out "$OUT/sequential.json"
      ;;
    twogpu)
      # Side by side with a GPU each (compare_training.py --gpus): the host
      # and its speed states shared, as in sidebyside, but no GPU time
      # slices, so one process's kernels never draw out another's waits
      # (side by side on one H100, UNet's waits ran ten times as long as
      # alone: calls 34-35 of 2026-11-27). Which allocator gets which GPU
      # turns with the round; pool_rounds.py balances over it. Two
      # processes per round so each has its GPU: for the A/A control run
      # again with TWOGPU_CONFIGS=native_expandable,expandable_b, or on four
      # GPUs (nvidia-h100-x4) run both pairs at once: TWOGPU_GPUS=0,1,2,3
      # TWOGPU_CONFIGS=native_expandable,ccalloc,expandable_b,ccalloc_b.
      # Needs two GPUs (nvidia-h100-x2).
      gpus=$(gpu_count)
      if (( gpus < 2 )); then
        echo "=== twogpu: skipped, $gpus GPU (needs two)"
      else
        build_extension twogpu_build_extension
        run twogpu env "${torch_env[@]}" \
          python3 bench/compare_training.py --concurrent --gpus "${TWOGPU_GPUS:-0,1}" \
          --workloads "${TWOGPU_WORKLOADS:-ckpt_lm,gpt2}" \
          --torch-config expandable_b=expandable_segments:True --ccalloc-config ccalloc_b= \
          --configs "${TWOGPU_CONFIGS:-native_expandable,ccalloc}" \
          --rounds "${TWOGPU_ROUNDS:-8}" --steps "${TWOGPU_STEPS:-200}" --warmup 5 \
          --time-budget "${TWOGPU_BUDGET:-520}" --timeout 200 --out "$OUT/twogpu.json"
      fi
      ;;
    ddp)
      # The one place the default's loans between streams could cost
      # overlap: DDP's all-reduce runs on NCCL's stream beside the backward
      # pass. On two H100s (bench/results/h100x2_ddp_step_time_6875960.json)
      # the default lent nothing there (0 loans, 0 device-side waits): NCCL's
      # stream allocates nothing of its own. The extension is built first so
      # the ranks start from the cache.
      gpus=$(gpu_count)
      if (( gpus < 2 )); then
        echo "=== ddp: skipped, $gpus GPU (DDP needs two or more)"
      else
        build_extension ddp_build_extension
        run ddp env "${torch_env[@]}" python3 bench/ddp_step_time.py --gpus "$gpus" \
          --rounds 9 --steps 45 --warmup 5 --time-budget 420 --out "$OUT/ddp.json"
      fi
      ;;
    repeat)
      # Steps whose shapes repeat: no cuDNN or cuBLAS plan to build, so the
      # launching thread's own work shows, and ccalloc's placements
      # (prepare) should fall to ~0 once the shapes have come round
      # (keep_old_mappings), except where a workload moves memory every
      # pass (the UNet on 59cc2c4). The runs stop when the next would end
      # past the call's ten minutes (~20 s a run with its start on an H100).
      repeat_start=$SECONDS
      for round in 1 2 3; do
        for workload in gpt2 ckpt_lm two_streams unet; do
          for config in native_expandable ccalloc; do
            if (( SECONDS - repeat_start > 520 )); then
              echo "=== repeat: time budget spent before round $round $workload $config" \
                | tee -a "$OUT/repeat.log"
              break 3
            fi
            echo "=== repeat: round $round" >> "$OUT/repeat.log"
            env "${torch_env[@]}" python3 bench/probes/shape_repeat_probe.py "$config" "$workload" \
              --passes 6 --no-profile >> "$OUT/repeat.log" 2>&1 || rc=1
          done
        done
      done
      run repeat_summary python3 bench/probes/shape_repeat_summary.py "$OUT/repeat.log" \
        --json "$OUT/repeat.json"
      ;;
    hostprofile)
      # Two streams ran 1.02-1.07x expandable_segments' step time in every
      # call of 2026-11-27 while ccalloc's placements were 3.6 ms of the
      # 12 ms a step of extra launch time: what else the host does there.
      # HP_WORKLOADS names others (seq2seq: 2026-12-04, 1.071x with the same
      # launching-thread CPU time as natively, docs/steady_state.md).
      run hostprofile env "${torch_env[@]}" \
        timeout 400 python3 bench/probes/host_profile.py --workloads "${HP_WORKLOADS:-two_streams}" \
        --configs native_expandable,ccalloc --steps 12 --profile-steps 4 \
        --out "$OUT/hostprofile.json"
      ;;
    traces)
      # Only the traces (one short untimed ccalloc run per workload, each
      # trace saying its step count): OUTDIR/traces.tar, for traces/.
      traces="${TMPDIR:-/tmp}/ccalloc-training-traces"
      rm -rf "$traces"
      run record_traces env "${torch_env[@]}" \
        python3 bench/compare_training.py --configs ccalloc --rounds 0 \
        --record-traces "$traces" --trace-steps 12 --timeout 120 --out "$OUT/traces.json"
      if compgen -G "$traces/*.trace.gz" > /dev/null; then
        tar -C "$traces" -cf "$OUT/traces.tar" . && ls -l "$OUT/traces.tar"
      else
        echo "=== traces: none recorded" >&2
        rc=1
      fi
      ;;
    sleep)
      # The GPU tests of the copies, fences and of the allocator's pause with
      # backup on the device (all in cuda_backend_gpu_test: the typed
      # behaviour suite has none), then the acceptance; a limit keeps a hang
      # from eating the call.
      run sleep_cuda_backend_gpu_test "$BUNDLE"/tests/cuda_backend_gpu_test \
        --gtest_filter='*Copies*:*CopyFence*:*Host*:*Pause*'
      run sleep_wake timeout 300 env "${torch_env[@]}" \
        python3 bench/sleep_wake.py --out "$OUT/sleep.json"
      ;;
    peer)
      # PyTorch's own CUDA tests, native against ccalloc (issue 51). ccalloc is
      # enabled by the CCALLOC=1 hook (python/ccalloc/_boot on PYTHONPATH), so
      # the tests' own subprocesses get it too; the extension is built first so
      # that the concurrent processes all start from the cache. Tests that pass
      # natively and fail with ccalloc fail the part unless docs/pytorch.md's
      # peer-suite section lists them.
      peer_tests=${PEER_TESTS:-$ROOT/.scratch/pytorch_tests}
      if [[ ! -d "$peer_tests" ]]; then
        echo "=== peer: no test files in $peer_tests (scripts/fetch_peer_tests.sh; carry the folder)" >&2
        rc=1
      else
        peer_files=test_cuda.py,test_cuda_expandable_segments.py
        (( $(gpu_count) >= 2 )) && peer_files+=,test_cuda_multigpu.py
        peer_logs="${TMPDIR:-/tmp}/ccalloc-peer-logs"
        rm -rf "$peer_logs"
        build_extension peer_build_extension
        run peer python3 tests/peer/peer_suite.py --tests "$peer_tests" \
          --files "${PEER_FILES:-$peer_files}" \
          -k "${PEER_K-memory or snapshot or graph or oom or alloc}" \
          --budget "${PEER_BUDGET:-540}" --jobs "${PEER_JOBS:-4}" \
          --configs "${PEER_CONFIGS:-native,ccalloc,ccalloc_classic}" \
          --ccalloc-path "$ROOT/python/ccalloc/_boot:$ROOT/python" \
          --ccalloc-env CCALLOC_TORCH_LIBRARY="$BUNDLE/allocator/libccalloc_torch.so" \
          --ccalloc-env CCALLOC_CACHE="${TMPDIR:-/tmp}/ccalloc-cache" \
          --out "$OUT/peer.json" --summary "$OUT/peer_summary.txt" --logs "$peer_logs"
        if [[ -d "$peer_logs" ]]; then
          tar -C "$peer_logs" -cf "$OUT/peer_logs.tar" . && ls -l "$OUT/peer_logs.tar"
        fi
      fi
      ;;
    profile)
      # The extension is built (and cached) first, in its own step, so the
      # report's time budget goes to the GPU work. Results go to a folder that
      # is tarred (the device tool brings back few files), also on failure.
      profile_dir="${TMPDIR:-/tmp}/ccalloc-profile"
      rm -rf "$profile_dir"
      mkdir -p "$profile_dir"
      build_extension profile_build_extension
      run profile env "${torch_env[@]}" timeout 420 python3 bench/memory_report.py \
        --out "$profile_dir"
      tar -C "$profile_dir" -cf "$OUT/profile.tar" . && ls -l "$OUT/profile.tar"
      tar -tvf "$OUT/profile.tar"
      ;;
    *)
      echo "unknown part '$part' (core, bench, torch, compare, training, hostbound, sidebyside, ddp, gpubound, repeat, lockstep, hostprofile, traces, pip, compat, costs, sleep, profile, peer)" >&2
      rc=2
      ;;
  esac
done
if [[ "${GPU_ROUND_PACK_LOGS:-0}" == 1 ]]; then
  # Only files directly under OUTDIR: what the parts write there.
  mapfile -t logs < <(cd "$OUT" && find . -maxdepth 1 -type f \( -name '*.log' -o -name '*.xml' \) \
    -printf '%f\n' | sort)
  if (( ${#logs[@]} > 0 )); then
    if tar -C "$OUT" -cf "$OUT/logs.tar" "${logs[@]}"; then
      (cd "$OUT" && rm -f -- "${logs[@]}")
      echo "=== packed ${#logs[@]} logs into $OUT/logs.tar"
    else
      echo "=== could not pack the logs; they stay as they are" >&2
    fi
  fi
fi
exit $rc
