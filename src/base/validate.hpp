// Checks on caller input. Every failure is errc::invalid_argument with a
// message saying what was wrong; no SQL is ever built from a value.
#pragma once

#include "text.hpp"

#include <chrono>
#include <string>

#include "sqlock/duration.hpp"
#include "sqlock/options.hpp"

namespace sqlock::detail {

/// The shortest place lease a caller may ask for, and what a lock's own
/// lease stands for when it is shorter: a place is renewed every third of
/// its lease, and much more often than that costs the server more than
/// the hold it waits for.
constexpr duration min_queue_lease = std::chrono::milliseconds(100);
/// The longest place lease the default gives: a long-leased lock's waiter
/// that stops answering is out of the line within this.
constexpr duration default_queue_lease_cap = std::chrono::seconds(15);

constexpr std::size_t max_name_bytes = 128;

/// 1..128 bytes of valid UTF-8 without NUL.
void validate_lock_name(const std::string& name);

/// > 0 and at most 366 days. `what` names the option in the message.
void validate_lease(duration lease, const char* what);

/// >= 0 and at most 366 days.
void validate_non_negative(duration d, const char* what);

/// A lock's options (lease, wait, min_hold, queue_lease, warn_before,
/// progress_every), each within its bounds and with the others.
void validate_options(const LockOptions& o);

/// An SQL identifier [A-Za-z_][A-Za-z0-9_]* of at most 63 bytes, or with
/// `allow_schema` two of them joined by a dot.
void validate_table_name(const std::string& table, bool allow_schema);

/// `"schema"."table"` / `"table"`. Only for validated names.
std::string quote_table_name(const std::string& table);

/// The unqualified part of a table name ("locks" for "ops.locks").
std::string table_basename(const std::string& table);

using text::is_valid_utf8;

/// A possibly hostile name in an error message: text::printable(), the one
/// rule, showing at most the first `max_bytes` bytes.
inline std::string printable(const std::string& text, std::size_t max_bytes = 64) {
    return text::printable(text, max_bytes);
}

}  // namespace sqlock::detail
