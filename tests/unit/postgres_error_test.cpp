// How PostgreSQL's failures read as sqlock errors
// (src/backends/postgres/postgres_error.hpp): by SQLSTATE, by libpqxx's
// exception type and by libpq's text, each its category, its message word
// for word (with the redacted URL appended), whether it is read-only, and
// the SQLSTATE as the backend code. No server is asked: the exceptions are
// made here as libpqxx makes them.
#include <catch2/catch.hpp>
#include <pqxx/except>
#include <stdexcept>
#include <string>

#include "loading/url.hpp"
#include "postgres_error.hpp"

using namespace std::chrono_literals;
using sqlock::errc;
namespace pg = sqlock::detail::postgres;

namespace {

const char* const pg_password = "Hidden7712";

pg::PgTarget pg_target(const std::string& table = "locks") {
    return pg::PgTarget(sqlock::detail::parse_database_url(std::string("postgresql://u:") +
                                                           pg_password + "@127.0.0.1:5432/db"),
                        table, 10s);
}

struct PgFailure {
    errc category{};
    bool read_only = false;
    std::string code;
    std::string message;  // without the redacted URL, which the test checks
};

PgFailure pg_failure(const pg::PgTarget& t, const sqlock::error& e) {
    const std::string what = e.what();
    const std::string url = " [" + t.redact.url() + "]";
    CHECK(what.find(pg_password) == std::string::npos);
    REQUIRE(what.size() >= url.size());
    CHECK(what.substr(what.size() - url.size()) == url);
    return {e.category(), e.read_only(), e.backend_code(),
            what.substr(0, what.size() - url.size())};
}

// What rethrow_as_error() makes of `thrown` while "acquiring lock 'x'".
template <typename E>
PgFailure pg_failure_of(const E& thrown, const pg::PgTarget& t = pg_target()) {
    try {
        try {
            throw thrown;
        } catch (...) {
            pg::rethrow_as_error(t, "acquiring lock 'x'");
        }
    } catch (const sqlock::error& e) {
        return pg_failure(t, e);
    }
    FAIL("rethrow_as_error() returned");
    return {};
}

// What rethrow_connect_error() makes of `thrown`.
template <typename E>
PgFailure pg_connect_failure(const E& thrown, const std::string& skipped = {}) {
    const pg::PgTarget t = pg_target();
    try {
        try {
            throw thrown;
        } catch (...) {
            pg::rethrow_connect_error(t, skipped);
        }
    } catch (const sqlock::error& e) {
        return pg_failure(t, e);
    }
    FAIL("rethrow_connect_error() returned");
    return {};
}

pqxx::sql_error pg_server_error(const char* sqlstate,
                                const std::string& text = "the server's words") {
    return pqxx::sql_error("ERROR:  " + text + "\nLINE 1: SELECT ...\n", "SELECT ...", sqlstate);
}

const std::string server_words = "the server's words";

}  // namespace

TEST_CASE("a missing table or schema says to run sqlock init", "[unit][postgres][errors]") {
    PgFailure m = pg_failure_of(pg_server_error("42P01"));
    CHECK(m.category == errc::configuration);
    CHECK_FALSE(m.read_only);
    CHECK(m.code == "42P01");
    CHECK(m.message == "lock table locks does not exist (" + server_words +
                           " while acquiring lock 'x'); run `sqlock init` or Locker::init() to "
                           "create it");
    m = pg_failure_of(pg_server_error("42P01"), pg_target("ops.locks"));
    CHECK(m.message == "lock table ops.locks does not exist (" + server_words +
                           " while acquiring lock 'x'); run `sqlock init` or Locker::init() to "
                           "create it (its schema must exist)");
    // libpqxx 6.4 leaves the SQLSTATE out of some of its exceptions.
    m = pg_failure_of(pqxx::undefined_table("ERROR:  " + server_words));
    CHECK(m.code == "42P01");
    CHECK(m.category == errc::configuration);

    m = pg_failure_of(pg_server_error("3F000"), pg_target("ops.locks"));
    CHECK(m.category == errc::configuration);
    CHECK(m.code == "3F000");
    CHECK(m.message == "the schema of lock table ops.locks does not exist (" + server_words +
                           " while acquiring lock 'x'); create the schema, then run `sqlock "
                           "init` or Locker::init()");
}

TEST_CASE("a privilege or a column missing is a configuration error", "[unit][postgres][errors]") {
    PgFailure m = pg_failure_of(pqxx::insufficient_privilege("ERROR:  " + server_words));
    CHECK(m.category == errc::configuration);
    CHECK(m.code == "42501");
    CHECK(m.message ==
          "insufficient privilege on lock table locks while acquiring lock 'x': " + server_words +
              "; the role needs SELECT, INSERT, UPDATE and DELETE on the table and "
              "USAGE on its id sequence (and CREATE on the schema for `sqlock init`)");
    for (const char* state : {"42703", "42P10"}) {
        INFO(state);
        m = pg_failure_of(pg_server_error(state));
        CHECK(m.category == errc::configuration);
        CHECK(m.code == state);
        CHECK(m.message == "lock table locks does not look like a lock table (" + server_words +
                               " while acquiring lock 'x'); it needs the columns id, lockstring "
                               "(unique), created, expires, locked_by");
    }
}

TEST_CASE("a read-only server is a read-only configuration error", "[unit][postgres][errors]") {
    const PgFailure m = pg_failure_of(pg_server_error("25006"));
    CHECK(m.category == errc::configuration);
    CHECK(m.read_only);
    CHECK(m.code == "25006");
    CHECK(m.message == "the PostgreSQL server is read-only (" + server_words +
                           " while acquiring lock 'x'); point the URL at the primary, or list "
                           "every host and add target_session_attrs=read-write");
}

TEST_CASE("a lost link, a cancelled statement and an unknown outcome are connection errors",
          "[unit][postgres][errors]") {
    for (const char* state :
         {"08000", "08006", "08P01", "57P01", "57P02", "57P03", "57P05", "25P03"}) {
        INFO(state);
        const PgFailure m = pg_failure_of(pg_server_error(state));
        CHECK(m.category == errc::connection);
        CHECK_FALSE(m.read_only);
        CHECK(m.code == state);
        CHECK(m.message ==
              "lost the connection to PostgreSQL while acquiring lock 'x': " + server_words);
    }
    PgFailure m = pg_failure_of(pqxx::sql_error("FATAL:  " + server_words, "", "57P01"));
    CHECK(m.message ==
          "lost the connection to PostgreSQL while acquiring lock 'x': " + server_words);

    m = pg_failure_of(pg_server_error("57014"));
    CHECK(m.category == errc::connection);
    CHECK(m.code == "57014");
    CHECK(m.message == "PostgreSQL cancelled the statement while acquiring lock 'x' (" +
                           server_words +
                           "; statement_timeout, or an administrator); nothing was changed");

    m = pg_failure_of(pqxx::statement_completion_unknown("ERROR:  " + server_words));
    CHECK(m.category == errc::connection);
    CHECK(m.code == "40003");
    CHECK(m.message ==
          "PostgreSQL cannot tell whether the statement completed (acquiring lock 'x'): " +
              server_words);

    m = pg_failure_of(pqxx::broken_connection("server closed the connection"));
    CHECK(m.category == errc::connection);
    CHECK(m.code == "");
    CHECK(m.message ==
          "lost the connection to PostgreSQL while acquiring lock 'x': server closed the "
          "connection");

    m = pg_failure_of(pqxx::in_doubt_error("the commit's answer was lost"));
    CHECK(m.category == errc::connection);
    CHECK(m.code == "");
    CHECK(m.message ==
          "the connection to PostgreSQL broke while committing (acquiring lock "
          "'x'); the change may or may not have been made: the commit's answer "
          "was lost");
}

TEST_CASE("a race the server broke off is busy", "[unit][postgres][errors]") {
    const std::string busy = "PostgreSQL rolled back the statement while acquiring lock 'x' (" +
                             server_words + "): another transaction was in the way; try again";
    for (const char* state : {"40001", "40P01", "55P03"}) {
        INFO(state);
        const PgFailure m = pg_failure_of(pg_server_error(state));
        CHECK(m.category == errc::busy);
        CHECK(m.code == state);
        CHECK(m.message == busy);
    }
    PgFailure m = pg_failure_of(pqxx::serialization_failure("ERROR:  " + server_words));
    CHECK(m.category == errc::busy);
    CHECK(m.code == "40001");
    CHECK(m.message == busy);
    m = pg_failure_of(pqxx::deadlock_detected("ERROR:  " + server_words));
    CHECK(m.code == "40P01");
    CHECK(m.message == busy);
}

TEST_CASE("any other failure is a backend error with its SQLSTATE", "[unit][postgres][errors]") {
    PgFailure m = pg_failure_of(pg_server_error("22001"));
    CHECK(m.category == errc::backend);
    CHECK(m.code == "22001");
    CHECK(m.message == "PostgreSQL error 22001 while acquiring lock 'x': " + server_words);
    m = pg_failure_of(pg_server_error(nullptr));
    CHECK(m.category == errc::backend);
    CHECK(m.code == "");
    CHECK(m.message == "PostgreSQL error (no SQLSTATE) while acquiring lock 'x': " + server_words);
    m = pg_failure_of(pqxx::transaction_rollback("ERROR:  " + server_words));
    CHECK(m.category == errc::backend);
    CHECK(m.code == "40000");
    CHECK(m.message == "PostgreSQL error 40000 while acquiring lock 'x': " + server_words);
    // A SQLSTATE no row names, and text that is not one, fall through too.
    for (const char* state : {"4", "42p01", "42P01X", "4{P}1"}) {
        INFO(state);
        m = pg_failure_of(pg_server_error(state));
        CHECK(m.category == errc::backend);
        CHECK(m.code == state);
    }

    m = pg_failure_of(std::runtime_error("out of {memory}"));
    CHECK(m.category == errc::backend);
    CHECK(m.message == "PostgreSQL failure while acquiring lock 'x': out of {memory}");
    m = pg_failure_of(42);
    CHECK(m.category == errc::backend);
    CHECK(m.message == "unknown failure while acquiring lock 'x'");
}

TEST_CASE("the password is redacted out of the server's words", "[unit][postgres][errors]") {
    const PgFailure m =
        pg_failure_of(pg_server_error("22001", std::string("no ") + pg_password + " here"));
    CHECK(m.message.find(pg_password) == std::string::npos);
    CHECK(m.message.find("no ") != std::string::npos);
}

TEST_CASE("a failed connection: read-only, refused, or unreachable", "[unit][postgres][errors]") {
    PgFailure m =
        pg_connect_failure(pg_server_error("57P03", "the database system is starting up"));
    CHECK(m.category == errc::connection);
    CHECK(m.code == "57P03");
    CHECK(m.message ==
          "lost the connection to PostgreSQL while connecting: the database system is starting "
          "up");

    m = pg_connect_failure(pqxx::broken_connection("server is in hot standby mode"), "host b");
    CHECK(m.category == errc::configuration);
    CHECK(m.read_only);
    CHECK(m.code == "");
    CHECK(m.message ==
          "no writable PostgreSQL server among the hosts of the URL (a failover or a switchover "
          "under way?): server is in hot standby mode (and host b)");
    m = pg_connect_failure(pqxx::broken_connection("session is read-only"));
    CHECK(m.read_only);

    m = pg_connect_failure(pqxx::broken_connection("password authentication failed for user \"u\""),
                           "host b");
    CHECK(m.category == errc::configuration);
    CHECK_FALSE(m.read_only);
    CHECK(m.message ==
          "PostgreSQL refused the login (check the user, password and database in the URL, "
          "~/.pgpass or PGPASSWORD): password authentication failed for user \"u\"");
    m = pg_connect_failure(pqxx::broken_connection("no such database: db"));
    CHECK(m.category == errc::configuration);

    m = pg_connect_failure(pqxx::broken_connection("Connection refused"), "host b");
    CHECK(m.category == errc::connection);
    CHECK(m.message == "cannot connect to PostgreSQL: Connection refused (and host b)");
    m = pg_connect_failure(pqxx::broken_connection("Connection refused"));
    CHECK(m.message == "cannot connect to PostgreSQL: Connection refused");
    m = pg_connect_failure(7, "host b");
    CHECK(m.category == errc::connection);
    CHECK(m.message == "cannot connect to PostgreSQL (and host b)");
}
