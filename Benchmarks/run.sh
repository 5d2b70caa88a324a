#!/usr/bin/env bash
# Builds the benchmark corpus if needed, then runs a benchmark: the one documented command.
#   Benchmarks/run.sh index [--items N] [--rounds R]      (issue 2: indexing and search)
# The corpus goes to $CORPUS (default: .build/corpus under the package); building it needs root.
set -euo pipefail
cd "$(dirname "$0")"
corpus=${CORPUS:-$PWD/../.build/corpus}
if [[ ! -d $corpus/Documentation ]]; then
    sh ./make-corpus.sh "$corpus"
fi
swift build -c release --product replica-bench >/dev/null
exec .build/release/replica-bench "$1" --corpus "$corpus" "${@:2}"
