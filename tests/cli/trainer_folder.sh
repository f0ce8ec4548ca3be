#!/bin/bash
# trainer_folder.sh - a Hugging Face Trainer checkpoint folder passes the
# gate (twelfth fresh-user round: its training_args.bin and rng_state.pth,
# pickles of no weights that the restricted reader refuses, made every
# `nanaudit scan checkpoint-500/` exit 3). Found in a folder beside the
# Trainer's trainer_state.json they are skipped with a reason; named as
# inputs, or without trainer_state.json, they are still read and refused,
# and a file of another name with the same content is still an error.
. "$(dirname "$0")/helpers.sh"
C="$NA_TEST_DATA/trainer/checkpoint-500"
cd "$T" || exit 1

expect_exit 0 "$NANAUDIT" scan "$C"
expect_stdout_contains "skipped: $C/rng_state.pth (a Hugging Face Trainer's random number generator states, no weights)"
expect_stdout_contains "skipped: $C/training_args.bin (a Hugging Face Trainer's training arguments, a pickled TrainingArguments with no tensors)"
expect_stdout_contains "$C/optimizer.pt (pytorch)"
expect_stdout_contains "$C/pytorch_model.bin (pytorch)"
expect_stdout_contains "3 files, 4 tensors, 23 elements: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)"
# named: refused as before
expect_exit 3 "$NANAUDIT" scan "$C/training_args.bin"
expect_stderr_contains "training_args.bin: references transformers.training_args.TrainingArguments"
expect_exit 3 "$NANAUDIT" scan "$C/rng_state.pth"
# the per-process name, and another name with the same content
mkdir d
cp "$C/rng_state.pth" d/rng_state_3.pth
cp "$C/training_args.bin" d/args.bin
cp "$C/trainer_state.json" d/
expect_exit 3 "$NANAUDIT" scan d
expect_stdout_contains "skipped: d/rng_state_3.pth (a Hugging Face Trainer's random number generator states"
expect_stderr_contains "d/args.bin: references transformers.training_args.TrainingArguments"
# the names alone, without the Trainer's trainer_state.json: read as any file
mkdir e
cp "$C/rng_state.pth" "$C/training_args.bin" e/
expect_exit 3 "$NANAUDIT" scan e
expect_stderr_contains "e/rng_state.pth: references "
expect_stderr_contains "e/training_args.bin: references transformers.training_args.TrainingArguments"
# the content decides, not the name alone: a plain tensor checkpoint saved
# as training_args.bin or rng_state_0.pth beside trainer_state.json is
# audited (round 29a: skipped by name, a NaN in it passed with exit 0)
mkdir f
cp "$C/trainer_state.json" f/
cp "$C/pytorch_model.bin" f/rng_state_0.pth
"$NA_PYTHON" - "$NA_SRC" <<'PY' || fail "f/training_args.bin"
import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "tools"))
import numpy as np
from make_pt import Storage, Tensor, save
save({"w": Tensor(Storage(np.array([1, np.nan], np.float32)), 0, (2,), (1,))}, "f/training_args.bin")
PY
expect_exit 1 "$NANAUDIT" scan f
expect_stdout_contains "f/training_args.bin (pytorch)"
expect_stdout_contains "FAIL w: 1 NaN value (first at [1])"
expect_stdout_contains "f/rng_state_0.pth (pytorch)"
expect_stdout_lacks "skipped: f/rng_state_0.pth"
pass
