#!/usr/bin/env bash
# Installs sqlock's build dependencies from Debian's packages (and, with
# --test, what the test suite needs: each backend's test server and tools,
# libfaketime, clang for the fuzzers). Idempotent; skips apt when everything is
# present.
#
# Each backend of SQLOCK_BACKENDS brings its own (tools/backends.sh): its
# BUILD_DEPENDS from sqlock_backend_declare() in its CMakeLists.txt, and with
# --test the `packages` of its testing/test.conf.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/backends.sh"

# libhowardhinnant-date-dev: time zones for `run --tz` (date/tz.h, and
# libdate-tz, which reads the system's tzdata).
packages=(build-essential cmake pkg-config libcxxopts-dev catch2 nlohmann-json3-dev
          libhowardhinnant-date-dev)
# Assigned apart from `read`, so that a backend without its declarations
# fails here (set -e) instead of adding nothing.
backend_list=$(sqlock_backends)
mapfile -t backends <<<"$backend_list"
for backend in "${backends[@]}"; do
    words=$(backend_declared "$backend" BUILD_DEPENDS)
    read -ra declared <<<"$words"
    packages+=("${declared[@]}")
done
if [[ "${1:-}" == "--test" ]]; then
    for backend in "${backends[@]}"; do
        words=$(backend_test_conf "$backend" packages)
        read -ra declared <<<"$words"
        packages+=("${declared[@]}")
    done
    # groff-base: consumer.install checks the man page; bsdutils: script(1)
    # gives a CLI test a terminal of a chosen width; gdb: the test watchdog's
    # stacks of a hung test. A database server package (mariadb-server,
    # postgresql) starts its system service on installation where the machine
    # allows it (systemd, or no policy-rc.d forbidding it): harmless, the tests
    # start their own servers on free ports with their own option files (each
    # backend's src/backends/<name>/testing/server.sh) and never use it.
    # debhelper, lintian: tests/packaging/check.sh builds and checks the
    # Debian packages (debian/), whose Build-Depends are those above.
    packages+=(faketime libfaketime clang procps util-linux groff-base bsdutils gdb ccache)
    packages+=(debhelper lintian)
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
