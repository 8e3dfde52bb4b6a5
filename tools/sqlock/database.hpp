// Opening the lock table named by the global options.
#pragma once

#include "command_line.hpp"
#include "sqlock/locker.hpp"

namespace sqlock_cli {

/// Opens the lock table named by --db/$SQLOCK_DB and --table. The library
/// connects lazily, so a bad URL scheme or table name fails here (78/64)
/// before anything is touched.
///
/// Unless `creating` (sqlock init), an explicitly named SQLite file that does
/// not exist is an errc::configuration error: SQLite would otherwise create
/// an empty file for a mistyped path and then report the table missing,
/// leaving a stray database behind. The embedded default database is created
/// (and initialised) on first use, as the library does.
///
/// --db-timeout bounds every round trip; without it, `default_timeout` (run
/// derives one from its lease), else the library's default.
sqlock::Locker open_locker(const GlobalOptions& global, bool creating = false,
                           std::optional<sqlock::duration> default_timeout = std::nullopt);

}  // namespace sqlock_cli
