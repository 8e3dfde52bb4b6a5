// LockObserver (sqlock/observer.hpp): told of acquisitions, renewals,
// releases and losses with the name and fencing id, from the threads that
// did them; its exceptions never reach the caller.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

namespace {

// Every event as one line, in the order told; thread-safe.
struct Recorder : sqlock::LockObserver {
    struct Acquire {
        std::string name;
        std::int64_t id;
        sqlock::acquire_outcome outcome;
        sqlock::duration waited;
        int attempts;
    };
    std::mutex mutex;
    std::vector<Acquire> acquires;
    std::vector<sqlock::RenewEvent> renews;  // names copied into renew_names
    std::vector<std::string> renew_names;
    std::vector<std::pair<std::string, std::int64_t>> releases, losses;
    std::vector<sqlock::duration> held;
    std::atomic<bool> throw_everything{false};

    void on_acquire(const sqlock::AcquireEvent& e) override {
        {
            std::lock_guard<std::mutex> guard(mutex);
            acquires.push_back({e.name, e.fencing_id, e.outcome, e.waited, e.attempts});
        }
        if (throw_everything) throw std::runtime_error("observer failed");
    }
    void on_renew(const sqlock::RenewEvent& e) override {
        {
            std::lock_guard<std::mutex> guard(mutex);
            renews.push_back(e);
            renew_names.push_back(e.name);
        }
        if (throw_everything) throw 42;
    }
    void on_release(const sqlock::ReleaseEvent& e) override {
        {
            std::lock_guard<std::mutex> guard(mutex);
            releases.emplace_back(e.name, e.fencing_id);
            held.push_back(e.held);
        }
        if (throw_everything) throw std::runtime_error("observer failed");
    }
    void on_loss(const sqlock::LossEvent& e) override {
        {
            std::lock_guard<std::mutex> guard(mutex);
            losses.emplace_back(e.name, e.fencing_id);
        }
        if (throw_everything) throw std::runtime_error("observer failed");
    }
    std::size_t count(const std::vector<std::pair<std::string, std::int64_t>>& v) {
        std::lock_guard<std::mutex> guard(mutex);
        return v.size();
    }
};

sqlock::LockerOptions observed(const std::shared_ptr<Recorder>& recorder) {
    sqlock::LockerOptions options;
    options.observer = recorder;
    return options;
}

}  // namespace

TEST_CASE("an observer is told of each acquisition, busy and timed out ones too", "[observer]") {
    auto db = fresh_database();
    auto recorder = std::make_shared<Recorder>();
    auto locker = db.open(observed(recorder));
    auto other = db.open();

    {
        auto lock = locker.try_lock("job");
        REQUIRE(lock);
        const std::int64_t id = lock->id();
        auto held = other.lock("held");
        CHECK_FALSE(locker.try_lock("held"));
        CHECK_THROWS_AS(locker.lock("held", lock_options().wait(300ms)), sqlock::error);
        auto slot = locker.acquire_slot("pool", 2);
        lock->release();
        std::lock_guard<std::mutex> guard(recorder->mutex);
        REQUIRE(recorder->acquires.size() == 4);
        const auto& a = recorder->acquires;
        CHECK(a[0].name == "job");
        CHECK(a[0].id == id);
        CHECK(a[0].outcome == sqlock::acquire_outcome::acquired);
        CHECK(a[0].attempts == 1);
        CHECK(a[1].name == "held");
        CHECK(a[1].id == 0);
        CHECK(a[1].outcome == sqlock::acquire_outcome::busy);
        CHECK(a[2].outcome == sqlock::acquire_outcome::timeout);
        CHECK(a[2].waited >= 300ms);
        CHECK(a[2].attempts >= 1);
        CHECK(a[3].name == "pool");  // a semaphore: its name, not the slot's row
        CHECK(a[3].id == slot.id());
        CHECK(a[3].outcome == sqlock::acquire_outcome::acquired);
        REQUIRE(recorder->releases.size() == 1);
        CHECK(recorder->releases[0] == std::make_pair(std::string("job"), id));
        CHECK(recorder->held[0] >= sqlock::duration::zero());
    }
    // A lock the observer saw being waited for: several attempts, waited.
    auto held = other.lock("turn", lock_options().expires(1h));
    std::thread releaser([&] {
        REQUIRE(eventually([&] { return other.queue_length("turn") == 1; }, 30s));
        held.release();
    });
    auto lock = locker.lock("turn", lock_options().wait(30s));
    releaser.join();
    std::lock_guard<std::mutex> guard(recorder->mutex);
    const auto& last = recorder->acquires.back();
    CHECK(last.name == "turn");
    CHECK(last.id == lock.id());
    CHECK(last.outcome == sqlock::acquire_outcome::acquired);
    CHECK(last.attempts >= 2);
    CHECK(last.waited >= sqlock::duration::zero());
    // Nothing told the Locker without an observer.
    CHECK(recorder->acquires.size() == 5);
}

TEST_CASE("an observer is told of renewals, with their latency, and of a loss", "[observer]") {
    auto db = fresh_database();
    auto recorder = std::make_shared<Recorder>();
    auto locker = db.open(observed(recorder));
    auto lock = locker.lock("beat", lock_options().expires(1500ms).heartbeat(true));
    const std::int64_t id = lock.id();
    lock.renew();
    REQUIRE(eventually(
        [&] {
            std::lock_guard<std::mutex> guard(recorder->mutex);
            return recorder->renews.size() >= 3;
        },
        30s));
    {
        std::lock_guard<std::mutex> guard(recorder->mutex);
        for (std::size_t i = 0; i < recorder->renews.size(); ++i) {
            CHECK(recorder->renew_names[i] == "beat");
            CHECK(recorder->renews[i].fencing_id == id);
            CHECK(recorder->renews[i].latency >= sqlock::duration::zero());
            CHECK(recorder->renews[i].latency < 1500ms);
            CHECK_FALSE(recorder->renews[i].late);
            CHECK(recorder->renews[i].failed_attempts == 0);
        }
    }
    // Taken away: the heartbeat finds it lost and says so, once.
    REQUIRE(db.open().force_release("beat"));
    REQUIRE(eventually([&] { return recorder->count(recorder->losses) == 1; }, 30s));
    CHECK(lock.lost());
    {
        std::lock_guard<std::mutex> guard(recorder->mutex);
        CHECK(recorder->losses[0] == std::make_pair(std::string("beat"), id));
    }
    CHECK_THROWS_AS(lock.release(), sqlock::error);
    CHECK(recorder->count(recorder->losses) == 1);
    CHECK(recorder->count(recorder->releases) == 0);
}

TEST_CASE("a release that finds its lock taken is a loss, not a release", "[observer]") {
    auto db = fresh_database();
    auto recorder = std::make_shared<Recorder>();
    auto locker = db.open(observed(recorder));
    auto lock = locker.lock("gone");
    const std::int64_t id = lock.id();
    REQUIRE(db.open().force_release("gone"));
    CHECK_THROWS_AS(lock.release(), sqlock::error);
    std::lock_guard<std::mutex> guard(recorder->mutex);
    CHECK(recorder->releases.empty());
    REQUIRE(recorder->losses.size() == 1);
    CHECK(recorder->losses[0] == std::make_pair(std::string("gone"), id));
}

TEST_CASE("an observer that throws changes nothing for the caller", "[observer]") {
    auto db = fresh_database();
    auto recorder = std::make_shared<Recorder>();
    recorder->throw_everything = true;
    auto locker = db.open(observed(recorder));
    auto lock = locker.lock("job", lock_options().expires(1500ms).heartbeat(true));
    CHECK_NOTHROW(lock.renew());
    REQUIRE(eventually(
        [&] {
            std::lock_guard<std::mutex> guard(recorder->mutex);
            return recorder->renews.size() >= 3;  // the heartbeat goes on
        },
        30s));
    CHECK(lock.held());
    CHECK_NOTHROW(lock.release());
    CHECK_FALSE(db.open().show("job"));
    CHECK_FALSE(locker.try_lock("job")->lost());
    CHECK(recorder->count(recorder->releases) == 2);  // the temporary's too
}
