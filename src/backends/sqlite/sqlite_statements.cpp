#include "sqlite_statements.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "base/validate.hpp"
#include "contract/table_family.hpp"

namespace sqlock::detail {
extern const char* const sqlite_schema_sql;  // sql/sqlite/schema.sql, compiled in
}

namespace sqlock::detail::sqlite {
namespace {

// 'now' is fixed for the duration of one sqlite3_step(), so every time in a
// statement agrees.
constexpr const char* now_sql = "strftime('%Y-%m-%d %H:%M:%f','now')";
constexpr const char* columns_sql =
    "id, lockstring, created, expires, locked_by, "
    "round((julianday(expires) - julianday('now')) * 86400000.0) / 1000.0";

// Whether a row still counts, for per-row checks. julianday() also reads
// timestamps other programs write (ISO 'T' separator, no fraction) and is
// NULL for text that is no time at all: such a row counts as expired, so it
// can be taken over and reaped instead of blocking forever.
constexpr const char* live = "julianday(expires) > julianday('now')";
constexpr const char* dead = "coalesce(julianday(expires) <= julianday('now'), 1)";
// Whether a pause is in force.
constexpr const char* pause_live =
    "(paused_until IS NULL OR julianday(paused_until) > julianday('now'))";
// Whether a pause has ended: exactly the rows pause_live leaves out (an
// until no date function can read is not in force, so it is reaped too).
constexpr const char* pause_ended =
    "(paused_until IS NOT NULL AND coalesce(julianday(paused_until) <= julianday('now'), 1))";

// The columns of a run (statement_set.hpp), from `where` of the runs `r`
// joined to their lock rows `l`, oldest first, or newest first up to `limit`
// (a parameter or a number) when one is given. A run still marked running
// whose lock row is gone or expired reads as lost, ended at the row's
// expiry while it is there.
std::string runs_select(const std::string& t, const std::string& r, const std::string& where,
                        const std::string& limit) {
    const bool newest_first = !limit.empty();
    const std::string order = newest_first ? "started DESC, id DESC" : "started, id";
    const std::string inner =
        newest_first ? "r.started DESC, r.id DESC LIMIT " + limit : "r.started, r.id";
    return "SELECT id, name, window_start, host, pid, username, program, fencing_id, started,"
           " CASE WHEN outcome <> 'running' THEN ended WHEN lid IS NULL OR llive THEN NULL"
           " ELSE lexp END,"
           " CASE WHEN outcome <> 'running' THEN outcome WHEN llive THEN 'running'"
           " ELSE 'lost' END, exit_status, exit_signal,"
           " round((julianday(CASE WHEN outcome <> 'running' THEN ended WHEN llive THEN 'now'"
           " ELSE lexp END) - julianday(started)) * 86400000.0) / 1000.0, " +
           run_attempt_column(r, "q") +
           " FROM (SELECT r.*, l.id AS lid, l.expires AS lexp,"
           " julianday(l.expires) > julianday('now') AS llive FROM " +
           r + " AS r LEFT JOIN " + t + " AS l ON l.id = r.fencing_id WHERE " + where +
           " ORDER BY " + inner + ") AS q ORDER BY " + order;
}

// The runs of history table `r` (as "r") that pruning deletes: started more
// than ?1 (a duration) ago, not still going on under a live lock row of
// `t`, and not a --once-per run whose window may still be current (windows
// are at most 366 days): pruning the run that did the window would let its
// job run again in it.
std::string prunable_runs(const std::string& t) {
    return "r.started < strftime('%Y-%m-%d %H:%M:%f','now', '-' || ?1) AND NOT"
           " (r.outcome = 'running' AND EXISTS (SELECT 1 FROM " +
           t +
           " AS l WHERE l.id = r.fencing_id AND julianday(l.expires) > julianday('now')))"
           " AND (r.window_start IS NULL OR"
           " r.window_start < strftime('%Y-%m-%d %H:%M:%f','now','-366 days'))";
}

}  // namespace

std::string literal(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '\'';
    // Runs without a quote copied whole: the guard writes one per call.
    for (std::size_t from = 0; from < text.size();) {
        const std::size_t quote = text.find('\'', from);
        const std::size_t end = quote == std::string::npos ? text.size() : quote + 1;
        out.append(text, from, end - from);
        if (quote != std::string::npos) out += '\'';
        from = end;
    }
    out += '\'';
    return out;
}

Tables::Tables(const std::string& name)
    // The expiry index was named before names were fitted; SQLite has no
    // limit to fit them to.
    : family(name, quote_table_name,
             {{common_side_tables.begin(), common_side_tables.end()}, false}),
      guard_check(quote_table_name(fit_identifier(table_basename(name), "_guard_check"))) {}

std::string seconds_modifier(duration d) {
    return "+" + duration_modifier(d.count());
}

std::string duration_modifier(std::int64_t ms) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%lld.%03lld seconds", ms < 0 ? "-" : "",
                  static_cast<long long>(std::llabs(ms) / 1000),
                  static_cast<long long>(std::llabs(ms) % 1000));
    return buf;
}

std::string sql_text(Sql kind, const Tables& tables) {
    const std::string& t = tables.family.table().quoted;
    const std::string& q = tables.family.side(SideTable::queue).quoted;
    const std::string now = now_sql;
    const std::string cols = columns_sql;
    switch (kind) {
        case Sql::insert:
            return "INSERT INTO " + t + " (lockstring, created, expires, locked_by) VALUES (?1, " +
                   now + ", strftime('%Y-%m-%d %H:%M:%f','now', ?2), ?3)" +
                   " ON CONFLICT (lockstring) DO NOTHING RETURNING id, created, expires";

        case Sql::delete_expired:
            return "DELETE FROM " + t + " WHERE lockstring = ?1 AND " + dead;

        case Sql::keep_until_min_hold:
            return "UPDATE " + t + " SET expires = strftime('%Y-%m-%d %H:%M:%f', created, ?3)" +
                   " WHERE id = ?1 AND locked_by = ?2" +
                   " AND strftime('%Y-%m-%d %H:%M:%f', created, ?3) > " + now;

        case Sql::renew:
            return "UPDATE " + t + " SET expires = strftime('%Y-%m-%d %H:%M:%f','now', ?3)" +
                   " WHERE id = ?1 AND locked_by = ?2 AND " + live + " RETURNING " + cols;

        case Sql::delete_exact:
            // coalesce: rows written by other programs may have a NULL locked_by.
            return "DELETE FROM " + t + " WHERE id = ?1 AND coalesce(locked_by, '') = ?2";

        case Sql::insert_lowest_slot:
            // Slots 1..?2 of semaphore ?1, lowest free first. If the lowest
            // one not held is an expired row, this conflicts and inserts
            // nothing; the caller then reclaims expired slots and retries.
            return "WITH RECURSIVE slot(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM slot"
                   " WHERE n < ?2) INSERT INTO " +
                   t + " (lockstring, created, expires, locked_by) SELECT ?1 || '#' || n, " + now +
                   ", strftime('%Y-%m-%d %H:%M:%f','now', ?3), ?4 FROM slot WHERE NOT EXISTS"
                   " (SELECT 1 FROM " +
                   t + " WHERE lockstring = ?1 || '#' || n AND " + live +
                   ") ORDER BY n LIMIT 1 ON CONFLICT (lockstring) DO NOTHING RETURNING " + cols;

        case Sql::delete_expired_slots:
            return "WITH RECURSIVE slot(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM slot"
                   " WHERE n < ?2) DELETE FROM " +
                   t + " WHERE lockstring IN (SELECT ?1 || '#' || n FROM slot) AND " + dead;

        case Sql::first_to_expire_slot:
            return "WITH RECURSIVE slot(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM slot"
                   " WHERE n < ?2) SELECT " +
                   cols + " FROM " + t +
                   " WHERE lockstring IN (SELECT ?1 || '#' || n FROM slot)"
                   " ORDER BY expires LIMIT 1";

        case Sql::odd_expired_ids:
            // Rows that are expired by their time but not by text comparison
            // (written by other programs: ISO 'T' separators, invalid dates,
            // garbage) cannot be found through the index. A read scan, done
            // outside the write lock, once per purge.
            return "SELECT id FROM " + t + " WHERE NOT coalesce(expires <= " + now + ", 0) AND " +
                   dead + " LIMIT ?1";

        case Sql::delete_id_if_dead:
            return "DELETE FROM " + t + " WHERE id = ?1 AND " + dead;

        case Sql::waiters_ahead:
            // ?1 name, ?2 ticket: a live waiter queued before it, or any
            // at all once the ticket's own place has lapsed (its waiter,
            // back from a freeze, has left the line).
            return "SELECT 1 FROM " + q + " AS q WHERE lockstring = ?1 AND " + live +
                   " AND (id < ?2 OR NOT EXISTS (SELECT 1 FROM " + q +
                   " AS own WHERE own.id = ?2 AND julianday(own.expires) > julianday('now')))"
                   " LIMIT 1";
        case Sql::set_waiters:
            return "SELECT 1 FROM " + q +
                   " WHERE lockstring IN (SELECT value FROM json_each(?1)) AND " + live +
                   " LIMIT 1";
        case Sql::delete_set:
            return "DELETE FROM " + t +
                   " WHERE id IN (SELECT value FROM json_each(?1)) AND coalesce(locked_by, '') = "
                   "?2";
        case Sql::insert_set:
            // "WHERE true": an INSERT ... SELECT with ON CONFLICT needs a
            // WHERE, or SQLite reads ON as a join's.
            return "INSERT INTO " + t +
                   " (lockstring, created, expires, locked_by) SELECT value, " + now +
                   ", strftime('%Y-%m-%d %H:%M:%f','now', ?2), ?3 FROM json_each(?1)" +
                   " WHERE true ORDER BY key ON CONFLICT (lockstring) DO NOTHING" +
                   " RETURNING id, lockstring, created, expires";
        case Sql::delete_expired_set:
            return "DELETE FROM " + t +
                   " WHERE lockstring IN (SELECT value FROM json_each(?1)) AND " + dead;
        case Sql::shared_marker_extend:
            return "UPDATE " + t + " SET expires = max(expires, ?2)" +
                   " WHERE lockstring = ?1 AND locked_by = ?3 AND " + live;
        // Holder rows are found by a range of the unique index: lockstrings
        // compare bytewise (BINARY), so [prefix, upper) is exactly the names
        // starting with the prefix.
        case Sql::shared_marker_drop:
            return "DELETE FROM " + t + " WHERE lockstring = ?1 AND locked_by = ?4 AND NOT EXISTS" +
                   " (SELECT 1 FROM " + t + " AS h WHERE h.lockstring >= ?2 AND h.lockstring < ?3" +
                   " AND julianday(h.expires) > julianday('now'))";
        case Sql::shared_marker_shrink:
            return "UPDATE " + t + " SET expires = (SELECT max(h.expires) FROM " + t +
                   " AS h WHERE h.lockstring >= ?2 AND h.lockstring < ?3" +
                   " AND julianday(h.expires) > julianday('now'))" +
                   " WHERE lockstring = ?1 AND locked_by = ?4";
        case Sql::has_table:
            return "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1";
        case Sql::count:
            break;
    }
    return {};
}

StatementSet statement_set(const Tables& tables) {
    const std::string& t = tables.family.table().quoted;
    const std::string& r = tables.family.side(SideTable::runs).quoted;
    const std::string& p = tables.family.side(SideTable::pauses).quoted;
    const std::string now = now_sql;
    using Mode = QueryText::Mode;
    StatementSet set("SQLite");

    std::string side_tables;
    for (SideTable side : tables.family.sides())
        side_tables += (side_tables.empty() ? "SELECT " : ", ") +
                       std::string(
                           "EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                           "name = ") +
                       literal(table_basename(tables.family.side(side).name)) + ")";
    set.add(Query::side_tables, side_tables);

    // 'now' is one instant within the statement: seconds, then its
    // milliseconds ("SS.SSS" from the 4th character).
    set.add(Query::now_millis,
            "SELECT CAST(strftime('%s','now') AS INTEGER) * 1000 +"
            " CAST(substr(strftime('%f','now'), 4) AS INTEGER)");

    const std::string run_columns =
        " (name, window_start, host, pid, username, program, fencing_id, started, outcome) ";
    const std::string run_values = "?1, NULLIF(?2, ''), ?3, ?4, ?5, ?6, ?7, " + now + ", 'running'";
    set.add(Query::start_run,
            "INSERT INTO " + r + run_columns + "VALUES (" + run_values + ") RETURNING id");

    // Under the write lock (one transaction): the run is inserted only when
    // no pause is in force, then the run's id or the pause is read. The
    // second step asks only the first's answer (changes(): whether the
    // insert wrote a row), never the clock again: 'now' is fixed per step,
    // so a pause ending between the two would be in force for the insert
    // and over for a second look. The pause row the insert saw is still
    // there, as nobody writes meanwhile.
    set.add(Query::start_run_unless_paused,
            "INSERT INTO " + r + run_columns + "SELECT " + run_values +
                " WHERE NOT EXISTS (SELECT 1 FROM " + p + " WHERE name = ?1 AND " + pause_live +
                ");\n"
                "SELECT CASE WHEN changes() > 0 THEN last_insert_rowid() END, x.name,"
                " x.paused_by, x.reason, x.created, x.paused_until FROM (SELECT 1) LEFT JOIN " +
                p + " AS x ON x.name = ?1 AND changes() = 0",
            Mode::transaction);

    // One statement under SQLite's write lock: nobody takes the lock over
    // between the check and the record. Only a run of this lock row, and
    // not while the row has another holder (postgres_statements.cpp).
    set.add(
        Query::finish_run,
        "UPDATE " + r + " SET ended = " + now +
            ", exit_status = ?4, exit_signal = ?5, outcome = CASE WHEN EXISTS (SELECT 1"
            " FROM " +
            t + " WHERE id = ?2 AND locked_by = ?3 AND " + live +
            ") THEN ?6 ELSE 'lost' END WHERE id = ?1 AND fencing_id = ?2 AND outcome = 'running'"
            " AND NOT EXISTS (SELECT 1 FROM " +
            t + " WHERE id = ?2 AND coalesce(locked_by, '') <> ?3) RETURNING outcome");

    set.add(Query::finished_run, "SELECT outcome FROM " + r +
                                     " WHERE id = ?1 AND fencing_id = ?2 AND outcome <> "
                                     "'running' AND EXISTS (SELECT 1 FROM " +
                                     t + " WHERE id = ?2 AND locked_by = ?3)");

    set.add(Query::window_runs,
            runs_select(t, r, "r.name = ?1 AND r.window_start = ?2 AND r.started >= ?2", ""));
    // ?1 NULL: every run, whatever its start says.
    const std::string since =
        "(?1 IS NULL OR r.started >= strftime('%Y-%m-%d %H:%M:%f','now', '-' || ?1))";
    set.add(Query::history_all, runs_select(t, r, since, "?2"));
    set.add(Query::history_name, runs_select(t, r, "r.name = ?3 AND " + since, "?2"));
    set.add(Query::last_success, runs_select(t, r, "r.name = ?1 AND r.outcome = 'succeeded'", "1"));

    set.add(Query::run_counts,
            "SELECT r.name, CASE WHEN r.outcome <> 'running' THEN r.outcome WHEN"
            " julianday(l.expires) > julianday('now') THEN 'running' ELSE 'lost' END,"
            " COUNT(*) FROM " +
                r + " AS r LEFT JOIN " + t +
                " AS l ON l.id = r.fencing_id GROUP BY 1, 2 ORDER BY 1, 2");
    // The lock rows. substr() compares the prefix literally: no LIKE
    // wildcards to escape.
    const std::string cols = columns_sql;
    set.add(Query::lock_row, "SELECT " + cols + " FROM " + t + " WHERE lockstring = ?1");
    set.add(Query::lock_rows, "SELECT " + cols + " FROM " + t +
                                  " WHERE (?1 = '' OR substr(lockstring, 1, length(?1)) = ?1)" +
                                  " AND (?2 = 0 OR " + dead + ") ORDER BY lockstring");
    set.add(Query::lock_held,
            "SELECT 1 FROM " + t + " WHERE id = ?1 AND locked_by = ?2 AND " + live);
    set.add(Query::lock_counts, std::string("SELECT COALESCE(SUM(CASE WHEN ") + live +
                                    " THEN 1 ELSE 0 END), 0), COUNT(*) FROM " + t);
    // The rows the expiry index finds (purge_more() does the others). With
    // the run history, first, in the same transaction, the runs of the rows
    // about to go end with their lease.
    const std::string expired =
        "SELECT id FROM " + t + " WHERE expires <= " + now_sql + " LIMIT ?1";
    const std::string purge =
        "DELETE FROM " + t + " WHERE id IN (" + expired + ");\nSELECT changes()";
    set.add(Query::purge_locks, purge);
    set.add(Query::purge_locks_and_runs,
            "UPDATE " + r + " SET outcome = 'lost', ended = (SELECT l.expires FROM " + t +
                " AS l WHERE l.id = " + r + ".fencing_id) WHERE outcome = 'running' AND" +
                " fencing_id IN (" + expired + ");\n" + purge,
            QueryText::Mode::transaction);

    set.add(Query::prune_runs, "DELETE FROM " + r + " WHERE id IN (SELECT r.id FROM " + r +
                                   " AS r WHERE " + prunable_runs(t) + " LIMIT ?2)");
    set.add(Query::count_runs, "SELECT COUNT(*) FROM " + r + " AS r WHERE " + prunable_runs(t));

    set.add(Query::pause,
            "INSERT INTO " + p +
                " (name, paused_by, reason, created, paused_until) VALUES (?1, ?2, ?3, " + now +
                ", CASE WHEN ?4 IS NULL THEN NULL ELSE strftime('%Y-%m-%d %H:%M:%f','now', '+' || "
                "?4) END) ON CONFLICT (name) DO UPDATE SET paused_by = excluded.paused_by,"
                " reason = excluded.reason, created = excluded.created,"
                " paused_until = excluded.paused_until"
                " RETURNING name, paused_by, reason, created, paused_until");
    // Under the write lock: whether it was in force, then gone. (A
    // RETURNING of that condition reads NULL on SQLite 3.40.)
    set.add(Query::resume,
            "SELECT 1 FROM " + p + " WHERE name = ?1 AND " + pause_live +
                ";\n"
                "DELETE FROM " +
                p + " WHERE name = ?1",
            Mode::transaction);
    set.add(Query::paused, "SELECT name, paused_by, reason, created, paused_until FROM " + p +
                               " WHERE name = ?1 AND " + pause_live);
    set.add(Query::pauses, "SELECT name, paused_by, reason, created, paused_until FROM " + p +
                               " WHERE " + pause_live + " ORDER BY name");
    // One statement under SQLite's write lock: a pause renewed before it
    // runs is live again and stays.
    set.add(Query::purge_pauses, "DELETE FROM " + p + " WHERE name IN (SELECT name FROM " + p +
                                     " WHERE " + pause_ended + " LIMIT ?1)");
    set.add(Query::count_pauses, "SELECT COUNT(*) FROM " + p + " WHERE " + pause_ended);

    // The queue of waiters, under the write lock: a ticket is drawn, and a
    // place counted, against one state of the line.
    const std::string& q = tables.family.side(SideTable::queue).quoted;
    // Besides the ticket or whether the place is still held: the live
    // waiters ahead, and in how many ms the first of their places lapses
    // unless renewed (-1: nobody ahead), when the waiter looks again.
    auto ahead = [&](const std::string& name, const std::string& ticket) {
        const std::string mine =
            " FROM " + q + " WHERE lockstring = " + name + " AND id < " + ticket + " AND " + live;
        return "(SELECT COUNT(*)" + mine +
               "), coalesce((SELECT CAST((julianday(MIN(expires)) - julianday('now')) * "
               "86400000.0 AS INTEGER)" +
               mine + "), -1)";
    };
    set.add(Query::queue_join,
            "DELETE FROM " + q + " WHERE lockstring = ?1 AND " + dead +
                ";\n"
                "INSERT INTO " +
                q + " (lockstring, waiter, inbox, expires) VALUES (?1, ?2, ?3, " +
                "strftime('%Y-%m-%d %H:%M:%f','now', '+' || ?4));\n"
                "SELECT last_insert_rowid(), " +
                ahead("?1", "last_insert_rowid()"),
            Mode::transaction);
    set.add(Query::queue_poll,
            "UPDATE " + q + " SET expires = strftime('%Y-%m-%d %H:%M:%f','now', '+' || ?3)" +
                " WHERE id = ?1 AND waiter = ?2 AND " + live +
                ";\n"
                "SELECT changes(), " +
                ahead("?4", "?1"),
            Mode::transaction);
    set.add(Query::queue_leave, "DELETE FROM " + q + " WHERE id = ?1 AND waiter = ?2");
    set.add(Query::queue_length,
            "SELECT COUNT(*) FROM " + q + " WHERE lockstring = ?1 AND " + live);

    // Leaders' values. One statement, so one atomic step; its WHERE also
    // settles SQLite's "INSERT ... SELECT ... ON CONFLICT" parsing.
    const std::string& d = tables.family.side(SideTable::leaders).quoted;
    set.add(Query::proclaim,
            "INSERT INTO " + d + " AS d (name, fencing_id, value, proclaimed) SELECT ?1, ?2, ?4, " +
                now + " FROM " + tables.family.table().quoted +
                " WHERE id = ?2 AND lockstring = ?1 AND locked_by = ?3 AND expires > " + now +
                " ON CONFLICT (name) DO UPDATE SET fencing_id = excluded.fencing_id,"
                " value = excluded.value, proclaimed = excluded.proclaimed"
                " WHERE d.fencing_id <= excluded.fencing_id;\n"
                "SELECT changes() > 0");
    // The two tables share no column name: columns_sql needs no alias.
    set.add(Query::leader, std::string("SELECT ") + columns_sql + ", d.value FROM " +
                               tables.family.table().quoted + " LEFT JOIN " + d +
                               " AS d ON d.name = lockstring AND d.fencing_id = id"
                               " WHERE lockstring = ?1");

    // `sqlock run --after`: the runs that ran, the skips, a skip recorded.
    const std::string skipped = skipped_outcomes_sql;
    set.add(Query::recent_runs,
            runs_select(t, r, "r.name = ?2 AND r.outcome NOT IN " + skipped, "?1"));
    set.add(Query::last_skip, runs_select(t, r, "r.name = ?1 AND r.outcome IN " + skipped, "1"));
    set.add(Query::skip_run, "INSERT INTO " + r +
                                 " (name, window_start, host, pid, username, program, fencing_id,"
                                 " started, ended, outcome) VALUES (?1, NULLIF(?2, ''), ?3, ?4,"
                                 " ?5, ?6, ?7, " +
                                 now + ", " + now + ", ?8) RETURNING id");

    // `sqlock metrics`: the live rows, the lines, the elections.
    set.add(Query::live_locks,
            "SELECT lockstring, id, round((julianday('now') - julianday(created)) * 86400000.0) /"
            " 1000.0, round((julianday(expires) - julianday('now')) * 86400000.0) / 1000.0 FROM " +
                t + " WHERE " + live + " ORDER BY lockstring");
    set.add(Query::queue_lengths, "SELECT lockstring, COUNT(*) FROM " + q + " WHERE " + live +
                                      " GROUP BY lockstring ORDER BY lockstring");
    set.add(Query::leader_names, "SELECT name FROM " + d + " ORDER BY name");
    set.add(Query::queue_joined,
            "SELECT EXISTS (SELECT 1 FROM pragma_table_info(" +
                literal(table_basename(tables.family.side(SideTable::queue).name)) +
                ") WHERE name = 'joined')");
    set.add(Query::queue_waits,
            "SELECT lockstring, COUNT(*), round((julianday('now') - julianday(MIN(joined))) *"
            " 86400000.0) / 1000.0 FROM " +
                q + " WHERE " + live + " GROUP BY lockstring ORDER BY lockstring");
    return set;
}

std::string queue_upgrade_script(const Tables& tables) {
    // SQLite adds no column whose default is not a constant, so the queue
    // is made anew as the schema says, its rows carried over (the new
    // column takes its default) and its AUTOINCREMENT counter too, so that
    // no ticket is drawn twice. The index goes with the old table's name.
    const FamilyName& queue = tables.family.side(SideTable::queue);
    const std::string name = table_basename(queue.name);
    const std::string old_name = fit_identifier(name, "_before_joined");
    const std::string old_table = quote_table_name(old_name);
    return "DROP INDEX IF EXISTS " + tables.family.side_index(SideTable::queue, "name").quoted +
           ";\n"
           "ALTER TABLE " +
           queue.quoted + " RENAME TO " + quote_table_name(old_name) + ";\n" +
           schema_script(tables) + ";\nINSERT INTO " + queue.quoted +
           " (id, lockstring, waiter, inbox, expires)"
           " SELECT id, lockstring, waiter, inbox, expires FROM " +
           old_table +
           ";\n"
           "DELETE FROM sqlite_sequence WHERE name = " +
           literal(name) +
           ";\n"
           "UPDATE sqlite_sequence SET name = " +
           literal(name) + " WHERE name = " + literal(old_name) + ";\nDROP TABLE " + old_table;
}

std::string schema_script(const Tables& tables) {
    return substitute(tables.family.fill(sqlite_schema_sql), "guard_check", tables.guard_check);
}

}  // namespace sqlock::detail::sqlite
