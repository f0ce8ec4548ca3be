#!/usr/bin/env bash
# run_torch.sh [MIB] - PyTorch and NumPy readers against safetensors
# (issue 8, "Performance"): the same float32 data (MIB MiB, default 1024,
# standard normal, 8 tensors) saved by torch.save (zip), by the legacy
# torch.save format, by np.save and by safetensors; each scanned by
# nanaudit (best of 3, page cache warm), plus torch.load + the same
# statistics in torch (count NaN/Inf, min, max, mean, std, z-score
# outliers) as the baseline a user would otherwise write.
#
# Needs Debian's python3-torch (scripts/setup.sh) for torch.save, and the
# main venv for safetensors. Prints a table; never asserts timings.
# Env: NANAUDIT (default build/nanaudit), NA_PYTHON (default .venv/bin/python, else python3: bench/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
MIB=${1:-1024}
NANAUDIT=${NANAUDIT:-build/nanaudit}
. bench/lib.sh # the cd above: the repository's root
PY=$(bench_python "$PWD")
NANAUDIT=$(bench_binary "$NANAUDIT")
TPY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/natorch.XXXXXX")
trap 'rm -rf "$W"' EXIT

"$TPY" - "$W" "$MIB" <<'EOF'
import sys, numpy as np, torch, collections
w, mib = sys.argv[1], int(sys.argv[2])
n = mib * 2**20 // 4 // 8
g = torch.Generator().manual_seed(0)
sd = collections.OrderedDict((f"layer{i}.weight", torch.randn(n, generator=g)) for i in range(8))
torch.save(sd, f"{w}/model.pt")
torch.save(sd, f"{w}/legacy.pt", _use_new_zipfile_serialization=False)
np.save(f"{w}/data.npy", torch.cat(list(sd.values())).numpy())
np.savez(f"{w}/raw.npz", **{k.replace(".", "_"): v.numpy() for k, v in sd.items()})
EOF
"$PY" - "$W" <<'EOF'
import sys, numpy as np, zipfile
from safetensors.numpy import save_file
w = sys.argv[1]
z = np.load(f"{w}/raw.npz")
save_file({k.replace("_", "."): z[k] for k in z.files}, f"{w}/model.safetensors")
EOF

best() { # best of 3 wall times of "$@"
    local b=999999 t s e
    for _ in 1 2 3; do
        s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        b=$(echo "if ($t < $b) $t else $b" | bc -l)
    done
    printf '%.3f' "$b"
}
BYTES=$((MIB * 1048576))
row() { printf '| %-44s | %8s s | %5.2f GB/s |\n' "$1" "$2" "$(echo "$BYTES / $2 / 1000000000" | bc -l)"; }
echo "| file / tool ($MIB MiB float32, 8 tensors)     | time       | rate       |"
echo "|----------------------------------------------|------------|------------|"
ST=$(best "$NANAUDIT" scan "$W/model.safetensors"); row "safetensors: nanaudit scan" "$ST"
PT=$(best "$NANAUDIT" scan "$W/model.pt"); row "torch.save zip: nanaudit scan" "$PT"
LG=$(best "$NANAUDIT" scan "$W/legacy.pt"); row "torch.save legacy: nanaudit scan" "$LG"
NP=$(best "$NANAUDIT" scan "$W/data.npy"); row ".npy: nanaudit scan" "$NP"
NZ=$(best "$NANAUDIT" scan "$W/raw.npz"); row ".npz (stored): nanaudit scan" "$NZ"
TL=$(best "$TPY" -c '
import sys, torch
sd = torch.load(sys.argv[1], weights_only=True)
for t in sd.values():
    x = t.double(); f = torch.isfinite(x); v = x[f]
    n, m, s = int(f.sum()), v.mean(), v.std(unbiased=False)
    int(torch.isnan(x).sum()), int(torch.isinf(x).sum()), v.min(), v.max()
    int(((v - m).abs() > 6 * s).sum())
' "$W/model.pt"); row "torch.load + the same statistics in torch" "$TL"
printf '\ntorch zip / safetensors speed: %.0f %%\n' "$(echo "100 * $ST / $PT" | bc -l)"
