#!/usr/bin/env bash
# Builds the library's DocC documentation with the toolchain's own docc (no package plugin): the
# modules' symbol graphs (swift package dump-symbol-graph, which builds the package first), Replica's
# merged with those of the modules it re-exports, then `docc convert` over Sources/Replica/Replica.docc.
#
#   scripts/build-docs.sh [OUTPUT]     default OUTPUT: .build/docs/Replica.doccarchive
#
# Exits 0 with a note when the toolchain has no docc; fails when docc reports a warning (a link that
# does not resolve, say), printing them.
set -euo pipefail
cd "$(dirname "$0")/.."
output=${1:-.build/docs/Replica.doccarchive}
if ! command -v docc >/dev/null; then
    echo "build-docs: this toolchain has no docc; the documentation was not built" >&2
    exit 0
fi
# It builds the package, then extracts a graph for every module; the test modules' fail when the tests
# are not built yet, which does not matter here: the library's graph is what is needed.
mkdir -p .build/docs
rm -rf .build/*/symbolgraph
swift package dump-symbol-graph --minimum-access-level public > .build/docs/symbolgraph.log 2>&1 || true
graphs=$(find .build -path "*/symbolgraph" -type d | head -1)
if [[ -z $graphs || ! -f $graphs/Replica.symbols.json ]]; then
    cat .build/docs/symbolgraph.log >&2
    echo "build-docs: no symbol graph for Replica (above)" >&2
    exit 1
fi
# The catalog documents the module apps import, Replica, with everything it re-exports: the graphs of
# ReplicaIndex, ReplicaCore and ReplicaEmbedding (SearchableIndex, AttributeSet, SearchQuery,
# ReplicaError, …) are merged into Replica's, so their pages and links are the library's.
only=.build/docs/replica-graphs
rm -rf "$only" && mkdir -p "$only" "$(dirname "$output")"
python3 scripts/merge-symbol-graphs.py "$graphs" "$only" Replica ReplicaIndex ReplicaCore ReplicaEmbedding
log=.build/docs/docc.log
docc convert Sources/Replica/Replica.docc --additional-symbol-graph-dir "$only" --output-path "$output" \
    --fallback-display-name Replica --fallback-bundle-identifier org.replica.Replica --fallback-bundle-version 1 \
    > "$log" 2>&1 || { cat "$log" >&2; echo "build-docs: docc failed (above)" >&2; exit 1; }
if grep -q "^warning:" "$log"; then
    grep -A6 "^warning:" "$log" >&2
    echo "build-docs: docc reported $(grep -c "^warning:" "$log") warnings (above); the log is $log" >&2
    exit 1
fi
echo "build-docs: $output"
