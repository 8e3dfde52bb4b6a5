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
sqlock::Locker open_locker(const GlobalOptions& global, bool creating = false);

}  // namespace sqlock_cli
