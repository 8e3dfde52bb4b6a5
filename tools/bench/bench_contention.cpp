// 3. Contention: eight processes want one name. Each takes it, works for
// 1 ms (a sleep: without any work the lock is almost always free and nobody
// waits), stamps the time it lets go on a shared page, releases, and queues
// again once somebody else got it. The next holder reads the stamp right
// after its acquisition returns: that difference is the hand-off delay
// (CLOCK_MONOTONIC is one clock for all processes of the machine). The stamp
// is taken just before release() is called, so the delay includes the
// release's own round trip.
//
// sqlock waits with lock(name, {.wait}) (PostgreSQL: LISTEN/NOTIFY wake-ups;
// SQLite: backoff polling); the baseline polls try_lock() every 100 ms.
#include <atomic>
#include <functional>
#include <optional>
#include <random>
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

// The shared page. Only the lock's holder writes the release fields, so the
// lock itself orders the writes; `holders` double-checks mutual exclusion.
struct Baton {
    std::atomic<std::int64_t> released_at{0};  // ns, set just before release()
    std::atomic<int> released_by{-1};          // worker index
    std::atomic<std::int64_t> acquisitions{0};
    std::atomic<int> holders{0};
    std::atomic<int> overlaps{0};  // an acquisition while another held it: a bug
};

constexpr std::size_t max_samples = 200'000;  // per worker

struct Samples {
    std::atomic<std::int64_t> count{0};
    std::int64_t delay_ns[max_samples];
};

struct Outcome {
    double handoffs_per_second = 0;
    std::vector<double> delays_ms;
    int overlaps = 0;
};

// How a worker gets the lock: blocks until it holds it.
using Acquire = std::function<sqlock::Lock(sqlock::Locker&, const std::string&)>;

Outcome contend(const BenchDatabase& db, int workers, double seconds, std::int64_t hold_ns,
                const Acquire& acquire) {
    Shared<StartLine> line;
    Shared<Baton> baton;
    Shared<Samples> samples(static_cast<std::size_t>(workers));
    const std::string name = "bench-contended";
    const auto duration = static_cast<std::int64_t>(seconds * 1e9);

    Workers children(workers, [&](int i) {
        sqlock::Locker locker = db.open();
        // Warm up: connect, and on PostgreSQL start the listener, with a
        // name of our own.
        acquire(locker, "bench-warmup-" + std::to_string(i)).release();
        Samples& mine = samples[static_cast<std::size_t>(i)];
        const std::int64_t start = line->arrive_and_wait();
        const std::int64_t end = start + duration;
        while (now_ns() < end) {
            sqlock::Lock lock = acquire(locker, name);
            const std::int64_t got = now_ns();
            if (baton->holders.fetch_add(1) != 0) baton->overlaps.fetch_add(1);
            const int previous = baton->released_by.load();
            const std::int64_t released_at = baton->released_at.load();
            const std::int64_t seq = ++baton->acquisitions;
            // Only hand-offs between two processes inside the window count.
            if (previous >= 0 && previous != i && got < end) {
                std::int64_t k = mine.count.load();
                if (k < static_cast<std::int64_t>(max_samples)) {
                    mine.delay_ns[k] = got - released_at;
                    mine.count.store(k + 1);
                }
            }
            sleep_ns(hold_ns);  // the protected work; waiters really wait meanwhile
            baton->holders.fetch_sub(1);
            baton->released_by.store(i);
            baton->released_at.store(now_ns());
            lock.release();
            // Queue again only once another process got it: otherwise the
            // releaser, which needs no wake-up, would win most rounds.
            while (baton->acquisitions.load() == seq && now_ns() < end) sleep_ns(200'000);
        }
    });
    children.start_together(*line, 20);
    children.join();

    Outcome out;
    std::int64_t handoffs = 0;
    for (std::size_t w = 0; w < samples.size(); ++w) {
        const std::int64_t k = samples[w].count.load();
        handoffs += k;
        for (std::int64_t j = 0; j < k; ++j) out.delays_ms.push_back(samples[w].delay_ns[j] / 1e6);
    }
    out.handoffs_per_second = static_cast<double>(handoffs) / seconds;
    out.overlaps = baton->overlaps.load();
    return out;
}

}  // namespace

void bench_contention(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "contention");
    const int n = ctx.scale.contenders;
    const double seconds = ctx.scale.contention_seconds;
    const auto poll =
        std::chrono::microseconds(static_cast<std::int64_t>(ctx.scale.poll_interval_ms * 1000));

    sqlock::LockOptions options;
    options.expires = 60s;
    options.wait = 60s;
    Acquire waiting = [options](sqlock::Locker& locker, const std::string& name) {
        return locker.lock(name, options);
    };
    // Peers that started at independent times poll at independent phases:
    // the first retry comes after a random part of the interval. Without
    // that, this benchmark's own rhythm would put the pollers in lockstep
    // and every hand-off would take nearly the whole interval.
    const auto interval = std::chrono::duration_cast<std::chrono::nanoseconds>(poll).count();
    Acquire polling = [options, interval](sqlock::Locker& locker, const std::string& name) {
        std::mt19937_64 phase(std::random_device{}());
        std::int64_t pause = std::uniform_int_distribution<std::int64_t>(0, interval)(phase);
        for (;;) {
            if (auto lock = locker.try_lock(name, options)) return std::move(*lock);
            sleep_ns(pause);
            pause = interval;
        }
    };
    const std::int64_t hold = ms_to_ns(ctx.scale.contention_hold_ms);
    Outcome s = contend(db, n, seconds, hold, waiting);
    Outcome p = contend(db, n, seconds, hold, polling);
    if (s.overlaps || p.overlaps)
        throw std::runtime_error(
            "mutual exclusion violated: " + std::to_string(s.overlaps + p.overlaps) +
            " acquisitions while another process held the lock");

    const std::string who = std::to_string(n) + " waiting processes, one name";
    const std::string polled =
        "try_lock every " + std::to_string(static_cast<int>(ctx.scale.poll_interval_ms)) + " ms";
    Result rate = make_row("contention", target, "hand-offs, " + who, "hand-offs/s");
    rate.sqlock = s.handoffs_per_second;
    rate.baseline = p.handoffs_per_second;
    rate.baseline_name = polled;
    rate.note = "each holder works " + format_value(ctx.scale.contention_hold_ms, "ms") + "; " +
                std::to_string(s.delays_ms.size()) + " hand-offs with lock(.wait), " +
                std::to_string(p.delays_ms.size()) + " polling, in " + format_value(seconds, "s") +
                " each; never two holders at once";
    ctx.report.add(rate);

    Result p50 = make_row("contention", target, "release->acquire delay p50, " + who, "ms");
    p50.sqlock = median(s.delays_ms);
    p50.baseline = median(p.delays_ms);
    p50.baseline_name = polled;
    if (const auto goal = target.hooks().contention_p50_goal_ms) p50.goal = Goal::below(*goal);
    ctx.report.add(p50);

    Result p99 = make_row("contention", target, "release->acquire delay p99, " + who, "ms");
    p99.sqlock = percentile(s.delays_ms, 99);
    p99.baseline = percentile(p.delays_ms, 99);
    p99.baseline_name = polled;
    p99.note = "max " + format_value(maximum(s.delays_ms), "ms") +
               " (polling: " + format_value(maximum(p.delays_ms), "ms") + ")";
    ctx.report.add(p99);
}

}  // namespace sqlock_bench
