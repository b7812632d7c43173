#!/usr/bin/env bash
# Grade a cohort's submissions as a Slurm job array: one shard per array task.
#
#   sbatch --array=0-7 docs/cluster/slurm-array.sh state-02 /shared/week1 /shared/results
#
# Each task grades the files whose path hash falls in its shard (lessonkit reads
# SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT, so the array must be
# contiguous: no step), writes its results to its own folder, and never the gradebook.
# When every task has finished, join them on one machine:
#
#   lessonkit merge /shared/results/shard-* --out /shared/results/week1 --gradebook course.sqlite
#
# Every task must grade on the same input sets, so SEED is fixed for the whole array. Each
# task signs its results with your grading key (~/.config/lessonkit/grading.key, on the
# home folder the nodes share with the machine you merge on; set LESSONKIT_GRADING_KEY to a
# key file of yours where they do not share one): merge refuses results it cannot verify.
# Each learner child runs in bubblewrap, which needs user namespaces on the nodes; where
# they are off, --batch refuses rather than run every submission as you (lessonkit docs
# grading-security).
#SBATCH --job-name=lessonkit-grade
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --time=02:00:00
set -euo pipefail
lesson=${1:?usage: sbatch --array=0-N slurm-array.sh LESSON SUBMISSIONS RESULTS}
submissions=${2:?the submissions folder}
results=${3:?the folder where each shard writes its results}
seed=${SEED:-20261204}
# JAX's compile cache: one absolute path on every node (its keys include the path). Here on
# node-local disk; the trusted reference child writes it, learner children read it only.
export LESSONKIT_COMPILE_CACHE=${LESSONKIT_COMPILE_CACHE:-/var/tmp/lessonkit-jax-cache}
shard=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN + 1))
exec lessonkit check "$lesson" --batch "$submissions" --seed "$seed" \
  --jobs "${SLURM_CPUS_PER_TASK:-2}" --out "$results/shard-$shard-of-$SLURM_ARRAY_TASK_COUNT"
