// Mapping SQLite result codes onto sqlock's error categories.
#pragma once

#include <sqlite3.h>

#include <string>

namespace sqlock::detail::sqlite {

/// Throws the sqlock::error for result `rc` on `db`; `context` says what was
/// being done ("opening '/x/locks.db'"). Busy is a backend error with code
/// SQLITE_BUSY, never "the lock is held"; a missing table is a configuration
/// error that says to run `sqlock init`.
[[noreturn]] void throw_sqlite_error(sqlite3* db, int rc, const std::string& context);

/// The name of an (extended) result code, e.g. "SQLITE_BUSY".
std::string code_name(int rc);

/// Set by the connection so messages can name the database file.
void set_error_database_name(sqlite3* db, const std::string& name);

}  // namespace sqlock::detail::sqlite
