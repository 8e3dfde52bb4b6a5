#!/usr/bin/env bash
# promtool: the shipped alerting rules are valid, and fire as rules_test.yml
# says on the series written there.
# Usage: rules.sh SOURCE_DIR
set -euo pipefail
src=$1
command -v promtool >/dev/null || {
    echo "SQLOCK_TEST_SKIPPED: promtool is missing (Debian: prometheus)"
    exit 0
}
promtool check rules "$src/tools/sqlock/share/sqlock.rules.yml"
cd "$src/tests/monitoring"
promtool test rules rules_test.yml
