// Bad input: clear invalid_argument / configuration errors, nothing written.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::category_of;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

TEST_CASE("bad lock names are rejected and nothing is written", "[validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::vector<std::string> bad = {
        "",
        std::string(129, 'x'),
        std::string("nul\0byte", 8),
        "\xff\xfe",
        "\xc0\xaf",          // overlong '/'
        "\xed\xa0\x80",      // UTF-16 surrogate
        "trunc\xe2\x82",     // truncated sequence
        "\xf4\x90\x80\x80",  // beyond U+10FFFF
    };
    for (const auto& name : bad) {
        INFO("name bytes: " << name.size());
        CHECK(category_of([&] { locker.try_lock(name); }) == sqlock::errc::invalid_argument);
        CHECK(category_of([&] { locker.lock(name); }) == sqlock::errc::invalid_argument);
    }
    CHECK(locker.list().empty());
}

TEST_CASE("hostile but valid names are stored as data, never as SQL", "[validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::vector<std::string> names = {"'; DROP TABLE sqlock_locks; --", "quote'\"",
                                            std::string(128, 'y'), "ünïcødé ✓", "a\\b"};
    for (const auto& name : names) {
        auto lock = locker.try_lock(name);
        REQUIRE(lock);
        CHECK(locker.show(name)->name == name);
    }
    CHECK(locker.list().empty());
}

TEST_CASE("zero, negative and absurd durations are rejected", "[validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    CHECK(category_of([&] { locker.lock("d", lock_options().expires(0s)); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { locker.lock("d", lock_options().expires(-5s)); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] {
              locker.lock("d", lock_options().expires(std::chrono::hours(24 * 400)));
          }) == sqlock::errc::invalid_argument);
    CHECK(category_of([&] { locker.lock("d", lock_options().wait(-1s)); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { locker.lock("d", lock_options().min_hold(-1s)); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { locker.acquire_slot("d", 0); }) == sqlock::errc::invalid_argument);
    // A minimum hold longer than the lease would keep the lock past it.
    CHECK(category_of([&] { locker.lock("d", lock_options().expires(1min).min_hold(5min)); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { locker.try_lock("d", lock_options().expires(1min).min_hold(61s)); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { locker.acquire_slot(std::string(127, 's'), 10); }) ==
          sqlock::errc::invalid_argument);
    CHECK(locker.list().empty());
    CHECK_NOTHROW(locker.try_lock("d", lock_options().expires(1min).min_hold(1min)));
}

TEST_CASE("bad table names and URLs are rejected before touching a database", "[validation]") {
    auto db = fresh_database();
    for (const std::string& table : std::vector<std::string>{
             "", "1abc", "a-b", "x;drop", "a b", "\"q\"", "a.b.c", std::string(64, 't')}) {
        INFO(table);
        CHECK(category_of([&] { sqlock::Locker(db.url, locker_options().table(table)); }) ==
              sqlock::errc::invalid_argument);
    }
    // One rule for a URL that cannot be read, whatever is wrong with it:
    // invalid_argument (the command's 64), as for a malformed SQLite URL.
    CHECK(category_of([&] { sqlock::Locker("oracle://x/y"); }) == sqlock::errc::invalid_argument);
    CHECK(category_of([&] { sqlock::Locker("/just/a/path.db"); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { sqlock::Locker("not a url"); }) == sqlock::errc::invalid_argument);
    CHECK(category_of([&] { sqlock::Locker("sqlite://host/x.db"); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { sqlock::Locker("sqlite:"); }) == sqlock::errc::invalid_argument);
}

TEST_CASE("durations parse in every documented form", "[validation]") {
    using sqlock::parse_duration;
    CHECK(parse_duration("90") == 90s);
    CHECK(parse_duration("90s") == 90s);
    CHECK(parse_duration("15m") == 15min);
    CHECK(parse_duration("2h") == 2h);
    CHECK(parse_duration("1d") == 24h);
    CHECK(parse_duration("1h30m") == 90min);
    CHECK(parse_duration("250ms") == 250ms);
    CHECK(parse_duration("0") == 0s);
    for (const char* bad : {"", "abc", "-5", "1.5h", "5x", "1m1h", "1h1h", "1h30", " 5",
                            "99999999999999999999", "h", "5 s"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_duration(bad), sqlock::error);
    }
    CHECK(sqlock::format_duration(90min) == "1h30m");
    CHECK(sqlock::format_duration(0s) == "0s");
}
