// Prepared — one use of a prepared sqlite3_stmt, cached per connection and
// reused. ("Statement" is the SQL text, kept in sqlite_statements.cpp.)
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace sqlock::detail::sqlite {

/// Borrowed view of a cached sqlite3_stmt: resets and clears bindings when it
/// goes out of scope, so the next user starts clean. Not thread-safe (neither
/// is the connection that owns the statement).
class Prepared {
  public:
    Prepared(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
    Prepared(const Prepared&) = delete;
    Prepared& operator=(const Prepared&) = delete;
    ~Prepared() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }

    Prepared& bind(int index, std::int64_t value);
    Prepared& bind(int index, const std::string& value);
    Prepared& bind_null(int index) {
        sqlite3_bind_null(stmt_, index);
        return *this;
    }

    /// Steps once: true if a row is available, false when done. Throws
    /// sqlock::error (mapped from the SQLite code) on failure, saying it
    /// happened while `doing`.
    bool step(const std::string& doing = "running a statement");

    std::int64_t column_int64(int col) const { return sqlite3_column_int64(stmt_, col); }
    double column_double(int col) const { return sqlite3_column_double(stmt_, col); }
    std::string column_text(int col) const;
    bool column_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
    int column_count() const { return sqlite3_column_count(stmt_); }
    /// The largest parameter index it has (?NNN: NNN).
    int parameter_count() const { return sqlite3_bind_parameter_count(stmt_); }
    /// Whether it changes nothing (so sqlite3_changes() is not its).
    bool read_only() const { return sqlite3_stmt_readonly(stmt_) != 0; }

  private:
    sqlite3* db_;
    sqlite3_stmt* stmt_;
};

}  // namespace sqlock::detail::sqlite
