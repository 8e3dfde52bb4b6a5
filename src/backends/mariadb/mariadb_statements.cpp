#include "mariadb_statements.hpp"

#include <algorithm>
#include <cstdio>

#include "sqlock/error.hpp"

#include "base/fnv1a.hpp"
#include "contract/backend.hpp"
#include "contract/table_family.hpp"

namespace sqlock::detail {
extern const char* const mariadb_schema_sql;  // sql/mariadb/schema.sql, compiled in
}

namespace sqlock::detail::mariadb::sql {
namespace {

constexpr const char* now = "UTC_TIMESTAMP(3)";

std::string micros(duration d) {
    return "INTERVAL " + std::to_string(static_cast<long long>(d.count()) * 1000) + " MICROSECOND";
}

// "1.250": GET_LOCK's timeout, in seconds with a fraction.
std::string seconds(duration d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(d.count() / 1000),
                  static_cast<long long>(d.count() % 1000));
    return buf;
}

std::string number(std::int64_t n) {
    return std::to_string(n);
}

// DATETIME(3) as "YYYY-MM-DD HH:MM:SS.mmm"; a column made by another program
// without fractions reads as ".000".
std::string utc_text(const std::string& col) {
    return "LEFT(DATE_FORMAT(" + col + ", '%Y-%m-%d %H:%i:%s.%f'), 23)";
}

// The row columns of alias `t`, as listed in the header. Rounded up to the
// millisecond: a DATETIME(6) column (another program's) may hold
// microseconds, and 0.4 ms must not read as expired while it still counts.
// Dates TIMESTAMPDIFF cannot read (another program's '2999-00-00', written
// under a laxer sql_mode) get a seconds_left beyond any real date, on the
// side the statements' comparisons put them.
std::string seconds_left() {
    return std::string("COALESCE(CEIL(TIMESTAMPDIFF(MICROSECOND, ") + now +
           ", t.expires) / 1000) / 1000, IF(t.expires > " + now + ", 1e13, -1e13))";
}

std::string columns() {
    return std::string("t.id, t.lockstring, ") + utc_text("t.created") + ", " +
           utc_text("t.expires") + ", COALESCE(t.locked_by, ''), " + seconds_left();
}

// A condition on `expires` in a statement that targets one row (by name or
// id), written so that no plan reads it through the expires index: on a
// small table the optimizer would choose that index for "expires <= now",
// lock the rows of other names on the way (a DELETE gets no semi-consistent
// read), and deadlock with their releases: acquirers of different names
// turned each other away as "busy" (sqlock-bench, 8 processes). IF() keeps
// the comparison itself, so odd values compare as before (a zero date is
// long past; arithmetic on it would be NULL).
std::string unindexed(const std::string& condition) {
    return "IF(" + condition + ", 1, 0) = 1";
}

std::string owner_is(const std::string& locked_by) {
    return "COALESCE(locked_by, '') = " + literal(locked_by);
}

}  // namespace

std::string literal(const std::string& text) {
    if (text.empty()) return "''";
    static const char digits[] = "0123456789abcdef";
    std::string out = "_utf8mb4 X'";
    out.reserve(out.size() + text.size() * 2 + 1);
    for (unsigned char c : text) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    out += '\'';
    return out;
}

std::vector<std::string> shared_names(const std::vector<ClaimEntry>& entries) {
    std::vector<std::string> shared;
    for (const ClaimEntry& e : entries)
        if (e.shared()) shared.push_back(e.name);
    return shared;
}

std::string turn_key(const MariaTarget& t, const std::string& lockstring) {
    // A semaphore's slots ("x#1", "x#2", ...) share the turn of "x": a slot
    // is taken in one batch that picks it under that turn (acquire_slot),
    // and a plain lock of "x#2" must take its turn too.
    const std::string turn = lockstring.substr(0, slot_suffix_at(lockstring));
    char buf[40];
    std::snprintf(buf, sizeof buf, "sqlock:%016llx",
                  static_cast<unsigned long long>(fnv1a64(t.turn_scope + '\0' + turn)));
    return buf;
}

namespace {

// An acquiring INSERT's answer to a row that is there: no change, and
// that row's id as LAST_INSERT_ID(), so that the statement after it reads
// the row it met, inserted or not, by its primary key. A read by name
// would look through the unique index's delete-marked entries of every
// earlier row of the name that purge has not yet removed, which a name
// taken many times a second piles up; and picking between the two reads
// (a UNION) cost a third of the batch (docs/benchmarks.md).
const std::string keep_and_point_at_it = " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)";

// In the statement right after the INSERT: whether row t is the one it
// inserted. ROW_COUNT() and LAST_INSERT_ID() are still the INSERT's there
// (an update that changed nothing counts 0), so no statement of its own
// is spent on keeping them.
const std::string ours_inserted = "(ROW_COUNT() = 1 AND t.id = LAST_INSERT_ID())";

// Whether a live waiter goes before the gate's ticket: one queued before
// it, or any at all once its own place has lapsed (a waiter back from a
// freeze or a cut link has left the line, and must not take the name from
// under those who moved up meanwhile).
std::string waiter_ahead(const MariaTarget& t, const QueueGate& gate) {
    const std::string& Q = t.family.side(SideTable::queue).quoted;  // the queue table
    return "EXISTS(SELECT 1 FROM " + Q + " AS q WHERE q.lockstring = " + literal(gate.name) +
           " AND q.expires > " + now + " AND (q.id < " + number(gate.before) +
           " OR NOT EXISTS(SELECT 1 FROM " + Q + " AS own WHERE own.id = " + number(gate.before) +
           " AND own.expires > " + now + ")))";
}

// GET_LOCK(key, wait): the function that takes a turn (the test hook's
// stand-in where MariaTarget names one).
std::string get_lock(const MariaTarget& t, const std::string& key, duration wait) {
    return t.get_lock + "(" + key + ", " + seconds(wait) + ")";
}

// The turn `key` (quoted), waited for up to `wait`; behind an active gate,
// NULL instead while a live waiter it names is queued.
std::string gated_turn(const MariaTarget& t, const std::string& key, duration wait,
                       const QueueGate& gate) {
    const std::string take_turn = get_lock(t, key, wait);
    if (!gate.active()) return take_turn;
    return "IF(" + waiter_ahead(t, gate) + ", NULL, " + take_turn + ")";
}

// The name whose turn `lockstring` takes: a semaphore's slots ("x#1",
// "x#2", ...) share the turn of "x" (turn_key()).
std::string turn_name(const std::string& lockstring) {
    return lockstring.substr(0, slot_suffix_at(lockstring));
}

// A row turn (Protocol::row_turns): the row `name` of the fencing table,
// inserted if missing and locked until the transaction ends, only when
// `when` holds. ON DUPLICATE KEY UPDATE locks the row it meets without
// changing it, so certification sees nothing of it. Waited for up to
// `wait`; error 1969 when that runs out (max_statement_time, MariaDB's).
std::string lock_turn_row(const MariaTarget& t, const std::string& name, duration wait,
                          const std::string& when) {
    const duration bound = std::max(wait, duration(1));  // 0 would mean none
    return "SET STATEMENT max_statement_time = " + seconds(bound) + " FOR INSERT INTO " +
           t.family.side(SideTable::fencing).quoted + " (name, last_id, written) SELECT " +
           literal(name) + ", 0, " + now + " FROM DUAL WHERE " + when +
           " ON DUPLICATE KEY UPDATE name = name;\n";
}

// The row turn of `lockstring` as @sqlock_turn, 1 once taken; behind an
// active gate NULL, and not taken, while a live waiter it names is queued.
std::string row_turn(const MariaTarget& t, const std::string& lockstring, duration wait,
                     const QueueGate& gate) {
    return "SET @sqlock_turn = " +
           (gate.active() ? "IF(" + waiter_ahead(t, gate) + ", NULL, 1)" : std::string("1")) +
           ";\n" + lock_turn_row(t, turn_name(lockstring), wait, "@sqlock_turn = 1");
}

// Writes id `id` (an expression) drawn for name `name` (an expression) to
// the fencing register, rows from `source` ("DUAL WHERE ...", or a table
// and its condition): only an id larger than the one there; else -1, which
// the table's CHECK refuses (error 4025: the attempt is made again).
std::string register_write(const MariaTarget& t, const std::string& name, const std::string& id,
                           const std::string& source) {
    return "INSERT INTO " + t.family.side(SideTable::fencing).quoted +
           " (name, last_id, written) SELECT " + name + ", " + id + ", " + now + " FROM " + source +
           " ON DUPLICATE KEY UPDATE last_id = IF(last_id < VALUES(last_id), VALUES(last_id), -1),"
           " written = VALUES(written);\n";
}

// Right after an insert of one row (keep_and_point_at_it): @sqlock_new is
// its id when it inserted one, else 0, and @sqlock_row the row it met or
// made; with `register_ids`, the new id goes to the register of `name`.
std::string registered_insert(const MariaTarget& t, const Protocol& p, const std::string& name) {
    if (!p.register_ids) return "";
    return "SET @sqlock_new = IF(ROW_COUNT() = 1, LAST_INSERT_ID(), 0), @sqlock_row = "
           "LAST_INSERT_ID();\n" +
           register_write(t, name, "@sqlock_new", "DUAL WHERE @sqlock_new > 0");
}

// The row the insert before met or made, as read_met_row() reads it, after
// registered_insert().
std::string read_registered_row(const MariaTarget& t) {
    return "SELECT @sqlock_new > 0 AND t.id = @sqlock_new, COALESCE(@sqlock_turn = 1, 0), " +
           columns() + " FROM " + t.family.table().quoted + " AS t WHERE t.id = @sqlock_row";
}

// The read after an insert: read_met_row(), or read_registered_row() when
// registered_insert() came in between.
std::string read_inserted(const MariaTarget& t, const Protocol& p) {
    return p.register_ids ? read_registered_row(t) : read_met_row(t);
}

}  // namespace

// The row the INSERT before met or made, with ours_inserted first.
std::string read_met_row(const MariaTarget& t) {
    return "SELECT " + ours_inserted + ", COALESCE(@sqlock_turn = 1, 0), " + columns() + " FROM " +
           t.family.table().quoted + " AS t WHERE t.id = LAST_INSERT_ID()";
}

namespace {

// The insert of insert_and_read(), up to its ";\n".
std::string insert_row(const MariaTarget& t, const std::string& name, duration lease,
                       const std::string& locked_by) {
    return "INSERT INTO " + t.family.table().quoted +
           " (lockstring, created, expires, locked_by) VALUES (" + name + ", " + now + ", " + now +
           " + " + micros(lease) + ", " + literal(locked_by) + ")" + keep_and_point_at_it + ";\n";
}

}  // namespace

std::string insert_and_read(const MariaTarget& t, const std::string& name, duration lease,
                            const std::string& locked_by) {
    return insert_row(t, name, lease, locked_by) + read_met_row(t) + ";\n";
}

std::string under_turn(const MariaTarget& t, const std::string& lockstring, duration wait,
                       const QueueGate& gate, const std::string& body) {
    const std::string key = "'" + turn_key(t, lockstring) + "'";
    return "SET @sqlock_turn = " + gated_turn(t, key, wait, gate) + ";\n" + body +
           "DO IF(@sqlock_turn = 1, RELEASE_LOCK(" + key + "), 0)";
}

// clang-format off

std::string acquire(const MariaTarget& t, const Protocol& p, const std::string& lockstring,
                    duration lease, const std::string& locked_by, duration wait,
                    const QueueGate& gate, bool take_over) {
    const std::string& T = t.family.table().quoted;
    const std::string L = literal(lockstring);
    // The turn (a GET_LOCK per table and name) is taken before the insert
    // draws its id and given back after the insert committed: of two
    // acquirers of one name, the one that holds it first draws the smaller
    // id (docs/mariadb.md). ON DUPLICATE KEY UPDATE leaves a live row alone
    // without an error, so the batch runs to its end.
    // The INSERT has VALUES, not a SELECT: an INSERT ... SELECT is a "bulk
    // insert" that holds the table's AUTO-INC lock to its end (InnoDB's
    // default innodb_autoinc_lock_mode=1), so acquirers of different names
    // queued behind one waiting for a row, and deadlocked on it (error 1467,
    // "Failed to read auto-increment value"). Without the turn the name is
    // NULL, which the column refuses (error 1048): the batch stops there and
    // the caller reports "not acquired".
    // (READ COMMITTED, set per session: no gap locks, so acquirers of other
    // names never deadlock with us.)
    // The insert alone commits by itself (autocommit): an explicit
    // transaction kept its row and index locks over two more statements,
    // and cost 8 processes on distinct names 19-30% of their cycles in
    // three alternating runs (docs/benchmarks.md). The row is then read just after the
    // commit; one that someone force-released in between reads as no row,
    // and the caller tells from the insert's own reply whether it was ours
    // (MariaConnection::try_acquire).
    // The take-over deletes the expired row and inserts a new one, with a
    // new id, in one transaction, so nobody sees the name free in between.
    // Its delete is by name, and a read or delete by name is slow (see
    // keep_and_point_at_it), so it is sent only when the insert alone met
    // an expired row (mariadb_connection.cpp).
    // With row turns (Galera) the batch is one transaction, the turn its
    // first lock, and (register_ids) the id drawn goes to the register in
    // it: certification then orders it (docs/mariadb.md).
    const std::string insert =
        p.register_ids
            ? insert_row(t, "IF(@sqlock_turn = 1, " + L + ", NULL)", lease, locked_by) +
                  registered_insert(t, p, L) + read_inserted(t, p) + ";\n"
            : insert_and_read(t, "IF(@sqlock_turn = 1, " + L + ", NULL)", lease, locked_by);
    const std::string take_over_delete =
        "DELETE FROM " + T + " WHERE lockstring = " + L + " AND " +
        unindexed(std::string("expires <= ") + now) + " AND @sqlock_turn = 1;\n";
    if (p.row_turns)
        return "START TRANSACTION;\n" + row_turn(t, lockstring, wait, gate) +
               (take_over ? take_over_delete : "") + insert + "COMMIT";
    return under_turn(t, lockstring, wait, gate,
                      take_over ? "START TRANSACTION;\n" + take_over_delete + insert + "COMMIT;\n"
                                : insert);
}

std::string acquire_slot(const MariaTarget& t, const Protocol& p, const std::string& name,
                         int capacity, duration lease, const std::string& locked_by,
                         duration wait, const QueueGate& gate) {
    const std::string& T = t.family.table().quoted;
    const std::string N = literal(name);
    const std::string own = literal(locked_by);
    const std::string key = "'" + turn_key(t, slot_lockstring(name, 1)) + "'";
    // Slots 1..capacity, and the row of slot s.n (eq_ref on the unique index).
    const std::string slots = "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s"
                              " WHERE n < " + number(capacity) + ") ";
    const std::string slot_row = T + " AS t ON t.lockstring = CONCAT(" + N + ", '#', s.n)";
    const std::string ours =
        std::string("COALESCE(t.expires > ") + now + " AND t.locked_by = " + own + ", 0)";
    const std::string vacant = "(t.id IS NULL OR t.expires <= " + std::string(now) + ")";
    // Under the semaphore's turn, as acquire() takes a name: the slot is
    // picked, its expired row deleted and ours inserted in one transaction,
    // so ids grow in acquisition order per slot. The pick, the slots' one
    // read: a live slot of ours first (an earlier statement of ours took it
    // and its answer was lost: taking another would hold two), else the
    // lowest free or expired one, else the live one whose lease ends first.
    // The insert aims at the slot picked: it takes a free one, and meets a
    // live one, which is then the answer (keep_and_point_at_it).
    const std::string slot = "CONCAT(" + N + ", '#', @sqlock_slot)";
    return (p.row_turns ? "START TRANSACTION;\n" + row_turn(t, name, wait, gate)
                        : "SET @sqlock_turn = " + gated_turn(t, key, wait, gate) + ";\n"
                          "START TRANSACTION;\n") + slots +
           "SELECT s.n, t.id IS NOT NULL AND t.expires <= " + now + " INTO @sqlock_slot, @sqlock_stale"
           " FROM s LEFT JOIN " + slot_row + " ORDER BY " + ours + " DESC, " + vacant + " DESC, IF(" +
           vacant + ", s.n, 0), t.expires LIMIT 1;\n"
           // Only when the slot picked has an expired row: a user variable
           // is a constant to the optimizer, so otherwise this is an
           // impossible WHERE, read by no index.
           "DELETE FROM " + T + " WHERE lockstring = CONCAT(" + N + ", '#', @sqlock_slot) AND " +
           unindexed(std::string("expires <= ") + now) + " AND @sqlock_turn = 1 AND @sqlock_stale = 1;\n"
           "INSERT INTO " + T + " (lockstring, created, expires, locked_by) VALUES (IF(@sqlock_turn = 1, CONCAT(" +
           N + ", '#', @sqlock_slot), NULL), " + now + ", " + now + " + " + micros(lease) +
           ", " + own + ")" + keep_and_point_at_it + ";\n" + registered_insert(t, p, slot) +
           read_inserted(t, p) + ";\n"
           "COMMIT" + (p.row_turns ? "" : ";\nDO IF(@sqlock_turn = 1, RELEASE_LOCK(" + key + "), 0)");
}

namespace {

// "(a, b, c)": the lockstrings as literals, for IN.
std::string in_list(const std::vector<std::string>& lockstrings) {
    std::string out = "(";
    for (std::size_t i = 0; i < lockstrings.size(); ++i)
        out += (i ? ", " : "") + literal(lockstrings[i]);
    return out + ")";
}

// The turn keys of a set, each once, in one order for every caller.
std::vector<std::string> set_turn_keys(const MariaTarget& t,
                                       const std::vector<std::string>& lockstrings) {
    std::vector<std::string> keys;
    for (const std::string& l : lockstrings) keys.push_back(turn_key(t, l));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

// The names whose turns a set takes, each once, in one order for every
// caller (the fencing table's, bytes): row turns.
std::vector<std::string> set_turn_names(const std::vector<std::string>& lockstrings) {
    std::vector<std::string> names;
    for (const std::string& l : lockstrings) names.push_back(turn_name(l));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

// Takes the turns of every one of `lockstrings` (in one order), each
// waiting its share of `wait`; @sqlock_turns counts those that came. Row
// turns come or stop the batch (error 1969), within its transaction, which
// then begins here.
std::string take_turns(const MariaTarget& t, const Protocol& p,
                       const std::vector<std::string>& lockstrings, duration wait) {
    if (p.row_turns) {
        const std::vector<std::string> names = set_turn_names(lockstrings);
        const duration share = wait / static_cast<int>(names.size());
        std::string sql = "START TRANSACTION;\n";
        for (const std::string& name : names) sql += lock_turn_row(t, name, share, "1");
        return sql + "SET @sqlock_turns = " + number(static_cast<std::int64_t>(names.size())) +
               ";\n";
    }
    const std::vector<std::string> keys = set_turn_keys(t, lockstrings);
    const duration share = wait / static_cast<int>(keys.size());
    std::string sql = "SET @sqlock_turns = 0;\n";
    for (const std::string& key : keys)
        sql += "SET @sqlock_turns = @sqlock_turns + COALESCE(" + get_lock(t, "'" + key + "'", share) +
               " = 1, 0);\n";
    return sql;
}

// How many turns take_turns() takes for `lockstrings`.
std::size_t turn_count(const MariaTarget& t, const Protocol& p,
                       const std::vector<std::string>& lockstrings) {
    return p.row_turns ? set_turn_names(lockstrings).size() : set_turn_keys(t, lockstrings).size();
}

// What comes between the turns and the transaction's first statement: its
// start, unless take_turns() began it.
std::string begin_after_turns(const Protocol& p) {
    return p.row_turns ? "" : "START TRANSACTION;\n";
}

// The end of a turned batch's transaction, and the turns given back.
std::string commit_and_give_back(const MariaTarget& t, const Protocol& p,
                                 const std::vector<std::string>& lockstrings) {
    if (p.row_turns) return "COMMIT";
    return "COMMIT;\n" + release_set_turns(t, p, lockstrings);
}

}  // namespace

std::string acquire_set(const MariaTarget& t, const Protocol& p,
                        const std::vector<std::string>& lockstrings, duration lease,
                        const std::string& locked_by, duration wait, bool yield_to_queue) {
    const std::string& T = t.family.table().quoted;
    const std::string names = in_list(lockstrings);
    // Every name's turn, in the keys' order (two sets wait for each other's
    // turns at most, never in a cycle that only the timeout ends), each
    // waiting its share of the bound. Then, in one transaction, the set is
    // written only when every turn came, no name is held live and (with
    // `yield_to_queue`) nobody waits in line for one: otherwise each
    // inserted name is NULL, which the column refuses (error 1048), and the
    // batch stops there with nothing written, as acquire()'s does. A row
    // another program inserted meanwhile stops it with a duplicate key
    // (1062). The rows are read inside the transaction; the turns are given
    // back after the commit.
    std::string sql = take_turns(t, p, lockstrings, wait);
    const std::string queued =
        yield_to_queue ? "EXISTS(SELECT 1 FROM " + t.family.side(SideTable::queue).quoted +
                             " WHERE lockstring IN " + names + " AND expires > " + now + ")"
                       : "0";
    sql += begin_after_turns(p) +
           "SET @sqlock_ok = @sqlock_turns = " +
           number(static_cast<std::int64_t>(turn_count(t, p, lockstrings))) +
           " AND NOT EXISTS(SELECT 1 FROM " + T + " WHERE lockstring IN " + names +
           " AND expires > " + now + ") AND NOT " + queued + ";\n"
           "DELETE FROM " + T + " WHERE lockstring IN " + names + " AND " +
           unindexed(std::string("expires <= ") + now) + " AND @sqlock_ok;\n"
           "INSERT INTO " + T + " (lockstring, created, expires, locked_by) VALUES ";
    for (std::size_t i = 0; i < lockstrings.size(); ++i)
        sql += std::string(i ? ", " : "") + "(IF(@sqlock_ok, " + literal(lockstrings[i]) +
               ", NULL), " + now + ", " + now + " + " + micros(lease) + ", " +
               literal(locked_by) + ")";
    sql += ";\n";
    // Our rows are those of the names now (all were free before): each id
    // to its name's register.
    if (p.register_ids)
        sql += register_write(t, "t.lockstring", "t.id",
                              T + " AS t WHERE t.lockstring IN " + names + " AND t.locked_by = " +
                                  literal(locked_by) + " AND @sqlock_ok");
    sql += "SELECT " + columns() + " FROM " + T + " AS t WHERE t.lockstring IN " + names +
           " AND t.locked_by = " + literal(locked_by) + " ORDER BY t.id;\n" +
           commit_and_give_back(t, p, lockstrings);
    return sql;
}

std::string acquire_mixed_set(const MariaTarget& t, const Protocol& p,
                              const std::vector<ClaimEntry>& entries, duration lease,
                              const std::string& locked_by, duration wait, bool yield_to_queue) {
    const std::string& T = t.family.table().quoted;
    const std::string M = literal(shared_marker_owner);
    std::vector<std::string> names, exclusive, shared, own;
    for (const ClaimEntry& e : entries) {
        names.push_back(e.name);
        (e.shared() ? shared : exclusive).push_back(e.name);
        if (e.shared()) own.push_back(e.shared_row);
    }
    std::vector<std::string> rows = names;
    rows.insert(rows.end(), own.begin(), own.end());
    // As acquire_set: every turn first, then one transaction that writes
    // only when nothing is in the way, else stops at a NULL name (1048).
    // In the way: a live row of an exclusive name, a live row of a shared
    // name but its marker, a live holder row of ours (already there: a
    // retry after a lost answer, which the caller reads). The markers are
    // inserted or extended, then the holder rows go in only if every marker
    // is there (a foreign row met by a marker's insert is left as it was).
    // One expiry for every row, so no marker ends before its holder.
    std::string sql = take_turns(t, p, names, wait);
    const std::string queued =
        yield_to_queue ? "EXISTS(SELECT 1 FROM " + t.family.side(SideTable::queue).quoted +
                             " WHERE lockstring IN " + in_list(names) + " AND expires > " + now +
                             ")"
                       : "0";
    auto live_in = [&](const std::vector<std::string>& list, const std::string& also) {
        if (list.empty()) return std::string("0");
        return "EXISTS(SELECT 1 FROM " + T + " WHERE lockstring IN " + in_list(list) +
               " AND expires > " + now + also + ")";
    };
    sql += begin_after_turns(p) +
           "SET @sqlock_until = " + std::string(now) + " + " + micros(lease) + ";\n"
           "SET @sqlock_ok = @sqlock_turns = " +
           number(static_cast<std::int64_t>(turn_count(t, p, names))) +
           " AND NOT " + live_in(exclusive, "") + " AND NOT " +
           live_in(shared, " AND locked_by <> " + M) + " AND NOT " + live_in(own, "") +
           " AND NOT " + queued + ";\n"
           "DELETE FROM " + T + " WHERE lockstring IN " + in_list(rows) + " AND " +
           unindexed(std::string("expires <= ") + now) + " AND @sqlock_ok;\n";
    auto values = [&](const std::vector<std::string>& list, const std::string& when,
                      const std::string& owner) {
        std::string v;
        for (std::size_t i = 0; i < list.size(); ++i)
            v += std::string(i ? ", " : "") + "(IF(" + when + ", " + literal(list[i]) +
                 ", NULL), " + now + ", @sqlock_until, " + owner + ")";
        return v;
    };
    const std::string insert = "INSERT INTO " + T + " (lockstring, created, expires, locked_by) VALUES ";
    if (!exclusive.empty()) sql += insert + values(exclusive, "@sqlock_ok", literal(locked_by)) + ";\n";
    sql += insert + values(shared, "@sqlock_ok", M) +
           " ON DUPLICATE KEY UPDATE expires = IF(locked_by = " + M +
           ", GREATEST(expires, VALUES(expires)), expires);\n"
           "SET @sqlock_markers = (SELECT COUNT(*) FROM " + T + " WHERE lockstring IN " +
           in_list(shared) + " AND locked_by = " + M + " AND expires >= @sqlock_until);\n" +
           insert + values(own, "@sqlock_markers = " + number(static_cast<std::int64_t>(shared.size())),
                           literal(locked_by)) + ";\n";
    // Each id to its name's register: an exclusive row's, and a shared
    // name's holder row (a marker's id is nobody's fencing token), so the
    // name's next exclusive holder draws past its shared holders.
    if (p.register_ids) {
        std::string registers;
        for (const ClaimEntry& e : entries) {
            const std::string row = e.shared() ? e.shared_row : e.name;
            registers += std::string(registers.empty() ? "" : " UNION ALL ") + "SELECT " +
                         literal(row) + " AS row_name, " + literal(e.name) + " AS name";
        }
        sql += register_write(t, "r.name", "t.id",
                              T + " AS t JOIN (" + registers +
                                  ") AS r ON t.lockstring = r.row_name WHERE t.locked_by = " +
                                  literal(locked_by) + " AND @sqlock_ok");
    }
    sql += "SELECT " + columns() + " FROM " + T + " AS t WHERE t.lockstring IN " + in_list(rows) +
           " AND t.locked_by = " + literal(locked_by) + " ORDER BY t.id;\n" +
           commit_and_give_back(t, p, names);
    return sql;
}

std::string release_set_turns(const MariaTarget& t, const Protocol& p,
                              const std::vector<std::string>& lockstrings) {
    std::string sql = "DO 0";
    if (p.row_turns) return sql;  // the ROLLBACK before it ended them
    for (const std::string& key : set_turn_keys(t, lockstrings))
        sql += ", RELEASE_LOCK('" + key + "')";
    return sql;
}

std::string set_holders(const MariaTarget& t, const std::vector<std::string>& lockstrings,
                        bool yield_to_queue) {
    const std::string names = in_list(lockstrings);
    // The live rows in the way, by name; and whether anyone waits in line.
    return "SELECT " + columns() + ", " +
           (yield_to_queue ? "EXISTS(SELECT 1 FROM " + t.family.side(SideTable::queue).quoted +
                                 " WHERE lockstring IN " + names + " AND expires > " + now + ")"
                           : std::string("0")) +
           " FROM (SELECT 1) AS one LEFT JOIN " + t.family.table().quoted + " AS t ON t.lockstring IN " +
           names + " AND t.expires > " + now + " ORDER BY t.lockstring";
}

namespace {

// "(1, 2, 3)": ids for IN.
std::string id_list(const std::vector<std::int64_t>& ids) {
    std::string in = "(";
    for (std::size_t i = 0; i < ids.size(); ++i) in += (i ? ", " : "") + number(ids[i]);
    return in + ")";
}

// The turns of a mixed set's shared names (as a single shared lock takes
// one), each waited for its share of `wait`, then a first result set
// saying whether every one came; `all` is set to that condition.
std::string shared_turns(const MariaTarget& t, const Protocol& p,
                         const std::vector<ClaimEntry>& entries, duration wait, std::string& all) {
    const std::vector<std::string> names = shared_names(entries);
    all = "@sqlock_turns = " + number(static_cast<std::int64_t>(turn_count(t, p, names)));
    // Row turns: every name's turn, even with none shared, so that the
    // transaction take_turns() begins is there.
    if (names.empty() && p.row_turns) return "START TRANSACTION;\nSET @sqlock_turns = 0;\nSELECT 1;\n";
    if (names.empty()) return "SET @sqlock_turns = 0;\nSELECT 1;\n";
    return take_turns(t, p, names, wait) + "SELECT " + all + ";\n";
}

}  // namespace

std::string renew_set(const MariaTarget& t, const std::vector<std::int64_t>& ids,
                      const std::string& locked_by, duration lease) {
    const std::string& T = t.family.table().quoted;
    const std::string in = id_list(ids);
    const std::string mine = "id IN " + in + " AND locked_by = " + literal(locked_by);
    // Read back, as renew() does.
    return "UPDATE " + T + " SET expires = " + now + " + " + micros(lease) + " WHERE " + mine +
           " AND " + unindexed(std::string("expires > ") + now) + ";\n"
           "SELECT " + columns() + " FROM " + T + " AS t WHERE t." + mine + " AND t.expires > " + now;
}

std::string release_set(const MariaTarget& t, const std::vector<std::int64_t>& ids,
                        const std::string& locked_by) {
    const std::string in = id_list(ids);
    return "DELETE FROM " + t.family.table().quoted + " WHERE id IN " + in + " AND " + owner_is(locked_by);
}

namespace {

// The turn of a shared hold's name: the key exclusive acquisitions of the
// name take.
// With row turns, the transaction begins here, the turn its first lock.
std::string shared_turn(const MariaTarget& t, const Protocol& p, const std::string& name,
                        duration wait) {
    if (p.row_turns)
        return "START TRANSACTION;\nSET @sqlock_turn = 1;\n" + lock_turn_row(t, name, wait, "1");
    return "SET @sqlock_turn = " + get_lock(t, "'" + turn_key(t, name) + "'", wait) + ";\n";
}

// The transaction's start after shared_turn(), unless it began there.
std::string begin_after_turn(const Protocol& p) {
    return p.row_turns ? "" : "START TRANSACTION;\n";
}

// The transaction's end, and the turn given back.
std::string commit_and_give_back_shared_turn(const MariaTarget& t, const Protocol& p,
                                             const std::string& name) {
    if (p.row_turns) return "COMMIT";
    return "COMMIT;\nDO IF(@sqlock_turn = 1, RELEASE_LOCK('" + turn_key(t, name) + "'), 0)";
}

}  // namespace

// clang-format off
std::string acquire_shared(const MariaTarget& t, const Protocol& p, const std::string& name,
                           const std::string& own, duration lease, const std::string& locked_by,
                           duration wait, const QueueGate& gate) {
    const std::string& T = t.family.table().quoted;
    const std::string N = literal(name);
    const std::string M = literal(shared_marker_owner);
    const std::string queued =
        !gate.active() ? "0" : waiter_ahead(t, gate);
    // Each statement of a batch costs the server about as much as a small
    // write, so the values that need no other are set in one: whether
    // waiters go first (read twice, in one statement's snapshot), the turn,
    // and the one lease end of the marker and our row (from this
    // statement's start: never earlier than the caller's send). The marker
    // is then read back by its primary key (LAST_INSERT_ID(), the row its
    // insert made or met), as is our row: a read by name walks the unique
    // index's delete-marked entries of every earlier marker of the name.
    // Row turns: the transaction first, the turn its first lock; and
    // (register_ids) our row's id to the name's register.
    const std::string turn =
        p.row_turns ? "START TRANSACTION;\nSET @sqlock_queued = " + queued +
                          ", @sqlock_turn = IF(" + queued + ", NULL, 1), @sqlock_until = " + now +
                          " + " + micros(lease) + ";\n" +
                          lock_turn_row(t, name, wait, "@sqlock_turn = 1")
                    : "SET @sqlock_queued = " + queued + ", @sqlock_turn = IF(" + queued +
                          ", NULL, " + get_lock(t, "'" + turn_key(t, name) + "'", wait) +
                          "), @sqlock_until = " + now + " + " + micros(lease) + ";\n"
                          "START TRANSACTION;\n";
    const std::string registered =
        p.register_ids ? "SET @sqlock_new = IF(ROW_COUNT() = 1, LAST_INSERT_ID(), 0);\n" +
                             register_write(t, N, "@sqlock_new", "DUAL WHERE @sqlock_new > 0")
                       : "";
    return turn +
           "DELETE FROM " + T + " WHERE lockstring = " + N + " AND " +
           unindexed(std::string("expires <= ") + now) + " AND @sqlock_turn = 1;\n"
           "INSERT INTO " + T + " (lockstring, created, expires, locked_by) VALUES (IF(@sqlock_turn = 1, " +
           N + ", NULL), " + now + ", @sqlock_until, " + M + ") ON DUPLICATE KEY UPDATE"
           " expires = IF(locked_by = " + M + ", GREATEST(expires, VALUES(expires)), expires),"
           " id = LAST_INSERT_ID(id);\n"
           "SET @sqlock_shared = (SELECT COUNT(*) FROM " + T + " WHERE id = LAST_INSERT_ID()"
           " AND locked_by = " + M + ");\n"
           "INSERT INTO " + T + " (lockstring, created, expires, locked_by) VALUES (IF(@sqlock_shared = 1, " +
           literal(own) + ", NULL), " + now + ", @sqlock_until, " + literal(locked_by) + ");\n" +
           registered +
           "SELECT " + columns() + " FROM " + T + " AS t WHERE t.id = LAST_INSERT_ID();\n" +
           commit_and_give_back_shared_turn(t, p, name);
}

std::string shared_refusal(const MariaTarget& t, const std::string& name, const std::string& own) {
    return "SELECT COALESCE(@sqlock_queued, 0);\n"
           "SELECT " + columns() + " FROM " + t.family.table().quoted + " AS t WHERE t.lockstring IN (" +
           literal(name) + ", " + literal(own) + ") AND t.expires > " + now +
           " AND COALESCE(t.locked_by, '') <> " + literal(shared_marker_owner);
}

std::string renew_shared(const MariaTarget& t, const Protocol& p, std::int64_t id,
                         const std::string& name, const std::string& locked_by, duration lease,
                         duration wait) {
    const std::string& T = t.family.table().quoted;
    const std::string M = literal(shared_marker_owner);
    const std::string mine = "id = " + number(id) + " AND locked_by = " + literal(locked_by);
    return shared_turn(t, p, name, wait) +
           "SELECT COALESCE(@sqlock_turn = 1, 0);\n" + begin_after_turn(p) +
           "SET @sqlock_until = " + now + " + " + micros(lease) + ";\n"
           "SET @sqlock_marker = (SELECT COUNT(*) FROM " + T + " WHERE lockstring = " +
           literal(name) + " AND locked_by = " + M + " AND expires > " + now + ") = 1"
           " AND @sqlock_turn = 1;\n"
           "UPDATE " + T + " SET expires = @sqlock_until WHERE " + mine + " AND " +
           unindexed(std::string("expires > ") + now) + " AND @sqlock_marker;\n"
           "UPDATE " + T + " SET expires = GREATEST(expires, @sqlock_until) WHERE lockstring = " +
           literal(name) + " AND locked_by = " + M + " AND @sqlock_marker;\n"
           "SELECT " + columns() + " FROM " + T + " AS t WHERE t." + mine + " AND t.expires > " +
           now + " AND @sqlock_marker;\n" + commit_and_give_back_shared_turn(t, p, name);
}

std::string release_shared(const MariaTarget& t, const Protocol& p, std::int64_t id,
                           const std::string& name, const std::string& locked_by,
                           duration min_hold, duration wait) {
    const std::string& T = t.family.table().quoted;
    const std::string M = literal(shared_marker_owner);
    const std::string N = literal(name);
    const std::string mine = "id = " + number(id) + " AND " + owner_is(locked_by) +
                             " AND @sqlock_turn = 1";
    const std::string until = "created + " + micros(min_hold);
    const std::string prefix = shared_prefix(name);
    const std::string upper = shared_prefix_end(name);
    // The holders' rows by a range of the unique index (the column's
    // collation compares code points, as bytes), checked exactly by LEFT.
    const std::string holders = "lockstring >= " + literal(prefix) + " AND lockstring < " +
                                literal(upper) + " AND LEFT(lockstring, " +
                                std::to_string(prefix.size()) + ") = " + literal(prefix);
    // Without a minimum hold our row is deleted outright: the statements
    // that would keep it are not sent (each costs the server about as much
    // as a small write). What the release found is set in one statement
    // with the other holders' latest expiry.
    const bool keeps = min_hold > duration::zero();
    const std::string keep =
        keeps ? "UPDATE " + T + " SET expires = " + until + " WHERE " + mine + " AND " + until +
                    " > " + now + ";\n"
                    "SET @sqlock_kept = ROW_COUNT();\n"
                    "DELETE FROM " + T + " WHERE " + mine + " AND @sqlock_kept = 0;\n"
              : "DELETE FROM " + T + " WHERE " + mine + ";\n";
    return shared_turn(t, p, name, wait) +
           "SELECT COALESCE(@sqlock_turn = 1, 0);\n" + begin_after_turn(p) + keep +
           "SET @sqlock_deleted = ROW_COUNT(), " + (keeps ? "" : "@sqlock_kept = 0, ") +
           "@sqlock_until = (SELECT MAX(expires) FROM " + T + " WHERE " + holders +
           " AND expires > " + now + ");\n"
           "DELETE FROM " + T + " WHERE lockstring = " + N + " AND locked_by = " + M +
           " AND @sqlock_until IS NULL AND @sqlock_turn = 1;\n"
           "UPDATE " + T + " SET expires = @sqlock_until WHERE lockstring = " + N +
           " AND locked_by = " + M + " AND @sqlock_until IS NOT NULL AND @sqlock_turn = 1;\n"
           "SELECT @sqlock_kept, @sqlock_deleted;\n" + commit_and_give_back_shared_turn(t, p, name);
}
// clang-format on

// clang-format off
std::string renew_mixed_set(const MariaTarget& t, const Protocol& p,
                            const std::vector<ClaimEntry>& entries,
                            const std::vector<std::int64_t>& ids, const std::string& locked_by,
                            duration lease, duration wait) {
    const std::string& T = t.family.table().quoted;
    const std::string M = literal(shared_marker_owner);
    std::string all;
    std::string sql = shared_turns(t, p, entries, wait, all);
    const std::string mine = " AND locked_by = " + literal(locked_by) + " AND " +
                             unindexed(std::string("expires > ") + now) + " AND " + all;
    // The shared names' turns (as renew_shared takes one), then one
    // transaction with one expiry for every row: the exclusive rows
    // renewed; each holder row only while its marker is live, and that
    // marker extended to cover it. First result set: whether every turn
    // came; last: the rows renewed.
    sql += begin_after_turns(p) + "SET @sqlock_until = " + now + " + " + micros(lease) + ";\n";
    std::string exclusive;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!entries[i].shared()) {
            exclusive += (exclusive.empty() ? "" : ", ") + number(ids[i]);
            continue;
        }
        const std::string N = literal(entries[i].name);
        sql += "SET @sqlock_marker = (SELECT COUNT(*) FROM " + T + " WHERE lockstring = " + N +
               " AND locked_by = " + M + " AND expires > " + now + ") = 1;\n"
               "UPDATE " + T + " SET expires = @sqlock_until WHERE id = " + number(ids[i]) + mine +
               " AND @sqlock_marker;\n"
               "SET @sqlock_renewed = ROW_COUNT();\n"
               "UPDATE " + T + " SET expires = GREATEST(expires, @sqlock_until) WHERE lockstring = " +
               N + " AND locked_by = " + M + " AND @sqlock_renewed > 0;\n";
    }
    if (!exclusive.empty())
        sql += "UPDATE " + T + " SET expires = @sqlock_until WHERE id IN (" + exclusive + ")" +
               mine + ";\n";
    sql += "SELECT " + columns() + " FROM " + T + " AS t WHERE t.id IN " + id_list(ids) +
           " AND t.locked_by = " + literal(locked_by) + " AND t.expires = @sqlock_until;\n" +
           commit_and_give_back(t, p, shared_names(entries));
    return sql;
}

std::string release_mixed_set(const MariaTarget& t, const Protocol& p,
                              const std::vector<ClaimEntry>& entries,
                              const std::vector<std::int64_t>& ids, const std::string& locked_by,
                              duration wait) {
    const std::string& T = t.family.table().quoted;
    const std::string M = literal(shared_marker_owner);
    const std::vector<std::string> shared = shared_names(entries);
    // The shared names' turns (as release_shared takes one), then one
    // transaction: our rows go, and each marker is fitted to the holders
    // left, or goes with the last. The first result set says whether every
    // turn came; the last, how many of our rows were deleted.
    std::string all;
    std::string sql = shared_turns(t, p, entries, wait, all);
    sql += begin_after_turns(p) +
           "DELETE FROM " + T + " WHERE id IN " + id_list(ids) + " AND " + owner_is(locked_by) + " AND " +
           all + ";\n"
           "SET @sqlock_deleted = ROW_COUNT();\n";
    for (const std::string& name : shared) {
        const std::string prefix = shared_prefix(name);
        const std::string holders = "lockstring >= " + literal(prefix) + " AND lockstring < " +
                                    literal(shared_prefix_end(name)) + " AND LEFT(lockstring, " +
                                    std::to_string(prefix.size()) + ") = " + literal(prefix);
        sql += "SET @sqlock_until = (SELECT MAX(expires) FROM " + T + " WHERE " + holders +
               " AND expires > " + now + ");\n"
               "DELETE FROM " + T + " WHERE lockstring = " + literal(name) + " AND locked_by = " + M +
               " AND @sqlock_until IS NULL AND " + all + ";\n"
               "UPDATE " + T + " SET expires = @sqlock_until WHERE lockstring = " + literal(name) +
               " AND locked_by = " + M + " AND @sqlock_until IS NOT NULL AND " + all + ";\n";
    }
    sql += "SELECT @sqlock_deleted;\n" + commit_and_give_back(t, p, shared);
    return sql;
}
// clang-format on

std::string release_turn(const MariaTarget& t, const Protocol& p, const std::string& lockstring) {
    if (p.row_turns) return "ROLLBACK";
    return "ROLLBACK; DO RELEASE_LOCK('" + turn_key(t, lockstring) + "')";
}

std::string transaction_turn(const MariaTarget& t, const Protocol& p, const std::string& lockstring,
                             duration wait) {
    // A row turn stays locked to the caller's commit: it is taken only once
    // the name was found free (transaction_row_turn()).
    if (p.row_turns) return "";
    return "SELECT " + get_lock(t, "'" + turn_key(t, lockstring) + "'", wait);
}

std::string transaction_row_turn(const MariaTarget& t, const Protocol& p,
                                 const std::string& lockstring) {
    if (!p.row_turns) return "";
    std::string sql = lock_turn_row(t, turn_name(lockstring), duration::zero(), "1");
    // Bounded by the attempt's innodb_lock_wait_timeout, not
    // max_statement_time; one statement: no ";\n".
    sql.erase(0, sql.find("INSERT"));
    sql.resize(sql.size() - 2);
    return sql;
}

std::string transaction_turn_back(const MariaTarget& t, const Protocol& p,
                                  const std::string& lockstring) {
    if (p.row_turns) return "";
    return "DO RELEASE_LOCK('" + turn_key(t, lockstring) + "')";
}

std::string register_id(const MariaTarget& t, const Protocol& p, const std::string& lockstring,
                        const std::string& id) {
    if (!p.register_ids) return "";
    std::string sql = register_write(t, literal(lockstring), id, "DUAL");
    sql.pop_back();  // one statement: no ";\n"
    sql.pop_back();
    return sql;
}

std::string lease_from_now(duration lease) {
    return "SELECT " + utc_text(now) + ", " + utc_text(std::string(now) + " + " + micros(lease));
}

std::string delete_exact(const MariaTarget& t, std::int64_t id, const std::string& locked_by) {
    return "DELETE FROM " + t.family.table().quoted + " WHERE id = " + number(id) + " AND " +
           owner_is(locked_by);
}

std::string release_registered(const MariaTarget& t, std::int64_t id, const std::string& lockstring,
                               const std::string& locked_by) {
    return "START TRANSACTION;\n" + delete_exact(t, id, locked_by) +
           ";\n"
           "SET @sqlock_deleted = ROW_COUNT();\n"
           "UPDATE " +
           t.family.side(SideTable::fencing).quoted + " SET released = " + number(id) +
           " WHERE name = " + literal(lockstring) +
           " AND @sqlock_deleted > 0;\n"
           "COMMIT;\n"
           "SELECT @sqlock_deleted > 0";
}

std::string released_before(const MariaTarget& t, std::int64_t id, const std::string& lockstring) {
    return "SELECT COALESCE((SELECT released FROM " + t.family.side(SideTable::fencing).quoted +
           " WHERE name = " + literal(lockstring) + "), 0) = " + number(id);
}

std::string release_keeping(const MariaTarget& t, std::int64_t id, const std::string& locked_by,
                            duration min_hold) {
    const std::string& T = t.family.table().quoted;
    const std::string mine = "id = " + number(id) + " AND " + owner_is(locked_by);
    const std::string until = "created + " + micros(min_hold);
    // Only we (id and owner) change this row, so the two halves cannot
    // interleave with another holder's; a take-over meanwhile leaves
    // nothing for either, and the last statement says "lost".
    return "DELETE FROM " + T + " WHERE " + mine + " AND " + until + " <= " + now +
           ";\n"
           "SET @sqlock_released = ROW_COUNT();\n"
           "UPDATE " +
           T + " SET expires = " + until + " WHERE " + mine +
           " AND @sqlock_released = 0;\n"
           "SELECT @sqlock_released, EXISTS(SELECT 1 FROM " +
           T + " WHERE " + mine + ")";
}

std::string renew(const MariaTarget& t, std::int64_t id, const std::string& locked_by,
                  duration lease) {
    const std::string& T = t.family.table().quoted;
    const std::string mine = "id = " + number(id) + " AND locked_by = " + literal(locked_by);
    // Read back rather than counting changed rows: an update to the value
    // the row already has changes nothing and would read as "lost".
    return "UPDATE " + T + " SET expires = " + now + " + " + micros(lease) + " WHERE " + mine +
           " AND " + unindexed(std::string("expires > ") + now) +
           ";\n"
           "SELECT " +
           columns() + " FROM " + T + " AS t WHERE t." + mine + " AND t.expires > " + now;
}

std::string purge_register(const MariaTarget& t, std::size_t batch) {
    const std::string& F = t.family.side(SideTable::fencing).quoted;
    return "DELETE FROM " + F + " WHERE written < " + now +
           " - INTERVAL 1 DAY AND NOT EXISTS (SELECT 1 FROM " + t.family.table().quoted +
           " AS t WHERE t.lockstring = " + F + ".name) ORDER BY name LIMIT " +
           std::to_string(batch);
}

// clang-format on

std::string schema_script(const MariaTarget& t, const std::string& collation, bool wsrep) {
    // The guard's check on Galera (schema.sql): each row written, and then
    // back, so that certification sees the guarded transaction touch it.
    // The marker's first, as the reads below take it.
    const std::string c = "COLLATE ${collation}";
    const std::string galera =
        "    IF @@SESSION.wsrep_on THEN\n"
        "        IF marker <> '' THEN\n"
        "            UPDATE ${table} SET expires = expires - INTERVAL 1 SECOND\n"
        "             WHERE lockstring = marker " +
        c +
        ";\n"
        "            UPDATE ${table} SET expires = expires + INTERVAL 1 SECOND\n"
        "             WHERE lockstring = marker " +
        c +
        ";\n"
        "        END IF;\n"
        "        UPDATE ${table} SET expires = expires - INTERVAL 1 SECOND\n"
        "         WHERE id = holder_id AND COALESCE(locked_by, '') = holder " +
        c +
        "\n"
        "           AND expires > UTC_TIMESTAMP(3);\n"
        "        SET held = IF(ROW_COUNT() = 1, holder_id, NULL);\n"
        "        UPDATE ${table} SET expires = expires + INTERVAL 1 SECOND\n"
        "         WHERE id = holder_id AND held IS NOT NULL;\n"
        "    ELSE";
    std::string sql = substitute(mariadb_schema_sql, "galera_guard", wsrep ? galera : "");
    sql = substitute(sql, "galera_guard_end", wsrep ? "    END IF;" : "");
    return substitute(t.family.fill(std::move(sql)), "collation", collation);
}

namespace {

// information_schema's condition for the table `qualified` ("name" in the
// current database, or "schema.name").
std::string is_table(const std::string& qualified) {
    std::size_t dot = qualified.find('.');
    const std::string schema =
        dot == std::string::npos ? "DATABASE()" : literal(qualified.substr(0, dot));
    const std::string name = dot == std::string::npos ? qualified : qualified.substr(dot + 1);
    return "(TABLE_SCHEMA = " + schema + " AND TABLE_NAME = " + literal(name) + ")";
}

}  // namespace

std::string table_exists(const MariaTarget& t) {
    return "SELECT COUNT(*) FROM information_schema.TABLES WHERE " + is_table(t.table);
}

std::string guard_exists(const MariaTarget& t) {
    const std::string& guard = t.family.guard().name;
    std::size_t dot = guard.find('.');
    const std::string schema =
        dot == std::string::npos ? "DATABASE()" : literal(guard.substr(0, dot));
    const std::string name = dot == std::string::npos ? guard : guard.substr(dot + 1);
    return "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = " + schema +
           " AND ROUTINE_NAME = " + literal(name) + " AND ROUTINE_TYPE = 'PROCEDURE'";
}

std::string guard_is_current(const MariaTarget& t) {
    const std::string& guard = t.family.guard().name;
    std::size_t dot = guard.find('.');
    const std::string schema =
        dot == std::string::npos ? "DATABASE()" : literal(guard.substr(0, dot));
    const std::string name = dot == std::string::npos ? guard : guard.substr(dot + 1);
    return "SELECT MAX(ROUTINE_DEFINITION LIKE '%wsrep_on%') FROM information_schema.ROUTINES"
           " WHERE ROUTINE_SCHEMA = " +
           schema + " AND ROUTINE_NAME = " + literal(name) + " AND ROUTINE_TYPE = 'PROCEDURE'";
}

namespace {

// A duration parameter (whole milliseconds) as an interval.
std::string micros_param(const char* param) {
    return std::string("INTERVAL (") + param + " * 1000) MICROSECOND";
}

// The runs `r` matching `where`, joined to their lock rows `l`, with the
// run columns (statement_set.hpp). A run still marked running whose lock row
// is gone or expired reads as lost, ended at the row's expiry while it is
// there.
std::string runs_select(const MariaTarget& t, const std::string& where, const std::string& order) {
    const std::string& R = t.family.side(SideTable::runs).quoted;  // the runs table
    const std::string live = std::string("l.expires > ") + now;
    const std::string end = "CASE WHEN r.outcome <> 'running' THEN r.ended WHEN " + live +
                            " THEN NULL ELSE l.expires END";
    const std::string until = "CASE WHEN r.outcome <> 'running' THEN r.ended WHEN " + live +
                              " THEN " + now + " ELSE l.expires END";
    return "SELECT r.id, r.name, " + utc_text("r.window_start") +
           ", r.host, r.pid, r.username, r.program, r.fencing_id, " + utc_text("r.started") + ", " +
           utc_text(end) + ", CASE WHEN r.outcome <> 'running' THEN r.outcome WHEN " + live +
           " THEN 'running' ELSE 'lost' END, r.exit_status, r.exit_signal,"
           " ROUND(TIMESTAMPDIFF(MICROSECOND, r.started, " +
           until + ") / 1000) / 1000, " + run_attempt_column(R, "r") + " FROM " + R +
           " AS r LEFT JOIN " + t.family.table().quoted + " AS l ON l.id = r.fencing_id WHERE " +
           where + " ORDER BY " + order;
}

// The runs prune_runs deletes, started more than ?1 ms ago (the runs table
// unaliased, as MariaDB's single-table DELETE with LIMIT names it).
// --once-per runs are kept while their window may still be current
// (windows are at most 366 days): pruning the run that did the window would
// let its job run again in it.
std::string prunable_runs(const MariaTarget& t) {
    return "started < " + std::string(now) + " - " + micros_param("?1") +
           " AND NOT (outcome = 'running' AND EXISTS (SELECT 1 FROM " + t.family.table().quoted +
           " AS l WHERE l.id = " + t.family.side(SideTable::runs).quoted +
           ".fencing_id AND l.expires > " + now +
           ")) AND (window_start IS NULL OR window_start < " + now + " - " +
           micros(std::chrono::hours(24 * 366)) + ")";
}

const std::string pause_live = std::string("(paused_until IS NULL OR paused_until > ") + now + ")";

std::string pause_columns() {
    return "name, paused_by, reason, " + utc_text("created") + ", " + utc_text("paused_until");
}

// clang-format off

// The side tables information_schema lists, and the database's clock.
void add_catalog(StatementSet& set, const MariaTarget& t) {
    // information_schema lists only the tables this user has a privilege
    // on: MariaConnection probes one it does not list
    // (unlisted_side_table_exists). MAX, not a count: the names match case
    // insensitively, so one table may be listed twice ("locks_runs",
    // "Locks_runs"), and the answer is 1 or 0 all the same.
    std::string listed, any;
    for (SideTable side : common_side_tables) {
        const std::string is = is_table(t.family.side(side).name);
        listed += (listed.empty() ? "SELECT " : ", ") + ("COALESCE(MAX(" + is + "), 0)");
        any += (any.empty() ? "" : " OR ") + is;
    }
    set.add(Query::side_tables, listed + " FROM information_schema.TABLES WHERE " + any);

    set.add(Query::now_millis,
        std::string("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ") + now +
        ") DIV 1000");
}

// The run history: a run's start and end, its window, the history read
// and pruned, the counts.
void add_runs(StatementSet& set, const MariaTarget& t) {
    const std::string& T = t.family.table().quoted;
    const std::string& R = t.family.side(SideTable::runs).quoted;
    const std::string& P = t.family.side(SideTable::pauses).quoted;
    using Mode = QueryText::Mode;
    // ?1 name, ?2 window start (UTC text or NULL), ?3 host, ?4 pid, ?5 user,
    // ?6 program, ?7 fencing id.
    const std::string run_columns =
        " (name, window_start, host, pid, username, program, fencing_id, started, outcome) ";
    const std::string run_values = "?1, CAST(?2 AS DATETIME(3)), ?3, ?4, ?5, ?6, ?7, " +
        std::string(now) + ", 'running'";
    set.add(Query::start_run,
        "INSERT INTO " + R + run_columns + "VALUES (" + run_values + ");\n"
        "SELECT LAST_INSERT_ID()");

    // The same parameters: the pause in force is read into variables, and
    // the run inserted only when there is none, in one batch (one round
    // trip for `sqlock run`'s "is it paused?" and "record the start"). No
    // row read: SELECT ... INTO leaves the variables NULL (with a warning).
    // INSERT ... SELECT holds the history table's AUTO-INC lock to its end:
    // one short statement, and no acquirer waits for that table.
    set.add(Query::start_run_unless_paused,
        "SET @sqlock_pause_name = NULL, @sqlock_pause_by = NULL, @sqlock_pause_reason = NULL,"
        " @sqlock_pause_created = NULL, @sqlock_pause_until = NULL;\n"
        "SELECT " + pause_columns() + " INTO @sqlock_pause_name, @sqlock_pause_by,"
        " @sqlock_pause_reason, @sqlock_pause_created, @sqlock_pause_until FROM " + P +
        " WHERE name = ?1 AND " + pause_live + ";\n"
        "INSERT INTO " + R + run_columns + "SELECT " + run_values +
        " FROM DUAL WHERE @sqlock_pause_name IS NULL;\n"
        "SELECT IF(@sqlock_pause_name IS NULL, LAST_INSERT_ID(), NULL), @sqlock_pause_name,"
        " @sqlock_pause_by, @sqlock_pause_reason, @sqlock_pause_created, @sqlock_pause_until");

    // ?1 run id, ?2 fencing id, ?3 locked_by, ?4 exit status, ?5 signal
    // (NULL: none), ?6 outcome. The lock row is locked (FOR UPDATE) until
    // COMMIT: a take-over of an expiring lease waits, and then its holder's
    // once-per decision sees this record (on one server; on Galera the row
    // lock is this node's only, and a take-over on another node in the
    // moment before COMMIT does not wait for it: the record is written, and
    // that holder's once-per decision may miss it). FOUND_ROWS() says whether it was
    // still ours and live. Only a run of this lock row, and not while the
    // row has another holder (postgres_statements.cpp).
    set.add(Query::finish_run,
        "SELECT id FROM " + T + " WHERE id = ?2 AND locked_by = ?3 AND " +
        unindexed(std::string("expires > ") + now) + " FOR UPDATE;\n"
        "SET @sqlock_live = FOUND_ROWS();\n"
        "UPDATE " + R + " SET ended = " + now + ", exit_status = ?4, exit_signal = ?5,"
        " outcome = IF(@sqlock_live > 0, ?6, 'lost') WHERE id = ?1 AND fencing_id = ?2"
        " AND outcome = 'running' AND NOT EXISTS (SELECT 1 FROM " + T + " WHERE id = ?2"
        " AND COALESCE(locked_by, '') <> ?3);\n"
        "SET @sqlock_changed = ROW_COUNT();\n"
        "SELECT outcome FROM " + R + " WHERE id = ?1 AND @sqlock_changed > 0",
        Mode::transaction);

    // ?1 run id, ?2 fencing id, ?3 locked_by: the end recorded, while the
    // lock row is ours.
    set.add(Query::finished_run,
        "SELECT outcome FROM " + R + " WHERE id = ?1 AND fencing_id = ?2 AND outcome <> 'running'"
        " AND EXISTS (SELECT 1 FROM " + T + " WHERE id = ?2 AND locked_by = ?3)");

    // ?1 name, ?2 window start (UTC text).
    set.add(Query::window_runs,
        runs_select(t, "r.name = ?1 AND r.window_start = CAST(?2 AS DATETIME(3))"
                    " AND r.started >= CAST(?2 AS DATETIME(3))", "r.started, r.id"));

    // ?1 since (ms; NULL: every run, whatever its start says, a zero
    // date too), ?2 limit [, ?3 name].
    const std::string since =
        std::string("(?1 IS NULL OR r.started >= ") + now + " - " + micros_param("?1") + ")";
    set.add(Query::history_all, runs_select(t, since, "r.started DESC, r.id DESC LIMIT ?2"));
    set.add(Query::history_name,
        runs_select(t, since + " AND r.name = ?3", "r.started DESC, r.id DESC LIMIT ?2"));

    // ?1 name.
    set.add(Query::last_success,
        runs_select(t, "r.name = ?1 AND r.outcome = 'succeeded'",
                    "r.started DESC, r.id DESC LIMIT 1"));

    set.add(Query::run_counts,
        "SELECT r.name, CASE WHEN r.outcome <> 'running' THEN r.outcome WHEN l.expires > " +
        std::string(now) + " THEN 'running' ELSE 'lost' END, COUNT(*) FROM " + R +
        " AS r LEFT JOIN " + T + " AS l ON l.id = r.fencing_id GROUP BY 1, 2 ORDER BY 1, 2");
    // The lock rows. ?1 name.
    set.add(Query::lock_row,
        "SELECT " + columns() + " FROM " + T + " AS t WHERE t.lockstring = ?1");
    // ?1 prefix ('' for all), ?2 expired only (1/0). Bound as literals, so
    // the server folds away the test of the one that does not apply. The
    // range lets the unique index find the prefix; LEFT() compares it
    // exactly (no LIKE wildcards to escape). With a binary no-pad collation
    // both are byte comparisons. "All" is an empty prefix by its length: a
    // literal's own collation pads, and would take " " for ''.
    set.add(Query::lock_rows,
        "SELECT " + columns() + " FROM " + T + " AS t"
        " WHERE (CHAR_LENGTH(?1) = 0 OR"
        " (t.lockstring >= ?1 AND LEFT(t.lockstring, CHAR_LENGTH(?1)) = ?1))"
        " AND (?2 = 0 OR t.expires <= " + now + ") ORDER BY t.lockstring");
    // ?1 id, ?2 locked_by.
    set.add(Query::lock_held,
        "SELECT 1 FROM " + T + " WHERE id = ?1 AND locked_by = ?2 AND expires > " + now);
    set.add(Query::lock_counts,
        std::string("SELECT COALESCE(SUM(CASE WHEN expires > ") + now +
        " THEN 1 ELSE 0 END), 0), COUNT(*) FROM " + T);
    // ?1 batch size. Oldest expiry first, through the expires index; ORDER
    // BY also makes the LIMIT deterministic for statement-based
    // replication. With the run history, first, in the same transaction,
    // the runs of the rows about to go end with their lease.
    const std::string purge = "DELETE FROM " + T + " WHERE expires <= " + now +
        " ORDER BY expires, id LIMIT ?1;\nSELECT ROW_COUNT()";
    set.add(Query::purge_locks, purge);
    set.add(Query::purge_locks_and_runs,
        "UPDATE " + R + " AS r SET r.outcome = 'lost', r.ended = (SELECT l.expires FROM " + T +
        " AS l WHERE l.id = r.fencing_id) WHERE r.outcome = 'running' AND r.fencing_id IN"
        " (SELECT id FROM (SELECT id FROM " + T + " WHERE expires <= " + now +
        " ORDER BY expires, id LIMIT ?1) AS x);\n" + purge,
        QueryText::Mode::transaction);

    // ?1 retention (ms), ?2 batch size.
    set.add(Query::prune_runs,
        "DELETE FROM " + R + " WHERE " + prunable_runs(t) + " ORDER BY started LIMIT ?2");
    set.add(Query::count_runs, "SELECT COUNT(*) FROM " + R + " WHERE " + prunable_runs(t));
}

// Pauses: set, lifted, read, purged.
void add_pauses(StatementSet& set, const MariaTarget& t) {
    const std::string& P = t.family.side(SideTable::pauses).quoted;
    using Mode = QueryText::Mode;
    // ?1 name, ?2 paused_by, ?3 reason, ?4 for (ms; NULL: until resumed,
    // as arithmetic on NULL is NULL).
    set.add(Query::pause,
        "INSERT INTO " + P + " (name, paused_by, reason, created, paused_until) VALUES"
        " (?1, ?2, ?3, " + now + ", " + now + " + " + micros_param("?4") + ")"
        " ON DUPLICATE KEY UPDATE paused_by = VALUES(paused_by), reason = VALUES(reason),"
        " created = VALUES(created), paused_until = VALUES(paused_until);\n"
        "SELECT " + pause_columns() + " FROM " + P + " WHERE name = ?1");

    // ?1 name. Whether the deleted pause was in force: 1 or 0.
    set.add(Query::resume,
        "SET @sqlock_paused = 0;\n"
        "SELECT IF(" + pause_live + ", 1, 0) INTO @sqlock_paused FROM " + P +
        " WHERE name = ?1 FOR UPDATE;\n"
        "DELETE FROM " + P + " WHERE name = ?1;\n"
        "SELECT @sqlock_paused", Mode::transaction);
    set.add(Query::paused,
        "SELECT " + pause_columns() + " FROM " + P + " WHERE name = ?1 AND " + pause_live);
    set.add(Query::pauses,
        "SELECT " + pause_columns() + " FROM " + P + " WHERE " + pause_live + " ORDER BY name");

    // ?1 batch size. One statement: InnoDB reads each row it deletes as it
    // is now, so a pause renewed meanwhile (live again) stays, and of two
    // reapers at once the second waits for the first's row locks and finds
    // those rows gone. ORDER BY makes the LIMIT deterministic for
    // statement-based replication.
    set.add(Query::purge_pauses,
        "DELETE FROM " + P + " WHERE paused_until <= " + now +
        " ORDER BY paused_until, name LIMIT ?1");
    set.add(Query::count_pauses,
        "SELECT COUNT(*) FROM " + P + " WHERE paused_until <= " + now);
}

// The waiting line.
void add_queue(StatementSet& set, const MariaTarget& t) {
    using Mode = QueryText::Mode;
    // The queue of waiters. Q is the queue table. ?1 name, ?2 waiter, ?3
    // inbox, ?4 lease (ms).
    const std::string& Q = t.family.side(SideTable::queue).quoted;
    // Besides the ticket or whether the place is still held: the live
    // waiters ahead, and in how many ms the first of their places lapses
    // unless renewed (-1: nobody ahead), when the waiter looks again.
    auto ahead = [&](const std::string& name, const std::string& ticket) {
        const std::string mine = " FROM " + Q + " WHERE lockstring = " + name + " AND id < " +
                                 ticket + " AND expires > " + now;
        return "(SELECT COUNT(*)" + mine + "), COALESCE((SELECT TIMESTAMPDIFF(MICROSECOND, " +
               now + ", MIN(expires)) DIV 1000" + mine + "), -1)";
    };
    set.add(Query::queue_join,
        "DELETE FROM " + Q + " WHERE lockstring = ?1 AND expires <= " + now + ";\n"
        "INSERT INTO " + Q + " (lockstring, waiter, inbox, expires) VALUES (?1, ?2, ?3, " + now +
        " + " + micros_param("?4") + ");\n"
        "SELECT LAST_INSERT_ID(), " + ahead("?1", "LAST_INSERT_ID()"), Mode::transaction);
    // ?1 ticket, ?2 waiter, ?3 lease (ms), ?4 name. Whether the row is
    // still there is read, not ROW_COUNT(): an update within the
    // millisecond of the last one changes nothing.
    set.add(Query::queue_poll,
        "UPDATE " + Q + " SET expires = " + now + " + " + micros_param("?3") +
        " WHERE id = ?1 AND waiter = ?2 AND expires > " + now + ";\n"
        "SELECT EXISTS(SELECT 1 FROM " + Q + " WHERE id = ?1 AND waiter = ?2 AND expires > " + now +
        "), " + ahead("?4", "?1"));
    set.add(Query::queue_leave, "DELETE FROM " + Q + " WHERE id = ?1 AND waiter = ?2");
    set.add(Query::queue_length,
        "SELECT COUNT(*) FROM " + Q + " WHERE lockstring = ?1 AND expires > " + now);
}

// Leaders' values.
void add_leaders(StatementSet& set, const MariaTarget& t) {
    const std::string& T = t.family.table().quoted;
    // Leaders' values. The insert is one atomic step; an update keeps a
    // newer leader's value (each assignment sees the ones before it, so
    // fencing_id goes last). The affected count cannot say whether it
    // stored (an unchanged row counts 0), so the answer is read back.
    const std::string& D = t.family.side(SideTable::leaders).quoted;
    const std::string newer = "fencing_id <= VALUES(fencing_id)";
    set.add(Query::proclaim,
        "INSERT INTO " + D + " (name, fencing_id, value, proclaimed) SELECT ?1, ?2, ?4, "
        "UTC_TIMESTAMP(6) FROM " + T + " WHERE id = ?2 AND lockstring = ?1 AND locked_by = ?3"
        " AND expires > " + now + " ON DUPLICATE KEY UPDATE"
        " value = IF(" + newer + ", VALUES(value), value),"
        " proclaimed = IF(" + newer + ", VALUES(proclaimed), proclaimed),"
        " fencing_id = GREATEST(fencing_id, VALUES(fencing_id));\n"
        "SELECT EXISTS(SELECT 1 FROM " + D + " WHERE name = ?1 AND fencing_id = ?2 AND"
        " value = ?4) AND EXISTS(SELECT 1 FROM " + T + " WHERE id = ?2 AND locked_by = ?3"
        " AND expires > " + now + ")");
    set.add(Query::leader,
        "SELECT " + columns() + ", d.value FROM " + T + " AS t LEFT JOIN " + D +
        " AS d ON d.name = t.lockstring AND d.fencing_id = t.id WHERE t.lockstring = ?1");
}

// What `sqlock run --after` reads and records.
void add_after_runs(StatementSet& set, const MariaTarget& t) {
    const std::string& R = t.family.side(SideTable::runs).quoted;
    // `sqlock run --after`: the runs that ran, the skips, a skip recorded
    // (?1 name ... ?7 fencing id as for start_run, ?8 the outcome).
    const std::string skipped = skipped_outcomes_sql;
    set.add(Query::recent_runs,
        runs_select(t, "r.name = ?2 AND r.outcome NOT IN " + skipped,
                    "r.started DESC, r.id DESC LIMIT ?1"));
    set.add(Query::last_skip,
        runs_select(t, "r.name = ?1 AND r.outcome IN " + skipped,
                    "r.started DESC, r.id DESC LIMIT 1"));
    set.add(Query::skip_run,
        "INSERT INTO " + R + " (name, window_start, host, pid, username, program, fencing_id,"
        " started, ended, outcome) VALUES (?1, CAST(?2 AS DATETIME(3)), ?3, ?4, ?5, ?6, ?7, " +
        std::string(now) + ", " + now + ", ?8);\n"
        "SELECT LAST_INSERT_ID()");
}

// What `sqlock metrics` reads.
void add_metrics(StatementSet& set, const MariaTarget& t) {
    const std::string& T = t.family.table().quoted;
    const std::string& Q = t.family.side(SideTable::queue).quoted;
    const std::string& D = t.family.side(SideTable::leaders).quoted;
    // `sqlock metrics`: the live rows, the lines, the elections.
    set.add(Query::live_locks,
        "SELECT lockstring, id, ROUND(TIMESTAMPDIFF(MICROSECOND, created, " + std::string(now) +
        ") / 1000) / 1000, ROUND(TIMESTAMPDIFF(MICROSECOND, " + now + ", expires) / 1000) / 1000"
        " FROM " + T + " WHERE expires > " + now + " ORDER BY lockstring");
    set.add(Query::queue_lengths,
        "SELECT lockstring, COUNT(*) FROM " + Q + " WHERE expires > " + now +
        " GROUP BY lockstring ORDER BY lockstring");
    set.add(Query::leader_names, "SELECT name FROM " + D + " ORDER BY name");
    set.add(Query::queue_joined, "SELECT COUNT(*) > 0 FROM information_schema.COLUMNS WHERE " +
        is_table(t.family.side(SideTable::queue).name) + " AND COLUMN_NAME = 'joined'");
    set.add(Query::queue_waits,
        "SELECT lockstring, COUNT(*), ROUND(TIMESTAMPDIFF(MICROSECOND, MIN(joined), " +
        std::string(now) + ") / 1000) / 1000 FROM " + Q + " WHERE expires > " + now +
        " GROUP BY lockstring ORDER BY lockstring");
}

// clang-format on

}  // namespace

StatementSet statement_set(const MariaTarget& t) {
    StatementSet set("MariaDB");
    add_catalog(set, t);
    add_runs(set, t);
    add_pauses(set, t);
    add_queue(set, t);
    add_leaders(set, t);
    add_after_runs(set, t);
    add_metrics(set, t);
    return set;
}

std::string bind(const std::string& sql, const std::vector<Value>& params) {
    // The scanner below knows quotes, not comments nor backslash escapes
    // ('it\'s'): text with either could hide a "?1" from it, or show it
    // one that is not there.
    for (const char* token : {"--", "#", "/*", "\\"})
        if (sql.find(token) != std::string::npos)
            throw error(errc::backend, std::string("a MariaDB statement to bind has \"") + token +
                                           "\" in it: statements of a StatementSet have no "
                                           "comments and no backslashes");
    std::string out;
    out.reserve(sql.size() + 64);
    char quote = 0;  // inside '...', "..." or `...`
    for (std::size_t i = 0; i < sql.size(); ++i) {
        const char c = sql[i];
        if (quote) {
            out += c;
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"' || c == '`') {
            quote = c;
            out += c;
            continue;
        }
        if (c != '?' || i + 1 >= sql.size() || sql[i + 1] < '0' || sql[i + 1] > '9') {
            out += c;
            continue;
        }
        std::size_t n = 0, j = i + 1;
        while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9' && n < 1000)
            n = n * 10 + static_cast<std::size_t>(sql[j++] - '0');
        if (n == 0 || n > params.size())
            throw error(errc::backend, "a MariaDB statement refers to parameter ?" +
                                           std::to_string(n) + " of " +
                                           std::to_string(params.size()));
        const Value& v = params[n - 1];
        switch (v.kind()) {
            case Value::Kind::null:
                out += "NULL";
                break;
            case Value::Kind::integer:
            case Value::Kind::millis:
                out += std::to_string(v.number());
                break;
            case Value::Kind::text:
                out += literal(v.str());
                break;
        }
        i = j - 1;
    }
    return out;
}

std::string exact_collations() {
    return "SELECT COLLATION_NAME FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN "
           "('utf8mb4_nopad_bin', 'utf8mb4_0900_bin') ORDER BY COLLATION_NAME = "
           "'utf8mb4_nopad_bin' DESC";
}

}  // namespace sqlock::detail::mariadb::sql