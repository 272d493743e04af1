#!/usr/bin/env bash
# Issue 51 on one GPU: paper 002's Table I Fashion-MNIST block (002_table1 --only 'fmnist/*', 60 runs: ScatterNet CNN
# on 81x7x7 features, GroupNorm(27), q = 8192/60000, T = 800, DP-SGD and ModelMix, eps 0.2-1.0 and inf, 5 seeds) and
# the positive controls (ref_controls: Opacus's MNIST example x 3 seeds, Tramer-Boneh's nine cells at eps = 3).
#
# Here, before the device call (dp_accounting and the commit into build/gpu_site, as benchmarks/gpu_003_grid.sh):
#     bash benchmarks/gpu_003_grid.sh prepare
# On the device (the run tool), from the repository root:
#     run(command="bash benchmarks/gpu_51_controls.sh", timeout_s=590,
#         carry=["data/MNIST", "data/FashionMNIST", "data/cifar10-jpeg", "build/gpu_site", "build/checkpoints/paper"])
# Tiny check on the CPU (the quick profile's two reduced controls, trained; the FMNIST block dry-run for 2 rounds):
#     bash benchmarks/gpu_51_controls.sh --tiny
# Afterwards, here: copy $OUT/results/paper/<experiment>/*.json that are new into results/paper/<experiment>/ and
# commit them (each is the runner's result JSON; finished runs are skipped, interrupted ones resume from
# $OUT/checkpoints when carried back as build/checkpoints).
#
# Order: cheapest and most needed first (the lane order of ref_controls, then the FMNIST block seed by seed, so an
# interrupted call leaves whole seeds).  BUDGET_S (default 540) stops starting new globs; a run cut by the call's
# limit resumes from its per-epoch checkpoint on the next call.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu_51_out}
mkdir -p "$OUT/results/paper" "$OUT/checkpoints"
export PYTHONPATH="$PWD:$PWD/build/gpu_site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 PYTHONHASHSEED=0
export DPCORE_DATA_MIRROR=${DPCORE_DATA_MIRROR:-../shared/data}
if [[ -z "${DPCORE_GIT_COMMIT:-}" && ! -d .git && -f build/gpu_site/GIT_COMMIT ]]; then
    export DPCORE_GIT_COMMIT=$(cat build/gpu_site/GIT_COMMIT)
fi
PY=${PYTHON:-python3}
[[ -x .venv/bin/python && -z "${PYTHON:-}" ]] && PY=.venv/bin/python
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader || true
run() {  # run <experiment> <profile> <glob>...: results under $OUT (committed ones copied first, so they are skipped)
    local exp=$1 profile=$2
    shift 2
    mkdir -p "$OUT/results/$profile/$exp"
    [[ -d "results/$profile/$exp" ]] && cp -n "results/$profile/$exp"/*.json "$OUT/results/$profile/$exp/" 2>/dev/null || true
    local args=()
    for g in "$@"; do args+=(--only "$g"); done
    "$PY" -m dpcore.experiments run "$exp" --profile "$profile" "${args[@]}" --results "$OUT/results" \
        --checkpoints "${CHECKPOINTS:-build/checkpoints}" --progress log
}
if [[ "${1:-}" == "--tiny" ]]; then
    export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
    run ref_controls quick '*'
    "$PY" -m dpcore.experiments run 002_table1 --profile paper --only 'fmnist/dpsgd/eps1/seed0' --dry-run --threads 1
    exit 0
fi
start=$SECONDS
budget=${BUDGET_S:-540}
globs=(
    'opacus_mnist/nonprivate/*' 'opacus_mnist/eps1.16/*' 'tb/cifar10/scatter_linear/*' 'tb/cifar10/scatter_cnn/*'
    'opacus_mnist/eps6.86/*' 'opacus_mnist/eps2.91/*' 'tb/fmnist/scatter_linear/*' 'tb/fmnist/scatter_cnn/*'
    'tb/mnist/scatter_linear/*' 'tb/mnist/scatter_cnn/*' 'tb/mnist/cnn/*' 'tb/fmnist/cnn/*' 'tb/cifar10/cnn/*'
)
for g in "${globs[@]}"; do
    (( SECONDS - start > budget )) && { echo "budget reached before ref_controls $g"; exit 0; }
    run ref_controls paper "$g"
done
for seed in 0 1 2 3 4; do
    (( SECONDS - start > budget )) && { echo "budget reached before 002_table1 fmnist seed$seed"; exit 0; }
    run 002_table1 paper "fmnist/*/seed$seed"
done
echo "all done in $((SECONDS - start)) s"
