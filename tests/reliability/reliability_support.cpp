#include "reliability_support.hpp"

#include <cstdlib>

namespace reliability {

std::string dump_table(const sqlock_test::Database& db) {
    const auto dump_sql = sqlock_test::backend_context().hooks.table_dump_sql;
    if (!dump_sql)
        throw std::logic_error(sqlock_test::backend() +
                               ": no table_dump_sql hook (call have_table_dump() first)");
    const sqlock_test::BackendHooks::TableDumpSql sql = dump_sql(db.table);
    std::string out;
    for (const auto& row : query(db, sql.definition)) {
        out += "definition:";
        for (const auto& cell : row) out += " " + cell.value_or("<null>");
        out += "\n";
    }
    for (const auto& row : query(db, sql.rows)) {
        for (const auto& cell : row) out += (cell ? "[" + *cell + "]" : "NULL") + " ";
        out += "\n";
    }
    return out;
}

bool have_table_dump() {
    if (sqlock_test::backend_context().hooks.table_dump_sql) return true;
    sqlock_test::skip_test("comparing the lock table: no table_dump_sql hook");
    return false;
}

long env_long(const char* name, long fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    return std::strtol(v, nullptr, 10);
}

bool under_sanitizer() {
#if defined(SQLOCK_TEST_SANITIZED) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

}  // namespace reliability
