// The exit status of `sqlock run` after its job ran, from what happened
// (tools/sqlock/run/run_outcome.hpp): each precedence, without a process or a
// database. The end-to-end behaviour is in run_test.cpp and the fencing
// suite.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "common/exit_codes.hpp"
#include "run/run_outcome.hpp"
#include "run/supervisor.hpp"

using namespace sqlock_cli;

namespace {

// Wait statuses as waitpid() reports them.
int exited(int code) {
    return W_EXITCODE(code, 0);
}
int killed_by(int signo) {
    return W_EXITCODE(0, signo);
}
int stopped_by(int signo) {
    return W_STOPCODE(signo);
}

RunOutcome job(int wait_status) {
    RunOutcome o;
    o.wait_status = wait_status;
    return o;
}

}  // namespace

TEST_CASE("a run that went well exits with the job's own status") {
    CHECK(exit_status(job(exited(0))) == 0);
    CHECK(exit_status(job(exited(3))) == 3);
    CHECK(exit_status(job(exited(255))) == 255);
}

TEST_CASE("a job killed by signal N exits 128+N") {
    CHECK(exit_status(job(killed_by(SIGTERM))) == 128 + SIGTERM);
    CHECK(exit_status(job(killed_by(SIGKILL))) == 128 + SIGKILL);
}

TEST_CASE("a wait status that is neither an exit nor a signal exits 70") {
    CHECK(exit_status(job(stopped_by(SIGSTOP))) == exit_code::internal);
}

TEST_CASE("fenced exits 79 whatever else happened") {
    RunOutcome o = job(exited(0));
    o.fenced = true;
    CHECK(exit_status(o) == exit_code::lost);
    o.wait_status = exited(3);  // the job's own failure does not win either
    CHECK(exit_status(o) == exit_code::lost);
    o.wait_status = killed_by(SIGKILL);
    o.record_failure = exit_code::unavailable;
    o.release_failure = exit_code::unavailable;
    CHECK(exit_status(o) == exit_code::lost);
    // Fencing only happens with --on-lost=term; the order is still fenced first.
    o.terminate_on_lost = false;
    CHECK(exit_status(o) == exit_code::lost);
}

TEST_CASE("a lock lost in any way exits 79 with --on-lost=term, over the job's status") {
    for (auto lose : {&RunOutcome::lost_while_running, &RunOutcome::lost_at_record,
                      &RunOutcome::lost_at_release}) {
        for (int status : {exited(0), exited(3), killed_by(SIGTERM)}) {
            RunOutcome o = job(status);
            o.*lose = true;
            CHECK(o.lost());
            CHECK(exit_status(o) == exit_code::lost);
        }
    }
}

TEST_CASE("lost wins over a failed record or release") {
    RunOutcome o = job(exited(0));
    o.lost_while_running = true;
    o.record_failure = exit_code::unavailable;
    CHECK(exit_status(o) == exit_code::lost);
    o.record_failure = 0;
    o.release_failure = exit_code::internal;
    CHECK(exit_status(o) == exit_code::lost);
}

TEST_CASE("with --on-lost=ignore a lost lock keeps the job's status") {
    for (auto lose : {&RunOutcome::lost_while_running, &RunOutcome::lost_at_record,
                      &RunOutcome::lost_at_release}) {
        RunOutcome o = job(exited(0));
        o.terminate_on_lost = false;
        o.*lose = true;
        CHECK(exit_status(o) == 0);
        o.wait_status = exited(4);
        CHECK(exit_status(o) == 4);
        o.wait_status = killed_by(SIGINT);
        CHECK(exit_status(o) == 128 + SIGINT);
    }
}

TEST_CASE("with --on-lost=ignore a lost lock leaves a failed record or release to count") {
    RunOutcome o = job(exited(0));
    o.terminate_on_lost = false;
    o.lost_while_running = true;
    o.record_failure = exit_code::unavailable;
    CHECK(exit_status(o) == exit_code::unavailable);
    o.record_failure = 0;
    o.release_failure = exit_code::configuration;
    CHECK(exit_status(o) == exit_code::configuration);
}

TEST_CASE("a job that succeeded exits with a failed record's code") {
    RunOutcome o = job(exited(0));
    o.record_failure = exit_code::unavailable;
    CHECK(exit_status(o) == exit_code::unavailable);
}

TEST_CASE("a job that succeeded exits with a failed release's code") {
    RunOutcome o = job(exited(0));
    o.release_failure = exit_code::internal;
    CHECK(exit_status(o) == exit_code::internal);
}

TEST_CASE("a failed record wins over a failed release") {
    RunOutcome o = job(exited(0));
    o.record_failure = exit_code::unavailable;
    o.release_failure = exit_code::internal;
    CHECK(exit_status(o) == exit_code::unavailable);
}

TEST_CASE("a job that failed keeps its own code over a failed record or release") {
    for (int status : {exited(1), exited(42), killed_by(SIGKILL), stopped_by(SIGSTOP)}) {
        RunOutcome o = job(status);
        const int own = exit_code_for_status(status);
        o.record_failure = exit_code::unavailable;
        CHECK(exit_status(o) == own);
        o.release_failure = exit_code::internal;
        CHECK(exit_status(o) == own);
        o.record_failure = 0;
        CHECK(exit_status(o) == own);
    }
}

TEST_CASE("a job stopped at its --max-runtime exits 124 whatever its own status") {
    for (int status :
         {exited(0), exited(3), killed_by(SIGTERM), killed_by(SIGKILL), stopped_by(SIGSTOP)}) {
        RunOutcome o = job(status);
        o.timed_out = true;
        CHECK(exit_status(o) == exit_code::timed_out);
        CHECK(exit_code::timed_out == 124);
    }
}

TEST_CASE("a timed-out job exits 124 over a failed record or release") {
    RunOutcome o = job(exited(0));
    o.timed_out = true;
    o.record_failure = exit_code::unavailable;
    CHECK(exit_status(o) == exit_code::timed_out);
    o.release_failure = exit_code::internal;
    CHECK(exit_status(o) == exit_code::timed_out);
    o.record_failure = 0;
    CHECK(exit_status(o) == exit_code::timed_out);
}

TEST_CASE("fenced or lost wins over timed out with 79: the lock is gone") {
    RunOutcome fenced = job(killed_by(SIGKILL));
    fenced.timed_out = true;
    fenced.fenced = true;
    CHECK(exit_status(fenced) == exit_code::lost);
    for (auto lose : {&RunOutcome::lost_while_running, &RunOutcome::lost_at_record,
                      &RunOutcome::lost_at_release}) {
        RunOutcome o = job(exited(0));
        o.timed_out = true;
        o.*lose = true;
        CHECK(exit_status(o) == exit_code::lost);
        o.record_failure = exit_code::unavailable;
        CHECK(exit_status(o) == exit_code::lost);
    }
}

TEST_CASE("with --on-lost=ignore a lost lock leaves a timed-out job's 124") {
    for (auto lose : {&RunOutcome::lost_while_running, &RunOutcome::lost_at_record,
                      &RunOutcome::lost_at_release}) {
        RunOutcome o = job(exited(0));
        o.terminate_on_lost = false;
        o.timed_out = true;
        o.*lose = true;
        CHECK(exit_status(o) == exit_code::timed_out);
    }
}

TEST_CASE("the run history's end: lost over the job's status, else by how it ended") {
    SuperviseResult r;
    r.status = exited(0);
    CHECK(run_end(r).outcome == sqlock::run_outcome::succeeded);
    CHECK(run_end(r).exit_status == 0);
    CHECK(!run_end(r).signal);

    r.status = exited(2);
    CHECK(run_end(r).outcome == sqlock::run_outcome::failed);
    CHECK(run_end(r).exit_status == 2);

    r.status = killed_by(SIGTERM);
    CHECK(run_end(r).outcome == sqlock::run_outcome::killed);
    CHECK(run_end(r).signal == SIGTERM);
    CHECK(!run_end(r).exit_status);

    r.status = stopped_by(SIGSTOP);
    CHECK(run_end(r).outcome == sqlock::run_outcome::failed);
    CHECK(!run_end(r).exit_status);
    CHECK(!run_end(r).signal);

    // Lost or fenced: the history says lost, and keeps how the job ended.
    r.status = killed_by(SIGTERM);
    r.lost = true;
    CHECK(run_end(r).outcome == sqlock::run_outcome::lost);
    CHECK(run_end(r).signal == SIGTERM);
    r.lost = false;
    r.fenced = true;
    r.status = exited(0);
    CHECK(run_end(r).outcome == sqlock::run_outcome::lost);
    CHECK(run_end(r).exit_status == 0);
}

TEST_CASE("the run history's end: timed out over the job's status, lost over timed out") {
    SuperviseResult r;
    r.timed_out = true;
    r.status = exited(0);  // it ended cleanly on its SIGTERM
    CHECK(run_end(r).outcome == sqlock::run_outcome::timed_out);
    CHECK(run_end(r).exit_status == 0);
    r.status = killed_by(SIGKILL);
    CHECK(run_end(r).outcome == sqlock::run_outcome::timed_out);
    CHECK(run_end(r).signal == SIGKILL);
    CHECK(!run_end(r).exit_status);

    r.fenced = true;
    CHECK(run_end(r).outcome == sqlock::run_outcome::lost);
    r.fenced = false;
    r.lost = true;
    CHECK(run_end(r).outcome == sqlock::run_outcome::lost);
}

TEST_CASE("--retry runs again a job that failed by itself, not one sqlock stopped") {
    auto attempt = [](int status) {
        SuperviseResult r;
        r.status = status;
        return r;
    };
    CHECK_FALSE(retryable(attempt(exited(0))));
    CHECK(retryable(attempt(exited(1))));
    CHECK(retryable(attempt(exited(127))));
    CHECK(retryable(attempt(killed_by(SIGSEGV))));  // killed, but not by sqlock
    for (bool SuperviseResult::*stopped :
         {&SuperviseResult::lost, &SuperviseResult::fenced, &SuperviseResult::timed_out,
          &SuperviseResult::signalled, &SuperviseResult::leftovers}) {
        SuperviseResult r = attempt(exited(1));
        r.*stopped = true;
        CHECK_FALSE(retryable(r));
    }
}

TEST_CASE("--retry-delay doubles after each failure, up to a cap, jittered down by half at most") {
    using std::chrono::milliseconds;
    const milliseconds base(1000);
    CHECK(retry_backoff(base, 1, 0.0) == milliseconds(1000));
    CHECK(retry_backoff(base, 2, 0.0) == milliseconds(2000));
    CHECK(retry_backoff(base, 3, 0.0) == milliseconds(4000));
    CHECK(retry_backoff(base, 11, 0.0) == milliseconds(600000));  // 1024 s capped at 10 min
    CHECK(retry_backoff(base, 60, 0.0) == milliseconds(600000));
    CHECK(retry_backoff(base, 3, 0.5) == milliseconds(3000));
    CHECK(retry_backoff(base, 3, 0.999) > milliseconds(2000));
    // A base above the cap is the cap.
    CHECK(retry_backoff(milliseconds(3600000), 5, 0.0) == milliseconds(3600000));
}
