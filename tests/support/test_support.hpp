// Shared helpers for sqlock's tests: the backend under test, scratch files,
// child processes (process.hpp), server URLs (server_url.hpp), options in
// one expression (options.hpp), what a test needs (backend_needs.hpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend_context.hpp"
#include "backend_needs.hpp"
#include "options.hpp"
#include "process.hpp"
#include "server_url.hpp"
#include "sqlock/sqlock.hpp"

namespace sqlock_test {

/// Which backend this test binary runs against, one of SQLOCK_BACKENDS built
/// ("sqlite", "postgres", "mariadb"), from $SQLOCK_TEST_BACKEND (default
/// sqlite). tests/CMakeLists.txt (add_backend_suite) registers each suite once
/// per backend.
const std::string& backend();

/// The test context of the backend under test (backend_context.hpp): its
/// server's environment variables and its hooks, from its folder.
const BackendContext& backend_context();

/// True when the backend under test is a database server reached over TCP
/// (one with a testing/server.sh: postgres, mariadb): it has accounts and
/// grants, a network that can fail, and a clock of its own. False for SQLite.
bool is_server_backend();

/// For a helper that a test without the tag [needs:`need`] must not call:
/// true when the running test declares it; otherwise the test fails, saying
/// that `helper` needs the tag. A helper that once returned false where the
/// test did not apply (and the test returned, checking nothing) calls this
/// instead, so an old-style call fails loudly rather than passing.
bool declares_need(const std::string& need, const std::string& helper);

/// For a test written before tests declared their needs as tags: true. The
/// test must carry the tag [needs:server] (backend_needs.hpp), which keeps it
/// from running on an embedded database at all (reported as skipped, with
/// the reason); without the tag it fails, saying so, on every backend.
/// `why` is the test's reason ("SQLite has no accounts"), for the message.
///
///   TEST_CASE("...", "[security][needs:server]") { ... }
bool only_on_server_backend(const std::string& why = {});

/// The converse, for a test of what only an embedded database does: the
/// test must carry [needs:embedded].
bool only_on_embedded_backend(const std::string& why = {});

/// A fresh, empty lock table on the backend under test: a new database of an
/// embedded backend (a new SQLite file), or a new table name on the server at
/// $<backend_context().url_variable>. Already initialised.
struct Database {
    std::string url;
    std::string table;
    sqlock::Locker open(sqlock::LockerOptions options = {}) const;
};
Database fresh_database();

/// A private scratch directory for this test process (removed at exit).
const std::string& scratch_dir();

/// The whole content of the file at `path`, as bytes ("" if it cannot be
/// read).
std::string read_file(const std::string& path);

/// ScopedThread
///
/// A std::thread that joins when it goes out of scope. A failing REQUIRE
/// throws; a plain joinable std::thread destroyed by that unwinding calls
/// std::terminate and loses every result of the test binary. The body must
/// end by itself (bounded waits only), or the join waits for it.
class ScopedThread {
  public:
    template <typename F>
    explicit ScopedThread(F&& body) : thread_(std::forward<F>(body)) {}
    ScopedThread(ScopedThread&&) = default;
    ScopedThread& operator=(ScopedThread&&) = delete;
    ~ScopedThread() { join(); }
    void join() {
        if (thread_.joinable()) thread_.join();
    }

  private:
    std::thread thread_;
};

/// For a test written before tests declared their needs as tags: returns
/// `present`, and fails the test when it is false. A tool a test needs is a
/// need of its own (needs.hpp: DeclareNeed, or backend_needs.hpp's
/// libfaketime): the run then skips the test where the tool is missing,
/// with the reason, or fails it where the run requires every tool
/// ($SQLOCK_TEST_REQUIRE_ALL=1).
bool have_tool(bool present, const std::string& what);

/// For a test written before tests declared their needs as tags: fails the
/// test, naming `why`. What a test needs of the backend's test context is
/// the tag [needs:<hook>] (backend_needs.hpp); the run then reports the test
/// as skipped where the hook is missing, and never runs it there.
void skip_test(const std::string& why);

/// The category of the sqlock::error that `f` throws; fails the test if it
/// throws none.
sqlock::errc category_of(const std::function<void()>& f);

/// Waits for `condition` up to `timeout`, re-checking every few ms.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Witness files: a file that exists only while its creator holds a lock.
/// enter_witness() creates it with O_EXCL and returns false if it already
/// exists — a second holder at the same time, the overlap every mutual
/// exclusion test looks for; leave_witness() removes it before the release.
bool enter_witness(const std::string& path);
void leave_witness(const std::string& path);

/// How many files in `dir` have names that start with `prefix`.
// The names of listed rows, in the order listed.
std::vector<std::string> names_of(const std::vector<sqlock::LockInfo>& rows);

int files_starting(const std::string& dir, const std::string& prefix);

/// The observer of the lock set stress tests: reads the table's rows under
/// `prefix` until `done()`, and checks in each read that every owner whose
/// live rows carry a "set_size" metadata value holds exactly that many.
/// Returns 0 when every read saw whole sets, 4 when one saw part of a set,
/// 5 when it never read.
int observe_whole_sets(sqlock::Locker& locker, const std::string& prefix,
                       const std::function<bool()>& done);

/// Appends `id` to `path`, one per line, for read_ids().
void append_id(const std::string& path, long long id);

/// Reads the ids one per line from `path` (written by holders in
/// acquisition order) and returns them; fencing tests check they increase.
std::vector<long long> read_ids(const std::string& path);

/// Seconds from one database timestamp ("YYYY-MM-DD HH:MM:SS.mmm", UTC) to
/// another, read independently of the library's own parser.
double seconds_between(const std::string& from, const std::string& to);

/// Runs `sql` directly on the database under test, independent of the code
/// under test (the backend's own client library on a new connection: its
/// BackendHooks::query), and returns its rows as text. `sql` may hold several
/// statements; the rows are the last statement's. Throws std::runtime_error
/// on failure.
///
/// The same SQL text means the same on every backend: MariaDB sessions run
/// with sql_mode ANSI_QUOTES and NO_BACKSLASH_ESCAPES ("t" is a name, '\n' is
/// two characters, as in standard SQL) and time_zone '+00:00' (timestamps
/// read and written as UTC, as the library stores them).
std::vector<SqlRow> query(const Database& db, const std::string& sql);

/// A transaction of the application's own on db's database, through the
/// backend's client library and sqlock's adapter for its handle
/// (BackendHooks::app_transaction); with `begin` false, a connection in
/// autocommit. Fails the test where the backend has none.
std::unique_ptr<AppTransaction> app_transaction(const Database& db, bool begin = true);

/// query() for statements whose rows do not matter (planting odd rows).
void exec_sql(const Database& db, const std::string& sql);

/// Server backends: grants `account` (another account of the test server,
/// e.g. "sqlock_noaccess") on db's lock table and the tables beside it
/// (`<table>_runs`, `_queue`, `_pauses`, `_leaders`) what the
/// documentation tells
/// an administrator to grant a program that uses the table but does not
/// create it (BackendHooks::grant_table_use_sql: SELECT, INSERT, UPDATE,
/// DELETE, and on PostgreSQL USAGE on the table's id sequence; on MariaDB
/// EXECUTE on the guard procedure).
void grant_table_use(const Database& db, const std::string& account);

/// Server backends: `db` as the test server's least-privileged account
/// ("sqlock_noaccess") sees it, once granted what a program that uses the
/// table needs (grant_table_use) and nothing more.
Database least_privileged(const Database& db);

/// sqlock::error::backend_code() of a statement the server refused for lack
/// of a privilege on the table (BackendHooks::privilege_denied_code:
/// PostgreSQL's SQLSTATE "42501"; MariaDB's "1142/42000").
std::string privilege_denied_code();

}  // namespace sqlock_test
