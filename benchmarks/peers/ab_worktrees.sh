#!/bin/bash
# Same-run A/B of our MinHash run between git worktrees (other commits of this repo), alternating:
#   ROUNDS=2 benchmarks/peers/ab_worktrees.sh RECIPE.yaml /tmp/wt_base /tmp/wt_head
# Each round runs `python -m data_juicer.cli.process` in each worktree in turn under mem_timeline.py and
# prints its CPU seconds, peak PSS of the process tree and the md5 of its export (must be equal).
# Warm each worktree's numba cache first (one small run), or its first run includes the compilation.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
RECIPE="$1"; shift
OUT="${AB_OUT:-/tmp/dj-ab}"; mkdir -p "$OUT"
for r in $(seq 1 "${ROUNDS:-2}"); do
  for w in "$@"; do
    tag="$(basename "$w")"
    sed "s#^export_path: .*#export_path: $OUT/out_$tag.jsonl#" "$RECIPE" > "$OUT/recipe_$tag.yaml"
    (cd "$w" && python "$HERE/mem_timeline.py" --interval 0.2 --log "$OUT/${tag}_$r.log" -- \
        python -m data_juicer.cli.process --config "$OUT/recipe_$tag.yaml" > "$OUT/${tag}_$r.out" 2>&1)
    echo "round $r $tag: $(head -2 "$OUT/${tag}_$r.out" | tr '\n' ' ' | cut -c1-110) md5 $(md5sum < "$OUT/out_$tag.jsonl" | cut -c1-8)"
  done
done
