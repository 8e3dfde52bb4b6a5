#include "mariadb_error.hpp"

#include <errmsg.h>
#include <mysqld_error.h>

#include "base/error_table.hpp"
#include "base/validate.hpp"

namespace sqlock::detail::mariadb {
namespace {

[[noreturn]] void fail(const MariaTarget& t, const ErrorRow& row, const MessageWords& words,
                       const Failure& f) {
    throw error_of_row(row, t.redact(words.fill(row.message) + " [" + t.redacted_url + "]"),
                       std::to_string(f.code) + "/" + (f.sqlstate.empty() ? "HY000" : f.sqlstate));
}

constexpr const char* access_denied =
    "insufficient privilege on {table} while {doing}: {message}; a user needs {grant} (and "
    "CREATE on the database for `sqlock init`)";
constexpr const char* read_only =
    "the server is read-only ({message} while {doing}); point the "
    "URL at the primary";
constexpr const char* id_refused =
    "an id was drawn before another node's newer one was seen, and the fencing register refused "
    "it while {doing}; try again";

// A statement's failures, by error number: the first row for the number
// that is untagged, or tagged "fencing" when the message names the fencing
// register.
const ErrorRow statement_errors[] = {
    {ER_NO_SUCH_TABLE, "fencing", errc::configuration,
     "the fencing register {fencing} of {table} does not exist ({message} while {doing}; Galera "
     "and a server that refuses GET_LOCK need it); run `sqlock init` or Locker::init() to create "
     "it"},
    {ER_NO_SUCH_TABLE, nullptr, errc::configuration,
     "{table} does not exist ({message} while {doing}); run `sqlock init` or Locker::init() to "
     "create it"},
    {ER_BAD_DB_ERROR, nullptr, errc::configuration,
     "the database of {table} does not exist ({message} while {doing}); create it (CREATE "
     "DATABASE), then run `sqlock init`"},
    {ER_TABLEACCESS_DENIED_ERROR, nullptr, errc::configuration, access_denied},
    {ER_COLUMNACCESS_DENIED_ERROR, nullptr, errc::configuration, access_denied},
    {ER_DBACCESS_DENIED_ERROR, nullptr, errc::configuration, access_denied},
    {ER_SPECIFIC_ACCESS_DENIED_ERROR, nullptr, errc::configuration, access_denied},
    {ER_BAD_FIELD_ERROR, nullptr, errc::configuration,
     "{table} does not look like a lock table ({message} while {doing}); it needs the columns "
     "id, lockstring (unique), created, expires, locked_by"},
    // A replica, or a primary set read_only (as a failover tool fences the
    // old one): until the URL leads to a writable server. A wait waits
    // through it. 1290 is "--read-only" (sqlock needs no other option).
    {ER_OPTION_PREVENTS_STATEMENT, nullptr, errc::configuration, read_only, true},
    {ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, nullptr, errc::configuration, read_only, true},
    {ER_READ_ONLY_MODE, nullptr, errc::configuration, read_only, true},
    {ER_BINLOG_STMT_MODE_AND_ROW_ENGINE, nullptr, errc::configuration,
     "the server logs statements (binlog_format=STATEMENT), which cannot log sqlock's READ "
     "COMMITTED writes ({message} while {doing}); set binlog_format to ROW or MIXED"},
    {ER_UNKNOWN_COM_ERROR, nullptr, errc::connection,
     "the MariaDB node is not ready for application use while {doing} ({message}): a Galera "
     "node outside the cluster's primary component; another node of the URL's host list is "
     "tried"},
    {ER_ERROR_DURING_COMMIT, nullptr, errc::connection,
     "MariaDB could not commit while {doing} ({message}): on Galera, the node lost the cluster "
     "meanwhile; whether it committed is read on another node"},
    // max_statement_time, where sqlock's session does not set it (a MySQL
    // server's max_execution_time stops only SELECTs): like an answer that
    // did not come in time; the statement was rolled back. (A row turn's
    // own bound is read where it is taken: the turn did not come.)
    {ER_STATEMENT_TIMEOUT, nullptr, errc::connection,
     "the server stopped the statement while {doing} ({message}; max_statement_time); nothing "
     "was changed"},
    {ER_LOCK_WAIT_TIMEOUT, nullptr, errc::busy,
     "a row of {table} stayed locked by another transaction ({message}) while {doing}; try "
     "again"},
    {ER_CONSTRAINT_FAILED, "fencing", errc::busy, id_refused},
    {3819, "fencing", errc::busy, id_refused},  // MySQL's ER_CHECK_CONSTRAINT_VIOLATED
    {ER_LOCK_DEADLOCK, nullptr, errc::busy,
     "the server broke a deadlock by rolling back this statement while {doing} ({message}); try "
     "again"},
};

// A statement's failures no row names, by the rule that groups their codes.
const ErrorRow refused_login_row{0, nullptr, errc::configuration,
                                 "MariaDB refused the login while {doing} (check the user, "
                                 "password and database in the URL): {message}"};
const ErrorRow lost_link_row{0, nullptr, errc::connection,
                             "lost the connection to MariaDB while {doing}: {message}"};
const ErrorRow other_error_row{0, nullptr, errc::backend,
                               "MariaDB error {code} ({sqlstate}) while {doing}: {message}"};

// A connection attempt's failures (a refused login otherwise).
const ErrorRow connect_errors[] = {
    {CR_SSL_CONNECTION_ERROR, nullptr, errc::configuration,
     "TLS with the MariaDB server failed (check ssl-mode, ssl-ca and the server's certificate): "
     "{message}"},
    {ER_BAD_DB_ERROR, nullptr, errc::configuration,
     "the database named in the URL does not exist: {message} (create it with CREATE DATABASE)"},
};
const ErrorRow connect_refused_row{
    0, nullptr, errc::configuration,
    "MariaDB refused the login (check the user, password and database in the URL): {message}"};
const ErrorRow connect_failed_row{0, nullptr, errc::connection,
                                  "cannot connect to MariaDB: {message}"};

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
    const std::string& fencing = t.family.side(SideTable::fencing).name;
    const MessageWords words{{"table", "lock table " + t.table},
                             {"doing", doing},
                             {"message", f.message},
                             {"fencing", fencing},
                             {"grant", t.grant_hint()},
                             {"code", std::to_string(f.code)},
                             {"sqlstate", f.sqlstate}};
    // The rows tagged "fencing" are for a failure that names the register.
    const bool names_fencing =
        f.message.find(fencing.substr(fencing.rfind('.') + 1)) != std::string::npos;
    if (const ErrorRow* row = find_error_row(statement_errors, static_cast<int>(f.code),
                                             names_fencing ? "fencing" : nullptr))
        fail(t, *row, words, f);
    if (refused_login(f.code)) fail(t, refused_login_row, words, f);
    if (breaks_link(f.code)) fail(t, lost_link_row, words, f);
    fail(t, other_error_row, words, f);
}

void throw_connect_failure(const MariaTarget& t, const Failure& f) {
    const MessageWords words{{"message", f.message}};
    if (const ErrorRow* row = find_error_row(connect_errors, static_cast<int>(f.code)))
        fail(t, *row, words, f);
    if (refused_login(f.code)) fail(t, connect_refused_row, words, f);
    fail(t, connect_failed_row, words, f);
}

}  // namespace sqlock::detail::mariadb
