#!/usr/bin/env bash
# Runs the README's test command (`swift test`) N times on a clean clone of this repository's HEAD, and
# reports each failing run with the names of the tests that failed. Flaky is failing: exits 1 unless all
# N runs pass. The clone is built once (the first run builds it); its folder is removed at the end unless
# KEEP=1. Usage: scripts/repeat-tests.sh N   (the system packages must be installed: scripts/setup-system.sh)
set -euo pipefail
runs=${1:?"usage: scripts/repeat-tests.sh N"}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "repeat-tests: N must be a whole number from 1, not '$runs'" >&2; exit 2; }
repository=$(cd "$(dirname "$0")/.." && pwd)
clone=$(mktemp -d "${TMPDIR:-/tmp}/replica-repeat-XXXXXX")
[[ ${KEEP:-} == 1 ]] || trap 'rm -rf "$clone"' EXIT
git clone --quiet --no-hardlinks "$repository" "$clone/replica"
# What the tests use beside the code (the MCP client), as .ci/run and the quick start set it up.
if [[ -d $repository/.tools ]]; then ln -s "$repository/.tools" "$clone/replica/.tools"; fi
cd "$clone/replica"
echo "repeat-tests: $runs runs of 'swift test' on a clean clone of $(git rev-parse --short HEAD) in $clone/replica"
passed=0
failed=0
for run in $(seq 1 "$runs"); do
    log="$clone/run-$run.log"
    started=$(date +%s)
    if swift test >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "run $run: passed in $(($(date +%s) - started)) s ($(grep -Eo 'Test run with [0-9]+ tests' "$log" | tail -1))"
    else
        failed=$((failed + 1))
        echo "run $run: FAILED in $(($(date +%s) - started)) s"
        # Swift Testing names each failed test with ✘; XCTest with "error: -[…] : …" lines.
        grep -E '^✘ Test [^ ]+ (failed|recorded)|error: -\[' "$log" | sed -E 's/^/    /' | sort -u | head -40 || true
        mkdir -p "$repository/.build-repeat" && cp "$log" "$repository/.build-repeat/run-$run.log"
        echo "    the whole log: .build-repeat/run-$run.log"
    fi
done
echo "$passed passed, $failed failed"
((failed == 0))
