#!/usr/bin/env bash
# prelaunch.sh - refuse to start training when the nanaudit gate fails.
#
#   prelaunch.sh [nanaudit scan options] CKPT... -- COMMAND [ARGS...]
#
# Runs `nanaudit scan` on the checkpoints / data files before COMMAND; on
# exit 0 it execs COMMAND (so signals and the exit status are COMMAND's),
# otherwise it prints why and exits with nanaudit's status: 1 a finding
# fails the policy, 2 bad options, 3 an input could not be read, 4 an
# internal error. Nothing is started then.
#
# torchrun:   prelaunch.sh --policy policy.yaml ckpt/ -- torchrun --nproc-per-node 8 train.py
# Slurm (in the sbatch script, once per job rather than once per rank):
#   prelaunch.sh --policy policy.yaml "$CKPT" -- srun python train.py
#
# Environment: NANAUDIT (default: nanaudit on PATH), NANAUDIT_REPORT (a
# JSON report file to keep; default none).
set -u
NANAUDIT=${NANAUDIT:-nanaudit}
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    args+=("$1")
    shift
done
if [ $# -lt 2 ] || [ ${#args[@]} -eq 0 ]; then
    echo "usage: prelaunch.sh [nanaudit scan options] CKPT... -- COMMAND [ARGS...]" >&2
    exit 2
fi
shift # the --
# (no empty array is expanded: bash before 4.4, e.g. RHEL 7's 4.2 on many
# Slurm clusters, calls "${a[@]}" of an empty array unbound under set -u)
if [ -n "${NANAUDIT_REPORT:-}" ]; then
    "$NANAUDIT" scan --quiet --no-progress --report "$NANAUDIT_REPORT" "${args[@]}"
else
    "$NANAUDIT" scan --quiet --no-progress "${args[@]}"
fi
rc=$?
if [ "$rc" -ne 0 ]; then
    case $rc in
        1) why="a finding fails the policy" ;;
        2) why="bad nanaudit options" ;;
        3) why="an input could not be read or audited" ;;
        *) why="nanaudit failed (exit $rc)" ;;
    esac
    echo "prelaunch: not starting '$1': $why (nanaudit exit $rc)" >&2
    exit "$rc"
fi
exec "$@"
