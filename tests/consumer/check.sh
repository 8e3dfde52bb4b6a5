#!/usr/bin/env bash
# Installs the built sqlock into a scratch prefix, then builds and runs the
# consumer project against it with find_package(sqlock), and a second build
# with pkg-config, then compiles the README's code examples against the
# installed headers, and checks the installed man page and bash completion.
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
# lists them (Requires.private) only for a static one.
if compgen -G "$pcdir/../libsqlock.so*" >/dev/null; then
    private=$(PKG_CONFIG_PATH="$pcdir" pkg-config --print-requires-private sqlock)
    [[ -z $private ]] ||
        { echo "check.sh: shared build, yet sqlock.pc requires privately: $private" >&2; exit 1; }
fi

# The README's examples, extracted from the README itself so they cannot
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
' "$readme"
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
