// 4a. Growth: does a lock cost more when the table holds many other locks?
// Three tables with 10, 10^4 and 10^6 live filler rows (bulk-loaded with raw
// SQL in one transaction), measured in rotating rounds.
#include <stdexcept>

#include "bench_database.hpp"
#include "clock.hpp"
#include "rates.hpp"
#include "sections.hpp"
#include "stats.hpp"

namespace sqlock_bench {

void bench_growth(Context& ctx, const BackendTarget& target) {
    const std::vector<std::int64_t> sizes{ctx.scale.small_rows, ctx.scale.mid_rows,
                                          ctx.scale.big_rows};
    std::vector<std::unique_ptr<BenchDatabase>> dbs;
    std::vector<std::unique_ptr<sqlock::Locker>> lockers;
    std::vector<Cycle> cycles;
    double load_seconds = 0;
    for (std::int64_t rows : sizes) {
        dbs.push_back(std::make_unique<BenchDatabase>(target, "growth" + std::to_string(rows)));
        const std::int64_t start = now_ns();
        dbs.back()->raw()->fill("filler-", 1, rows, /*expired=*/false);
        load_seconds += seconds_since(start);
        lockers.push_back(std::make_unique<sqlock::Locker>(dbs.back()->open()));
        sqlock::Locker* locker = lockers.back().get();
        cycles.push_back([locker] {
            auto lock = locker->try_lock("bench-growth");
            if (!lock) throw std::runtime_error("growth lock found held");
            lock->release();
        });
    }
    auto rates = rotate_rates(cycles, ctx.scale.growth_rounds, ctx.scale.growth_seconds);

    // Cost per cycle in microseconds; ratios per round against the small table.
    auto cost = [&](std::size_t k) {
        std::vector<double> us;
        for (double r : rates[k]) us.push_back(1e6 / r);
        return median(us);
    };
    for (std::size_t k = 1; k < sizes.size(); ++k) {
        std::vector<double> ratios;
        for (std::size_t r = 0; r < rates[k].size(); ++r)
            ratios.push_back(rates[0][r] / rates[k][r]);
        Result row = make_row("growth", target,
                              "acquire+release, " + count_text(sizes[k]) + " other rows", "us");
        row.sqlock = cost(k);
        row.baseline = cost(0);
        row.baseline_name = count_text(sizes[0]) + " other rows";
        row.paired_ratio = median(ratios);
        if (k + 1 == sizes.size()) row.goal = Goal::ratio_at_most(1.2);
        if (k + 1 == sizes.size())
            row.note = "cost per cycle, medians of " + std::to_string(ctx.scale.growth_rounds) +
                       " rotating rounds; bulk-loading the " +
                       std::to_string(sizes[0] + sizes[1] + sizes[2]) + " filler rows took " +
                       format_value(load_seconds, "s") +
                       (ctx.options.quick ? " (quick: 10^5 rows stand in for 10^6)" : "");
        ctx.report.add(row);
    }
}

}  // namespace sqlock_bench
