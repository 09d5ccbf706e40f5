#!/bin/sh
# MPI as a launcher only, where nothing else exists (README "Many machines"): each rank runs
# one shard. Caveat: by default one failing rank aborts the others; with
# --mca orte_abort_on_non_zero_status 0 the others finish but mpirun exits 0 on failure. Either
# way the merge, not mpirun's status, says whether every trace was read.
#   mpirun -np N scripts/cluster/mpi-shards.sh RULES OUTDIR PATH...
#   hmem merge RULES OUTDIR/part-*.db --json report.json
set -eu
rules=$1 out=$2
shift 2
mkdir -p "$out"
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:?not started by mpirun}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE}}
exec "${HMEM:-hmem}" run -q "$rules" "$@" --shard "$rank/$size" --partial "$out/part-$rank.db"
