#!/usr/bin/env bash
# Runs an MPI job that must fail: passes when it exits non-zero within SECONDS (not killed by the
# timeout) and its output matches REGEX. Usage: expect_job_failure.sh SECONDS REGEX COMMAND...
set -u
seconds=${1:?usage: expect_job_failure.sh SECONDS REGEX COMMAND...}
regex=${2:?usage: expect_job_failure.sh SECONDS REGEX COMMAND...}
shift 2
start=$(date +%s)
output=$(timeout --kill-after=5 "$seconds" "$@" 2>&1)
rc=$?
elapsed=$(( $(date +%s) - start ))
printf '%s\n' "$output"
echo "exit status $rc after ${elapsed} s"
# 124: timeout ended it; 137 is also mpirun's own status when a rank died of SIGKILL, so only late.
if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$elapsed" -ge "$seconds" ]; }; then echo "FAIL: the job hung (killed after $seconds s)"; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "FAIL: the job exited 0"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "FAIL: no line matches /$regex/"; exit 1; fi
echo "PASS: non-zero exit with the message"
