#!/usr/bin/env bash
# bench-startup.sh - CUDA start-up of `haplik score` on 1, 2 and 4 of a host's GPUs (as many as
# it has), with every GPU visible (haplik narrows CUDA's view itself), against
# CUDA_VISIBLE_DEVICES set by hand. Per run: the trace's "engine open" (ms from the run's
# start until the devices can run a kernel), the driver's and the contexts' share
# ("trace engine: driver initialised ..."), and the whole process's wall on a tiny input.
#
#   bash scripts/bench-startup.sh [REPS]          # from a bundle (scripts/make-bundle.sh) or a build
#
# Needs: haplik on PATH (or $HAPLIK), a GPU host. Prints one line per run; medians at the end.
set -o pipefail
reps=${1:-5}
H=${HAPLIK:-$(command -v haplik)}
# shellcheck source=/dev/null # the bundle's own settings, made by scripts/make-bundle.sh
[ -f .bundle/env.sh ] && . .bundle/env.sh && H=$(command -v haplik)
in=${INPUT:-tests/data/tiny.in}
n=$(nvidia-smi -L | grep -c '^GPU')
echo "host: $(nproc) cores, $n GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
lists=(0); [ "$n" -ge 2 ] && lists+=("0,1"); [ "$n" -ge 4 ] && lists+=("0,1,2,3")
one() {   # one run: LABEL "ENV ARGS" FLAGS...
    local label=$1 envs=$2; shift 2
    local s=$EPOCHREALTIME err
    # shellcheck disable=SC2086
    err=$(env $envs HK_TRACE=1 "$H" score "$@" --backend cuda --quiet -o /dev/null "$in" 2>&1 >/dev/null | tr '\n' '\f') || { echo "$label FAILED: ${err//$'\f'/ | }"; return; }
    local wall open drv
    wall=$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b-a}')
    open=$(printf '%s' "$err" | tr '\f' '\n' | awk '/trace .* engine open/{print $3; exit}')
    drv=$(printf '%s' "$err" | tr '\f' '\n' | grep -o 'driver initialised in [0-9.]* ms, contexts created in [0-9.]* ms' | head -1)
    echo "$label wall_s $wall engine_open_ms $open ($drv)"
}
for l in "${lists[@]}"; do
    k=$(( $(tr -cd , <<<"$l" | wc -c) + 1 ))
    for _ in $(seq "$reps"); do
        one "devices=$l (haplik narrows; $n visible)" "-u CUDA_VISIBLE_DEVICES" --devices "$l"
        one "devices=$l (CUDA_VISIBLE_DEVICES=$l by hand)" "CUDA_VISIBLE_DEVICES=$l" --devices "$(seq -s, 0 $((k - 1)))"
        one "devices=$l (all visible: HK_ALL_GPUS_VISIBLE=1)" "-u CUDA_VISIBLE_DEVICES HK_ALL_GPUS_VISIBLE=1" --devices "$l"
    done
done | tee /tmp/hk-startup.txt
echo "medians (engine_open_ms, wall_s):"
awk '{sub(/ wall_s.*/, "", $0); print}' /tmp/hk-startup.txt | sort -u | while read -r label; do
    # the labels hold spaces: take each value by its name (POSIX awk: no asort)
    med() { grep -F "$label wall_s" /tmp/hk-startup.txt | sed -n "s/.* $1 \([0-9.]*\).*/\1/p" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
    printf "  %-50s %8.1f ms %7.3f s\n" "$label" "$(med engine_open_ms)" "$(med wall_s)"
done
