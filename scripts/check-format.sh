#!/usr/bin/env bash
# Checks that every Swift file the project keeps is formatted as .swift-format says, with the toolchain's
# own `swift format`. The snippet files are left out: scripts/check-snippets.py writes them from the
# README, the DocC articles and the doc comments, whose text they must match.
#
#   scripts/check-format.sh          lint: name each file and line that differs, exit 1 if any does
#   scripts/check-format.sh --fix    format those files in place
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.swift' | grep -v '/Snippets/')
if [[ "${1:-}" == "--fix" ]]; then
    swift format format --in-place --parallel --configuration .swift-format "${files[@]}"
    exit 0
fi
if ! swift format lint --strict --parallel --configuration .swift-format "${files[@]}"; then
    echo "check-format: some Swift files are not formatted as .swift-format says; scripts/check-format.sh --fix formats them" >&2
    exit 1
fi
