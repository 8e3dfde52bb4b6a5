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

namespace {

// Each side's rates and their ratios, in alternating rounds; each round
// forks fresh workers for each side.
struct Paired {
    std::vector<double> a, b, ratios;
};

Paired alternate(Context& ctx, const CycleFactory& first, const CycleFactory& second) {
    const int n = ctx.scale.parallel_clients;
    const double seconds = ctx.scale.parallel_seconds;
    Paired p;
    for (int r = 0; r < ctx.scale.parallel_rounds; ++r) {
        double x, y;
        if (r % 2 == 0) {
            x = rate_in_processes(n, seconds, first);
            y = rate_in_processes(n, seconds, second);
        } else {
            y = rate_in_processes(n, seconds, second);
            x = rate_in_processes(n, seconds, first);
        }
        p.a.push_back(x);
        p.b.push_back(y);
        p.ratios.push_back(x / y);
    }
    return p;
}

void fill_paired(Result& row, const Paired& p) {
    row.sqlock = median(p.a);
    row.baseline = median(p.b);
    row.paired_ratio = median(p.ratios);
}

}  // namespace

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

    const std::string operation =
        "acquire+release, " + std::to_string(n) + " processes, distinct names";
    Result row = make_row("parallel", target, operation, "cycles/s");
    fill_paired(row, alternate(ctx, with_sqlock, with_raw));
    row.baseline_name = "raw C API, " + std::to_string(n) + " processes";
    row.goal = Goal::ratio_at_least(0.9);
    row.note = "total over " + std::to_string(n) + " processes; medians of " +
               std::to_string(ctx.scale.parallel_rounds) + " alternating rounds of " +
               format_value(seconds, "s");
    ctx.report.add(row);

    // Where the backend asks for it: what each of sqlock's guarantees costs
    // alone here, where the processes share the server's locks and buffers.
    // Not in quick mode (the uncontended section prices them on one client).
    const BenchHooks& hooks = target.hooks();
    if (!hooks.layers_in_parallel || ctx.options.quick) return;
    for (std::size_t up_to = 0; up_to < hooks.layers.size(); ++up_to) {
        CycleFactory layered = [&, up_to](int i) -> Cycle {
            std::shared_ptr<RawClient> raw = db.raw();
            const std::string name = "bench-parallel-layer-" + std::to_string(i);
            return [raw, name, up_to] {
                if (!raw->cycle_layer(up_to, name))
                    throw std::runtime_error("a distinct layered name was found held");
            };
        };
        Result layer =
            make_row("parallel", target, operation + ", " + hooks.layers[up_to], "cycles/s");
        fill_paired(layer, alternate(ctx, layered, with_raw));
        layer.baseline_name = "raw C API, " + std::to_string(n) + " processes";
        layer.goal = Goal::none();
        layer.note = "the cost of sqlock's guarantees one by one: not sqlock itself";
        ctx.report.add(layer);
    }
}

}  // namespace sqlock_bench
