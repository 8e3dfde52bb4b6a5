// The Locker members kept for one release (locker.hpp, "kept for one
// release; use ..."): each does what the type over the Locker's session it
// names does, on the same tables, so that a program still calling them sees
// the same history, pauses and leaders as one that moved.
#include <catch2/catch.hpp>
#include <string>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock::run_outcome;
using sqlock_test::fresh_database;

TEST_CASE("the kept history members read and write the history RunHistory keeps",
          "[history][once-per][prune][kept]") {
    auto db = fresh_database();
    auto locker = db.open();
    sqlock::RunHistory history(locker);
    auto lock = locker.lock("kept-job");

    const sqlock::OncePerWindow window = locker.once_per_window(lock, 24h);
    CHECK_FALSE(window.done);
    sqlock::RunStart info;
    info.window_start_ms = window.start_ms;
    const std::int64_t run = locker.start_run(lock, info);
    CHECK(locker.finish_run(lock, run, {}) == run_outcome::succeeded);
    const auto recorded = history.runs();
    REQUIRE(recorded.size() == 1);
    CHECK(recorded[0].id == run);
    CHECK(locker.history().at(0).id == run);
    CHECK(history.once_per_window(lock, 24h).done);
    CHECK(locker.job_status("kept-job").last_success->id == run);
    CHECK(locker.predecessors({"kept-job"}, 1h).satisfied());
    const std::int64_t skip = locker.record_skip(lock, run_outcome::after_pending);
    CHECK(history.job_status("kept-job").skipped->id == skip);
    CHECK(locker.run_counts().size() == history.run_counts().size());
    const auto started = history.start_run_unless_paused(lock);
    REQUIRE(started.run_id);
    CHECK(locker.start_run_unless_paused(lock).run_id > *started.run_id);
    // Of the four runs only the skip is prunable once 1 ms old on the
    // database's clock: the finished run did a once-per window that may
    // still be current, and the other two go on under the live lock.
    CHECK(sqlock_test::eventually([&] { return locker.count_prunable_history(1ms) == 1; }));
    CHECK(history.count_prunable(1ms) == 1);  // counting deleted nothing
    CHECK(locker.prune_history(1ms) == 1);
    CHECK(history.count_prunable(1ms) == 0);
    const auto left = history.runs();
    CHECK(left.size() == 3);
    for (const auto& r : left) CHECK(r.id != skip);
}

TEST_CASE("the kept pause members read and write the pauses Pauses keeps", "[pause][kept]") {
    auto db = fresh_database();
    auto locker = db.open();
    sqlock::Pauses pauses(locker);

    locker.pause("kept-job", std::nullopt, "kept");
    REQUIRE(pauses.find("kept-job"));
    CHECK(pauses.find("kept-job")->reason == "kept");
    pauses.pause("other-job", 2s);
    CHECK(locker.paused("other-job"));
    CHECK(locker.pauses().size() == 2);
    CHECK(locker.count_expired_pauses() == 0);
    CHECK(sqlock_test::eventually([&] { return locker.count_expired_pauses() == 1; }));
    CHECK(locker.purge_expired_pauses() == 1);
    CHECK(pauses.all().size() == 1);
    CHECK(locker.resume("kept-job"));
    CHECK_FALSE(pauses.find("kept-job"));
}

TEST_CASE("the kept election members lead and watch as Election does", "[leader][kept]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto other = db.open();
    sqlock::Election election(other, "kept-leader");

    sqlock::Leadership lead = locker.campaign("kept-leader", "here");
    REQUIRE(election.leader());
    CHECK(election.leader()->lock.id == lead.id());
    CHECK(locker.leader("kept-leader")->value == "here");
    sqlock::LeaderWatch watch = locker.observe("kept-leader");
    auto seen = watch.next(5s);
    REQUIRE(seen);
    CHECK(seen->kind == sqlock::leader_event::leader);
    CHECK(seen->leader->lock.id == lead.id());
}

TEST_CASE("the kept diagnose member reports what diagnose() reports", "[kept]") {
    auto db = fresh_database();
    auto locker = db.open();
    const sqlock::Diagnosis kept = locker.diagnose();
    const sqlock::Diagnosis now = sqlock::diagnose(locker);
    REQUIRE(kept.facts.size() == now.facts.size());
    for (std::size_t i = 0; i < now.facts.size(); ++i) CHECK(kept.facts[i].key == now.facts[i].key);
    CHECK(kept.facts.at(0).value == locker.url());
}

TEST_CASE("the kept lock_transaction member takes the name for the transaction",
          "[guard][scoped][kept][needs:transactions]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto tx = sqlock_test::app_transaction(db);
    const std::int64_t id = locker.lock_transaction(tx->adapter(), "kept-batch");
    CHECK(id > 0);
    tx->commit();
    CHECK_FALSE(locker.show("kept-batch"));  // no row is left behind
    auto after = locker.try_lock("kept-batch");
    REQUIRE(after);
    CHECK(after->id() > id);
}
