#!/usr/bin/env bash
# A throwaway PostgreSQL server for replica's tests and benchmarks, in one folder.
#
#   scripts/postgres.sh start DIR [--fast] [--port N]   initialise DIR (first time) and start the server
#   scripts/postgres.sh stop DIR                        stop it (fast shutdown: sessions are ended)
#   scripts/postgres.sh owner-url DIR                   print the URL of replica_owner, the role that owns
#                                                       the schema and applies its migrations
#   scripts/postgres.sh run DIR [--fast] [--port N]     as start, but the server stays in the foreground,
#                                                       a child of the script (for a supervisor: the
#                                                       tests' ChildProcess); it ends as the script does
#   scripts/postgres.sh standby PRIMARY_DIR DIR [--fast] [--run]
#                                                       make DIR a streaming-replication standby of the
#                                                       running server of PRIMARY_DIR (a base backup, the
#                                                       first time) and start it; with --run, in the
#                                                       foreground as run does. Stop it with stop DIR
#
# start, run and standby print the URL replica connects with (`--database`, `$REPLICA_DATABASE`) as the only
# line on standard output; everything else goes to standard error:
#
#   postgresql://replica_app:PASSWORD@/replica?host=DIR&port=5432
#
# The server listens on a Unix socket in DIR only (listen_addresses = ''), so any port number is free:
# the number only names the socket file (DIR/.s.PGSQL.PORT). DIR is made reachable by the server's OS
# user alone (mode 0700), which is what makes the superuser's `trust` sign-in on that socket safe; the
# role replica connects as, replica_app, signs in with its password (scram-sha-256), as on a real
# server. The password is made up at initialisation and kept in DIR/replica_app.password (mode 0600).
#
# --fast turns off fsync, synchronous commit and full-page writes: for tests only. A crash of the
# machine can then corrupt the data folder, and figures measured with it are not PostgreSQL's: never
# use it for the benchmarks you report. It also allows 400 connections, not 100: the test suites run
# in parallel on one server, each replica process they start with a pool of its own.
#
# PostgreSQL refuses to run as root: run as root, the script runs initdb, pg_ctl and postgres as the OS
# user `postgres` (which the Debian package creates) and gives DIR to that user. Run as an ordinary
# user, everything runs as that user. Both ways, the caller can connect: root reaches any folder.
set -euo pipefail

usage() {
    echo "usage: $0 start DIR [--fast] [--port N] | run DIR [--fast] [--port N] | standby PRIMARY_DIR DIR [--fast] [--run] | stop DIR | owner-url DIR" >&2
    exit 2
}
say() { echo "postgres.sh: $*" >&2; }
fail() { say "$*"; exit 1; }

(($# >= 2)) || usage
command=$1
primary=""
if [[ $command == standby ]]; then
    (($# >= 3)) || usage
    primary=$2
    shift
fi
dir=$2
shift 2
fast=0
port=5432
foreground=0
while (($#)); do
    case $1 in
        --fast) fast=1 ;;
        --port) [[ $command != standby ]] && (($# >= 2)) || usage; port=$2; shift ;;
        --run) [[ $command == standby ]] || usage; foreground=1 ;;
        *) usage ;;
    esac
    shift
done
[[ $command == start || $command == stop || $command == run || $command == owner-url || $command == standby ]] || usage
[[ $port =~ ^[0-9]+$ ]] || fail "--port takes a number, not '$port'"

bin=/usr/lib/postgresql/15/bin
if [[ ! -x $bin/postgres ]] && command -v pg_config >/dev/null; then bin=$(pg_config --bindir); fi
[[ -x $bin/postgres && -x $bin/initdb && -x $bin/pg_ctl ]] ||
    fail "PostgreSQL's server programs are not in $bin: install them (scripts/setup-system.sh installs postgresql)"

# Who runs the server: this user, or `postgres` when this is root.
if (($(id -u) == 0)); then
    id postgres >/dev/null 2>&1 || fail "running as root needs the OS user 'postgres' (the postgresql package creates it)"
    as_server() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }
    server_user=postgres
else
    as_server() { "$@"; }
    server_user=$(id -un)
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
data=$dir/data
# A Unix socket's path holds at most 107 bytes: DIR/.s.PGSQL.PORT must fit.
((${#dir} + 12 + ${#port} <= 107)) || fail "the folder's path is too long for a Unix socket (at most $((95 - ${#port})) bytes): $dir"

# Whether the server of DIR is running (pg_ctl status exits 0 when it is).
running() { [[ -f $data/postmaster.pid ]] && as_server "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; }

if [[ $command == stop ]]; then
    if running; then
        as_server "$bin/pg_ctl" -D "$data" stop -m fast -w >&2
    else
        say "no server is running in $dir"
    fi
    exit 0
fi

if ((fast)); then
    options=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400)
else
    options=()
fi

# The URL for replica_app: the socket folder and the password percent-encoded.
percent_encode() {
    local out="" byte
    for byte in $(printf '%s' "$1" | od -An -v -tx1); do
        case $byte in
            # A-Z a-z 0-9 - . / _ ~ stay as they are.
            4[1-9a-f] | 5[0-9a] | 6[1-9a-f] | 7[0-9a] | 3[0-9] | 2d | 2e | 2f | 5f | 7e) out+=$(printf "\\x$byte") ;;
            *) out+="%${byte^^}" ;;
        esac
    done
    printf '%s' "$out"
}
url() {
    local role=${1:-replica_app} password
    password=$(cat "$dir/$role.password")
    printf 'postgresql://%s:%s@/replica?host=%s&port=%s\n' "$role" \
        "$(percent_encode "$password")" "$(percent_encode "$dir")" "$(sed -n 's/^port = \([0-9]*\).*/\1/p' "$data/postgresql.conf" | tail -1)"
}
if [[ $command == owner-url ]]; then
    [[ -f $dir/replica_owner.password ]] || fail "no server was set up in $dir (start one with: $0 start $dir)"
    url replica_owner
    exit 0
fi

start_server() {
    as_server "$bin/pg_ctl" -D "$data" -l "$dir/postgres.log" -o "${options[*]}" -w -t 60 start >&2 ||
        fail "the server did not start; its log is $dir/postgres.log: $(tail -3 "$dir/postgres.log" 2>/dev/null)"
}

# A new cluster in DIR/data: the socket in DIR only, the sign-in rules, replica_app's password.
initialise() {
    [[ -z $(ls -A "$dir" 2>/dev/null | grep -v '^data$') ]] || say "initialising in a folder that is not empty: $dir"
    if [[ $server_user != $(id -un) ]]; then
        chown "$server_user:" "$dir"
        # The server's user must be able to walk down to DIR.
        as_server test -x "$dir" ||
            fail "the user '$server_user' cannot reach $dir: make its parent folders searchable (chmod o+x), or choose a folder under /tmp"
    fi
    chmod 0700 "$dir"
    say "initialising a PostgreSQL cluster in $data (run by '$server_user')"
    as_server "$bin/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=reject --no-sync \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        fail "initdb failed; its output is in $dir/initdb.log: $(tail -3 "$dir/initdb.log")"
    # Only the socket in DIR, only the server's OS user may open it (and root).
    as_server sh -c "cat >> '$data/postgresql.conf'" <<CONF

# scripts/postgres.sh: a throwaway server on a Unix socket in its own folder, no TCP.
listen_addresses = ''
unix_socket_directories = '$dir'
unix_socket_permissions = 0700
port = $port
CONF
    # The sign-in rules: replica_app with its password, as on a server; the superuser without one on
    # this folder's socket, which only the server's OS user (and root) can reach.
    as_server sh -c "cat > '$data/pg_hba.conf'" <<'HBA'
# TYPE  DATABASE  USER         ADDRESS  METHOD
local   all       replica_app           scram-sha-256
local   all       replica_owner         scram-sha-256
local   all       all                   trust
HBA
    (umask 077 && head -c 18 /dev/urandom | base64 | tr '+/' '-_' >"$dir/replica_app.password")
    (umask 077 && head -c 18 /dev/urandom | base64 | tr '+/' '-_' >"$dir/replica_owner.password")
}

# Gives replica its role and its database, on the running server of a new cluster.
create_role_and_database() {
    # What an operator runs once, as a superuser in psql, to give replica its database and its roles
    # (docs/postgres.md shows this block; `psql -v password=... -v owner_password=...` sets the passwords):
    # - replica_owner owns the database and the schema `replica`: replica applies its migrations when it
    #   opens the database as this role (once per upgrade), and the search functions it owns may bypass
    #   row-level security (BYPASSRLS), stating the account condition themselves;
    # - replica_app is the role replica runs as: it signs in and does nothing else server-wide (not a
    #   superuser, no database, no role, NOBYPASSRLS), owns nothing, and reads and writes replica's tables
    #   under their policies, through the default privileges below. The functions it may call (the eight
    #   replica calls as it) are granted by replica's migrations, never through default privileges.
    psql -X -q -v ON_ERROR_STOP=1 -v password="$(cat "$dir/replica_app.password")" \
        -v owner_password="$(cat "$dir/replica_owner.password")" \
        "postgresql:///postgres?host=$(percent_encode "$dir")&port=$port&user=postgres" >&2 <<'SQL'
SET password_encryption = 'scram-sha-256';
CREATE ROLE replica_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION BYPASSRLS PASSWORD :'owner_password';
CREATE ROLE replica_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'password';
CREATE DATABASE replica OWNER replica_owner ENCODING 'UTF8' TEMPLATE template0;
REVOKE ALL ON DATABASE replica FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE replica TO replica_app;
\connect replica
SET ROLE replica_owner;
CREATE SCHEMA replica;
GRANT USAGE ON SCHEMA replica TO replica_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA replica GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO replica_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA replica GRANT USAGE ON SEQUENCES TO replica_app;
SQL
    # pg_hba.conf, for an operator: a line for replica_app with scram-sha-256 over the way it connects,
    # e.g. `hostssl replica replica_app 10.0.0.0/8 scram-sha-256`.
}

# A standby of PRIMARY_DIR's server in DIR/data: a base backup streamed from the primary with its WAL,
# which `-R` marks as a standby (standby.signal) following the primary (primary_conninfo), then its own
# socket in DIR. The roles and their passwords are the primary's: they come with the backup.
make_standby() {
    [[ -d $primary ]] || fail "no folder $primary: start the primary first ($0 start $primary)"
    primary=$(cd "$primary" && pwd -P)
    [[ -f $primary/data/PG_VERSION && -f $primary/replica_app.password ]] ||
        fail "no server was set up in $primary (start one with: $0 start $primary)"
    [[ $primary != "$dir" ]] || fail "the standby needs a folder of its own, not the primary's"
    local primary_port
    primary_port=$(sed -n 's/^port = \([0-9]*\).*/\1/p' "$primary/data/postgresql.conf" | tail -1)
    "$bin/pg_isready" -q -h "$primary" -p "$primary_port" || fail "the server in $primary is not running: start it first ($0 start $primary)"
    # The primary lets its superuser stream from its own socket (a replication connection matches only
    # lines that name `replication`); a primary set up before this line existed gets it now.
    if ! grep -q '^local *replication *postgres *trust' "$primary/data/pg_hba.conf"; then
        as_server sh -c "echo 'local   replication postgres               trust' >> '$primary/data/pg_hba.conf'"
        psql -X -q -c 'SELECT pg_reload_conf()' "postgresql:///postgres?host=$(percent_encode "$primary")&port=$primary_port&user=postgres" >/dev/null ||
            fail "could not reload the primary's sign-in rules"
    fi
    if [[ $server_user != $(id -un) ]]; then
        chown "$server_user:" "$dir"
        as_server test -x "$dir" ||
            fail "the user '$server_user' cannot reach $dir: make its parent folders searchable (chmod o+x), or choose a folder under /tmp"
    fi
    chmod 0700 "$dir"
    say "making $data a standby of the server in $primary (a base backup)"
    as_server "$bin/pg_basebackup" -D "$data" -h "$primary" -p "$primary_port" -U postgres -R -X stream -c fast --no-sync \
        >"$dir/basebackup.log" 2>&1 || fail "pg_basebackup failed; its output is in $dir/basebackup.log: $(tail -3 "$dir/basebackup.log")"
    # Its own socket, in its own folder; the same port number names it (no TCP, so no clash).
    as_server sh -c "cat >> '$data/postgresql.conf'" <<CONF

# scripts/postgres.sh standby: this copy's socket is in its own folder.
unix_socket_directories = '$dir'
CONF
    as_server rm -f "$data/postmaster.pid" "$data/postmaster.opts"
    (umask 077 && cp "$primary/replica_app.password" "$primary/replica_owner.password" "$dir/")
}

# A standby is ready once it streams from its primary (its WAL receiver is up): before that, replica
# would find it receiving nothing and pass it over.
wait_streaming() {
    local waited
    for ((waited = 0; ; waited++)); do
        [[ $(psql -X -A -t -q "postgresql:///postgres?host=$(percent_encode "$dir")&port=$port&user=postgres" \
            -c "SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'" 2>/dev/null) == 1 ]] && return 0
        ((waited < 600)) || { say "the standby in $dir did not stream from its primary within 60 s (its log says why)"; return 1; }
        sleep 0.1
    done
}

fresh=0
standby=0
if [[ $command == standby ]]; then
    standby=1
    [[ -f $data/PG_VERSION ]] || make_standby
    [[ -f $data/standby.signal ]] || fail "$data is not a standby's data folder"
    ((foreground)) && command=run || command=start
elif [[ ! -f $data/PG_VERSION ]]; then
    initialise
    fresh=1
fi
port=$(sed -n 's/^port = \([0-9]*\).*/\1/p' "$data/postgresql.conf" | tail -1)

if [[ $command == start ]]; then
    if running; then
        say "the server in $dir is running already"
    else
        start_server
        if ((fresh)); then
            create_role_and_database ||
                { as_server "$bin/pg_ctl" -D "$data" stop -m immediate >/dev/null 2>&1; fail "creating the role and the database failed"; }
        fi
    fi
    ((standby)) && { wait_streaming || fail "the standby is not streaming"; }
    url
    exit 0
fi

# run: the server is this script's child, in its process group, never a daemon (pg_ctl would detach it
# into a session of its own), so that whoever supervises the script ends the server with it, set-up
# included. A SIGINT or SIGTERM to the script is passed on to the server (which gets it anyway when
# the whole group is signalled), and the script ends as the server does. The server logs to standard
# error.
running && fail "the server in $dir is running already (in the background): stop it first"
if [[ $server_user != $(id -un) ]]; then
    (exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$bin/postgres" -D "$data" "${options[@]}") &
else
    (exec "$bin/postgres" -D "$data" "${options[@]}") &
fi
server=$!
trap 'kill -INT "$server" 2>/dev/null' INT TERM
for ((waited = 0; ; waited++)); do
    "$bin/pg_isready" -q -h "$dir" -p "$port" && break
    kill -0 "$server" 2>/dev/null || fail "the server did not start (its log is on standard error)"
    ((waited < 600)) || { kill -INT "$server"; fail "the server did not accept connections within 60 s"; }
    sleep 0.1
done
if ((fresh)); then
    create_role_and_database || { kill -INT "$server"; fail "creating the role and the database failed"; }
fi
if ((standby)); then wait_streaming || { kill -INT "$server"; fail "the standby is not streaming"; }; fi
url
status=0
while kill -0 "$server" 2>/dev/null; do wait "$server" && status=0 || status=$?; done
exit "$status"
