// Filling in the schema files of sql/ (each backend's is compiled into it as
// <backend>_schema_sql: cmake/embed_sql.cmake), and the names of the tables
// and indexes beside the lock table.
#pragma once

#include <string>

namespace sqlock::detail {

/// Replaces every "${key}" in `sql` with `value`.
std::string substitute(std::string sql, const std::string& key, const std::string& value);

/// `sql`, a schema file of sql/ for a backend whose identifiers
/// quote_table_name() quotes, with its names filled in: ${table},
/// ${index}, ${runs}, ${pauses}, ${queue} and ${leaders} by the quoted
/// names given,
/// ${runs_<what>_idx} by the indexes of the runs table `runs_name`
/// (unquoted; runs_index_name()), quoted, and ${queue_idx} by the index of
/// the queue `queue_name` (unquoted), quoted.
std::string schema_with_names(std::string sql, const std::string& table, const std::string& index,
                              const std::string& runs, const std::string& pauses,
                              const std::string& runs_name, const std::string& queue,
                              const std::string& queue_name, const std::string& leaders);

/// `prefix` + `suffix` if that fits in 63 bytes (PostgreSQL's identifier
/// limit, MariaDB's is 64), else `prefix` cut short + "_" + a hash of the
/// whole `prefix` + `suffix`: deterministic and still distinct, where a
/// server would truncate silently and two long names could meet.
std::string fit_identifier(const std::string& prefix, const std::string& suffix);

/// The run history table of lock table `table` (validated, maybe
/// schema-qualified): "<table>_runs", in the same schema ("ops.locks" ->
/// "ops.locks_runs"), its last part fitted to 63 bytes.
std::string runs_table_name(const std::string& table);

/// The pauses table of lock table `table`: "<table>_pauses", fitted and
/// qualified as runs_table_name() does.
std::string pauses_table_name(const std::string& table);

/// The queue of waiters of lock table `table`: "<table>_queue", fitted and
/// qualified as runs_table_name() does.
std::string queue_table_name(const std::string& table);

/// The leaders' values of lock table `table`: "<table>_leaders", fitted and
/// qualified as runs_table_name() does.
std::string leaders_table_name(const std::string& table);

/// The fencing register of lock table `table`: "<table>_fencing", fitted
/// and qualified as runs_table_name() does. MariaDB's, used on Galera
/// (docs/mariadb.md): per name, the largest id handed out for it.
std::string fencing_table_name(const std::string& table);

/// The guard of lock table `table` (guard.hpp): "<table>_guard", fitted and
/// qualified as runs_table_name() does; a function on PostgreSQL, a
/// procedure on MariaDB, a view on SQLite.
std::string guard_routine_name(const std::string& table);

/// The name of index `what` ("name", "started", "fencing") of the runs
/// table `runs` (unqualified, as indexes are named within their schema).
std::string runs_index_name(const std::string& runs, const std::string& what);

/// The index of the queue `queue` (unqualified): its waiters by name and
/// ticket.
std::string queue_index_name(const std::string& queue);

}  // namespace sqlock::detail
