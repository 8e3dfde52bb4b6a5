// Mapping libpqxx exceptions onto sqlock's error categories.
//
//   broken link (08xxx), server shutting down or starting (57P01-57P03),
//   a session ended for idling (57P05, 25P03), a statement cancelled
//   (57014, statement_timeout), in-doubt commit         -> errc::connection
//   missing table (42P01) or schema (3F000)             -> errc::configuration,
//                                                          saying to run `sqlock init`
//   insufficient privilege (42501)                      -> errc::configuration
//   a table that is not a lock table (42703, 42P10)     -> errc::configuration
//   a read-only server, e.g. a standby (25006), or no
//   writable host for target_session_attrs=read-write   -> errc::configuration,
//                                                          error::read_only()
//   serialization failure (40001), deadlock (40P01),
//   lock_timeout (55P03)                                -> errc::busy
//   anything else                                       -> errc::backend with the SQLSTATE
//
// The SQLSTATEs named here are rows of an error table (base/error_table.hpp):
// each its category and its message, hint included; a class (08xxx), an
// exception type and libpq's texts of a refused login are rules in code.
// Every message passes through the target's Redactor and ends with the
// redacted URL, so it names the server but never the password.
#pragma once

#include <pqxx/except>
#include <string>

#include "postgres_target.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::postgres {

/// Throws the sqlock::error for the exception being handled. Call only from
/// inside a catch handler. `doing` completes "while ...": "acquiring lock 'x'".
[[noreturn]] void rethrow_as_error(const PgTarget& target, const std::string& doing);

/// Throws the errc::connection error for a failed connection attempt (the
/// exception being handled). `skipped`: hosts left out before libpq was
/// asked (resolved_conninfo), added to a connection failure's message.
[[noreturn]] void rethrow_connect_error(const PgTarget& target, const std::string& skipped = {});

/// The SQLSTATE of a libpqxx failure; libpqxx 6.4 leaves it out of some of
/// its own exceptions, and this recovers it from their type. Empty when
/// unknown.
std::string sqlstate_of(const pqxx::sql_error& e);
std::string sqlstate_of(const pqxx::transaction_rollback& e);

/// "acquiring lock 'x'" from ("acquiring lock", "x"); the name made printable.
std::string describe(const char* doing, const std::string& subject);

/// Runs `f`, turning any libpqxx (or other) exception into a sqlock::error.
template <typename F>
auto guarded(const PgTarget& target, const char* doing, const std::string& subject, F&& f)
    -> decltype(f()) {
    try {
        return f();
    } catch (const error&) {
        throw;
    } catch (...) {
        rethrow_as_error(target, describe(doing, subject));
    }
}

}  // namespace sqlock::detail::postgres
