#include "mariadb_doctor.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/host_resolution.hpp"
#include "mariadb_connection.hpp"
#include "mariadb_link.hpp"
#include "mariadb_statements.hpp"

namespace sqlock::detail::mariadb {
namespace {

std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

const std::string& text(const std::optional<std::string>& v) {
    static const std::string empty;
    return v ? *v : empty;
}

// "10.11.6-MariaDB-..." -> {10, 11, 6}.
void version_numbers(const std::string& version, int* major, int* minor, int* patch) {
    *major = *minor = *patch = 0;
    std::sscanf(version.c_str(), "%d.%d.%d", major, minor, patch);
}

// "SELECT COUNT(*) ..." of the tables named `table` ("db.t" or "t"): 1 when
// it exists (information_schema shows only tables the user has some
// privilege on).
std::string count_tables(const std::string& table) {
    const std::size_t dot = table.find('.');
    const std::string schema =
        dot == std::string::npos ? "DATABASE()" : sql::literal(table.substr(0, dot));
    const std::string name = dot == std::string::npos ? table : table.substr(dot + 1);
    return "(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + schema +
           " AND TABLE_NAME = " + sql::literal(name) + ")";
}

}  // namespace

void diagnose(const MariaTarget& t, Diagnosis& out) {
    using wall = std::chrono::system_clock;
    // First, as a connection does: a name that does not resolve fails the
    // connection below, and a slow resolver is otherwise invisible.
    std::vector<std::string> names_to_look_up;
    for (const MariaHost& h : t.url.hosts)
        if (!host_to_look_up(t.url, h).empty()) names_to_look_up.push_back(h.host);
    LookupReport lookups;
    if (names_to_look_up.empty())
        lookups.fact = "none by sqlock (a numeric address or a socket)";
    else
        lookups = report_lookups(names_to_look_up, t.timeout);
    MariaConnection c(std::shared_ptr<const MariaTarget>(&t, [](const MariaTarget*) {}),
                      std::make_shared<const StatementSet>(sql::statement_set(t)));
    const std::size_t dot = t.table.find('.');
    const std::string schema =
        dot == std::string::npos ? "DATABASE()" : sql::literal(t.table.substr(0, dot));
    const std::string name = dot == std::string::npos ? t.table : t.table.substr(dot + 1);
    const auto before = wall::now();
    auto rs = c.run_sql(
        "SELECT VERSION(), @@innodb_autoinc_lock_mode, @@read_only, CURRENT_USER(), "
        "UNIX_TIMESTAMP(UTC_TIMESTAMP(6)), "
        "(SELECT COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
            schema + " AND TABLE_NAME = " + sql::literal(name) +
            " AND COLUMN_NAME = 'lockstring'), "
            "(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
            schema + " AND TABLE_NAME = " + sql::literal(name) + "), " + count_tables(t.runs) +
            ", " + count_tables(t.pauses),
        "reading the server's settings");
    const auto after = wall::now();
    const auto& r = rs.back().rows.at(0);
    const std::string version = text(r.at(0));
    const bool mariadb = version.find("MariaDB") != std::string::npos;
    const std::string autoinc_mode = text(r.at(1));
    const bool read_only = text(r.at(2)) == "1";
    const std::string user = text(r.at(3));
    // UNIX_TIMESTAMP reads its argument in the session time zone, UTC.
    const double db_ms = std::strtod(text(r.at(4)).c_str(), nullptr) * 1000.0;
    const std::string collation = text(r.at(5));
    const bool table_exists = text(r.at(6)) != "0";
    // information_schema lists only tables this user has a privilege on.
    const bool runs_exist = text(r.at(7)) != "0" || c.table_is_there(t.quoted_runs);
    const bool pauses_exist = text(r.at(8)) != "0" || c.table_is_there(t.quoted_pauses);
    auto ms = [](wall::time_point p) {
        return std::chrono::duration<double, std::milli>(p.time_since_epoch()).count();
    };
    const double difference = db_ms - (ms(before) + ms(after)) / 2.0;
    const double uncertainty = (ms(after) - ms(before)) / 2.0;

    std::string access_problem;
    std::vector<std::string> missing;  // privileges, as check_access() names them
    if (table_exists) {
        try {
            missing = c.missing_privileges();
            if (!missing.empty()) c.check_access();  // its message: one line for all
        } catch (const error& e) {
            access_problem = e.what();
        }
    }
    // Which tables lack some: "... on the run history table" is that one's,
    // a bare "SELECT" the lock table's.
    auto lacks = [&](const std::string& on) {
        for (const auto& m : missing)
            if (on.empty() ? m.find(" on the ") == std::string::npos
                           : m.find(" on the " + on) != std::string::npos)
                return true;
        return false;
    };

    int major, minor, patch;
    version_numbers(version, &major, &minor, &patch);
    auto fact = [&](std::string key, std::string value) {
        out.facts.push_back({std::move(key), std::move(value)});
    };
    const std::string table = "lock table " + t.table;
    fact("host name lookup", lookups.fact);
    fact("server version", version + (mariadb ? " (MariaDB: tested)" : " (MySQL: not tested)"));
    fact("server role", read_only ? "read-only (read_only = ON)" : "read-write");
    // The defaults a session starts with, beside what sqlock's own set
    // (mariadb_link.cpp) and what it leaves.
    const std::string isolation_var =
        mariadb ? "@@GLOBAL.tx_isolation" : "@@GLOBAL.transaction_isolation";
    const std::string statement_var =
        mariadb ? "@@GLOBAL.max_statement_time" : "@@GLOBAL.max_execution_time";
    auto ds = c.run_sql("SELECT " + isolation_var + ", " + statement_var +
                            ", @@GLOBAL.innodb_lock_wait_timeout, @@GLOBAL.wait_timeout" +
                            (mariadb ? ", @@GLOBAL.idle_transaction_timeout" : ""),
                        "reading the server's defaults");
    const auto& d = ds.back().rows.at(0);
    fact("server defaults", "transaction isolation = " + text(d.at(0)) + ", " +
                                (mariadb ? "max_statement_time = " : "max_execution_time = ") +
                                text(d.at(1)) + ", innodb_lock_wait_timeout = " + text(d.at(2)) +
                                ", wait_timeout = " + text(d.at(3)) +
                                (mariadb ? ", idle_transaction_timeout = " + text(d.at(4)) : ""));
    fact("sqlock's sessions",
         "set READ COMMITTED, innodb_lock_wait_timeout = " +
             // The Locker's timeout in whole seconds, rounded up, as the
             // session sets it.
             std::to_string(std::max<long long>(1, (t.timeout.count() + 999) / 1000)) +
             (mariadb ? ", max_statement_time = 0" : "") +
             ", time_zone = +00:00; left as they are: read_only (a read-only server is waited "
             "through, never written), wait_timeout (a session the server closed is a broken "
             "link, which the pool opens again)" +
             (mariadb ? ", idle_transaction_timeout (never idle inside a transaction)" : ""));
    fact("fencing ids",
         "AUTO_INCREMENT drawn under a per-name GET_LOCK turn "
         "(innodb_autoinc_lock_mode = " +
             autoinc_mode + ")");
    fact("wake-ups",
         "polled by the first in line (1 ms doubling to 25 ms, with jitter; to 100 ms "
         "without a queue table); releases "
         "in this process "
         "wake at once");
    fact("clock difference", (difference >= 0 ? "+" : "") + fixed(difference, 1) +
                                 " ms (database minus this host, +/- " + fixed(uncertainty, 1) +
                                 " ms)");
    fact(table, !table_exists ? "missing"
                : lacks("")   ? "present; " + user + " lacks privileges"
                : access_problem.empty() || !missing.empty()
                    ? "present (lockstring collation " + collation + "); " + user + " may use it"
                    : "present; " + user + " lacks privileges");
    // The tables beside it (missing_privileges() probed those that exist).
    auto side_fact = [&](const std::string& what, const std::string& name, bool exists) {
        fact(what + " " + name, !exists       ? "missing"
                                : lacks(what) ? "present; " + user + " lacks privileges"
                                              : "present; " + user + " may use it");
    };
    side_fact("run history table", t.runs, runs_exist);
    side_fact("pauses table", t.pauses, pauses_exist);

    auto problem = [&](std::string line) { out.problems.push_back(t.redact(line)); };
    for (const std::string& p : lookups.problems) problem(p);
    if (read_only)
        problem(
            "the server is read-only (read_only = ON): locks cannot be taken here; point the "
            "URL at the primary");
    if (mariadb && (major < 10 || (major == 10 && (minor < 2 || (minor == 2 && patch < 4)))))
        problem("MariaDB " + version +
                " forgets the AUTO_INCREMENT counter on restart: ids (fencing tokens) can repeat; "
                "upgrade to 10.6 or later");
    if (!mariadb && major < 8)
        problem("MySQL " + version +
                " forgets the AUTO_INCREMENT counter on restart: ids (fencing tokens) can repeat; "
                "upgrade to 8.0 or later");
    if (std::fabs(difference) > 2000.0)
        problem("this host's clock is " + fixed(std::fabs(difference) / 1000.0, 1) + " s " +
                (difference > 0 ? "behind" : "ahead of") +
                " the database's: leases are timed by the database, but times this host logs "
                "will not match; check NTP");
    if (!table_exists)
        problem(table + " does not exist: run `sqlock init` (needs CREATE on the database)");
    else if (!access_problem.empty())
        problem(access_problem);
    // A lock table made before sqlock had them: locking works, the rest not.
    if (table_exists && !runs_exist)
        problem("run history table " + t.runs + " does not exist (" + table +
                " predates it): `sqlock run` records no runs and --once-per fails; run `sqlock "
                "init` (needs CREATE on the database), then " +
                t.grant_hint());
    if (table_exists && !pauses_exist)
        problem("pauses table " + t.pauses + " does not exist (" + table +
                " predates it): `sqlock pause` fails and nothing is paused; run `sqlock init` "
                "(needs CREATE on the database), then " +
                t.grant_hint());
    if (table_exists && collation != "utf8mb4_nopad_bin" && collation != "utf8mb4_0900_bin" &&
        collation != "binary")
        problem("the lockstring column of " + table + " has collation " + collation +
                ", which ignores trailing spaces" +
                (collation.find("_ci") != std::string::npos ? " and case" : "") +
                ": names differing only so are one lock; ALTER it to " +
                (mariadb ? "utf8mb4_nopad_bin" : "utf8mb4_0900_bin"));
}

}  // namespace sqlock::detail::mariadb
