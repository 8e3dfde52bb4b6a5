// The lock table on PostgreSQL: schema-qualified names, idempotent and
// concurrent init, index names.
#include <catch2/catch.hpp>

#include "pg_test.hpp"
#include "test_support.hpp"

namespace {

using pg_test::table;

std::string indexes_of(const std::string& schema, const std::string& name) {
    return pg_test::query(pg_test::url(),
                          "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes "
                          "WHERE schemaname = '" +
                              schema + "' AND tablename = '" + name + "'");
}

}  // namespace

TEST_CASE("a schema-qualified table (ops.locks) works end to end", "[pg][schema]") {
    const std::string name = pg_test::unique("locks");
    sqlock::Locker locker(pg_test::url(), table("ops." + name));
    locker.init();
    locker.init();  // idempotent
    CHECK(indexes_of("ops", name) ==
          name + "_expires_idx," + name + "_lockstring_key," + name + "_pkey");
    CHECK(indexes_of("public", name).empty());
    {
        auto lock = locker.lock("deploy");
        auto slot = locker.acquire_slot("workers", 2);
        CHECK(locker.list().size() == 2);
        CHECK_FALSE(sqlock::Locker(pg_test::url(), table("ops." + name)).try_lock("deploy"));
    }
    CHECK(locker.list().empty());
    pg_test::query(pg_test::url(), "DROP TABLE ops." + name);
}

TEST_CASE("the table has the documented columns", "[pg][schema]") {
    const std::string name = pg_test::unique("cols");
    sqlock::Locker(pg_test::url(), table(name)).init();
    CHECK(pg_test::query(pg_test::url(),
                         "SELECT string_agg(column_name || ':' || data_type, ',' ORDER BY "
                         "ordinal_position) FROM information_schema.columns WHERE table_name = '" +
                             name + "'") ==
          "id:bigint,lockstring:character varying,created:timestamp with time zone,"
          "expires:timestamp with time zone,locked_by:text");
    pg_test::query(pg_test::url(), "DROP TABLE " + name);
}

TEST_CASE("concurrent init of one new table succeeds everywhere", "[pg][schema]") {
    const std::string name = pg_test::unique("racy");
    auto codes = sqlock_test::run_children(6, [&](int) {
        sqlock::Locker(pg_test::url(), table(name)).init();
        return 0;
    });
    CHECK(codes == std::vector<int>(6, 0));
    pg_test::query(pg_test::url(), "DROP TABLE " + name);
}

TEST_CASE("long table names still get an index each", "[pg][schema]") {
    // 63-byte names that differ only at the end: "<name>_expires_idx" would
    // be truncated to the same identifier for both.
    const std::string stem = pg_test::unique("long");
    const std::string a = stem + std::string(62 - stem.size(), 'x') + "a";
    const std::string b = stem + std::string(62 - stem.size(), 'x') + "b";
    REQUIRE(a.size() == 63);
    sqlock::Locker(pg_test::url(), table(a)).init();
    sqlock::Locker(pg_test::url(), table(b)).init();
    auto count_indexes = [](const std::string& t) {
        return pg_test::query(pg_test::url(),
                              "SELECT count(*) FROM pg_indexes WHERE tablename = '" + t + "'");
    };
    CHECK(count_indexes(a) == "3");
    CHECK(count_indexes(b) == "3");
    // And locking on both works.
    CHECK(sqlock::Locker(pg_test::url(), table(a)).try_lock("x"));
    CHECK(sqlock::Locker(pg_test::url(), table(b)).try_lock("x"));
    pg_test::query(pg_test::url(), "DROP TABLE " + a + "; DROP TABLE " + b);
}
