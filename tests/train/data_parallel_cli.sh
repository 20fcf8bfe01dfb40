#!/bin/sh
# `mpirun -np 2 ampkit train` (tests/train/data_parallel_tests.cmake; docs/TRAIN.md "Scaling out").
# usage: data_parallel_cli.sh MPIEXEC AMPKIT WORKDIR failures|runs
# Checks (failures: 1 and 1b; runs: 2 to 4), each printing FAIL with the reason when it does not hold:
#   1. a bad option (--batch 3 over 2 ranks) is refused once (one message, from rank 0) with exit
#      code 2, and the job ends (no hang: CTest's timeout would catch one);
#   1b. a setup that fails on rank 1 only (its --data is missing: an MPMD launch) ends the job
#      with exit 1 and rank 1's message, not a hang;
#   2b. small gradient buckets give the bits of one bucket (losses, checkpoint bytes);
#   2. 2 ranks at --batch 8 (4 rows each) follow the losses of one process at --batch 8 within the
#      summation-order tolerance: both compute the mean of n = 8 x 16 token losses (and gradients
#      of the same sums) in different orders, so each step's loss may differ by about
#      2 * gamma_n * loss, gamma_n = n * 2^-24 (~1.5e-5 relative); over the 3 steps, with AdamW,
#      the test allows 1e-4 relative (about twice 3 steps' worth);
#   3. only rank 0 writes: one log line per step, a plot, and a checkpoint whose size equals the
#      one-process checkpoint's (the same file format: same tensors, same metadata keys);
#   5. --zero 1 (ZeRO-1): the losses and checkpoint bytes of plain data parallelism, and its
#      checkpoint resumes on 1 and on 2 ranks exactly as the plain one (the same losses);
#   4. the 2-rank checkpoint resumes on 1 process and on 2 ranks, and both continue as the
#      resumed one-process checkpoint does (losses within the same tolerance).
mpiexec=$1
ampkit=$2
work=$3
part=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
mpirun="$mpiexec --oversubscribe --allow-run-as-root -np 2"
case "$part" in failures | runs) ;; *) echo "FAIL: the 4th argument must be failures or runs, not '$part'"; exit 2 ;; esac
status=0
fail() {
  echo "FAIL: $*"
  status=1
}

# A small text: the same on every machine.
i=0
while [ $i -lt 400 ]; do
  echo "the quick brown fox $i jumps over the lazy dog; a stitch in time saves nine."
  echo
  i=$((i + 1))
done > text.txt
shape="--width 32 --heads 2 --depth 1 --context 16 --threads 1 --precision fp32
       --eval-every 0 --sample-tokens 8 --lr 3e-3 --warmup 1"
common="--data text.txt $shape"

if [ "$part" = failures ]; then
# 1. One refusal of a bad option, exit 2 on the job.
$mpirun "$ampkit" train $common --batch 3 --steps 2 > bad.out 2> bad.err
code=$?
[ $code -eq 2 ] || fail "a bad --batch over 2 ranks exited $code, not 2"
lines=$(grep -c "must be a multiple of 2" bad.err)
[ "$lines" -eq 1 ] || fail "the refusal was printed $lines times, not once: $(cat bad.err)"

# 1b. Rank 1 alone fails to start.
$mpiexec --oversubscribe --allow-run-as-root -np 1 "$ampkit" train $common --batch 8 --steps 2 : \
  -np 1 "$ampkit" train $shape --batch 8 --steps 2 --data missing.txt > mpmd.out 2> mpmd.err
code=$?
[ $code -eq 1 ] || fail "a missing --data on rank 1 exited $code, not 1"
grep -q "rank 1 of 2 failed to start" mpmd.err && grep -q "missing.txt" mpmd.err ||
  fail "rank 1's failure was not reported: $(cat mpmd.err)"

fi

if [ "$part" = runs ]; then
# 2. and 3. 2 ranks against one process, 3 steps, with a checkpoint at the end.
"$ampkit" train $common --batch 8 --steps 3 --log one.log --checkpoint one.ckpt > one.out 2>&1 || fail "one process: $(cat one.out)"
$mpirun "$ampkit" train $common --batch 8 --steps 3 --log two.log --plot two.svg --checkpoint two.ckpt > two.out 2>&1 ||
  fail "2 ranks: $(cat two.out)"
[ "$(grep -c '"step"' two.log)" -eq 3 ] || fail "two.log has $(grep -c '"step"' two.log) lines, not 3 (one writer)"
[ -s two.svg ] || fail "2 ranks wrote no plot"
[ "$(grep -c '^ampkit train:' two.out)" -eq 1 ] || fail "the header was printed more than once: $(cat two.out)"
[ "$(stat -c %s one.ckpt)" -eq "$(stat -c %s two.ckpt)" ] ||
  fail "the 2-rank checkpoint's size $(stat -c %s two.ckpt) differs from one process's $(stat -c %s one.ckpt)"
ls two.ckpt.* > /dev/null 2>&1 && fail "a temporary checkpoint file was left behind"

# Compares the "loss" of two logs line by line: relative difference <= 1e-4.
same_losses() {
  paste -d ' ' "$1" "$2" | awk -v what="$3" '{
      n = split($0, f, /"loss":/); split(f[2], a, ","); split(f[3], b, ",");
      d = a[1] - b[1]; if (d < 0) d = -d;
      if (d > 1e-4 * a[1]) { printf "FAIL: %s: line %d: loss %s vs %s\n", what, NR, a[1], b[1]; bad = 1 }
      else if (d > worst) worst = d
    } END { printf "%s: %d steps agree (largest difference %.3g)\n", what, NR, worst; exit bad }' || status=1
}
same_losses one.log two.log "2 ranks vs one process"

# 2b. Small gradient buckets (--bucket-mb 0.004: several per step) give the same losses and the
# same checkpoint bytes as one bucket after the backward (--bucket-mb 0).
$mpirun "$ampkit" train $common --batch 8 --steps 3 --bucket-mb 0.004 --log small.log --checkpoint small.ckpt \
  > small.out 2>&1 || fail "2 ranks, small buckets: $(cat small.out)"
$mpirun "$ampkit" train $common --batch 8 --steps 3 --bucket-mb 0 --log one-bucket.log --checkpoint one-bucket.ckpt \
  > one-bucket.out 2>&1 || fail "2 ranks, one bucket: $(cat one-bucket.out)"
cmp -s small.ckpt one-bucket.ckpt || fail "the checkpoints of small buckets and of one bucket differ"
[ "$(grep -o '"loss":[^,]*' small.log)" = "$(grep -o '"loss":[^,]*' one-bucket.log)" ] ||
  fail "the losses of small buckets and of one bucket differ"

# 4. Resume the 2-rank checkpoint on 1 process and on 2 ranks, and the 1-process one on 1.
"$ampkit" train --resume one.ckpt --steps 6 --log one-on-1.log --threads 1 > r1.out 2>&1 || fail "resume one: $(cat r1.out)"
"$ampkit" train --resume two.ckpt --steps 6 --log two-on-1.log --threads 1 > r2.out 2>&1 || fail "resume 2 on 1: $(cat r2.out)"
$mpirun "$ampkit" train --resume two.ckpt --steps 6 --log two-on-2.log --threads 1 > r3.out 2>&1 ||
  fail "resume 2 on 2: $(cat r3.out)"
[ "$(grep -c '"step"' two-on-1.log)" -eq 3 ] || fail "the resumed run did not take steps 4 to 6"
same_losses one-on-1.log two-on-1.log "checkpoint of 2 ranks resumed on 1 process"
same_losses one-on-1.log two-on-2.log "checkpoint of 2 ranks resumed on 2 ranks"

# 5. ZeRO-1: the same losses and checkpoint bytes as plain data parallelism, and its checkpoint
# resumes on 1 process and on 2 ranks with --zero 1 as the plain one does.
$mpirun "$ampkit" train $common --batch 8 --steps 3 --zero 1 --bucket-mb 0.004 --log zero.log --checkpoint zero.ckpt \
  > zero.out 2>&1 || fail "2 ranks, --zero 1: $(cat zero.out)"
[ "$(grep -o '"loss":[^,]*' zero.log)" = "$(grep -o '"loss":[^,]*' two.log)" ] ||
  fail "the losses of --zero 1 differ from plain data parallelism's"
cmp -s zero.ckpt two.ckpt || fail "the checkpoint of --zero 1 differs from plain data parallelism's"
"$ampkit" train --resume zero.ckpt --steps 6 --zero 1 --log zero-on-1.log --threads 1 > r4.out 2>&1 ||
  fail "resume --zero 1 on 1: $(cat r4.out)"
$mpirun "$ampkit" train --resume zero.ckpt --steps 6 --zero 1 --log zero-on-2.log --threads 1 > r5.out 2>&1 ||
  fail "resume --zero 1 on 2: $(cat r5.out)"
[ "$(grep -o '"loss":[^,]*' zero-on-1.log)" = "$(grep -o '"loss":[^,]*' two-on-1.log)" ] ||
  fail "the --zero 1 checkpoint resumed on 1 does not continue as the plain one"
[ "$(grep -o '"loss":[^,]*' zero-on-2.log)" = "$(grep -o '"loss":[^,]*' two-on-2.log)" ] ||
  fail "the --zero 1 checkpoint resumed on 2 ranks with --zero 1 does not continue as the plain one"
fi

[ $status -eq 0 ] && echo PASSED
exit $status
