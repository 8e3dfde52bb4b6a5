// Lock sets that hold some names shared and others exclusively, all in one
// transaction.

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock::lock_mode;
using sqlock_test::category_of;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

namespace {

sqlock::LockOptions shared_mode() {
    sqlock::LockOptions o;
    o.mode = lock_mode::shared;
    return o;
}

}  // namespace

TEST_CASE("a set holds some names shared and others exclusively", "[set][shared]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto set = locker.lock_all({{"mx-report", lock_mode::shared}, {"mx-migrate"}});
    CHECK(set.names() == std::vector<std::string>{"mx-migrate", "mx-report"});
    CHECK(set.mode("mx-report") == lock_mode::shared);
    CHECK(set.mode("mx-migrate") == lock_mode::exclusive);
    CHECK(set.lockstring("mx-migrate") == "mx-migrate");
    CHECK(set.lockstring("mx-report").rfind("mx-report#shared-", 0) == 0);
    CHECK(category_of([&] { (void)set.mode("mx-other"); }) == sqlock::errc::invalid_argument);
    // The shared name's holder row carries the set's id for that name.
    auto rows = locker.list("mx-report#");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].id == set.id("mx-report"));
    CHECK(rows[0].holder.guid == set.owner_token());

    auto other = db.open();
    // Beside the set: neither name exclusively, nor the exclusive one
    // shared ...
    CHECK_FALSE(other.try_lock("mx-report"));
    CHECK_FALSE(other.try_lock("mx-migrate"));
    CHECK_FALSE(other.try_lock("mx-migrate", shared_mode()));
    // ... but another shared holder of the shared name.
    auto reader = other.try_lock("mx-report", shared_mode());
    CHECK(reader);
    CHECK(other.shared_holders("mx-report").size() == 2);

    set.release();
    CHECK(other.shared_holders("mx-report").size() == 1);
    CHECK(other.try_lock("mx-migrate"));
    reader->release();
    CHECK(other.try_lock("mx-report"));
}

TEST_CASE("a set's names all taken shared by the options' mode", "[set][shared]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto first = locker.lock_all({"sh-a", "sh-b"}, shared_mode());
    auto second = db.open().try_lock_all({"sh-a", "sh-b"}, shared_mode());
    REQUIRE(second);
    CHECK(first.mode("sh-a") == lock_mode::shared);
    CHECK(second->mode("sh-b") == lock_mode::shared);
    // Two holders of each name, each a row, and one marker per name.
    CHECK(locker.shared_holders("sh-a").size() == 2);
    CHECK(locker.shared_holders("sh-b").size() == 2);
    CHECK_FALSE(db.open().try_lock_all({"sh-b", "sh-c"}));
    first.release();
    second->release();
    CHECK(locker.list("sh-").empty());
}

TEST_CASE("a mixed set meets a name held the other way and takes nothing", "[set][shared]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto exclusive = holder.lock("way-x");
    auto reader = holder.lock("way-s", shared_mode());
    auto locker = db.open();
    // Shared where an exclusive holder is, exclusive where shared holders are.
    try {
        locker.lock_all({{"way-x", lock_mode::shared}, {"way-s"}, {"way-free"}});
        FAIL("a set with names held the other way was taken");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        const std::string what = e.what();
        CHECK_THAT(what, Catch::Contains("'way-x' is held by"));
        CHECK_THAT(what, Catch::Contains("'way-s' is held by"));
        CHECK_THAT(what, !Catch::Contains("'way-free'"));
    }
    // Nothing of the set was written: no row, no marker, no holder row.
    CHECK(locker.list("way-free").empty());
    CHECK(locker.list("way-x#").empty());
    CHECK(locker.shared_holders("way-s").size() == 1);
    // Held the same way, the names go together.
    auto set = locker.try_lock_all({{"way-s", lock_mode::shared}, {"way-free"}});
    CHECK(set);
}

TEST_CASE("a waiting mixed set wakes when the exclusive holder in its way leaves",
          "[set][shared]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto x = holder.lock("wake-x", lock_options().expires(60s));
    auto locker = db.open();
    std::atomic<bool> got{false};
    std::thread waiter([&] {
        try {
            auto set = locker.lock_all({{"wake-x", lock_mode::shared}, {"wake-y"}},
                                       lock_options().expires(60s).wait(30s));
            got = set.mode("wake-x") == lock_mode::shared;
        } catch (...) {
        }
    });
    // The waiting set holds nothing meanwhile.
    CHECK_FALSE(sqlock_test::eventually([&] { return !holder.list("wake-y").empty(); }, 300ms));
    x.release();
    waiter.join();
    CHECK(got);
}

TEST_CASE("bad mixed sets are refused before anything is written", "[set][shared][validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto category = [&](const std::function<void()>& f) { return category_of(f); };
    // A name asked for in both modes.
    CHECK(category([&] {
              locker.try_lock_all({{"dup", lock_mode::shared}, {"dup", lock_mode::exclusive}});
          }) == sqlock::errc::invalid_argument);
    // The members say their modes; the options do not.
    CHECK(category([&] {
              locker.try_lock_all({{"m-a"}, {"m-b"}}, shared_mode());
          }) == sqlock::errc::invalid_argument);
    // Too long to be held shared (each holder row adds 24 bytes).
    CHECK(category([&] {
              locker.try_lock_all({{std::string(105, 'n'), lock_mode::shared}, {"m-c"}});
          }) == sqlock::errc::invalid_argument);
    CHECK(category([&] {
              locker.try_lock_all(std::vector<std::string>{"m-d", std::string(105, 'n')},
                                  shared_mode());
          }) == sqlock::errc::invalid_argument);
    CHECK(locker.list().empty());
    // The same name twice in one mode counts once.
    std::vector<sqlock::SetMember> twice{{"m-e", lock_mode::shared}, {"m-e", lock_mode::shared}};
    auto set = locker.try_lock_all(twice);
    REQUIRE(set);
    CHECK(set->size() == 1);
}

TEST_CASE("a mixed set's heartbeat keeps its shared names past the first lease",
          "[set][shared][heartbeat]") {
    auto db = fresh_database();
    auto locker = db.open();
    sqlock::LockOptions o;
    // A lease the heartbeat renews every second or two: a sanitizer build
    // on a loaded machine must not let it lapse.
    o.expires = 6s;
    o.heartbeat = true;
    auto set = locker.lock_all({{"hb-s", lock_mode::shared}, {"hb-x"}}, o);
    const std::string first_expiry = set.expires();
    REQUIRE(sqlock_test::eventually([&] { return set.expires() > first_expiry; }, 10s));
    // The marker covers the holder row it was extended for.
    const auto marker = locker.list("hb-s");
    REQUIRE(marker.size() == 2);  // the marker and our holder row
    CHECK(marker[0].expires >= marker[1].expires);
    CHECK(set.held());
    // Losing the shared name's row is losing the set.
    db.open().force_release("hb-s");
    REQUIRE(sqlock_test::eventually([&] { return set.lost(); }, 10s));
    CHECK(category_of([&] { set.release(); }) == sqlock::errc::lost);
    CHECK(locker.list("hb-").empty());
}

TEST_CASE("a mixed set whose shared name lost its marker is lost at its renewal", "[set][shared]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto set = locker.lock_all({{"nomark-s", lock_mode::shared}, {"nomark-x"}},
                               lock_options().expires(1h).heartbeat(false));
    set.renew();  // renewed whole while the marker is there
    // Another program deletes the marker alone: the holder row no longer
    // keeps exclusive holders out, so it must not be renewed as held.
    sqlock_test::exec_sql(db, "DELETE FROM " + db.table + " WHERE lockstring = 'nomark-s'");
    CHECK(category_of([&] { set.renew(); }) == sqlock::errc::lost);
    CHECK(set.lost());
}

TEST_CASE("a mixed set left by a crashed holder is taken over once its lease ends",
          "[set][shared][expiry]") {
    auto db = fresh_database();
    // The first holder stops renewing and never releases, as a killed
    // process would: its holder row, its exclusive row and the marker stay.
    auto gone = db.open().lock_all({{"crash-s", lock_mode::shared}, {"crash-x"}},
                                   lock_options().expires(300ms).heartbeat(false));
    const auto old_s = gone.id("crash-s"), old_x = gone.id("crash-x");
    gone.detach();
    auto locker = db.open();
    REQUIRE(sqlock_test::eventually([&] {
        for (const auto& row : locker.list("crash-"))
            if (row.seconds_left > 0) return false;
        return true;
    }));
    // Taken the other way round: every expired row gives way, new ids.
    auto set = locker.try_lock_all({{"crash-s"}, {"crash-x", lock_mode::shared}});
    REQUIRE(set);
    CHECK(set->id("crash-s") > old_s);
    CHECK(set->id("crash-x") > old_x);
    CHECK(set->mode("crash-x") == lock_mode::shared);
    set->release();
    // What is left is dead: the crashed holder's shared row, for the reaper.
    for (const auto& row : locker.list("crash-")) CHECK(row.seconds_left <= 0);
    CHECK(locker.purge_expired() <= 1);
    CHECK(locker.list("crash-").empty());
}
