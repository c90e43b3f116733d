#!/usr/bin/env bash
# One accordion-sim sweep over a Slurm job array: every array task runs one
# slice of the grid, and a job that waits for all of them merges the slices
# into the CSV that one process would have written, byte for byte
# (docs/simulator.md, "Sweeps").
#
# On the login node, with accordion-sim on PATH (or ACCORDION_SIM=/path/to/it):
#
#   examples/simulator/sweep-slurm.sh run.trace sweep.csv \
#       --bandwidth-gbps 10,25,100 --workers 16,64,256 --etas 0.3,0.5
#
# Everything after the output is the sweep's own flags (the grid, the
# platform, --timing ...), the same for every slice. SLICES (default 8) is the
# number of array tasks; each task's cores run its points side by side
# (--cpus-per-task below, passed on as --jobs). The slices and the logs go to
# sweep.csv.slices/, the merged CSV to sweep.csv.
#
# The script runs twice over: once on the login node, where it submits the
# array and the merge, and once in every array task, where it runs a slice.
#
#SBATCH --job-name=accordion-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=12:00:00
set -euo pipefail

die() {
  echo "sweep-slurm.sh: $*" >&2
  exit 2
}

[[ $# -ge 2 ]] || die "usage: sweep-slurm.sh TRACE OUT.csv [accordion-sim sweep flags...]"
trace=$1
out=$2
shift 2
slices_dir=$out.slices

if [[ -z ${SLURM_ARRAY_TASK_ID:-} ]]; then
  # --- On the login node: check what can be checked now, then submit. ---
  slices=${SLICES:-8}
  [[ $slices =~ ^[1-9][0-9]*$ ]] || die "SLICES must be a positive number, not '$slices'"
  [[ -f $trace ]] || die "$trace: no such trace"
  # The tasks run on other nodes, perhaps in another directory: absolute
  # paths for the trace, the output and the tool (the array inherits the
  # environment: sbatch's default --export=ALL).
  trace=$(realpath "$trace")
  out=$(realpath "$out")
  slices_dir=$out.slices
  ACCORDION_SIM=$(command -v "${ACCORDION_SIM:-accordion-sim}") || die "accordion-sim not found; set ACCORDION_SIM"
  export ACCORDION_SIM
  # Found now rather than by the merge hours later: accordion-sim writes
  # over nothing, so an old output or old slices would stop it.
  [[ ! -e $out ]] || die "$out exists; move it away or choose another output"
  mkdir "$slices_dir" 2>/dev/null || die "$slices_dir exists (slices of an earlier sweep?); remove it first"

  # Tasks 1..SLICES. accordion-sim reads its slice from the array's
  # environment: task SLURM_ARRAY_TASK_ID is slice ID - SLURM_ARRAY_TASK_MIN
  # + 1 of SLURM_ARRAY_TASK_COUNT, so --array=0-7 would do as well; with
  # 1..N the task ID is the slice number, which keeps the names below plain.
  # --parsable prints "jobid" or "jobid;cluster".
  array=$(sbatch --parsable --array="1-$slices" --output="$slices_dir/slice-%a.log" "$0" "$trace" "$out" "$@")
  array=${array%%;*}

  # The merge runs once every task has succeeded (afterok); if one fails,
  # Slurm cancels it (--kill-on-invalid-dep) rather than leave it pending
  # forever. Given the files of every slice, merge checks they are slices of
  # this one sweep, none missing, none twice, every row in its place.
  merge=$(printf '%q ' "$ACCORDION_SIM" merge)
  for ((k = 1; k <= slices; ++k)); do merge+=$(printf '%q ' "$slices_dir/slice-$k.csv"); done
  merge+=$(printf -- '--out %q' "$out")
  merged=$(sbatch --parsable --job-name=accordion-sweep-merge --dependency="afterok:$array" \
    --kill-on-invalid-dep=yes --cpus-per-task=1 --output="$slices_dir/merge.log" --wrap="$merge")
  echo "sweep: array job $array ($slices slices into $slices_dir/), merge job ${merged%%;*} into $out"
  exit 0
fi

# --- In array task SLURM_ARRAY_TASK_ID: one slice. ---
#
# No --shard: accordion-sim takes the slice from SLURM_ARRAY_TASK_ID, _MIN
# and _COUNT. Re-running one failed task is the exception: an array of one
# task (sbatch --array=5) does not say which slice it is, and accordion-sim
# refuses it; say it with SHARD=K/N, remove the killed task's
# slice-K.csv.partial, and merge by hand afterwards:
#
#   rm -f sweep.csv.slices/slice-5.csv.partial
#   SHARD=5/8 sbatch --array=5 --output=sweep.csv.slices/slice-%a.log \
#       examples/simulator/sweep-slurm.sh "$PWD/run.trace" "$PWD/sweep.csv" <the same flags>
#   accordion-sim merge sweep.csv.slices/slice-*.csv --out sweep.csv
shard=()
[[ -z ${SHARD:-} ]] || shard=(--shard "$SHARD")
# ${a[@]+"${a[@]}"}: an empty array under set -u on bash before 4.4.
exec "${ACCORDION_SIM:-accordion-sim}" sweep "$trace" "$@" ${shard[@]+"${shard[@]}"} \
  --jobs "${SLURM_CPUS_PER_TASK:-1}" --out "$slices_dir/slice-$SLURM_ARRAY_TASK_ID.csv"
