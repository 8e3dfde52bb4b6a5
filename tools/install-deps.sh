#!/usr/bin/env bash
# Installs sqlock's build dependencies from Debian's packages (and, with
# --test, what the test suite needs: a PostgreSQL server and PgBouncer, libfaketime, clang
# for the fuzzers). Idempotent; skips apt when everything is present.
set -euo pipefail

packages=(build-essential cmake pkg-config libsqlite3-dev libpqxx-dev libpq-dev
          libcxxopts-dev catch2 nlohmann-json3-dev)
if [[ "${1:-}" == "--test" ]]; then
    # groff-base: consumer.install checks the man page; bsdutils: script(1)
    # gives a CLI test a terminal of a chosen width; gdb: the test watchdog's
    # stacks of a hung test.
    packages+=(postgresql pgbouncer sqlite3 faketime libfaketime clang procps util-linux groff-base
               bsdutils gdb ccache)
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
