#!/usr/bin/env bash
# watchdog.sh PROGRAM [ARGS...] — runs one test binary under a time limit.
#
# ctest runs every test through this script (tests/CMakeLists.txt sets it as
# the test launcher). It exists for the failures ctest cannot diagnose:
#
# - A hang. After $SQLOCK_TEST_TIMEOUT seconds (default 480, below ctest's
#   own TIMEOUT) it prints the stacks of every process the test started
#   (`gdb -batch -ex 'thread apply all bt'`), then kills them all and fails.
#   ctest's timeout would kill the test binary alone, silently, and leave its
#   children running.
# - Leftovers. The test runs in a session of its own (setsid), so every
#   process it starts is in its process group unless it leaves on purpose (a
#   daemon such as a restarted PostgreSQL server does). Whatever is still in
#   the group once the test binary has exited was left behind by the test:
#   the watchdog names it, kills it and fails the test.
set -uo pipefail

limit=${SQLOCK_TEST_TIMEOUT:-480}
[[ $# -ge 1 ]] || { echo "usage: $0 PROGRAM [ARGS...]" >&2; exit 2; }

# Without job control the background child is not a group leader, so setsid
# makes it one in place (no fork): $! is the test's pid and its group id.
setsid "$@" &
test_pid=$!

# Interrupted (Ctrl-C, a runner giving up): take the test's processes along.
trap 'kill -KILL -- "-$test_pid" 2>/dev/null; exit 130' INT TERM HUP

# The timer must not hold ctest's output pipe: ctest reads it to the end.
sleep "$limit" </dev/null >/dev/null 2>&1 &
timer=$!

group_members() {  # the processes still in the test's group
    pgrep -g "$test_pid" 2>/dev/null || true
}

describe() {  # pid: one line naming the process
    local cmd
    cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || cmd="?"
    echo "pid $1: ${cmd:0:300}"
}

wait -n -p finished "$test_pid" "$timer"
status=$?
expired=0
[[ ${finished:-} == "$timer" ]] && expired=1

if [[ $expired == 1 ]]; then
    echo "watchdog: $1 still running after ${limit}s; stacks of its processes:" >&2
    for pid in $(group_members); do
        describe "$pid" >&2
        if command -v gdb >/dev/null; then
            timeout 60 gdb -q -batch -p "$pid" -ex 'thread apply all bt' 2>&1 |
                grep -vE '^\[(New LWP|Thread debugging|Inferior)|^warning: ' >&2
        fi
    done
    kill -KILL -- "-$test_pid" 2>/dev/null
    wait "$test_pid" 2>/dev/null
    echo "watchdog: FAILED: timed out after ${limit}s" >&2
    exit 124
fi
kill "$timer" 2>/dev/null

# Children told to die with the test (PR_SET_PDEATHSIG, a closed pipe) may
# take a moment: await an empty group for up to 5 s before calling it a leak.
for _ in $(seq 100); do
    [[ -z $(group_members) ]] && break
    sleep 0.05
done
left=$(group_members)
if [[ -n $left ]]; then
    echo "watchdog: FAILED: the test left processes running (killed now):" >&2
    for pid in $left; do describe "$pid" >&2; done
    kill -KILL -- "-$test_pid" 2>/dev/null
    [[ $status == 0 ]] && status=1
fi
exit "$status"
