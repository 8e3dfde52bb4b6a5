// 8. Leader election: how fast leadership changes hands, in three processes.
// Two candidates take turns: each leads a while (20 ms where changes are
// pushed, 300 ms where the watcher polls every 250 ms, so that it can see
// each), resigns, and campaigns again behind the other; a third process
// watches. Measured:
//   - resignation to the standby leading (its campaign() has returned, the
//     value published): within 100 ms on PostgreSQL, within the watcher's
//     poll bound (250 ms) elsewhere;
//   - resignation to the watcher reporting the new leader, after the
//     vacancy, in order;
//   - a crashed leader (its lock left to run out, 1 s lease) to the standby
//     leading, against the lease the crash left: the lease plus the bound.
#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "bench_database.hpp"
#include "clock.hpp"
#include "sections.hpp"
#include "shared.hpp"
#include "stats.hpp"
#include "workers.hpp"

namespace sqlock_bench {
namespace {

using namespace std::chrono_literals;

constexpr int max_turns = 64;

struct Turns {
    std::atomic<int> next{0};     // leaderships so far
    std::atomic<int> leaders{0};  // > 1: a bug
    std::atomic<int> overlaps{0};
    std::atomic<int> watcher_ready{0};
    std::atomic<int> done{0};                 // the candidates have taken every turn
    std::atomic<int> out_of_order{0};         // watcher: a leader without a vacancy before it
    std::atomic<std::int64_t> id[max_turns];  // by turn: the fencing id
    std::int64_t got_ns[max_turns];           // by turn: campaign() returned
    std::int64_t resign_ns[max_turns];        // by turn: just before resign()
    std::int64_t seen_ns[max_turns];          // by turn: the watcher reported it
};

// Two candidates take `turns` turns of `hold_ns`; the watcher records when
// it saw each.
void take_turns(const BenchDatabase& db, int turns, std::int64_t hold_ns, Turns& t) {
    const std::string name = "bench-leader";
    Workers children(3, [&](int i) {
        sqlock::Locker locker = db.open();
        if (i == 2) {
            sqlock::LeaderWatch watch = sqlock::Election(locker, name).observe();
            bool vacant_before = false;
            int seen = 0;
            const std::int64_t give_up = now_ns() + 120'000'000'000;
            // Until every turn is seen, or the candidates are done and no
            // change came for a second.
            std::int64_t quiet_since = now_ns();
            while (seen < turns && now_ns() < give_up) {
                if (t.done.load() && now_ns() - quiet_since > 1'000'000'000) break;
                auto e = watch.next(200ms);
                if (!e) continue;
                quiet_since = now_ns();
                t.watcher_ready.store(1);
                if (e->kind == sqlock::leader_event::vacant) vacant_before = true;
                if (e->kind != sqlock::leader_event::leader) continue;
                const std::int64_t at = now_ns();
                if (seen > 0 && !vacant_before) t.out_of_order.fetch_add(1);
                vacant_before = false;
                // Which turn: the one whose fencing id this is (its
                // campaign() may not have returned yet to say so).
                const std::int64_t wait_until = now_ns() + 5'000'000'000;
                for (bool found = false; !found && now_ns() < wait_until;) {
                    for (int k = 0; k < turns && !found; ++k)
                        if (t.id[k].load() == e->leader->lock.id) {
                            t.seen_ns[k] = at;
                            found = true;
                        }
                    if (!found) sleep_ns(100'000);
                }
                ++seen;
            }
            return;
        }
        while (t.watcher_ready.load() == 0) sleep_ns(1'000'000);
        sqlock::LockOptions o;
        o.expires = 30s;
        o.wait_forever = true;
        for (;;) {
            if (t.next.load() >= turns) {
                t.done.store(1);
                return;
            }
            sqlock::Leadership lead =
                sqlock::Election(locker, name).campaign("candidate-" + std::to_string(i), o);
            const std::int64_t got = now_ns();
            const int k = t.next.fetch_add(1);
            if (k >= turns) {  // the other took the last turn
                t.done.store(1);
                return;
            }
            if (t.leaders.fetch_add(1) != 0) t.overlaps.fetch_add(1);
            t.got_ns[k] = got;
            t.id[k] = lead.id();
            sleep_ns(hold_ns);
            t.leaders.fetch_sub(1);
            t.resign_ns[k] = now_ns();
            lead.resign();
        }
    });
    children.join();
}

// A leader that crashes (detaches, as if killed) with a 1 s lease, and a
// standby that waits for it: the standby's delay after the crash, and
// what was left of the lease then.
struct Crash {
    std::atomic<int> leading{0};
    std::int64_t crashed_ns = 0;
    std::int64_t lease_end_ns = 0;  // by the leader's clock: acquisition sent + lease
    std::int64_t standby_ns = 0;
};

void crash_once(const BenchDatabase& db, Crash& c) {
    const std::string name = "bench-crash";
    Workers children(2, [&](int i) {
        sqlock::Locker locker = db.open();
        sqlock::LockOptions o;
        if (i == 0) {
            o.expires = 1s;
            const std::int64_t sent = now_ns();
            sqlock::Leadership lead = sqlock::Election(locker, name).campaign("crashing", o);
            c.lease_end_ns = sent + 1'000'000'000;
            c.leading.store(1);
            sleep_ns(100'000'000);  // the standby is waiting by now
            c.crashed_ns = now_ns();
            lead.lock().detach();
            return;
        }
        while (c.leading.load() == 0) sleep_ns(1'000'000);
        o.expires = 30s;
        o.wait = 30s;
        sqlock::Leadership lead = sqlock::Election(locker, name).campaign("standby", o);
        c.standby_ns = now_ns();
    });
    children.join();
}

}  // namespace

void bench_leader(Context& ctx, const BackendTarget& target) {
    const bool pushed = target.hooks().pushes_wake_ups;
    const int turns = ctx.options.quick ? 6 : pushed ? 40 : 20;
    const std::int64_t hold_ns = pushed ? 20'000'000 : 300'000'000;
    Shared<Turns> t;
    {
        BenchDatabase db(target, "leader");
        take_turns(db, turns, hold_ns, *t);
    }
    if (t->overlaps.load())
        throw std::runtime_error("two leaders at once: mutual exclusion violated");
    std::vector<double> handover_ms, watched_ms;
    for (int k = 0; k + 1 < turns; ++k) {
        handover_ms.push_back((t->got_ns[k + 1] - t->resign_ns[k]) / 1e6);
        if (t->seen_ns[k + 1] > 0)
            watched_ms.push_back((t->seen_ns[k + 1] - t->resign_ns[k]) / 1e6);
    }
    const double bound_ms = pushed ? 100 : 250;
    const std::string who = std::to_string(turns) + " turns of 2 candidates, " +
                            format_value(hold_ns / 1e6, "ms") + " each";

    Result handover =
        make_row("leader", target, "resignation to the standby leading, " + who + ", p50", "ms");
    handover.sqlock = median(handover_ms);
    handover.goal = Goal::below(bound_ms);
    handover.note = "p99 " + format_value(percentile(handover_ms, 99), "ms");
    ctx.report.add(handover);

    Result watched = make_row("leader", target,
                              "resignation to the watcher reporting the next leader, p50", "ms");
    if (!watched_ms.empty()) {
        watched.sqlock = median(watched_ms);
        watched.goal = Goal::below(bound_ms);
        watched.note = "p99 " + format_value(percentile(watched_ms, 99), "ms") + "; " +
                       std::to_string(watched_ms.size()) + " of " + std::to_string(turns - 1) +
                       " hand-overs seen, " + std::to_string(t->out_of_order.load()) +
                       " without the vacancy before; " +
                       (pushed ? "pushed" : "polled every 250 ms");
    } else {
        watched.note = "the watcher saw no hand-over";
    }
    ctx.report.add(watched);

    // A crashed leader: replaced once its lease ends, plus the bound.
    std::vector<double> after_crash_ms, lease_left_ms;
    for (int round = 0; round < (ctx.options.quick ? 1 : 3); ++round) {
        Shared<Crash> c;
        BenchDatabase db(target, "leader_crash");
        crash_once(db, *c);
        after_crash_ms.push_back((c->standby_ns - c->crashed_ns) / 1e6);
        lease_left_ms.push_back((c->lease_end_ns - c->crashed_ns) / 1e6);
    }
    Result crash =
        make_row("leader", target, "crashed leader (1 s lease) to the standby leading", "ms");
    crash.sqlock = median(after_crash_ms);
    crash.baseline = median(lease_left_ms);
    crash.baseline_name = "the lease left at the crash";
    crash.goal = Goal::below(median(lease_left_ms) + bound_ms);
    crash.note = "median of " + std::to_string(after_crash_ms.size()) + " crashes";
    ctx.report.add(crash);
}

}  // namespace sqlock_bench
