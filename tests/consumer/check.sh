#!/usr/bin/env bash
# Installs the built sqlock into a scratch prefix, then builds and runs the
# consumer project against it with find_package(sqlock), and a second build
# with pkg-config, then compiles the README's code examples against the
# installed headers, and checks the installed man page and bash completion.
# Then the backends as plug-ins: neither the command nor libsqlock links a
# server's client library, a SQLite run never loads one, and a static
# libsqlock (built here) serves both consumer builds with its backends
# compiled in.
# Usage: check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d /tmp/sqlock-consumer-XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/project" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib/x86_64-linux-gnu" \
    "$work/build/consumer" "$work/locks.db"

pcdir=$(dirname "$(find "$work/prefix" -name sqlock.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs sqlock)
# shellcheck disable=SC2086
c++ -std=c++17 "$src/project/main.cpp" $flags -o "$work/consumer-pc"
LD_LIBRARY_PATH="$pcdir/.." "$work/consumer-pc" "$work/locks-pc.db"
# A shared libsqlock needs nothing of its backends' at build time: the .pc
# lists their libraries (Libs.private) only for a static one.
if compgen -G "$pcdir/../libsqlock.so*" >/dev/null; then
    private=$(PKG_CONFIG_PATH="$pcdir" pkg-config --static --libs sqlock)
    [[ $private != *-lpq* && $private != *-lsqlite3* ]] ||
        { echo "check.sh: shared build, yet sqlock.pc lists its backends' libraries: $private" >&2; exit 1; }
fi

# The README's examples (and those of docs/guarded-writes.md, which include
# libpqxx's headers), extracted from the documents themselves so they cannot
# drift: every ```cpp block preceded by a line `<!-- consumer-test: STD... -->`
# must compile warning-free in each standard it names, with GCC and (when
# installed) clang. Compiled, not linked: the examples call the user's own
# functions, which are only declared.
readme=$src/../../README.md
awk -v dir="$work" '
    /^<!-- consumer-test:/ { stds = $0; sub(/^<!-- consumer-test: */, "", stds);
                             sub(/ *-->.*$/, "", stds); armed = 1; next }
    armed && /^```cpp/     { n++; file = dir "/readme-" n ".cpp"; print stds > (dir "/readme-" n ".std");
                             inside = 1; armed = 0; next }
    inside && /^```/       { inside = 0; close(file); next }
    inside                 { print > file }
' "$readme" "$src/../../docs/guarded-writes.md"
cflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags sqlock)
compilers=(c++)
command -v clang++ >/dev/null && compilers+=(clang++)
checked=0
for stdfile in "$work"/readme-*.std; do
    [[ -e $stdfile ]] || break
    example=${stdfile%.std}.cpp
    for std in $(cat "$stdfile"); do
        for cxx in "${compilers[@]}"; do
            # shellcheck disable=SC2086
            if ! "$cxx" -std="$std" -Wall -Wextra -Werror -pedantic $cflags -c "$example" \
                    -o "$work/readme.o"; then
                echo "check.sh: README example $(basename "$example") fails with $cxx -std=$std" >&2
                exit 1
            fi
            [[ $std == c++17 ]] && checked=$((checked + 1))
        done
    done
done
if ((checked == 0)); then
    echo "check.sh: no README example marked for c++17 (<!-- consumer-test: c++17 -->) found in $readme" >&2
    exit 1
fi
echo "README examples compiled cleanly"

# The observer example (docs/examples/observer_histogram.cpp), built with
# warnings as errors against the installed package and run: its histograms
# count the acquisition it made and the one that found the lock busy.
observer_example=$src/../../docs/examples/observer_histogram.cpp
# shellcheck disable=SC2086
c++ -std=c++17 -Wall -Wextra -Werror -pedantic "$observer_example" $flags -o "$work/observer"
observed=$(LD_LIBRARY_PATH="$pcdir/.." "$work/observer" "$work/observer.db")
for sample in 'app_lock_wait_seconds_count{outcome="acquired"} 1' \
              'app_lock_wait_seconds_count{outcome="busy"} 1' \
              'app_lock_renewal_seconds_count{lock="all"} 1'; do
    grep -qF "$sample" <<<"$observed" ||
        { echo "check.sh: the observer example did not print $sample: $observed" >&2; exit 1; }
done
echo "observer example built with -Wall -Wextra -Werror and ran"

# The alerting rules are installed beside the man page's share directory.
[[ -f $work/prefix/share/sqlock/sqlock.rules.yml ]] ||
    { echo "check.sh: share/sqlock/sqlock.rules.yml not installed" >&2; exit 1; }

# The command's man page and bash completion are installed, the man page
# renders without a warning, and both know every command `sqlock --help`
# lists (so a new command cannot be forgotten in either).
sqlock_bin=$work/prefix/bin/sqlock
man_page=$(find "$work/prefix" -path '*/man1/sqlock.1' | head -1)
completion=$(find "$work/prefix" -path '*/bash-completion/completions/sqlock' | head -1)
[[ -n $man_page && -n $completion ]] ||
    { echo "check.sh: man page or bash completion not installed" >&2; exit 1; }
warnings=$(groff -man -ww -z "$man_page" 2>&1)
[[ -z $warnings ]] || { echo "check.sh: man page warnings: $warnings" >&2; exit 1; }
grep -q '@PROJECT_VERSION@' "$man_page" && { echo "check.sh: man page version not filled in" >&2; exit 1; }
complete_words() {  # complete_words WORD... : what bash completes for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sqlock
             printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@"
}
commands=$(LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib/x86_64-linux-gnu" "$sqlock_bin" --help |
    sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z]\+\) .*/\1/p')
[[ -n $commands ]] || { echo "check.sh: no commands found in sqlock --help" >&2; exit 1; }
offered=$(complete_words sqlock "")
for command in $commands; do
    grep -qx "$command" <<<"$offered" ||
        { echo "check.sh: bash completion does not offer '$command'" >&2; exit 1; }
    # Each command has its own entry under COMMANDS: `.B init`, `.BI "run " NAME`.
    grep -Eq "^\.B[IR]* \"?$command( |\"|$)" "$man_page" ||
        { echo "check.sh: man page does not mention '$command'" >&2; exit 1; }
done
# Captured first, then searched: `complete_words ... | grep -q` fails under
# pipefail whenever grep exits before the writer is done (SIGPIPE).
offered=$(complete_words sqlock run job --no)
grep -qx -- --nonblock <<<"$offered" ||
    { echo "check.sh: bash completion misses run's --nonblock" >&2; exit 1; }
offered=$(complete_words sqlock run job -- ech)
grep -qx echo <<<"$offered" ||
    { echo "check.sh: bash completion does not complete the command after --" >&2; exit 1; }
echo "man page and bash completion installed and complete"

# Backends are modules beside libsqlock (lib/sqlock/sqlock-NAME.so), loaded
# when a URL first names them: nothing links libpq or libmariadb.
libsqlock=$(find "$work/prefix" -name 'libsqlock.so.*' -type f | head -1)
for binary in "$sqlock_bin" "$libsqlock"; do
    linked=$(LD_LIBRARY_PATH="$(dirname "$libsqlock")" ldd "$binary")
    if grep -E 'libpq|libmariadb|libmysql' <<<"$linked"; then
        echo "check.sh: $(basename "$binary") links a database server's client library" >&2
        exit 1
    fi
done
# A `sqlock run` on SQLite: its child reads the parent's memory map.
LD_LIBRARY_PATH="$(dirname "$libsqlock")" "$sqlock_bin" --quiet --db "sqlite://$work/maps.db" init
maps=$(LD_LIBRARY_PATH="$(dirname "$libsqlock")" "$sqlock_bin" --db "sqlite://$work/maps.db" \
    run maps -- sh -c 'cat /proc/$PPID/maps')
grep -q 'sqlock-sqlite.so' <<<"$maps" ||
    { echo "check.sh: sqlock run did not load the SQLite module" >&2; exit 1; }
if grep -E 'libpq|libmariadb|sqlock-postgres' <<<"$maps"; then
    echo "check.sh: sqlock run on SQLite loaded another backend" >&2
    exit 1
fi
version=$(LD_LIBRARY_PATH="$(dirname "$libsqlock")" "$sqlock_bin" --version)
grep -q 'backends: sqlite' <<<"$version" ||
    { echo "check.sh: sqlock --version lists no SQLite backend: $version" >&2; exit 1; }
# A missing module is a configuration error (78) naming what provides it.
status=0
missing=$(SQLOCK_BACKEND_PATH=$work/nowhere LD_LIBRARY_PATH="$(dirname "$libsqlock")" \
    "$sqlock_bin" --db "sqlite://$work/maps.db" list 2>&1) || status=$?
[[ $status == 78 && $missing == *"SQLOCK_WITH_SQLITE=ON"* ]] ||
    { echo "check.sh: a missing module gave $status: $missing" >&2; exit 1; }
echo "backends load as modules; none linked"

# A static libsqlock, its backends compiled in, for both consumer builds.
# Without optimisation or debug information: what is checked is how it is
# installed and linked, and a cold -O2 -g build of the library took most of
# this test's time beside the other suites.
root=$(cd "$src/../.." && pwd)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$work/static-build" -DBUILD_SHARED_LIBS=OFF -DSQLOCK_BUILD_TOOLS=OFF \
    -DSQLOCK_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g0 -DNDEBUG" "${launcher[@]}" >/dev/null
cmake --build "$work/static-build" -j2 >/dev/null
cmake --install "$work/static-build" --prefix "$work/static" >/dev/null
cmake -S "$src/project" -B "$work/static-consumer" -DCMAKE_PREFIX_PATH="$work/static" >/dev/null
cmake --build "$work/static-consumer" >/dev/null
"$work/static-consumer/consumer" "$work/locks-static.db"
static_pcdir=$(dirname "$(find "$work/static" -name sqlock.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$static_pcdir" pkg-config --static --cflags --libs sqlock)
# shellcheck disable=SC2086
c++ -std=c++17 "$src/project/main.cpp" $flags -o "$work/consumer-static-pc"
"$work/consumer-static-pc" "$work/locks-static-pc.db"
if compgen -G "$work/static/lib*/**/sqlock-*.so" >/dev/null; then
    echo "check.sh: a static build installed backend modules" >&2
    exit 1
fi
echo "static libsqlock works with find_package and pkg-config"
