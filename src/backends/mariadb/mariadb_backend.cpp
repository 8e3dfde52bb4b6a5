// The MariaDB/MySQL backend: locks shared by many hosts, via libmariadb.
#include "mariadb_backend.hpp"

#include "loading/backend_module.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
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
        const std::string call = "CALL " + target_->family.guard().quoted + "(";
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
        const std::string& T = target_->family.table().quoted;
        // Our own connection says how turns are taken and ids drawn here
        // (mariadb_statements.hpp): on Galera no turn, and the id goes to
        // the fencing register in the caller's transaction.
        const mariadb::sql::Protocol p = static_cast<mariadb::MariaConnection&>(own).protocol();
        const std::string take = mariadb::sql::transaction_turn(*target_, p, lock_name, wait);
        if (!take.empty()) {
            std::vector<Transaction::row> turn;
            try {
                turn = tx.run(take, {});
            } catch (const error& e) {
                // A server that refuses GET_LOCK: row turns from now on,
                // which take none here.
                if (e.backend_code().rfind("1235/", 0) != 0 ||
                    std::string(e.what()).find("GET_LOCK") == std::string::npos)
                    throw;
                target_->refuse_get_lock();
                return try_lock_transaction(tx, own, lock_name, locked_by, lease, wait);
            }
            if (turn.empty() || turn[0].empty() || turn[0][0].value_or("0") != "1")
                return std::nullopt;
        }
        const std::string give_back_turn =
            mariadb::sql::transaction_turn_back(*target_, p, lock_name);
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
            taken =
                insert_and_delete(tx, own, T, lock_name, locked_by, lease,
                                  mariadb::sql::transaction_row_turn(*target_, p, lock_name),
                                  [&](const std::string& id) {
                                      return mariadb::sql::register_id(*target_, p, lock_name, id);
                                  });
        } catch (const error& e) {
            give_back(tx, give_back_turn, restore);
            // 1205: that row's transaction outlasted the wait (only the
            // statement is undone).
            if (e.backend_code().rfind("1205/", 0) == 0) return std::nullopt;
            throw;
        } catch (...) {
            give_back(tx, give_back_turn, restore);
            throw;
        }
        give_back(tx, give_back_turn, restore);
        return taken;
    }
    void diagnose(Diagnosis& out) override { mariadb::diagnose(*target_, out); }

  private:
    // `row_turn`: the statement that takes the name's row turn ("" for
    // none); `registered(id)`: the one that writes id `id` (as SQL) to the
    // fencing register, "" for none.
    static std::optional<std::int64_t> insert_and_delete(
        Transaction& tx, Connection& own, const std::string& T, const std::string& lock_name,
        const std::string& locked_by, duration lease, const std::string& row_turn,
        const std::function<std::string(const std::string&)>& registered) {
        const std::optional<Row> row = own.find(lock_name);
        if (row && row->seconds_left > 0) return std::nullopt;
        if (!row_turn.empty()) tx.run(row_turn, {});
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
        // Galera: the id to the name's register. Refused (4025): another
        // node handed out a larger one meanwhile, which this draw did not
        // see; the transaction holds our row's lock, so no waiting on.
        if (const std::string write = registered(inserted); !write.empty()) {
            try {
                tx.run(write, {});
            } catch (const error& e) {
                if (e.backend_code().rfind("4025/", 0) == 0 ||
                    e.backend_code().rfind("3819/", 0) == 0)
                    throw error(errc::busy,
                                "lock '" + text::printable(lock_name) +
                                    "' was taken on another node while this transaction took it, "
                                    "and the transaction now holds a lock on its row: roll it "
                                    "back and try again",
                                e.backend_code());
                throw;
            }
        }
        tx.run("DELETE FROM " + T + " WHERE id = " + inserted, {});
        return std::stoll(inserted);
    }

    // The statement that gives the turn back (none: ""), and the session's
    // lock wait bound `restore`.
    static void give_back(Transaction& tx, const std::string& give_back_turn,
                          const std::string& restore) noexcept {
        try {
            tx.run("SET SESSION innodb_lock_wait_timeout = " + std::to_string(std::stoll(restore)),
                   {});
            if (!give_back_turn.empty()) tx.run(give_back_turn, {});
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
