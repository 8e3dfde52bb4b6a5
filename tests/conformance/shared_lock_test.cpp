// Shared locks: many shared holders of a name at once, or one exclusive
// holder, never both; a waiting exclusive request is not starved.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "process.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::category_of;
using sqlock_test::fresh_database;
using sqlock_test::names_of;

namespace {

using steady = std::chrono::steady_clock;

sqlock::LockOptions shared(sqlock::duration expires = 60s) {
    sqlock::LockOptions o;
    o.mode = sqlock::lock_mode::shared;
    o.expires = expires;
    return o;
}

}  // namespace

TEST_CASE("shared holders hold a name together, each with a row and an id of its own", "[shared]") {
    auto db = fresh_database();
    auto one = db.open();
    auto two = db.open();
    auto a = one.try_lock("report", shared());
    REQUIRE(a);
    auto b = two.try_lock("report", shared());
    REQUIRE(b);
    CHECK(a->mode() == sqlock::lock_mode::shared);
    CHECK(a->name() == "report");
    CHECK(a->lockstring().rfind("report#shared-", 0) == 0);
    CHECK(a->lockstring() != b->lockstring());
    // Ids grow in the order the holds were granted.
    CHECK(b->id() > a->id());
    // The name's marker row, and one row per holder.
    const auto rows = one.list("report");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].name == "report");
    CHECK(a->held());
    CHECK(b->held());
    // No exclusive holder meanwhile.
    auto writer = db.open();
    CHECK_FALSE(writer.try_lock("report"));
    a->release();
    CHECK_FALSE(writer.try_lock("report"));
    CHECK(names_of(one.list("report")) == std::vector<std::string>{"report", b->lockstring()});
    const std::int64_t last_shared = b->id();
    b->release();
    // The last shared holder's release frees the name.
    CHECK(one.list("report").empty());
    auto w = writer.try_lock("report");
    REQUIRE(w);
    CHECK(w->mode() == sqlock::lock_mode::exclusive);
    CHECK(w->id() > last_shared);
}

TEST_CASE("an exclusive holder keeps shared holders out", "[shared]") {
    auto db = fresh_database();
    auto writer = db.open();
    auto w = writer.lock("migration");
    auto reader = db.open();
    CHECK_FALSE(reader.try_lock("migration", shared()));
    try {
        reader.lock("migration", shared());
        FAIL("a shared hold was granted beside an exclusive one");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        REQUIRE(e.holder());
        CHECK(e.holder()->id == w.id());
    }
    // Nothing written by the refused attempts.
    CHECK(names_of(reader.list("migration")) == std::vector<std::string>{"migration"});
    w.release();
    CHECK(reader.try_lock("migration", shared()));
}

TEST_CASE("a waiting exclusive request goes before shared requests that come after it",
          "[shared][queue]") {
    auto db = fresh_database();
    auto readers = db.open();
    auto first = std::make_optional(readers.lock("table", shared()));
    auto writer_locker = db.open();
    std::optional<sqlock::Lock> writer;
    sqlock_test::ScopedThread waiting([&] {
        sqlock::LockOptions o;
        o.wait = 60s;
        writer.emplace(writer_locker.lock("table", o));
    });
    REQUIRE(sqlock_test::eventually([&] { return readers.queue_length("table") == 1; }));
    // A shared request that does not wait is refused while the writer waits,
    // although the name is held shared.
    auto late = db.open();
    CHECK_FALSE(late.try_lock("table", shared()));
    // One that waits lines up behind the writer.
    std::optional<sqlock::Lock> late_hold;
    std::atomic<bool> late_done{false};
    sqlock_test::ScopedThread late_waiting([&] {
        sqlock::LockOptions o = shared();
        o.wait = 60s;
        late_hold.emplace(late.lock("table", o));
        late_done = true;
    });
    REQUIRE(sqlock_test::eventually([&] { return readers.queue_length("table") == 2; }));
    CHECK_FALSE(writer.has_value());
    first.reset();  // the one shared holder present when the writer came
    waiting.join();
    REQUIRE(writer);
    CHECK(writer->mode() == sqlock::lock_mode::exclusive);
    CHECK_FALSE(late_done.load());
    const std::int64_t writer_id = writer->id();
    writer.reset();
    late_waiting.join();
    REQUIRE(late_hold);
    CHECK(late_hold->id() > writer_id);
}

TEST_CASE("an expired shared hold stops counting and is taken over", "[shared][expiry]") {
    auto db = fresh_database();
    auto crashed = db.open();
    // Left behind as a killed holder leaves it: never released.
    crashed.lock("nightly", shared(1s)).detach();
    auto writer = db.open();
    CHECK_FALSE(writer.try_lock("nightly"));
    sqlock::LockOptions o;
    o.wait = 30s;
    auto w = writer.lock("nightly", o);
    CHECK(w.held());
    // The reaper purges the expired holder row.
    CHECK(writer.purge_expired() == 1);
    CHECK(names_of(writer.list("nightly")) == std::vector<std::string>{"nightly"});
}

TEST_CASE("a shared hold's heartbeat keeps the name shared past its first lease",
          "[shared][heartbeat]") {
    auto db = fresh_database();
    auto reader = db.open();
    // Renewed every second: a sanitizer build on a loaded machine must not
    // let the lease lapse between renewals.
    sqlock::LockOptions o = shared(6s);
    o.heartbeat = true;
    auto r = reader.lock("long-read", o);
    const auto first_expiry = reader.show("long-read")->expires;
    // Renewed at least twice: the marker moves with the holder's row.
    REQUIRE(sqlock_test::eventually(
        [&] {
            return sqlock_test::seconds_between(first_expiry, reader.show("long-read")->expires) >
                   0.4;
        },
        10s));
    auto writer = db.open();
    CHECK_FALSE(writer.try_lock("long-read"));
    CHECK(r.held());
    const auto marker = reader.show("long-read");
    const auto own = reader.show(r.lockstring());
    REQUIRE(marker);
    REQUIRE(own);
    CHECK(sqlock_test::seconds_between(own->expires, marker->expires) >= 0);
    r.release();
    CHECK(writer.try_lock("long-read"));
}

TEST_CASE("a shared release with a minimum hold keeps the name shared until it ends",
          "[shared][min_hold]") {
    auto db = fresh_database();
    auto reader = db.open();
    sqlock::LockOptions o = shared();
    o.min_hold = 1500ms;
    auto r = reader.lock("cron-read", o);
    r.release();
    auto writer = db.open();
    CHECK_FALSE(writer.try_lock("cron-read"));
    // Other shared holders still get in meanwhile.
    CHECK(writer.try_lock("cron-read", shared()));
    sqlock::LockOptions w;
    w.wait = 30s;
    CHECK(writer.lock("cron-read", w).held());
}

TEST_CASE("a shared hold is released by its token and cleared with the name", "[shared][admin]") {
    auto db = fresh_database();
    auto reader = db.open();
    auto kept = reader.lock("by-token", shared());
    auto detached = reader.lock("by-token", shared()).detach();
    auto admin = db.open();
    const auto released = admin.release("by-token", detached.holder.guid);
    REQUIRE(released);
    CHECK(released->id == detached.id);
    CHECK(admin.list("by-token").size() == 2);  // the marker and the kept holder
    // Clearing the name clears every holder: the kept one is lost.
    CHECK(admin.force_release("by-token"));
    CHECK(admin.list("by-token").empty());
    CHECK_FALSE(kept.held());
    CHECK(category_of([&] { kept.release(); }) == sqlock::errc::lost);
    CHECK(admin.try_lock("by-token"));
}

TEST_CASE("shared mode is refused where it has no meaning, before anything is written",
          "[shared][validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    CHECK(category_of([&] { locker.try_acquire_slot("sem", 3, shared()); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { locker.try_lock(std::string(105, 'n'), shared()); }) ==
          sqlock::errc::invalid_argument);
    auto longest = locker.try_lock(std::string(104, 'n'), shared());
    CHECK(longest);
    // A thread holding a name shared would wait on itself for it exclusively.
    auto mine = locker.lock("self", shared());
    sqlock::LockOptions o;
    o.wait = 10s;
    CHECK(category_of([&] { locker.lock("self", o); }) == sqlock::errc::busy);
    // So would a set that takes it exclusively, at once, not after its wait.
    const auto asked = std::chrono::steady_clock::now();
    CHECK(category_of([&] { locker.lock_all({"self", "other"}, o); }) == sqlock::errc::busy);
    CHECK(std::chrono::steady_clock::now() - asked < 5s);
    CHECK(locker.try_lock_all({{"self", sqlock::lock_mode::shared}, {"other"}}, o).has_value());
    CHECK(locker.list("n").size() == 2);
}

TEST_CASE("shared and exclusive holders from several processes never overlap", "[shared][stress]") {
    auto db = fresh_database();
    const std::string dir = sqlock_test::scratch_dir() + "/shared-" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    const int workers = 8, rounds = 12;
    // Each holder makes its file, then looks for the other mode's: two
    // holds that overlapped in time would see each other's file.
    auto codes = sqlock_test::run_children(workers, [&](int p) {
        auto locker = db.open();
        std::mt19937 rng(static_cast<unsigned>(p * 7919 + getpid()));
        int shared_holds = 0;
        for (int r = 0; r < rounds; ++r) {
            const bool exclusive = p < 2 || rng() % 4 == 0;
            sqlock::LockOptions o = shared(30s);
            if (exclusive) o.mode = sqlock::lock_mode::exclusive;
            o.wait = 120s;
            auto lock = locker.lock("mixed", o);
            const std::string mine =
                dir + (exclusive ? "/exclusive" : "/shared-" + std::to_string(p));
            if (!sqlock_test::enter_witness(mine)) return 2;
            if (exclusive ? sqlock_test::files_starting(dir, "shared-") > 0
                          : std::filesystem::exists(dir + "/exclusive"))
                return 3;
            std::this_thread::sleep_for(std::chrono::milliseconds(1 + rng() % 5));
            sqlock_test::leave_witness(mine);
            lock.release();
            shared_holds += !exclusive;
        }
        return 0;
    });
    // 2: two exclusive holders at once; 3: an exclusive and a shared one.
    CHECK(codes == std::vector<int>(workers, 0));
    CHECK(db.open().list("mixed").empty());
}

TEST_CASE("an exclusive request gets in while shared holders keep coming",
          "[shared][queue][stress]") {
    auto db = fresh_database();
    const std::string dir = sqlock_test::scratch_dir() + "/stream-" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    const auto hold = 300ms;
    // Four readers in a row of overlapping holds: the name is never free of
    // shared holders while they run, so only writer preference lets the
    // writer in.
    auto observer = db.open();
    const int readers = 4;
    const std::string stop = dir + "/stop";
    std::vector<pid_t> pids;
    for (int p = 0; p < readers; ++p) {
        const pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
        if (pid == 0) {
            int code = 0;
            try {
                auto locker = db.open();
                std::this_thread::sleep_for(hold * p / readers);  // staggered
                while (!std::filesystem::exists(stop)) {
                    sqlock::LockOptions o = shared(30s);
                    o.wait = 60s;
                    auto r = locker.lock("stream", o);
                    std::this_thread::sleep_for(hold);
                    r.release();
                }
            } catch (const std::exception& e) {
                std::fprintf(stderr, "reader %d: %s\n", p, e.what());
                code = 2;
            }
            _exit(code);
        }
        pids.push_back(pid);
    }
    // The stream runs: some shared holder at every look.
    REQUIRE(sqlock_test::eventually([&] { return observer.list("stream").size() >= 3; }));
    auto writer = db.open();
    sqlock::LockOptions o;
    o.wait = 30s;
    const auto asked = steady::now();
    auto w = writer.lock("stream", o);
    const auto waited = steady::now() - asked;
    // Within the longest shared hold present when it came, plus the
    // wake-up (generous for a loaded machine).
    CHECK(waited < hold + 2s);
    CHECK(w.held());
    w.release();
    std::ofstream(stop).put('\n');
    for (pid_t pid : pids) CHECK(sqlock_test::wait_child(pid, 60s) == 0);
}

TEST_CASE("names held shared with quotes, backslashes, control characters and UTF-8", "[shared]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto other = db.open();
    for (const std::string name :
         {"q'uote", "d\"quote", "back\\slash", "tab\tname", "per%cent_", "\xc3\xa9t\xc3\xa9"}) {
        INFO(name);
        auto a = locker.try_lock(name, shared());
        REQUIRE(a);
        auto b = other.try_lock(name, shared());
        REQUIRE(b);
        CHECK(a->name() == name);
        CHECK(locker.shared_holders(name).size() == 2);
        CHECK_FALSE(db.open().try_lock(name));
        a->release();
        b->release();
        CHECK(locker.list(name).empty());
        CHECK(other.try_lock(name));
    }
}
