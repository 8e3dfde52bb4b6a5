#include "sqlite_error.hpp"

#include <mutex>
#include <unordered_map>
#include <utility>

#include "base/error_table.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::sqlite {
namespace {

std::mutex names_mutex;
std::unordered_map<sqlite3*, std::string>& names() {
    static std::unordered_map<sqlite3*, std::string> map;
    return map;
}

std::string database_name(sqlite3* db) {
    std::lock_guard<std::mutex> guard(names_mutex);
    auto it = names().find(db);
    return it == names().end() ? std::string("SQLite database") : it->second;
}

// The names of the primary result codes sqlock meets.
const std::pair<int, const char*> code_names[] = {
    {SQLITE_BUSY, "SQLITE_BUSY"},
    {SQLITE_LOCKED, "SQLITE_LOCKED"},
    {SQLITE_READONLY, "SQLITE_READONLY"},
    {SQLITE_CANTOPEN, "SQLITE_CANTOPEN"},
    {SQLITE_NOTADB, "SQLITE_NOTADB"},
    {SQLITE_CORRUPT, "SQLITE_CORRUPT"},
    {SQLITE_PERM, "SQLITE_PERM"},
    {SQLITE_AUTH, "SQLITE_AUTH"},
    {SQLITE_IOERR, "SQLITE_IOERR"},
    {SQLITE_FULL, "SQLITE_FULL"},
    {SQLITE_CONSTRAINT, "SQLITE_CONSTRAINT"},
    {SQLITE_NOMEM, "SQLITE_NOMEM"},
    {SQLITE_ERROR, "SQLITE_ERROR"},
};

constexpr const char* busy =
    "{where} is busy: another connection held its write lock past the busy timeout while "
    "{context} ({code})";
constexpr const char* unusable = "{where} is not a usable SQLite database: {detail}";
constexpr const char* not_writable = "{where} cannot be written while {context}: {detail}";

// By primary result code. Busy is a backend error, never "the lock is held".
const ErrorRow errors[] = {
    {SQLITE_BUSY, nullptr, errc::backend, busy},
    {SQLITE_LOCKED, nullptr, errc::backend, busy},
    // A local file is never unreachable: a setting to fix.
    {SQLITE_CANTOPEN, nullptr, errc::configuration,
     "cannot open {where} while {context}: {detail} (does its directory exist, and may this "
     "user write it?)"},
    {SQLITE_NOTADB, nullptr, errc::configuration, unusable},
    {SQLITE_CORRUPT, nullptr, errc::configuration, unusable},
    {SQLITE_READONLY, nullptr, errc::configuration, not_writable},
    {SQLITE_PERM, nullptr, errc::configuration, not_writable},
    {SQLITE_AUTH, nullptr, errc::configuration, not_writable},
};
// Any other code: a missing table by its message, else the database's own words.
const ErrorRow missing_table{
    0, nullptr, errc::configuration,
    "lock table missing in {where} ({detail}); run `sqlock init` or Locker::init()"};
const ErrorRow other_error{0, nullptr, errc::backend, "{where}: {detail} while {context}"};

}  // namespace

void set_error_database_name(sqlite3* db, const std::string& name) {
    std::lock_guard<std::mutex> guard(names_mutex);
    if (name.empty())
        names().erase(db);
    else
        names()[db] = name;
}

std::string code_name(int rc) {
    for (const auto& named : code_names)
        if (named.first == (rc & 0xFF)) return named.second;
    return "SQLITE_" + std::to_string(rc);
}

void throw_sqlite_error(sqlite3* db, int rc, const std::string& context) {
    const std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    const std::string code = code_name(rc);
    const MessageWords words{
        {"where", database_name(db)}, {"context", context}, {"detail", detail}, {"code", code}};
    const ErrorRow* row = find_error_row(errors, rc & 0xFF);
    if (!row) row = detail.rfind("no such table", 0) == 0 ? &missing_table : &other_error;
    throw error_of_row(*row, words.fill(row->message), code);
}

}  // namespace sqlock::detail::sqlite
