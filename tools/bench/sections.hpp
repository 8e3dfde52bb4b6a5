// The benchmark's sections, one per file. Each measures sqlock and its
// baseline in the same run on one backend and adds rows to the report; a
// section throws on an error (the caller records it and goes on).
#pragma once

#include <string>

#include "options.hpp"
#include "rates.hpp"
#include "raw_client.hpp"
#include "report.hpp"
#include "target.hpp"

namespace sqlock_bench {

struct Context {
    const Options& options;
    const Scale& scale;
    Report& report;
    std::string scratch_dir;  // private to this run, removed at the end
};

/// A row of `section` for `target`, to be filled in.
Result make_row(const char* section, const BackendTarget& target, std::string operation,
                std::string unit);

/// A cycles/s row of `comparison` (its first side as sqlock's, its second
/// as the baseline's), with no target.
Result comparison_row(const char* section, const BackendTarget& target, std::string operation,
                      const Comparison& comparison, std::string baseline_name, std::string note);

/// 1. One client: acquire+release cycles/s against the raw C API.
void bench_uncontended(Context& ctx, const BackendTarget& target);
/// 2. Eight processes on distinct names: total cycles/s against the raw C API.
void bench_parallel(Context& ctx, const BackendTarget& target);
/// 3. Eight waiting processes on one name: hand-offs/s and release-to-acquire
///    delay, against waiters polling try_lock every 100 ms.
void bench_contention(Context& ctx, const BackendTarget& target);
void bench_queue(Context& ctx, const BackendTarget& target);
/// 4a. Acquire+release with 10^4 and 10^6 other rows, against 10 other rows.
void bench_growth(Context& ctx, const BackendTarget& target);
/// 4b. Semaphore acquisition with most of 1, 10, 100 slots taken, against a
///     one-statement raw slot acquisition.
void bench_semaphore(Context& ctx, const BackendTarget& target);
/// 4c. Lock sets of 1, 10, 100 names against the names one by one, and a
///     set of 10 against one lock.
void bench_sets(Context& ctx, const BackendTarget& target);
/// 4d. A write transaction guarded by a held lock against the same unguarded.
void bench_guard(Context& ctx, const BackendTarget& target);
/// 5. purge_expired() of 10^6 rows and the worst acquire latency meanwhile.
void bench_reaper(Context& ctx, const BackendTarget& target);
/// 6. `sqlock run NAME -- true` against `flock -n FILE true` and `true`:
///    wall time, and peak RSS against flock's (SQLite default database only).
void bench_command(Context& ctx, const BackendTarget& target);
/// 7. RSS of a process holding 10^4 locks.
void bench_memory(Context& ctx, const BackendTarget& target);
/// 8. Leader election: a resignation and a crash to the standby leading, and
///    to a watcher reporting it.
void bench_leader(Context& ctx, const BackendTarget& target);

}  // namespace sqlock_bench
