// The SQL of the SQLite backend, as data: the lock's own statements (Sql,
// run by SqliteConnection itself) and the core's (statement_set()). Parameters
// are bound as ?1, ?2, ...; times are SQLite's: 'now' is fixed for the
// duration of one sqlite3_step(), so every time in a statement agrees.
//
// Result columns of a lock row, in this order (see read_row()):
//   id, lockstring, created, expires, locked_by, seconds_left
#pragma once

#include <string>

#include "contract/statement_set.hpp"
#include "contract/table_family.hpp"
#include "sqlock/duration.hpp"

namespace sqlock::detail::sqlite {

/// The names of a lock table and of the tables beside it, as the SQL needs
/// them: its family (names as given and quoted: the table as
/// family.table().quoted, the guard's view as family.guard().quoted, the
/// side tables as family.side(SideTable::runs).quoted), and the quoted name
/// of the guard's trigger, which the family does not name.
struct Tables {
    explicit Tables(const std::string& table);
    TableFamily family;
    std::string guard_check;  // quoted: the guard's trigger
};

/// `text` as an SQL string literal ('' doubles a quote; nothing else is
/// special in SQLite's).
std::string literal(const std::string& text);

/// The lock's own statements.
enum class Sql {
    insert,
    delete_expired,
    keep_until_min_hold,
    renew,
    delete_exact,
    insert_lowest_slot,
    delete_expired_slots,
    first_to_expire_slot,
    odd_expired_ids,
    delete_id_if_dead,
    has_table,
    waiters_ahead,
    /// ?1 a JSON array of names: a live waiter queued for any of them.
    set_waiters,
    /// ?1 a JSON array of ids, ?2 locked_by: deletes those rows held by it.
    delete_set,
    /// ?1 a JSON array of names, ?2 lease modifier, ?3 locked_by: inserts
    /// the free ones, in the array's order; returns (id, lockstring,
    /// created, expires) of each.
    insert_set,
    /// ?1 a JSON array of names: deletes their expired rows.
    delete_expired_set,
    /// ?1 name, ?2 a holder row's expiry, ?3 marker owner: extends the live
    /// shared marker of the name to at least that.
    shared_marker_extend,
    /// ?1 name, ?2 holders' prefix, ?3 the prefix's upper bound, ?4 marker
    /// owner: deletes the marker when no live holder row is left.
    shared_marker_drop,
    /// The same parameters: sets the marker's expiry to the latest of the
    /// live holder rows'.
    shared_marker_shrink,
    count
};

/// The text of `kind` for `tables`.
std::string sql_text(Sql kind, const Tables& tables);

/// The core's statements (statement_set.hpp) for `tables`.
StatementSet statement_set(const Tables& tables);

/// The schema script (sql/sqlite/schema.sql) for `tables`.
std::string schema_script(const Tables& tables);

/// What makes a queue made before its `joined` column into the schema's,
/// keeping its rows and tickets: to run in one write transaction, once the
/// queue is known to lack the column.
std::string queue_upgrade_script(const Tables& tables);

/// A duration as an SQLite date modifier: "+3600.250 seconds".
std::string seconds_modifier(duration d);

/// The same without its sign, "3600.250 seconds": how a duration parameter
/// of the core's statements is bound (their SQL adds the sign).
std::string duration_modifier(std::int64_t ms);

}  // namespace sqlock::detail::sqlite
