// Acquire = insert, busy, release, double release, accessors.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("try_lock acquires a free name and refuses a second holder", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto first = locker.try_lock("job");
    REQUIRE(first);
    CHECK(first->name() == "job");
    CHECK(first->lockstring() == "job");
    CHECK(first->slot() == 0);
    CHECK(first->id() > 0);
    CHECK_FALSE(first->created().empty());
    CHECK(first->expires() > first->created());
    CHECK(first->owner_token().size() == 32);
    CHECK(first->locked_by().find(first->owner_token()) != std::string::npos);

    auto other = db.open();  // another Locker: another holder
    CHECK_FALSE(other.try_lock("job"));
    first->release();
    CHECK(other.try_lock("job"));
}

TEST_CASE("lock() on a held name throws busy naming the holder", "[locking]") {
    auto db = fresh_database();
    auto a = db.open();
    auto held = a.lock("report");
    auto b = db.open();
    try {
        b.lock("report");
        FAIL("lock() should have thrown");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        std::string msg = e.what();
        CHECK(msg.find("report") != std::string::npos);
        CHECK(msg.find(":" + std::to_string(getpid())) != std::string::npos);  // host:pid
        CHECK(msg.find("expires in") != std::string::npos);
    }
}

TEST_CASE("release deletes the row; a second release is a no-op", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("x");
    REQUIRE(locker.show("x"));
    lock.release();
    CHECK_FALSE(lock.active());
    CHECK_FALSE(locker.show("x"));
    CHECK_NOTHROW(lock.release());
}

TEST_CASE("the destructor releases", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    { auto lock = locker.lock("scoped"); }
    CHECK(locker.list().empty());
}

TEST_CASE("a moved Lock releases once, from its new owner", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto a = locker.lock("moved");
    sqlock::Lock b = std::move(a);
    CHECK_FALSE(a.active());
    CHECK(b.active());
    CHECK(locker.show("moved"));
    b.release();
    CHECK_FALSE(locker.show("moved"));
}

TEST_CASE("a failed release in a destructor goes to the handler, not an exception", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    std::vector<sqlock::errc> seen;
    auto previous = sqlock::set_release_error_handler(
        [&](const sqlock::error& e) { seen.push_back(e.category()); });
    {
        auto lock = locker.lock("victim");
        auto admin = db.open();
        REQUIRE(admin.force_release("victim"));
    }  // destructor: row gone -> lost, reported
    sqlock::set_release_error_handler(previous);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0] == sqlock::errc::lost);
}

TEST_CASE("renew extends the lease from the database clock", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("renewed", lock_options().expires(10s));
    std::string before = lock.expires();
    lock.renew(1h);
    CHECK(lock.expires() > before);
    auto info = locker.show("renewed");
    REQUIRE(info);
    CHECK(info->expires == lock.expires());
    CHECK(info->seconds_left > 3000);
    CHECK(lock.held());
}

TEST_CASE("Locker::init is idempotent", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("kept");
    CHECK_NOTHROW(locker.init());
    CHECK_NOTHROW(locker.init());
    CHECK(locker.show("kept"));
}

TEST_CASE("detach leaves the row held after the handle is gone", "[locking]") {
    auto db = fresh_database();
    auto locker = db.open();
    std::string token;
    {
        auto lock = locker.lock("window", lock_options().expires(1h));
        token = lock.owner_token();
        auto id = lock.id();
        auto info = lock.detach();
        CHECK(info.id == id);
        CHECK(info.holder.guid == token);
        CHECK_FALSE(lock.active());
    }
    auto other = db.open();
    CHECK_FALSE(other.try_lock("window"));
    CHECK(other.release("window", token));
    CHECK(other.try_lock("window"));
}
