// The table family: the lock table, its expiry index, the tables init()
// creates beside it and the guard, described once. Init's "is it all
// there?" check, Connection::has() and each backend's Query::side_tables,
// the doctor (side_table_report.hpp), the privilege probes and MariaDB's
// grant hint walk the one list below, so a new side table is one entry here
// plus its CREATE in each dialect's sql/<backend>/schema.sql (and, where its
// rows go stale, a Query key the reaper runs, as Query::purge_pauses).
//
// Thread safety: a TableFamily is immutable once built; share it freely.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace sqlock::detail {

/// The tables beside the lock table, in the order every walk takes them.
/// Query::side_tables answers one boolean for each of common_side_tables,
/// in this order.
enum class SideTable : std::size_t {
    runs,     ///< the run history (`sqlock run`, Locker::start_run)
    pauses,   ///< paused jobs (`sqlock pause`)
    queue,    ///< the line of waiters (`--wait`)
    leaders,  ///< the values leaders proclaim (`sqlock elect`)
    fencing,  ///< MariaDB's fencing register: turns and ids on Galera
};

constexpr std::size_t side_table_count = static_cast<std::size_t>(SideTable::fencing) + 1;

/// The side tables every backend makes, which init() creates, has() looks
/// for, the doctor reports and check_access() probes.
constexpr std::array<SideTable, 4> common_side_tables = {SideTable::runs, SideTable::pauses,
                                                         SideTable::queue, SideTable::leaders};

/// What the core knows of one side table, whatever the dialect.
struct SideTableKind {
    SideTable key;
    /// "runs": the table is "<table>_runs", ${runs} in schema.sql.
    const char* suffix;
    /// "run history table": how messages and the doctor's facts name it.
    const char* title;
    /// "its run history": what the table is to its lock table, in a grant hint.
    const char* purpose;
    /// What does not work while it is missing (the doctor's problem line).
    const char* without;
    /// Its id is drawn from a sequence (PostgreSQL grants USAGE on it).
    bool serial_id;
    /// Its indexes, each ${<suffix>_<index>_idx} in a schema file that
    /// creates them apart from the table (MariaDB's name them inside it).
    std::vector<const char*> indexes;
    /// The columns a privilege probe reads and writes (MariaDB probes with
    /// statements that change nothing), and the one it updates.
    const char* columns;
    const char* updated;
};

/// Every side table, in SideTable order.
const std::array<SideTableKind, side_table_count>& side_table_kinds();
const SideTableKind& kind_of(SideTable table);

/// `prefix` + `suffix` if that fits in 63 bytes (PostgreSQL's identifier
/// limit, MariaDB's is 64), else `prefix` cut short + "_" + a hash of the
/// whole `prefix`, + `suffix`: deterministic and still distinct, where a server would
/// truncate silently and two long names could meet.
std::string fit_identifier(const std::string& prefix, const std::string& suffix);

/// The table `table` (validated, maybe schema-qualified) has beside it:
/// "<table>_<suffix>", in the same schema ("ops.locks" -> "ops.locks_runs"),
/// its last part fitted to 63 bytes.
std::string name_beside(const std::string& table, const std::string& suffix);

/// The side table `side` of lock table `table`.
std::string side_table_name(const std::string& table, SideTable side);

/// One object of a family: its name as given ("ops.locks_runs"), quoted in
/// the dialect (`"ops"."locks_runs"`), and quoted without its schema, as
/// an index is named in the schema of its table.
struct FamilyName {
    std::string name;
    std::string quoted;
    std::string local;
};

/// TableFamily
///
/// The names of one lock table's family in one dialect: what a backend's
/// statements and schema file refer to. `quote` quotes a validated name,
/// maybe schema-qualified; `sides` are the side tables this backend makes
/// (all but the fencing register, which only MariaDB uses).
///
///     TableFamily f("ops.locks", quote_table_name);
///     f.side(SideTable::runs).quoted;  // "ops"."locks_runs"
class TableFamily {
  public:
    using Quote = std::function<std::string(const std::string&)>;

    struct Options {
        std::vector<SideTable> sides{common_side_tables.begin(), common_side_tables.end()};
        /// Whether the expiry index's name is fitted to 63 bytes (SQLite's
        /// was named before names were, and SQLite has no limit).
        bool fit_index = true;
    };

    TableFamily(const std::string& table, const Quote& quote);
    TableFamily(const std::string& table, const Quote& quote, Options options);

    const FamilyName& table() const noexcept { return table_; }
    /// The expiry index, "<table>_expires_idx".
    const FamilyName& index() const noexcept { return index_; }
    /// The guard (guard.hpp): "<table>_guard", a function on PostgreSQL, a
    /// procedure on MariaDB, a view on SQLite.
    const FamilyName& guard() const noexcept { return guard_; }
    /// The side tables this backend makes, in SideTable order.
    const std::vector<SideTable>& sides() const noexcept { return sides_; }
    /// Side table `side` (also one this backend does not make).
    const FamilyName& side(SideTable side) const;
    /// Index `what` of side table `side`: "<side>_<what>_idx", fitted.
    FamilyName side_index(SideTable side, const std::string& what) const;

    /// `sql`, a schema file of sql/, with every name of the family filled
    /// in: ${table}, ${index}, ${guard}, ${<suffix>} of each side table and
    /// ${<suffix>_<index>_idx} of each of its indexes, quoted (indexes
    /// without their schema, as an index lives in its table's).
    std::string fill(std::string sql) const;

  private:
    FamilyName named(const std::string& name) const;
    Quote quote_;
    FamilyName table_, index_, guard_;
    std::array<FamilyName, side_table_count> side_{};
    std::vector<SideTable> sides_;
};

/// Replaces every "${key}" in `sql` with `value`.
std::string substitute(std::string sql, const std::string& key, const std::string& value);

}  // namespace sqlock::detail
