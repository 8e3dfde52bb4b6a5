// The core doctor of a database server, written once: what every server
// backend's report says about the database, its clock, the lock table, the
// tables beside it and this user's access to them. A backend's doctor reads
// these facts in its own dialect (its catalog, its privilege probes), hands
// them to report_server() and report_tables(), and adds the facts only it
// has (a pooler, Galera, the session defaults) between and after.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/host_resolution.hpp"
#include "contract/clock_report.hpp"
#include "contract/side_table_report.hpp"
#include "sqlock/diagnosis.hpp"

namespace sqlock::detail {

/// What a server backend's doctor read of the database.
struct ServerFacts {
    LookupReport lookups;  // of the URL's host names
    std::string version;   // the "server version" fact, with the backend's note
    std::string role;      // the "server role" fact: "primary (read-write)"
    /// What to do about a server that takes no writes, or "" when it takes
    /// them.
    std::string read_only_problem;
    ClockDifference clock;
    std::string user;  // who the doctor connected as
    /// The lock table as the user gave it, and its access: what this user
    /// lacks on it, when the backend's probes name privileges, and whether
    /// it may use it.
    std::string table;
    bool table_exists = false;
    bool table_usable = true;
    std::vector<std::string> table_lacking;
    /// What the lock table's fact adds when it may be used: " (lockstring
    /// collation utf8mb4_nopad_bin)".
    std::string table_note;
    std::vector<SideTableFacts> sides;  // in the family's order
};

/// How a backend words this user's access.
struct AccessWording {
    /// "role" (PostgreSQL) or "user" (MariaDB): what `user` is.
    std::string user_word;
    /// What making a table needs: "CREATE on the schema".
    std::string create_needs;
    /// What grants the privileges on `tables` tables, `serial_ids` when one
    /// of them draws its id from a sequence (the lock table does): "GRANT
    /// SELECT, INSERT, UPDATE, DELETE ON it and USAGE ON SEQUENCE of its id".
    std::function<std::string(std::size_t tables, bool serial_ids)> grant;
    /// What a missing side table needs after `sqlock init` and its CREATE:
    /// ", then grant the roles that use the lock table the same on it".
    std::string after_side_init;
};

/// The facts "host name lookup", "server version", "server role" and
/// "clock difference", and the problems of each: lookups, read-only, clock.
void report_server(const ServerFacts& facts, Diagnosis& out,
                   const std::function<void(std::string)>& problem);

/// The facts of the lock table and of each side table ("present; bob may
/// use it", "present; bob lacks privileges", "missing"), and their
/// problems: a missing lock table, one line for every table this user may
/// not use with what to grant, and each missing side table.
void report_tables(const ServerFacts& facts, const AccessWording& wording, Diagnosis& out,
                   const std::function<void(std::string)>& problem);

}  // namespace sqlock::detail
