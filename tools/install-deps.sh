#!/usr/bin/env bash
# Installs sqlock's build dependencies from Debian's packages (and, with
# --test, what the test suite needs: PostgreSQL and MariaDB servers, PgBouncer,
# libfaketime, clang for the fuzzers). Idempotent; skips apt when everything is
# present.
set -euo pipefail

packages=(build-essential cmake pkg-config libsqlite3-dev libpqxx-dev libpq-dev libmariadb-dev
          libcxxopts-dev catch2 nlohmann-json3-dev)
if [[ "${1:-}" == "--test" ]]; then
    # groff-base: consumer.install checks the man page; bsdutils: script(1)
    # gives a CLI test a terminal of a chosen width; gdb: the test watchdog's
    # stacks of a hung test. mariadb-server, like postgresql, starts its
    # system service on installation where the machine allows it (systemd,
    # or no policy-rc.d forbidding it): harmless, the tests start their own
    # servers on free ports with their own option files
    # (each backend's src/backends/<name>/testing/server.sh) and never use it.
    packages+=(postgresql mariadb-server mariadb-client pgbouncer sqlite3 faketime libfaketime
               clang procps util-linux groff-base bsdutils gdb ccache)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
