#!/usr/bin/env bash
# check.sh — builds the Debian packages (debian/) from a copy of the tree and
# checks them as an operator would use them, on this machine:
#
#   1. debian/control agrees with the backends' declarations (each backend's
#      PACKAGE is a package there, its BUILD_DEPENDS are build dependencies);
#   2. `dpkg-buildpackage -us -uc -b` builds every package, and lintian finds
#      no error in them (its warnings are printed);
#   3. with only `sqlock` (and the library) installed, `sqlock run` works on
#      SQLite, no installed ELF file of theirs links a server's client
#      library, and a postgresql:// or mariadb:// URL says which package to
#      install (exit 78);
#   4. once the backend packages are installed, both backends load (a URL to
#      a closed port fails as "unreachable", exit 69), and a program built
#      with libsqlock-dev (pkg-config, -Wall -Wextra -Werror) runs;
#   5. purging the packages leaves none of their files behind.
#
# It installs and purges packages (dpkg), so it runs as root and refuses to
# start if any of sqlock's packages is installed already. The build uses the
# compiler cache when ccache is installed; the copy's path is left out of the
# cache's hash, so runs from other copies hit it.
#
# Usage: tests/packaging/check.sh   (tests/run-all.sh runs it)
#   SQLOCK_PACKAGES_OUT=DIR   also copy the .deb and .changes files to DIR
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/tools/backends.sh"

fail() {
    echo "packaging: $*" >&2
    exit 1
}

[[ $(id -u) -eq 0 ]] || fail "must run as root (it installs the packages with dpkg)"
packages=$(sed -nE 's/^Package: *(.+)$/\1/p' "$root/debian/control")
for p in $packages; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    if [[ -n "$status" && "$status" != not-installed ]]; then
        fail "$p is on this machine already ($status); purge it first (dpkg --purge $p)"
    fi
done

# 1. The control file against the backends' declarations.
for backend in $(sqlock_backends); do
    package=$(backend_declared "$backend" PACKAGE)
    grep -qx "Package: $package" "$root/debian/control" ||
        fail "backend $backend is shipped by $package, which debian/control does not build"
    for dep in $(backend_declared "$backend" BUILD_DEPENDS); do
        # Each item of the list: the package name, then a version or a comma.
        sed -n '/^Build-Depends:/,/^[A-Z][a-z-]*: /p' "$root/debian/control" |
            grep -qE "(^Build-Depends:|^)[[:space:]]*$dep[[:space:]]*(\(|,|$)" ||
            fail "backend $backend builds with $dep, which debian/control's Build-Depends lacks"
    done
done

work=$(mktemp -d)
installed=()
cleanup() {
    [[ ${#installed[@]} -eq 0 ]] || dpkg --purge "${installed[@]}" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# 2. Build from a copy of the tree as git sees it (tracked files and new ones
# not ignored: what a clone of this state would hold), so that nothing of a
# build directory in the checkout leaks in and the .debs land in $work.
src=$work/sqlock
mkdir -p "$src"
# (A tracked file deleted in the working tree is left out, as a commit of
# this state would.)
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e "$f" || -L "$f" ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -C "$src" -xf -
# debhelper runs the build with a HOME of its own, inside the tree: the
# cache's directory is named, or ccache would start an empty one there.
if command -v ccache >/dev/null; then
    CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir)}
    export CCACHE_DIR
fi
export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=1
# Debian's flags map the build path away (-ffile-prefix-map=PATH=.), which
# puts the copy's path into every compiler command line and so into ccache's
# hash; the flag only affects the paths recorded in debug information.
strip_map="-ffile-prefix-map=$src=."
export DEB_CFLAGS_STRIP=$strip_map DEB_CXXFLAGS_STRIP=$strip_map
# Without optimisation, debug information or debug-symbol packages: what is
# checked is the packaging, and a release build (what `dpkg-buildpackage`
# does without these) takes about twice the CPU time on the 2-core CI.
export DEB_BUILD_OPTIONS="nocheck noopt noddebs parallel=$(nproc)"
export DEB_CXXFLAGS_APPEND=-g0
echo "building the packages (dpkg-buildpackage -us -uc -b)"
if ! (cd "$src" && nice -n 15 dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1); then
    tail -n 40 "$work/build.log" >&2
    fail "dpkg-buildpackage failed"
fi
changes=$(ls "$work"/sqlock_*.changes)
if [[ -n "${SQLOCK_PACKAGES_OUT:-}" ]]; then
    mkdir -p "$SQLOCK_PACKAGES_OUT"
    cp "$work"/*.deb "$work"/*.buildinfo "$changes" "$SQLOCK_PACKAGES_OUT"/
fi
debs=$(ls "$work"/*.deb)
deb() { ls "$work/$1"_*.deb; }
echo "built: $(cd "$work" && ls ./*.deb | sed 's|^\./||' | tr '\n' ' ')"

echo "lintian (errors fail; every tag is listed)"
lintian_status=0
lintian --fail-on error --info "$changes" >"$work/lintian.log" 2>&1 || lintian_status=$?
cat "$work/lintian.log"
[[ $lintian_status -eq 0 ]] || fail "lintian found errors"

# 3. The command alone.
# Listed before dpkg runs: a half-done installation is purged too.
installed=(sqlock libsqlock0)
dpkg -i "$(deb libsqlock0)" "$(deb sqlock)" >/dev/null
[[ $(command -v sqlock) == /usr/bin/sqlock ]] || fail "sqlock is not /usr/bin/sqlock after installing"
db_dir=$work/db
mkdir -p "$db_dir"
/usr/bin/sqlock init --db "sqlite://$db_dir/locks.db" >/dev/null
/usr/bin/sqlock run --db "sqlite://$db_dir/locks.db" packaged-job -- \
    sh -c 'echo "$SQLOCK_ID" >"$1"' sh "$work/ran"
[[ -s "$work/ran" ]] || fail "sqlock run on SQLite did not run its command"
echo "ok: sqlock run on SQLite with only sqlock and libsqlock0 installed"

for p in sqlock libsqlock0; do
    while read -r file; do
        [[ -f "$file" && ! -L "$file" ]] || continue
        [[ $(head -c 4 "$file" | od -An -c | tr -d ' ') == '177ELF' ]] || continue
        if ldd "$file" | grep -Ei 'libpq|libmariadb|libmysqlclient'; then
            fail "$file (package $p) links a server's client library"
        fi
    done < <(dpkg -L "$p")
done
echo "ok: no file of sqlock or libsqlock0 links libpq, libpqxx or libmariadb"

# A server backend's URL without its package: exit 78 naming the package.
expect_missing() {  # URL PACKAGE
    local out status=0
    out=$(/usr/bin/sqlock list --db "$1" 2>&1) || status=$?
    [[ $status -eq 78 ]] || fail "$1 without its backend: exit $status, not 78: $out"
    grep -q "the package $2" <<<"$out" || fail "$1 without its backend does not name $2: $out"
    echo "ok: $(head -n 1 <<<"$out")"
}
expect_missing "postgresql://sqlock@127.0.0.1:1/sqlock" sqlock-backend-postgresql
expect_missing "mariadb://sqlock@127.0.0.1:1/sqlock" sqlock-backend-mariadb

# 4. The backends and the development files.
installed=(sqlock libsqlock0 sqlock-backend-postgresql sqlock-backend-mariadb libsqlock-dev)
dpkg -i "$(deb sqlock-backend-postgresql)" "$(deb sqlock-backend-mariadb)" \
    "$(deb libsqlock-dev)" >/dev/null
expect_unreachable() {  # URL
    local out status=0
    out=$(/usr/bin/sqlock list --db "$1" 2>&1) || status=$?
    [[ $status -eq 69 ]] || fail "$1 with its backend installed: exit $status, not 69: $out"
    echo "ok: the backend loaded: $(head -n 1 <<<"$out")"
}
expect_unreachable "postgresql://sqlock@127.0.0.1:1/sqlock?connect_timeout=5"
expect_unreachable "mariadb://sqlock@127.0.0.1:1/sqlock"

cat >"$work/consumer.cpp" <<'EOF'
#include <sqlock/sqlock.hpp>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    sqlock::Locker locker(argv[1]);
    locker.init();
    sqlock::Lock lock = locker.lock("packaged-consumer");
    std::printf("held %s as id %lld\n", lock.name().c_str(), static_cast<long long>(lock.id()));
    return 0;
}
EOF
# shellcheck disable=SC2046  # pkg-config's words are separate flags
g++ -std=c++17 -Wall -Wextra -Werror -o "$work/consumer" "$work/consumer.cpp" \
    $(pkg-config --cflags --libs sqlock)
"$work/consumer" "sqlite://$db_dir/locks.db" | grep -q "^held packaged-consumer as id " ||
    fail "a program built with libsqlock-dev did not take its lock"
echo "ok: a program built against libsqlock-dev (pkg-config) takes a lock"

# 5. Purge: none of the packages' files may remain.
listed=$work/listed
for p in "${installed[@]}"; do dpkg -L "$p"; done | sort -u >"$listed"
dpkg --purge "${installed[@]}" >/dev/null
installed=()
left=()
while read -r path; do
    [[ -d "$path" && ! -L "$path" ]] && continue  # shared directories (/usr/lib, ...)
    [[ -e "$path" || -L "$path" ]] && left+=("$path")
done <"$listed"
for dir in /usr/lib/*/sqlock /usr/include/sqlock /usr/share/sqlock /usr/lib/*/cmake/sqlock; do
    [[ -e "$dir" ]] && left+=("$dir")
done
[[ ${#left[@]} -eq 0 ]] || fail "left behind after purging: ${left[*]}"
echo "ok: purging the packages left none of their files"
echo "packaging: all checks passed ($(wc -w <<<"$debs") packages)"
