// The SQLite backend's test context (cmake/backend_tests.cmake): a new
// database file per fresh_database(), rows read through the SQLite C API;
// what the shared suites expect of SQLite's dialect.
#include <sqlite3.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_context.hpp"
#include "sqlock/sqlite/transaction.hpp"

namespace sqlock_test {

namespace {

std::string fresh_url(const std::string& dir, int n) {
    return "sqlite://" + dir + "/db" + std::to_string(n) + ".db";
}

std::string file_of(const std::string& url) {
    std::string path = url.substr(std::string("sqlite://").size());
    const std::size_t q = path.find('?');
    if (q != std::string::npos) path.resize(q);
    return path;
}

sqlite3* open_file(const std::string& url) {
    const std::string path = file_of(url);
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        std::string msg = h ? sqlite3_errmsg(h) : "out of memory";
        sqlite3_close(h);
        throw std::runtime_error("query: cannot open " + path + ": " + msg);
    }
    sqlite3_busy_timeout(h, 10000);
    return h;
}

// Every statement of `sql` in turn on `h` (like sqlite3_exec); the rows are
// the last statement's. Throws std::runtime_error, leaving `h` open.
std::vector<SqlRow> run_on(sqlite3* h, const std::string& sql) {
    std::vector<SqlRow> rows;
    const char* next = sql.c_str();
    int rc = SQLITE_DONE;
    while (next && *next) {
        sqlite3_stmt* st = nullptr;
        rc = sqlite3_prepare_v2(h, next, -1, &st, &next);
        if (rc != SQLITE_OK) break;
        if (!st) continue;  // only white space or a comment left
        rows.clear();
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            SqlRow row;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                if (sqlite3_column_type(st, c) == SQLITE_NULL) {
                    row.emplace_back();
                } else {
                    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
                    row.emplace_back(std::string(text, sqlite3_column_bytes(st, c)));
                }
            }
            rows.push_back(std::move(row));
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) break;
    }
    if (rc != SQLITE_DONE)
        throw std::runtime_error("query: " + std::string(sqlite3_errmsg(h)) + " in: " + sql);
    return rows;
}

std::vector<SqlRow> query(const std::string& url, const std::string& sql) {
    sqlite3* h = open_file(url);
    try {
        std::vector<SqlRow> rows = run_on(h, sql);
        sqlite3_close(h);
        return rows;
    } catch (...) {
        sqlite3_close(h);
        throw;
    }
}

// The application's transaction: an sqlite3* of its own on the file, as a
// program that guards its writes with sqlock/sqlite/transaction.hpp has it,
// the adapter keeping its statements for the handle (the guard's prepared
// once) and finalizing them before the handle closes.
class SqliteApp final : public AppTransaction {
  public:
    SqliteApp(const std::string& url, bool begin)
        : h_(open_file(url)), adapter_(h_, sqlock::sqlite::statements::kept) {
        if (begin) run_on(h_, "BEGIN");
    }
    ~SqliteApp() override {
        adapter_ = sqlock::sqlite::SqliteTransaction(h_);  // its kept statements finalized
        sqlite3_close(h_);
    }
    sqlock::Transaction& adapter() override { return adapter_; }
    std::vector<SqlRow> query(const std::string& sql) override { return run_on(h_, sql); }
    void commit() override { run_on(h_, "COMMIT"); }
    void rollback() override { run_on(h_, "ROLLBACK"); }

  private:
    sqlite3* h_;
    sqlock::sqlite::SqliteTransaction adapter_;
};

std::unique_ptr<AppTransaction> app_transaction(const std::string& url, bool begin) {
    return std::make_unique<SqliteApp>(url, begin);
}

// Committed write transactions recorded in the database's WAL file: frames
// of the WAL's current generation (salts equal to the header's) whose
// "database size after commit" field is set. Valid while nothing checkpoints
// the WAL (a test database stays far below the 1000-page auto-checkpoint).
int committed_transactions(const std::string& url) {
    std::ifstream in(file_of(url) + "-wal", std::ios::binary);
    const std::string wal((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto be32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<std::uint8_t>(wal[at + i]);
        return v;
    };
    if (wal.size() < 32) return 0;
    const std::uint32_t page = be32(8), salt1 = be32(16), salt2 = be32(20);
    int commits = 0;
    for (std::size_t at = 32; at + 24 + page <= wal.size(); at += 24 + page)
        if (be32(at + 8) == salt1 && be32(at + 12) == salt2 && be32(at + 4) != 0) ++commits;
    return commits;
}

// Another connection's write transaction (BEGIN IMMEDIATE), committed when
// the handle goes. It waits its turn: the holder under test may be writing
// (a renewal, its run record) at the moment the fault begins, and the fault
// is this handle holding the lock, not failing to get it.
std::shared_ptr<void> hold_write_lock(const std::string& url) {
    const std::string path = file_of(url);
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK ||
        sqlite3_busy_timeout(h, 30000) != SQLITE_OK ||
        sqlite3_exec(h, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
        std::string msg = h ? sqlite3_errmsg(h) : "out of memory";
        sqlite3_close(h);
        throw std::runtime_error("hold_write_lock: " + path + ": " + msg);
    }
    return std::shared_ptr<void>(h, [](void* p) {
        sqlite3* h = static_cast<sqlite3*>(p);
        sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr);
        sqlite3_close(h);
    });
}

std::string patient_url(const std::string& url) {
    return url + "?busy_timeout=60000";
}

// The whole schema (the table, its indexes, any trigger), and each column
// with its storage class: SQLite keeps a value of any type in any column.
BackendHooks::TableDumpSql table_dump_sql(const std::string& table) {
    return {"SELECT type, name, sql FROM sqlite_master ORDER BY type, name",
            "SELECT id, typeof(id), lockstring, created, typeof(created), expires, "
            "typeof(expires), locked_by, typeof(locked_by) FROM " +
                table + " ORDER BY id"};
}

// SQLite stores whatever it is given; sqlock compares the text.
std::vector<ForeignRow> odd_timestamp_rows() {
    const std::string past = "'2001-01-01 00:00:00'";
    return {
        {"ts-not-a-date", past, "'not a date'", "", ForeignRow::either},
        {"ts-empty", "''", "''", "", ForeignRow::expired},
        {"ts-integer", "0", "0", "", ForeignRow::either},
        {"ts-real", "1e308", "1e308", "", ForeignRow::either},
        {"ts-iso-t", past, "'2999-01-01T00:00:00Z'", "", ForeignRow::held},
        {"ts-impossible-date", past, "'2999-13-45 99:99:99'", "", ForeignRow::either},
        {"ts-blob", "X'00ff'", "X'00ff'", "", ForeignRow::either},
        {"ts-fullwidth", past, "'\xef\xbc\x92\xef\xbc\x90\xef\xbc\x93'", "", ForeignRow::either},
        {"ts-invalid-utf8", past, "CAST(X'ff' AS TEXT)", "CAST(X'c0af' AS TEXT)",
         ForeignRow::either},
    };
}

// No server: the waits are polled.
DoctorFacts doctor_facts(const std::string&) {
    return {"sqlite", {{"wake-ups", "polled"}}};
}

// One database a file: no schemas.
std::vector<HostileInput> hostile_inputs(const std::string&) {
    return {{"schema-qualified table on SQLite", sqlock::errc::invalid_argument, "", "ops.locks"}};
}

std::string epoch_ms_sql(const std::string& column) {
    return "CAST((julianday(" + column + ") - 2440587.5) * 86400000.0 AS INTEGER)";
}

}  // namespace

static BackendHooks::ClientCommand client_command(const std::string& url) {
    return {"sqlite3 -bail -cmd '.timeout 10000' \"$APP_DB\" \"$APP_SQL\"",
            {{"APP_DB", file_of(url)}}};
}

BackendHooks sqlite_test_hooks() {
    BackendHooks hooks;
    hooks.query = query;
    hooks.fresh_url = fresh_url;
    hooks.committed_transactions = committed_transactions;
    hooks.hold_write_lock = hold_write_lock;
    hooks.patient_url = patient_url;
    hooks.table_dump_sql = table_dump_sql;
    hooks.odd_timestamp_rows = odd_timestamp_rows;
    hooks.doctor_facts = doctor_facts;
    hooks.epoch_ms_sql = epoch_ms_sql;
    hooks.app_transaction = app_transaction;
    hooks.client_command = client_command;
    hooks.hostile_inputs = hostile_inputs;
    return hooks;
}

}  // namespace sqlock_test
