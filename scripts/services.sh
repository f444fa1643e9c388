#!/usr/bin/env bash
# Make sure Postgres (127.0.0.1:5432) and Redis (127.0.0.1:6379) answer; start the locally
# installed ones when they do not. Prints one line per service it had to start.
set -euo pipefail

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_up() {
  for _ in $(seq 1 100); do up "$1" && return 0; sleep 0.2; done
  echo "services: $2 did not come up on 127.0.0.1:$1" >&2; return 1
}

if ! up 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && ls /etc/postgresql >/dev/null 2>&1; then
    echo "services: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
    wait_up 5432 PostgreSQL
  else
    echo "services: PostgreSQL is not reachable on 127.0.0.1:5432 and not installed here; set DATABASE_URL to a running server" >&2
    exit 1
  fi
fi

if ! up 6379; then
  if command -v redis-server >/dev/null 2>&1; then
    echo "services: starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no >/dev/null
    wait_up 6379 Redis
  else
    echo "services: Redis is not reachable on 127.0.0.1:6379 and not installed here; set REDIS_URL to a running server" >&2
    exit 1
  fi
fi
