// The SQLite backend's test context (cmake/backend_tests.cmake): a new
// database file per fresh_database(), rows read through the SQLite C API.
#include <sqlite3.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "backend_context.hpp"

namespace sqlock_test {

namespace {

std::string fresh_url(const std::string& dir, int n) {
    return "sqlite://" + dir + "/db" + std::to_string(n) + ".db";
}

std::vector<SqlRow> query(const std::string& url, const std::string& sql) {
    std::string path = url.substr(std::string("sqlite://").size());
    const std::size_t q = path.find('?');
    if (q != std::string::npos) path.resize(q);
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        std::string msg = h ? sqlite3_errmsg(h) : "out of memory";
        sqlite3_close(h);
        throw std::runtime_error("query: cannot open " + path + ": " + msg);
    }
    sqlite3_busy_timeout(h, 10000);
    // Every statement of `sql` in turn (like sqlite3_exec); the rows are the
    // last statement's.
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
    std::string msg = sqlite3_errmsg(h);
    sqlite3_close(h);
    if (rc != SQLITE_DONE) throw std::runtime_error("query: " + msg + " in: " + sql);
    return rows;
}

}  // namespace

BackendHooks sqlite_test_hooks() {
    BackendHooks hooks;
    hooks.query = query;
    hooks.fresh_url = fresh_url;
    return hooks;
}

}  // namespace sqlock_test
