#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster for the test suite and prints its URL.
# Usage: eval "$(scripts/pg-test-cluster.sh start)"   (exports LORE_TEST_PG_URL)
#        scripts/pg-test-cluster.sh stop
# The cluster lives in $LORE_PG_DIR (default /tmp/lore-pg-test) and is owned by an unprivileged user,
# because PostgreSQL refuses to run as root.
set -euo pipefail
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
DIR=${LORE_PG_DIR:-/tmp/lore-pg-test}
PORT=${LORE_PG_PORT:-55432}
RUN_AS=${LORE_PG_USER:-postgres}

as_user() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u "$RUN_AS" -- "$@"
    else
        "$@"
    fi
}

case "${1:-start}" in
start)
    if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
        echo "echo 'PostgreSQL server binaries not found; install postgresql' >&2"
        exit 1
    fi
    if [ ! -f "$DIR/PG_VERSION" ]; then
        mkdir -p "$DIR"
        [ "$(id -u)" = 0 ] && chown "$RUN_AS" "$DIR"
        as_user "$PG_BIN/initdb" -D "$DIR" -U lore --auth=trust -E UTF8 --no-locale >/dev/null
    fi
    if ! as_user "$PG_BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
        as_user "$PG_BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w \
            -o "-p $PORT -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
    fi
    as_user "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U lore -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'lore_test'" | grep -q 1 \
        || as_user "$PG_BIN/createdb" -h 127.0.0.1 -p "$PORT" -U lore lore_test
    echo "export LORE_TEST_PG_URL=postgres://lore@127.0.0.1:$PORT/lore_test"
    ;;
stop)
    as_user "$PG_BIN/pg_ctl" -D "$DIR" -m fast stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
