// 2. Parallel: eight processes, each taking and releasing its own name, so
// they compete only for the database (SQLite's single writer, PostgreSQL's
// backends and WAL), not for a lock.
#include <memory>
#include <stdexcept>

#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"
#include "stats.hpp"

namespace sqlock_bench {

void bench_parallel(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "parallel");
    const int n = ctx.scale.parallel_clients;
    const double seconds = ctx.scale.parallel_seconds;

    CycleFactory with_sqlock = [&](int i) -> Cycle {
        auto locker = std::make_shared<sqlock::Locker>(db.open());
        const std::string name = "bench-parallel-" + std::to_string(i);
        return [locker, name] {
            auto lock = locker->try_lock(name);
            if (!lock) throw std::runtime_error("a distinct name was found held");
            lock->release();
        };
    };
    CycleFactory with_raw = [&](int i) -> Cycle {
        std::shared_ptr<RawClient> raw = db.raw();
        const std::string name = "bench-parallel-raw-" + std::to_string(i);
        return [raw, name] {
            std::int64_t id = raw->try_acquire(name);
            if (!id) throw std::runtime_error("a distinct raw name was found held");
            raw->release(id);
        };
    };

    // Alternating rounds; each round forks fresh workers for each side.
    std::vector<double> a, b, ratios;
    for (int r = 0; r < ctx.scale.parallel_rounds; ++r) {
        double x, y;
        if (r % 2 == 0) {
            x = rate_in_processes(n, seconds, with_sqlock);
            y = rate_in_processes(n, seconds, with_raw);
        } else {
            y = rate_in_processes(n, seconds, with_raw);
            x = rate_in_processes(n, seconds, with_sqlock);
        }
        a.push_back(x);
        b.push_back(y);
        ratios.push_back(x / y);
    }

    Result row = make_row("parallel", target,
                          "acquire+release, " + std::to_string(n) + " processes, distinct names",
                          "cycles/s");
    row.sqlock = median(a);
    row.baseline = median(b);
    row.baseline_name = "raw C API, " + std::to_string(n) + " processes";
    row.paired_ratio = median(ratios);
    row.goal = Goal::ratio_at_least(0.9);
    row.note = "total over " + std::to_string(n) + " processes; medians of " +
               std::to_string(ctx.scale.parallel_rounds) + " alternating rounds of " +
               format_value(seconds, "s");
    ctx.report.add(row);
}

}  // namespace sqlock_bench
