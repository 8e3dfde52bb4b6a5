// Counting semaphores: slots as rows, lowest first, capacities that differ.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("at most capacity holders, lowest free slot first", "[semaphore]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto s1 = locker.acquire_slot("pool", 3);
    auto s2 = locker.acquire_slot("pool", 3);
    auto s3 = locker.acquire_slot("pool", 3);
    CHECK(s1.slot() == 1);
    CHECK(s2.slot() == 2);
    CHECK(s3.slot() == 3);
    CHECK(s2.lockstring() == "pool#2");
    CHECK(s2.name() == "pool");
    CHECK_FALSE(locker.try_acquire_slot("pool", 3));
    try {
        locker.acquire_slot("pool", 3);
        FAIL("must be busy");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        CHECK(std::string(e.what()).find("slots") != std::string::npos);
    }
    s2.release();
    auto again = locker.try_acquire_slot("pool", 3);
    REQUIRE(again);
    CHECK(again->slot() == 2);
    CHECK(locker.list("pool#").size() == 3);
}

TEST_CASE("capacity is each caller's own view", "[semaphore]") {
    auto db = fresh_database();
    auto big = db.open();
    std::vector<sqlock::Lock> held;
    for (int i = 0; i < 6; ++i) held.push_back(big.acquire_slot("scaled", 6));
    // Scaled down: a caller with capacity 3 sees slots 1..3, all taken.
    auto small = db.open();
    CHECK_FALSE(small.try_acquire_slot("scaled", 3));
    held[4].release();  // slot 5 frees: still nothing for capacity 3
    CHECK_FALSE(small.try_acquire_slot("scaled", 3));
    held[1].release();  // slot 2 frees
    auto got = small.try_acquire_slot("scaled", 3);
    REQUIRE(got);
    CHECK(got->slot() == 2);
    auto bigger = big.try_acquire_slot("scaled", 6);
    REQUIRE(bigger);
    CHECK(bigger->slot() == 5);
}

TEST_CASE("waiting for a slot, expiry take-over and minimum hold apply", "[semaphore]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto a = locker.acquire_slot("w", 1, lock_options().expires(300ms));
    auto other = db.open();
    auto b = other.acquire_slot("w", 1, lock_options().wait(20s));  // a's lease runs out
    CHECK(b.id() > a.id());
    CHECK(b.slot() == 1);
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    a = std::move(b);
    sqlock::set_release_error_handler({});
}

TEST_CASE("a released slot stays taken for its minimum hold", "[semaphore]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto other = db.open();
    auto kept = locker.acquire_slot("m", 2, lock_options().expires(1h).min_hold(1h));
    auto plain = locker.acquire_slot("m", 2, lock_options().expires(1h));
    CHECK(kept.slot() == 1);
    CHECK(plain.slot() == 2);
    const auto kept_id = kept.id();
    kept.release();   // kept until created + 1 h
    plain.release();  // free at once
    // Slot 1 still counts; slot 2 is free again.
    auto next = other.try_acquire_slot("m", 2);
    REQUIRE(next);
    CHECK(next->slot() == 2);
    CHECK_FALSE(other.try_acquire_slot("m", 2));
    auto row = other.show("m#1");
    REQUIRE(row);
    CHECK(row->id == kept_id);
}

// Many processes with different capacities hammer one semaphore. Each slot
// has a witness file created with O_EXCL while held: two holders of one slot
// would collide. Holders of slot s never exceed s by construction; the count
// of holders with capacity c among slots 1..c is checked via the witnesses.
TEST_CASE("many processes never over-allocate, whatever their capacities", "[semaphore][stress]") {
    auto db = fresh_database();
    std::string dir = sqlock_test::scratch_dir() + "/sem-" + std::to_string(getpid());
    mkdir(dir.c_str(), 0700);
    const int procs = 6, rounds = 25;
    auto codes = sqlock_test::run_children(procs, [&](int i) {
        auto locker = db.open();
        int capacity = (i % 3) + 2;  // 2, 3 or 4
        for (int r = 0; r < rounds; ++r) {
            auto lock = locker.acquire_slot("hammer", capacity, lock_options().wait(60s));
            if (lock.slot() < 1 || lock.slot() > capacity) return 3;
            std::string witness = dir + "/slot-" + std::to_string(lock.slot());
            if (!sqlock_test::enter_witness(witness))
                return 4;  // someone else holds this slot: overlap
            sqlock_test::leave_witness(witness);
        }
        return 0;
    });
    CHECK(codes == std::vector<int>(procs, 0));
    auto locker = db.open();
    CHECK(locker.list().empty());  // nothing leaked
}
