// sqlock::guard and sqlock::lock_transaction for a MYSQL* connection with an
// open transaction (START TRANSACTION, or autocommit off).
//
// Header-only: a program that includes it links libmariadb itself
// (pkg-config libmariadb).
//
//     mysql_query(db, "START TRANSACTION");
//     sqlock::mariadb::guard(db, lock);   // errc::lost: ROLLBACK
//     ... writes ...
//     sqlock::mariadb::commit(db, lock);  // errc::lost: it was taken over
//
// On Galera a take-over on another node does not wait for the guarded
// transaction: certification, or the node applying the take-over, aborts
// it (error 1213), at a statement after the guard or at the COMMIT.
// commit() says which lock that was about (errc::lost); a statement of
// yours that fails so can be handed to sqlock::commit_failed() too.
#pragma once

#include <mysql.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sqlock/error.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/locker.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock::mariadb {

/// A MYSQL* connection as sqlock::Transaction. The connection must be on
/// the lock table's server (an unqualified table is looked for in the
/// connection's current database).
class MariadbTransaction final : public Transaction {
  public:
    explicit MariadbTransaction(MYSQL* db) : db_(db) {}

    std::string backend() const override { return "mariadb"; }

    /// In a transaction, or with autocommit off (the next statement starts
    /// one).
    bool in_transaction() override {
        return (db_->server_status & SERVER_STATUS_IN_TRANS) != 0 ||
               (db_->server_status & SERVER_STATUS_AUTOCOMMIT) == 0;
    }

    /// Each ? in `sql` (sqlock's statements have none inside quotes) is
    /// replaced by its parameter as a hex literal, which no sql_mode reads
    /// differently. The rows are the first result set's.
    std::vector<row> run(const std::string& sql, const std::vector<std::string>& params) override {
        std::string text;
        std::size_t next = 0;
        for (char c : sql) {
            if (c != '?' || next >= params.size()) {
                text += c;
                continue;
            }
            text += hex_literal(params[next++]);
        }
        if (mysql_real_query(db_, text.c_str(), text.size()) != 0) fail();
        std::vector<row> rows;
        bool first = true;
        for (;;) {
            if (MYSQL_RES* res = mysql_store_result(db_)) {
                const unsigned int columns = mysql_num_fields(res);
                while (MYSQL_ROW r = mysql_fetch_row(res)) {
                    if (!first) continue;
                    unsigned long* lengths = mysql_fetch_lengths(res);
                    row values;
                    for (unsigned int c = 0; c < columns; ++c)
                        values.push_back(
                            r[c] ? std::optional<std::string>(std::string(r[c], lengths[c]))
                                 : std::nullopt);
                    rows.push_back(std::move(values));
                }
                mysql_free_result(res);
                first = false;
            } else if (mysql_field_count(db_) != 0) {
                fail();
            }
            const int more = mysql_next_result(db_);
            if (more > 0) fail();
            if (more < 0) break;
        }
        return rows;
    }

  private:
    static std::string hex_literal(const std::string& text) {
        if (text.empty()) return "''";
        static const char digits[] = "0123456789abcdef";
        std::string out = "_utf8mb4 X'";
        for (unsigned char c : text) {
            out += digits[c >> 4];
            out += digits[c & 15];
        }
        return out + "'";
    }

    [[noreturn]] void fail() {
        const unsigned int code = mysql_errno(db_);
        const std::string message = mysql_error(db_);
        // CR_SERVER_GONE_ERROR, CR_SERVER_LOST: the link is gone.
        if (code == 2006 || code == 2013) throw error(errc::connection, message);
        // ER_LOCK_WAIT_TIMEOUT, ER_LOCK_DEADLOCK: the server gave up waiting
        // for a row lock, or rolled the caller's transaction back.
        const errc category = code == 1205 || code == 1213 ? errc::busy : errc::backend;
        throw error(category, message, std::to_string(code) + "/" + mysql_sqlstate(db_));
    }

    MYSQL* db_;
};

/// sqlock::guard over a MYSQL* with an open transaction.
inline void guard(MYSQL* db, const Lock& lock) {
    MariadbTransaction t(db);
    sqlock::guard(t, lock);
}
inline void guard(MYSQL* db, const LockSet& set) {
    MariadbTransaction t(db);
    sqlock::guard(t, set);
}
inline void guard(MYSQL* db, const Leadership& leadership) {
    MariadbTransaction t(db);
    sqlock::guard(t, leadership);
}

/// Commits `db`'s transaction, guarded by `lock`. Throws what
/// sqlock::commit_failed() makes of a failed COMMIT: errc::lost naming the
/// lock when the database aborted the transaction because the lock is no
/// longer this holder's (Galera: taken over on another node), errc::busy
/// when it aborted it although the lock is still held (roll back and try
/// again), errc::connection when the link broke, else errc::backend with
/// the server's code.
inline void commit(MYSQL* db, const Lock& lock);
inline void commit(MYSQL* db, const LockSet& set);
inline void commit(MYSQL* db, const Leadership& leadership);

namespace detail {
// COMMIT, its failure said by commit_failed() for what guards it.
template <typename Guarding>
void commit_guarded(MYSQL* db, const Guarding& guarding) {
    MariadbTransaction t(db);
    try {
        t.run("COMMIT", {});
    } catch (const error& e) {
        commit_failed(e, guarding);
    }
}
}  // namespace detail

inline void commit(MYSQL* db, const Lock& lock) {
    detail::commit_guarded(db, lock);
}
inline void commit(MYSQL* db, const LockSet& set) {
    detail::commit_guarded(db, set);
}
inline void commit(MYSQL* db, const Leadership& leadership) {
    detail::commit_guarded(db, leadership);
}

/// sqlock::lock_transaction over a MYSQL* with an open transaction.
inline std::int64_t lock_transaction(MYSQL* db, Locker& locker, const std::string& name,
                                     duration wait = duration::zero()) {
    MariadbTransaction t(db);
    return sqlock::lock_transaction(t, locker, name, wait);
}

}  // namespace sqlock::mariadb
