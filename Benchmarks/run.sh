#!/usr/bin/env bash
# Builds the benchmark corpus if needed, then runs a benchmark: the one documented command.
#   Benchmarks/run.sh index [--items N] [--rounds R]      (issue 2: indexing and search)
#   Benchmarks/run.sh lists-threshold [--sizes N,N…] [--postgres]   (issue 48: where the ranking lists pay)
#   Benchmarks/run.sh replication [--items N]             (issue 3: change log, rebuilds, switch-account)
#   Benchmarks/run.sh remake [--items N] [--rounds R]     (issue 45 §4: words made again for a new analyzer)
#   Benchmarks/run.sh files [--rounds R] [--no-recoll]    (issue 4: indexing the corpus as files, watching)
#   Benchmarks/run.sh tool [--items N] [--queries Q]      (issue 5: tool calls, MCP, schema and page sizes)
# The corpus goes to $CORPUS (default: .build/corpus under the package); building it needs root.
set -euo pipefail
cd "$(dirname "$0")"
corpus=${CORPUS:-$PWD/../.build/corpus}
if [[ ! -d $corpus/Documentation ]]; then
    sh ./make-corpus.sh "$corpus"
fi
extra=()
if [[ $1 == files || $1 == tool ]]; then
    # These run the replica command itself, built in release mode.
    (cd .. && swift build -c release --product replica >/dev/null)
    extra=(--replica "$PWD/../.build/release/replica")
fi
swift build -c release --product replica-bench >/dev/null
exec .build/release/replica-bench "$1" --corpus "$corpus" "${extra[@]}" "${@:2}"
