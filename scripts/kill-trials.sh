#!/usr/bin/env bash
# Runs the crash tests with many trials: replica killed at instrumented points (CrashTests) and from
# outside at random instants (OutsideKillTests; FollowedPostgresKillTests for a followed PostgreSQL
# table; SharedDatabaseKillTests for watch, records import, import and mcp sharing a PostgreSQL store),
# each trial checked against what its inputs say the
# index must hold, with SQLite's and FTS5's integrity checks.
#   scripts/kill-trials.sh [TRIALS]          (default 1000 of each)
# Every trial prints its seed; REPLICA_CRASH_SEED=S or REPLICA_KILL_SEED=S replays one.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-1000}
swift build --build-tests
REPLICA_CRASH_TRIALS=$trials REPLICA_KILL_TRIALS=$trials swift test --skip-build --filter 'CrashTests|OutsideKillTests|FollowedPostgresKillTests|SharedDatabaseKillTests' 2>&1 \
    | grep -E 'trial|kills|✔|✘|passed|failed'
