// The SQLite backend's part of sqlock-bench (tools/bench/bench_backend.hpp,
// cmake/backend_bench.cmake): the baseline, the sqlite3 C API with sqlock's
// connection settings (WAL, synchronous=NORMAL, a 10 s busy timeout,
// persistent prepared statements), so the difference is sqlock's own work;
// a database file of each measurement's own; and the command rows'
// baseline, sqlock-bench-rawrun (sqlite_bench_rawrun.cpp), as SQLite is the
// command's default database.
#include <sqlite3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "bench_backend.hpp"
#include "raw_client.hpp"
#include "sqlock/sqlite/transaction.hpp"

namespace sqlock_bench {
namespace {

constexpr const char* now_sql = "strftime('%Y-%m-%d %H:%M:%f','now')";

class RawSqlite final : public RawClient {
  public:
    RawSqlite(const std::string& path, const std::string& table)
        : table_("\"" + table + "\""), owner_(raw_owner_string()) {
        int rc = sqlite3_open_v2(path.c_str(), &db_,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
        if (rc != SQLITE_OK) {
            std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
            sqlite3_close_v2(db_);
            throw std::runtime_error("cannot open SQLite database " + path + ": " + msg);
        }
        try {
            setup();
        } catch (...) {
            close();
            throw;
        }
    }

    ~RawSqlite() override { close(); }

    std::int64_t try_acquire(const std::string& name) override {
        sqlite3_bind_text(insert_, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
        sqlite3_bind_text(insert_, 2, owner_.data(), static_cast<int>(owner_.size()),
                          SQLITE_STATIC);
        return step_for_id(insert_);
    }

    void release(std::int64_t id) override {
        sqlite3_bind_int64(delete_, 1, id);
        sqlite3_bind_text(delete_, 2, owner_.data(), static_cast<int>(owner_.size()),
                          SQLITE_STATIC);
        int rc = sqlite3_step(delete_);
        sqlite3_reset(delete_);
        if (rc != SQLITE_DONE) fail("DELETE");
        if (sqlite3_changes(db_) != 1) throw std::runtime_error("raw release found no row");
    }

    void cycle_many(const std::vector<std::string>& names) override {
        std::string array = "[";
        for (const std::string& n : names) array += (array.size() > 1 ? ",\"" : "\"") + n + "\"";
        array += "]";
        for (sqlite3_stmt* st : {insert_many_, delete_many_}) {
            sqlite3_bind_text(st, 1, array.data(), static_cast<int>(array.size()), SQLITE_STATIC);
            sqlite3_bind_text(st, 2, owner_.data(), static_cast<int>(owner_.size()), SQLITE_STATIC);
            const int rc = sqlite3_step(st);
            sqlite3_reset(st);
            if (rc != SQLITE_DONE) fail(st == insert_many_ ? "INSERT" : "DELETE");
            if (sqlite3_changes(db_) != static_cast<int>(names.size()))
                throw std::runtime_error("raw set found a row held or gone");
        }
    }

    std::int64_t try_acquire_slot(const std::string& name, int capacity) override {
        sqlite3_bind_text(slot_, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
        sqlite3_bind_int(slot_, 2, capacity);
        sqlite3_bind_text(slot_, 3, owner_.data(), static_cast<int>(owner_.size()), SQLITE_STATIC);
        return step_for_id(slot_);
    }

    void fill(const std::string& prefix, std::int64_t first, std::int64_t count,
              bool expired) override {
        const char* created = expired ? "'-7200 seconds'" : "'+0 seconds'";
        const char* expires = expired ? "'-3600 seconds'" : "'+86400 seconds'";
        sqlite3_stmt* st = prepare(
            "WITH RECURSIVE s(n) AS (SELECT ?2 UNION ALL SELECT n + 1 FROM s WHERE n < ?3)"
            " INSERT INTO " +
            table_ +
            " (lockstring, created, expires, locked_by)"
            " SELECT ?1 || n, strftime('%Y-%m-%d %H:%M:%f','now'," +
            created + "), strftime('%Y-%m-%d %H:%M:%f','now'," + expires + "), ?4 FROM s");
        sqlite3_bind_text(st, 1, prefix.data(), static_cast<int>(prefix.size()), SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, first);
        sqlite3_bind_int64(st, 3, first + count - 1);
        sqlite3_bind_text(st, 4, owner_.data(), static_cast<int>(owner_.size()), SQLITE_STATIC);
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) fail("bulk INSERT");
    }

    std::int64_t purge_expired_at_once() override {
        exec("DELETE FROM " + table_ + " WHERE expires <= " + now_sql);
        return sqlite3_changes64(db_);
    }

    void drop_table() override {
        exec("DROP TABLE IF EXISTS " + table_);
        exec("DROP TABLE IF EXISTS " + data_table());
        exec("DROP VIEW IF EXISTS " + beside("_guard"));
    }

    // `extra` prepared once, as the guard of guarded_write_transaction()
    // is: the rows compare the two statements' steps, not the compiling
    // of one of them.
    void write_transaction(const std::string& extra) override {
        write_transaction_around([&] {
            if (extra.empty()) return;
            if (extra != extra_sql_) {
                sqlite3_finalize(extra_);
                extra_ = nullptr;
                extra_ = prepare(extra);
                extra_sql_ = extra;
            }
            const int rc = sqlite3_step(extra_);
            sqlite3_reset(extra_);
            if (rc != SQLITE_DONE && rc != SQLITE_ROW) fail(extra.c_str());
        });
    }

    // The guard as a program keeps it: sqlock's adapter for the handle,
    // made once with the statements kept.
    void guarded_write_transaction(const sqlock::Lock& lock) override {
        if (!adapter_)
            adapter_ = std::make_unique<sqlock::sqlite::SqliteTransaction>(
                db_, sqlock::sqlite::statements::kept);
        write_transaction_around([&] { sqlock::guard(*adapter_, lock); });
    }

    std::string server_version() override { return std::string("SQLite ") + sqlite3_libversion(); }

  private:
    template <typename Middle>
    void write_transaction_around(const Middle& middle) {
        if (!data_made_) {
            exec("CREATE TABLE IF NOT EXISTS " + data_table() +
                 " (id INTEGER PRIMARY KEY, who TEXT)");
            data_made_ = true;
        }
        // As a writer should begin on a database others write too: the
        // write lock at once, so that its first write cannot fail busy.
        exec("BEGIN IMMEDIATE");
        try {
            middle();
        } catch (...) {
            exec("ROLLBACK");
            throw;
        }
        exec("INSERT INTO " + data_table() + " (who) VALUES ('bench')");
        exec("COMMIT");
    }

    void setup() {
        sqlite3_busy_timeout(db_, 10000);
        exec("PRAGMA journal_mode=WAL");
        exec("PRAGMA synchronous=NORMAL");
        insert_ = prepare("INSERT INTO " + table_ +
                          " (lockstring, created, expires, locked_by) VALUES (?1, " + now_sql +
                          ", strftime('%Y-%m-%d %H:%M:%f','now','+3600 seconds'), ?2)"
                          " ON CONFLICT (lockstring) DO NOTHING RETURNING id");
        delete_ = prepare("DELETE FROM " + table_ + " WHERE id = ?1 AND locked_by = ?2");
        // A JSON array of names. The WHERE before ON CONFLICT: as for slot_.
        insert_many_ =
            prepare("INSERT INTO " + table_ +
                    " (lockstring, created, expires, locked_by) SELECT value, " + now_sql +
                    ", strftime('%Y-%m-%d %H:%M:%f','now','+3600 seconds'), ?2"
                    " FROM json_each(?1) WHERE true ON CONFLICT (lockstring) DO NOTHING");
        delete_many_ = prepare("DELETE FROM " + table_ +
                               " WHERE lockstring IN (SELECT value FROM json_each(?1))"
                               " AND locked_by = ?2");
        // The lowest slot without a row. The WHERE before ON CONFLICT is
        // required by SQLite's grammar for INSERT ... SELECT with an upsert.
        slot_ = prepare(
            "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s"
            " WHERE n < ?2) INSERT INTO " +
            table_ + " (lockstring, created, expires, locked_by) SELECT ?1 || '#' || n, " +
            now_sql +
            ", strftime('%Y-%m-%d %H:%M:%f','now','+3600 seconds'), ?3"
            " FROM s WHERE NOT EXISTS (SELECT 1 FROM " +
            table_ +
            " WHERE lockstring = ?1 || '#' || n) ORDER BY n LIMIT 1"
            " ON CONFLICT (lockstring) DO NOTHING RETURNING id");
    }

    void close() noexcept {
        adapter_.reset();  // its statements first: a handle with statements does not close
        for (sqlite3_stmt* st : {insert_, delete_, slot_, insert_many_, delete_many_, extra_})
            sqlite3_finalize(st);
        sqlite3_close_v2(db_);
        db_ = nullptr;
    }

    std::int64_t step_for_id(sqlite3_stmt* st) {
        std::int64_t id = 0;
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            id = sqlite3_column_int64(st, 0);
            rc = sqlite3_step(st);
        }
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) fail("INSERT");
        return id;
    }

    sqlite3_stmt* prepare(const std::string& sql) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) !=
            SQLITE_OK)
            fail("preparing a statement");
        return st;
    }

    void exec(const std::string& sql) {
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
            fail(sql.c_str());
    }

    [[noreturn]] void fail(const char* what) {
        throw std::runtime_error(std::string("raw SQLite client: ") + what + ": " +
                                 sqlite3_errmsg(db_));
    }

    // "<table><suffix>", quoted as table_ is.
    std::string beside(const std::string& suffix) const {
        return table_.substr(0, table_.size() - 1) + suffix + "\"";
    }
    std::string data_table() const { return beside("_data"); }
    bool data_made_ = false;
    std::string table_;
    std::string owner_;
    sqlite3* db_ = nullptr;
    sqlite3_stmt* insert_ = nullptr;
    sqlite3_stmt* delete_ = nullptr;
    sqlite3_stmt* slot_ = nullptr;
    sqlite3_stmt* insert_many_ = nullptr;
    sqlite3_stmt* delete_many_ = nullptr;
    std::string extra_sql_;
    sqlite3_stmt* extra_ = nullptr;
    std::unique_ptr<sqlock::sqlite::SqliteTransaction> adapter_;
};

std::unique_ptr<RawClient> connect(const std::string& path, const std::string& table) {
    return std::make_unique<RawSqlite>(path, table);
}

std::string file_url(const std::string& path) {
    return "sqlite://" + path;  // an absolute path: sqlite:///...
}

// The file, its rollback journal, its write-ahead log and the log's index.
void remove_files(const std::string& path) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::remove((path + suffix).c_str());
}

std::vector<std::pair<std::string, std::string>> facts() {
    return {{"sqlite", sqlite3_libversion()}};
}

}  // namespace

BenchHooks sqlite_bench_hooks() {
    BenchHooks hooks;
    hooks.connect = connect;
    hooks.file_url = file_url;
    hooks.remove_files = remove_files;
    hooks.facts = facts;
    hooks.raw_statements = "INSERT ... RETURNING id + DELETE";
    hooks.guard_statement_goal = 0.9;
    hooks.command_baseline =
        BenchHooks::CommandBaseline{SQLOCK_BENCH_SQLITE_RAWRUN, "raw sqlite3 C program"};
    return hooks;
}

}  // namespace sqlock_bench
