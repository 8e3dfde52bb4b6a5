#include "postgres_error.hpp"

#include <pqxx/except>

#include "base/validate.hpp"

namespace sqlock::detail::postgres {
namespace {

// The server's message without its severity prefix and without the
// "LINE 1: ..." excerpt of our own statement that libpq appends.
std::string server_message(const char* what) {
    std::string text = what;
    std::size_t eol = text.find('\n');
    if (eol != std::string::npos) text.resize(eol);
    for (const char* prefix : {"ERROR:  ", "FATAL:  "})
        if (text.compare(0, std::char_traits<char>::length(prefix), prefix) == 0)
            text.erase(0, std::char_traits<char>::length(prefix));
    return text;
}

[[noreturn]] void fail(const PgTarget& t, errc category, const std::string& message,
                       const std::string& code = {}) {
    // Redact the whole message: the URL and libpq's text alike.
    throw error(category, t.redact(message + " [" + t.redact.url() + "]"), code);
}

[[noreturn]] void fail_read_only(const PgTarget& t, const std::string& message,
                                 const std::string& code = {}) {
    throw error::read_only_database(t.redact(message + " [" + t.redact.url() + "]"), code);
}

[[noreturn]] void map_sqlstate(const PgTarget& t, const std::string& state, const std::string& msg,
                               const std::string& doing) {
    const std::string table = "lock table " + t.table;
    const bool qualified = t.table.find('.') != std::string::npos;
    if (state == "42P01")
        fail(t, errc::configuration,
             table + " does not exist (" + msg + " while " + doing +
                 "); run `sqlock init` or Locker::init() to create it" +
                 (qualified ? " (its schema must exist)" : ""),
             state);
    if (state == "3F000")
        fail(t, errc::configuration,
             "the schema of " + table + " does not exist (" + msg + " while " + doing +
                 "); create the schema, then run `sqlock init` or Locker::init()",
             state);
    if (state == "42501")
        fail(t, errc::configuration,
             "insufficient privilege on " + table + " while " + doing + ": " + msg +
                 "; the role needs SELECT, INSERT, UPDATE and DELETE on the table and USAGE on "
                 "its id sequence (and CREATE on the schema for `sqlock init`)",
             state);
    if (state == "42703" || state == "42P10")
        fail(t, errc::configuration,
             table + " does not look like a lock table (" + msg + " while " + doing +
                 "); it needs the columns id, lockstring (unique), created, expires, locked_by",
             state);
    // A hot standby, a primary demoted by a failover or a switchover, or a
    // server with default_transaction_read_only (how an HA manager fences
    // the old primary): until the URL leads to a writable server. A wait
    // waits through it (a switchover ends it); without one, the caller must
    // point the URL elsewhere.
    if (state == "25006")
        fail_read_only(t,
                       "the PostgreSQL server is read-only (" + msg + " while " + doing +
                           "); point the URL at the primary, or list every host and add "
                           "target_session_attrs=read-write",
                       state);
    // Class 08: connection exception; 57P01-57P03: the server is shutting
    // down, crashed, or not accepting connections yet; 57P05 and 25P03:
    // the server ended a session idle for longer than idle_session_timeout
    // or idle_in_transaction_session_timeout (a pooled connection sqlock
    // did not use for a while; the pool opens another).
    if (state.compare(0, 2, "08") == 0 || state == "57P01" || state == "57P02" ||
        state == "57P03" || state == "57P05" || state == "25P03")
        fail(t, errc::connection, "lost the connection to PostgreSQL while " + doing + ": " + msg,
             state);
    // The server gave up on the statement (statement_timeout, set where
    // sqlock's own sessions do not override it: through a transaction
    // pooler) or an administrator cancelled it: like an answer that did not
    // come in time, and rolled back.
    if (state == "57014")
        fail(t, errc::connection,
             "PostgreSQL cancelled the statement while " + doing + " (" + msg +
                 "; statement_timeout, or an administrator); nothing was changed",
             state);
    // Serialization failure, deadlock, lock_timeout: a race the server broke
    // off by rolling the statement back, as lost as a name found taken.
    // (sqlock's own autocommit statements are sent again first, within
    // their time bound.)
    if (state == "40001" || state == "40P01" || state == "55P03")
        fail(t, errc::busy,
             "PostgreSQL rolled back the statement while " + doing + " (" + msg +
                 "): another transaction was in the way; try again",
             state);
    // The statement may or may not have completed: like a broken commit.
    if (state == "40003")
        fail(t, errc::connection,
             "PostgreSQL cannot tell whether the statement completed (" + doing + "): " + msg,
             state);
    fail(t, errc::backend,
         "PostgreSQL error " + (state.empty() ? std::string("(no SQLSTATE)") : state) + " while " +
             doing + ": " + msg,
         state);
}

// libpq reports a failed login as text only (no SQLSTATE reaches the
// client for a connection that never started). The server answered, so the
// URL or the credentials are wrong (configuration, exit 78), unlike a server
// that cannot be reached (connection, 69). Matched on the server's English
// texts (lc_messages other than English fall back to connection) and on
// libpq's own for a password the server asked for and did not get, and on
// PgBouncer's ("SASL authentication failed", "no such database: X", "no
// such user"). "Too many clients" and "starting up" / "shutting down" stay
// connection: they pass.
bool refused_by_server(const std::string& what) {
    for (const char* text :
         {"password authentication failed", "authentication failed for user",
          "no pg_hba.conf entry", "\" does not exist", "is not permitted to log in",
          "permission denied for database", "no password supplied", "server requested a password",
          "password is required", "SASL authentication failed", "no such database",
          "no such user"}) {
        if (what.find(text) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

// libpqxx 6.4 throws some of its SQLSTATE-specific exceptions without the
// SQLSTATE (insufficient_privilege, and the transaction_rollback family,
// which is not even an sql_error): recover it from the type.
std::string sqlstate_of(const pqxx::sql_error& e) {
    if (!e.sqlstate().empty()) return e.sqlstate();
    if (dynamic_cast<const pqxx::insufficient_privilege*>(&e)) return "42501";
    if (dynamic_cast<const pqxx::undefined_table*>(&e)) return "42P01";
    if (dynamic_cast<const pqxx::undefined_column*>(&e)) return "42703";
    return {};
}

std::string sqlstate_of(const pqxx::transaction_rollback& e) {
    if (dynamic_cast<const pqxx::serialization_failure*>(&e)) return "40001";
    if (dynamic_cast<const pqxx::deadlock_detected*>(&e)) return "40P01";
    if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e)) return "40003";
    return "40000";
}

std::string describe(const char* doing, const std::string& subject) {
    if (subject.empty()) return doing;
    return std::string(doing) + " '" + printable(subject) + "'";
}

void rethrow_as_error(const PgTarget& t, const std::string& doing) {
    try {
        throw;
    } catch (const error&) {
        throw;
    } catch (const pqxx::broken_connection& e) {
        fail(t, errc::connection,
             "lost the connection to PostgreSQL while " + doing + ": " + e.what());
    } catch (const pqxx::in_doubt_error& e) {
        fail(t, errc::connection,
             "the connection to PostgreSQL broke while committing (" + doing +
                 "); the change may or may not have been made: " + e.what());
    } catch (const pqxx::sql_error& e) {
        map_sqlstate(t, sqlstate_of(e), server_message(e.what()), doing);
    } catch (const pqxx::transaction_rollback& e) {
        map_sqlstate(t, sqlstate_of(e), server_message(e.what()), doing);
    } catch (const std::exception& e) {
        fail(t, errc::backend, "PostgreSQL failure while " + doing + ": " + e.what());
    } catch (...) {
        fail(t, errc::backend, "unknown failure while " + doing);
    }
}

void rethrow_connect_error(const PgTarget& t, const std::string& skipped) {
    const std::string also = skipped.empty() ? "" : " (and " + skipped + ")";
    try {
        throw;
    } catch (const error&) {
        throw;
    } catch (const pqxx::sql_error& e) {
        map_sqlstate(t, sqlstate_of(e), server_message(e.what()), "connecting");
    } catch (const std::exception& e) {
        // libpq's own text names the host and port it tried.
        const std::string what = e.what();
        // libpq's target_session_attrs=read-write found only servers that
        // take no writes (the text is libpq's own, in English).
        if (what.find("session is read-only") != std::string::npos ||
            what.find("server is in hot standby mode") != std::string::npos)
            fail_read_only(t,
                           "no writable PostgreSQL server among the hosts of the URL (a "
                           "failover or a switchover under way?): " +
                               what + also);
        if (refused_by_server(what))
            fail(t, errc::configuration,
                 "PostgreSQL refused the login (check the user, password and database in the "
                 "URL, ~/.pgpass or PGPASSWORD): " +
                     what);
        fail(t, errc::connection, "cannot connect to PostgreSQL: " + what + also);
    } catch (...) {
        fail(t, errc::connection, "cannot connect to PostgreSQL" + also);
    }
}

}  // namespace sqlock::detail::postgres
