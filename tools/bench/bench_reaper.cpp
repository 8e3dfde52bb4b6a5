// 5. The reaper: purge_expired() deletes 10^6 expired rows in short batches
// while a probe process keeps taking and releasing a lock of its own and
// stamps the start and end of every cycle. The probe's worst cycle that
// overlaps the purge is what other clients suffer meanwhile. For comparison:
// the same rows deleted by one DELETE statement, and the probe's worst cycle
// while nothing else runs.
#include <unistd.h>

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

constexpr std::size_t max_cycles = 4'000'000;

struct Probe {
    std::atomic<int> stop{0};
    std::atomic<std::int64_t> count{0};
    struct Cycle {
        std::int64_t begin_ns;
        std::int64_t end_ns;
        bool failed;  // e.g. SQLITE_BUSY after the busy timeout
    } cycles[max_cycles];
};

struct Window {
    std::int64_t begin_ns = 0;
    std::int64_t end_ns = 0;
};

// Durations (ms) of the probe's cycles that overlap `w`, and how many failed.
std::vector<double> overlapping(Probe& p, Window w, int* failed) {
    std::vector<double> out;
    *failed = 0;
    for (std::int64_t i = 0; i < p.count.load(); ++i) {
        const Probe::Cycle& c = p.cycles[i];
        if (c.end_ns < w.begin_ns || c.begin_ns > w.end_ns) continue;
        out.push_back((c.end_ns - c.begin_ns) / 1e6);
        if (c.failed) ++*failed;
    }
    return out;
}

// Durations (ms) of the cycles entirely inside `w`.
std::vector<double> inside(Probe& p, Window w) {
    std::vector<double> out;
    for (std::int64_t i = 0; i < p.count.load(); ++i) {
        const Probe::Cycle& c = p.cycles[i];
        if (c.begin_ns >= w.begin_ns && c.end_ns <= w.end_ns)
            out.push_back((c.end_ns - c.begin_ns) / 1e6);
    }
    return out;
}

std::string failures(int n) {
    return n ? "; " + std::to_string(n) + " probe cycles FAILED (busy timeout)" : "";
}

}  // namespace

void bench_reaper(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "reaper");
    const std::int64_t rows = ctx.scale.reaper_rows;
    auto raw = db.raw();
    sqlock::Locker locker = db.open();
    raw->fill("expired-a-", 1, rows, /*expired=*/true);

    Shared<StartLine> line;
    Shared<Probe> probe;
    Workers prober(1, [&](int) {
        sqlock::Locker mine = db.open();
        std::string name = "bench-probe";
        int generation = 0;
        auto cycle = [&] {
            auto lock = mine.try_lock(name);
            if (!lock) throw std::runtime_error("probe lock found held");
            lock->release();
        };
        cycle();
        line->arrive_and_wait();
        while (!probe->stop.load()) {
            const std::int64_t t0 = now_ns();
            bool failed = false;
            try {
                cycle();
            } catch (const sqlock::error&) {
                failed = true;  // a stall past the busy timeout: counted, not fatal
                // The row may have stayed behind: go on with a fresh name.
                name = "bench-probe-" + std::to_string(++generation);
            }
            const std::int64_t k = probe->count.load();
            if (k == static_cast<std::int64_t>(max_cycles)) break;
            probe->cycles[k] = {t0, now_ns(), failed};
            probe->count.store(k + 1);
        }
    });
    prober.start_together(*line);
    const auto pause = [&](double seconds) { sleep_ns(static_cast<std::int64_t>(seconds * 1e9)); };

    // The bulk load above (and the sections before, on any backend) leave
    // hundreds of MB of dirty pages. Their writeback, while the probe
    // writes, stalled its cycles by 50-250 ms in both windows, idle or
    // purging alike (printing every cycle over 20 ms showed it). The
    // reaper's effect is measured from a flushed page cache, not on top of
    // the benchmark's own bulk load.
    ::sync();
    Window idle{now_ns(), 0};
    pause(ctx.scale.probe_idle_seconds);
    idle.end_ns = now_ns();

    Window purge{now_ns(), 0};
    const std::size_t purged = locker.purge_expired();
    purge.end_ns = now_ns();
    // The bulk load below holds the write lock for a second or more: a probe
    // cycle begun before the purge ended must finish first, or it would be
    // counted as a stall of the purge (it was, up to 2.3 s: the bimodal worst
    // case of earlier runs).
    pause(0.3);

    raw->fill("expired-b-", 1, rows, /*expired=*/true);
    pause(0.3);  // let the probe's cycle stalled by the bulk load finish first
    Window once{now_ns(), 0};
    const std::int64_t deleted = raw->purge_expired_at_once();
    once.end_ns = now_ns();
    pause(0.1);
    probe->stop = 1;
    prober.join();

    if (static_cast<std::int64_t>(purged) != rows || deleted != rows)
        throw std::runtime_error("reaper: expected " + std::to_string(rows) + " rows, purged " +
                                 std::to_string(purged) + " and deleted " +
                                 std::to_string(deleted));

    const double purge_seconds = (purge.end_ns - purge.begin_ns) / 1e9;
    const double once_seconds = (once.end_ns - once.begin_ns) / 1e9;
    const std::string quick = ctx.options.quick ? " (quick: 10^5 rows stand in for 10^6)" : "";
    int purge_failed = 0, once_failed = 0;
    auto idle_ms = inside(*probe, idle);
    auto purge_ms = overlapping(*probe, purge, &purge_failed);
    auto once_ms = overlapping(*probe, once, &once_failed);

    Result time =
        make_row("reaper", target, "purge_expired(), " + count_text(rows) + " expired rows", "s");
    time.sqlock = purge_seconds;
    time.baseline = once_seconds;
    time.baseline_name = "one DELETE statement";
    time.note = "batches of 1000; " + format_value(rows / purge_seconds, "rows/s") + quick;
    ctx.report.add(time);

    Result stall = make_row("reaper", target, "worst acquire+release while purging", "ms");
    stall.sqlock = maximum(purge_ms);
    stall.baseline = maximum(idle_ms);
    stall.baseline_name = "same client, idle table";
    stall.goal = Goal::below(50);
    stall.note =
        "a probe process cycling try_lock()+release(): " + std::to_string(purge_ms.size()) +
        " cycles overlapped the purge (p99 " + format_value(percentile(purge_ms, 99), "ms") +
        "), " + std::to_string(idle_ms.size()) + " while idle (p99 " +
        format_value(percentile(idle_ms, 99), "ms") + ")" + failures(purge_failed);
    ctx.report.add(stall);

    Result blocked =
        make_row("reaper", target, "worst acquire+release during one-statement DELETE", "ms");
    blocked.sqlock = maximum(once_ms);
    blocked.baseline = maximum(idle_ms);
    blocked.baseline_name = "same client, idle table";
    blocked.note = "why the reaper deletes in batches: " + std::to_string(once_ms.size()) +
                   " probe cycles overlapped the DELETE" + failures(once_failed);
    ctx.report.add(blocked);
}

}  // namespace sqlock_bench
