#!/bin/bash
# tests/gpu/clean.sh (step 5 of the GPU machine's run.sh, issue 6) runs
# only where a GPU is lent, a few minutes per session at most: a script
# error found there costs the session its GPU check. So CI runs it here
# with NA_GPU_CLEAN_DEVICE=cpu (the CPU against itself: the script's
# files, option sets, cmp and compare.py plumbing) on files 2^7 times
# smaller. Skipped in sanitizer builds (the same code runs in the others).
. "$(dirname "$0")/helpers.sh"
nm "$NANAUDIT" 2>/dev/null | grep -qE '__(asan|tsan)_init' && { echo "SKIP $NA_TEST_NAME: sanitizer build"; exit 0; }
cd "$T" || exit 1
NA_GPU_CLEAN_DEVICE=cpu NA_GPU_CLEAN_SHIFT=7 NA_PYTHON="$NA_PYTHON" \
    bash "$NA_SRC/tests/gpu/clean.sh" "$NANAUDIT" "$T" > out.txt 2>&1
rc=$?
grep -q "^clean: 0 failure(s)$" out.txt && [ "$rc" = 0 ] || { tail -20 out.txt; fail "tests/gpu/clean.sh (cpu vs cpu): exit $rc"; }
[ "$(grep -c '^ok ' out.txt)" -ge 40 ] || fail "fewer cases than expected: $(grep -c '^ok ' out.txt)"
pass
