#include "reliability_support.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>

namespace reliability {

std::string dump_table(const sqlock_test::Database& db) {
    const auto dump_sql = sqlock_test::backend_context().hooks.table_dump_sql;
    if (!dump_sql)
        throw std::logic_error(sqlock_test::backend() +
                               ": no table_dump_sql hook (declare [needs:table_dump_sql])");
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
    return sqlock_test::declares_need("table_dump_sql", "have_table_dump()");
}

void check_expired_agrees_with_list_expired(sqlock::Locker& locker) {
    std::set<std::string> expired;
    for (const auto& info : locker.list_expired()) expired.insert(info.name);
    for (const auto& info : locker.list()) {
        INFO(info.name << ": expires '" << info.expires << "' left " << info.seconds_left);
        CHECK(info.expired() == (expired.count(info.name) == 1));
    }
}

Bystanders::Bystanders(const sqlock_test::Database& db)
    : holder_(db.open()),
      sentinel_(holder_.lock("sentinel", sqlock_test::lock_options().expires(1h))) {
    sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                  " (lockstring, created, expires, locked_by) VALUES ('old', "
                                  "'2001-01-01 00:00:00', '2001-01-01 00:00:01', '{\"pid\":1}')");
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
