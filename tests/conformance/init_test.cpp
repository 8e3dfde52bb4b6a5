// Creating the lock table: auto_init makes it on first use only when asked
// to, or for the embedded default database.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "test_support.hpp"

using sqlock_test::fresh_database;
using sqlock_test::locker_options;

TEST_CASE("auto_init creates the table only when asked, or for the embedded default", "[init]") {
    using mode = sqlock::LockerOptions::auto_init_mode;
    auto db = fresh_database();  // the database exists; the table below does not
    const std::string table =
        sqlock_test::is_server_backend() ? db.table + "_auto" : "auto_created";
    auto needs_init = [&](mode m) {
        sqlock::Locker locker(db.url, locker_options().table(table).auto_init(m));
        try {
            locker.try_lock("first");
            FAIL("the table was there or was created");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == sqlock::errc::configuration);
            CHECK(std::string(e.what()).find("sqlock init") != std::string::npos);
        }
    };

    SECTION("by default a URL's table is not created: configuration error, nothing made") {
        needs_init(mode::when_default);
        needs_init(mode::never);  // still missing after the attempt above
    }
    SECTION("`always` creates it on first use, for everyone") {
        sqlock::Locker creating(db.url, locker_options().table(table).auto_init(mode::always));
        auto lock = creating.try_lock("first");
        REQUIRE(lock);
        sqlock::Locker other(db.url, locker_options().table(table).auto_init(mode::never));
        CHECK_FALSE(other.try_lock("first"));
        CHECK(other.list().size() == 1);
    }
    SECTION("the embedded default: created by default, not with `never`") {
        const std::string state = sqlock_test::scratch_dir() + "/auto-init-state";
        const char* old_xdg = std::getenv("XDG_STATE_HOME");
        const char* old_db = std::getenv("SQLOCK_DB");
        const std::string saved_xdg = old_xdg ? old_xdg : "", saved_db = old_db ? old_db : "";
        struct Restore {
            bool had_xdg, had_db;
            const std::string &xdg, &db;
            ~Restore() {
                had_xdg ? setenv("XDG_STATE_HOME", xdg.c_str(), 1) : unsetenv("XDG_STATE_HOME");
                had_db ? setenv("SQLOCK_DB", db.c_str(), 1) : unsetenv("SQLOCK_DB");
            }
        } restore{old_xdg != nullptr, old_db != nullptr, saved_xdg, saved_db};
        setenv("XDG_STATE_HOME", state.c_str(), 1);
        unsetenv("SQLOCK_DB");
        {
            sqlock::Locker never("", locker_options().auto_init(mode::never));
            try {
                never.try_lock("first");
                FAIL("`never` created the table of the embedded default");
            } catch (const sqlock::error& e) {
                CHECK(e.category() == sqlock::errc::configuration);
            }
        }
        sqlock::Locker embedded("");
        CHECK(embedded.try_lock("first"));
    }
}
