#!/usr/bin/env bash
# The quick start: installs what replica needs, builds it, indexes the documentation every Debian
# machine has under /usr/share/doc into a demo store with the file-tree source, searches it, and runs
# one search-tool call as a language model would.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-system.sh
scripts/setup-model.sh        # the sentence-embedding model, for semantic search
scripts/setup-mcp-client.sh   # the official MCP client, for the tests
swift build -c release
replica=.build/release/replica
store=.build/quickstart-store

if ! "$replica" --store "$store" sources list | grep -q '^docs '; then
    "$replica" --store "$store" accounts sign-in demo
    "$replica" --store "$store" sources add files --account demo --name docs /usr/share/doc
fi
echo "== replica sync (indexing /usr/share/doc)"
# Embedding all of /usr/share/doc for semantic search takes several minutes on two cores, so the big
# demo is searched by its words; semantic search is shown on the licence texts below.
"$replica" --store "$store" sync --no-embed
"$replica" --store "$store" status
echo
echo "== replica search license permission"
"$replica" --store "$store" search --limit 5 license permission
echo
echo "== replica tool call (what a model reads)"
"$replica" --store "$store" tool call --format compact '{"query": "license permission", "limit": 3}'
echo
echo "== semantic search (by meaning alone) over the licences in /usr/share/common-licenses"
licenses=.build/quickstart-licenses
if ! "$replica" --store "$licenses" sources list | grep -q '^licenses '; then
    "$replica" --store "$licenses" accounts sign-in demo
    "$replica" --store "$licenses" sources add files --account demo --name licenses /usr/share/common-licenses
fi
"$replica" --store "$licenses" sync
"$replica" --store "$licenses" search --limit 3 --semantic do I have to publish my source code
