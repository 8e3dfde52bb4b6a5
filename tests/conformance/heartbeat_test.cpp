// Leases that stay alive, honest loss detection, minimum hold.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("a heartbeat keeps a lock alive past its original lease", "[heartbeat]") {
    auto db = fresh_database();
    auto locker = db.open();
    // A 2 s lease is renewed every ~0.7 s; a renewal takes a few ms here, so
    // a machine 3x slower under a sanitizer still renews with time to spare.
    auto lock = locker.lock("long-job", lock_options().expires(2s).heartbeat(true));
    std::string first_expiry = lock.expires();
    auto other = db.open();
    // Two and a half leases later the lock is still ours and its expiry has
    // moved on.
    auto until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < until) {
        CHECK_FALSE(other.try_lock("long-job"));
        std::this_thread::sleep_for(100ms);  // pacing the probe, not synchronisation
    }
    CHECK(lock.held());
    CHECK(lock.expires() > first_expiry);
    CHECK_FALSE(lock.lost());
}

TEST_CASE("a heartbeat reports a taken-over lock as lost", "[heartbeat]") {
    auto db = fresh_database();
    auto locker = db.open();
    std::atomic<int> calls{0};
    std::atomic<std::int64_t> lost_id{0};
    auto lock = locker.lock("stolen", lock_options().expires(900ms).heartbeat(true).on_lost(
                                          [&](const std::string&, std::int64_t id) {
                                              lost_id = id;
                                              ++calls;
                                          }));
    auto admin = db.open();
    REQUIRE(admin.force_release("stolen"));
    auto thief = admin.lock("stolen");
    REQUIRE(eventually([&] { return lock.lost(); }));
    CHECK(calls == 1);
    CHECK(lost_id == lock.id());
    CHECK_FALSE(lock.held());
    CHECK(thief.held());
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    lock = std::move(thief);
    sqlock::set_release_error_handler({});
}

TEST_CASE("the minimum hold keeps a fast job's row until created + min_hold", "[heartbeat]") {
    auto db = fresh_database();
    auto locker = db.open();
    {
        auto job = locker.lock("cron-job", lock_options().expires(1h).min_hold(1500ms));
        job.release();  // the job took almost no time
    }
    auto row = locker.show("cron-job");
    REQUIRE(row);
    CHECK(row->seconds_left > 0);
    CHECK(row->seconds_left <= 1.5);
    auto redundant_host = db.open();
    CHECK_FALSE(redundant_host.try_lock("cron-job"));  // its cron fired a bit later
    REQUIRE(eventually([&] { return redundant_host.try_lock("cron-job").has_value(); }));
}

TEST_CASE("past the minimum hold, release deletes the row", "[heartbeat]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto job = locker.lock("slow-job", lock_options().min_hold(100ms));
    // A clock probe taken after the job with a lease as long as its min_hold:
    // once the database says the probe expired, the min_hold has passed too.
    auto probe = locker.lock("clock-probe", lock_options().expires(100ms));
    REQUIRE(eventually([&] { return locker.show("clock-probe")->expired(); }));
    probe.release();  // expired but not taken over: still ours to delete
    job.release();
    CHECK_FALSE(locker.show("slow-job"));
}
