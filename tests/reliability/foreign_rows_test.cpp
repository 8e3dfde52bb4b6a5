// Rows written by other programs: DBIx::Locker's locked_by, malformed JSON,
// NULLs, and timestamps no sqlock would write (far future, far past, not a
// date at all). None of it may crash or wedge listing, showing, reaping or
// locking; the conformance suite has the basic cases, this goes further.
#include <algorithm>
#include <catch2/catch.hpp>
#include <iterator>
#include <set>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;

namespace {

using Planted = sqlock_test::ForeignRow;

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

std::vector<Planted> odd_rows() {
    const std::string future = "'2999-01-01 00:00:00'", past = "'2001-01-01 00:00:00'";
    const std::string dbix = quoted(R"({"host":"perl-host","guid":"9F2C","pid":4242})");
    std::vector<Planted> rows = {
        // locked_by as others write it (all with a sane expiry in the future).
        {"by-dbix", past, future, dbix, Planted::held},
        {"by-null", past, future, "NULL", Planted::held},
        {"by-empty", past, future, "''", Planted::held},
        {"by-open-brace", past, future, "'{'", Planted::held},
        {"by-json-null", past, future, "'null'", Planted::held},
        {"by-array", past, future, "'[1,2,3]'", Planted::held},
        {"by-string", past, future, quoted(R"("just a string")"), Planted::held},
        {"by-huge-pid", past, future, quoted(R"({"pid":1e400})"), Planted::held},
        {"by-big-int-pid", past, future, quoted(R"({"pid":99999999999999999999})"), Planted::held},
        {"by-negative-pid", past, future, quoted(R"({"pid":-1})"), Planted::held},
        {"by-text-pid", past, future, quoted(R"({"pid":"abc"})"), Planted::held},
        {"by-nested-host", past, future, quoted(R"({"host":{"a":[1]},"user":[null]})"),
         Planted::held},
        {"by-deep-nesting", past, future, quoted(std::string(5000, '[') + std::string(5000, ']')),
         Planted::held},
        {"by-newline-host", past, future, quoted("{\"host\":\"a\\nb\",\"pid\":1}"), Planted::held},
        {"by-100k", past, future, quoted(std::string(100000, 'z')), Planted::held},
        {"by-escaped-nul", past, future, quoted(R"({"host":"a\u0000b","pid":2})"), Planted::held},
        // Timestamps that are valid, but far from now.
        {"ts-far-future", past, "'9999-12-31 23:59:59'", dbix, Planted::held},
        {"ts-far-past", "'0001-01-01 00:00:00'", "'0001-01-01 00:00:01'", dbix, Planted::expired},
        {"ts-epoch", "'1970-01-01 00:00:00'", "'1970-01-01 00:00:00'", dbix, Planted::expired},
        {"ts-leap-day", "'2000-02-29 00:00:00'", "'2000-02-29 23:59:59.999'", dbix,
         Planted::expired},
        {"ts-created-after-expires", future, past, dbix, Planted::expired},
    };
    // And the odd timestamps only this dialect stores, from the backend's
    // test context (the tests declare [needs:odd_timestamp_rows]).
    for (Planted row : sqlock_test::backend_context().hooks.odd_timestamp_rows()) {
        if (row.locked_by.empty()) row.locked_by = dbix;
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace

TEST_CASE("odd rows from other programs never break list, show, reap or locking",
          "[foreign][needs:odd_timestamp_rows]") {
    auto db = fresh_database();
    auto rows = odd_rows();
    for (const auto& r : rows)
        sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                      " (lockstring, created, expires, locked_by) VALUES (" +
                                      quoted(r.name) + ", " + r.created + ", " + r.expires + ", " +
                                      r.locked_by + ")");
    auto locker = db.open();

    std::vector<sqlock::LockInfo> listed;
    REQUIRE_NOTHROW(listed = locker.list());
    CHECK(listed.size() == rows.size());
    std::vector<sqlock::LockInfo> expired;
    REQUIRE_NOTHROW(expired = locker.list_expired());
    for (const auto& info : listed) {
        INFO(info.name << ": created '" << info.created << "' expires '" << info.expires
                       << "' left " << info.seconds_left);
        CHECK_NOTHROW(sqlock::describe_holder(info));
        CHECK_NOTHROW(locker.show(info.name));
    }
    for (const auto& r : rows) {
        INFO(r.name);
        std::optional<sqlock::Lock> lock;
        REQUIRE_NOTHROW(lock = locker.try_lock(r.name));
        if (r.verdict == Planted::held) CHECK_FALSE(lock);
        if (r.verdict == Planted::expired) CHECK(lock);
    }
    // The reaper deletes exactly what list_expired() reported and never
    // throws; taken-over rows were replaced by our own (released) locks.
    std::set<std::string> before, expired_now, expected_after, after;
    for (const auto& info : locker.list()) before.insert(info.name);
    for (const auto& info : locker.list_expired()) expired_now.insert(info.name);
    std::set_difference(before.begin(), before.end(), expired_now.begin(), expired_now.end(),
                        std::inserter(expected_after, expected_after.end()));
    std::size_t purged = 0;
    REQUIRE_NOTHROW(purged = locker.purge_expired());
    std::vector<sqlock::LockInfo> remaining;
    REQUIRE_NOTHROW(remaining = locker.list());
    for (const auto& info : remaining) after.insert(info.name);
    CHECK(purged == expired_now.size());
    CHECK(after == expected_after);
    for (const auto& info : remaining) {
        INFO(info.name);
        CHECK_FALSE(info.name.empty());
        CHECK_NOTHROW(locker.force_release(info.name));
    }
    CHECK(locker.list().empty());
    WARN("foreign rows (" << sqlock_test::backend() << "): " << rows.size() << " odd rows planted; "
                          << expired.size() << " listed as expired, " << purged
                          << " reaped after take-overs");
}

// Regression: describe_holder() used to print host, user and program as the
// row had them, so a newline in a foreign row split the busy error over lines.
TEST_CASE("a foreign holder's fields are escaped in messages", "[foreign]") {
    auto db = fresh_database();
    sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                  " (lockstring, created, expires, locked_by) VALUES ('nl', "
                                  "'2001-01-01 00:00:00', '2999-01-01 00:00:00', "
                                  "'{\"host\":\"evil\\nFAKE: line\",\"pid\":1}')");
    auto locker = db.open();
    auto info = locker.show("nl");
    REQUIRE(info);
    CHECK(sqlock::describe_holder(*info).find('\n') == std::string::npos);
    try {
        locker.lock("nl");
        FAIL("took a held lock");
    } catch (const sqlock::error& e) {
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
}

TEST_CASE("a row's expired() flag agrees with what the database will do with it",
          "[foreign][needs:odd_timestamp_rows]") {
    auto db = fresh_database();
    for (const auto& r : odd_rows())
        if (r.verdict != Planted::either)
            sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                          " (lockstring, created, expires, locked_by) VALUES (" +
                                          quoted(r.name) + ", " + r.created + ", " + r.expires +
                                          ", " + r.locked_by + ")");
    auto locker = db.open();
    reliability::check_expired_agrees_with_list_expired(locker);
}
