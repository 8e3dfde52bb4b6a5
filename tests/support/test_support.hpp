// Shared helpers for sqlock's tests: the backend under test, scratch files,
// child processes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "sqlock/sqlock.hpp"

namespace sqlock_test {

/// Which backend this test binary runs against: "sqlite" or "postgres",
/// from $SQLOCK_TEST_BACKEND (default sqlite).
const std::string& backend();

/// A fresh, empty lock table on the backend under test: a new SQLite file,
/// or a new table name on the PostgreSQL server at $SQLOCK_TEST_PG_URL.
/// Already initialised.
struct Database {
    std::string url;
    std::string table;
    sqlock::Locker open(sqlock::LockerOptions options = {}) const;
};
Database fresh_database();

/// A private scratch directory for this test process (removed at exit).
const std::string& scratch_dir();

/// Runs `body(i)` in `n` forked children; returns their exit codes (a child
/// killed by signal s reports 128+s). `body`'s return value is the exit code.
std::vector<int> run_children(int n, const std::function<int(int)>& body);

/// Waits for `condition` up to `timeout`, re-checking every few ms.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Reads the ids one per line from `path` (written by holders in
/// acquisition order) and returns them; fencing tests check they increase.
std::vector<long long> read_ids(const std::string& path);

/// Runs a SQL statement directly on the database (sqlite3 CLI-free helper for
/// tests that plant odd rows): SQLite via the C API, PostgreSQL via libpq.
void exec_sql(const Database& db, const std::string& sql);

}  // namespace sqlock_test
