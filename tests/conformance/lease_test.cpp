// The lease: how long a lock lasts when nobody says (one hour, for locks,
// slots and renewals alike), and what a row of ours found again counts for.
#include <catch2/catch.hpp>

#include "loading/backend_factory.hpp"  // internal: a row found again is tested directly
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("the default lease is one hour", "[lease]") {
    auto db = fresh_database();
    auto locker = db.open();
    CHECK(sqlock::LockOptions{}.expires == std::chrono::hours(1));
    // Both ends are the database's: exact, whatever the machine's speed.
    auto lock = locker.try_lock("default-lease");
    REQUIRE(lock);
    CHECK(sqlock_test::seconds_between(lock->created(), lock->expires()) ==
          Approx(3600).margin(0.002));
    auto row = locker.show("default-lease");
    REQUIRE(row);
    CHECK(sqlock_test::seconds_between(row->created, row->expires) == Approx(3600).margin(0.002));
    CHECK(row->seconds_left > 3500);
    CHECK(row->seconds_left <= 3600);

    auto slot = locker.try_acquire_slot("default-lease-pool", 2);
    REQUIRE(slot);
    CHECK(sqlock_test::seconds_between(slot->created(), slot->expires()) ==
          Approx(3600).margin(0.002));

    // renew() without a length renews by the lease the lock was taken with.
    auto short_lease = locker.try_lock("renewed", lock_options().expires(10min));
    REQUIRE(short_lease);
    short_lease->renew();
    auto renewed = locker.show("renewed");
    REQUIRE(renewed);
    CHECK(renewed->seconds_left > 500);
    CHECK(renewed->seconds_left <= 600);
}

// A row found held by our own owner string is ours (claim_own_holder: an
// earlier statement of ours took it, and its answer never reached us). It
// counts for the time the database said it had left, not for a new lease
// from this attempt's sending: that statement may have been sent before,
// and valid_until must not outlast the row.
TEST_CASE("a row of ours found again counts for the time it had left, not a new lease", "[lease]") {
    auto db = fresh_database();
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    auto c = backend->connect();
    const std::string owner = R"({"by":"test","guid":"00112233445566778899aabbccddeeff"})";
    sqlock::detail::Claim claim;
    claim.entries.push_back(sqlock::detail::ClaimEntry::exclusive("found-again"));
    auto first = c->acquire(claim, 30s, owner);
    REQUIRE(first.taken());
    CHECK_FALSE(sqlock::detail::claim_own_holder(first, owner));  // already acquired
    CHECK_FALSE(first.claimed);  // written by this statement: the whole lease

    // Asked again by the same owner, for 60 s: the live row is found held
    // by ourselves.
    auto again = c->acquire(claim, 60s, owner);
    REQUIRE_FALSE(again.taken());
    REQUIRE(sqlock::detail::claim_own_holder(again, owner));
    CHECK(again.claimed);
    CHECK(again.holders.empty());
    CHECK(again.acquired.front().id == first.acquired.front().id);
    const auto certain = sqlock::detail::certain_lease(again.acquired.front(), 60s);
    CHECK(certain < 30s);
    CHECK(certain > 20s);

    // Another owner's row is not claimed.
    auto other = c->acquire(claim, 60s, owner + " ");
    CHECK_FALSE(sqlock::detail::claim_own_holder(other, owner + " "));
    CHECK_FALSE(other.taken());
}
