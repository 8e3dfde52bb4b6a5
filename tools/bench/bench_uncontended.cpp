// 1. Uncontended: one client takes and releases one name as fast as it can,
// sqlock and the raw client alternating on the same table. On PostgreSQL,
// also the pooled path against the direct one: unnamed statements, and with
// --pg-pooled-url the way through PgBouncer in transaction mode.
#include <stdexcept>

#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"

namespace sqlock_bench {
namespace {

// sqlock on `url` against sqlock on the direct connection, same table.
void against_direct(Context& ctx, const BackendTarget& target, const BenchDatabase& db,
                    sqlock::Locker& direct, const std::string& url, std::string operation,
                    std::string note) {
    sqlock::LockerOptions options;
    options.table = db.table();
    options.auto_init = sqlock::LockerOptions::auto_init_mode::never;
    sqlock::Locker other(url, options);
    const std::string name = "bench-" + operation;
    auto cycle = [&](sqlock::Locker& locker) {
        auto lock = locker.try_lock(name);
        if (!lock) throw std::runtime_error("uncontended lock found held");
        lock->release();
    };
    Comparison c = compare_rates([&] { cycle(other); }, [&] { cycle(direct); }, ctx.scale.rounds,
                                 ctx.scale.round_seconds);
    Result row = make_row("uncontended", target, std::move(operation), "cycles/s");
    row.sqlock = c.a;
    row.baseline = c.b;
    row.baseline_name = "sqlock direct";
    row.paired_ratio = c.ratio;
    row.goal = Goal::none();
    row.note = std::move(note);
    ctx.report.add(row);
}

// The pooled path's two costs apart: unnamed statements on the direct
// connection (parsed every time), then the pooler's hop as well.
void pooled_rows(Context& ctx, const BackendTarget& target, const BenchDatabase& db,
                 sqlock::Locker& direct) {
    const std::string& url = target.location;
    against_direct(ctx, target, db, direct,
                   url + (url.find('?') == std::string::npos ? "?" : "&") + "pooler=transaction",
                   "acquire+release, 1 client, unnamed statements",
                   "the direct connection with pooler=transaction (statements sent unnamed, "
                   "as through a transaction pooler) vs prepared statements");
    if (!ctx.options.pg_pooled_url.empty())
        against_direct(ctx, target, db, direct, ctx.options.pg_pooled_url,
                       "acquire+release, 1 client, via PgBouncer",
                       "through PgBouncer in transaction mode (unnamed statements and the "
                       "pooler's hop) vs the direct connection");
}

// What each of sqlock's guarantees costs alone on MariaDB: the raw client
// with one layer of sqlock's acquire added at a time, each against the raw
// prepared statements in the same run.
void layered_rows(Context& ctx, const BackendTarget& target, RawClient& raw) {
    using layer = RawClient::layer;
    const std::string name = "bench-layers";
    Cycle plain = [&] {
        std::int64_t id = raw.try_acquire(name);
        if (!id) throw std::runtime_error("uncontended raw lock found held");
        raw.release(id);
    };
    const struct {
        layer up_to;
        const char* what;
    } layers[] = {
        {layer::text, "raw + text statements (literals, not prepared)"},
        {layer::batch, "raw + one batch: insert, row read"},
        {layer::turn, "raw + batch + the GET_LOCK turn"},
        {layer::queue_gate, "raw + batch + turn + the queue gate"},
    };
    for (const auto& l : layers) {
        Cycle with = [&, up_to = l.up_to] {
            std::int64_t id = raw.try_acquire_with(up_to, name);
            if (!id) throw std::runtime_error("uncontended layered lock found held");
            raw.release(id);
        };
        Comparison c = compare_rates(with, plain, ctx.scale.rounds, ctx.scale.round_seconds);
        ctx.report.add(comparison_row(
            "uncontended", target, std::string("acquire+release, ") + l.what, c, "raw C API",
            "the cost of sqlock's guarantees one by one: not sqlock itself"));
    }
}

// The same for PostgreSQL: each of sqlock's guarantees added to the raw
// statements alone, one on top of the other, against the raw statements.
void pg_layered_rows(Context& ctx, const BackendTarget& target, RawClient& raw) {
    const std::string name = "bench-layers";
    Cycle plain = [&] {
        std::int64_t id = raw.try_acquire(name);
        if (!id) throw std::runtime_error("uncontended raw lock found held");
        raw.release(id);
    };
    for (const auto& l : pg_layers()) {
        Cycle with = [&, up_to = l.up_to] {
            if (!raw.cycle_with(up_to, name))
                throw std::runtime_error("uncontended layered lock found held");
        };
        Comparison c = compare_rates(with, plain, ctx.scale.rounds, ctx.scale.round_seconds);
        ctx.report.add(comparison_row(
            "uncontended", target, std::string("acquire+release, 1 client, ") + l.what, c,
            "raw C API", "the cost of sqlock's guarantees one by one: not sqlock itself"));
    }
}

}  // namespace

const std::vector<PgLayer>& pg_layers() {
    using layer = RawClient::pg_layer;
    static const std::vector<PgLayer> layers{
        {layer::take_over, "raw + take-over of an expired row"},
        {layer::turn, "raw + take-over + the name's turn"},
        {layer::queue_gate, "raw + take-over + turn + the queue gate"},
        {layer::wake_up, "raw + take-over + turn + gate + the release's wake-up"},
    };
    return layers;
}

void bench_uncontended(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "uncontended");
    sqlock::Locker locker = db.open();
    auto raw = db.raw();
    const std::string name = "bench-uncontended";

    Cycle with_sqlock = [&] {
        auto lock = locker.try_lock(name);
        if (!lock) throw std::runtime_error("uncontended lock found held");
        lock->release();
    };
    Cycle with_raw = [&] {
        std::int64_t id = raw->try_acquire(name);
        if (!id) throw std::runtime_error("uncontended raw lock found held");
        raw->release(id);
    };
    Comparison c = compare_rates(with_sqlock, with_raw, ctx.scale.rounds, ctx.scale.round_seconds);

    Result row = make_row("uncontended", target, "acquire+release, 1 client", "cycles/s");
    row.sqlock = c.a;
    row.baseline = c.b;
    row.baseline_name = "raw C API";
    row.paired_ratio = c.ratio;
    row.goal = Goal::ratio_at_least(0.9);
    const char* raw_statements = target.kind == backend_kind::mariadb
                                     ? "INSERT IGNORE (insert id) + DELETE"
                                     : "INSERT ... RETURNING id + DELETE";
    row.note = std::string("try_lock()+release() vs ") + raw_statements + "; medians of " +
               std::to_string(ctx.scale.rounds) + " alternating rounds of " +
               format_value(ctx.scale.round_seconds, "s") + " each";
    ctx.report.add(row);
    if (target.kind == backend_kind::postgresql) {
        pooled_rows(ctx, target, db, locker);
        pg_layered_rows(ctx, target, *raw);
    }
    if (target.kind == backend_kind::mariadb) layered_rows(ctx, target, *raw);
}

}  // namespace sqlock_bench
