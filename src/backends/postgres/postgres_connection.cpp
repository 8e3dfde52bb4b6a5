#include "postgres_connection.hpp"

#include <algorithm>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>

#include "postgres_error.hpp"
#include "postgres_statements.hpp"
#include "postgres_watchdog.hpp"

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

}  // namespace

PgConnection::PgConnection(std::shared_ptr<const PgTarget> target)
    : target_(std::move(target)), link_(*target_) {
    // Only registers the definitions; libpqxx prepares each on first use.
    for (const auto& [name, sql] : prepared_statements(*target_)) link_.get().prepare(name, sql);
}

template <typename F>
auto PgConnection::bounded(const char* doing, const std::string& subject, F&& f) -> decltype(f()) {
    const auto now = clock::now();
    const auto limit = std::min(deadline_, now + target_->timeout);
    Armed armed(link_.get().sock(), limit);
    try {
        return guarded(*target_, doing, subject, std::forward<F>(f));
    } catch (const error& e) {
        if (!armed.fired()) throw;
        const auto waited = std::chrono::duration_cast<duration>(clock::now() - now);
        throw error(errc::connection,
                    target_->redact("no answer from PostgreSQL within " + format_duration(waited) +
                                    " while " + describe(doing, subject) +
                                    "; abandoned the connection [" + target_->redact.url() + "]"),
                    e.backend_code());
    }
}

template <typename... Args>
pqxx::result PgConnection::exec(const char* doing, const std::string& subject,
                                const char* statement, Args&&... args) {
    return bounded(doing, subject, [&] {
        pqxx::nontransaction tx(link_.get());
        return tx.exec_prepared(statement, std::forward<Args>(args)...);
    });
}

void PgConnection::init_schema() {
    bounded("creating the lock table", {}, [&] {
        // Nothing to do (and no CREATE privilege needed) when it all exists:
        // CREATE ... IF NOT EXISTS checks privileges before existence.
        bool exists;
        {
            pqxx::nontransaction check(link_.get());
            pqxx::result r = check.exec_params(schema_exists_sql, target_->quoted_table,
                                               target_->index_regclass);
            exists = r[0][0].as<bool>();
        }
        if (exists) return;
        // Concurrent CREATE TABLE IF NOT EXISTS of one table can still fail
        // on the catalog's unique indexes; an advisory lock serialises us.
        pqxx::work tx(link_.get());
        tx.exec_params("SELECT pg_advisory_xact_lock(hashtext($1))",
                       "sqlock init " + target_->table);
        tx.exec(schema_script(*target_));
        tx.commit();
    });
}

AcquireResult PgConnection::try_acquire(const std::string& lockstring, duration lease,
                                        const std::string& locked_by) {
    pqxx::result r =
        exec("acquiring lock", lockstring, stmt::acquire, lockstring, millis(lease), locked_by);
    AcquireResult out;
    if (r.empty()) return out;  // taken meanwhile by a transaction our snapshot missed
    if (r[0][0].as<bool>())
        out.acquired = read_row(r[0], 1);
    else
        out.holder = read_row(r[0], 1);
    return out;
}

AcquireResult PgConnection::try_acquire_slot(const std::string& name, int capacity, duration lease,
                                             const std::string& locked_by, int* slot_out) {
    // Each lost race means another caller took a slot, so this ends; the
    // bound only guards against slots being freed and retaken forever.
    for (int attempt = 0; attempt <= capacity; ++attempt) {
        pqxx::result r = exec("acquiring a slot of semaphore", name, stmt::acquire_slot, name,
                              capacity, millis(lease), locked_by);
        if (r.empty()) return {};
        const int kind = r[0][0].as<int>();
        if (kind == 1) {
            AcquireResult out;
            out.acquired = read_row(r[0], 1);
            *slot_out = std::stoi(out.acquired->lockstring.substr(name.size() + 1));
            return out;
        }
        if (kind == 2) {
            AcquireResult out;
            out.holder = read_row(r[0], 1);
            return out;
        }
        // kind 3: the free slot we aimed at was taken concurrently; look again.
    }
    return {};
}

ReleaseOutcome PgConnection::release(std::int64_t id, const std::string& locked_by,
                                     duration min_hold) {
    // Without a minimum hold, the plain DELETE (+ NOTIFY) is cheaper than the
    // keep-or-delete statement (measured: about 5 us of a 60 us cycle).
    if (min_hold <= duration::zero())
        return delete_exact(id, locked_by) ? ReleaseOutcome::released : ReleaseOutcome::lost;
    pqxx::result r = exec("releasing lock id", std::to_string(id), stmt::release, id, locked_by,
                          millis(min_hold));
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
    pqxx::result r =
        exec("purging expired locks", {}, stmt::purge, static_cast<std::int64_t>(batch));
    return static_cast<std::size_t>(r.affected_rows());
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

bool PgConnection::delete_exact(std::int64_t id, const std::string& locked_by) {
    return !exec("deleting lock id", std::to_string(id), stmt::delete_exact, id, locked_by).empty();
}

}  // namespace sqlock::detail::postgres
