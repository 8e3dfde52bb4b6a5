// sqlock::error — the one exception type sqlock throws.
//
// Every failure carries a category so callers can act on it without parsing
// messages: retry later on `busy`, give up on `timeout`, stop the protected
// work on `lost`, page someone on `connection`, fix the setup on
// `configuration`, fix the caller on `invalid_argument`. The backend's own
// code (a PostgreSQL SQLSTATE such as "42P01", or an SQLite result code name
// such as "SQLITE_BUSY") is available without including any backend header,
// and so is whether the database was unavailable only for now (it could not
// be reached, or it was read-only): what a wait waits through.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "sqlock/lock_info.hpp"

namespace sqlock {

/// What kind of failure an `error` reports.
enum class errc {
    busy,              ///< the lock is held by someone else
    timeout,           ///< a wait (for a lock or a pooled connection) ran out
    lost,              ///< our lock is gone: expired and taken over, or deleted
    connection,        ///< the database cannot be reached or the link broke
    configuration,     ///< backend not built in, missing table or privileges, ...
    invalid_argument,  ///< a bad name, duration, table name or option
    backend,           ///< any other database error (see backend_code())
};

/// Stable lower-case name of a category ("busy", "timeout", ...).
const char* to_string(errc category) noexcept;

/// error
///
/// The root of everything sqlock throws. Messages are one line, name the lock
/// and the database where relevant, and never contain a password.
class error : public std::runtime_error {
  public:
    error(errc category, const std::string& message, std::string backend_code = {});
    /// A busy or timeout error that knows who is in the way.
    error(errc category, const std::string& message, LockInfo holder);

    /// The refusal of a database that takes no writes for now: a hot
    /// standby, a primary demoted by a failover or switchover, a server with
    /// `default_transaction_read_only` (PostgreSQL) or `read_only`
    /// (MariaDB). errc::configuration, with read_only() true.
    static error read_only_database(const std::string& message, std::string backend_code = {});

    /// The failure's category.
    errc category() const noexcept { return category_; }

    /// The backend's own code (SQLSTATE or SQLite code name); empty when none.
    const std::string& backend_code() const noexcept { return backend_code_; }

    /// For `busy` and `timeout` from acquiring a lock: the row in the way
    /// (for a semaphore, the slot whose lease ends first), when known;
    /// otherwise null. Valid as long as this error (or a copy) lives.
    const LockInfo* holder() const noexcept { return holder_.get(); }

    /// Whether the database refused because it takes no writes for now
    /// (read_only_database()): a state that a failover or switchover ends,
    /// unlike the other configuration errors.
    bool read_only() const noexcept { return read_only_; }

    /// Whether the database was unavailable for now: it could not be
    /// reached or did not answer (errc::connection: refused, a broken link,
    /// no answer in time, a server starting up or shutting down), or it was
    /// read-only (read_only()). A call with a wait (LockOptions::wait) waits
    /// through such failures until its deadline (docs/waiting.md).
    bool unavailable() const noexcept { return category_ == errc::connection || read_only_; }

  private:
    errc category_;
    bool read_only_ = false;
    std::string backend_code_;
    std::shared_ptr<const LockInfo> holder_;  // shared: exceptions are copied
};

}  // namespace sqlock
