#!/usr/bin/env bash
# Mutation check: applies one-line mutants (the bugs a simulator like this is most likely to
# have) one at a time, rebuilds only what changed in a build folder of its own, and runs only the
# unit tests expected to kill each one. Fails when a mutant survives, when a mutant's code
# pattern no longer occurs exactly once (a refactor must update the list, not drop a mutant
# silently), when a mutant does not compile, or when the killing tests fail unmutated.
#
# Usage: scripts/mutants.sh [build-dir]   (default build-mutants; -j2 as the machine allows)
# Each mutant: file @@ exact code text (occurring once) @@ replacement @@ Catch2 test filter.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-mutants}
jobs=${MUTANTS_JOBS:-2}
start=$(date +%s)

mutants=$(cat <<'EOF'
src/workload/step_builder.cpp @@ s.recipe.main_grad_dtype == "bf16" ? kBf16Bytes : kFp32Bytes; @@ s.recipe.main_grad_dtype == "bf16" ? kBf16Bytes : kBf16Bytes; @@ [bytes]
src/workload/step_builder.cpp @@ ? 1.0 : kBf16Bytes; @@ ? 1.0 : kFp32Bytes; @@ [bytes]
src/workload/step_builder.cpp @@ s.training.seq_len / l.cp / l.tp * @@ s.training.seq_len / l.cp * @@ [bytes]
src/model/ops.cpp @@ p.comm.ep_tokens = routed_tokens; @@ p.comm.ep_tokens = 2 * routed_tokens; @@ [bytes]
src/model/ops.cpp @@ p.comm.ep_combine_token_bytes = h * kBf16Bytes; @@ p.comm.ep_combine_token_bytes = h * dispatch_elem_bytes; @@ [bytes]
src/model/ops.cpp @@ p.comm.tp_gather_bytes = T * h * kBf16Bytes; @@ p.comm.tp_gather_bytes = T / s.tp * h * kBf16Bytes; @@ [bytes]
src/plan/memory.cpp @@ mb.params.expert_params * per_param_state / l.edp) @@ mb.params.expert_params * per_param_state / (l.dp * l.cp)) @@ [memory]
src/plan/memory.cpp @@ mb.params.dense_params * per_param_state / (l.dp * l.cp) @@ mb.params.dense_params * per_param_state / l.dp @@ [memory]
src/plan/memory.cpp @@ params * (sc.recipe.main_grad_dtype == "bf16" ? kBf16 : kFp32); @@ params * (sc.recipe.main_grad_dtype == "bf16" ? kBf16 : kBf16); @@ [memory]
src/plan/memory.cpp @@ const double copies = 2 * quantized_bytes(precision); @@ const double copies = 1 * quantized_bytes(precision); @@ [memory]
src/plan/schedule.cpp @@ case Pass::input_grad: break; @@ case Pass::input_grad: --held[e.chunk]; weight -= w(e.chunk); break; @@ [schedule],[memory]
src/plan/memory.cpp @@ chunk_kinds[static_cast<size_t>(c)], peak.per_chunk[static_cast<size_t>(c)]); @@ chunk_kinds[static_cast<size_t>(c)], peak.per_chunk[static_cast<size_t>(l.chunks - 1 - c)]); @@ [memory]
src/plan/saved_tensors.cpp @@ std::max(1.0, static_cast<double>(a.kv_heads) / s.tp); @@ std::max(1.0, static_cast<double>(a.heads) / s.tp); @@ [memory]
src/plan/schedule.cpp @@ (chunks - 1) * pp : pp - pp_rank - 1; @@ (chunks - 1) * pp : pp - pp_rank; @@ [schedule]
src/plan/schedule.cpp @@ int warmup = l.interleaved ? (pp - pp_rank - 1) * 2 @@ int warmup = l.interleaved ? (pp - pp_rank - 1) * 1 @@ [schedule]
src/cost/kernel_model.cpp @@ c.gpu_seconds = data.seconds + weight.seconds; @@ c.gpu_seconds = data.seconds; @@ [cost]
src/cost/kernel_model.cpp @@ c.flop = 2 * one; @@ c.flop = one; @@ [cost]
src/cost/attention.cpp @@ t.flop = backward ? 2.5 * forward_flop : forward_flop; @@ t.flop = backward ? 2.0 * forward_flop : forward_flop; @@ [cost]
src/cost/section_cost.cpp @@ add(op, model::Pass::forward, GradPart::all, true); @@ (void)op; @@ [cost]
src/workload/step_builder.cpp @@ if (s_.recipe.ep_overlap) { @@ if (false) { @@ [overlap]
src/workload/step_builder.cpp @@ s_.recipe.overlap_grad_reduce ? last_gradient_[c] : end_of_backward; @@ s_.recipe.overlap_grad_reduce ? end_of_backward : end_of_backward; @@ [overlap]
src/model/flops.cpp @@ constexpr double kPasses = 6.0; @@ constexpr double kPasses = 4.0; @@ [model]
src/driver/run.cpp @@ s.training.seq_len / m.step_time_s / s.gpus; @@ s.training.seq_len / m.step_time_s / s.gpus / 2; @@ [metrics]
src/platform/nccl_model.cpp @@ return (busiest.bytes + 2 * busiest.iteration_bytes) * channel_s_per_byte - bandwidth_s; @@ return (busiest.bytes + 1 * busiest.iteration_bytes) * channel_s_per_byte - bandwidth_s; @@ [nccl]
src/platform/nccl_model.cpp @@ return pipeline_fill_s(2, bytes / (concurrent_ops @@ return pipeline_fill_s(3, bytes / (concurrent_ops @@ [nccl]
src/platform/nccl_model.cpp @@ if (nccl_version < 220) { @@ if (nccl_version < 200) { @@ [nccl]
src/platform/nccl_model.cpp @@ return pipeline_fill_s(2 * depth + 3, @@ return pipeline_fill_s(2 * depth + 1, @@ [nccl]
src/platform/nccl_model.cpp @@ while (nc >= 2 && bytes < nc * threads * per_thread) --nc; @@ while (false) --nc; @@ [nccl]
src/platform/nccl_model.cpp @@ return {tree ? 1.0 / 3.8 : 0.5, caps.ll_max * GBps}; @@ return {tree ? 1.0 / 3.8 : 0.5, 1e30}; @@ [nccl]
src/platform/nccl_model.cpp @@ if (batches.empty() || epoch_of_last[c] != epoch || @@ if (batches.empty() || @@ [nccl]
src/platform/nccl_model.cpp @@ const bool ll = peer_bytes <= channels * 16 * KiB; @@ const bool ll = peer_bytes <= channels * 32 * KiB; @@ [nccl]
src/platform/nccl_model.cpp @@ case NcclAlgorithm::nvls_tree: return t.nccl.nvls_tree_channels; @@ case NcclAlgorithm::nvls_tree: return t.nccl.nvls_channels; @@ [nccl]
src/platform/nccl_model.cpp @@ load.latency_s += nc.call_overhead_s; @@ load.latency_s += 0; @@ [nccl]
src/platform/nccl_model.cpp @@ const double host_s = 2.0 * l.size * t.nccl.p2p_host_call_s; @@ const double host_s = 1.0 * l.size * t.nccl.p2p_host_call_s; @@ [nccl]
src/platform/nccl_model.cpp @@ w.send_copying = send - (send >= 3 ? 1 : 0); @@ w.send_copying = send; @@ [nccl]
src/platform/nccl_model.cpp @@ const double step = ll && !self ? 64 * KiB : 512 * KiB; @@ const double step = ll ? 64 * KiB : 512 * KiB; @@ [nccl]
src/platform/nccl_model.cpp @@ const bool nccl_chooses = t.nccl.modelled; @@ const bool nccl_chooses = false; @@ [tuning]
src/platform/nccl_tuning.cpp @@ if (!(ring_s < 25 || (ring_s < 50 && ring_c > 4))) { @@ if (false) { @@ [tuning]
src/platform/collective_load.cpp @@ const int heads = nvls_heads(k, nccl_version); @@ const int heads = k; @@ [nccl]
src/platform/collective_load.hpp @@ return std::min(ranks, nccl_version < 221 ? 8 : kMaxNvlsHeads); @@ return std::min(ranks, kMaxNvlsHeads); @@ [nccl]
src/platform/platform_folded.cpp @@ t.leaf_uplink_bytes_per_s() / gpus_per_rep, @@ t.leaf_uplink_bytes_per_s(), @@ [fabric]
src/platform/ecmp.cpp @@ const double p = 1.0 / open, log_p @@ const double p = 1.0 / uplinks, log_p @@ [fabric]
src/model/routing.cpp @@ const double hit = static_cast<double>(h * L_ - s) / (j * Eg_ - s); @@ const double hit = static_cast<double>(h * L_ - s) / (j * Eg_); @@ [routing]
src/model/routing.cpp @@ if (L_ <= Eg_) return at(s + 1, j + 1, h + 1); @@ if (L_ <= Eg_) return at(s + 1, j + 1, h); @@ [routing]
src/platform/group_layout.cpp @@ return outside_domain > 0 ? static_cast<double>(size - members_in_leaf_group[m]) / outside_domain : 0.0; @@ return outside_domain > 0 ? 1.0 : 0.0; @@ [fabric]
src/platform/group_layout.cpp @@ return domains > 1 ? static_cast<double>(domains - domains_in_leaf_group[m]) / (domains - 1) : 0.0; @@ return domains > 1 ? static_cast<double>(domains - domains_in_leaf_group[m]) / domains : 0.0; @@ [nccl]
src/platform/collective_load.cpp @@ if (nodes == 3) return 1.5; @@ if (nodes == 3) return 2; @@ [nccl]
src/platform/collective_load.cpp @@ use(reduction ? bytes : bytes * (n - 1) / n, @@ use(reduction ? bytes * (n + 1) / n : bytes * (n - 1) / n, @@ [nccl]
src/plan/saved_tensors.cpp @@ s.sc.recipe.activation_fp8_input_store && !act_recomputed; @@ s.sc.recipe.activation_fp8_input_store; @@ [memory]
src/platform/topology.cpp @@ t.spine_routing_efficiency = ecmp_efficiency(flows_per_nic * t.domains_per_leaf, uplinks); @@ t.spine_routing_efficiency = ecmp_efficiency(t.domains_per_leaf, uplinks); @@ [fabric]
src/platform/ep_dispatch.cpp @@ return 4.0 * r.routing.experts / ep * domain_members; @@ return 4.0 * r.routing.experts; @@ [ep]
src/platform/ep_dispatch.cpp @@ const double per_copy = 1.0 + (r.probabilities ? 1 : 0) @@ const double per_copy = 2.0 + 0 * (r.probabilities ? 1 : 0) @@ [ep]
src/platform/ep_dispatch.cpp @@ nvlink_rate = std::min(nvlink_rate, r.sms * rates.forward_sm_bytes_per_s); @@ nvlink_rate = std::min(nvlink_rate, 2 * r.sms * rates.forward_sm_bytes_per_s); @@ [ep]
src/platform/ep_dispatch.cpp @@ load.nic_bytes = r.tokens * plan.domains_per_token * (d - 1) / d * wire_bytes; @@ load.nic_bytes = r.tokens * plan.copies_per_token * (d - 1) / d * wire_bytes; @@ [ep]
src/platform/ep_dispatch.cpp @@ load.nvlink_bytes = r.tokens * plan.copies_per_token * (k - 1) / k * wire_bytes; @@ load.nvlink_bytes = r.tokens * plan.copies_per_token * wire_bytes; @@ [ep]
src/platform/ep_dispatch.cpp @@ plan.domains_per_token = distinct_units(r.routing, n, k); @@ plan.domains_per_token = distinct_units(r.routing, n, 1); @@ [ep]
src/workload/order_statistics.cpp @@ if (q.group == 1) return 1 + s * ( @@ if (q.group == 1) return 1 + c + s * ( @@ [order_statistics]
src/engine/breakdown.cpp @@ if (to <= from || active[kCommKinds] > 0) return; @@ if (to <= from) return; @@ [engine]
src/engine/breakdown.cpp @@ b.exposed_dp_s = charged[4] + charged[5]; @@ b.exposed_dp_s = charged[4]; @@ [engine]
src/report/energy.cpp @@ const double idle_s = b.bubble_s + b.host_overhead_s; @@ const double idle_s = b.bubble_s; @@ [energy]
src/cost/gemm.cpp @@ const double waves = std::ceil(count * split / gpu.sm_count); @@ const double waves = count * split / gpu.sm_count; @@ [cost]
src/cost/gemm.cpp @@ const double body_s = std::max(compute_s, memory_s); @@ const double body_s = compute_s; @@ [cost]
src/workload/expert_load.cpp @@ e.step_cv = std::sqrt(std::expm1(sigma * sigma) / experts_per_rank); @@ e.step_cv = std::sqrt(std::expm1(sigma * sigma)); @@ [variability]
src/workload/expert_load.cpp @@ e.microbatch_cv = std::sqrt((1 - 1.0 / l.ep) / mean_routed); @@ e.microbatch_cv = std::sqrt(1.0 / mean_routed); @@ [variability]
src/workload/variation.cpp @@ st.group = std::min(group, stage_gpus(l_)); @@ st.group = 1; @@ [variability]
src/workload/variation.cpp @@ q.persistent_cv = v_.gpu_speed_cv; @@ q.persistent_cv = 0; @@ [variability]
src/workload/variation.cpp @@ const double load = std::max(0.0, 1 + load_.step_cv * step + load_.microbatch_cv * mb); @@ const double load = std::max(0.0, 1 + load_.step_cv * step); @@ [variability]
src/workload/variation.cpp @@ speed_[static_cast<std::size_t>(r)] = std::max(0.05, 1 + v_.gpu_speed_cv * z); @@ speed_[static_cast<std::size_t>(r)] = 1; @@ [variability]
src/workload/variation.cpp @@ return v.kernel_jitter_cv / std::sqrt(static_cast<double>(std::max<std::int32_t>(t.kernels, 1))); @@ return v.kernel_jitter_cv; @@ [variability]
src/workload/variation.cpp @@ return std::max(1.0, routed_load(rank, t.layer, t.microbatch)); @@ return 1.0; @@ [variability]
src/workload/variation.cpp @@ if (!load_.balanced) folded_ep_bytes_factor_ @@ if (false) folded_ep_bytes_factor_ @@ [variability]
src/workload/variation.cpp @@ return load_.capacity > 0 ? std::min(load, load_.capacity) : load; @@ return load; @@ [variability]
src/platform/platform_full.cpp @@ {up(nic[a]), up(rail_uplink)} @@ {up(nic[a])} @@ [fabric]
src/platform/platform_full.cpp @@ if (g == t.leaf_group_of_domain(b)) @@ if (false) @@ [fabric]
src/driver/run.cpp @@ m.mfu = m.tflops_per_gpu / m.peak_tflops; @@ m.mfu = m.tflops_per_gpu / m.peak_tflops / 2; @@ [engine],[metrics],[properties]
src/sweep/result.cpp @@ ratios.push_back(samples[k].get<double>() / ref_samples[k].get<double>()); @@ ratios.push_back(samples[k].get<double>() / ref_samples[0].get<double>()); @@ [sweep],[samples]
src/driver/run.cpp @@ out.training.global_batch = static_cast<int>(static_cast<long long>(s.training.global_batch) * gpus / s.gpus); @@ out.training.global_batch = s.training.global_batch; @@ [sweep],[properties],[variability]
src/platform/platform_full.cpp @@ nic.push_back(duplex(zone, name + "-nic", t.nic_bytes_per_s, t.nic_latency_s)); @@ nic.push_back(duplex(zone, name + "-nic", 2 * t.nic_bytes_per_s, t.nic_latency_s)); @@ [platform],[fabric]
src/engine/breakdown.cpp @@ b.recompute_s += std::min(task.recompute_seconds, d - charged_host); @@ b.recompute_s += 0; @@ [engine],[plan],[memory]
src/driver/validation_ratchet.cpp @@ if (std::abs(now) > std::abs(before) + slack_points) @@ if (std::abs(now) > std::abs(before) + 2 * slack_points) @@ [validation-logic]
src/driver/validation_ratchet.cpp @@ else if (what == "row" && std::abs(before) <= inside && std::abs(now) > inside) @@ else if (false) @@ [validation-logic]
src/driver/validation_ratchet.cpp @@ missing(base, cur, what, "recorded but no longer validated: record its removal", out); @@ (void)0; @@ [validation-logic]
src/driver/validate.cpp @@ return std::abs(r.error_after) <= std::abs(r.error_before) - 0.005; @@ return std::abs(r.error_after) <= std::abs(r.error_before); @@ [validation-logic]
src/driver/validate.cpp @@ if (r.status != RowStatus::fit) sum += std::abs(r.relative_error); @@ sum += std::abs(r.relative_error); @@ [validation-logic]
src/driver/validate.cpp @@ if (r.status != RowStatus::fit) worst = std::max(worst, std::abs(r.relative_error)); @@ worst = std::max(worst, std::abs(r.relative_error)); @@ [validation-logic]
src/plan/layout.cpp @@ require(tr.seq_len % (in.cp * (in.cp > 1 ? 2LL : 1LL)) == 0, @@ require(tr.seq_len % in.cp == 0, @@ [plan]
src/plan/layout.cpp @@ require(in.tp == 1 || tokens_per_rank % in.tp == 0, @@ require(true, @@ [plan]
src/plan/layout.cpp @@ if (m.attention.kind == "gqa" && m.attention.kv_heads >= in.tp) @@ if (m.attention.kind == "gqa") @@ [plan]
src/plan/layout.cpp @@ require(m.moe.expert_ffn % in.etp == 0, @@ require(true, @@ [plan]
src/plan/layout.cpp @@ if (l.interleaved) @@ if (false) @@ [plan]
EOF
)

# The build folder: configured once (ccache when present), then only changed files rebuild.
if [ ! -f "$build/build.ninja" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
fi
tests_bin="$build/tests/moesim_tests"
build_quietly() { ninja -C "$build" -j "$jobs" moesim_tests >"$build/mutant-build.log" 2>&1; }

# Restore the file being mutated whatever happens (failure, Ctrl-C).
current=""
backup="$build/mutant-original"
restore() {
  if [ -n "$current" ]; then cp "$backup" "$current"; current=""; fi
}
trap restore EXIT
trap 'restore; exit 130' INT TERM

# Every pattern must occur exactly once, before anything is built.
errors=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  file=${line%% @@ *}; rest=${line#* @@ }; pattern=${rest%% @@ *}
  count=$(grep -cF -- "$pattern" "$file" 2>/dev/null || true)
  if [ "$count" != 1 ]; then
    echo "mutants: ERROR: '$pattern' occurs ${count:-0} times in $file (expected once): update scripts/mutants.sh"
    errors=$((errors + 1))
  fi
done <<<"$mutants"
[ "$errors" -eq 0 ] || exit 1

# The killing tests must pass on the unmutated code, or a "kill" means nothing.
build_quietly || { cat "$build/mutant-build.log"; echo "mutants: ERROR: the unmutated build fails"; exit 1; }
filters=$(while IFS= read -r line; do [ -n "$line" ] && echo "${line##* @@ }"; done <<<"$mutants" | sort -u | paste -sd, -)
if ! "$tests_bin" "$filters" >"$build/mutant-tests.log" 2>&1; then
  tail -40 "$build/mutant-tests.log"
  echo "mutants: ERROR: the killing tests ($filters) fail without any mutant"
  exit 1
fi

total=0; killed=0; survivors=()
while IFS= read -r line; do
  [ -z "$line" ] && continue
  file=${line%% @@ *}; rest=${line#* @@ }
  pattern=${rest%% @@ *}; rest=${rest#* @@ }
  replacement=${rest%% @@ *}; filter=${rest##* @@ }
  total=$((total + 1))
  cp "$file" "$backup"
  current=$file
  content=$(<"$backup")
  printf '%s\n' "${content/"$pattern"/"$replacement"}" >"$file"
  t0=$(date +%s)
  if ! build_quietly; then
    tail -20 "$build/mutant-build.log"
    echo "mutants: ERROR: mutant $total ($file: $replacement) does not compile"
    exit 1
  fi
  if timeout 600 "$tests_bin" "$filter" >/dev/null 2>&1; then
    verdict="SURVIVED"; survivors+=("$file: '$pattern' -> '$replacement' ($filter)")
  else
    verdict="killed"; killed=$((killed + 1))
  fi
  echo "mutant $total $verdict by $filter in $(( $(date +%s) - t0 )) s: $file: $replacement"
  restore
done <<<"$mutants"

build_quietly || true  # leave the build folder matching the sources
elapsed=$(( $(date +%s) - start ))
echo "mutants: $killed/$total killed in ${elapsed} s"
if [ "${#survivors[@]}" -gt 0 ]; then
  printf 'mutants: SURVIVED: %s\n' "${survivors[@]}"
  exit 1
fi
