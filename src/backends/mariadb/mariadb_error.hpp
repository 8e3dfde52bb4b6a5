// Mapping MariaDB/MySQL client and server errors onto sqlock's categories.
//
//   link lost or never made (2002, 2003, 2005, 2006, 2013, 2055, 5013,
//   5014), server shutting down or the session killed (1053, 1077, 1152,
//   1184, 1927), too many connections (1040), a statement stopped by
//   max_statement_time (1969), a Galera node outside the primary component
//   (1047) or one that could not replicate a commit (1180)
//                                                        -> errc::connection
//   login refused (1045), no such database (1049), database or table or
//   column access denied (1044, 1142, 1143, 1227), host not allowed (1130),
//   account locked (4151), password expired (1820), TLS failure (2026)
//                                                        -> errc::configuration
//   table missing (1146)          -> errc::configuration, saying to run `sqlock init`
//   not a lock table (1054)       -> errc::configuration, naming the columns
//   read-only server (1290, 1792, 1836)                  -> errc::configuration,
//                                                           error::read_only()
//   binlog_format=STATEMENT (1665)                       -> errc::configuration
//   lock wait timeout (1205), deadlock (1213; on Galera also a lost
//   certification, or a transaction aborted by a replicated write)
//                                                        -> errc::busy (the caller
//                                                           may retry; try_acquire
//                                                           reports "not acquired")
//   anything else                 -> errc::backend
//
// backend_code() is "<error number>/<SQLSTATE>", e.g. "1146/42S02" (client
// errors have SQLSTATE HY000: "2013/HY000"). Every message passes through
// the target's redaction and ends with the redacted URL.
#pragma once

#include <string>

#include "mariadb_target.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::mariadb {

/// One failure as the C connector reports it.
struct Failure {
    unsigned code = 0;     // mysql_errno()
    std::string sqlstate;  // mysql_sqlstate()
    std::string message;   // mysql_error()
};

/// Whether `code` means the link is gone (or in an unknown state): the
/// connection must not be used again.
bool breaks_link(unsigned code);

/// A statement that lost a race and was rolled back, which may run again
/// at once: a deadlock the server broke, and on Galera a lost
/// certification or an abort by a replicated write (1213); an id InnoDB
/// could not draw (1467); an id drawn out of order, which the fencing
/// register refused (a CHECK: 4025, MySQL's 3819).
bool lost_race(unsigned code);

/// An acquisition's turn did not come (or a row in its way stayed locked):
/// GET_LOCK said no (the batch's NULL name, 1048), a row turn's wait ran
/// out (1969), a row lock was waited for too long (1205).
bool turn_missed(unsigned code);

/// The server refuses GET_LOCK (1235, as MariaDB releases with Galera do).
bool refuses_get_lock(const Failure& f);

/// Throws the sqlock::error for `f`; `doing` completes "while ...":
/// "acquiring lock 'x'".
[[noreturn]] void throw_failure(const MariaTarget& t, const Failure& f, const std::string& doing);

/// Throws the error for a failed connection attempt.
[[noreturn]] void throw_connect_failure(const MariaTarget& t, const Failure& f);

/// "acquiring lock 'x'" from ("acquiring lock", "x"); the name made printable.
std::string describe(const char* doing, const std::string& subject);

}  // namespace sqlock::detail::mariadb
