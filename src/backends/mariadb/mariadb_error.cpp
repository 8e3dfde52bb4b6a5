#include "mariadb_error.hpp"

#include <errmsg.h>
#include <mysqld_error.h>

#include "base/validate.hpp"

namespace sqlock::detail::mariadb {
namespace {

[[noreturn]] void fail(const MariaTarget& t, errc category, const std::string& message,
                       const Failure& f) {
    throw error(category, t.redact(message + " [" + t.redacted_url + "]"),
                std::to_string(f.code) + "/" + (f.sqlstate.empty() ? "HY000" : f.sqlstate));
}

[[noreturn]] void fail_read_only(const MariaTarget& t, const std::string& message,
                                 const Failure& f) {
    throw error::read_only_database(
        t.redact(message + " [" + t.redacted_url + "]"),
        std::to_string(f.code) + "/" + (f.sqlstate.empty() ? "HY000" : f.sqlstate));
}

bool refused_login(unsigned code) {
    switch (code) {
        case ER_ACCESS_DENIED_ERROR:      // 1045 wrong user or password
        case ER_DBACCESS_DENIED_ERROR:    // 1044 no access to the database
        case ER_BAD_DB_ERROR:             // 1049 no such database
        case ER_HOST_NOT_PRIVILEGED:      // 1130 host not allowed to connect
        case ER_HOST_IS_BLOCKED:          // 1129 too many failed attempts from here
        case ER_MUST_CHANGE_PASSWORD:     // 1820 password expired
        case ER_ACCOUNT_HAS_BEEN_LOCKED:  // 4151
        case 3118:                        // MySQL: ER_ACCOUNT_HAS_BEEN_LOCKED
        case 1251:                        // ER_NOT_SUPPORTED_AUTH_MODE
        case CR_AUTH_PLUGIN_CANNOT_LOAD:  // 2059
        case CR_AUTH_PLUGIN_ERR:          // 2061
        case CR_SSL_CONNECTION_ERROR:     // 2026
            return true;
        default:
            return false;
    }
}

}  // namespace

bool breaks_link(unsigned code) {
    if (code >= CR_MIN_ERROR && code <= CR_MAX_ERROR) return code != CR_OUT_OF_MEMORY;
    switch (code) {
        case CR_ERR_NET_READ:
        case CR_ERR_NET_WRITE:
        case CR_ERR_NET_UNCOMPRESS:
        case ER_CON_COUNT_ERROR:
        case ER_SERVER_SHUTDOWN:
        case ER_NORMAL_SHUTDOWN:
        case ER_ABORTING_CONNECTION:
        case ER_NEW_ABORTING_CONNECTION:
        case ER_NET_READ_INTERRUPTED:
        case ER_CONNECTION_KILLED:
        // Galera: the node is not in the primary component (left it, or
        // still joining): unusable until it is back, so the next connection
        // goes to another host.
        case ER_UNKNOWN_COM_ERROR:
        // Galera: the commit could not be replicated (the node lost the
        // primary component meanwhile); the transaction's fate is the
        // cluster's, to be read elsewhere.
        case ER_ERROR_DURING_COMMIT:
            return true;
        default:
            return false;
    }
}

bool lost_race(unsigned code) {
    return code == ER_LOCK_DEADLOCK || code == ER_AUTOINC_READ_FAILED ||
           code == ER_CONSTRAINT_FAILED || code == 3819;  // MySQL's ER_CHECK_CONSTRAINT_VIOLATED
}

bool turn_missed(unsigned code) {
    return code == ER_BAD_NULL_ERROR || code == ER_STATEMENT_TIMEOUT ||
           code == ER_LOCK_WAIT_TIMEOUT;
}

bool refuses_get_lock(const Failure& f) {
    return f.code == ER_NOT_SUPPORTED_YET && f.message.find("GET_LOCK") != std::string::npos;
}

std::string describe(const char* doing, const std::string& subject) {
    if (subject.empty()) return doing;
    return std::string(doing) + " '" + printable(subject) + "'";
}

void throw_failure(const MariaTarget& t, const Failure& f, const std::string& doing) {
    const std::string table = "lock table " + t.table;
    const std::string msg = f.message;
    switch (f.code) {
        case ER_NO_SUCH_TABLE:
            if (f.message.find(t.fencing.substr(t.fencing.rfind('.') + 1)) != std::string::npos)
                fail(t, errc::configuration,
                     "the fencing register " + t.fencing + " of " + table + " does not exist (" +
                         msg + " while " + doing +
                         "; Galera and a server that refuses GET_LOCK need it); run `sqlock "
                         "init` or Locker::init() to create it",
                     f);
            fail(t, errc::configuration,
                 table + " does not exist (" + msg + " while " + doing +
                     "); run `sqlock init` or Locker::init() to create it",
                 f);
        case ER_BAD_DB_ERROR:
            fail(t, errc::configuration,
                 "the database of " + table + " does not exist (" + msg + " while " + doing +
                     "); create it (CREATE DATABASE), then run `sqlock init`",
                 f);
        case ER_TABLEACCESS_DENIED_ERROR:
        case ER_COLUMNACCESS_DENIED_ERROR:
        case ER_DBACCESS_DENIED_ERROR:
        case ER_SPECIFIC_ACCESS_DENIED_ERROR:
            fail(t, errc::configuration,
                 "insufficient privilege on " + table + " while " + doing + ": " + msg +
                     "; a user needs " + t.grant_hint() +
                     " (and CREATE on the database for `sqlock init`)",
                 f);
        case ER_BAD_FIELD_ERROR:
            fail(t, errc::configuration,
                 table + " does not look like a lock table (" + msg + " while " + doing +
                     "); it needs the columns id, lockstring (unique), created, expires, "
                     "locked_by",
                 f);
        // A replica, or a primary set read_only (as a failover tool fences
        // the old one): until the URL leads to a writable server. A wait
        // waits through it.
        case ER_OPTION_PREVENTS_STATEMENT:  // 1290: "--read-only" (sqlock needs no other option)
        case ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION:  // 1792
        case ER_READ_ONLY_MODE:                         // 1836
            fail_read_only(t,
                           "the server is read-only (" + msg + " while " + doing +
                               "); point the URL at the primary",
                           f);
        case ER_BINLOG_STMT_MODE_AND_ROW_ENGINE:  // 1665
            fail(t, errc::configuration,
                 "the server logs statements (binlog_format=STATEMENT), which cannot log "
                 "sqlock's READ COMMITTED writes (" +
                     msg + " while " + doing + "); set binlog_format to ROW or MIXED",
                 f);
        case ER_UNKNOWN_COM_ERROR:  // 1047
            fail(t, errc::connection,
                 "the MariaDB node is not ready for application use while " + doing + " (" + msg +
                     "): a Galera node outside the cluster's primary component; another node "
                     "of the URL's host list is tried",
                 f);
        case ER_ERROR_DURING_COMMIT:  // 1180
            fail(t, errc::connection,
                 "MariaDB could not commit while " + doing + " (" + msg +
                     "): on Galera, the node lost the cluster meanwhile; whether it committed "
                     "is read on another node",
                 f);
        // max_statement_time, where sqlock's session does not set it (a
        // MySQL server's max_execution_time stops only SELECTs): like an
        // answer that did not come in time; the statement was rolled back.
        // (A row turn's own bound is read where it is taken: the turn did
        // not come.)
        case ER_STATEMENT_TIMEOUT:  // 1969
            fail(t, errc::connection,
                 "the server stopped the statement while " + doing + " (" + msg +
                     "; max_statement_time); nothing was changed",
                 f);
        case ER_LOCK_WAIT_TIMEOUT:
            fail(t, errc::busy,
                 "a row of " + table + " stayed locked by another transaction (" + msg +
                     ") while " + doing + "; try again",
                 f);
        case ER_CONSTRAINT_FAILED:
        case 3819:  // MySQL's ER_CHECK_CONSTRAINT_VIOLATED
            if (f.message.find(t.fencing.substr(t.fencing.rfind('.') + 1)) != std::string::npos)
                fail(t, errc::busy,
                     "an id was drawn before another node's newer one was seen, and the fencing "
                     "register refused it while " +
                         doing + "; try again",
                     f);
            break;
        case ER_LOCK_DEADLOCK:
            fail(t, errc::busy,
                 "the server broke a deadlock by rolling back this statement while " + doing +
                     " (" + msg + "); try again",
                 f);
        default:
            break;
    }
    if (refused_login(f.code))
        fail(t, errc::configuration,
             "MariaDB refused the login while " + doing +
                 " (check the user, password and database in the URL): " + msg,
             f);
    if (breaks_link(f.code))
        fail(t, errc::connection, "lost the connection to MariaDB while " + doing + ": " + msg, f);
    fail(t, errc::backend,
         "MariaDB error " + std::to_string(f.code) + " (" + f.sqlstate + ") while " + doing + ": " +
             msg,
         f);
}

void throw_connect_failure(const MariaTarget& t, const Failure& f) {
    if (refused_login(f.code) || f.code == ER_BAD_DB_ERROR) {
        if (f.code == CR_SSL_CONNECTION_ERROR)
            fail(t, errc::configuration,
                 "TLS with the MariaDB server failed (check ssl-mode, ssl-ca and the server's "
                 "certificate): " +
                     f.message,
                 f);
        if (f.code == ER_BAD_DB_ERROR)
            fail(t, errc::configuration,
                 "the database named in the URL does not exist: " + f.message +
                     " (create it with CREATE DATABASE)",
                 f);
        fail(t, errc::configuration,
             "MariaDB refused the login (check the user, password and database in the URL): " +
                 f.message,
             f);
    }
    fail(t, errc::connection, "cannot connect to MariaDB: " + f.message, f);
}

}  // namespace sqlock::detail::mariadb
