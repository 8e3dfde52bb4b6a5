#include "postgres_connection.hpp"

#include <algorithm>
#include <chrono>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/utc_time.hpp"
#include "postgres_error.hpp"
#include "postgres_session.hpp"
#include "postgres_statements.hpp"
#include "postgres_watchdog.hpp"
#include "sqlock/error.hpp"

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

}  // namespace

PgConnection::PgConnection(std::shared_ptr<const PgTarget> target,
                           std::shared_ptr<const CoreStatements> core)
    : target_(std::move(target)),
      link_(*target_),
      statements_(statements(*target_)),
      core_(std::move(core)),
      acquire_{&statements_.at(stmt::acquire), PqFormat::binary},
      acquire_slot_{&statements_.at(stmt::acquire_slot), PqFormat::binary},
      acquire_gated_{&statements_.at(stmt::acquire_gated), PqFormat::binary},
      acquire_slot_gated_{&statements_.at(stmt::acquire_slot_gated), PqFormat::binary},
      acquire_queued_{&statements_.at(stmt::acquire_queued), PqFormat::binary},
      acquire_slot_queued_{&statements_.at(stmt::acquire_slot_queued), PqFormat::binary},
      delete_exact_{&statements_.at(stmt::delete_exact)},
      acquire_set_{&statements_.at(stmt::acquire_set), PqFormat::binary},
      acquire_set_queued_{&statements_.at(stmt::acquire_set_queued), PqFormat::binary} {
    // Only registers the definitions; libpqxx prepares each on first use.
    // The hot path's go through libpq and are prepared there (exec_direct).
    for (const auto& [key, st] : statements_)
        if (&st != acquire_.st && &st != acquire_slot_.st && &st != acquire_gated_.st &&
            &st != acquire_slot_gated_.st && &st != acquire_queued_.st &&
            &st != acquire_slot_queued_.st && &st != delete_exact_.st && &st != acquire_set_.st &&
            &st != acquire_set_queued_.st)
            link_.get().prepare(st.name, st.sql);
    for (std::size_t i = 0; i < query_count; ++i)
        if (!core_->prepared[i].empty())
            link_.get().prepare(core_->prepared[i], core_->set[static_cast<Query>(i)].sql);
}

namespace {

// What a pooler in transaction mode does to prepared statements: the server
// session we prepared on has gone to another client (26000, "does not
// exist"), or we were given one where it is already prepared (42P05). Either
// way the statement did not run, so it is safe to send it again the pooled
// way.
bool pooling_symptom(const pqxx::sql_error& e) {
    return e.sqlstate() == "26000" || e.sqlstate() == "42P05";
}

// The argument list of an EXECUTE: each value an SQL literal, which the
// prepared statement's parameter types then read as they read bound text.
template <typename... Args>
std::string arguments(pqxx::connection_base& conn, const Args&... args) {
    if constexpr (sizeof...(args) == 0) {
        return {};
    } else {
        std::string out;
        ((out += (out.empty() ? "(" : ", ") + conn.quote(args)), ...);
        return out + ")";
    }
}

}  // namespace

namespace {

// A statement the server rolled back because another transaction was in
// the way: a serialization failure or a deadlock (a server session whose
// default isolation is not ours, through a transaction pooler), or a
// lock_timeout sqlock did not set. Every statement of sqlock's own is a
// transaction by itself, so nothing of it was done: sending it again is
// taking part in the race again, not doing anything twice.
bool lost_race(const std::string& sqlstate) {
    return sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03";
}

}  // namespace

void PgConnection::pause_before_resending(int tries) {
    // Within the call's bound, else the error stands (as errc::busy).
    static thread_local std::mt19937 jitter{std::random_device{}()};
    const auto most = std::chrono::microseconds(500 << std::min(tries, 6));
    const auto pause = std::chrono::microseconds(
        std::uniform_int_distribution<std::int64_t>(most.count() / 2, most.count())(jitter));
    if (clock::now() + pause >= limit_.at) throw;
    std::this_thread::sleep_for(pause);
}

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

template <typename Prepared, typename Pooled>
auto PgConnection::send(const char* doing, const std::string& subject, Prepared&& prepared,
                        Pooled&& pooled, bool watchdog) -> decltype(pooled()) {
    return bounded(
        doing, subject,
        [&] {
            for (int tries = 0;; ++tries) {
                try {
                    if (target_->session_bound()) {
                        try {
                            return prepared();
                        } catch (const pqxx::sql_error& e) {
                            if (!pooling_symptom(e)) throw;
                            target_->note_transaction_pooling();
                        }
                    }
                    return pooled();
                } catch (const pqxx::sql_error& e) {
                    // A standby refuses our advisory lock (55000) or our
                    // writes (25006): say "read-only" whichever came first.
                    if ((e.sqlstate() == "55000" || e.sqlstate() == "25006") && read_only())
                        throw pqxx::sql_error(e.what(), e.query(), "25006");
                    if (!lost_race(sqlstate_of(e))) throw;
                    pause_before_resending(tries);
                } catch (const pqxx::transaction_rollback& e) {
                    if (!lost_race(sqlstate_of(e))) throw;
                    pause_before_resending(tries);
                }
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
            set_up_session();
            pqxx::nontransaction tx(link_.get());
            return tx.exec_prepared(st.name, args...);
        },
        [&] {
            // Not forwarded: send() may run this again (a race the server
            // broke off), and the arguments must still be there.
            return exec_kept(st.name, st.sql, arguments(link_.get(), args...), [&] {
                pqxx::nontransaction tx(link_.get());
                return tx.exec_params(st.sql, args...);
            });
        });
}

template <typename Unnamed>
pqxx::result PgConnection::exec_kept(const std::string& name, const std::string& sql,
                                     const std::string& arguments, Unnamed&& unnamed,
                                     const std::string& before) {
    // As pq_exec_kept(), in SQL: EXECUTE of the server session's statement,
    // else PREPARE and EXECUTE in one simple query (one transaction, one
    // server session). A miss (26000), a clash (42P05) or a stale plan
    // (0A000, dropped then) ran nothing. `before` leads either message.
    if (!keeping_statements()) return unnamed();
    const std::string run = "EXECUTE \"" + name + "\"" + arguments;
    for (int miss = 0; miss < 3; ++miss) {
        try {
            pqxx::nontransaction tx(link_.get());
            pqxx::result r = tx.exec(before + run);
            if (miss == 0) note_kept(false);
            return r;
        } catch (const pqxx::sql_error& e) {
            // Only a miss counts: any other error (a standby's 25006 in a
            // failover's window, say) says nothing of the kept statements.
            const bool stale = e.sqlstate() == "0A000";
            if (!stale && e.sqlstate() != "26000") throw;
            if (miss == 0) note_kept(true);
            if (stale) {
                try {
                    pqxx::nontransaction tx(link_.get());
                    tx.exec("DEALLOCATE \"" + name + "\"");
                } catch (const pqxx::sql_error&) {
                    // not on the session lent for it: the next try tells
                }
                continue;
            }
        }
        try {
            pqxx::nontransaction tx(link_.get());
            return tx.exec(before + "PREPARE \"" + name + "\" AS " + sql + ";\n" + run);
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "42P05") throw;
        }
    }
    return unnamed();
}

PqResult PgConnection::exec_direct(const char* doing, const std::string& subject, HotStatement& hot,
                                   PqParams params) {
    PGconn* conn = link_.raw();
    return send(
        doing, subject,
        [&] {
            if (!hot.prepared) {
                const std::string setup = setup_for_message();
                // A Parse, unless the settings go with it (PREPARE in SQL).
                if (setup.empty()) hot.parsed = true;
                pq_prepare(conn, hot.st->name, hot.st->sql, limit_,
                           setup.empty() ? nullptr : setup.c_str());
                hot.prepared = session_set_up_ = true;
            }
            return pq_exec_prepared(conn, hot.st->name, hot.st->sql, params, limit_, hot.format);
        },
        [&] {
            if (!keeping_statements())
                return pq_exec_params(conn, hot.st->sql, params, limit_, hot.format);
            bool missed = false;
            PqResult r = pq_exec_kept(conn, hot.st->name, hot.st->sql, params, limit_, hot.format,
                                      hot.parsed, missed);
            note_kept(missed);
            return r;
        },
        /*watchdog=*/false);
}

void PgConnection::note_kept(bool missed) noexcept {
    kept_misses_ = missed ? kept_misses_ + 1 : 0;
}

std::string PgConnection::setup_for_message() const {
    if (session_set_up_ || !target_->session_bound()) return {};
    return session_setup_sql(*target_, PQserverVersion(link_.raw()));
}

void PgConnection::set_up_session() {
    const std::string setup = setup_for_message();
    if (setup.empty()) return;
    pq_exec_simple(link_.raw(), setup, limit_);
    session_set_up_ = true;
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
        set_up_session();
        // Nothing to do (and no CREATE privilege needed) when it all exists:
        // CREATE ... IF NOT EXISTS checks privileges before existence.
        bool exists;
        {
            pqxx::nontransaction check(link_.get());
            pqxx::result r = check.exec_params(
                schema_complete_sql(*target_),
                pqxx::prepare::make_dynamic_params(schema_complete_params(*target_)));
            exists = r[0][0].as<bool>();
        }
        if (exists) return;
        // Concurrent CREATE TABLE IF NOT EXISTS of one table can still fail
        // on the catalog's unique indexes; an advisory lock serialises us.
        // One simple query of several statements runs as one transaction,
        // without BEGIN/COMMIT, which a pooler in statement mode refuses.
        pqxx::nontransaction tx(link_.get());
        tx.exec(read_committed +
                ("SELECT pg_advisory_xact_lock(hashtext(" +
                 tx.quote("sqlock init " + target_->table) + "));\n") +
                schema_script(*target_));
    });
}

void PgConnection::check_access() {
    // What a role needs besides CREATE: see docs/SECURITY.md. A table
    // without a serial id (made by another program) needs no sequence. The
    // lock table first, then each side table; a missing side table is no
    // question of privileges (init() creates them, `doctor` reports one).
    const char* const table_privileges[] = {"SELECT", "INSERT", "UPDATE", "DELETE"};
    struct Checked {
        std::string title, name;  // "" for the lock table
        bool sequence;
        std::vector<std::string> missing;
    };
    std::vector<Checked> tables = {{"", target_->family.table().quoted, true, {}}};
    for (SideTable side : target_->family.sides())
        tables.push_back(
            {kind_of(side).title, target_->family.side(side).quoted, kind_of(side).serial_id, {}});
    std::string sql;
    std::vector<std::string> params;
    for (const Checked& t : tables) {
        params.push_back(t.name);
        // The lock table must be there (init() just made it): a cast that
        // fails says so. A side table's to_regclass() is NULL when missing.
        const std::string param = "$" + std::to_string(params.size()) + "::text";
        const std::string n = t.title.empty() ? param + "::regclass" : "to_regclass(" + param + ")";
        for (const char* p : table_privileges)
            sql += std::string(sql.empty() ? "SELECT " : ", ") + "coalesce(has_table_privilege(" +
                   n + ", '" + p + "'), true)";
        if (t.sequence)
            sql += ", coalesce(has_sequence_privilege(pg_get_serial_sequence(" + n +
                   "::text, 'id'), 'USAGE'), true)";
    }
    bounded("checking the privileges on the lock table", {}, [&] {
        set_up_session();
        pqxx::nontransaction check(link_.get());
        pqxx::result r = check.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
        int column = 0;
        for (Checked& t : tables) {
            for (const char* p : table_privileges)
                if (!r[0][column++].as<bool>()) t.missing.push_back(p);
            if (t.sequence && !r[0][column++].as<bool>())
                t.missing.push_back("USAGE on its id sequence");
        }
        return 0;
    });
    auto joined = [](const std::vector<std::string>& items) {
        std::string list;
        for (std::size_t i = 0; i < items.size(); ++i)
            list += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
        return list;
    };
    std::string list, sides;
    for (const Checked& t : tables) {
        if (!t.title.empty()) sides += (&t == &tables.back() ? " and " : ", ") + t.title;
        if (t.missing.empty()) continue;
        list += (list.empty() ? "" : "; and ") + joined(t.missing) +
                (t.title.empty() ? "" : " on its " + t.title + " " + t.name);
    }
    if (list.empty()) return;
    throw error(errc::configuration,
                target_->redact("lock table " + target_->table +
                                " exists, but this role may not use it: it lacks " + list +
                                " (a role needs SELECT, INSERT, UPDATE and DELETE on the table "
                                "and its" +
                                sides.substr(1) +
                                ", and USAGE on the id sequences; see docs/SECURITY.md) [" +
                                target_->redact.url() + "]"),
                "42501");
}

std::optional<std::string> PgConnection::upgrade_schema() {
    if (!has(SideTable::queue)) return std::nullopt;
    return bounded("adding the queue's joined column", {}, [&]() -> std::optional<std::string> {
        {
            pqxx::nontransaction check(link_.get());
            const pqxx::result r = check.exec_params(queue_upgrade_check_sql,
                                                     target_->family.side(SideTable::queue).quoted);
            if (r.empty() || r[0][0].as<bool>()) return std::nullopt;
            // Only the owner may ALTER: another role's attempt would fail
            // (and be logged by the server) at every auto_init.
            if (!r[0][1].as<bool>())
                return "this role does not own it: run `sqlock init` once as its owner";
        }
        // ADD COLUMN waits for every transaction that has used the queue to
        // end, and meanwhile every new waiter waits for it: briefly only.
        // One simple query runs as one transaction, as init_schema's.
        try {
            pqxx::nontransaction tx(link_.get());
            tx.exec("SET LOCAL lock_timeout = '2s';\nALTER TABLE " +
                    target_->family.side(SideTable::queue).quoted +
                    " ADD COLUMN IF NOT EXISTS joined timestamptz NOT NULL DEFAULT now()");
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "55P03") throw;
            return std::string("it stayed in use past 2 s: run `sqlock init` again");
        }
        return std::nullopt;
    });
}

AcquireResult PgConnection::try_acquire(const std::string& lockstring, duration lease,
                                        const std::string& locked_by, const QueueGate& gate) {
    const std::string ms = std::to_string(millis(lease));
    const std::string key = turn_name(lockstring);
    const std::string before = std::to_string(gate.before);
    PqResult r =
        gate.has_place() ? exec_direct("acquiring lock", lockstring, acquire_queued_,
                                       {lockstring.c_str(), ms.c_str(), locked_by.c_str(),
                                        key.c_str(), gate.name.c_str(), before.c_str()})
        : gate.active()
            ? exec_direct("acquiring lock", lockstring, acquire_gated_,
                          {lockstring.c_str(), ms.c_str(), locked_by.c_str(), key.c_str(),
                           gate.name.c_str()})
            : exec_direct("acquiring lock", lockstring, acquire_,
                          {lockstring.c_str(), ms.c_str(), locked_by.c_str(), key.c_str()});
    AcquireResult out;
    if (!r.empty()) {
        out.acquired = new_row(r.binary_int64(0, 0), lockstring, r.binary_timestamp_ms(0, 1), lease,
                               locked_by);
        out.left_line = gate.has_place();
        return out;
    }
    // Held. By whom, read now: nothing (or an expired row) when it was
    // released since, and the caller tries again.
    std::optional<Row> holder = find(lockstring);
    if (holder && holder->seconds_left > 0)
        out.holder = std::move(holder);
    else
        out.queued = gate.active();  // free, but waiters go first
    return out;
}

SharedValues PgConnection::shared_values(const std::string& name, const std::string& locked_by) {
    auto literal = [&](const std::string& text) { return "'" + link_.get().esc(text) + "'"; };
    SharedValues v;
    v.name = literal(name);
    v.turn = literal(turn_name(name));
    v.locked_by = literal(locked_by);
    v.marker = literal(shared_marker_owner);
    v.prefix = literal(shared_prefix(name));
    v.channel = literal(name_channel(*target_, turn_name(name)));
    return v;
}

pqxx::result PgConnection::exec_simple(const char* doing, const std::string& subject,
                                       const std::string& sql) {
    auto run = [&] { return exec_with_setup(sql); };
    return send(doing, subject, run, run);
}

pqxx::result PgConnection::exec_with_setup(const std::string& sql) {
    // The session's settings, if not yet in place, in the same message:
    // undone with it if it fails.
    const std::string setup = setup_for_message();
    pqxx::nontransaction tx(link_.get());
    pqxx::result r = tx.exec(setup + sql);
    if (!setup.empty()) session_set_up_ = true;
    return r;
}

AcquireResult PgConnection::try_acquire_shared(const std::string& name, const std::string& own,
                                               duration lease, const std::string& locked_by,
                                               const QueueGate& gate) {
    const std::string ms = std::to_string(millis(lease));
    const std::string turn = turn_name(name);
    const pqxx::result r =
        gate.active() ? exec("acquiring a shared lock", name, stmt::acquire_shared_queued, name,
                             own, ms, locked_by, shared_marker_owner, turn, gate.before)
                      : exec("acquiring a shared lock", name, stmt::acquire_shared, name, own, ms,
                             locked_by, shared_marker_owner, turn);
    AcquireResult out;
    for (const auto& row : r) {
        const std::string kind = row[0].as<std::string>();
        if (kind == "own")
            out.acquired = read_row(row, 1);
        else if (kind == "mine" || kind == "holder")
            out.holder = read_row(row, 1);  // ours (claim_own_holder), or in the way
        else if (kind == "queued")
            out.queued = true;
    }
    return out;
}

std::optional<Row> PgConnection::renew_shared(std::int64_t id, const std::string& name,
                                              const std::string& locked_by, duration lease) {
    SharedValues v = shared_values(name, locked_by);
    v.id = std::to_string(id);
    v.lease_ms = std::to_string(millis(lease));
    // Through a transaction pooler, the work after the turn is the server
    // session's statement, as the release's is on a session of our own.
    const Statement& st = statements_.at(stmt::renew_shared);
    const pqxx::result r = send(
        "renewing a shared lock", name,
        [&] { return exec_with_setup(shared_renew_sql(*target_, v)); },
        [&] {
            return exec_kept(
                st.name, st.sql, shared_renew_arguments(v),
                [&] { return exec_with_setup(shared_renew_sql(*target_, v)); },
                shared_turn_sql(*target_, v));
        });
    if (r.empty()) return std::nullopt;
    return read_row(r[0], 0);
}

ReleaseOutcome PgConnection::release_shared(std::int64_t id, const std::string& /*own*/,
                                            const std::string& name, const std::string& locked_by,
                                            duration min_hold) {
    SharedValues v = shared_values(name, locked_by);
    v.id = std::to_string(id);
    v.min_hold_ms = std::to_string(std::max<std::int64_t>(0, millis(min_hold)));
    // One simple query, its turn first, as always. On a connection of our
    // own, its work is the session's prepared statement, run by EXECUTE
    // (planning it on every release cost about as much as running it);
    // through a transaction pooler, the lent server session's, prepared
    // there in the same message when it is missing (exec_kept()).
    const Statement& st = statements_.at(stmt::release_shared);
    const pqxx::result r = send(
        "releasing a shared lock", name,
        [&] {
            link_.get().prepare_now(st.name);
            return exec_with_setup(shared_release_execute_sql(*target_, v, st.name));
        },
        [&] {
            return exec_kept(
                st.name, st.sql, shared_release_arguments(v),
                [&] { return exec_with_setup(shared_release_sql(*target_, v)); },
                shared_turn_sql(*target_, v));
        });
    if (r[0][0].as<std::int64_t>() > 0) return ReleaseOutcome::kept;
    return r[0][1].as<std::int64_t>() > 0 ? ReleaseOutcome::released : ReleaseOutcome::lost;
}

AcquireResult PgConnection::try_acquire_slot(const std::string& name, int capacity, duration lease,
                                             const std::string& locked_by, int* slot_out,
                                             const QueueGate& gate) {
    const std::string cap = std::to_string(capacity);
    const std::string ms = std::to_string(millis(lease));
    const std::string before = std::to_string(gate.before);
    // Each lost race means another caller took a slot, so this ends; the
    // bound only guards against slots being freed and retaken forever.
    for (int attempt = 0; attempt <= capacity; ++attempt) {
        PqResult r = gate.has_place()
                         ? exec_direct("acquiring a slot of semaphore", name, acquire_slot_queued_,
                                       {name.c_str(), cap.c_str(), ms.c_str(), locked_by.c_str(),
                                        before.c_str()})
                     : gate.active()
                         ? exec_direct("acquiring a slot of semaphore", name, acquire_slot_gated_,
                                       {name.c_str(), cap.c_str(), ms.c_str(), locked_by.c_str()})
                         : exec_direct("acquiring a slot of semaphore", name, acquire_slot_,
                                       {name.c_str(), cap.c_str(), ms.c_str(), locked_by.c_str()});
        if (!r.empty()) {
            AcquireResult out;
            out.acquired = new_row(r.binary_int64(0, 0), r.text(0, 1), r.binary_timestamp_ms(0, 2),
                                   lease, locked_by);
            *slot_out = slot_number(out.acquired->lockstring, name, capacity);
            out.left_line = gate.has_place();
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
        // A slot is free, and the one we aimed at was taken concurrently,
        // or, behind the gate, waiters go first.
        if (gate.active() && exec("reading the line of semaphore", name, stmt::waiters_ahead, name,
                                  gate.before)[0][0]
                                 .as<bool>()) {
            AcquireResult out;
            out.queued = true;
            return out;
        }
    }
    return {};
}

namespace {

// A PostgreSQL array literal of `items` (text[] or bigint[] as the
// statement casts it): each element quoted, '"' and '\\' escaped.
template <typename T, typename Show>
std::string array_literal(const std::vector<T>& items, Show show) {
    std::string out = "{";
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        out += '"';
        for (char c : show(items[i])) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        out += '"';
    }
    return out + "}";
}

std::string text_array(const std::vector<std::string>& items) {
    return array_literal(items, [](const std::string& s) -> const std::string& { return s; });
}

std::string id_array(const std::vector<std::int64_t>& ids) {
    return array_literal(ids, [](std::int64_t id) { return std::to_string(id); });
}

std::string set_subject(const std::vector<std::string>& names) {
    return names.size() == 1 ? names.front() : names.front() + ", ...";
}

}  // namespace

namespace {

// A set's statement failed because the set could be taken only in part, so
// it wrote nothing; or two sets' turns deadlocked and the server rolled one
// back. Either way: not taken, and the holders say by whom.
bool set_not_taken(const error& e) {
    const bool partly = e.backend_code() == "22P02" &&
                        std::string(e.what()).find(set_partly_taken) != std::string::npos;
    return partly || e.backend_code() == "40P01";
}

}  // namespace

SetAcquireResult PgConnection::try_acquire_set(const std::vector<std::string>& lockstrings,
                                               duration lease, const std::string& locked_by,
                                               bool yield_to_queue) {
    std::vector<std::string> turns;
    for (const std::string& l : lockstrings) turns.push_back(turn_name(l));
    const std::string names = text_array(lockstrings);
    const std::string subject = set_subject(lockstrings);
    SetAcquireResult out;
    try {
        const std::string ms = std::to_string(millis(lease));
        const std::string keys = text_array(turns);
        const std::string count = std::to_string(lockstrings.size());
        PqResult r = exec_direct(
            "acquiring the lock set", subject, yield_to_queue ? acquire_set_queued_ : acquire_set_,
            {names.c_str(), ms.c_str(), locked_by.c_str(), keys.c_str(), count.c_str()});
        for (int i = 0; i < r.rows(); ++i)
            out.acquired.push_back(new_row(r.binary_int64(i, 0), r.text(i, 1),
                                           r.binary_timestamp_ms(i, 2), lease, locked_by));
        if (!out.acquired.empty()) return out;
    } catch (const error& e) {
        if (!set_not_taken(e)) throw;
    }
    pqxx::result h = exec("reading the holders of the lock set", subject, stmt::set_holders, names);
    for (const auto& row : h) out.holders.push_back(read_row(row, 0));
    // Nothing in the way: free, but waiters in line went first (or a name
    // was freed since, and the caller tries again).
    out.queued = out.holders.empty() && yield_to_queue;
    return out;
}

SetAcquireResult PgConnection::try_acquire_mixed_set(const std::vector<ClaimEntry>& entries,
                                                     duration lease, const std::string& locked_by,
                                                     bool yield_to_queue) {
    std::vector<std::string> rows, turns;
    std::string markers = "{";  // boolean[]: whether each row is a marker
    for (const ClaimEntry& e : entries) {
        rows.push_back(e.name);
        turns.push_back(turn_name(e.name));
        markers += std::string(markers.size() > 1 ? "," : "") + (e.shared() ? "t" : "f");
        if (!e.shared()) continue;
        rows.push_back(e.shared_row);
        turns.push_back(turns.back());
        markers += ",f";
    }
    markers += "}";
    const std::string names = text_array(rows);
    const std::string subject = set_subject(rows);
    SetAcquireResult out;
    try {
        const pqxx::result r =
            exec("acquiring the lock set", subject,
                 yield_to_queue ? stmt::acquire_mixed_set_queued : stmt::acquire_mixed_set, names,
                 millis(lease), locked_by, text_array(turns), static_cast<int>(rows.size()),
                 markers, shared_marker_owner);
        // Every row was written (else the statement failed); the markers
        // are not the set's.
        for (const auto& row : r)
            if (Row read = read_row(row, 0); read.locked_by != shared_marker_owner)
                out.acquired.push_back(std::move(read));
        return out;
    } catch (const error& e) {
        if (!set_not_taken(e)) throw;
    }
    pqxx::result h = exec("reading the holders of the lock set", subject, stmt::set_holders, names);
    for (const auto& row : h) out.holders.push_back(read_row(row, 0));
    // Nothing in the way: free, but waiters in line went first (or a name
    // was freed since, and the caller tries again).
    out.queued = yield_to_queue &&
                 std::none_of(out.holders.begin(), out.holders.end(),
                              [&](const Row& row) { return in_the_way(row, entries, locked_by); });
    return out;
}

MixedSetValues PgConnection::mixed_values(const std::vector<ClaimEntry>& entries,
                                          const std::vector<std::int64_t>& ids,
                                          const std::string& locked_by) {
    auto literal = [&](const std::string& text) { return "'" + link_.get().esc(text) + "'"; };
    MixedSetValues v;
    v.locked_by = literal(locked_by);
    v.marker = literal(shared_marker_owner);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const ClaimEntry& e = entries[i];
        const std::string turn = turn_name(e.name);
        v.ids.push_back(std::to_string(ids[i]));
        v.names.push_back(literal(e.name));
        v.name_turns.push_back(literal(turn));
        v.channels.push_back(literal(name_channel(*target_, turn)));
        if (!e.shared()) continue;
        v.turns.push_back(literal(turn));
        v.shared_names.push_back(literal(e.name));
        v.prefixes.push_back(literal(shared_prefix(e.name)));
        v.shared_ids.push_back(std::to_string(ids[i]));
    }
    return v;
}

std::vector<Row> PgConnection::renew_mixed_set(const std::vector<ClaimEntry>& entries,
                                               const std::vector<std::int64_t>& ids,
                                               const std::string& locked_by, duration lease) {
    MixedSetValues v = mixed_values(entries, ids, locked_by);
    v.lease_ms = std::to_string(millis(lease));
    const pqxx::result r = exec_simple("renewing the lock set of id", std::to_string(ids.front()),
                                       mixed_set_renew_sql(*target_, v));
    std::vector<Row> rows;
    for (const auto& row : r) rows.push_back(read_row(row, 0));
    return rows;
}

std::size_t PgConnection::release_mixed_set(const std::vector<ClaimEntry>& entries,
                                            const std::vector<std::int64_t>& ids,
                                            const std::string& locked_by) {
    const MixedSetValues v = mixed_values(entries, ids, locked_by);
    const pqxx::result r = exec_simple("releasing the lock set of id", std::to_string(ids.front()),
                                       mixed_set_release_sql(*target_, v));
    const auto deleted = static_cast<std::size_t>(r[0][0].as<std::int64_t>());
    return ids.size() - std::min(deleted, ids.size());
}

std::vector<Row> PgConnection::renew_set(const std::vector<std::int64_t>& ids,
                                         const std::string& locked_by, duration lease) {
    pqxx::result r = exec("renewing the lock set of id", std::to_string(ids.front()),
                          stmt::renew_set, id_array(ids), locked_by, millis(lease));
    std::vector<Row> rows;
    for (const auto& row : r) rows.push_back(read_row(row, 0));
    return rows;
}

std::size_t PgConnection::release_set(const std::vector<std::int64_t>& ids,
                                      const std::vector<std::string>& lockstrings,
                                      const std::string& locked_by, duration min_hold) {
    if (min_hold > duration::zero())
        return release_each(*this, ids, lockstrings, locked_by, min_hold);
    std::vector<std::string> turns, channels;
    for (const std::string& l : lockstrings) {
        turns.push_back(turn_name(l));
        channels.push_back(name_channel(*target_, turns.back()));
    }
    pqxx::result r =
        exec("releasing the lock set of id", std::to_string(ids.front()), stmt::release_set,
             id_array(ids), locked_by, text_array(turns), text_array(channels));
    const auto deleted = static_cast<std::size_t>(r[0][0].as<std::int64_t>());
    return ids.size() - std::min(deleted, ids.size());
}

ReleaseOutcome PgConnection::release_one(std::int64_t id, const std::string& lockstring,
                                         const std::string& locked_by, duration min_hold) {
    // Without a minimum hold, the plain DELETE (+ NOTIFY) is cheaper than the
    // keep-or-delete statement (measured: about 5 us of a 60 us cycle).
    if (min_hold <= duration::zero())
        return delete_exact(id, lockstring, locked_by) ? ReleaseOutcome::released
                                                       : ReleaseOutcome::lost;
    const std::string turn = turn_name(lockstring);
    pqxx::result r = exec("releasing lock id", std::to_string(id), stmt::release, id, locked_by,
                          millis(min_hold), turn, name_channel(*target_, turn));
    if (r.empty()) return ReleaseOutcome::lost;
    return r[0][0].as<bool>() ? ReleaseOutcome::kept : ReleaseOutcome::released;
}

std::optional<Row> PgConnection::renew_one(std::int64_t id, const std::string& locked_by,
                                           duration lease) {
    pqxx::result r =
        exec("renewing lock id", std::to_string(id), stmt::renew, id, locked_by, millis(lease));
    if (r.empty()) return std::nullopt;
    return read_row(r[0], 0);
}

Rows PgConnection::query(Query key, const std::vector<Value>& params) {
    const QueryText& text = core_->set[key];
    // As text, NULL as a null pointer: libpq's own form of parameters.
    std::vector<std::string> texts;
    std::vector<const char*> values;
    texts.reserve(params.size());
    values.reserve(params.size());
    for (const Value& v : params) texts.push_back(v.to_text());
    for (std::size_t i = 0; i < params.size(); ++i)
        values.push_back(params[i].is_null() ? nullptr : texts[i].c_str());
    const auto bound = pqxx::prepare::make_dynamic_params(values);
    const std::string what = describe_query(key, params);
    auto unnamed = [&] {
        // A statement without parameters, when it is the session's first
        // (Query::side_tables, before every first acquisition): as a
        // simple query, with the session's settings in front of it.
        if (params.empty() && !setup_for_message().empty()) return exec_with_setup(text.sql);
        set_up_session();
        pqxx::nontransaction tx(link_.get());
        return tx.exec_params(text.sql, bound);
    };
    const std::string& name = core_->prepared[static_cast<std::size_t>(key)];
    // Through a transaction pooler: kept on the server session, as exec()'s.
    auto kept = [&] {
        if (name.empty()) return unnamed();
        std::string list;
        for (std::size_t i = 0; i < params.size(); ++i)
            list += (i ? ", " : "(") +
                    (params[i].is_null() ? std::string("NULL") : link_.get().quote(texts[i]));
        if (!list.empty()) list += ")";
        return exec_kept(name, text.sql, list, unnamed);
    };
    auto prepared = [&] {
        set_up_session();
        pqxx::nontransaction tx(link_.get());
        return tx.exec_prepared(name, bound);
    };
    const bool carries_setup = params.empty() && !setup_for_message().empty();
    const pqxx::result r = text.mode == QueryText::Mode::unprepared || carries_setup
                               ? send(what.c_str(), {}, unnamed, unnamed)
                               : send(what.c_str(), {}, prepared, kept);
    Rows out;
    out.affected = static_cast<std::uint64_t>(r.affected_rows());
    out.rows.reserve(r.size());
    for (const auto& row : r) {
        std::vector<Field> fields;
        fields.reserve(row.size());
        for (const auto& field : row)
            fields.push_back(field.is_null() ? Field()
                                             : Field(std::string(field.c_str(), field.size())));
        out.rows.push_back(std::move(fields));
    }
    return out;
}

bool PgConnection::delete_exact(std::int64_t id, const std::string& lockstring,
                                const std::string& locked_by) {
    const std::string text = std::to_string(id);
    const std::string turn = turn_name(lockstring);
    const std::string channel = name_channel(*target_, turn);
    return !exec_direct("deleting lock id", text, delete_exact_,
                        {text.c_str(), locked_by.c_str(), turn.c_str(), channel.c_str()})
                .empty();
}

}  // namespace sqlock::detail::postgres
