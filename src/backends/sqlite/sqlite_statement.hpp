// A prepared SQLite statement, cached per connection and reused.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace sqlock::detail::sqlite {

/// Borrowed view of a cached sqlite3_stmt: resets and clears bindings when it
/// goes out of scope, so the next user starts clean. Not thread-safe (neither
/// is the connection that owns the statement).
class Statement {
  public:
    Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, const std::string& value);
    Statement& bind_null(int index) {
        sqlite3_bind_null(stmt_, index);
        return *this;
    }

    /// Steps once: true if a row is available, false when done. Throws
    /// sqlock::error (mapped from the SQLite code) on failure.
    bool step();

    std::int64_t column_int64(int col) const { return sqlite3_column_int64(stmt_, col); }
    double column_double(int col) const { return sqlite3_column_double(stmt_, col); }
    std::string column_text(int col) const;
    bool column_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

  private:
    sqlite3* db_;
    sqlite3_stmt* stmt_;
};

}  // namespace sqlock::detail::sqlite
