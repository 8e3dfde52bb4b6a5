// 4. The queue of waiters: N processes arrive 10 ms apart at one name that
// the benchmark holds, and wait in line; once all are in line it measures
// the line's upkeep for a while, then releases, and each waiter holds the
// name 30 ms once and leaves. Measured at 8, 64 and 256 waiters (8 and 16
// in quick mode):
//   - the database's own count of work (PostgreSQL: committed and rolled
//     back transactions of the database, pg_stat_database; MariaDB:
//     statements, the server's Questions; SQLite has no server to count):
//     per second and waiting process while the name is held (the places'
//     renewals and the waiters' looks), and per hand-off once it is
//     released, each against the same at 8 waiters in the same run;
//   - the worst waiter's overtakes: how many that arrived later got the name
//     before it (served strictly in arrival order: 0);
//   - the hand-off delay, release to the next acquisition (the contention
//     section measures it with 8 processes taking turns).
// The waiters' leases are 6 s, so their places' leases (the default, the
// lock's lease) are 6 s too, renewed every 2 s: the upkeep of a line of
// short-leased jobs.
#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include "bench_database.hpp"
#include "clock.hpp"
#include "sections.hpp"
#include "shared.hpp"
#include "stats.hpp"
#include "workers.hpp"

namespace sqlock_bench {
namespace {

using namespace std::chrono_literals;

constexpr int max_waiters = 256;

struct Ledger {
    std::atomic<int> next{0};     // acquisition sequence
    std::atomic<int> holders{0};  // > 1: a bug
    std::atomic<int> overlaps{0};
    std::atomic<std::int64_t> released_at{0};  // ns, just before release()
    int order[max_waiters];                    // order[seq] = arrival index
    std::int64_t delay_ns[max_waiters];        // by seq, from the previous release
    std::int64_t called_ns[max_waiters];       // by arrival index: when lock() was called
};

struct QueueOutcome {
    double work_per_handoff = -1;          // < 0: not counted
    double upkeep_per_waiter_second = -1;  // < 0: not counted
    int worst_overtaken = 0;
    double worst_stray_ms = 0;  // the latest call after its planned arrival
    std::vector<double> delays_ms;
    int overlaps = 0;
};

// How long the upkeep of a full line is counted: three renewals of the
// waiters' places, and several of the servers' statistics flushes (once a
// second on PostgreSQL); in quick mode one renewal and a half.
constexpr auto waiter_lease = 6s;
double upkeep_seconds(const Options& options) {
    return options.quick ? 3.0 : 6.0;
}

// Waits until `n` waiters are in `name`'s line, bounded.
void wait_for_line(sqlock::Locker& observer, const std::string& name, int n) {
    const std::int64_t give_up =
        now_ns() + static_cast<std::int64_t>(n) * 10'000'000 + std::int64_t{120'000'000'000};
    while (observer.queue_length(name) < static_cast<std::size_t>(n)) {
        if (now_ns() > give_up)
            throw std::runtime_error("only " + std::to_string(observer.queue_length(name)) +
                                     " of " + std::to_string(n) +
                                     " waiters were in line after 120 s");
        sleep_ns(50'000'000);
    }
}

QueueOutcome line_up(const Context& ctx, const BenchDatabase& db, int n) {
    const double upkeep = upkeep_seconds(ctx.options);
    Shared<StartLine> line;
    Shared<Ledger> ledger;
    const std::string name = "bench-line";
    auto raw = db.raw();
    Workers children(n, [&](int i) {
        sqlock::Locker locker = db.open();
        // Connected before the start, 20 ms apart: hundreds of logins at
        // once would measure the server's authentication, not the line.
        sleep_ns(static_cast<std::int64_t>(i) * 20'000'000);
        locker.list("bench-warmup");
        // Not StartLine::arrive_and_wait(): its 0.1 ms naps, in hundreds of
        // processes, would take the CPU from the server they log in to.
        line->ready.fetch_add(1);
        std::int64_t start;
        while ((start = line->start_ns.load()) == 0) sleep_ns(5'000'000);
        const std::int64_t arrive = start + static_cast<std::int64_t>(i) * 10000000;
        if (arrive > now_ns()) sleep_ns(arrive - now_ns());
        sqlock::LockOptions o;
        o.expires = waiter_lease;
        o.wait = 10min;
        ledger->called_ns[i] = now_ns();
        sqlock::Lock lock = locker.lock(name, o);
        const std::int64_t got = now_ns();
        if (ledger->holders.fetch_add(1) != 0) ledger->overlaps.fetch_add(1);
        const int seq = ledger->next.fetch_add(1);
        ledger->order[seq] = i;
        ledger->delay_ns[seq] = got - ledger->released_at.load();
        sleep_ns(30'000'000);
        ledger->holders.fetch_sub(1);
        ledger->released_at.store(now_ns());
        lock.release();
    });
    // Held by the benchmark until every waiter is in line.
    sqlock::Locker holder = db.open();
    sqlock::LockOptions held_for;
    held_for.expires = 10min;
    sqlock::Lock held = holder.lock(name, held_for);
    children.start_together(*line, 50);
    wait_for_line(holder, name, n);
    // Counted where the server counts (not SQLite).
    const std::int64_t upkeep_before = raw->work_done();
    if (upkeep_before >= 0) sleep_ns(static_cast<std::int64_t>(upkeep * 1e9));
    const std::int64_t work_before = raw->work_done();
    ledger->released_at.store(now_ns());
    held.release();
    children.join();
    const std::int64_t work_after = raw->work_done();

    QueueOutcome out;
    if (upkeep_before >= 0 && work_before >= 0)
        out.upkeep_per_waiter_second =
            static_cast<double>(work_before - upkeep_before) / upkeep / n;
    out.overlaps = ledger->overlaps.load();
    const int served = ledger->next.load();
    if (served != n)
        throw std::runtime_error("only " + std::to_string(served) + " of " + std::to_string(n) +
                                 " waiters were served");
    // Overtaken: for each waiter, the later arrivals served before it. A
    // waiter arrives when it calls lock(), which on a loaded machine may be
    // later than planned: the planned order is not the order of the calls.
    std::vector<int> position(static_cast<std::size_t>(n));
    for (int seq = 0; seq < n; ++seq) position[static_cast<std::size_t>(ledger->order[seq])] = seq;
    for (int i = 0; i < n; ++i) {
        int overtaken = 0;
        for (int j = 0; j < n; ++j)
            if (ledger->called_ns[j] > ledger->called_ns[i] &&
                position[static_cast<std::size_t>(j)] < position[static_cast<std::size_t>(i)])
                ++overtaken;
        out.worst_overtaken = std::max(out.worst_overtaken, overtaken);
    }
    // How far the calls strayed from the plan: a stray of more than the
    // 10 ms between arrivals reorders them.
    for (int i = 0; i < n; ++i)
        out.worst_stray_ms = std::max(
            out.worst_stray_ms, (ledger->called_ns[i] - ledger->called_ns[0]) / 1e6 - 10.0 * i);
    for (int seq = 0; seq < n; ++seq) out.delays_ms.push_back(ledger->delay_ns[seq] / 1e6);
    if (work_before >= 0 && work_after >= 0)
        out.work_per_handoff = static_cast<double>(work_after - work_before) / n;
    return out;
}

}  // namespace

void bench_queue(Context& ctx, const BackendTarget& target) {
    const std::vector<int> sizes =
        ctx.options.quick ? std::vector<int>{8, 16} : std::vector<int>{8, 64, 256};
    std::vector<std::pair<int, QueueOutcome>> runs;
    for (int n : sizes) {
        BenchDatabase db(target, "queue");
        runs.emplace_back(n, line_up(ctx, db, n));
        if (runs.back().second.overlaps)
            throw std::runtime_error("mutual exclusion violated: two holders at once");
    }
    const QueueOutcome& base = runs.front().second;
    const std::string unit = target.hooks().work_unit;
    for (const auto& [n, o] : runs) {
        const std::string who = std::to_string(n) + " waiters 10 ms apart, 30 ms each";
        if (o.upkeep_per_waiter_second >= 0) {
            Result upkeep = make_row("queue", target,
                                     unit + "/s per waiting process while held, " +
                                         std::to_string(n) + " waiters (6 s leases)",
                                     unit + "/s");
            upkeep.sqlock = o.upkeep_per_waiter_second;
            upkeep.baseline = base.upkeep_per_waiter_second;
            upkeep.baseline_name = "the same at " + std::to_string(runs.front().first) + " waiters";
            upkeep.note = "the places' renewals and the waiters' looks, over " +
                          format_value(upkeep_seconds(ctx.options), "s") +
                          " with every waiter in line";
            ctx.report.add(upkeep);
        }
        if (o.work_per_handoff >= 0) {
            Result work = make_row("queue", target, unit + " per hand-off, " + who, unit);
            work.sqlock = o.work_per_handoff;
            work.baseline = base.work_per_handoff;
            work.baseline_name = "the same at " + std::to_string(runs.front().first) + " waiters";
            if (n != runs.front().first) work.goal = Goal::ratio_at_most(1.5);
            ctx.report.add(work);
        }
        Result fair = make_row("queue", target, "worst waiter overtaken, " + who, "waiters");
        fair.sqlock = o.worst_overtaken;
        fair.goal = Goal::below(1.5);  // at most one later arrival
        fair.note = "hand-off p50 " + format_value(median(o.delays_ms), "ms") + ", p99 " +
                    format_value(percentile(o.delays_ms, 99), "ms") + "; arrivals up to " +
                    format_value(o.worst_stray_ms, "ms") + " late";
        ctx.report.add(fair);
    }
}

}  // namespace sqlock_bench
