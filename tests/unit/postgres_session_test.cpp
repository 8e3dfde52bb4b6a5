// What sqlock sets on a PostgreSQL session of its own
// (src/backends/postgres/postgres_session.hpp), by server version: a
// setting the server does not know would fail the session.
#include <catch2/catch.hpp>

#include "loading/url.hpp"
#include "postgres_session.hpp"

using namespace std::chrono_literals;
namespace pg = sqlock::detail::postgres;

namespace {

bool sets(const std::vector<pg::SessionSetting>& settings, const std::string& name,
          const std::string& value) {
    for (const auto& s : settings)
        if (s.name == name) return s.value == value;
    return false;
}

bool names(const std::vector<pg::SessionSetting>& settings, const std::string& name) {
    for (const auto& s : settings)
        if (s.name == name) return true;
    return false;
}

}  // namespace

TEST_CASE("a session of sqlock's own reads committed, with the client's bounds",
          "[unit][postgres]") {
    const pg::PgTarget target(sqlock::detail::parse_database_url("postgresql://u@127.0.0.1/db"),
                              "locks", 10s);
    for (int version : {130011, 140000, 150004, 170002}) {
        INFO(version);
        const auto s = pg::session_settings(target, version);
        CHECK(sets(s, "default_transaction_isolation", "read committed"));
        CHECK(sets(s, "statement_timeout", "11000ms"));
        CHECK(sets(s, "lock_timeout", "0"));
        CHECK(sets(s, "enable_seqscan", "off"));
        // Known from 14 and 17 on; never set before.
        CHECK(names(s, "idle_session_timeout") == (version >= 140000));
        CHECK(names(s, "transaction_timeout") == (version >= 170000));
        // Never overridden: a read-only server must stay read-only to us.
        CHECK_FALSE(names(s, "default_transaction_read_only"));
    }
    CHECK(pg::session_setup_sql(target, 150004) ==
          "SET default_transaction_isolation = 'read committed';\n"
          "SET statement_timeout = '11000ms';\nSET lock_timeout = '0';\n"
          "SET idle_session_timeout = '0';\nSET enable_seqscan = 'off';\n");
}
