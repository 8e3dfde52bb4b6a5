// sqlock::guard and sqlock::lock_transaction for a libpqxx transaction.
//
// Header-only: libsqlock does not link libpq; a program that includes this
// header builds with libpqxx itself (pkg-config libpqxx).
//
//     pqxx::work tx(app_db);
//     sqlock::postgres::guard(tx, lock);  // errc::lost: roll back
//     tx.exec_params("UPDATE accounts SET ...", ...);
//     tx.commit();  // commits only if the lock was held until here
#pragma once

#include <pqxx/pqxx>

#include <cstdint>
#include <string>
#include <vector>

#include "sqlock/error.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/locker.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock::postgres {

/// A pqxx transaction as sqlock::Transaction. A pqxx::nontransaction is
/// none: each of its statements commits alone.
class PqxxTransaction final : public Transaction {
  public:
    explicit PqxxTransaction(pqxx::transaction_base& tx) : tx_(tx) {}

    std::string backend() const override { return "postgresql"; }

    bool in_transaction() override { return dynamic_cast<pqxx::nontransaction*>(&tx_) == nullptr; }

    std::vector<row> run(const std::string& sql, const std::vector<std::string>& params) override {
        try {
            const pqxx::result r =
                params.empty() ? tx_.exec(sql)
                               : tx_.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
            std::vector<row> rows;
            for (const auto& tuple : r) {
                row values;
                for (const auto& field : tuple)
                    values.push_back(field.is_null() ? std::nullopt
                                                     : std::optional<std::string>(field.c_str()));
                rows.push_back(std::move(values));
            }
            return rows;
        } catch (const pqxx::broken_connection& e) {
            throw error(errc::connection, first_line(e.what()));
        } catch (const pqxx::sql_error& e) {
            // A lock_timeout of the caller's session ran out: as busy as a
            // serialization failure.
            throw error(e.sqlstate() == "55P03" ? errc::busy : errc::backend, first_line(e.what()),
                        e.sqlstate());
        } catch (const pqxx::statement_completion_unknown& e) {
            throw error(errc::connection, first_line(e.what()), "40003");
        } catch (const pqxx::transaction_rollback& e) {
            // A serialization failure (under REPEATABLE READ or
            // SERIALIZABLE) or a deadlock: the server rolled the caller's
            // transaction back, which must run again from its start
            // (docs/guarded-writes.md). libpqxx 6 gives these no SQLSTATE.
            const char* code = dynamic_cast<const pqxx::serialization_failure*>(&e) ? "40001"
                               : dynamic_cast<const pqxx::deadlock_detected*>(&e)   ? "40P01"
                                                                                    : "40000";
            throw error(errc::busy, first_line(e.what()), code);
        }
    }

  private:
    static std::string first_line(const std::string& text) {
        std::string line = text.substr(0, text.find('\n'));
        if (line.rfind("ERROR:  ", 0) == 0) line.erase(0, 8);
        return line;
    }

    pqxx::transaction_base& tx_;
};

/// sqlock::guard over a pqxx transaction (see sqlock/transaction.hpp).
inline void guard(pqxx::transaction_base& tx, const Lock& lock) {
    PqxxTransaction t(tx);
    sqlock::guard(t, lock);
}
inline void guard(pqxx::transaction_base& tx, const LockSet& set) {
    PqxxTransaction t(tx);
    sqlock::guard(t, set);
}
inline void guard(pqxx::transaction_base& tx, const Leadership& leadership) {
    PqxxTransaction t(tx);
    sqlock::guard(t, leadership);
}

/// sqlock::lock_transaction over a pqxx transaction: `name` held until `tx`
/// commits or aborts. Works through PgBouncer in transaction mode.
inline std::int64_t lock_transaction(pqxx::transaction_base& tx, Locker& locker,
                                     const std::string& name, duration wait = duration::zero()) {
    PqxxTransaction t(tx);
    return sqlock::lock_transaction(t, locker, name, wait);
}

}  // namespace sqlock::postgres
