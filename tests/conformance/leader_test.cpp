// Leader election: campaign, proclaim, resign, the leader as others read it,
// and a watcher's account of every change.

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock::leader_event;
using sqlock_test::category_of;
using sqlock_test::fresh_database;

namespace {

sqlock::LockOptions candidate(sqlock::duration expires = 30s) {
    sqlock::LockOptions o;
    o.expires = expires;
    o.wait = 60s;
    return o;
}

// The next event, which must come within `bound`.
sqlock::LeaderEvent next_event(sqlock::LeaderWatch& watch, sqlock::duration bound = 10s) {
    auto e = watch.next(bound);
    REQUIRE(e);
    return *e;
}

std::string describe(const sqlock::LeaderEvent& e) {
    std::string out = sqlock::to_string(e.kind);
    if (e.leader) out += " " + std::to_string(e.leader->lock.id) + " " + e.leader->value;
    return out;
}

}  // namespace

TEST_CASE("a campaign leads with a value that others read", "[leader]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto other = db.open();
    CHECK_FALSE(sqlock::Election(other, "ld-sched").leader());

    sqlock::Leadership lead =
        sqlock::Election(locker, "ld-sched").campaign("10.0.0.7:8080", candidate());
    CHECK(lead.name() == "ld-sched");
    CHECK(lead.value() == "10.0.0.7:8080");
    auto seen = sqlock::Election(other, "ld-sched").leader();
    REQUIRE(seen);
    CHECK(seen->lock.id == lead.id());
    CHECK(seen->value == "10.0.0.7:8080");
    CHECK(seen->lock.holder.guid == lead.lock().owner_token());
    CHECK(seen->lock.seconds_left > 20.0);

    lead.proclaim("10.0.0.7:8081");
    CHECK(lead.value() == "10.0.0.7:8081");
    CHECK(sqlock::Election(other, "ld-sched").leader()->value == "10.0.0.7:8081");
    // Another candidate does not lead while it does.
    CHECK(category_of([&] { (void)sqlock::Election(other, "ld-sched").campaign("x"); }) ==
          sqlock::errc::busy);

    lead.resign();
    CHECK_FALSE(sqlock::Election(other, "ld-sched").leader());
    lead.resign();  // a no-op once resigned
    CHECK(category_of([&] { lead.proclaim("late"); }) == sqlock::errc::lost);
}

TEST_CASE("a new leader never shows its predecessor's value", "[leader]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    auto first = sqlock::Election(a, "ld-value").campaign("a", candidate());
    first.proclaim("a2");
    const auto first_id = first.id();
    first.resign();
    auto second = sqlock::Election(b, "ld-value").campaign("b", candidate());
    CHECK(second.id() > first_id);
    auto seen = sqlock::Election(a, "ld-value").leader();
    REQUIRE(seen);
    CHECK(seen->lock.id == second.id());
    CHECK(seen->value == "b");
    // A plain lock leads with no value.
    second.resign();
    auto plain = b.lock("ld-value");
    REQUIRE(sqlock::Election(a, "ld-value").leader());
    CHECK(sqlock::Election(a, "ld-value").leader()->value.empty());
}

TEST_CASE("a leader that lost its lock cannot proclaim over its successor", "[leader]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    auto old = sqlock::Election(a, "ld-lost").campaign("old", candidate(1s));
    // Its lease runs out (no heartbeat), and another takes over.
    REQUIRE(sqlock_test::eventually([&] { return !sqlock::Election(b, "ld-lost").leader(); }, 5s));
    auto successor = sqlock::Election(b, "ld-lost").campaign("new", candidate());
    CHECK(category_of([&] { old.proclaim("stale"); }) == sqlock::errc::lost);
    CHECK(old.lost());
    CHECK(sqlock::Election(b, "ld-lost").leader()->value == "new");
    CHECK(sqlock::Election(b, "ld-lost").leader()->lock.id == successor.id());
}

TEST_CASE("bad values and modes are refused before anything is written", "[leader]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::string too_long(sqlock::max_leader_value_bytes + 1, 'v');
    for (const std::string& bad : {too_long, std::string("line\nbreak"), std::string("\xff\xfe")})
        CHECK(category_of([&] { (void)sqlock::Election(locker, "ld-bad").campaign(bad); }) ==
              sqlock::errc::invalid_argument);
    sqlock::LockOptions shared;
    shared.mode = sqlock::lock_mode::shared;
    CHECK(category_of([&] { (void)sqlock::Election(locker, "ld-bad").campaign("v", shared); }) ==
          sqlock::errc::invalid_argument);
    CHECK(category_of([&] { (void)sqlock::Election(locker, "").campaign("v"); }) ==
          sqlock::errc::invalid_argument);
    sqlock::ObserveOptions fast;
    fast.poll = 1ms;
    CHECK(category_of([&] { (void)sqlock::Election(locker, "ld-bad").observe(fast); }) ==
          sqlock::errc::invalid_argument);
    CHECK(locker.list().empty());

    auto lead = sqlock::Election(locker, "ld-bad")
                    .campaign(std::string(sqlock::max_leader_value_bytes, 'v'));
    CHECK(category_of([&] { lead.proclaim(too_long); }) == sqlock::errc::invalid_argument);
    CHECK(sqlock::Election(locker, "ld-bad").leader()->value ==
          std::string(sqlock::max_leader_value_bytes, 'v'));
}

TEST_CASE("a watcher reports each change in order", "[leader]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto watcher = db.open();
    sqlock::ObserveOptions o;
    o.poll = 20ms;
    auto watch = sqlock::Election(watcher, "ld-watch").observe(o);
    CHECK(watch.name() == "ld-watch");
    CHECK(next_event(watch).kind == leader_event::vacant);
    CHECK_FALSE(watch.next(100ms));  // nothing changed
    // Pushed where the backend can: PostgreSQL, but through a pooler that
    // does not keep a session.
    const bool pooled = db.url.find("pooler=transaction") != std::string::npos ||
                        db.url.find("pooler=statement") != std::string::npos;
    CHECK(watch.pushed() == (sqlock_test::backend() == "postgres" && !pooled));

    auto lead = sqlock::Election(locker, "ld-watch").campaign("one", candidate());
    auto e = next_event(watch);
    CHECK(describe(e) == "leader " + std::to_string(lead.id()) + " one");
    REQUIRE(e.leader);
    CHECK(e.leader->lock.holder.guid == lead.lock().owner_token());

    lead.proclaim("two");
    CHECK(describe(next_event(watch)) == "value " + std::to_string(lead.id()) + " two");
    lead.resign();
    CHECK(next_event(watch).kind == leader_event::vacant);

    // A hand-over between two reads: the vacancy is told all the same.
    auto a = sqlock::Election(locker, "ld-watch").campaign("a", candidate());
    CHECK(next_event(watch).kind == leader_event::leader);
    a.resign();
    auto b = sqlock::Election(watcher, "ld-watch").campaign("b", candidate());
    CHECK(next_event(watch).kind == leader_event::vacant);
    CHECK(describe(next_event(watch)) == "leader " + std::to_string(b.id()) + " b");

    // interrupt() ends a wait at once, from another thread.
    const auto start = std::chrono::steady_clock::now();
    sqlock_test::ScopedThread stopper([&] {
        std::this_thread::sleep_for(50ms);
        watch.interrupt();
    });
    CHECK_FALSE(watch.next(30s));
    CHECK(std::chrono::steady_clock::now() - start < 10s);
}

TEST_CASE("a crashed leader is reported vacant once its lease ends", "[leader]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto watcher = db.open();
    auto watch = sqlock::Election(watcher, "ld-crash").observe();
    CHECK(next_event(watch).kind == leader_event::vacant);
    auto lead = sqlock::Election(locker, "ld-crash").campaign("gone", candidate(1500ms));
    CHECK(next_event(watch).kind == leader_event::leader);
    // The process "dies": its row stays until the lease runs out.
    const sqlock::LockInfo row = lead.lock().detach();
    const auto detached = std::chrono::steady_clock::now();
    CHECK(next_event(watch, 10s).kind == leader_event::vacant);
    // Within the lease left plus the poll bound (250 ms) and some slack.
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - detached).count();
    INFO("vacancy seen " << took << " s after the crash, lease left " << row.seconds_left);
    CHECK(took < 1.5 + 0.25 + 1.0);
    CHECK(took > 0.5);
}

TEST_CASE("candidates in separate processes lead one at a time, and a watcher sees each",
          "[leader][stress]") {
    auto db = fresh_database();
    const std::string dir = sqlock_test::scratch_dir() + "/leaders-" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    const int candidates = 3, rounds = 3;
    auto finished = [&] { return sqlock_test::files_starting(dir, "finished-") == candidates; };
    auto codes = sqlock_test::run_children(candidates + 1, [&](int p) {
        auto locker = db.open();
        if (p == 0) {
            // The watcher: every leader event, in order, as "id value".
            sqlock::ObserveOptions o;
            o.poll = 20ms;
            auto watch = sqlock::Election(locker, "ld-many").observe(o);
            std::ofstream out(dir + "/watched");
            // Until the candidates are done and then nothing changes for 1 s.
            for (;;) {
                const bool ending = finished();
                auto e = watch.next(ending ? 1s : 100ms);
                if (!e) {
                    if (ending) break;
                    continue;
                }
                if (e->kind == leader_event::disconnected) return 3;
                out << sqlock::to_string(e->kind);
                if (e->leader) out << " " << e->leader->lock.id << " " << e->leader->value;
                out << "\n" << std::flush;
            }
            return 0;
        }
        // The watcher reports the first state before anyone campaigns.
        if (!sqlock_test::eventually(
                [&] { return !sqlock_test::read_file(dir + "/watched").empty(); }, 30s))
            return 4;
        for (int r = 0; r < rounds; ++r) {
            auto lead = sqlock::Election(locker, "ld-many")
                            .campaign("c" + std::to_string(p), candidate(30s));
            if (!sqlock_test::enter_witness(dir + "/leader")) return 2;
            // Each leader's own line, in the order of the witness.
            {
                std::ofstream led(dir + "/led", std::ios::app);
                led << "leader " << lead.id() << " c" << p << "\n";
            }
            // Held until the watcher has reported this leadership, so that
            // it sees each, however slow the machine.
            const std::string seen = "leader " + std::to_string(lead.id()) + " ";
            if (!sqlock_test::eventually(
                    [&] {
                        return sqlock_test::read_file(dir + "/watched").find(seen) !=
                               std::string::npos;
                    },
                    20s))  // within the 30 s lease
                return 5;
            sqlock_test::leave_witness(dir + "/leader");
            lead.resign();
        }
        std::ofstream(dir + "/finished-" + std::to_string(p));
        return 0;
    });
    for (int code : codes) CHECK(code == 0);
    // The watcher saw exactly the leaders the witness saw, each after a
    // vacancy, in the same order, their fencing ids increasing.
    std::string expected = "vacant\n";
    std::istringstream led(sqlock_test::read_file(dir + "/led"));
    long long last_id = 0;
    int leaderships = 0;
    for (std::string line; std::getline(led, line);) {
        expected += line + "\nvacant\n";
        const long long id = std::stoll(line.substr(7));
        CHECK(id > last_id);
        last_id = id;
        ++leaderships;
    }
    CHECK(leaderships == candidates * rounds);
    CHECK(sqlock_test::read_file(dir + "/watched") == expected);
}
