// 7. Memory: what holding 10^4 locks costs a process (its RSS before and
// after acquiring them, measured in a worker process so that nothing else the
// benchmark did is counted). The command's peak RSS is in the command
// section, from the same runs as its wall time.
#include <sys/resource.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "bench_database.hpp"
#include "child_command.hpp"
#include "clock.hpp"
#include "sections.hpp"
#include "shared.hpp"
#include "workers.hpp"

namespace sqlock_bench {
namespace {

struct Footprint {
    std::atomic<long> before_kib{0};
    std::atomic<long> after_kib{0};
    std::atomic<long> peak_kib{0};
    std::atomic<std::int64_t> acquire_ns{0};
    std::atomic<std::int64_t> release_ns{0};
};

void held_locks_rss(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "memory");
    const int n = ctx.scale.held_locks;
    Shared<Footprint> fp;
    Workers holder(1, [&](int) {
        sqlock::Locker locker = db.open();
        locker.try_lock("bench-memory-warmup")->release();  // connect: part of "before"
        fp->before_kib = current_rss_kib();
        std::vector<sqlock::Lock> held;
        std::int64_t start = now_ns();
        for (int i = 0; i < n; ++i) {
            auto lock = locker.try_lock("bench-held-" + std::to_string(i));
            if (!lock) throw std::runtime_error("a fresh name was found held");
            held.push_back(std::move(*lock));
        }
        fp->acquire_ns = now_ns() - start;
        fp->after_kib = current_rss_kib();
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        fp->peak_kib = usage.ru_maxrss;
        start = now_ns();
        held.clear();  // releases every lock
        fp->release_ns = now_ns() - start;
    });
    holder.join();

    const double per_lock = (fp->after_kib - fp->before_kib) * 1024.0 / n;
    Result row =
        make_row("memory", target, "RSS of a process holding " + count_text(n) + " locks", "MiB");
    row.sqlock = fp->after_kib / 1024.0;
    row.baseline = fp->before_kib / 1024.0;
    row.baseline_name = "same process before acquiring";
    row.note = "+" + std::to_string(static_cast<long>(per_lock)) + " bytes per held lock; peak " +
               format_value(fp->peak_kib / 1024.0, "MiB") + "; acquiring took " +
               format_value(fp->acquire_ns / 1e9, "s") + ", releasing " +
               format_value(fp->release_ns / 1e9, "s");
    ctx.report.add(row);
}

}  // namespace

void bench_memory(Context& ctx, const BackendTarget& target) {
    held_locks_rss(ctx, target);
}

}  // namespace sqlock_bench
