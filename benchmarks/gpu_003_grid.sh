#!/usr/bin/env bash
# Paper 003's remaining MNIST grid (Table 3 / Fig. 1; van Dijk et al., Algorithm 1, App. H) on one GPU for about
# 8 minutes, the ready runs of each |S_b| stacked into one model (dpcore.training.stacked, issue 44).
#
# Here, before the device call (copies dp_accounting, which the GPU image lacks, and the commit into build/gpu_site):
#     bash benchmarks/gpu_003_grid.sh prepare
# On the device (the run tool), from the repository root:
#     run(command="bash benchmarks/gpu_003_grid.sh", timeout_s=590,
#         carry=["data/MNIST", "build/gpu_site", "build/checkpoints/paper/003_table3"])
# Dry run on any machine (plans the groups, times two rounds of each, trains nothing):
#     bash benchmarks/gpu_003_grid.sh --dry-run
# Afterwards, here: python -m dpcore.experiments.stacked_grid --collect <files_at>   (results + checkpoints)
#
# Every finished run's result lands in $OUT/results/<hash>.json at once (the runner's JSON, as in
# results/paper/003_table3/) and in $OUT/bundle.tar (with the checkpoints of unfinished runs); runs already
# committed under results/paper/003_table3/ are not trained again, carried checkpoints are continued.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "prepare" ]]; then
    site=build/gpu_site
    rm -rf "$site" && mkdir -p "$site"
    src=$(python -c "import dp_accounting, os; print(os.path.dirname(dp_accounting.__file__))")
    cp -r "$src" "$site/dp_accounting"
    find "$site" -name __pycache__ -type d -prune -exec rm -rf {} +
    git rev-parse HEAD > "$site/GIT_COMMIT"
    du -sh "$site"
    exit 0
fi
OUT=${OUT:-build/gpu_003_out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD:$PWD/build/gpu_site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 PYTHONHASHSEED=0
if [[ -z "${DPCORE_GIT_COMMIT:-}" && ! -d .git && -f build/gpu_site/GIT_COMMIT ]]; then
    export DPCORE_GIT_COMMIT=$(cat build/gpu_site/GIT_COMMIT)
fi
PY=${PYTHON:-python3}
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader || true
exec "$PY" -m dpcore.experiments.stacked_grid --experiment 003_table3 --profile paper --out "$OUT" \
    --budget-s "${BUDGET_S:-480}" "$@"
