#!/usr/bin/env bash
# The quick start: installs what replica needs, builds it, indexes the documentation every Debian
# machine has under /usr/share/doc into a demo store, and searches it.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-system.sh
swift build -c release
replica=.build/release/replica
store=.build/quickstart-store

echo "== indexing /usr/share/doc into $store"
python3 scripts/docs-to-jsonl.py /usr/share/doc | "$replica" --store "$store" import --account demo -
"$replica" --store "$store" status
echo
echo "== replica search \"license\" \"permission\""
"$replica" --store "$store" search --limit 5 license permission
