#!/bin/sh
# One shard of hmem run as a Slurm job array task (README "Many machines"):
#   sbatch --array=0-99%50 --cpus-per-task=8 scripts/cluster/slurm-array.sh RULES OUTDIR PATH...
# Task I of N reads the I-th part of the plan of PATH... and writes OUTDIR/part-I.db.
# Then, whatever the array's outcome (afterany: with afterok one failed task means no merge):
#   sbatch --dependency=afterany:JOBID --wrap 'hmem merge RULES OUTDIR/part-*.db --json report.json'
set -eu
rules=$1 out=$2
shift 2
mkdir -p "$out"
exec "${HMEM:-hmem}" run -q "$rules" "$@" -j "${SLURM_CPUS_PER_TASK:-1}" \
	--shard "$SLURM_ARRAY_TASK_ID/${SLURM_ARRAY_TASK_COUNT:?run as a job array task}" \
	--partial "$out/part-$SLURM_ARRAY_TASK_ID.db"
