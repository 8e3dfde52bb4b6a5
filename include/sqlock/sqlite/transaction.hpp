// sqlock::guard and sqlock::lock_transaction for an sqlite3* handle with an
// open transaction (BEGIN, or better BEGIN IMMEDIATE).
//
// Header-only: a program that includes it links SQLite itself.
//
//     sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
//     sqlock::sqlite::guard(db, lock);  // errc::lost: ROLLBACK
//     ... writes ...
//     sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
//
// guard(db, lock) compiles the guard's statement each time. A program that
// guards many transactions keeps a SqliteTransaction with statements::kept
// beside its handle instead, and calls sqlock::guard(tx, lock): the guard's
// statement stays prepared, and a guard costs one statement's step.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sqlock/error.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/locker.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock::sqlite {

/// How a SqliteTransaction holds the statements it runs.
enum class statements {
    /// Compiled for each run and finalized before it returns: nothing is
    /// left prepared on the handle between calls.
    compiled_each_time,
    /// Kept prepared for the next run of the same SQL, until the adapter is
    /// destroyed: a guard then costs one statement's step, where compiling
    /// it (its view's trigger included) costs several times that. The
    /// adapter must be destroyed before the handle is closed.
    kept,
};

/// SqliteTransaction
///
/// An sqlite3* connection as sqlock::Transaction. It must be open on the
/// lock's database file; sqlock never ends its transaction.
///
/// Made with statements::kept, it keeps each statement it ran prepared
/// (the guard's: one per lock table; lock_transaction's: three), at most
/// `kept_limit` of them, the least recently run finalized first. Keep such
/// an adapter for the connection's life, beside the handle, and destroy it
/// before sqlite3_close(db): SQLite refuses to close a handle with
/// statements still prepared (sqlite3_close fails with SQLITE_BUSY and the
/// connection stays open, its transaction with it; sqlite3_close_v2 closes
/// it only when they are finalized). A statement kept across a change of the
/// schema is compiled again by SQLite when next run.
///
/// Thread safety: as its handle's, one thread at a time.
///
///     sqlite3* db = ...;                                   // the application's
///     sqlock::sqlite::SqliteTransaction tx(db, sqlock::sqlite::statements::kept);
///     sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
///     sqlock::guard(tx, lock);                             // errc::lost: ROLLBACK
///     ... writes, COMMIT ...
///     // tx goes before sqlite3_close(db)
class SqliteTransaction final : public Transaction {
  public:
    /// How many statements a statements::kept adapter keeps prepared.
    static constexpr std::size_t kept_limit = 8;

    explicit SqliteTransaction(sqlite3* db, statements how = statements::compiled_each_time)
        : db_(db), keep_(how == statements::kept) {}
    SqliteTransaction(const SqliteTransaction&) = delete;
    SqliteTransaction& operator=(const SqliteTransaction&) = delete;
    /// Moving hands the handle and its kept statements over: each is
    /// finalized once, by the adapter that has it last. A moved-from
    /// adapter is in no transaction and runs nothing (errc::invalid_argument).
    SqliteTransaction(SqliteTransaction&& other) noexcept
        : db_(other.db_), keep_(other.keep_), kept_(std::move(other.kept_)) {
        other.forget();
    }
    SqliteTransaction& operator=(SqliteTransaction&& other) noexcept {
        if (this != &other) {
            finalize_kept();
            db_ = other.db_;
            keep_ = other.keep_;
            kept_ = std::move(other.kept_);
            other.forget();
        }
        return *this;
    }
    ~SqliteTransaction() override { finalize_kept(); }

    std::string backend() const override { return "sqlite"; }

    bool in_transaction() override { return db_ && sqlite3_get_autocommit(db_) == 0; }

    std::vector<row> run(const std::string& sql, const std::vector<std::string>& params) override {
        if (!db_)
            throw error(errc::invalid_argument,
                        "a moved-from sqlock::sqlite::SqliteTransaction runs no statement");
        sqlite3_stmt* st = prepared(sql);
        if (!st) return {};  // only whitespace or a comment: nothing to run
        // Bound without a copy: `params` outlives the run, and done()
        // clears the bindings before it returns.
        for (std::size_t i = 0; i < params.size(); ++i)
            sqlite3_bind_text(st, static_cast<int>(i + 1), params[i].c_str(),
                              static_cast<int>(params[i].size()), SQLITE_STATIC);
        std::vector<row> rows;
        int rc;
        try {
            while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                row values;
                for (int c = 0; c < sqlite3_column_count(st); ++c) {
                    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
                    values.push_back(
                        text ? std::optional<std::string>(std::string(
                                   text, static_cast<std::size_t>(sqlite3_column_bytes(st, c))))
                             : std::nullopt);
                }
                rows.push_back(std::move(values));
            }
        } catch (...) {
            done(st);
            throw;
        }
        // The error of a failed step is the statement's, reported again by
        // reset and finalize; the message stays on the handle until the
        // next call.
        const int end = done(st);
        if (rc != SQLITE_DONE) fail(end != SQLITE_OK ? end : rc);
        return rows;
    }

  private:
    struct Kept {
        std::string sql;
        sqlite3_stmt* statement;
    };

    void finalize_kept() noexcept {
        for (const Kept& k : kept_) sqlite3_finalize(k.statement);
        kept_.clear();
    }

    void forget() noexcept {
        db_ = nullptr;
        kept_.clear();  // moved out already: finalized by their new owner
    }

    // `sql` compiled, or the kept statement of the same text (moved to the
    // front: the least recently run is at the back); nullptr when `sql`
    // holds no statement.
    sqlite3_stmt* prepared(const std::string& sql) {
        if (keep_)
            for (auto k = kept_.begin(); k != kept_.end(); ++k)
                if (k->sql == sql) {
                    std::rotate(kept_.begin(), k, k + 1);
                    return kept_.front().statement;
                }
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                               keep_ ? SQLITE_PREPARE_PERSISTENT : 0, &st, nullptr) != SQLITE_OK)
            fail(sqlite3_errcode(db_));
        if (!keep_ || !st) return st;
        if (kept_.size() == kept_limit) {
            sqlite3_finalize(kept_.back().statement);
            kept_.pop_back();
        }
        kept_.insert(kept_.begin(), Kept{sql, st});
        return st;
    }

    // Ends a run of `st`: reset to be run again when kept (which also
    // ends its read of the database) and its parameters unbound (NULL, as
    // in a statement compiled afresh, holding no pointer to the caller's
    // values), else finalized. Returns the run's error, as sqlite3_reset
    // and sqlite3_finalize do.
    int done(sqlite3_stmt* st) {
        if (!keep_) return sqlite3_finalize(st);
        const int rc = sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return rc;
    }

    [[noreturn]] void fail(int rc) {
        const std::string message = sqlite3_errmsg(db_);
        switch (rc & 0xff) {
            case SQLITE_BUSY:
                throw error(errc::busy, message, "SQLITE_BUSY");
            case SQLITE_LOCKED:
                throw error(errc::busy, message, "SQLITE_LOCKED");
            case SQLITE_CONSTRAINT:
                throw error(errc::backend, message, "SQLITE_CONSTRAINT");
            default:
                throw error(errc::backend, message, "SQLITE_" + std::to_string(rc & 0xff));
        }
    }

    sqlite3* db_;
    bool keep_;
    std::vector<Kept> kept_;
};

/// sqlock::guard over an sqlite3* with an open transaction.
inline void guard(sqlite3* db, const Lock& lock) {
    SqliteTransaction t(db);
    sqlock::guard(t, lock);
}
inline void guard(sqlite3* db, const LockSet& set) {
    SqliteTransaction t(db);
    sqlock::guard(t, set);
}
inline void guard(sqlite3* db, const Leadership& leadership) {
    SqliteTransaction t(db);
    sqlock::guard(t, leadership);
}

/// sqlock::lock_transaction over an sqlite3* with an open transaction.
inline std::int64_t lock_transaction(sqlite3* db, Locker& locker, const std::string& name,
                                     duration wait = duration::zero()) {
    SqliteTransaction t(db);
    return sqlock::lock_transaction(t, locker, name, wait);
}

}  // namespace sqlock::sqlite
