// Opening the lock table named by the global options.
#pragma once

#include "common/command_line.hpp"
#include "sqlock/locker.hpp"

namespace sqlock_cli {

/// Opens the lock table named by --db/$SQLOCK_DB and --table. The library
/// connects lazily, so a bad URL scheme or table name fails here (78/64)
/// before anything is touched.
///
/// There is no pre-check here: a SQLite file that does not exist is the
/// library's errc::configuration error on first use (it never creates one
/// except in Locker::init, which `creating` (sqlock init) leads to), and the
/// embedded default database is created and initialised on first use.
/// `creating` turns the library's auto-init off: `init` calls
/// Locker::init() itself, once.
///
/// --db-timeout bounds every round trip; without it, `default_timeout` (run
/// derives one from its lease), else the library's default.
sqlock::Locker open_locker(const GlobalOptions& global, bool creating = false,
                           std::optional<sqlock::duration> default_timeout = std::nullopt);

}  // namespace sqlock_cli
