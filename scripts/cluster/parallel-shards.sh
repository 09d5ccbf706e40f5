#!/bin/sh
# N shards with GNU parallel over ssh (--sshlogin; hosts that share the traces' file
# system, the same paths and the working directory), then the merge (README "Many machines"):
#   scripts/cluster/parallel-shards.sh SSHLOGINFILE N RULES OUTDIR PATH... -- MERGE OPTIONS
# The merge runs RULES here, with only the MERGE OPTIONS (--allow-io, --out, ... if it needs
# them): a partial gives it no capability (README "Bad input").
# HMEM names the hmem binary on every host (default: hmem on their PATH).
set -eu
slf=$1 n=$2 rules=$3 out=$4
shift 4
paths=
while [ $# -gt 0 ] && [ "$1" != -- ]; do paths="$paths $1"; shift; done
[ $# -gt 0 ] && shift
mkdir -p "$out"
export HMEM="${HMEM:-hmem}" RULES="$rules" OUT="$out" PATHS="$paths"
# a failed shard is retried twice; whatever the end, the merge judges what is there
seq 0 $((n - 1)) | parallel --will-cite --slf "$slf" --wd "$PWD" --joblog "$out/joblog" --retries 2 \
	--env HMEM --env RULES --env OUT --env PATHS \
	'$HMEM run -q $RULES $PATHS --shard {}/'"$n"' --partial $OUT/part-{}.db' || true
exec "$HMEM" merge "$rules" "$out"/part-*.db "$@"
