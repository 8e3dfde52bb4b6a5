// sqlock::guard and sqlock::lock_transaction for an sqlite3* handle with an
// open transaction (BEGIN, or better BEGIN IMMEDIATE).
//
// Header-only: a program that includes it links SQLite itself.
//
//     sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
//     sqlock::sqlite::guard(db, lock);  // errc::lost: ROLLBACK
//     ... writes ...
//     sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sqlock/error.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/locker.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock::sqlite {

/// An sqlite3* connection as sqlock::Transaction. It must be open on the
/// lock's database file; sqlock never ends its transaction.
class SqliteTransaction final : public Transaction {
  public:
    explicit SqliteTransaction(sqlite3* db) : db_(db) {}

    std::string backend() const override { return "sqlite"; }

    bool in_transaction() override { return sqlite3_get_autocommit(db_) == 0; }

    std::vector<row> run(const std::string& sql, const std::vector<std::string>& params) override {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, nullptr) !=
            SQLITE_OK)
            fail(sqlite3_errcode(db_));
        std::vector<row> rows;
        for (std::size_t i = 0; i < params.size(); ++i)
            sqlite3_bind_text(st, static_cast<int>(i + 1), params[i].c_str(),
                              static_cast<int>(params[i].size()), SQLITE_TRANSIENT);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            row values;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                const unsigned char* text = sqlite3_column_text(st, c);
                values.push_back(
                    text ? std::optional<std::string>(reinterpret_cast<const char*>(text))
                         : std::nullopt);
            }
            rows.push_back(std::move(values));
        }
        // The error of a failed step is the statement's, reported again by
        // finalize; the message stays on the handle until the next call.
        const int end = sqlite3_finalize(st);
        if (rc != SQLITE_DONE) fail(end != SQLITE_OK ? end : rc);
        return rows;
    }

  private:
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
