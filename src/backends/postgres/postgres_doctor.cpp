#include "postgres_doctor.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <pqxx/nontransaction>
#include <pqxx/notification>
#include <pqxx/result>
#include <pqxx/transaction>
#include <utility>

#include "base/host_resolution.hpp"
#include "contract/server_report.hpp"
#include "postgres_conninfo.hpp"
#include "postgres_error.hpp"
#include "postgres_link.hpp"
#include "postgres_session.hpp"
#include "postgres_watchdog.hpp"

namespace sqlock::detail::postgres {
namespace {

class Probe final : public pqxx::notification_receiver {
  public:
    Probe(pqxx::connection_base& conn, const std::string& channel)
        : pqxx::notification_receiver(conn, channel) {}
    void operator()(const std::string&, int) override { heard = true; }
    bool heard = false;
};

// The core doctor's facts, and the server's own.
struct Server : ServerFacts {
    bool in_recovery = false;
    bool read_only = false;
    std::string synchronous_commit;
    std::string synchronous_standbys;
    bool seqscan_enabled = true;  // enable_seqscan as a session of this role starts
    long streaming_standbys = 0;  // pg_stat_replication's rows (counted without pg_monitor)
    // What a session of this role and database starts with (pg_settings'
    // reset_val, with its unit), for the settings sqlock's sessions set
    // (postgres_session.hpp) or leave: by name.
    std::map<std::string, std::string> defaults;
};

// The settings of a session of sqlock's own, and those it leaves as the
// server says that bear on its sessions.
const char* const reported_defaults[] = {"default_transaction_isolation",
                                         "default_transaction_read_only",
                                         "statement_timeout",
                                         "lock_timeout",
                                         "idle_in_transaction_session_timeout",
                                         "idle_session_timeout",
                                         "transaction_timeout"};

// Those defaults, as a session of this role and database starts (not what
// one before us may have SET on a pooled server session).
std::map<std::string, std::string> read_defaults(pqxx::connection_base& conn) {
    pqxx::nontransaction tx(conn);
    std::string names;
    for (const char* name : reported_defaults)
        names += std::string(names.empty() ? "" : ",") + "'" + name + "'";
    pqxx::result r = tx.exec(
        "SELECT name, reset_val, coalesce(unit, '') FROM pg_settings"
        " WHERE name IN (" +
        names + ")");
    std::map<std::string, std::string> out;
    for (const auto& row : r) {
        std::string value = row[1].as<std::string>();
        if (value != "0" && !row[2].as<std::string>().empty()) value += row[2].as<std::string>();
        out[row[0].as<std::string>()] = value;
    }
    return out;
}

// Whether the current user holds every one of the privileges sqlock needs
// on table `n` (has_table_privilege with a list is true when it holds any).
std::string all_table_privileges(const std::string& n) {
    std::string all;
    for (const char* p : {"SELECT", "INSERT", "UPDATE", "DELETE"})
        all +=
            std::string(all.empty() ? "" : " AND ") + "has_table_privilege(" + n + ", '" + p + "')";
    return all;
}

// Whether table $N (regclass text) exists, and the grants on it and, with
// `sequence`, on its id's sequence: two booleans.
std::string table_grants_sql(const std::string& n, bool sequence) {
    std::string grants = all_table_privileges(n);
    if (sequence)
        grants += " AND pg_get_serial_sequence(" + n +
                  ", 'id') IS NOT NULL AND has_sequence_privilege(pg_get_serial_sequence(" + n +
                  ", 'id'), 'USAGE')";
    return "to_regclass(" + n + ") IS NOT NULL, CASE WHEN to_regclass(" + n +
           ") IS NULL THEN false ELSE " + grants + " END";
}

// One statement: the settings, the grants on the table and the tables
// beside it, and the database's clock between two readings of ours (the
// difference is good to half the round trip).
Server read_server(const PgTarget& t, pqxx::connection_base& conn) {
    pqxx::nontransaction tx(conn);
    // $1 the lock table, then each side table's existence and grants.
    std::vector<std::string> params = {t.family.table().quoted};
    std::string sides_sql;
    for (SideTable side : t.family.sides()) {
        params.push_back(t.family.side(side).quoted);
        sides_sql +=
            ", " + table_grants_sql("$" + std::to_string(params.size()), kind_of(side).serial_id);
    }
    ClockWindow clock;
    pqxx::result r = tx.exec_params(
        "SELECT current_setting('server_version'), pg_is_in_recovery(),"
        " current_setting('transaction_read_only') = 'on', current_setting('synchronous_commit'),"
        " current_setting('synchronous_standby_names'), current_user::text,"
        " to_regclass($1) IS NOT NULL,"
        " CASE WHEN to_regclass($1) IS NULL THEN false"
        "  ELSE " +
            all_table_privileges("$1") +
            " END,"
            " CASE WHEN to_regclass($1) IS NULL OR pg_get_serial_sequence($1, 'id') IS NULL THEN "
            "false"
            "  ELSE has_sequence_privilege(pg_get_serial_sequence($1, 'id'), 'USAGE') END,"
            " extract(epoch FROM clock_timestamp())::float8" +
            sides_sql +
            // What a session starts with (role, database, server), not
            // what one before us may have SET on a pooled server session.
            ", (SELECT reset_val FROM pg_settings WHERE name = 'enable_seqscan') = 'on'"
            ", (SELECT count(*) FROM pg_stat_replication)",
        pqxx::prepare::make_dynamic_params(params));
    clock.answered();
    Server s;
    s.version = r[0][0].as<std::string>();
    s.in_recovery = r[0][1].as<bool>();
    s.read_only = r[0][2].as<bool>();
    s.synchronous_commit = r[0][3].as<std::string>();
    s.synchronous_standbys = r[0][4].as<std::string>();
    s.user = r[0][5].as<std::string>();
    s.table_exists = r[0][6].as<bool>();
    // The grants on the table, and on its id's sequence.
    s.table_usable = r[0][7].as<bool>() && r[0][8].as<bool>();
    int column = 10;
    for (SideTable side : t.family.sides()) {
        const bool exists = r[0][column++].as<bool>();
        const bool grants = r[0][column++].as<bool>();
        s.sides.push_back({side, t.family.side(side).name, exists, grants, {}});
    }
    s.seqscan_enabled = r[0][column++].as<bool>();
    s.streaming_standbys = r[0][column].as<long>();
    s.clock = clock.against(r[0][9].as<double>());
    return s;
}

long backend_pid(pqxx::transaction_base& tx) {
    return tx.exec("SELECT pg_backend_pid()")[0][0].as<long>();
}

// Whether server sessions last only a transaction: `a` runs a statement, then
// `b` opens a transaction and, while it is open, `a` runs another. Directly
// or through a session pooler, `a` keeps its server session and `b` has
// another; through a transaction pooler, `b` is handed the session `a` just
// gave back (PgBouncer reuses the most recent one), or `a` moves. A pooler in
// statement mode refuses the transaction outright.
bool sessions_move(pqxx::connection_base& a, pqxx::connection_base& b) {
    long first, second, other;
    {
        pqxx::nontransaction tx(a);
        first = backend_pid(tx);
    }
    try {
        pqxx::work held(b);
        other = backend_pid(held);
        pqxx::nontransaction tx(a);
        second = backend_pid(tx);
    } catch (const pqxx::broken_connection&) {
        throw;
    } catch (const pqxx::sql_error&) {
        return true;  // "transaction blocks not allowed in statement mode"
    }
    return other == first || second != first;
}

// Other clients of a pooler can take the session `a` gives back before `b`
// does, hiding the move: try a few times. Directly or through a session
// pooler no attempt can show a move, so this only removes false negatives.
bool sessions_move_ever(pqxx::connection_base& a, pqxx::connection_base& b) {
    for (int attempt = 0; attempt < 5; ++attempt)
        if (sessions_move(a, b)) return true;
    return false;
}

// Whether a notification sent on `b` reaches a LISTEN on `a` within 2 s.
bool notifications_arrive(pqxx::connection_base& a, pqxx::connection_base& b) {
    const std::string channel = "sqlock_doctor_" + std::to_string(getpid());
    Probe probe(a, channel);
    {
        pqxx::nontransaction tx(b);
        tx.exec_params("SELECT pg_notify($1, 'probe')", channel);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!probe.heard && std::chrono::steady_clock::now() < deadline)
        a.await_notification(0, 100000);
    return probe.heard;
}

// Runs one probe on the links `a` and `b`, bounded like every other round
// trip: a server that does not answer within the Locker's timeout has both
// sockets shut down (postgres_watchdog.hpp), and the probe fails as a
// connection error instead of hanging.
template <typename F>
auto bounded_probe(const PgTarget& t, Link& a, Link& b, const char* doing, F&& f) {
    const auto deadline = std::chrono::steady_clock::now() + t.timeout;
    Armed armed_a(a.get().sock(), deadline);
    Armed armed_b(b.get().sock(), deadline);
    return guarded(t, doing, {}, std::forward<F>(f));
}

}  // namespace

namespace {

// Whether a long-used lock table may be read by sequential scans on this
// path. sqlock sets enable_seqscan itself only on sessions it prepares
// statements on (session_setup in postgres_connection.cpp).
std::string sequential_scans(const PgTarget& t, const Server& s, bool moves) {
    const std::string see = " (see docs/postgres-production.md)";
    const std::string role_setting = "ALTER ROLE " + s.user + " SET enable_seqscan = off";
    if (!moves && t.session_bound())
        return "avoided (sqlock sets enable_seqscan = off on its sessions)";
    if (!s.seqscan_enabled) return "avoided (enable_seqscan = off for role " + s.user + ")";
    if (t.session_bound())
        return "possible on a long-used lock table, and sqlock's SET enable_seqscan = off lands "
               "on the pooler's server sessions until it notices the pooler: add "
               "pooler=transaction to the URL, then " +
               role_setting + see;
    return "possible on a long-used lock table: through this pooler sqlock cannot set "
           "enable_seqscan; " +
           role_setting + see;
}

}  // namespace

namespace {

std::string default_of(const Server& s, const std::string& name) {
    auto it = s.defaults.find(name);
    return it == s.defaults.end() ? "(unknown here)" : it->second;
}

// "default_transaction_isolation = serializable, ..." as a session starts.
std::string defaults_text(const Server& s) {
    std::string out;
    for (const char* name : reported_defaults)
        if (s.defaults.count(name))
            out += (out.empty() ? "" : ", ") + std::string(name) + " = " + default_of(s, name);
    return out;
}

// What sqlock's sessions set (where they are its own: no transaction pooler)
// against those defaults, and what it leaves and why.
std::string sessions_text(const PgTarget& t, const Server& s, bool own, int server_version) {
    if (!own)
        return "set nothing (a pooler's server sessions are shared): its transactions of several "
               "statements begin READ COMMITTED, and a statement rolled back for a lost race "
               "(40001, 40P01, 55P03) is sent again; statement_timeout = " +
               default_of(s, "statement_timeout") +
               " and lock_timeout = " + default_of(s, "lock_timeout") +
               " can end a statement (a connection error or busy, which a wait waits through), "
               "idle_session_timeout the pooler's idle server sessions";
    std::string set;
    for (const SessionSetting& setting : session_settings(t, server_version)) {
        if (setting.name == "enable_seqscan") continue;  // its own fact
        set += (set.empty() ? "" : ", ") + setting.name + " = " + setting.value;
        if (s.defaults.count(setting.name) && default_of(s, setting.name) != setting.value)
            set += " (default " + default_of(s, setting.name) + ")";
    }
    return "set " + set + "; left as they are: default_transaction_read_only = " +
           default_of(s, "default_transaction_read_only") +
           " (a read-only server is waited through, never written), "
           "idle_in_transaction_session_timeout = " +
           default_of(s, "idle_in_transaction_session_timeout") +
           " (never idle inside a transaction)";
}

// With a list of hosts, what each one is: a primary and the standbys that
// stream from it (pg_stat_replication: their names for every role; their
// address and state for roles with pg_monitor), or a standby.
void describe_hosts(const PgTarget& t, Diagnosis& out) {
    for (const HostEntry& host : each_host(t.conninfo)) {
        std::string value;
        try {
            Link link(t, host.conninfo);
            const auto deadline = std::chrono::steady_clock::now() + t.timeout;
            Armed armed(link.get().sock(), deadline);
            value = guarded(t, "asking a host of the list what it is", host.label, [&] {
                pqxx::nontransaction tx(link.get());
                pqxx::result r = tx.exec(
                    "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on',"
                    " (SELECT string_agg(coalesce(application_name, '?') ||"
                    "  CASE WHEN state IS NULL THEN '' ELSE ' (' || coalesce(client_addr::text,"
                    "  'local') || ', ' || state || ', ' || sync_state || ')' END, ', '"
                    "  ORDER BY application_name) FROM pg_stat_replication),"
                    " (SELECT count(*) FROM pg_stat_replication WHERE state IS NULL)");
                const bool standby = r[0][0].as<bool>();
                const bool read_only = r[0][1].as<bool>();
                const std::string streams = r[0][2].is_null() ? "" : r[0][2].as<std::string>();
                if (standby) return std::string("standby (in recovery, read-only)");
                std::string v = read_only ? "primary, read-only (default_transaction_read_only)"
                                          : "primary (read-write)";
                v += streams.empty() ? "; no standby streams from it"
                                     : "; standbys streaming from it: " + streams;
                if (r[0][3].as<long>() > 0) v += " (their state needs pg_monitor)";
                return v;
            });
        } catch (const error& e) {
            value = std::string("unreachable: ") + e.what();
        }
        out.facts.push_back({"host " + host.label, value});
    }
}

}  // namespace

void diagnose(const PgTarget& t, Diagnosis& out) {
    // First, as a connection does: a name that does not resolve fails the
    // connections below, and a slow resolver is otherwise invisible.
    const LookupPlan plan = lookup_plan(t.conninfo);
    LookupReport lookups;
    if (plan.hosts.empty())
        lookups.fact = "none by sqlock (numeric addresses or sockets, or left to libpq)";
    else
        lookups = report_lookups(plan.hosts, t.timeout, plan.wait_for_all);
    Link a(t);
    Link b(t);
    Server s = bounded_probe(t, a, b, "reading the server's settings", [&] {
        Server read = read_server(t, a.get());
        read.defaults = read_defaults(a.get());
        return read;
    });
    // Statement mode closes a client connection that opens a transaction:
    // take the URL's word for it.
    const bool moves = t.pool_mode == PoolMode::statement ||
                       bounded_probe(t, a, b, "probing for a connection pooler",
                                     [&] { return sessions_move_ever(a.get(), b.get()); });
    // Only where sessions stay put: through a transaction pooler, a LISTEN
    // would linger on a server session someone else gets next. A standby
    // refuses LISTEN and NOTIFY alike.
    const bool writable = !s.in_recovery && !s.read_only;
    const bool pushes = !moves && t.session_bound() && writable &&
                        bounded_probe(t, a, b, "probing release notifications",
                                      [&] { return notifications_arrive(a.get(), b.get()); });

    auto fact = [&](std::string key, std::string value) {
        out.facts.push_back({std::move(key), std::move(value)});
    };
    auto problem = [&](std::string line) { out.problems.push_back(t.redact(line)); };
    s.lookups = lookups;
    s.role = s.in_recovery ? "standby (in recovery, read-only)"
             : s.read_only ? "read-only (default_transaction_read_only)"
                           : "primary (read-write)";
    if (!writable)
        s.read_only_problem =
            "the server is read-only (a standby?): locks cannot be taken here; point the URL "
            "at the primary, or list every host and add target_session_attrs=read-write";
    s.table = t.table;
    report_server(s, out, problem);

    fact("pooler in URL", pool_mode_name(t.pool_mode));
    fact("pooler detected", moves ? "transaction or statement pooling (server sessions last one "
                                    "transaction)"
                                  : "none, or session pooling");
    fact("wake-ups", pushes
                         ? "pushed (LISTEN/NOTIFY, checked just now), re-checked every 5 s"
                         : "polled by the first in line (1 ms doubling to 25 ms, with jitter; to "
                           "100 ms without a queue table)");
    fact("sequential scans", sequential_scans(t, s, moves));
    fact("server defaults", defaults_text(s));
    fact("sqlock's sessions",
         sessions_text(t, s, !moves && t.session_bound(), PQserverVersion(a.raw())));
    fact("synchronous replication", s.synchronous_standbys.empty()
                                        ? "none (synchronous_standby_names is empty)"
                                        : "synchronous_standby_names = '" + s.synchronous_standbys +
                                              "', synchronous_commit = " + s.synchronous_commit);
    describe_hosts(t, out);
    const AccessWording access{
        "role", "CREATE on the schema",
        [](std::size_t tables, bool serial_ids) {
            return tables == 1
                       ? std::string("GRANT SELECT, INSERT, UPDATE, DELETE ON it") +
                             (serial_ids ? " and USAGE ON SEQUENCE of its id" : "")
                       : std::string("GRANT SELECT, INSERT, UPDATE, DELETE ON each") +
                             (serial_ids ? " and USAGE ON the sequence of each id column" : "");
        },
        ", then grant the roles that use the lock table the same on it (docs/SECURITY.md)"};
    report_tables(s, access, out, problem);

    if (moves && session_bound(t.pool_mode))
        problem(
            "a pooler in transaction or statement mode is in front of the server but the URL "
            "does not say so: add pooler=transaction to the URL (prepared statements and "
            "LISTEN/NOTIFY do not work through it)");
    if (!moves && t.session_bound() && writable && !pushes)
        problem(
            "a release notification sent through a second connection did not arrive within "
            "2 s: waiters will only notice releases by re-checking every 5 s");
    // A crash failover to an asynchronous standby loses the commits it had
    // not received: a lock taken then vanishes while its holder runs, and
    // the sequence hands its fencing id out again (postgres-production.md,
    // measured under Patroni). The server cannot tell whether a failover
    // would promote one; that it could is reason enough to say so.
    if (!s.in_recovery && s.synchronous_standbys.empty() && s.streaming_standbys > 0)
        problem(std::to_string(s.streaming_standbys) + " standby" +
                (s.streaming_standbys == 1 ? " streams" : "s stream") +
                " from this primary asynchronously (synchronous_standby_names is empty): a "
                "crash failover to one can lose the last locks taken, and another host can then "
                "take a name that is still held; name them in synchronous_standby_names "
                "(Patroni: synchronous_mode: true)");
    if (!s.synchronous_standbys.empty() &&
        (s.synchronous_commit == "off" || s.synchronous_commit == "local"))
        problem("synchronous_commit is '" + s.synchronous_commit +
                "' though synchronous standbys are configured: a lock taken just before a "
                "failover can vanish; set it to 'on' (or remote_apply) for the role sqlock uses");
}

}  // namespace sqlock::detail::postgres
