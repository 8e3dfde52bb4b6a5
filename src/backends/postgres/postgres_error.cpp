#include "postgres_error.hpp"

#include <pqxx/except>

#include "base/error_table.hpp"
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

// ErrorRow::code is an int; a SQLSTATE is five characters of [0-9A-Z].
// Read as a base-36 numeral it is an int below 36^5 (60,466,176), one per
// SQLSTATE, so the shared table keeps one typed key for every backend and
// a row still reads its SQLSTATE as PostgreSQL spells it. Anything else
// (empty, lower case, another length) is -1, which no row has.
constexpr int sqlstate_code(const char* state) {
    int code = 0;
    for (int i = 0; i < 5; ++i) {
        const char c = state[i];
        if (c >= '0' && c <= '9')
            code = code * 36 + (c - '0');
        else if (c >= 'A' && c <= 'Z')
            code = code * 36 + (c - 'A' + 10);
        else
            return -1;
    }
    return state[5] == '\0' ? code : -1;
}

constexpr const char* lost_link = "lost the connection to PostgreSQL while {doing}: {message}";
constexpr const char* not_a_lock_table =
    "{table} does not look like a lock table ({message} while {doing}); it needs the columns id, "
    "lockstring (unique), created, expires, locked_by";
constexpr const char* rolled_back =
    "PostgreSQL rolled back the statement while {doing} ({message}): another transaction was in "
    "the way; try again";

// A statement's failures, by SQLSTATE: the first row for the SQLSTATE that
// is untagged, or tagged "qualified" when the table is schema-qualified.
constexpr ErrorRow sqlstate_errors[] = {
    {sqlstate_code("42P01"), "qualified", errc::configuration,
     "{table} does not exist ({message} while {doing}); run `sqlock init` or Locker::init() to "
     "create it (its schema must exist)"},
    {sqlstate_code("42P01"), nullptr, errc::configuration,
     "{table} does not exist ({message} while {doing}); run `sqlock init` or Locker::init() to "
     "create it"},
    {sqlstate_code("3F000"), nullptr, errc::configuration,
     "the schema of {table} does not exist ({message} while {doing}); create the schema, then "
     "run `sqlock init` or Locker::init()"},
    {sqlstate_code("42501"), nullptr, errc::configuration,
     "insufficient privilege on {table} while {doing}: {message}; the role needs SELECT, INSERT, "
     "UPDATE and DELETE on the table and USAGE on its id sequence (and CREATE on the schema for "
     "`sqlock init`)"},
    {sqlstate_code("42703"), nullptr, errc::configuration, not_a_lock_table},
    {sqlstate_code("42P10"), nullptr, errc::configuration, not_a_lock_table},
    // A hot standby, a primary demoted by a failover or a switchover, or a
    // server with default_transaction_read_only (how an HA manager fences
    // the old primary): until the URL leads to a writable server. A wait
    // waits through it (a switchover ends it); without one, the caller must
    // point the URL elsewhere.
    {sqlstate_code("25006"), nullptr, errc::configuration,
     "the PostgreSQL server is read-only ({message} while {doing}); point the URL at the "
     "primary, or list every host and add target_session_attrs=read-write",
     true},
    // The server is shutting down, crashed, or not accepting connections
    // yet (57P01-57P03); it ended a session idle for longer than
    // idle_session_timeout (57P05) or idle_in_transaction_session_timeout
    // (25P03): a pooled connection sqlock did not use for a while, and the
    // pool opens another. (Class 08 is the rule below the table.)
    {sqlstate_code("57P01"), nullptr, errc::connection, lost_link},
    {sqlstate_code("57P02"), nullptr, errc::connection, lost_link},
    {sqlstate_code("57P03"), nullptr, errc::connection, lost_link},
    {sqlstate_code("57P05"), nullptr, errc::connection, lost_link},
    {sqlstate_code("25P03"), nullptr, errc::connection, lost_link},
    // The server gave up on the statement (statement_timeout, set where
    // sqlock's own sessions do not override it: through a transaction
    // pooler) or an administrator cancelled it: like an answer that did not
    // come in time, and rolled back.
    {sqlstate_code("57014"), nullptr, errc::connection,
     "PostgreSQL cancelled the statement while {doing} ({message}; statement_timeout, or an "
     "administrator); nothing was changed"},
    // Serialization failure, deadlock, lock_timeout: a race the server broke
    // off by rolling the statement back, as lost as a name found taken.
    // (sqlock's own autocommit statements are sent again first, within
    // their time bound.)
    {sqlstate_code("40001"), nullptr, errc::busy, rolled_back},
    {sqlstate_code("40P01"), nullptr, errc::busy, rolled_back},
    {sqlstate_code("55P03"), nullptr, errc::busy, rolled_back},
    // The statement may or may not have completed: like a broken commit.
    {sqlstate_code("40003"), nullptr, errc::connection,
     "PostgreSQL cannot tell whether the statement completed ({doing}): {message}"},
};

template <std::size_t N>
constexpr bool all_sqlstates(const ErrorRow (&rows)[N]) {
    for (const ErrorRow& row : rows)
        if (row.code < 0) return false;
    return true;
}
static_assert(all_sqlstates(sqlstate_errors), "a row's code is not a SQLSTATE");

// A statement's failures no row names: class 08 (connection exception) and
// a link libpqxx found broken; any other SQLSTATE or none; a failure that
// is not the server's.
const ErrorRow lost_link_row{0, nullptr, errc::connection, lost_link};
const ErrorRow in_doubt_row{0, nullptr, errc::connection,
                            "the connection to PostgreSQL broke while committing ({doing}); the "
                            "change may or may not have been made: {message}"};
const ErrorRow other_error_row{0, nullptr, errc::backend,
                               "PostgreSQL error {sqlstate} while {doing}: {message}"};
const ErrorRow other_failure_row{0, nullptr, errc::backend,
                                 "PostgreSQL failure while {doing}: {message}"};
const ErrorRow unknown_failure_row{0, nullptr, errc::backend, "unknown failure while {doing}"};

// A connection attempt's failures that reached no SQLSTATE, by libpq's
// text; {also} names the hosts left out before libpq was asked.
const ErrorRow no_writable_row{0, nullptr, errc::configuration,
                               "no writable PostgreSQL server among the hosts of the URL (a "
                               "failover or a switchover under way?): {message}{also}",
                               true};
const ErrorRow refused_login_row{0, nullptr, errc::configuration,
                                 "PostgreSQL refused the login (check the user, password and "
                                 "database in the URL, ~/.pgpass or PGPASSWORD): {message}"};
const ErrorRow connect_failed_row{0, nullptr, errc::connection,
                                  "cannot connect to PostgreSQL: {message}{also}"};
const ErrorRow connect_unknown_row{0, nullptr, errc::connection,
                                   "cannot connect to PostgreSQL{also}"};

[[noreturn]] void fail(const PgTarget& t, const ErrorRow& row, const MessageWords& words,
                       const std::string& code = {}) {
    // Redact the whole message: the URL and libpq's text alike.
    throw error_of_row(row, t.redact(words.fill(row.message) + " [" + t.redact.url() + "]"), code);
}

[[noreturn]] void map_sqlstate(const PgTarget& t, const std::string& state, const std::string& msg,
                               const std::string& doing) {
    const MessageWords words{{"table", "lock table " + t.table},
                             {"doing", doing},
                             {"message", msg},
                             {"sqlstate", state.empty() ? "(no SQLSTATE)" : state}};
    const bool qualified = t.table.find('.') != std::string::npos;
    if (const ErrorRow* row = find_error_row(sqlstate_errors, sqlstate_code(state.c_str()),
                                             qualified ? "qualified" : nullptr))
        fail(t, *row, words, state);
    if (state.compare(0, 2, "08") == 0) fail(t, lost_link_row, words, state);
    fail(t, other_error_row, words, state);
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
        fail(t, lost_link_row, {{"doing", doing}, {"message", e.what()}});
    } catch (const pqxx::in_doubt_error& e) {
        fail(t, in_doubt_row, {{"doing", doing}, {"message", e.what()}});
    } catch (const pqxx::sql_error& e) {
        map_sqlstate(t, sqlstate_of(e), server_message(e.what()), doing);
    } catch (const pqxx::transaction_rollback& e) {
        map_sqlstate(t, sqlstate_of(e), server_message(e.what()), doing);
    } catch (const std::exception& e) {
        fail(t, other_failure_row, {{"doing", doing}, {"message", e.what()}});
    } catch (...) {
        fail(t, unknown_failure_row, {{"doing", doing}});
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
        const MessageWords words{{"message", what}, {"also", also}};
        // libpq's target_session_attrs=read-write found only servers that
        // take no writes (the text is libpq's own, in English).
        if (what.find("session is read-only") != std::string::npos ||
            what.find("server is in hot standby mode") != std::string::npos)
            fail(t, no_writable_row, words);
        if (refused_by_server(what)) fail(t, refused_login_row, words);
        fail(t, connect_failed_row, words);
    } catch (...) {
        fail(t, connect_unknown_row, {{"also", also}});
    }
}

}  // namespace sqlock::detail::postgres
