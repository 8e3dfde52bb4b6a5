#include "sqlite_error.hpp"

#include <mutex>
#include <unordered_map>

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

}  // namespace

void set_error_database_name(sqlite3* db, const std::string& name) {
    std::lock_guard<std::mutex> guard(names_mutex);
    if (name.empty())
        names().erase(db);
    else
        names()[db] = name;
}

std::string code_name(int rc) {
    switch (rc & 0xFF) {
        case SQLITE_BUSY:
            return "SQLITE_BUSY";
        case SQLITE_LOCKED:
            return "SQLITE_LOCKED";
        case SQLITE_READONLY:
            return "SQLITE_READONLY";
        case SQLITE_CANTOPEN:
            return "SQLITE_CANTOPEN";
        case SQLITE_NOTADB:
            return "SQLITE_NOTADB";
        case SQLITE_CORRUPT:
            return "SQLITE_CORRUPT";
        case SQLITE_PERM:
            return "SQLITE_PERM";
        case SQLITE_AUTH:
            return "SQLITE_AUTH";
        case SQLITE_IOERR:
            return "SQLITE_IOERR";
        case SQLITE_FULL:
            return "SQLITE_FULL";
        case SQLITE_CONSTRAINT:
            return "SQLITE_CONSTRAINT";
        case SQLITE_NOMEM:
            return "SQLITE_NOMEM";
        case SQLITE_ERROR:
            return "SQLITE_ERROR";
        default:
            return "SQLITE_" + std::to_string(rc);
    }
}

void throw_sqlite_error(sqlite3* db, int rc, const std::string& context) {
    std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    std::string where = database_name(db);
    std::string code = code_name(rc);
    switch (rc & 0xFF) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            throw error(errc::backend,
                        where +
                            " is busy: another connection held its write lock past the busy "
                            "timeout while " +
                            context + " (" + code + ")",
                        code);
        case SQLITE_CANTOPEN:
            // A local file is never unreachable: a setting to fix.
            throw error(errc::configuration,
                        "cannot open " + where + " while " + context + ": " + detail +
                            " (does its directory exist, and may this user write it?)",
                        code);
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT:
            throw error(errc::configuration, where + " is not a usable SQLite database: " + detail,
                        code);
        case SQLITE_READONLY:
        case SQLITE_PERM:
        case SQLITE_AUTH:
            throw error(errc::configuration,
                        where + " cannot be written while " + context + ": " + detail, code);
        default:
            if (detail.rfind("no such table", 0) == 0)
                throw error(errc::configuration,
                            "lock table missing in " + where + " (" + detail +
                                "); run `sqlock init` or Locker::init()",
                            code);
            throw error(errc::backend, where + ": " + detail + " while " + context, code);
    }
}

}  // namespace sqlock::detail::sqlite
