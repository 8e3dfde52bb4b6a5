#include "mariadb_doctor.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "base/host_resolution.hpp"
#include "contract/server_report.hpp"
#include "mariadb_connection.hpp"
#include "mariadb_link.hpp"
#include "mariadb_statements.hpp"

namespace sqlock::detail::mariadb {
namespace {

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

// "PT5S" of "key = PT5S" in Galera's provider options ("k = v; k = v"),
// or "" when it is not there.
std::string provider_option(const std::string& options, const std::string& key) {
    const std::size_t at = options.find(key + " = ");
    if (at == std::string::npos) return "";
    const std::size_t from = at + key.size() + 3, end = options.find(';', from);
    return options.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

// "name" -> value of SHOW's rows.
std::string shown(const std::vector<StatementResult>& rs, const std::string& name) {
    for (const StatementResult& r : rs)
        for (const auto& row : r.rows)
            if (row.size() >= 2 && row[0] && *row[0] == name && row[1]) return *row[1];
    return "";
}

// With a list of hosts, what each one is: a fact per host, as a connection
// to it alone finds it (within a share of db_timeout: a host that does not
// answer costs the doctor that).
void describe_hosts(const MariaTarget& t, Diagnosis& out) {
    const std::vector<MariaHost>& hosts = t.url.hosts;
    if (hosts.size() < 2) return;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        std::string value;
        try {
            Link link(t, i, Link::clock::now() + t.timeout);
            const auto rs = link.run(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment',"
                " 'wsrep_cluster_status', 'wsrep_cluster_size')",
                Link::clock::now() + t.timeout, "reading a host's state");
            value = link.galera()
                        ? "ready: Galera node " + shown(rs, "wsrep_local_state_comment") +
                              " in the " + shown(rs, "wsrep_cluster_status") + " component of " +
                              shown(rs, "wsrep_cluster_size") + " nodes"
                        : "ready (" + link.server_version() + ", no Galera)";
        } catch (const error& e) {
            std::string what = e.what();
            const std::size_t bracket = what.rfind(" [");
            if (bracket != std::string::npos) what.resize(bracket);
            value = "not used: " + what;
        }
        out.facts.push_back({"host " + hosts[i].label(), t.redact(value)});
    }
}

// A Galera node's part (the connection `c` is to one): the cluster as this
// node sees it, the settings that bear on locks, and what breaks them.
void describe_galera(MariaConnection& c, const MariaTarget& t, Diagnosis& out) {
    auto rs = c.run_sql(
        "SELECT @@wsrep_sync_wait, @@auto_increment_increment, @@auto_increment_offset,"
        " @@innodb_flush_log_at_trx_commit, @@binlog_format, @@wsrep_OSU_method,"
        " @@wsrep_provider_options, @@wsrep_node_name;"
        " SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_cluster_status',"
        " 'wsrep_local_state_comment', 'wsrep_ready');" +
            sql::guard_is_current(t),
        "reading the Galera node's settings");
    const auto& v = rs.at(0).rows.at(0);
    const std::string sync_wait = text(v.at(0)), increment = text(v.at(1)), offset = text(v.at(2)),
                      flush = text(v.at(3)), binlog = text(v.at(4)), osu = text(v.at(5)),
                      provider = text(v.at(6)), node = text(v.at(7));
    const std::string size = shown(rs, "wsrep_cluster_size");
    const std::string suspect = provider_option(provider, "evs.suspect_timeout");
    const std::string inactive = provider_option(provider, "evs.inactive_timeout");
    const auto& guard_rows = rs.back().rows;
    const bool guard_outdated =
        !guard_rows.empty() && guard_rows[0].at(0) && *guard_rows[0].at(0) == "0";
    auto fact = [&](std::string key, std::string value) {
        out.facts.push_back({std::move(key), t.redact(value)});
    };
    auto problem = [&](std::string line) { out.problems.push_back(t.redact(line)); };
    fact("galera cluster",
         size + " nodes in the " + shown(rs, "wsrep_cluster_status") + " component; this node (" +
             c.host_label() + (node.empty() ? "" : ", " + node) + ") " +
             shown(rs, "wsrep_local_state_comment") + ", wsrep_ready " + shown(rs, "wsrep_ready"));
    fact("galera settings",
         "wsrep_sync_wait = " + sync_wait + ", auto_increment_increment = " + increment +
             ", auto_increment_offset = " + offset + ", innodb_flush_log_at_trx_commit = " + flush +
             ", binlog_format = " + binlog + ", wsrep_OSU_method = " + osu +
             ", evs.suspect_timeout = " + suspect + ", evs.inactive_timeout = " + inactive);
    fact("galera reads",
         "sqlock's own reads of lock rows, runs, pauses and leaders wait for the cluster "
         "(wsrep_sync_wait for the statement), the queue's do not" +
             std::string(sync_wait == "0"
                             ? "; a job's own reads of what another node wrote do not either "
                               "(wsrep_sync_wait = 0): its guard's write, not a read, keeps it "
                               "from committing after a take-over"
                             : ""));
    fact("galera failover",
         "a node that stops answering is dropped by the others after evs.suspect_timeout (" +
             suspect +
             "), during which the cluster commits nothing; a lease must outlast that, the "
             "cluster's view change, and a renewal moving to the next host of the URL");
    if (!size.empty() && std::atoi(size.c_str()) < 3)
        problem("the Galera cluster has " + size +
                " node(s): losing one leaves no majority, and no node takes locks until it is "
                "back; run three or more");
    if (flush != "1")
        problem("innodb_flush_log_at_trx_commit = " + flush +
                " on this Galera node: nodes that crash together (a power loss) lose their last "
                "commits, and with them a lock a holder believes it has, and fencing ids are "
                "handed out again; set it to 1 on every node");
    if (binlog != "ROW")
        problem("binlog_format = " + binlog +
                ": Galera replicates rows only; set binlog_format = ROW");
    if (osu != "TOI")
        problem("wsrep_OSU_method = " + osu +
                ": `sqlock init` makes its tables and its guard on this node only; init with TOI");
    const FamilyName& fencing = t.family.side(SideTable::fencing);
    if (!c.table_is_there(fencing.quoted))
        problem("the fencing register " + fencing.name +
                " does not exist: on Galera every acquisition needs it (turns and ids); run "
                "`sqlock init`, then " +
                t.grant_hint());
    if (guard_outdated)
        problem("the guard " + t.family.guard().name +
                " predates Galera's check (it only reads the lock row, which a take-over on "
                "another node does not wait for): run `sqlock init` as the table's owner, "
                "which makes it again");
}

// First, as a connection does: a name that does not resolve fails the
// connection, and a slow resolver is otherwise invisible.
LookupReport look_up_hosts(const MariaTarget& t) {
    std::vector<std::string> names_to_look_up;
    for (const MariaHost& h : t.url.hosts)
        if (!host_to_look_up(t.url, h).empty()) names_to_look_up.push_back(h.host);
    LookupReport lookups;
    if (names_to_look_up.empty())
        lookups.fact = "none by sqlock (a numeric address or a socket)";
    else
        lookups = report_lookups(names_to_look_up, t.timeout);
    return lookups;
}

// What one statement reads of the server, the lock table and the tables
// beside it, and the database's clock: the core doctor's facts, and the
// server's own.
struct Server : ServerFacts {
    bool mariadb = false;
    int major = 0, minor = 0, patch = 0;
    std::string autoinc_mode;
    bool read_only = false;
    std::string collation;  // of the lockstring column
};

Server read_server(MariaConnection& c, const MariaTarget& t) {
    const std::size_t dot = t.table.find('.');
    const std::string schema =
        dot == std::string::npos ? "DATABASE()" : sql::literal(t.table.substr(0, dot));
    const std::string name = dot == std::string::npos ? t.table : t.table.substr(dot + 1);
    std::string side_counts;
    for (SideTable side : common_side_tables)
        side_counts += ", " + count_tables(t.family.side(side).name);
    ClockWindow clock;
    auto rs = c.run_sql(
        "SELECT VERSION(), @@innodb_autoinc_lock_mode, @@read_only, CURRENT_USER(), "
        "UNIX_TIMESTAMP(UTC_TIMESTAMP(6)), "
        "(SELECT COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
            schema + " AND TABLE_NAME = " + sql::literal(name) +
            " AND COLUMN_NAME = 'lockstring'), "
            "(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
            schema + " AND TABLE_NAME = " + sql::literal(name) + ")" + side_counts,
        "reading the server's settings");
    clock.answered();
    const auto& r = rs.back().rows.at(0);
    Server s;
    s.version = text(r.at(0));
    s.mariadb = s.version.find("MariaDB") != std::string::npos;
    version_numbers(s.version, &s.major, &s.minor, &s.patch);
    s.autoinc_mode = text(r.at(1));
    s.read_only = text(r.at(2)) == "1";
    s.user = text(r.at(3));
    // UNIX_TIMESTAMP reads its argument in the session time zone, UTC.
    s.clock = clock.against(std::strtod(text(r.at(4)).c_str(), nullptr));
    s.collation = text(r.at(5));
    s.table_exists = text(r.at(6)) != "0";
    // information_schema lists only tables this user has a privilege on.
    for (SideTable side : common_side_tables) {
        const FamilyName& n = t.family.side(side);
        s.sides.push_back({side,
                           n.name,
                           text(r.at(7 + s.sides.size())) != "0" || c.table_is_there(n.quoted),
                           true,
                           {}});
    }
    return s;
}

// This user's access to the lock table and the tables beside it, as
// check_access() probes it: what each lacks. A probe that failed otherwise
// is a problem of its own, and the tables count as unusable.
void read_access(MariaConnection& c, Server& s, const std::function<void(std::string)>& problem) {
    if (!s.table_exists) return;
    std::vector<MariaConnection::MissingPrivilege> missing;
    try {
        missing = c.missing_privileges();
    } catch (const error& e) {
        problem(e.what());
        s.table_usable = false;
        return;
    }
    for (const MariaConnection::MissingPrivilege& m : missing) {
        if (!m.side) {
            s.table_usable = false;
            s.table_lacking.push_back(m.privilege);
            continue;
        }
        for (SideTableFacts& side : s.sides)
            if (side.side == *m.side) {
                side.usable = false;
                side.lacking.push_back(m.privilege);
            }
    }
    // A queue this user may not even read is not probed (has() says no:
    // it is there but unusable, and waits poll instead): the report must
    // not call it usable.
    for (SideTableFacts& side : s.sides)
        if (side.side == SideTable::queue && side.exists && !c.has(SideTable::queue))
            side.usable = false;
}

// The defaults a session starts with, beside what sqlock's own set
// (mariadb_link.cpp) and what it leaves.
void describe_sessions(MariaConnection& c, const MariaTarget& t, bool mariadb, Diagnosis& out) {
    const std::string isolation_var =
        mariadb ? "@@GLOBAL.tx_isolation" : "@@GLOBAL.transaction_isolation";
    const std::string statement_var =
        mariadb ? "@@GLOBAL.max_statement_time" : "@@GLOBAL.max_execution_time";
    auto ds = c.run_sql("SELECT " + isolation_var + ", " + statement_var +
                            ", @@GLOBAL.innodb_lock_wait_timeout, @@GLOBAL.wait_timeout" +
                            (mariadb ? ", @@GLOBAL.idle_transaction_timeout" : ""),
                        "reading the server's defaults");
    const auto& d = ds.back().rows.at(0);
    out.facts.push_back(
        {"server defaults", "transaction isolation = " + text(d.at(0)) + ", " +
                                (mariadb ? "max_statement_time = " : "max_execution_time = ") +
                                text(d.at(1)) + ", innodb_lock_wait_timeout = " + text(d.at(2)) +
                                ", wait_timeout = " + text(d.at(3)) +
                                (mariadb ? ", idle_transaction_timeout = " + text(d.at(4)) : "")});
    out.facts.push_back(
        {"sqlock's sessions",
         "set READ COMMITTED, innodb_lock_wait_timeout = " +
             // The Locker's timeout in whole seconds, rounded up, as the
             // session sets it.
             std::to_string(std::max<long long>(1, (t.timeout.count() + 999) / 1000)) +
             (mariadb ? ", max_statement_time = 0" : "") +
             ", time_zone = +00:00; left as they are: read_only (a read-only server is waited "
             "through, never written), wait_timeout (a session the server closed is a broken "
             "link, which the pool opens again)" +
             (mariadb ? ", idle_transaction_timeout (never idle inside a transaction)" : "")});
}

// How fencing ids are drawn on this server.
std::string fencing_ids(MariaConnection& c, const MariaTarget& t, const std::string& autoinc_mode) {
    const std::string& fencing = t.family.side(SideTable::fencing).name;
    if (c.galera())
        return "AUTO_INCREMENT, interleaved across the nodes (auto_increment_increment, "
               "_offset), each name's ordered by its row of the fencing register " +
               fencing +
               ", written in the transaction that takes it (certified); turns are row locks "
               "there, as GET_LOCK is one node's (innodb_autoinc_lock_mode = " +
               autoinc_mode + ")";
    if (c.protocol().row_turns)
        return "AUTO_INCREMENT drawn under a per-name turn, a row lock on " + fencing +
               " (the server refused GET_LOCK) (innodb_autoinc_lock_mode = " + autoinc_mode + ")";
    return "AUTO_INCREMENT drawn under a per-name GET_LOCK turn "
           "(innodb_autoinc_lock_mode = " +
           autoinc_mode + ")";
}

// The problems of the server's version: ids that can repeat.
void version_problems(const Server& s, const std::function<void(std::string)>& problem) {
    if (s.mariadb &&
        (s.major < 10 || (s.major == 10 && (s.minor < 2 || (s.minor == 2 && s.patch < 4)))))
        problem("MariaDB " + s.version +
                " forgets the AUTO_INCREMENT counter on restart: ids (fencing tokens) can repeat; "
                "upgrade to 10.6 or later");
    if (!s.mariadb && s.major < 8)
        problem("MySQL " + s.version +
                " forgets the AUTO_INCREMENT counter on restart: ids (fencing tokens) can repeat; "
                "upgrade to 8.0 or later");
}

// The problem of a lockstring column whose collation makes two names one.
void collation_problem(const Server& s, const std::string& table,
                       const std::function<void(std::string)>& problem) {
    if (s.table_exists && s.collation != "utf8mb4_nopad_bin" && s.collation != "utf8mb4_0900_bin" &&
        s.collation != "binary")
        problem("the lockstring column of " + table + " has collation " + s.collation +
                ", which ignores trailing spaces" +
                (s.collation.find("_ci") != std::string::npos ? " and case" : "") +
                ": names differing only so are one lock; ALTER it to " +
                (s.mariadb ? "utf8mb4_nopad_bin" : "utf8mb4_0900_bin"));
}

}  // namespace

void diagnose(const MariaTarget& t, Diagnosis& out) {
    const std::function<void(std::string)> problem = [&](std::string line) {
        out.problems.push_back(t.redact(line));
    };
    LookupReport lookups = look_up_hosts(t);  // before a connection needs them
    MariaConnection c(std::shared_ptr<const MariaTarget>(&t, [](const MariaTarget*) {}),
                      std::make_shared<const StatementSet>(sql::statement_set(t)));
    Server s = read_server(c, t);
    s.lookups = std::move(lookups);
    s.version += s.mariadb ? " (MariaDB: tested)" : " (MySQL: not tested)";
    s.role = s.read_only ? "read-only (read_only = ON)" : "read-write";
    if (s.read_only)
        s.read_only_problem =
            "the server is read-only (read_only = ON): locks cannot be taken here; point the "
            "URL at the primary";
    s.table = t.table;
    s.table_note = " (lockstring collation " + s.collation + ")";
    report_server(s, out, problem);
    read_access(c, s, problem);

    auto fact = [&](std::string key, std::string value) {
        out.facts.push_back({std::move(key), std::move(value)});
    };
    describe_sessions(c, t, s.mariadb, out);
    fact("fencing ids", fencing_ids(c, t, s.autoinc_mode));
    fact("wake-ups",
         "polled by the first in line (1 ms doubling to 25 ms, with jitter; to 100 ms "
         "without a queue table); releases in this process wake at once");
    const AccessWording access{"user", "CREATE on the database",
                               [&](std::size_t, bool) { return t.grant_hint(); },
                               ", then " + t.grant_hint()};
    report_tables(s, access, out, problem);
    describe_hosts(t, out);
    if (c.galera()) describe_galera(c, t, out);
    version_problems(s, problem);
    collation_problem(s, "lock table " + t.table, problem);
}

}  // namespace sqlock::detail::mariadb
