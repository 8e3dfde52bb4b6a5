// Lock sets: several names taken at once, all or nothing.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <thread>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::category_of;
using sqlock_test::fresh_database;

using sqlock_test::lock_options;
using sqlock_test::names_of;

TEST_CASE("a lock set takes every name, each with a fencing id of its own", "[set]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto set = locker.try_lock_all({"set-c", "set-a", "set-b", "set-a"});
    REQUIRE(set);
    // Each name once, in bytewise order.
    CHECK(set->names() == std::vector<std::string>{"set-a", "set-b", "set-c"});
    REQUIRE(set->ids().size() == 3);
    const auto rows = locker.list("set-");
    REQUIRE(names_of(rows) == set->names());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CHECK(rows[i].id == set->ids()[i]);
        CHECK(rows[i].id == set->id(rows[i].name));
        CHECK(rows[i].locked_by == set->locked_by());
        CHECK(rows[i].holder.guid == set->owner_token());
    }
    // Drawn in the order of the names.
    CHECK(std::is_sorted(set->ids().begin(), set->ids().end()));
    CHECK(category_of([&] { set->id("set-d"); }) == sqlock::errc::invalid_argument);
    CHECK(set->held());
    // Nobody else gets any of them, as a set or alone.
    auto other = db.open();
    CHECK_FALSE(other.try_lock("set-b"));
    CHECK_FALSE(other.try_lock_all({"set-c", "set-z"}));
    set->release();
    CHECK_FALSE(set->active());
    CHECK(locker.list("set-").empty());
    CHECK(other.try_lock_all({"set-a", "set-b", "set-c"}));
}

TEST_CASE("a set with a busy name takes nothing and names every name in its way", "[set]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto b = holder.lock("busy-b");
    auto d = holder.lock("busy-d");
    auto locker = db.open();
    CHECK_FALSE(locker.try_lock_all({"busy-a", "busy-b", "busy-c", "busy-d"}));
    // Nothing of the set was written.
    CHECK(names_of(locker.list("busy-")) == std::vector<std::string>{"busy-b", "busy-d"});
    try {
        locker.lock_all({"busy-a", "busy-b", "busy-c", "busy-d"});
        FAIL("a set with held names was taken");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        const std::string what = e.what();
        CHECK_THAT(what, Catch::Contains("'busy-b' is held by"));
        CHECK_THAT(what, Catch::Contains("'busy-d' is held by"));
        CHECK_THAT(what, !Catch::Contains("'busy-a'"));
        REQUIRE(e.holder());
        CHECK(e.holder()->name == "busy-b");
    }
    CHECK(names_of(locker.list("busy-")) == std::vector<std::string>{"busy-b", "busy-d"});
}

TEST_CASE("bad sets are refused before anything is written", "[set][validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto refused = [&](const std::vector<std::string>& names) {
        try {
            locker.try_lock_all(names);
            return std::string("taken");
        } catch (const sqlock::error& e) {
            return e.category() == sqlock::errc::invalid_argument ? std::string(e.what())
                                                                  : std::string("wrong category");
        }
    };
    CHECK_THAT(refused({}), Catch::Contains("at least one name"));
    std::vector<std::string> many;
    for (std::size_t i = 0; i <= sqlock::Locker::max_set_size; ++i)
        many.push_back("n" + std::to_string(i));
    CHECK_THAT(refused(many), Catch::Contains("at most 256 names"));
    CHECK_THAT(refused({"ok", ""}), Catch::Contains("empty"));
    CHECK_THAT(refused({"ok", std::string(129, 'x')}), Catch::Contains("128"));
    CHECK_THAT(refused({"ok", "bad\xff"}), Catch::Contains("UTF-8"));
    CHECK(locker.list().empty());
    // Exactly the maximum is fine.
    many.pop_back();
    auto set = locker.try_lock_all(many);
    REQUIRE(set);
    CHECK(locker.list().size() == sqlock::Locker::max_set_size);
}

TEST_CASE("a waiting set holds nothing and wakes when its last name is released", "[set]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto x = std::make_optional(holder.lock("wake-x"));
    auto y = std::make_optional(holder.lock("wake-y"));
    auto locker = db.open();
    std::atomic<int> looks{0};
    std::optional<sqlock::LockSet> got;
    sqlock_test::ScopedThread waiter([&] {
        sqlock::LockOptions o;
        o.wait = 60s;
        o.on_waiting = [&](const sqlock::LockInfo*, sqlock::duration) {
            ++looks;
            return true;
        };
        got.emplace(locker.lock_all({"wake-x", "wake-y", "wake-z"}, o));
    });
    REQUIRE(sqlock_test::eventually([&] { return looks > 0; }));
    // While it waits, the free name is not held by it: others take it.
    CHECK(holder.try_lock("wake-z"));
    x.reset();
    REQUIRE(sqlock_test::eventually([&] { return looks > 2; }));
    // Free, and left so: the waiting set took no part of itself.
    CHECK_FALSE(holder.show("wake-x"));
    const auto released = std::chrono::steady_clock::now();
    y.reset();
    waiter.join();
    const auto took = std::chrono::steady_clock::now() - released;
    REQUIRE(got);
    CHECK(got->size() == 3);
    const double ms = std::chrono::duration<double>(took).count() * 1000.0;
    INFO("release -> set taken: " << ms << " ms");
    CHECK(took < 2s);
}

TEST_CASE("a set times out naming what is in its way", "[set]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto a = holder.lock("late-a");
    auto locker = db.open();
    try {
        locker.lock_all({"late-a", "late-b"}, lock_options().wait(300ms));
        FAIL("taken");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::timeout);
        CHECK_THAT(std::string(e.what()), Catch::Contains("'late-a' is held by"));
        CHECK_THAT(std::string(e.what()), Catch::Contains("after waiting"));
    }
    CHECK(names_of(locker.list("late-")) == std::vector<std::string>{"late-a"});
}

TEST_CASE("a set takes over expired rows, with new ids", "[set]") {
    auto db = fresh_database();
    auto holder = db.open();
    // A lease long enough for an acquisition under a sanitizer on a loaded
    // machine: one that outlasts its lease is not handed out.
    const auto old = holder.lock("exp-a", lock_options().expires(1s).heartbeat(false)).detach();
    auto locker = db.open();
    REQUIRE(sqlock_test::eventually([&] {
        auto row = locker.show("exp-a");
        return row && row->seconds_left <= 0;
    }));
    auto set = locker.try_lock_all({"exp-a", "exp-b"});
    REQUIRE(set);
    CHECK(set->id("exp-a") > old.id);
    CHECK(locker.list("exp-").size() == 2);
}

TEST_CASE("the fencing ids of a name grow across sets and single locks", "[set]") {
    auto db = fresh_database();
    auto locker = db.open();
    std::int64_t last = 0;
    for (int i = 0; i < 6; ++i) {
        std::int64_t id = 0;
        if (i % 2) {
            id = locker.lock("grow").id();
        } else {
            auto set = locker.lock_all({"grow", "grow-" + std::to_string(i)});
            id = set.id("grow");
        }
        CHECK(id > last);
        last = id;
    }
}

TEST_CASE("a set's heartbeat renews every row; losing one is losing the set", "[set][heartbeat]") {
    auto db = fresh_database();
    auto locker = db.open();
    std::atomic<int> lost_calls{0};
    std::string lost_name;
    sqlock::LockOptions o;
    // Renewed every second: a sanitizer build on a loaded machine must not
    // let the lease lapse (which would lose the set on its first name)
    // before the row is deleted.
    o.expires = 6s;
    o.heartbeat = true;
    o.on_lost = [&](const std::string& name, std::int64_t) {
        lost_name = name;
        ++lost_calls;
    };
    auto set = locker.lock_all({"beat-a", "beat-b", "beat-c"}, o);
    const std::string first_expiry = set.expires();
    REQUIRE(sqlock_test::eventually([&] { return set.expires() > first_expiry; }, 10s));
    for (const auto& row : locker.list("beat-")) CHECK(row.expires >= first_expiry);
    // Someone deletes one row: the next renewal finds the set lost.
    db.open().force_release("beat-b");
    REQUIRE(sqlock_test::eventually([&] { return set.lost(); }, 10s));
    CHECK(lost_calls == 1);
    CHECK(lost_name == "beat-b");
    CHECK_FALSE(set.held());
    // Releasing says so, and frees the rows that were still ours.
    CHECK(category_of([&] { set.release(); }) == sqlock::errc::lost);
    CHECK(locker.list("beat-").empty());
}

TEST_CASE("renew() and held() answer for the whole set", "[set]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto set = locker.lock_all({"r-a", "r-b"}, lock_options().expires(1h).heartbeat(false));
    set.renew(2h);
    for (const auto& row : locker.list("r-")) CHECK(row.seconds_left > 3600);
    db.open().force_release("r-a");
    CHECK(category_of([&] { set.renew(); }) == sqlock::errc::lost);
    CHECK(set.lost());
    CHECK(category_of([&] { set.release(); }) == sqlock::errc::lost);
    CHECK(locker.list("r-").empty());
}

TEST_CASE("a set is not re-entrant: a name this thread holds here is busy", "[set]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto a = locker.lock("mine-a");
    CHECK(category_of([&] {
              locker.lock_all({"mine-a", "mine-b"}, lock_options().wait(10s));
          }) == sqlock::errc::busy);
    CHECK(names_of(locker.list("mine-")) == std::vector<std::string>{"mine-a"});
}

namespace {

// 8 processes take sets of 1-3 names of `prefix`1..5, in random order and
// with waits, `rounds` times each; `mixed`: each name shared or exclusive at
// random, else all exclusive (lock_all of names). Every holder proves its
// hold outside the database with a witness file per name: "<name>" for an
// exclusive holder, which fails if another is there and sees no shared
// one; "<name>-shared-<process>" for a shared one, which sees no exclusive
// one. Child 0 observes that every owner holds as many rows as its set has
// names (its metadata says), in every read; markers belong to no owner.
void run_set_stress(const std::string& prefix, int rounds, bool mixed) {
    auto db = fresh_database();
    std::vector<std::string> pool;
    for (int i = 1; i <= 5; ++i) pool.push_back(prefix + std::to_string(i));
    const std::string dir =
        sqlock_test::scratch_dir() + "/sets-" + prefix + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    const int workers = 8;
    auto finished = [&] {
        int n = 0;
        for (int w = 1; w <= workers; ++w)
            n += std::filesystem::exists(dir + "/finished-" + std::to_string(w));
        return n;
    };
    auto codes = sqlock_test::run_children(workers + 1, [&](int p) {
        auto locker = db.open();
        if (p == 0)
            return sqlock_test::observe_whole_sets(locker, prefix,
                                                   [&] { return finished() == workers; });
        std::mt19937 rng(static_cast<unsigned>(p * 7919 + getpid()));
        for (int r = 0; r < rounds; ++r) {
            std::vector<std::string> names = pool;
            std::shuffle(names.begin(), names.end(), rng);
            names.resize(1 + rng() % 3);
            sqlock::LockOptions o;
            o.wait = 120s;
            o.expires = 30s;
            o.metadata = {{"set_size", std::to_string(names.size())}};
            std::vector<sqlock::SetMember> members;
            for (const auto& name : names)
                members.push_back({name, mixed && rng() % 2 ? sqlock::lock_mode::shared
                                                            : sqlock::lock_mode::exclusive});
            auto set = mixed ? locker.lock_all(members, o) : locker.lock_all(names, o);
            std::vector<std::string> entered;
            for (const auto& name : set.names()) {
                const bool shared = set.mode(name) == sqlock::lock_mode::shared;
                const std::string mine =
                    dir + "/" + name + (shared ? "-shared-" + std::to_string(p) : "");
                if (!sqlock_test::enter_witness(mine)) return 2;
                entered.push_back(mine);
                if (shared ? std::filesystem::exists(dir + "/" + name)
                           : sqlock_test::files_starting(dir, name + "-shared-") > 0)
                    return 3;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 5));
            for (const auto& w : entered) sqlock_test::leave_witness(w);
            set.release();
        }
        std::ofstream(dir + "/finished-" + std::to_string(p)).put('\n');
        return 0;
    });
    // 2: two exclusive holders of a name at once; 3: an exclusive and a
    // shared one; 4: part of a set seen; 5: never read.
    CHECK(codes == std::vector<int>(workers + 1, 0));
    CHECK(db.open().list(prefix).empty());
}

}  // namespace

TEST_CASE("sets in random order from several processes never overlap or show in part",
          "[set][stress]") {
    run_set_stress("p-", 12, false);
}

TEST_CASE("mixed sets from several processes never overlap or show in part",
          "[set][shared][stress]") {
    run_set_stress("q-", 10, true);
}

TEST_CASE("a set of names with quotes, backslashes and control characters", "[set]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::vector<std::string> names{"q\"uote",  "back\\slash",       "tab\tname",
                                         "brace{,}", "\xc3\xa9t\xc3\xa9", "x#shared"};
    auto set = locker.try_lock_all(names);
    REQUIRE(set);
    CHECK(locker.list().size() == names.size());
    for (const auto& name : names) CHECK(locker.show(name));
    // Each of them excludes a set that shares it, and is freed by release.
    CHECK_FALSE(db.open().try_lock_all({"back\\slash", "other"}));
    set->release();
    CHECK(locker.list().empty());
    CHECK(db.open().try_lock_all(names));
}

TEST_CASE("a set lets the callers waiting in line for its names go first", "[set][queue]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto held = std::make_optional(holder.lock("line-b"));
    auto waiter_locker = db.open();
    std::atomic<bool> in_line{false}, go_on{false};
    std::optional<sqlock::Lock> waiter_got;
    sqlock_test::ScopedThread waiter([&] {
        sqlock::LockOptions o;
        o.wait = 60s;
        o.progress_every = 10ms;
        int calls = 0;
        o.on_waiting = [&](const sqlock::LockInfo*, sqlock::duration) {
            // From its second look on, it has a place in line: hold still
            // there until the test has looked.
            if (++calls >= 2) {
                in_line = true;
                while (!go_on) std::this_thread::sleep_for(1ms);
            }
            return true;
        };
        waiter_got.emplace(waiter_locker.lock("line-b", o));
    });
    REQUIRE(sqlock_test::eventually([&] { return in_line.load(); }));
    REQUIRE(holder.queue_length("line-b") == 1);
    held.reset();  // free, but promised to the waiter
    auto other = db.open();
    CHECK_FALSE(other.try_lock_all({"line-a", "line-b"}));
    try {
        other.lock_all({"line-a", "line-b"});
        FAIL("taken from under the line");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        CHECK_THAT(std::string(e.what()), Catch::Contains("waiting in line"));
    }
    CHECK(other.list("line-").empty());
    go_on = true;
    waiter.join();
    REQUIRE(waiter_got);
    CHECK(waiter_got->name() == "line-b");
}
