#include "postgres_connection.hpp"

#include <algorithm>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>
#include <string>
#include <vector>

#include "postgres_error.hpp"
#include "postgres_statements.hpp"
#include "postgres_watchdog.hpp"
#include "sqlock/error.hpp"
#include "utc_time.hpp"

namespace sqlock::detail::postgres {
namespace {

// A lock row from `columns` starting at `first` (see postgres_statements.hpp).
Row read_row(const pqxx::row& r, pqxx::row::size_type first) {
    Row row;
    row.id = r[first].as<std::int64_t>();
    row.lockstring = r[first + 1].as<std::string>();
    row.created = r[first + 2].as<std::string>();
    row.expires = r[first + 3].as<std::string>();
    row.locked_by = r[first + 4].as<std::string>();
    row.seconds_left = r[first + 5].as<double>();
    return row;
}

std::int64_t millis(duration d) {
    return static_cast<std::int64_t>(d.count());
}

// Our new row, from its id and created (ms) as the server gave them: the
// rest is what we sent, and expires is created + lease exactly (now() +
// the lease on the server), as the other statements would show it.
Row new_row(std::int64_t id, std::string lockstring, std::int64_t created_ms, duration lease,
            const std::string& locked_by) {
    Row row;
    row.id = id;
    row.lockstring = std::move(lockstring);
    row.created = utc_text(created_ms);
    row.expires = utc_text(created_ms + millis(lease));
    row.locked_by = locked_by;
    row.seconds_left = static_cast<double>(millis(lease)) / 1000.0;
    return row;
}

// A run from the columns listed in postgres_statements.hpp.
RunRecord read_run(const pqxx::row& r) {
    RunRecord run;
    run.id = r[0].as<std::int64_t>();
    run.name = r[1].as<std::string>();
    if (!r[2].is_null()) run.window_start = r[2].as<std::string>();
    run.host = r[3].as<std::string>();
    run.pid = r[4].as<std::int64_t>();
    run.user = r[5].as<std::string>();
    run.program = r[6].as<std::string>();
    run.fencing_id = r[7].as<std::int64_t>();
    run.started = r[8].as<std::string>();
    if (!r[9].is_null()) run.ended = r[9].as<std::string>();
    run.outcome = parse_run_outcome(r[10].as<std::string>()).value_or(run_outcome::lost);
    if (!r[11].is_null()) run.exit_status = r[11].as<int>();
    if (!r[12].is_null()) run.signal = r[12].as<int>();
    if (!r[13].is_null()) run.duration_seconds = r[13].as<double>();
    return run;
}

std::vector<RunRecord> read_runs(const pqxx::result& r) {
    std::vector<RunRecord> runs;
    runs.reserve(r.size());
    for (const auto& row : r) runs.push_back(read_run(row));
    return runs;
}

// A pause from the columns listed in postgres_statements.hpp.
PauseInfo read_pause(const pqxx::row& r) {
    PauseInfo p;
    p.name = r[0].as<std::string>();
    p.paused_by = r[1].as<std::string>();
    p.reason = r[2].as<std::string>();
    p.created = r[3].as<std::string>();
    if (!r[4].is_null()) p.until = r[4].as<std::string>();
    return p;
}

// A century, in milliseconds: "since" for all runs.
constexpr std::int64_t all_time_ms = 36600LL * 86400 * 1000;

}  // namespace

PgConnection::PgConnection(std::shared_ptr<const PgTarget> target)
    : target_(std::move(target)),
      link_(*target_),
      statements_(statements(*target_)),
      acquire_{&statements_.at(stmt::acquire), PqFormat::binary},
      acquire_slot_{&statements_.at(stmt::acquire_slot), PqFormat::binary},
      delete_exact_{&statements_.at(stmt::delete_exact)} {
    // Only registers the definitions; libpqxx prepares each on first use.
    // The hot path's go through libpq and are prepared there (exec_direct).
    for (const auto& [key, st] : statements_)
        if (&st != acquire_.st && &st != acquire_slot_.st && &st != delete_exact_.st)
            link_.get().prepare(st.name, st.sql);
}

namespace {

// What a session we prepare statements on runs first, with the first hot
// statement's PREPARE (no round trip of its own: `sqlock run` connects
// anew for every lock). A lock table holds few live rows and turns over
// many. Empty after a vacuum, or with a primary key grown large by
// ever-growing ids, it makes the planner find "WHERE id = $1" by reading the
// whole table, dead rows included, on every release and renewal (measured
// with 8 processes: 9% of our throughput on a table vacuumed empty; on a
// long-used one, a client without this made a third of our cycles;
// docs/postgres-production.md). Every statement that looks up rows has an
// index to use, so we tell the planner to take it; the few that read a
// whole table (counts for metrics) then read it through an index, somewhat
// slower. Only where statements are prepared, i.e. not through a
// transaction pooler: a SET would stay on a server session that other
// clients get next (one the URL does not name gets it until a symptom gives
// the pooler away; sqlock doctor reports such a pooler).
constexpr const char* session_setup = "SET enable_seqscan = off";

// What a pooler in transaction mode does to prepared statements: the server
// session we prepared on has gone to another client (26000, "does not
// exist"), or we were given one where it is already prepared (42P05). Either
// way the statement did not run, so it is safe to send it again unnamed.
bool pooling_symptom(const pqxx::sql_error& e) {
    return e.sqlstate() == "26000" || e.sqlstate() == "42P05";
}

}  // namespace

template <typename F>
auto PgConnection::bounded(const char* doing, const std::string& subject, F&& f, bool watchdog)
    -> decltype(f()) {
    const auto now = clock::now();
    limit_ = PqDeadline{std::min(deadline_, now + target_->timeout)};
    Armed armed(watchdog ? link_.get().sock() : -1, limit_.at);
    try {
        return guarded(*target_, doing, subject, std::forward<F>(f));
    } catch (const error& e) {
        if (!armed.fired() && !limit_.passed) throw;
        const auto waited = std::chrono::duration_cast<duration>(clock::now() - now);
        throw error(errc::connection,
                    target_->redact("no answer from PostgreSQL within " + format_duration(waited) +
                                    " while " + describe(doing, subject) +
                                    "; abandoned the connection [" + target_->redact.url() + "]"),
                    e.backend_code());
    }
}

template <typename Prepared, typename Unnamed>
auto PgConnection::send(const char* doing, const std::string& subject, Prepared&& prepared,
                        Unnamed&& unnamed, bool watchdog) -> decltype(unnamed()) {
    return bounded(
        doing, subject,
        [&] {
            try {
                if (target_->session_bound()) {
                    try {
                        return prepared();
                    } catch (const pqxx::sql_error& e) {
                        if (!pooling_symptom(e)) throw;
                        target_->note_transaction_pooling();
                    }
                }
                return unnamed();
            } catch (const pqxx::sql_error& e) {
                // A standby refuses our advisory lock (55000) or our writes
                // (25006): say "read-only" whichever came first.
                if ((e.sqlstate() == "55000" || e.sqlstate() == "25006") && read_only())
                    throw pqxx::sql_error(e.what(), e.query(), "25006");
                throw;
            }
        },
        watchdog);
}

template <typename... Args>
pqxx::result PgConnection::exec(const char* doing, const std::string& subject,
                                const char* statement, Args&&... args) {
    const Statement& st = statements_.at(statement);
    return send(
        doing, subject,
        [&] {
            pqxx::nontransaction tx(link_.get());
            return tx.exec_prepared(st.name, args...);
        },
        [&] {
            pqxx::nontransaction tx(link_.get());
            return tx.exec_params(st.sql, std::forward<Args>(args)...);
        });
}

PqResult PgConnection::exec_direct(const char* doing, const std::string& subject, HotStatement& hot,
                                   PqParams params) {
    PGconn* conn = link_.raw();
    return send(
        doing, subject,
        [&] {
            if (!hot.prepared) {
                pq_prepare(conn, hot.st->name, hot.st->sql, limit_,
                           session_set_up_ ? nullptr : session_setup);
                hot.prepared = session_set_up_ = true;
            }
            return pq_exec_prepared(conn, hot.st->name, hot.st->sql, params, limit_, hot.format);
        },
        [&] { return pq_exec_params(conn, hot.st->sql, params, limit_, hot.format); },
        /*watchdog=*/false);
}

bool PgConnection::read_only() {
    static const char* const sql =
        "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'";
    // On the error path of the hot path too, which runs without the
    // watchdog: armed here, by the failed statement's limit.
    Armed armed(link_.get().sock(), limit_.at);
    try {
        pqxx::nontransaction tx(link_.get());
        pqxx::result r = tx.exec(sql);
        return r[0][0].as<bool>();
    } catch (const pqxx::failure&) {
        if (armed.fired()) limit_.passed = true;
        return false;  // the original error stands
    }
}

void PgConnection::init_schema() {
    bounded("creating the lock table", {}, [&] {
        // Nothing to do (and no CREATE privilege needed) when it all exists:
        // CREATE ... IF NOT EXISTS checks privileges before existence.
        bool exists;
        {
            pqxx::nontransaction check(link_.get());
            pqxx::result r =
                check.exec_params(schema_exists_sql, target_->quoted_table, target_->index_regclass,
                                  target_->quoted_runs, target_->quoted_pauses);
            exists = r[0][0].as<bool>();
        }
        if (exists) return;
        // Concurrent CREATE TABLE IF NOT EXISTS of one table can still fail
        // on the catalog's unique indexes; an advisory lock serialises us.
        // One simple query of several statements runs as one transaction,
        // without BEGIN/COMMIT, which a pooler in statement mode refuses.
        pqxx::nontransaction tx(link_.get());
        tx.exec("SELECT pg_advisory_xact_lock(hashtext(" +
                tx.quote("sqlock init " + target_->table) + "));\n" + schema_script(*target_));
    });
}

void PgConnection::check_access() {
    std::vector<std::string> missing, missing_runs, missing_pauses;
    bounded("checking the privileges on the lock table", {}, [&] {
        // What a role needs besides CREATE: see docs/SECURITY.md. A table
        // without a serial id (made by another program) needs no sequence.
        pqxx::nontransaction check(link_.get());
        pqxx::result r = check.exec_params(
            "SELECT has_table_privilege($1::text::regclass, 'SELECT'), "
            "has_table_privilege($1::text::regclass, 'INSERT'), "
            "has_table_privilege($1::text::regclass, 'UPDATE'), "
            "has_table_privilege($1::text::regclass, 'DELETE'), "
            "coalesce(has_sequence_privilege(pg_get_serial_sequence($1::text, 'id'), 'USAGE'), "
            "true), "
            "has_table_privilege($2::text::regclass, 'SELECT'), "
            "has_table_privilege($2::text::regclass, 'INSERT'), "
            "has_table_privilege($2::text::regclass, 'UPDATE'), "
            "has_table_privilege($2::text::regclass, 'DELETE'), "
            "coalesce(has_sequence_privilege(pg_get_serial_sequence($2::text, 'id'), 'USAGE'), "
            "true), "
            "has_table_privilege($3::text::regclass, 'SELECT'), "
            "has_table_privilege($3::text::regclass, 'INSERT'), "
            "has_table_privilege($3::text::regclass, 'UPDATE'), "
            "has_table_privilege($3::text::regclass, 'DELETE')",
            target_->quoted_table, target_->quoted_runs, target_->quoted_pauses);
        const char* table_privileges[] = {"SELECT", "INSERT", "UPDATE", "DELETE"};
        for (int i = 0; i < 4; ++i)
            if (!r[0][i].as<bool>()) missing.push_back(std::string(table_privileges[i]));
        if (!r[0][4].as<bool>()) missing.push_back("USAGE on its id sequence");
        // The run history beside it (`<table>_runs`) needs the same.
        for (int i = 0; i < 4; ++i)
            if (!r[0][5 + i].as<bool>()) missing_runs.push_back(table_privileges[i]);
        if (!r[0][9].as<bool>()) missing_runs.push_back("USAGE on its id sequence");
        // And the pauses table (no sequence).
        for (int i = 0; i < 4; ++i)
            if (!r[0][10 + i].as<bool>()) missing_pauses.push_back(table_privileges[i]);
        return 0;
    });
    if (missing.empty() && missing_runs.empty() && missing_pauses.empty()) return;
    auto joined = [](const std::vector<std::string>& items) {
        std::string list;
        for (std::size_t i = 0; i < items.size(); ++i)
            list += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
        return list;
    };
    std::string list = joined(missing);
    if (!missing_runs.empty())
        list += (list.empty() ? "" : "; and ") + joined(missing_runs) +
                " on its run history table " + target_->quoted_runs;
    if (!missing_pauses.empty())
        list += (list.empty() ? "" : "; and ") + joined(missing_pauses) + " on its pauses table " +
                target_->quoted_pauses;
    throw error(errc::configuration,
                target_->redact("lock table " + target_->table +
                                " exists, but this role may not use it: it lacks " + list +
                                " (a role needs SELECT, INSERT, UPDATE and DELETE on the table "
                                "and its run history and pauses tables, and USAGE on the id "
                                "sequences; "
                                "see docs/SECURITY.md) [" +
                                target_->redact.url() + "]"),
                "42501");
}

AcquireResult PgConnection::try_acquire(const std::string& lockstring, duration lease,
                                        const std::string& locked_by) {
    const std::string ms = std::to_string(millis(lease));
    const std::string key = turn_name(lockstring);
    PqResult r = exec_direct("acquiring lock", lockstring, acquire_,
                             {lockstring.c_str(), ms.c_str(), locked_by.c_str(), key.c_str()});
    AcquireResult out;
    if (!r.empty()) {
        out.acquired = new_row(r.binary_int64(0, 0), lockstring, r.binary_timestamp_ms(0, 1), lease,
                               locked_by);
        return out;
    }
    // Held. By whom, read now: nothing (or an expired row) when it was
    // released since, and the caller tries again.
    std::optional<Row> holder = find(lockstring);
    if (holder && holder->seconds_left > 0) out.holder = std::move(holder);
    return out;
}

AcquireResult PgConnection::try_acquire_slot(const std::string& name, int capacity, duration lease,
                                             const std::string& locked_by, int* slot_out) {
    const std::string cap = std::to_string(capacity);
    const std::string ms = std::to_string(millis(lease));
    // Each lost race means another caller took a slot, so this ends; the
    // bound only guards against slots being freed and retaken forever.
    for (int attempt = 0; attempt <= capacity; ++attempt) {
        PqResult r = exec_direct("acquiring a slot of semaphore", name, acquire_slot_,
                                 {name.c_str(), cap.c_str(), ms.c_str(), locked_by.c_str()});
        if (!r.empty()) {
            AcquireResult out;
            out.acquired = new_row(r.binary_int64(0, 0), r.text(0, 1), r.binary_timestamp_ms(0, 2),
                                   lease, locked_by);
            *slot_out = slot_number(out.acquired->lockstring, name, capacity);
            return out;
        }
        // Every slot held (the one that frees first), or the free one we
        // aimed at was taken concurrently (nothing): look again.
        pqxx::result h =
            exec("reading the slots of semaphore", name, stmt::slot_holder, name, capacity);
        if (!h.empty()) {
            AcquireResult out;
            out.holder = read_row(h[0], 0);
            return out;
        }
    }
    return {};
}

ReleaseOutcome PgConnection::release(std::int64_t id, const std::string& lockstring,
                                     const std::string& locked_by, duration min_hold) {
    // Without a minimum hold, the plain DELETE (+ NOTIFY) is cheaper than the
    // keep-or-delete statement (measured: about 5 us of a 60 us cycle).
    if (min_hold <= duration::zero())
        return delete_exact(id, lockstring, locked_by) ? ReleaseOutcome::released
                                                       : ReleaseOutcome::lost;
    pqxx::result r = exec("releasing lock id", std::to_string(id), stmt::release, id, locked_by,
                          millis(min_hold), turn_name(lockstring));
    if (r.empty()) return ReleaseOutcome::lost;
    return r[0][0].as<bool>() ? ReleaseOutcome::kept : ReleaseOutcome::released;
}

std::optional<Row> PgConnection::renew(std::int64_t id, const std::string& locked_by,
                                       duration lease) {
    pqxx::result r =
        exec("renewing lock id", std::to_string(id), stmt::renew, id, locked_by, millis(lease));
    if (r.empty()) return std::nullopt;
    return read_row(r[0], 0);
}

bool PgConnection::is_held(std::int64_t id, const std::string& locked_by) {
    return !exec("checking lock id", std::to_string(id), stmt::is_held, id, locked_by).empty();
}

std::size_t PgConnection::purge_expired_batch(std::size_t batch) {
    if (has_history()) {
        pqxx::result r = exec("purging expired locks", {}, stmt::purge_with_runs,
                              static_cast<std::int64_t>(batch));
        return static_cast<std::size_t>(r[0][0].as<std::int64_t>());
    }
    pqxx::result r =
        exec("purging expired locks", {}, stmt::purge, static_cast<std::int64_t>(batch));
    return static_cast<std::size_t>(r.affected_rows());
}

// Both side tables in one round trip: `sqlock run` needs both, and each
// lookup is a round trip on a connection that may be new. A table seen
// stays known (tables are never dropped); one not seen is looked for again.
void PgConnection::learn_side_tables() {
    const auto [runs, pauses] = bounded("looking for the history and pauses tables", {}, [&] {
        pqxx::nontransaction check(link_.get());
        const pqxx::result r =
            check.exec_params(side_tables_exist_sql, target_->quoted_runs, target_->quoted_pauses);
        return std::make_pair(r[0][0].as<bool>(), r[0][1].as<bool>());
    });
    history_known_ = history_known_ || runs;
    pauses_known_ = pauses_known_ || pauses;
}

bool PgConnection::has_history() {
    if (!history_known_) learn_side_tables();
    return history_known_;
}

std::int64_t PgConnection::now_millis() {
    return exec("reading the clock", {}, stmt::now_millis)[0][0].as<std::int64_t>();
}

std::int64_t PgConnection::start_run(const std::string& name, std::int64_t fencing_id,
                                     const RunStart& info, const std::string& window_start) {
    pqxx::result r = exec("recording the start of a run of", name, stmt::start_run, name,
                          window_start, info.host, info.pid, info.user, info.program, fencing_id);
    return r[0][0].as<std::int64_t>();
}

std::optional<run_outcome> PgConnection::finish_run(std::int64_t run_id, std::int64_t fencing_id,
                                                    const std::string& locked_by,
                                                    const RunEnd& end) {
    pqxx::result r = exec("recording the end of run", std::to_string(run_id), stmt::finish_run,
                          run_id, fencing_id, locked_by, end.exit_status.value_or(-1),
                          end.signal.value_or(-1), std::string(to_string(end.outcome)));
    if (r.empty()) return std::nullopt;
    return parse_run_outcome(r[0][0].as<std::string>());
}

std::vector<RunRecord> PgConnection::window_runs(const std::string& name,
                                                 const std::string& window_start) {
    return read_runs(exec("reading the runs of", name, stmt::window_runs, name, window_start));
}

std::vector<RunRecord> PgConnection::history(const std::string& name, duration since,
                                             std::size_t limit) {
    const std::int64_t back = since > duration::zero() ? millis(since) : all_time_ms;
    const auto n = static_cast<std::int64_t>(limit);
    if (name.empty())
        return read_runs(exec("reading the run history", {}, stmt::history_all, back, n));
    return read_runs(exec("reading the run history of", name, stmt::history_name, back, n, name));
}

std::optional<RunRecord> PgConnection::last_success(const std::string& name) {
    auto runs = read_runs(exec("reading the last success of", name, stmt::last_success, name));
    if (runs.empty()) return std::nullopt;
    return std::move(runs.front());
}

std::vector<RunCount> PgConnection::run_counts() {
    pqxx::result r = exec("counting the runs", {}, stmt::run_counts);
    std::vector<RunCount> counts;
    for (const auto& row : r) {
        auto outcome = parse_run_outcome(row[1].as<std::string>());
        if (!outcome) continue;  // a value another program wrote
        counts.push_back({row[0].as<std::string>(), *outcome, row[2].as<std::int64_t>()});
    }
    return counts;
}

LockCounts PgConnection::lock_counts() {
    pqxx::result r = exec("counting the locks", {}, stmt::lock_counts);
    LockCounts counts;
    counts.held = r[0][0].as<std::int64_t>();
    counts.expired = r[0][1].as<std::int64_t>() - counts.held;
    return counts;
}

std::size_t PgConnection::prune_history_batch(duration retention, std::size_t batch) {
    pqxx::result r = exec("pruning the run history", {}, stmt::prune_runs, millis(retention),
                          static_cast<std::int64_t>(batch));
    return static_cast<std::size_t>(r.affected_rows());
}

std::size_t PgConnection::count_prunable_runs(duration retention) {
    pqxx::result r = exec("counting the runs to prune", {}, stmt::count_runs, millis(retention));
    return static_cast<std::size_t>(r[0][0].as<std::int64_t>());
}

bool PgConnection::has_pauses() {
    if (!pauses_known_) learn_side_tables();
    return pauses_known_;
}

PauseInfo PgConnection::pause(const std::string& name, const std::string& paused_by,
                              const std::string& reason, std::optional<duration> for_) {
    const std::int64_t ms = for_ ? millis(*for_) : -1;
    return read_pause(exec("pausing", name, stmt::pause, name, paused_by, reason, ms)[0]);
}

bool PgConnection::resume(const std::string& name) {
    pqxx::result r = exec("resuming", name, stmt::resume, name);
    return !r.empty() && r[0][0].as<bool>();
}

std::optional<PauseInfo> PgConnection::paused(const std::string& name) {
    pqxx::result r = exec("reading the pause of", name, stmt::paused, name);
    if (r.empty()) return std::nullopt;
    return read_pause(r[0]);
}

std::vector<PauseInfo> PgConnection::pauses() {
    pqxx::result r = exec("reading the pauses", {}, stmt::pauses);
    std::vector<PauseInfo> all;
    for (const auto& row : r) all.push_back(read_pause(row));
    return all;
}

std::size_t PgConnection::purge_expired_pauses_batch(std::size_t batch) {
    pqxx::result r =
        exec("deleting expired pauses", {}, stmt::purge_pauses, static_cast<std::int64_t>(batch));
    return static_cast<std::size_t>(r.affected_rows());
}

std::size_t PgConnection::count_expired_pauses() {
    pqxx::result r = exec("counting expired pauses", {}, stmt::count_pauses);
    return static_cast<std::size_t>(r[0][0].as<std::int64_t>());
}

std::vector<Row> PgConnection::list(const std::string& prefix, bool expired_only) {
    pqxx::result r = exec("listing locks", prefix, stmt::list, prefix, expired_only);
    std::vector<Row> rows;
    rows.reserve(r.size());
    for (const auto& row : r) rows.push_back(read_row(row, 0));
    return rows;
}

std::optional<Row> PgConnection::find(const std::string& lockstring) {
    pqxx::result r = exec("reading lock", lockstring, stmt::find, lockstring);
    if (r.empty()) return std::nullopt;
    return read_row(r[0], 0);
}

bool PgConnection::delete_exact(std::int64_t id, const std::string& lockstring,
                                const std::string& locked_by) {
    const std::string text = std::to_string(id);
    const std::string turn = turn_name(lockstring);
    return !exec_direct("deleting lock id", text, delete_exact_,
                        {text.c_str(), locked_by.c_str(), turn.c_str()})
                .empty();
}

}  // namespace sqlock::detail::postgres
