#include "mariadb_connection.hpp"

#include <mysqld_error.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "base/validate.hpp"
#include "contract/records.hpp"
#include "mariadb_error.hpp"
#include "mariadb_statements.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::mariadb {
namespace {

// "a, b, c": {"a", "b", "c"}.
std::vector<std::string> split_columns(const std::string& list) {
    std::vector<std::string> out;
    std::size_t from = 0;
    while (from <= list.size()) {
        const std::size_t comma = std::min(list.find(',', from), list.size());
        std::string column = list.substr(from, comma - from);
        column.erase(0, column.find_first_not_of(' '));
        if (!column.empty()) out.push_back(column);
        from = comma + 1;
    }
    return out;
}

// A value of the type of side-table column `column`, for a privilege probe
// that writes nothing (WHERE 1 = 0) but must still type-check.
std::string probe_value(const std::string& column) {
    for (const char* time :
         {"started", "ended", "created", "paused_until", "expires", "proclaimed", "written"})
        if (column == time) return "UTC_TIMESTAMP(3)";
    for (const char* number : {"pid", "fencing_id", "last_id"})
        if (column == number) return "0";
    return "''";
}

const StatementResult& last_rows(const MariaTarget& t, const std::vector<StatementResult>& rs,
                                 const std::string& doing) {
    for (auto it = rs.rbegin(); it != rs.rend(); ++it)
        if (it->has_rows) return *it;
    throw error(errc::backend, t.redact("MariaDB sent no result set while " + doing + " [" +
                                        t.redacted_url + "]"));
}

std::string joined(const std::vector<std::string>& items) {
    std::string list;
    for (std::size_t i = 0; i < items.size(); ++i)
        list += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    return list;
}

}  // namespace

MariaConnection::MariaConnection(std::shared_ptr<const MariaTarget> target,
                                 std::shared_ptr<const StatementSet> set)
    : target_(std::move(target)),
      set_(std::move(set)),
      link_(*target_, clock::now() + target_->timeout) {}

MariaConnection::clock::time_point MariaConnection::limit() const {
    const auto now = clock::now();
    // time_point::max() minus now would overflow: compare first.
    if (deadline_ - now < target_->timeout) return deadline_;
    return now + target_->timeout;
}

std::vector<StatementResult> MariaConnection::run(const std::string& sql, const char* doing,
                                                  const std::string& subject) {
    const std::string what = describe(doing, subject);
    for (int attempt = 0;; ++attempt) {
        Failure f;
        std::vector<StatementResult> rs = link_.run(sql, limit(), what, &f);
        if (f.code == 0) return rs;
        // The batch's causal() read failed: this node could not catch up
        // with the cluster (Galera answers a wait for it that ran out, or a
        // node outside the primary component, with 1205). Unavailable: the
        // next connection goes to another node.
        if (rs.empty() && link_.galera() && f.code == ER_LOCK_WAIT_TIMEOUT &&
            sql.rfind(causal(), 0) == 0)
            link_.give_up(f, what);
        // The server rolled the statement back: running it again is safe,
        // and the other side of the deadlock has gone ahead meanwhile.
        if (f.code == ER_LOCK_DEADLOCK && attempt < 4) continue;
        throw_failure(*target_, f, what);
    }
}

std::vector<StatementResult> MariaConnection::run_sql(const std::string& sql, const char* doing) {
    return run(sql, doing, {});
}

void MariaConnection::init_schema() {
    // Nothing to do (and no CREATE privilege needed) when it exists.
    auto exists = run(sql::table_exists(*target_), "creating the lock table", {});
    const auto& found = last_rows(*target_, exists, "creating the lock table");
    bool tables = !found.rows.empty() && as_bool(found.rows[0].at(0));
    for (SideTable side : target_->family.sides())
        tables = tables &&
                 (side == SideTable::fencing ? table_is_there(target_->family.side(side).quoted)
                                             : has(side));
    // Galera: a guard made before its Galera check (a definition this
    // user may read that lacks it) is made again.
    bool outdated_guard = false;
    if (tables || link_.galera()) {
        auto guard = run(sql::guard_exists(*target_), "creating the lock table", {});
        const auto& guards = last_rows(*target_, guard, "creating the lock table");
        const bool there = !guards.rows.empty() && as_bool(guards.rows[0].at(0));
        if (there && link_.galera()) {
            auto current = run(sql::guard_is_current(*target_), "creating the lock table", {});
            const auto& rows = last_rows(*target_, current, "creating the lock table");
            outdated_guard =
                !rows.rows.empty() && rows.rows[0].at(0) && !as_bool(rows.rows[0].at(0));
        }
        if (tables && there && !outdated_guard) return;
    }
    if (outdated_guard)
        run("DROP PROCEDURE IF EXISTS " + target_->family.guard().quoted, "creating the lock table",
            {});
    auto collations = run(sql::exact_collations(), "creating the lock table", {});
    const auto& names = last_rows(*target_, collations, "creating the lock table");
    // A server with neither: utf8mb4_bin, which ignores trailing spaces.
    const std::string collation = names.rows.empty() ? "utf8mb4_bin" : as_text(names.rows[0].at(0));
    // Galera's variables (any MariaDB's): the guard gets its Galera check.
    auto wsrep = run("SHOW SESSION VARIABLES WHERE Variable_name = 'wsrep_on'",
                     "creating the lock table", {});
    const bool has_wsrep = !last_rows(*target_, wsrep, "creating the lock table").rows.empty();
    Failure f;
    link_.run(sql::schema_script(*target_, collation, has_wsrep), limit(),
              "creating the lock table", &f);
    if (f.code == 0) return;
    // The tables are there and only the guard is not listed: information_schema
    // shows a routine only to those with a privilege on it, and an account
    // that may not create one uses the table all the same. A guard that is
    // really missing says so where it is used (errc::configuration).
    if (tables) return;
    // information_schema shows only the tables a user has some privilege
    // on: the table may well exist.
    if (f.code == ER_TABLEACCESS_DENIED_ERROR)
        throw error(
            errc::configuration,
            target_->redact("lock table " + target_->table +
                            " is missing or this user may not use it, and may not create "
                            "it (" +
                            f.message + "); to use an existing table, " + target_->grant_hint() +
                            "; to create it, grant CREATE on the database [" +
                            target_->redacted_url + "]"),
            std::to_string(f.code) + "/" + f.sqlstate);
    throw_failure(*target_, f, "creating the lock table");
}

void MariaConnection::check_access() {
    std::vector<std::string> missing;
    for (const MissingPrivilege& m : missing_privileges())
        missing.push_back(m.privilege +
                          (m.side ? std::string(" on the ") + kind_of(*m.side).title : ""));
    if (missing.empty()) return;
    throw error(
        errc::configuration,
        target_->redact("lock table " + target_->table +
                        " exists, but this user may not use it: it lacks " + joined(missing) +
                        "; " + target_->grant_hint() + " [" + target_->redacted_url + "]"),
        std::to_string(ER_TABLEACCESS_DENIED_ERROR) + "/42000");
}

std::optional<std::string> MariaConnection::upgrade_schema() {
    if (!has(SideTable::queue)) return std::nullopt;
    const Rows has = query(Query::queue_joined, {});
    if (!has.rows.empty() && as_bool(has.rows[0].at(0))) return std::nullopt;
    // ADD COLUMN waits for every transaction that has used the queue to
    // end, and meanwhile every new waiter waits for it: briefly only.
    // Without IF NOT EXISTS, which MySQL lacks: a concurrent init that was
    // first is ER_DUP_FIELDNAME.
    Failure f;
    link_.run("SET STATEMENT lock_wait_timeout = 2 FOR ALTER TABLE " +
                  target_->family.side(SideTable::queue).quoted +
                  " ADD COLUMN joined DATETIME(3) NOT NULL DEFAULT (UTC_TIMESTAMP(3))",
              limit(), "adding the queue's joined column", &f);
    if (f.code == 0 || f.code == ER_DUP_FIELDNAME) return std::nullopt;
    if (f.code == ER_TABLEACCESS_DENIED_ERROR)
        return "this user lacks ALTER on it: run `sqlock init` once as a user that has it";
    if (f.code == ER_LOCK_WAIT_TIMEOUT)
        return std::string("it stayed in use past 2 s: run `sqlock init` again");
    throw_failure(*target_, f, "adding the queue's joined column");
}

std::vector<MariaConnection::MissingPrivilege> MariaConnection::missing_privileges() {
    const std::string& T = target_->family.table().quoted;
    // Statements that change nothing but are checked like real ones.
    std::vector<std::pair<MissingPrivilege, std::string>> probes = {
        {{"SELECT", {}},
         "SELECT id, lockstring, created, expires, locked_by FROM " + T + " WHERE 1 = 0"},
        {{"INSERT", {}},
         "INSERT INTO " + T +
             " (lockstring, created, expires, locked_by) SELECT '', "
             "UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), '' FROM DUAL WHERE 1 = 0"},
        {{"UPDATE", {}}, "UPDATE " + T + " SET expires = UTC_TIMESTAMP(3) WHERE 1 = 0"},
        {{"DELETE", {}}, "DELETE FROM " + T + " WHERE 1 = 0"},
    };
    // Each side table beside it needs the same, probed on the columns
    // sqlock uses (table_family.cpp). A missing one is not a question of
    // privileges: init() creates them before it checks, and `doctor`
    // reports a missing one on its own line. The fencing register only
    // where it is used: on Galera, or where GET_LOCK was refused (row
    // turns).
    for (SideTable side : target_->family.sides()) {
        const bool used =
            side == SideTable::fencing
                ? protocol().row_turns && table_is_there(target_->family.side(side).quoted)
                : has(side);
        if (!used) continue;
        const SideTableKind& kind = kind_of(side);
        const std::string& Q = target_->family.side(side).quoted;
        std::string values;  // one of the right type for each column
        for (const std::string& column : split_columns(kind.columns))
            values += std::string(values.empty() ? "" : ", ") + probe_value(column);
        probes.push_back({{"SELECT", side},
                          std::string("SELECT ") + kind.columns + " FROM " + Q + " WHERE 1 = 0"});
        probes.push_back({{"INSERT", side},
                          "INSERT INTO " + Q + " (" + kind.columns + ") SELECT " + values +
                              " FROM DUAL WHERE 1 = 0"});
        probes.push_back({{"UPDATE", side},
                          "UPDATE " + Q + " SET " + kind.updated + " = " +
                              probe_value(kind.updated) + " WHERE 1 = 0"});
        probes.push_back({{"DELETE", side}, "DELETE FROM " + Q + " WHERE 1 = 0"});
    }
    std::vector<MissingPrivilege> missing;
    const std::string what = "checking the privileges on the lock table";
    for (const auto& [privilege, statement] : probes) {
        Failure f;
        link_.run(statement, limit(), what, &f);
        if (f.code == ER_TABLEACCESS_DENIED_ERROR || f.code == ER_COLUMNACCESS_DENIED_ERROR)
            missing.push_back(privilege);
        else if (f.code != 0)
            throw_failure(*target_, f, what);
    }
    return missing;
}

AcquireResult MariaConnection::try_acquire(const std::string& lockstring, duration lease,
                                           const std::string& locked_by, const QueueGate& gate) {
    const std::string what = describe("acquiring lock", lockstring);
    // Free or held live, nearly always: the insert alone. An expired row in
    // the way: a second batch takes it over (under the turn again, so ids
    // still grow in acquisition order).
    // The insert commits by itself, and the row is read just after it: a
    // row of ours that someone force-released in between is reported as
    // ours all the same, so that the caller learns of the lock it held and
    // finds it lost at its first renewal or release. Its times are the
    // server's a moment later (the row that had them is gone).
    auto ours_gone = [&](std::int64_t id) {
        const auto rs = run(sql::lease_from_now(lease), "acquiring lock", lockstring);
        const auto& times = last_rows(*target_, rs, what).rows.at(0);
        Row row;
        row.id = id;
        row.lockstring = lockstring;
        row.created = as_text(times.at(0));
        row.expires = as_text(times.at(1));
        row.locked_by = locked_by;
        row.seconds_left = std::chrono::duration<double>(lease).count();
        AcquireResult out;
        out.acquired = std::move(row);
        return out;
    };
    AcquireResult out = run_acquire(
        what, lockstring, gate,
        [&](const sql::Protocol& p, duration wait) {
            return sql::acquire(*target_, p, lockstring, lease, locked_by, wait, gate, false);
        },
        ours_gone);
    if (out.acquired || !out.holder || out.holder->seconds_left > 0) return out;
    return run_acquire(what, lockstring, gate, [&](const sql::Protocol& p, duration wait) {
        return sql::acquire(*target_, p, lockstring, lease, locked_by, wait, gate, true);
    });
}

AcquireResult MariaConnection::try_acquire_slot(const std::string& name, int capacity,
                                                duration lease, const std::string& locked_by,
                                                int* slot_out, const QueueGate& gate) {
    AcquireResult out = run_acquire(
        describe("acquiring a slot of semaphore", name), slot_lockstring(name, 1), gate,
        [&](const sql::Protocol& p, duration wait) {
            return sql::acquire_slot(*target_, p, name, capacity, lease, locked_by, wait, gate);
        });
    // A live slot of ours: an earlier statement of ours took it.
    claim_own_holder(out, locked_by);
    if (out.acquired) *slot_out = slot_number(out.acquired->lockstring, name, capacity);
    return out;
}

AcquireResult MariaConnection::run_acquire(
    const std::string& what, const std::string& turn_of, const QueueGate& gate,
    const std::function<std::string(const sql::Protocol&, duration)>& batch,
    const std::function<AcquireResult(std::int64_t)>& inserted_then_gone) {
    const auto until = limit();
    // The turn is normally held for a fraction of a millisecond; wait for it
    // up to three quarters of this round trip's bound (the rest is for the
    // statements), and report "not acquired" when that runs out.
    const auto left = std::chrono::duration_cast<duration>(until - clock::now());
    const duration wait = std::max(duration::zero(), left * 3 / 4);
    Failure f;
    std::vector<StatementResult> rs;
    for (;;) {
        f = Failure{};
        const sql::Protocol p = protocol();
        rs = link_.run(batch(p, wait), until, what, &f);
        // A deadlock rolled the whole transaction back, or (on a server in
        // innodb_autoinc_lock_mode=0, where every insert takes the table's
        // AUTO-INC lock) the id could not be drawn: a fresh attempt is safe.
        // Retried while this round trip's bound lasts, not a fixed number of
        // times: inserts of neighbouring names deadlock on the unique
        // index's gap locks (InnoDB takes them for the duplicate check even
        // in READ COMMITTED), and under load a few times in a row; giving
        // up early would call a free name busy. On Galera also a lost
        // certification, and an id the fencing register refused: a fresh
        // attempt draws a new one (lost_race()). A server that refuses
        // GET_LOCK: the same again with row turns.
        if (turned_away(f, p)) {
            give_back_turn(turn_of, what);
            continue;
        }
        if (!lost_race(f.code) || clock::now() >= until) break;
        give_back_turn(turn_of, what);
    }
    if (f.code != 0) {
        give_back_turn(turn_of, what);
        // A row lock held too long, or a deadlock the server broke: the name
        // is contended; the caller waits and tries again. ER_BAD_NULL_ERROR:
        // the turn did not come in time (the batch inserts no name then).
        if (turn_missed(f.code) || lost_race(f.code)) {
            AcquireResult out;
            // Behind a gate, mostly that: waiters were queued ahead.
            out.queued = gate.active() && f.code == ER_BAD_NULL_ERROR;
            return out;
        }
        throw_failure(*target_, f, what);
    }
    const StatementResult& last = last_rows(*target_, rs, what);
    AcquireResult out;
    if (last.rows.empty()) {
        // The statement before the read is the insert: it took a row, which
        // was released before the read (a force-release).
        const auto read_at = static_cast<std::size_t>(&last - rs.data());
        const StatementResult* insert = read_at > 0 ? &rs[read_at - 1] : nullptr;
        if (inserted_then_gone && insert && !insert->has_rows && insert->affected == 1)
            return inserted_then_gone(static_cast<std::int64_t>(insert->insert_id));
        // Else the turn did not come in time, or the holder's row went away.
        return out;
    }
    const auto& r = last.rows[0];
    if (as_bool(r.at(0)))
        out.acquired = read_lock_row(r, 2);
    else
        out.holder = read_lock_row(r, 2);
    return out;
}

sql::Protocol MariaConnection::protocol() const {
    // Galera: GET_LOCK is one node's, so a turn is a row lock (which is
    // also there on releases that refuse GET_LOCK), and ids go through the
    // register. Elsewhere GET_LOCK, unless the server refused it.
    sql::Protocol p;
    p.row_turns = link_.galera() || target_->get_lock_refused();
    p.register_ids = link_.galera();
    return p;
}

bool MariaConnection::turned_away(const Failure& f, const sql::Protocol& used) {
    // Row turns call no GET_LOCK: a refusal there is something else.
    if (used.row_turns || !refuses_get_lock(f)) return false;
    target_->refuse_get_lock();
    return true;
}

duration MariaConnection::turn_wait() const {
    const auto left = std::chrono::duration_cast<duration>(limit() - clock::now());
    return std::max(duration::zero(), left * 3 / 4);
}

AcquireResult MariaConnection::try_acquire_shared(const std::string& name, const std::string& own,
                                                  duration lease, const std::string& locked_by,
                                                  const QueueGate& gate) {
    const std::string what = describe("acquiring a shared lock", name);
    const auto until = limit();
    const duration wait = turn_wait();
    Failure f;
    std::vector<StatementResult> rs;
    for (;;) {
        f = Failure{};
        const sql::Protocol p = protocol();
        rs = link_.run(sql::acquire_shared(*target_, p, name, own, lease, locked_by, wait, gate),
                       until, what, &f);
        // As try_acquire(): a deadlock, a lost certification or an id not
        // drawn (or drawn out of order) rolled it all back.
        if (turned_away(f, p)) {
            give_back_turn(name, what);
            continue;
        }
        if (!lost_race(f.code) || clock::now() >= until) break;
        give_back_turn(name, what);
    }
    AcquireResult out;
    if (f.code == 0) {
        const StatementResult& last = last_rows(*target_, rs, what);
        if (!last.rows.empty()) out.acquired = read_lock_row(last.rows[0], 0);
        return out;
    }
    give_back_turn(name, what);
    // Not taken, nothing written: the turn did not come or waiters went
    // first (the marker's NULL name), the name is held exclusively (our
    // row's NULL name), or our row is there already (a retry after a lost
    // answer: claimed by the caller).
    const bool contended = turn_missed(f.code) || lost_race(f.code) || f.code == ER_DUP_ENTRY;
    if (!contended) throw_failure(*target_, f, what);
    auto found = run(sql::shared_refusal(*target_, name, own), "reading the holder of", name);
    bool first = true;
    for (const StatementResult& r : found) {
        if (!r.has_rows) continue;
        if (first) {
            out.queued = !r.rows.empty() && as_bool(r.rows[0].at(0));
            first = false;
            continue;
        }
        for (const auto& row : r.rows) {
            Row read = read_lock_row(row, 0);
            // Ours (claim_own_holder takes it) before anyone else's.
            if (!out.holder || read.lockstring == own) out.holder = std::move(read);
        }
    }
    return out;
}

std::vector<StatementResult> MariaConnection::run_turned(const Batch& build,
                                                         const std::string& name, const char* doing,
                                                         const std::string& subject) {
    return run_turned(build, std::vector<std::string>{name}, doing, subject);
}

std::vector<StatementResult> MariaConnection::run_turned(const Batch& build,
                                                         const std::vector<std::string>& names,
                                                         const char* doing,
                                                         const std::string& subject) {
    const std::string what = describe(doing, subject);
    const auto until = limit();
    Failure f;
    std::vector<StatementResult> rs;
    bool missed = false;
    for (;;) {
        f = Failure{};
        const sql::Protocol p = protocol();
        rs = link_.run(build(p, turn_wait()), until, what, &f);
        if (f.code == 0) break;
        try {
            link_.run("ROLLBACK; " + sql::release_set_turns(*target_, p, names), limit(), what);
        } catch (const error&) {
            // A broken link ends both with the session.
        }
        if (turned_away(f, p)) continue;
        // A row turn's wait ran out: as GET_LOCK's no, below.
        if (f.code == ER_STATEMENT_TIMEOUT) {
            missed = true;
            break;
        }
        // A deadlock rolled the transaction back (rows of neighbouring
        // names share index gaps), or on Galera a certification was lost:
        // a fresh attempt is safe, while the bound lasts.
        if (f.code != ER_LOCK_DEADLOCK || clock::now() >= until) throw_failure(*target_, f, what);
    }
    for (const StatementResult& r : rs) {
        if (!r.has_rows && !missed) continue;
        if (missed || r.rows.empty() || !as_bool(r.rows[0].at(0)))
            throw error(errc::busy,
                        target_->redact("the turn of lock '" + printable(names.front()) +
                                        "' did not come in time while " + what + " [" +
                                        target_->redacted_url + "]"));
        break;
    }
    return rs;
}

std::optional<Row> MariaConnection::renew_shared(std::int64_t id, const std::string& name,
                                                 const std::string& locked_by, duration lease) {
    const std::string subject = std::to_string(id);
    auto rs = run_turned(
        [&](const sql::Protocol& p, duration wait) {
            return sql::renew_shared(*target_, p, id, name, locked_by, lease, wait);
        },
        name, "renewing shared lock id", subject);
    const auto& last = last_rows(*target_, rs, describe("renewing shared lock id", subject));
    if (last.rows.empty()) return std::nullopt;
    return read_lock_row(last.rows[0], 0);
}

ReleaseOutcome MariaConnection::release_shared(std::int64_t id, const std::string& /*own*/,
                                               const std::string& name,
                                               const std::string& locked_by, duration min_hold) {
    const std::string subject = std::to_string(id);
    auto rs = run_turned(
        [&](const sql::Protocol& p, duration wait) {
            return sql::release_shared(*target_, p, id, name, locked_by, min_hold, wait);
        },
        name, "releasing shared lock id", subject);
    const auto& last = last_rows(*target_, rs, describe("releasing shared lock id", subject));
    if (last.rows.empty()) return ReleaseOutcome::lost;
    if (as_int64(last.rows[0].at(0)) > 0) return ReleaseOutcome::kept;
    return as_int64(last.rows[0].at(1)) > 0 ? ReleaseOutcome::released : ReleaseOutcome::lost;
}

void MariaConnection::give_back_turn(const std::string& lockstring, const std::string& what) {
    // The batch stopped part-way, perhaps in its transaction and holding the
    // turn: end the one, give the other back.
    try {
        link_.run(sql::release_turn(*target_, protocol(), lockstring), limit(), what);
    } catch (const error&) {
        // A broken link ends both with the session.
    }
}

SetAcquireResult MariaConnection::try_acquire_set(const std::vector<std::string>& lockstrings,
                                                  duration lease, const std::string& locked_by,
                                                  bool yield_to_queue) {
    const std::string what = describe("acquiring the lock set of", lockstrings.front());
    const auto until = limit();
    // The turns wait up to three quarters of this round trip's bound, as
    // try_acquire()'s one turn does.
    const duration wait = turn_wait();
    return take_set(
        [&](const sql::Protocol& p) {
            return sql::acquire_set(*target_, p, lockstrings, lease, locked_by, wait,
                                    yield_to_queue);
        },
        until, lockstrings, lockstrings, lockstrings.size(), yield_to_queue, what);
}

SetAcquireResult MariaConnection::try_acquire_mixed_set(const std::vector<ClaimEntry>& entries,
                                                        duration lease,
                                                        const std::string& locked_by,
                                                        bool yield_to_queue) {
    const std::string what = describe("acquiring the lock set of", entries.front().name);
    const auto until = limit();
    const duration wait = turn_wait();
    std::vector<std::string> names, rows;
    for (const ClaimEntry& e : entries) names.push_back(e.name);
    rows = names;
    for (const ClaimEntry& e : entries)
        if (e.shared()) rows.push_back(e.shared_row);
    return take_set(
        [&](const sql::Protocol& p) {
            return sql::acquire_mixed_set(*target_, p, entries, lease, locked_by, wait,
                                          yield_to_queue);
        },
        until, names, rows, entries.size(), yield_to_queue, what);
}

SetAcquireResult MariaConnection::take_set(
    const std::function<std::string(const sql::Protocol&)>& build, clock::time_point until,
    const std::vector<std::string>& names, const std::vector<std::string>& rows,
    std::size_t expected, bool yield_to_queue, const std::string& what) {
    Failure f;
    std::vector<StatementResult> rs;
    sql::Protocol p;
    for (;;) {
        f = Failure{};
        p = protocol();
        rs = link_.run(build(p), until, what, &f);
        if (!turned_away(f, p)) break;
        try {
            link_.run("ROLLBACK", limit(), what);
        } catch (const error&) {
            // A broken link ends it with the session.
        }
    }
    SetAcquireResult out;
    if (f.code == 0) {
        for (const auto& r : last_rows(*target_, rs, what).rows)
            out.acquired.push_back(read_lock_row(r, 0));
        if (out.acquired.size() == expected) return out;
        out.acquired.clear();  // cannot be: the transaction wrote all or none
        throw error(errc::backend, target_->redact("MariaDB wrote part of a lock set while " +
                                                   what + " [" + target_->redacted_url + "]"));
    }
    try {
        link_.run("ROLLBACK; " + sql::release_set_turns(*target_, p, names), limit(), what);
    } catch (const error&) {
        // A broken link ends both with the session.
    }
    // Not taken (nothing written): a turn that did not come, a name held
    // or waited for (the NULL name, 1048), another program's row (1062), a
    // row lock or deadlock the server broke, a lost certification, an id
    // the fencing register refused. The holders say by whom.
    const bool contended = turn_missed(f.code) || lost_race(f.code) || f.code == ER_DUP_ENTRY;
    if (!contended) throw_failure(*target_, f, what);
    auto hs = run(sql::set_holders(*target_, rows, yield_to_queue),
                  "reading the holders of the lock set of", names.front());
    for (const auto& r : last_rows(*target_, hs, what).rows) {
        out.queued = out.queued || as_bool(r.at(6));
        if (as_int64(r.at(0)) != 0) out.holders.push_back(read_lock_row(r, 0));
    }
    return out;
}

std::vector<Row> MariaConnection::renew_mixed_set(const std::vector<ClaimEntry>& entries,
                                                  const std::vector<std::int64_t>& ids,
                                                  const std::string& locked_by, duration lease) {
    const std::vector<std::string> shared = sql::shared_names(entries);
    const std::string subject = std::to_string(ids.front());
    auto rs = run_turned(
        [&](const sql::Protocol& p, duration wait) {
            return sql::renew_mixed_set(*target_, p, entries, ids, locked_by, lease, wait);
        },
        shared, "renewing the lock set of id", subject);
    std::vector<Row> rows;
    for (const auto& r :
         last_rows(*target_, rs, describe("renewing the lock set of id", subject)).rows)
        rows.push_back(read_lock_row(r, 0));
    return rows;
}

std::size_t MariaConnection::release_mixed_set(const std::vector<ClaimEntry>& entries,
                                               const std::vector<std::int64_t>& ids,
                                               const std::string& locked_by) {
    const std::vector<std::string> shared = sql::shared_names(entries);
    const std::string subject = std::to_string(ids.front());
    auto rs = run_turned(
        [&](const sql::Protocol& p, duration wait) {
            return sql::release_mixed_set(*target_, p, entries, ids, locked_by, wait);
        },
        shared, "releasing the lock set of id", subject);
    const auto& last = last_rows(*target_, rs, describe("releasing the lock set of id", subject));
    const auto deleted =
        last.rows.empty() ? std::size_t{0} : static_cast<std::size_t>(as_int64(last.rows[0].at(0)));
    return ids.size() - std::min(deleted, ids.size());
}

std::vector<Row> MariaConnection::renew_set(const std::vector<std::int64_t>& ids,
                                            const std::string& locked_by, duration lease) {
    const std::string id = std::to_string(ids.front());
    auto rs =
        run(sql::renew_set(*target_, ids, locked_by, lease), "renewing the lock set of id", id);
    std::vector<Row> rows;
    for (const auto& r : last_rows(*target_, rs, "renewing the lock set of id " + id).rows)
        rows.push_back(read_lock_row(r, 0));
    return rows;
}

std::size_t MariaConnection::release_set(const std::vector<std::int64_t>& ids,
                                         const std::vector<std::string>& lockstrings,
                                         const std::string& locked_by, duration min_hold) {
    if (min_hold > duration::zero())
        return release_each(*this, ids, lockstrings, locked_by, min_hold);
    auto rs = run(sql::release_set(*target_, ids, locked_by), "releasing the lock set of id",
                  std::to_string(ids.front()));
    const auto deleted = rs.empty() ? std::size_t{0} : static_cast<std::size_t>(rs[0].affected);
    return ids.size() - std::min(deleted, ids.size());
}

ReleaseOutcome MariaConnection::release_one(std::int64_t id, const std::string& lockstring,
                                            const std::string& locked_by, duration min_hold) {
    if (min_hold <= duration::zero() && !link_.galera())
        return delete_exact(id, lockstring, locked_by) ? ReleaseOutcome::released
                                                       : ReleaseOutcome::lost;
    if (min_hold <= duration::zero()) {
        // Galera: the delete marks the register, so that a release sent
        // again after an answer that did not come (its node stopped, the
        // cluster stalled meanwhile) and finding no row can tell whether the
        // first went through: re-read, causally, before saying lost.
        const std::string what = describe("releasing lock id", std::to_string(id));
        auto rs = run_transaction(sql::release_registered(*target_, id, lockstring, locked_by),
                                  "releasing lock id", std::to_string(id));
        const auto& last = last_rows(*target_, rs, what);
        if (!last.rows.empty() && as_bool(last.rows[0].at(0))) return ReleaseOutcome::released;
        auto before = run(causal() + sql::released_before(*target_, id, lockstring),
                          "releasing lock id", std::to_string(id));
        const auto& said = last_rows(*target_, before, what);
        return !said.rows.empty() && as_bool(said.rows[0].at(0)) ? ReleaseOutcome::released
                                                                 : ReleaseOutcome::lost;
    }
    const std::string what = describe("releasing lock id", std::to_string(id));
    auto rs = run(sql::release_keeping(*target_, id, locked_by, min_hold), "releasing lock id",
                  std::to_string(id));
    const auto& last = last_rows(*target_, rs, what);
    if (last.rows.empty()) return ReleaseOutcome::lost;
    if (as_bool(last.rows[0].at(0))) return ReleaseOutcome::released;
    return as_bool(last.rows[0].at(1)) ? ReleaseOutcome::kept : ReleaseOutcome::lost;
}

std::optional<Row> MariaConnection::renew_one(std::int64_t id, const std::string& locked_by,
                                              duration lease) {
    const std::string what = describe("renewing lock id", std::to_string(id));
    auto rs =
        run(sql::renew(*target_, id, locked_by, lease), "renewing lock id", std::to_string(id));
    const auto& last = last_rows(*target_, rs, what);
    if (last.rows.empty()) return std::nullopt;
    return read_lock_row(last.rows[0], 0);
}

std::size_t MariaConnection::purge_more(std::size_t batch, std::size_t /*purged*/) {
    // Galera: the fencing register's rows nobody uses go with the expired
    // lock rows (their count is not the caller's).
    if (link_.galera())
        run(sql::purge_register(*target_, batch), "purging the fencing register", {});
    return 0;
}

std::vector<StatementResult> MariaConnection::run_transaction(const std::string& sql,
                                                              const char* doing,
                                                              const std::string& subject) {
    try {
        return run(sql, doing, subject);
    } catch (const error&) {
        try {
            link_.run("ROLLBACK", limit(), describe(doing, subject));
        } catch (const error&) {
            // A broken link ends the transaction with the session.
        }
        throw;
    }
}

std::string MariaConnection::causal() const {
    // A SELECT under wsrep_sync_wait waits until this node has applied
    // every commit the cluster had when it began; the statements after it
    // see at least that.
    return link_.galera() ? "SET STATEMENT wsrep_sync_wait = 1 FOR SELECT 1;\n" : "";
}

namespace {

// Galera: the core's statements that must see what another node committed
// (a run recorded there, a pause, a leader's value, a take-over): every one
// but the queue's, whose reads only order waiters, the clock's and the
// purge's (an expired row another node has not applied yet goes next time).
bool reads_the_cluster(Query key) {
    switch (key) {
        case Query::side_tables:  // DDL is applied everywhere before it returns
        case Query::now_millis:
        case Query::purge_locks:
        case Query::purge_locks_and_runs:
        case Query::queue_join:
        case Query::queue_poll:
        case Query::queue_leave:
        case Query::queue_length:
            return false;
        default:
            return true;
    }
}

}  // namespace

Rows MariaConnection::query(Query key, const std::vector<Value>& params) {
    const QueryText& text = (*set_)[key];
    const std::string what = describe_query(key, params);
    const std::string sql = (reads_the_cluster(key) ? causal() : "") + sql::bind(text.sql, params);
    std::vector<StatementResult> rs =
        text.mode == QueryText::Mode::transaction
            ? run_transaction("START TRANSACTION;\n" + sql + ";\nCOMMIT", what.c_str(), {})
            : run(sql, what.c_str(), {});
    Rows out;
    for (auto& r : rs) {
        if (r.has_rows)
            out.rows = std::move(r.rows);  // the last result set's
        else
            out.affected += r.affected;
    }
    return out;
}

bool MariaConnection::unlisted_side_table_exists(SideTable table) {
    // The queue only when this user may read it: one not granted the queue
    // of a table made before it waits as before, rather than failing every
    // acquisition on it.
    const std::string& quoted = target_->family.side(table).quoted;
    return table == SideTable::queue ? probe_table(quoted) == 0 : table_is_there(quoted);
}

bool MariaConnection::table_is_there(const std::string& quoted) {
    return probe_table(quoted) != ER_NO_SUCH_TABLE;
}

unsigned MariaConnection::probe_table(const std::string& quoted) {
    Failure f;
    link_.run("SELECT 1 FROM " + quoted + " LIMIT 0", limit(), "looking for table " + quoted, &f);
    return f.code;
}

bool MariaConnection::delete_exact(std::int64_t id, const std::string& /*lockstring*/,
                                   const std::string& locked_by) {
    auto rs =
        run(sql::delete_exact(*target_, id, locked_by), "deleting lock id", std::to_string(id));
    return !rs.empty() && rs[0].affected > 0;
}

}  // namespace sqlock::detail::mariadb
