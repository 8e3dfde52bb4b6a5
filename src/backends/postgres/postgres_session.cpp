#include "postgres_session.hpp"

#include <chrono>

namespace sqlock::detail::postgres {

std::vector<SessionSetting> session_settings(const PgTarget& target, int server_version) {
    std::vector<SessionSetting> out;
    // Every transaction of sqlock's reads what was committed before each of
    // its statements: a statement that runs after the name's turn was
    // granted must see the previous holder's work (read_committed says
    // more). Under REPEATABLE READ or SERIALIZABLE (set as a default by
    // some shops), its single statements would also fail with 40001 where
    // READ COMMITTED waits and reads the newest row.
    out.push_back({"default_transaction_isolation", "read committed"});
    // sqlock bounds every round trip itself (the target's timeout, and a
    // heartbeat's tighter deadlines); a lower server-wide statement_timeout
    // or lock_timeout would cancel an acquisition waiting its turn behind a
    // busy name. A statement the client has given up on (abandoned with its
    // connection) is still ended by the server a second after the client's
    // bound, rather than left waiting for a lock.
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(target.timeout +
                                                                          std::chrono::seconds(1))
                        .count();
    out.push_back({"statement_timeout", std::to_string(ms) + "ms"});
    out.push_back({"lock_timeout", "0"});
    // Pooled connections and the listener's session are idle by design,
    // between acquisitions and while a waiter sleeps. (Unknown before 14,
    // where setting it would fail the session.)
    if (server_version >= 140000) out.push_back({"idle_session_timeout", "0"});
    // A single statement is a transaction too (PostgreSQL 17 and later).
    if (server_version >= 170000) out.push_back({"transaction_timeout", "0"});
    // A lock table holds few live rows and turns over many. Empty after a
    // vacuum, or with a primary key grown large by ever-growing ids, it
    // makes the planner find "WHERE id = $1" by reading the whole table,
    // dead rows included, on every release and renewal (measured with 8
    // processes: 9% of our throughput on a table vacuumed empty; on a
    // long-used one, a client without this made a third of our cycles;
    // docs/postgres-production.md). Every statement that looks up rows has
    // an index to use, so we tell the planner to take it; the few that read
    // a whole table (counts for metrics) then read it through an index,
    // somewhat slower.
    out.push_back({"enable_seqscan", "off"});
    return out;
}

std::string session_setup_sql(const PgTarget& target, int server_version) {
    std::string sql;
    // The values are ours (numbers, keywords): no quote in them.
    for (const SessionSetting& s : session_settings(target, server_version))
        sql += "SET " + s.name + " = '" + s.value + "';\n";
    return sql;
}

}  // namespace sqlock::detail::postgres
