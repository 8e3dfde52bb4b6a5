#include "sqlite_doctor.hpp"

#include <memory>
#include <vector>

#include "contract/side_table_report.hpp"
#include "sqlite_connection.hpp"
#include "sqlite_statements.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::sqlite {

void diagnose(const SqliteUrl& url, const std::string& table, Diagnosis& out) {
    auto fact = [&](std::string key, std::string value) {
        out.facts.push_back({std::move(key), std::move(value)});
    };
    const std::string lock_table = "lock table " + table;
    // A database another connection holds locked right now is no
    // setting to fix: said as a fact, not a problem.
    auto busy = [](const error& e) { return e.backend_code().rfind("SQLITE_BUSY", 0) == 0; };
    std::unique_ptr<SqliteConnection> c;
    bool has_lock_table = false;
    try {
        c = std::make_unique<SqliteConnection>(
            url, table, /*create=*/false,
            std::make_shared<const StatementSet>(statement_set(Tables(table))));
        has_lock_table = c->has_table(table);
    } catch (const error& e) {
        if (busy(e)) {
            fact(lock_table, "unknown: the database is busy now");
            return;
        }
        fact(lock_table, "unknown: the file cannot be opened");
        out.problems.push_back(e.what());
        return;
    }
    if (!has_lock_table) {
        // The embedded default makes it on first use; elsewhere init
        // makes all three tables at once.
        if (url.is_embedded_default) {
            fact(lock_table, "missing; made on first use");
            return;
        }
        fact(lock_table, "missing");
        out.problems.push_back(lock_table + " does not exist: run `sqlock init`");
        return;
    }
    std::string access = "present";
    const Tables tables(table);
    std::vector<SideTableFacts> sides;
    try {
        for (SideTable side : tables.family.sides()) {
            const std::string& name = tables.family.side(side).name;
            sides.push_back({side, name, c->has_table(name), true, {}});
        }
        c->check_usable_without_writing();
    } catch (const error& e) {
        if (busy(e)) {
            fact(lock_table, "present; the database is busy now");
            return;
        }
        access = c->writable() ? "present; not usable" : "present; the file is read-only";
        out.problems.push_back(e.what());
    }
    fact(lock_table, access);
    // The file's access is every table's.
    const SideTableWording wording{access, access, ""};
    report_side_table_facts(sides, wording, out);
    for (std::string& p : side_table_problems(sides, lock_table, wording))
        out.problems.push_back(std::move(p));
}

}  // namespace sqlock::detail::sqlite
