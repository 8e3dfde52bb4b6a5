// Error categories on PostgreSQL, and the password never leaking into them.
#include <catch2/catch.hpp>
#include <functional>

#include "pg_test.hpp"
#include "test_support.hpp"

using sqlock_test::fresh_database;

namespace {

struct Failure {
    sqlock::errc category{};
    std::string message;
    std::string code;
};

// Runs `op` and returns the sqlock::error it must throw.
Failure failure_of(const std::function<void()>& op) {
    try {
        op();
    } catch (const sqlock::error& e) {
        return {e.category(), e.what(), e.backend_code()};
    }
    FAIL("expected a sqlock::error");
    return {};
}

bool contains(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
}

using pg_test::table;

}  // namespace

TEST_CASE("a missing table is a configuration error saying to run sqlock init", "[pg]") {
    sqlock::Locker locker(pg_test::url(), table(pg_test::unique("no_such_table")));
    for (auto op : std::vector<std::function<void()>>{
             [&] { locker.try_lock("x"); },
             [&] { locker.list(); },
             [&] { locker.try_acquire_slot("s", 2); },
             [&] { locker.purge_expired(); },
         }) {
        Failure f = failure_of(op);
        CHECK(f.category == sqlock::errc::configuration);
        CHECK(f.code == "42P01");
        CHECK(contains(f.message, "sqlock init"));
        CHECK(contains(f.message, "no_such_table"));
        CHECK_FALSE(pg_test::leaks_password(f.message));
    }
}

TEST_CASE("a missing schema is a configuration error", "[pg]") {
    sqlock::Locker locker(pg_test::url(), table("no_such_schema.locks"));
    for (auto op : std::vector<std::function<void()>>{
             [&] { locker.try_lock("x"); },
             [&] { locker.init(); },
         }) {
        Failure f = failure_of(op);
        CHECK(f.category == sqlock::errc::configuration);
        CHECK(f.code == "3F000");
        CHECK(contains(f.message, "create the schema"));
    }
}

TEST_CASE("a table that is not a lock table is a configuration error", "[pg]") {
    std::string name = pg_test::unique("not_locks");
    pg_test::query(pg_test::url(), "CREATE TABLE " + name + " (a int)");
    sqlock::Locker locker(pg_test::url(), table(name));
    Failure f = failure_of([&] { locker.try_lock("x"); });
    CHECK(f.category == sqlock::errc::configuration);
    CHECK(contains(f.message, "lock table"));
    pg_test::query(pg_test::url(), "DROP TABLE " + name);
}

TEST_CASE("insufficient privilege is a configuration error saying so", "[pg]") {
    auto db = fresh_database();
    std::string url = pg_test::with_user(db.url, "sqlock_noaccess");
    sqlock::Locker locker(url, table(db.table));
    Failure f = failure_of([&] { locker.try_lock("x"); });
    CHECK(f.category == sqlock::errc::configuration);
    CHECK(f.code == "42501");
    CHECK(contains(f.message, "privilege"));
    CHECK_FALSE(pg_test::leaks_password(f.message));
    // init() of an existing table creates nothing, and says what this role
    // lacks instead of calling the table ready: a role that cannot use the
    // table would fail on its first lock otherwise...
    f = failure_of([&] { locker.init(); });
    CHECK(f.category == sqlock::errc::configuration);
    CHECK(f.code == "42501");
    CHECK(contains(f.message, "lacks SELECT, INSERT, UPDATE, DELETE and USAGE"));
    CHECK_FALSE(pg_test::leaks_password(f.message));
    // ...and creating one needs CREATE.
    sqlock::Locker creator(url, table(pg_test::unique("cannot_create")));
    f = failure_of([&] { creator.init(); });
    CHECK(f.category == sqlock::errc::configuration);
    CHECK(f.code == "42501");
}

TEST_CASE("an unreachable server is a connection error naming the host", "[pg]") {
    // Port 1 on the loopback: refused at once.
    std::string url =
        "postgresql://sqlock_test:" + pg_test::password() + "@127.0.0.1:1/sqlock_test";
    sqlock::Locker locker(url, table("sqlock_locks"));
    Failure f = failure_of([&] { locker.try_lock("x"); });
    CHECK(f.category == sqlock::errc::connection);
    CHECK(contains(f.message, "127.0.0.1"));
    CHECK_FALSE(pg_test::leaks_password(f.message));
    CHECK_FALSE(pg_test::leaks_password(locker.url()));
    CHECK(contains(locker.url(), "***"));
}

TEST_CASE("an unknown host is a connection error naming it", "[pg]") {
    std::string url = "postgresql://sqlock_test:" + pg_test::password() +
                      "@no-such-host.invalid:5432/sqlock_test?connect_timeout=5";
    sqlock::Locker locker(url, table("sqlock_locks"));
    Failure f = failure_of([&] { locker.init(); });
    CHECK(f.category == sqlock::errc::connection);
    CHECK(contains(f.message, "no-such-host.invalid"));
    CHECK_FALSE(pg_test::leaks_password(f.message));
    // Where the nameservers do not answer, the call gave up at its
    // db_timeout while the lookup goes on (two silent nameservers: 20 s);
    // the tests after this one fork children that run code.
    REQUIRE(sqlock_test::await_lookups_ended(std::chrono::seconds(300)));
}

TEST_CASE("the password appears in no error message and no URL", "[pg]") {
    auto db = fresh_database();
    const std::string real = pg_test::password();
    struct Case {
        const char* what;
        std::string url;
        std::string secret;  // must not appear either
    };
    std::vector<Case> cases = {
        {"wrong password", pg_test::with_password(db.url, "WrongSecret9417"), "WrongSecret9417"},
        {"password libpq cannot decode", pg_test::with_password(db.url, "Bad%zzSecret5521"),
         "zzSecret5521"},
        {"password with an escaped '@'", pg_test::with_password(db.url, "At%40Secret3302"),
         "At@Secret3302"},
        {"password in the query",
         pg_test::with_param(pg_test::with_password(db.url, "x"), "password", "QuerySecret7781"),
         "QuerySecret7781"},
        {"bad port",
         pg_test::with_password(db.url, real).replace(db.url.rfind(':'), 1, ":notaport"), real},
        {"unknown parameter", pg_test::with_param(db.url, "no_such_option", "1"), real},
        {"unknown database", db.url.substr(0, db.url.rfind('/')) + "/no_such_database", real},
        {"unknown user", pg_test::with_user(db.url, "no_such_user"), real},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        std::string url_shown;
        Failure f = failure_of([&] {
            sqlock::Locker locker(c.url, table(db.table));  // may refuse a malformed URL
            url_shown = locker.url();
            locker.try_lock("x");
        });
        CHECK(url_shown.find(c.secret) == std::string::npos);
        CHECK(url_shown.find(real) == std::string::npos);
        CHECK(f.message.find(c.secret) == std::string::npos);
        CHECK(f.message.find(real) == std::string::npos);
        // A login the server refused (password, user, database) is
        // configuration; tests/cli/database_errors_test.cpp pins down which is
        // which.
        CHECK((f.category == sqlock::errc::connection ||
               f.category == sqlock::errc::configuration ||
               f.category == sqlock::errc::invalid_argument));
    }
}

TEST_CASE("a URL libpq cannot parse is refused when the Locker is made", "[pg]") {
    for (const std::string& url : {
             pg_test::with_param(pg_test::url(), "no_such_option", "1"),
             pg_test::url() + "?novalue",
             pg_test::with_password(pg_test::url(), "Bad%zzSecret5521"),
         }) {
        Failure f = failure_of([&] { sqlock::Locker locker(url); });
        CHECK(f.category == sqlock::errc::invalid_argument);
        CHECK(contains(f.message, "malformed PostgreSQL URL"));
        CHECK_FALSE(contains(f.message, "zzSecret5521"));
        CHECK_FALSE(pg_test::leaks_password(f.message));
    }
}

TEST_CASE("a failed release in a destructor reports without the password", "[pg]") {
    auto db = fresh_database();
    std::string reported;
    auto previous =
        sqlock::set_release_error_handler([&](const sqlock::error& e) { reported = e.what(); });
    {
        auto locker = db.open();
        auto lock = locker.lock("doomed");
        pg_test::query(db.url, "DROP TABLE " + db.table);
    }
    sqlock::set_release_error_handler(previous);
    CHECK(contains(reported, "sqlock init"));
    CHECK_FALSE(pg_test::leaks_password(reported));
}
