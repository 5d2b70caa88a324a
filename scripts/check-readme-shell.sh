#!/usr/bin/env bash
# Runs the README's shell examples that a throwaway PostgreSQL server can run, as written: the standby
# example (a primary, the owner's first opening, a standby, an import and a search through the standby)
# and the PostgreSQL example before it (its URL replaced by the throwaway server's). The files they name
# (notes.jsonl) are made here; /tmp/pg-primary and /tmp/pg-standby become folders of a scratch folder.
# `replica` is the release build (scripts/quickstart.sh makes it), or REPLICA_BIN.
#
#   scripts/check-readme-shell.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
binary=${REPLICA_BIN:-$root/.build/release/replica}
[[ -x $binary ]] || { echo "check-readme-shell: no replica at $binary: build it (swift build -c release) or set REPLICA_BIN" >&2; exit 1; }
scratch=$(mktemp -d /tmp/replica-readme-XXXXXX)
# The servers run as `postgres` when this is root: it must reach the scratch folder.
chmod 755 "$scratch"
cleanup() {
    for server in pg-standby pg-primary; do
        [[ -d $scratch/$server ]] && "$root/scripts/postgres.sh" stop "$scratch/$server" >/dev/null 2>&1 || true
    done
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$scratch/bin" "$scratch/work"
ln -s "$binary" "$scratch/bin/replica"
ln -s "$root/scripts" "$scratch/work/scripts"
cat > "$scratch/work/notes.jsonl" <<'JSON'
{"uniqueIdentifier": "note:alice:1", "attributes": {"title": "Launch plan", "textContent": "The launch risk is the supplier."}}
JSON

# The README's ```sh blocks, by a line each holds.
block() {
    python3 - "$1" <<'PYTHON'
import re, sys
readme = open("README.md", encoding="utf-8").read()
blocks = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if sys.argv[1] in b]
if len(blocks) != 1:
    sys.exit(f"check-readme-shell: {len(blocks)} shell blocks of the README hold '{sys.argv[1]}', not one")
print(blocks[0])
PYTHON
}
standby_example=$(block 'scripts/postgres.sh standby')
database_example=$(block 'export REPLICA_DATABASE=')

run() {
    local name=$1 script=$2
    script=${script//\/tmp\/pg-primary/$scratch/pg-primary}
    script=${script//\/tmp\/pg-standby/$scratch/pg-standby}
    echo "== check-readme-shell: $name"
    (cd "$scratch/work" && PATH="$scratch/bin:$PATH" REPLICA_STORE="$scratch/store" REPLICA_MODEL_DIR=off \
        bash -euo pipefail -c "$script" 2>&1) | tee "$scratch/$name.log"
}

run standby "$standby_example"$'\n'"echo \"primary=\$primary\" > '$scratch/urls'"
grep -q "^note:alice:1 — Launch plan" "$scratch/standby.log" || { echo "check-readme-shell: the standby example's search did not find the note" >&2; exit 1; }
grep -q "read database: a standby serving reads" "$scratch/standby.log" || { echo "check-readme-shell: status did not show the standby serving" >&2; exit 1; }
primary=$(sed -n 's/^primary=//p' "$scratch/urls")

# The PostgreSQL example, on the same server (alice is signed in already: its sign-in is a no-op).
# The URL in single quotes (the throwaway server's holds '?' and '&'), put in by Python: bash's own
# substitution reads '&' in the replacement as the text it replaces.
run database "$(python3 -c 'import sys; print(sys.argv[1].replace("postgresql://replica_app:secret@db.internal/replica", "\x27" + sys.argv[2] + "\x27"))' \
    "$database_example" "$primary")"
grep -q "^note:alice:1 — Launch plan" "$scratch/database.log" || { echo "check-readme-shell: the PostgreSQL example's search did not find the note" >&2; exit 1; }
grep -q "^database: postgresql: replica_app" "$scratch/database.log" || { echo "check-readme-shell: the PostgreSQL example's status did not name the database" >&2; exit 1; }
echo "check-readme-shell: the README's PostgreSQL shell examples ran as written"
