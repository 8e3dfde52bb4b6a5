// A backend's error table and the one message builder under every table.
//
// Each backend maps its own codes (MariaDB's error numbers, SQLite's result
// codes, ...) onto sqlock's categories with a table of rows: a code, the
// category, and the message as a pattern whose {words} ("{table}",
// "{doing}", "{message}", ...) the backend fills for the failure at hand,
// hint included ("run `sqlock init`"). What is left in a backend's code is
// what no row can say: which words a failure has, and the codes it groups
// by a rule (a lost link, a refused login).
//
// Thread safety: the functions are pure; a MessageWords is not shared.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "sqlock/error.hpp"

namespace sqlock::detail {

/// One row of a backend's error table.
struct ErrorRow {
    int code;          // the backend's code
    const char* when;  // nullptr: any failure with `code`; else only one tagged so
    errc category;
    const char* message;     // the pattern, filled by MessageWords::fill()
    bool read_only = false;  // error::read_only_database(): a state a failover ends
};

/// The words a backend's patterns name, for one failure.
class MessageWords {
  public:
    MessageWords(std::initializer_list<std::pair<const char*, std::string>> words)
        : words_(words) {}

    /// `pattern` with each "{word}" replaced by its value, in one pass (a
    /// value's own braces are left as they are); an unknown "{word}" is kept.
    std::string fill(const char* pattern) const;

  private:
    std::vector<std::pair<const char*, std::string>> words_;
};

/// The first of `rows` for `code` that is untagged or tagged `when`, or
/// nullptr.
const ErrorRow* find_error_row(const ErrorRow* rows, std::size_t count, int code,
                               const char* when = nullptr);

template <std::size_t N>
const ErrorRow* find_error_row(const ErrorRow (&rows)[N], int code, const char* when = nullptr) {
    return find_error_row(rows, N, code, when);
}

/// The error a row says: its category (read_only_database() for a
/// read-only row) with `message`, the row's pattern as the backend filled
/// and finished it (redacted, its URL appended), and the backend's code.
error error_of_row(const ErrorRow& row, const std::string& message, std::string backend_code);

}  // namespace sqlock::detail
