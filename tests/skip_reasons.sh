#!/usr/bin/env bash
# Prints why each test of the last `ctest` run in BUILD skipped (CTest lists skipped tests but not
# their reasons): the GTEST_SKIP message of a GoogleTest case, the "SKIP: ..." line of a script
# that exits 77 (SKIP_RETURN_CODE), pytest's "SKIPPED [n] ...: reason" lines. .ci/run calls it
# after each suite. Usage: tests/skip_reasons.sh BUILD
set -euo pipefail
log="${1:?usage: tests/skip_reasons.sh BUILD}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "skip_reasons: no $log (run ctest first)" >&2; exit 1; }
awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", name); reasons = ""; after = 0; next }
  after { reasons = reasons "    " $0 "\n"; after = 0 }
  /: Skipped$/ { after = 1 }
  /^SKIP:|^SKIPPED \[/ { reasons = reasons "    " $0 "\n" }
  /^SKIPPED \[/ { partly = 1 }
  # GoogleTest (SKIP_REGULAR_EXPRESSION); a script exiting 77 prints "SKIP: why" (CTest logs
  # SKIP_RETURN_CODE tests as passed, so the line is the mark).
  /Skip regular expression found|^SKIP:/ { skipped = 1 }
  /^"[^"]*" end time:/ {
    if (skipped) { printf "skipped: %s\n%s", name, (reasons == "" ? "    (no reason printed)\n" : reasons); n++ }
    else if (partly) printf "some cases skipped: %s\n%s", name, reasons
    skipped = 0; partly = 0
  }
  END { printf "%d test%s skipped\n", n, n == 1 ? "" : "s" }
' "$log"
