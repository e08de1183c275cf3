#!/usr/bin/env bash
# Make sure a PostgreSQL server answers on 127.0.0.1:5432 with trust auth for user postgres.
# Developer and CI machines already run one; elsewhere this installs and starts Debian's.
set -euo pipefail
if pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then exit 0; fi
if ls /etc/postgresql/*/main >/dev/null 2>&1; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
else
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
  version=$(ls /etc/postgresql | head -n1)
  conf=/etc/postgresql/$version/main
  sed -i "s/^#\?listen_addresses.*/listen_addresses = '127.0.0.1'/" "$conf/postgresql.conf"
  printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n' \
    > "$conf/pg_hba.conf"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
fi
for _ in $(seq 1 30); do
  pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "PostgreSQL did not start on 127.0.0.1:5432" >&2
exit 1
