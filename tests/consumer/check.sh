#!/usr/bin/env bash
# Installs the built sqlock into a scratch prefix, then builds and runs the
# consumer project against it with find_package(sqlock), and a second build
# with pkg-config. Usage: check.sh BUILD_DIR SOURCE_DIR
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
