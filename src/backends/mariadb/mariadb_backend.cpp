// The MariaDB/MySQL backend: locks shared by many hosts, via libmariadb.
#include "mariadb_backend.hpp"

#include "loading/backend_module.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "base/validate.hpp"
#include "mariadb_connection.hpp"
#include "mariadb_doctor.hpp"
#include "mariadb_statements.hpp"
#include "mariadb_target.hpp"
#include "sqlock/error.hpp"
#include "text.hpp"

namespace sqlock::detail {
namespace {

// Waiters poll (the Backend default): MariaDB has no push of a row's
// deletion to another session that is both reliable and cheap.
class MariaBackend final : public Backend {
  public:
    explicit MariaBackend(std::shared_ptr<const mariadb::MariaTarget> target)
        : target_(std::move(target)),
          set_(std::make_shared<const StatementSet>(mariadb::sql::statement_set(*target_))) {}

    std::unique_ptr<Connection> connect() override {
        return std::make_unique<mariadb::MariaConnection>(target_, set_);
    }
    std::string name() const override { return "mariadb"; }

    GuardStatement guard_statement(std::int64_t id, const std::string& locked_by,
                                   const std::string& marker,
                                   const std::string& lock_name) const override {
        // Hex literals: read alike whatever the session's sql_mode says of
        // backslashes.
        using mariadb::sql::literal;
        const std::string call = "CALL " + target_->quoted_guard + "(";
        return {name(),
                call + "?, ?, ?, ?)",
                {std::to_string(id), locked_by, marker, lock_name},
                call + std::to_string(id) + ", " + literal(locked_by) + ", " + literal(marker) +
                    ", " + literal(lock_name) + ")",
                lock_name};
    }

    // The name's turn (the GET_LOCK every acquirer of it takes) is taken on
    // the caller's session while the attempt runs, so no acquirer of sqlock
    // is inserting the name meanwhile; the live row is read on a connection
    // of our own, since a read in the caller's transaction may see an old
    // snapshot, and a locking one would hold the live holder's row (and its
    // renewals) until the caller's commit. Then, in the caller's
    // transaction: an expired row deleted, the name's row inserted and
    // deleted again.
    std::optional<std::int64_t> try_lock_transaction(Transaction& tx, Connection& own,
                                                     const std::string& lock_name,
                                                     const std::string& locked_by, duration lease,
                                                     duration wait) override {
        const std::string& T = target_->quoted_table;
        const std::string key = "'" + mariadb::sql::turn_key(*target_, lock_name) + "'";
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%lld.%03lld",
                      static_cast<long long>(wait.count() / 1000),
                      static_cast<long long>(wait.count() % 1000));
        const auto turn = tx.run("SELECT GET_LOCK(" + key + ", " + seconds + ")", {});
        if (turn.empty() || turn[0].empty() || turn[0][0].value_or("0") != "1") return std::nullopt;
        // Another transaction's row of the name, not committed yet, is
        // waited for by InnoDB's row lock wait: bounded by the wait for this
        // attempt (whole seconds, InnoDB's unit), the session's own bound
        // given back after it.
        const auto before = tx.run("SELECT @@SESSION.innodb_lock_wait_timeout", {});
        const std::string restore = before.at(0).at(0).value_or("50");
        const long long bound = std::max<long long>(1, (wait.count() + 999) / 1000);
        std::optional<std::int64_t> taken;
        try {
            tx.run("SET SESSION innodb_lock_wait_timeout = " + std::to_string(bound), {});
            taken = insert_and_delete(tx, own, T, lock_name, locked_by, lease);
        } catch (const error& e) {
            give_back(tx, key, restore);
            // 1205: that row's transaction outlasted the wait (only the
            // statement is undone).
            if (e.backend_code().rfind("1205/", 0) == 0) return std::nullopt;
            throw;
        } catch (...) {
            give_back(tx, key, restore);
            throw;
        }
        give_back(tx, key, restore);
        return taken;
    }
    void diagnose(Diagnosis& out) override { mariadb::diagnose(*target_, out); }

  private:
    static std::optional<std::int64_t> insert_and_delete(Transaction& tx, Connection& own,
                                                         const std::string& T,
                                                         const std::string& lock_name,
                                                         const std::string& locked_by,
                                                         duration lease) {
        const std::optional<Row> row = own.find(lock_name);
        if (row && row->seconds_left > 0) return std::nullopt;
        if (row)
            tx.run("DELETE FROM " + T + " WHERE id = " + std::to_string(row->id) +
                       " AND expires <= UTC_TIMESTAMP(3)",
                   {});
        try {
            tx.run("INSERT INTO " + T +
                       " (lockstring, created, expires, locked_by) VALUES (?, UTC_TIMESTAMP(3),"
                       " UTC_TIMESTAMP(3) + INTERVAL " +
                       std::to_string(static_cast<long long>(lease.count()) * 1000) +
                       " MICROSECOND, ?)",
                   {lock_name, locked_by});
        } catch (const error& e) {
            // 1062: a row of the name came in since the look (a program
            // that takes no turn, such as DBIx::Locker). InnoDB keeps a
            // shared lock on that row until the transaction ends, which
            // would stall its holder's renewals: no waiting on.
            if (e.backend_code().rfind("1062/", 0) == 0)
                throw error(errc::busy,
                            "lock '" + text::printable(lock_name) +
                                "' was taken just before this transaction could take it, and "
                                "the transaction now holds a lock on its row: roll it back "
                                "and try again",
                            e.backend_code());
            throw;
        }
        const auto id = tx.run("SELECT LAST_INSERT_ID()", {});
        const std::string inserted = id.at(0).at(0).value_or("0");
        tx.run("DELETE FROM " + T + " WHERE id = " + inserted, {});
        return std::stoll(inserted);
    }

    // The turn `key`, and the session's lock wait bound `restore`.
    static void give_back(Transaction& tx, const std::string& key,
                          const std::string& restore) noexcept {
        try {
            tx.run("SET SESSION innodb_lock_wait_timeout = " + std::to_string(std::stoll(restore)),
                   {});
            tx.run("DO RELEASE_LOCK(" + key + ")", {});
        } catch (...) {
            // The session's end gives them back; a broken link already has.
        }
    }

    std::shared_ptr<const mariadb::MariaTarget> target_;
    std::shared_ptr<const StatementSet> set_;  // the core's statements, for every connection
};

}  // namespace

std::unique_ptr<Backend> make_mariadb_backend(const DatabaseUrl& url, const std::string& table,
                                              duration timeout) {
    validate_table_name(table, /*allow_schema=*/true);
    return std::make_unique<MariaBackend>(
        std::make_shared<const mariadb::MariaTarget>(url, table, timeout));
}

}  // namespace sqlock::detail

SQLOCK_BACKEND(mariadb, sqlock::detail::make_mariadb_backend)
