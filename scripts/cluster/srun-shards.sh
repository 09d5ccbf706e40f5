#!/bin/sh
# Inside one allocation (salloc -N 8 --ntasks-per-node=1 --cpus-per-task=32): one step of
# N tasks, each a shard, then the merge (README "Many machines"):
#   scripts/cluster/srun-shards.sh RULES OUTDIR PATH... -- MERGE OPTIONS
# The merge runs RULES with only the MERGE OPTIONS (--allow-io, --out, ... if it needs them).
set -eu
rules=$1 out=$2
shift 2
paths=
while [ $# -gt 0 ] && [ "$1" != -- ]; do paths="$paths $1"; shift; done
[ $# -gt 0 ] && shift
mkdir -p "$out"
# shellcheck disable=SC2086,SC2016
srun sh -c 'exec "${HMEM:-hmem}" run -q "$0" '"$paths"' --shard "$SLURM_PROCID/$SLURM_NTASKS" --partial "$1/part-$SLURM_PROCID.db"' "$rules" "$out" || true
exec "${HMEM:-hmem}" merge "$rules" "$out"/part-*.db "$@"
