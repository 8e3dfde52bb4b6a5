// Helpers for the PostgreSQL-specific tests: URL surgery, direct queries
// (libpq, independent of the code under test), and control of the throwaway
// server started by src/backends/postgres/testing/server.sh.
//
// Never pass the real password to a Catch macro that prints its operands:
// tests/run-all.sh fails the run if the password appears in any output.
#pragma once

#include <string>

#include "sqlock/options.hpp"

#include "server_url.hpp"
#include "test_support.hpp"

namespace pg_test {

/// $SQLOCK_TEST_PG_URL (the main test will have skipped without it).
std::string url();

/// The password in $SQLOCK_TEST_PG_URL.
std::string password();

// URL surgery: tests/support/server_url.hpp.
using sqlock_test::with_param;
using sqlock_test::with_password;
using sqlock_test::with_user;

/// A name unique to this process and call: "<prefix>_<pid>_<n>".
std::string unique(const std::string& prefix);

/// Options naming `name` as the lock table, the rest left at their defaults.
sqlock::LockerOptions table(const std::string& name);

/// Runs `sql` on a new connection to `url` and returns the first column of
/// the first row ("" if none). Throws std::runtime_error on failure.
std::string query(const std::string& url, const std::string& sql);

/// The last id drawn from `table`'s id sequence. Every acquisition attempt
/// draws one, so a waiter has made its first attempt (and gone to sleep)
/// once this passes the holder's id.
long long last_id_drawn(const std::string& url, const std::string& table);

/// Who says, for `table`, that a waiter sleeps on some name: the pid of the
/// server process holding each shared advisory lock on a waiting key of the
/// table, ascending and comma-separated ("" for none; a pid once per name).
std::string waiting_sessions(const std::string& url, const std::string& table);

/// $SQLOCK_TEST_PG_SCRIPT (testing/server.sh) restart $SQLOCK_TEST_PG_DIR;
/// throws if it fails. The test must carry the tags [needs:server-script]
/// and [needs:server-dir] (backend_needs.hpp), else it fails.
void restart_server();

/// The server log (DIR/postgres.log) from byte `from` on, and its size. The
/// test must carry the tags [needs:server-script] (the script has the
/// server log what the role sqlock_logged runs) and [needs:server-dir],
/// else it fails.
std::string server_log(std::size_t from = 0);
std::size_t server_log_size();

/// A Locker on `db`'s table as the role sqlock_logged, whose statements the
/// server logs (server_log()), each line tagged "app=<app> "; a pool of one
/// connection.
sqlock::Locker logged_locker(const sqlock_test::Database& db, const std::string& app);

/// Creates `table` on the server at `url` (dropping one of that name first)
/// as another program would, with DBIx::Locker's columns alone: no side
/// tables, no function beside it. `locked_by_type` is locked_by's type.
void create_bare_table(const std::string& url, const std::string& table,
                       const std::string& locked_by_type = "text");

/// Occurrences of `needle` in `text`.
std::size_t count(const std::string& text, const std::string& needle);

/// True if `text` contains the test server's password (checked without ever
/// printing it).
bool leaks_password(const std::string& text);

}  // namespace pg_test
