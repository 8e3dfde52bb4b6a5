// What the benchmark knows of each backend, supplied by the backend's own
// folder (src/backends/<name>/testing/, see cmake/backend_bench.cmake): its
// raw baseline client and what its rows need. The harness reads this table
// and names no backend itself.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sqlock_bench {

class RawClient;

/// A command-line option of a backend's: its name without the dashes, the
/// environment variable that is its default, and its help.
struct BenchOption {
    std::string name;
    std::string variable;
    std::string help;
};

/// The values of the backends' options, by option name ("" when not given).
struct OptionValues {
    std::vector<std::pair<std::string, std::string>> values;
    const std::string& operator[](const std::string& name) const;
};

/// BenchHooks
///
/// What a backend's testing/<name>_bench.cpp defines, as
/// `sqlock_bench::BenchHooks <name>_bench_hooks()`. Only `connect` is
/// required; each of the others adds or tunes rows of a section.
struct BenchHooks {
    /// The baseline client on `location` (a server's URL, or the path of an
    /// embedded database's file) for the lock table `table` (a plain
    /// identifier). Throws std::runtime_error.
    std::unique_ptr<RawClient> (*connect)(const std::string& location,
                                          const std::string& table) = nullptr;

    /// An embedded backend: the URL sqlock opens for the database file at
    /// `path`. Each measurement then gets a file of its own in the run's
    /// scratch directory; null for a server backend, whose measurements get
    /// tables of their own on the server.
    std::string (*file_url)(const std::string& path) = nullptr;
    /// With file_url: removes the database file at `path` and what the
    /// database keeps beside it, ignoring what is not there.
    void (*remove_files)(const std::string& path) = nullptr;

    /// Facts for the head of the report ("sqlite": the library's version).
    std::vector<std::pair<std::string, std::string>> (*facts)() = nullptr;

    /// The raw statements of the uncontended row, for its note ("INSERT ...
    /// RETURNING id + DELETE").
    std::string raw_statements = "INSERT ... RETURNING id + DELETE";

    /// sqlock's guarantees added to the raw acquire+release one at a time,
    /// each on top of the ones before (RawClient::cycle_layer), for the
    /// price of each alone: the words of each row, in order, after
    /// `layer_operation`. Empty: no layered rows.
    std::vector<std::string> layers;
    std::string layer_operation = "acquire+release, ";
    /// The layers also with the parallel section's processes (not in quick
    /// mode).
    bool layers_in_parallel = false;

    /// Not empty: the semaphore section adds a row of the raw slot statement
    /// wrapped in these of sqlock's guarantees
    /// (RawClient::try_acquire_slot_guarded), these words in its operation.
    std::string guarded_slot;

    /// The targets of rows that have one on this backend: a semaphore's
    /// ratio at least, the contention section's release-to-acquire p50 in
    /// ms below, the guard's ratio against SELECT 1 in its place at least.
    std::optional<double> semaphore_goal;
    std::optional<double> contention_p50_goal_ms;
    std::optional<double> guard_statement_goal;

    /// Whether a release wakes its waiters and a leader's watchers at once
    /// (pushed) rather than at their next poll: the leader section takes
    /// more and shorter turns then.
    bool pushes_wake_ups = false;

    /// What RawClient::work_done() counts ("transactions", "statements").
    std::string work_unit = "transactions";

    /// sqlock on another way to the same database, against sqlock on the
    /// direct one: the uncontended section's rows of the pooled path.
    struct Detour {
        std::string url;  // holds the password: never printed
        std::string operation;
        std::string note;
        /// Non-empty: the other lock kinds (slot, set, shared) are priced
        /// this way too, their rows named "<kind's row>, <kind_suffix>".
        std::string kind_suffix;
    };
    std::vector<Detour> (*detours)(const std::string& url, const OptionValues& options) = nullptr;

    /// The command rows' baseline, where this is the command's default
    /// database: a program that takes the same lock row around `true`, run
    /// as `program DATABASE NAME true`, and the rows' name for it.
    struct CommandBaseline {
        std::string program;
        std::string name;
    };
    std::optional<CommandBaseline> command_baseline;
};

/// BenchBackend
///
/// One backend as the benchmark sees it: its name in the results and in
/// --backend, its title for messages, the build option that switches it on,
/// its command-line options (a server's URL first), and its hooks when it
/// was built. Whether the command's default database is this backend's
/// (the command rows run there only).
struct BenchBackend {
    std::string name;          ///< "postgresql"
    std::string title;         ///< "PostgreSQL"
    std::string build_option;  ///< "SQLOCK_WITH_POSTGRES"
    std::vector<BenchOption> options;
    bool server = false;  ///< measured on the server its first option names
    bool default_database = false;
    std::optional<BenchHooks> hooks;  ///< empty when built without it
};

/// Every backend declared, in the order of SQLOCK_BACKENDS (generated by
/// cmake/backend_bench.cmake as generated/bench_backend_table.cpp).
const std::vector<BenchBackend>& bench_backends();

}  // namespace sqlock_bench
