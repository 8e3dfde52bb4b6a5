// The run history and once-per windows of the library (sqlock/run_history.hpp).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <iterator>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock::run_outcome;
using sqlock_test::fresh_database;
using sqlock_test::history_query;
using sqlock_test::lock_options;
using sqlock_test::run_start;

TEST_CASE("a run is recorded from start to end, with its host and fencing id", "[history]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job");
    const std::int64_t run =
        sqlock::RunHistory(locker).start_run(lock, run_start().program("backup"));
    auto runs = sqlock::RunHistory(locker).runs(history_query().name("job"));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].id == run);
    CHECK(runs[0].outcome == run_outcome::running);
    CHECK(runs[0].fencing_id == lock.id());
    CHECK(runs[0].pid == getpid());
    CHECK(runs[0].program == "backup");
    CHECK_FALSE(runs[0].ended);
    CHECK_FALSE(runs[0].window_start);

    CHECK(sqlock::RunHistory(locker).finish_run(lock, run, {run_outcome::failed, 2, {}}) ==
          run_outcome::failed);
    // Only a running run is finished: a second end changes nothing, and
    // says the end recorded (what a call sent again after its answer was
    // lost finds).
    CHECK(sqlock::RunHistory(locker).finish_run(lock, run, {run_outcome::succeeded, 0, {}}) ==
          run_outcome::failed);
    runs = sqlock::RunHistory(locker).runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].outcome == run_outcome::failed);
    CHECK(runs[0].exit_status == 2);
    CHECK_FALSE(runs[0].signal);
    REQUIRE(runs[0].ended);
    REQUIRE(runs[0].duration_seconds);
    CHECK(*runs[0].duration_seconds >= 0.0);
    CHECK(sqlock_test::seconds_between(runs[0].started, *runs[0].ended) >= 0.0);
}

TEST_CASE("every outcome is stored, read back and counted as it was recorded", "[history]") {
    auto db = fresh_database();
    auto locker = db.open();
    for (run_outcome outcome : sqlock::all_run_outcomes) {
        CHECK(sqlock::parse_run_outcome(sqlock::to_string(outcome)) == outcome);
        if (outcome == run_outcome::running) continue;
        const std::string name = std::string("job-") + sqlock::to_string(outcome);
        auto lock = locker.lock(name);
        if (sqlock::is_skip(outcome)) {
            // A skip ran nothing: it is recorded as one, never as an end.
            const std::int64_t run = sqlock::RunHistory(locker).start_run(lock);
            CHECK_THROWS_AS(sqlock::RunHistory(locker).finish_run(lock, run, {outcome, {}, {}}),
                            sqlock::error);
            CHECK(sqlock::RunHistory(locker).finish_run(lock, run, {run_outcome::lost, {}, {}}) ==
                  run_outcome::lost);
            const std::int64_t skip = sqlock::RunHistory(locker).record_skip(lock, outcome);
            lock.release();
            auto runs = sqlock::RunHistory(locker).runs(history_query().name(name));
            REQUIRE(runs.size() == 2);
            CHECK(runs[0].id == skip);
            CHECK(runs[0].outcome == outcome);
            CHECK(runs[0].ended == runs[0].started);
            CHECK_FALSE(runs[0].exit_status);
            continue;
        }
        const std::int64_t run = sqlock::RunHistory(locker).start_run(lock);
        CHECK(sqlock::RunHistory(locker).finish_run(lock, run, {outcome, {}, 15}) == outcome);
        lock.release();
        auto runs = sqlock::RunHistory(locker).runs(history_query().name(name));
        REQUIRE(runs.size() == 1);
        CHECK(runs[0].outcome == outcome);
        CHECK(runs[0].signal == 15);
    }
    CHECK_FALSE(sqlock::parse_run_outcome("timed out"));
    CHECK_FALSE(sqlock::parse_run_outcome(""));
    const std::vector<sqlock::RunCount> counts = sqlock::RunHistory(locker).run_counts();
    // Each name once, and the skips' names a lost run beside their skip.
    CHECK(counts.size() == std::size(sqlock::all_run_outcomes) - 1 + 2);
    for (const auto& c : counts) {
        CHECK(c.count == 1);
        if (c.outcome == run_outcome::lost && c.name != "job-lost") continue;
        CHECK(c.name == std::string("job-") + sqlock::to_string(c.outcome));
    }
    auto lock = locker.lock("job-x");
    CHECK_THROWS_AS(sqlock::RunHistory(locker).record_skip(lock, run_outcome::succeeded),
                    sqlock::error);
}

TEST_CASE("predecessors: the newest run that ran decides, by the database's clock",
          "[history][after]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto finish = [&](const std::string& name, run_outcome outcome) {
        auto lock = locker.lock(name);
        const std::int64_t run = sqlock::RunHistory(locker).start_run(lock);
        REQUIRE(sqlock::RunHistory(locker).finish_run(lock, run, {outcome, {}, {}}) == outcome);
    };
    auto state = [&](const std::string& name) {
        const sqlock::Predecessors p = sqlock::RunHistory(locker).predecessors({name}, 1h);
        REQUIRE(p.jobs.size() == 1);
        CHECK(p.since_ms == p.now_ms - 3600 * 1000);
        return p.jobs[0].state;
    };
    CHECK(state("a") == sqlock::predecessor_state::missing);
    finish("a", run_outcome::failed);
    CHECK(state("a") == sqlock::predecessor_state::failed);
    finish("a", run_outcome::succeeded);
    CHECK(state("a") == sqlock::predecessor_state::succeeded);
    {
        // Skips of "a" (as a job after another) do not hide its success.
        auto lock = locker.lock("a");
        sqlock::RunHistory(locker).record_skip(lock, run_outcome::after_failed);
    }
    CHECK(state("a") == sqlock::predecessor_state::succeeded);
    const sqlock::JobStatus status = sqlock::RunHistory(locker).job_status("a");
    REQUIRE(status.last_finished);
    CHECK(status.last_finished->outcome == run_outcome::succeeded);
    REQUIRE(status.skipped);
    CHECK(status.skipped->outcome == run_outcome::after_failed);
    {
        auto lock = locker.lock("a");
        const std::int64_t run = sqlock::RunHistory(locker).start_run(lock);
        CHECK(state("a") == sqlock::predecessor_state::running);
        CHECK_FALSE(sqlock::RunHistory(locker).job_status("a").skipped);  // a run since the skip
        sqlock::RunHistory(locker).finish_run(lock, run, {run_outcome::succeeded, 0, {}});
    }
    // A cutoff after the success: missing; every job must have succeeded.
    const sqlock::Predecessors later =
        sqlock::RunHistory(locker).predecessors({"a"}, [](std::int64_t now) { return now + 1000; });
    CHECK(later.jobs[0].state == sqlock::predecessor_state::missing);
    CHECK_FALSE(later.satisfied());
    CHECK(sqlock::RunHistory(locker).predecessors({"a"}, 1h).satisfied());
    CHECK_FALSE(sqlock::RunHistory(locker).predecessors({"a", "b"}, 1h).satisfied());
    CHECK_THROWS_AS(sqlock::RunHistory(locker).predecessors({}, 1h), sqlock::error);
    CHECK_THROWS_AS(sqlock::RunHistory(locker).predecessors({""}, 1h), sqlock::error);
    CHECK_THROWS_AS(sqlock::RunHistory(locker).predecessors({"a"}, sqlock::duration::zero()),
                    sqlock::error);
}

TEST_CASE("a run whose lock was lost before its end is recorded lost", "[history]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job", lock_options().expires(1h));
    const std::int64_t run = sqlock::RunHistory(locker).start_run(lock);
    REQUIRE(locker.force_release("job"));
    // Read as lost at once: its lock row is gone.
    CHECK(sqlock::RunHistory(locker).runs()[0].outcome == run_outcome::lost);
    CHECK(sqlock::RunHistory(locker).finish_run(lock, run, {run_outcome::succeeded, 0, {}}) ==
          run_outcome::lost);
    auto runs = sqlock::RunHistory(locker).runs();
    CHECK(runs[0].outcome == run_outcome::lost);
    CHECK(runs[0].ended);
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    lock = locker.lock("other");  // the old handle's release fails quietly
    sqlock::set_release_error_handler({});
}

TEST_CASE("a run's end is written only to a run of the lock row that ends it", "[history]") {
    // A stale holder whose run id names another holder's run (ids handed out
    // again after a crash failover lost the last ones) must not end that run.
    auto db = fresh_database();
    auto locker = db.open();
    sqlock::RunHistory history(locker);
    auto mine = locker.lock("job");
    auto theirs = locker.lock("other");
    const std::int64_t run = history.start_run(mine);
    CHECK(history.finish_run(theirs, run, {run_outcome::failed, 1, {}}) == run_outcome::lost);
    auto runs = history.runs(history_query().name("job"));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].outcome == run_outcome::running);
    CHECK_FALSE(runs[0].ended);
    CHECK(history.finish_run(mine, run, {run_outcome::succeeded, 0, {}}) == run_outcome::succeeded);
}

TEST_CASE("a run's end is not written while its lock row has another holder", "[history]") {
    // After a crash failover lost the last ids, a stale holder's lock row
    // id and run id can both name a new holder's: the lock row's holder
    // tells them apart.
    auto db = fresh_database();
    auto locker = db.open();
    sqlock::RunHistory history(locker);
    auto stale = locker.lock("job");
    const std::int64_t run = history.start_run(stale);
    // The row and the run now stand for another holder's.
    sqlock_test::query(db, "UPDATE " + db.table + " SET locked_by = 'another holder' WHERE id = " +
                               std::to_string(stale.id()));
    CHECK(history.finish_run(stale, run, {run_outcome::failed, 1, {}}) == run_outcome::lost);
    auto runs = history.runs(history_query().name("job"));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].outcome == run_outcome::running);
    CHECK_FALSE(runs[0].ended);
    // The other holder's run ends; the stale holder, asking again, is not
    // told that end as its own.
    sqlock_test::query(db, "UPDATE " + db.table +
                               "_runs SET outcome = 'succeeded' WHERE id = " + std::to_string(run));
    CHECK(history.finish_run(stale, run, {run_outcome::failed, 1, {}}) == run_outcome::lost);
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    stale = locker.lock("other");  // the stale handle's release fails quietly
    sqlock::set_release_error_handler({});
}

TEST_CASE("once-per windows are UTC, aligned on the epoch, shifted by the offset",
          "[history][once-per]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("nightly");
    auto day = sqlock::RunHistory(locker).once_per_window(lock, 24h, 3h);
    CHECK(day.end_ms - day.start_ms == 86400000);
    CHECK(day.start_ms % 86400000 == 3 * 3600000);
    CHECK(day.start.substr(11) == "03:00:00.000");
    CHECK_FALSE(day.done);
    // The window holds the database's now, by the database's own lock times.
    CHECK(sqlock_test::seconds_between(day.start, lock.created()) >= 0);
    CHECK(sqlock_test::seconds_between(lock.created(), day.end) > 0);

    const std::int64_t run =
        sqlock::RunHistory(locker).start_run(lock, run_start().window_start_ms(day.start_ms));
    CHECK_FALSE(
        sqlock::RunHistory(locker).once_per_window(lock, 24h, 3h).done);  // running: not done
    sqlock::RunHistory(locker).finish_run(lock, run, {run_outcome::succeeded, 0, {}});
    auto again = sqlock::RunHistory(locker).once_per_window(lock, 24h, 3h);
    CHECK(again.done);
    REQUIRE(again.done_by);
    CHECK(again.done_by->id == run);
    CHECK(again.done_by->window_start == day.start);
    // Another window length is another window.
    CHECK_FALSE(sqlock::RunHistory(locker).once_per_window(lock, 12h).done);
    // Another name's window is its own.
    auto other = locker.lock("weekly");
    CHECK_FALSE(sqlock::RunHistory(locker).once_per_window(other, 24h, 3h).done);
}

TEST_CASE("a failed run leaves its window open, unless any outcome counts", "[history][once-per]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job");
    auto w = sqlock::RunHistory(locker).once_per_window(lock, 24h);
    const std::int64_t run =
        sqlock::RunHistory(locker).start_run(lock, run_start().window_start_ms(w.start_ms));
    sqlock::RunHistory(locker).finish_run(lock, run, {run_outcome::killed, {}, 9});
    CHECK_FALSE(sqlock::RunHistory(locker).once_per_window(lock, 24h).done);
    auto any = sqlock::RunHistory(locker).once_per_window(lock, 24h, 0ms, /*any_outcome=*/true);
    CHECK(any.done);
    CHECK(any.done_by->outcome == run_outcome::killed);
    CHECK(any.done_by->signal == 9);
}

TEST_CASE("once-per and history arguments are checked", "[history][validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job");
    auto invalid = [](auto&& f) {
        try {
            f();
        } catch (const sqlock::error& e) {
            return e.category() == sqlock::errc::invalid_argument;
        }
        return false;
    };
    CHECK(invalid([&] { sqlock::RunHistory(locker).once_per_window(lock, 0ms); }));
    CHECK(invalid([&] { sqlock::RunHistory(locker).once_per_window(lock, -1h); }));
    CHECK(invalid([&] { sqlock::RunHistory(locker).once_per_window(lock, 1h, 1h); }));
    CHECK(invalid([&] { sqlock::RunHistory(locker).once_per_window(lock, 1h, -1ms); }));
    CHECK(invalid([&] {
        sqlock::RunHistory(locker).finish_run(lock, 1, {run_outcome::running, {}, {}});
    }));
    CHECK(invalid([&] { sqlock::RunHistory(locker).runs(history_query().limit(0)); }));
    CHECK(invalid([&] { sqlock::RunHistory(locker).prune(0ms); }));
    auto other = db.open();
    CHECK(invalid([&] { sqlock::RunHistory(other).start_run(lock); }));
    lock.release();
    CHECK(invalid([&] { sqlock::RunHistory(locker).once_per_window(lock, 1h); }));
    CHECK(invalid([&] { sqlock::RunHistory(locker).start_run(lock); }));
}

TEST_CASE("the whole history has every run, however long ago it started", "[history]") {
    auto db = fresh_database();
    auto locker = db.open();
    locker.init();
    // Another program's run from an age no lease reaches (the oldest date
    // every dialect stores).
    const std::string ancient = "'1000-01-01 00:00:00.000'";
    sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                  "_runs (name, host, pid, username, program, fencing_id, "
                                  "started, ended, outcome) VALUES ('old', 'h', 1, 'u', 'p', 1, " +
                                  ancient + ", " + ancient + ", 'succeeded')");
    auto lock = locker.lock("job");
    sqlock::RunHistory(locker).start_run(lock);
    const auto all = sqlock::RunHistory(locker).runs();
    REQUIRE(all.size() == 2);
    CHECK(all[0].name == "job");
    CHECK(all[1].name == "old");
    CHECK(sqlock::RunHistory(locker).runs(history_query().name("old")).size() == 1);
    CHECK(sqlock::RunHistory(locker).runs(history_query().name("old").since(24h)).empty());
}

TEST_CASE("prune_history deletes old runs only, never a live one", "[history][prune]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("long");
    sqlock::RunHistory(locker).start_run(lock);  // stays running under a live lock
    {
        auto done = locker.lock("short");
        sqlock::RunHistory(locker).finish_run(done, sqlock::RunHistory(locker).start_run(done),
                                              {run_outcome::succeeded, 0, {}});
    }
    CHECK(sqlock::RunHistory(locker).prune(1h) == 0);
    CHECK(sqlock::RunHistory(locker).runs().size() == 2);
    // Both are older than a millisecond soon; only the finished one goes.
    CHECK(sqlock_test::eventually([&] { return sqlock::RunHistory(locker).prune(1ms, 1) == 1; }));
    auto left = sqlock::RunHistory(locker).runs();
    REQUIRE(left.size() == 1);
    CHECK(left[0].name == "long");
}

TEST_CASE("count_prunable_history counts what prune_history deletes, and deletes nothing",
          "[history][prune][reap]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto live = locker.lock("long");
    sqlock::RunHistory(locker).start_run(live);  // never prunable: running under a live lock
    {
        auto done = locker.lock("short");
        sqlock::RunHistory(locker).finish_run(done, sqlock::RunHistory(locker).start_run(done),
                                              {run_outcome::succeeded, 0, {}});
    }
    CHECK_THROWS_AS(sqlock::RunHistory(locker).count_prunable(0ms), sqlock::error);
    CHECK(sqlock::RunHistory(locker).count_prunable(1h) == 0);
    // The finished run becomes older than 1 ms on the database's clock.
    CHECK(sqlock_test::eventually(
        [&] { return sqlock::RunHistory(locker).count_prunable(1ms) == 1; }));
    CHECK(sqlock::RunHistory(locker).count_prunable(1ms) == 1);  // counting deleted nothing
    CHECK(sqlock::RunHistory(locker).runs().size() == 2);
    CHECK(sqlock::RunHistory(locker).prune(1ms) == 1);
    CHECK(sqlock::RunHistory(locker).count_prunable(1ms) == 0);
    REQUIRE(sqlock::RunHistory(locker).runs().size() == 1);
    CHECK(sqlock::RunHistory(locker).runs()[0].name == "long");
}

TEST_CASE("without a history table there is nothing to count or prune",
          "[history][upgrade][reap]") {
    auto db = fresh_database();
    db.open().init();
    sqlock_test::exec_sql(db, "DROP TABLE " + db.table + "_runs");
    auto locker = db.open();
    CHECK(sqlock::RunHistory(locker).count_prunable(1ms) == 0);
    CHECK(sqlock::RunHistory(locker).prune(1ms) == 0);
}

TEST_CASE("a dead holder's run reads lost, and the reaper records when its lease ended",
          "[history][lost]") {
    auto db = fresh_database();
    auto locker = db.open();
    // A holder that stops renewing (as a killed process does): detached.
    auto lock = locker.lock("job", lock_options().expires(300ms).heartbeat(false));
    sqlock::RunHistory(locker).start_run(lock);
    const sqlock::LockInfo row = lock.detach();
    CHECK(sqlock::RunHistory(locker).runs()[0].outcome == run_outcome::running);
    REQUIRE(sqlock_test::eventually(
        [&] { return sqlock::RunHistory(locker).runs()[0].outcome == run_outcome::lost; }));
    auto runs = sqlock::RunHistory(locker).runs();
    REQUIRE(runs[0].ended);
    CHECK(*runs[0].ended == row.expires);  // read from the expired row
    CHECK(locker.purge_expired() == 1);
    runs = sqlock::RunHistory(locker).runs();
    CHECK(runs[0].outcome == run_outcome::lost);
    REQUIRE(runs[0].ended);
    CHECK(*runs[0].ended == row.expires);  // recorded by the reaper
}

TEST_CASE("a run whose lock was taken over reads lost; the new holder's window is open",
          "[history][lost][once-per]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto other = db.open();
    auto lock = locker.lock("job", lock_options().expires(300ms).heartbeat(false));
    auto w = sqlock::RunHistory(locker).once_per_window(lock, 24h);
    sqlock::RunHistory(locker).start_run(lock, run_start().window_start_ms(w.start_ms));
    lock.detach();
    std::optional<sqlock::Lock> taker;
    REQUIRE(sqlock_test::eventually([&] { return (taker = other.try_lock("job")).has_value(); }));
    auto runs = sqlock::RunHistory(other).runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].outcome == run_outcome::lost);
    CHECK_FALSE(runs[0].ended);  // the row that knew its lease end is gone
    CHECK_FALSE(sqlock::RunHistory(other).once_per_window(*taker, 24h).done);
    CHECK(sqlock::RunHistory(other).once_per_window(*taker, 24h, 0ms, /*any_outcome=*/true).done);
}

TEST_CASE("the runs of one hold of a lock are numbered as attempts", "[history]") {
    auto db = fresh_database();
    auto locker = db.open();
    {
        auto lock = locker.lock("job");
        auto first = sqlock::RunHistory(locker).start_run(lock);
        sqlock::RunHistory(locker).finish_run(lock, first, {run_outcome::failed, 1, {}});
        auto second = sqlock::RunHistory(locker).start_run(lock);
        sqlock::RunHistory(locker).finish_run(lock, second, {run_outcome::succeeded, 0, {}});
    }
    {
        auto other = locker.lock("other");  // another name: its own count
        sqlock::RunHistory(locker).finish_run(other, sqlock::RunHistory(locker).start_run(other),
                                              {run_outcome::succeeded, 0, {}});
    }
    auto lock = locker.lock("job");  // a new hold: attempt 1 again
    sqlock::RunHistory(locker).start_run(lock);
    auto runs = sqlock::RunHistory(locker).runs(sqlock::HistoryQuery{"job"});
    REQUIRE(runs.size() == 3);  // newest first
    CHECK(runs[0].attempt == 1);
    CHECK(runs[1].attempt == 2);
    CHECK(runs[1].outcome == run_outcome::succeeded);
    CHECK(runs[2].attempt == 1);
    CHECK(runs[1].fencing_id == runs[2].fencing_id);
    CHECK(runs[0].fencing_id != runs[1].fencing_id);
    CHECK(sqlock::RunHistory(locker).runs(sqlock::HistoryQuery{"other"}).at(0).attempt == 1);
    // job_status reads the same column.
    CHECK(sqlock::RunHistory(locker).job_status("job").last_success->attempt == 2);
}

TEST_CASE("a once-per window drawn by a rule around the database's now", "[history][once-per]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job");
    std::int64_t seen = 0;
    // A window that holds now: what the rule said, and open.
    auto w = sqlock::RunHistory(locker).once_per_window(lock, [&](std::int64_t now) {
        seen = now;
        return std::make_pair(now - 1000, now + 1000);
    });
    CHECK(w.start_ms == seen - 1000);
    CHECK(w.end_ms == seen + 1000);
    CHECK_FALSE(w.done);
    sqlock::RunHistory(locker).finish_run(
        lock, sqlock::RunHistory(locker).start_run(lock, {{}, {}, 0, {}, w.start_ms}),
        {run_outcome::succeeded, 0, {}});
    // The same start later: done.
    auto again = sqlock::RunHistory(locker).once_per_window(
        lock, [&](std::int64_t now) { return std::make_pair(seen - 1000, now + 1000); });
    CHECK(again.done);
    // A window that does not hold now is refused.
    CHECK_THROWS_MATCHES(
        sqlock::RunHistory(locker).once_per_window(
            lock, [](std::int64_t now) { return std::make_pair(now + 10, now + 20); }),
        sqlock::error, Catch::Matchers::Predicate<sqlock::error>([](const sqlock::error& e) {
            return e.category() == sqlock::errc::invalid_argument;
        }));
}
