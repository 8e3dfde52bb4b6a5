// What the tests know about each backend, supplied by the backend's own
// folder (src/backends/<name>/testing/, see cmake/backend_tests.cmake): the
// test support below reads this table and names no backend itself.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sqlock/error.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock_test {

/// A result row; a NULL cell is nullopt.
using SqlRow = std::vector<std::optional<std::string>>;

/// A row another program wrote into the lock table, as SQL expressions, and
/// what sqlock must conclude of it (reliability/foreign_rows_test.cpp).
struct ForeignRow {
    std::string name;     ///< its lockstring, as text
    std::string created;  ///< SQL expressions
    std::string expires;
    std::string locked_by;  ///< "" for the suite's usual DBIx::Locker holder
    enum verdict_t { held, expired, either } verdict;
};

/// One fact of `sqlock doctor`: a line "key: value" whose value contains
/// `contains` (any value when empty).
struct DoctorFact {
    std::string key;
    std::string contains;
};

/// What `sqlock doctor` reports on this backend.
struct DoctorFacts {
    std::string backend;  ///< the fact "backend" ("postgresql")
    std::vector<DoctorFact> facts;
};

/// An input the library refuses only on this backend: a URL of its scheme
/// or a table name its dialect does not take (reliability's hostile-input
/// tests).
struct HostileInput {
    std::string what;
    sqlock::errc category;  ///< of the library's error
    std::string url;        ///< "" for the database under test's
    std::string table;      ///< "" for the database under test's
    int cli_exit = 0;       ///< what `sqlock list` exits with; 0: the CLI is not tried
};

/// A URL of this backend whose password holds a character that ends the
/// userinfo in some other grammar ('?', '#', '@'), for a port nobody listens
/// on: neither its Locker's url() nor its error may show the password.
struct RedactedUrl {
    std::string password;
    std::string url;
};

/// A URL of the test server made wrong, and the categories its failure may
/// have (reliability/security_test.cpp checks no password leaks from it).
struct BadUrl {
    std::string url;
    std::vector<sqlock::errc> categories;
};

/// An application's own transaction on the database under test, through
/// the backend's client library and sqlock's adapter for its handle
/// (sqlock/<backend>/transaction.hpp): what a program that guards its
/// writes holds.
class AppTransaction {
  public:
    virtual ~AppTransaction() = default;
    /// The handle as sqlock::Transaction (the adapter under test).
    virtual sqlock::Transaction& adapter() = 0;
    /// Runs `sql` in the transaction; its rows, as text. Throws
    /// std::runtime_error.
    virtual std::vector<SqlRow> query(const std::string& sql) = 0;
    /// Ends the transaction. Throw std::runtime_error on failure.
    virtual void commit() = 0;
    virtual void rollback() = 0;
};

/// BackendHooks
///
/// What a backend's testing/<name>_testing.cpp defines, as
/// `BackendHooks <name>_test_hooks()` in namespace sqlock_test. Only `query`
/// is required; the rest have a meaning only for some backends. A test that
/// needs a hook declares it as a tag, [needs:<hook name>] (backend_needs.hpp):
/// where the backend leaves it empty the test is not run, and reported as
/// skipped, naming the hook; it never assumes another backend's dialect.
struct BackendHooks {
    /// Runs `sql` on the database at `url` through the backend's own client
    /// library, on a new connection, independent of the code under test;
    /// returns the last statement's rows as text; throws std::runtime_error.
    /// See sqlock_test::query() for what the SQL text must mean.
    std::vector<SqlRow> (*query)(const std::string& url, const std::string& sql) = nullptr;

    /// An embedded backend (one without a testing/server.sh): the URL of a
    /// new database, numbered `n`, in the directory `dir`. Null for a server
    /// backend, whose URL comes from its test server.
    std::string (*fresh_url)(const std::string& dir, int n) = nullptr;

    /// A server backend: the statements that grant `account` the use of
    /// `table`, as the documentation tells an administrator to (what a
    /// program needs that uses the table but does not create it).
    std::string (*grant_table_use_sql)(const std::string& table,
                                       const std::string& account) = nullptr;

    /// A server backend whose guard (guarded writes) needs a grant of its
    /// own: the statement that lets `account` call the guard of `table`.
    /// Null where using the table is enough.
    std::string (*grant_guard_use_sql)(const std::string& table,
                                       const std::string& account) = nullptr;

    /// A server backend with a table of its own beside the lock table
    /// (MariaDB's fencing register): the statement that lets `account` use
    /// it. Null where there is none.
    std::string (*grant_own_tables_sql)(const std::string& table,
                                        const std::string& account) = nullptr;

    /// sqlock::error::backend_code() of a statement the server refused for
    /// lack of a privilege on the table.
    std::string privilege_denied_code;

    /// A server backend: what `sqlock init` run by an account that may not
    /// use the table says to grant (tests/cli/database_errors_test.cpp).
    std::string missing_grant_hint;

    /// A server backend: the URL query parameter, if its URLs have one, that
    /// bounds the time a connection may take ("connect_timeout=5"); empty
    /// when none is needed for a port nobody listens on to fail at once.
    std::string connect_timeout_parameter;

    /// A server backend: the server-wide setting (testing/server.sh set)
    /// that makes the server read-only for accounts like sqlock's, and its
    /// value for "on" (PostgreSQL: default_transaction_read_only on).
    std::string read_only_setting;
    std::string read_only_on;

    /// A server backend: the server-wide setting of the default transaction
    /// isolation, and its values for serializable and repeatable read.
    std::string isolation_setting;
    std::string serializable;
    std::string repeatable_read;

    /// A server backend: URLs of the test server at `url`, whose password is
    /// `password`, made wrong in this backend's own ways (parameters of its
    /// dialect), beyond the wrong password and the wrong port every server
    /// has.
    std::vector<BadUrl> (*bad_urls)(const std::string& url, const std::string& password) = nullptr;

    /// The SQL that creates table `log` with a column `tx` and a trigger on
    /// `table` that, for each row deleted, inserts into `log` a row whose `tx`
    /// names the transaction that deleted it. Null where the dialect has no
    /// such thing; then `committed_transactions` must say it.
    std::string (*delete_log_sql)(const std::string& table, const std::string& log) = nullptr;

    /// An embedded backend: the number of write transactions committed so far
    /// to the database at `url`, read from its files, not through the code
    /// under test (SQLite: the commit frames of its WAL).
    int (*committed_transactions)(const std::string& url) = nullptr;

    /// An embedded backend: takes the database's write lock on a connection
    /// of its own and holds it until the returned handle is destroyed;
    /// meanwhile other writers wait, or fail busy (the fencing tests' fault).
    /// Throws std::runtime_error.
    std::shared_ptr<void> (*hold_write_lock)(const std::string& url) = nullptr;

    /// An embedded backend: `url` made to wait up to a minute for a held
    /// write lock instead of failing busy.
    std::string (*patient_url)(const std::string& url) = nullptr;

    /// Two queries that show `table` as stored, so that two equal results
    /// mean an unchanged table: its definition (one row or more) and every
    /// row in id order, each column as stored (and, where the dialect keeps
    /// values of any type, the type).
    struct TableDumpSql {
        std::string definition;
        std::string rows;
    };
    TableDumpSql (*table_dump_sql)(const std::string& table) = nullptr;

    /// Rows with timestamps other programs may write in this dialect only (the
    /// infinities, the zero date, text that is not a date), beyond the ones
    /// every dialect stores.
    std::vector<ForeignRow> (*odd_timestamp_rows)() = nullptr;

    /// Inputs the library refuses only on this backend; `password` is to be
    /// planted in its URLs (none may leak it).
    std::vector<HostileInput> (*hostile_inputs)(const std::string& password) = nullptr;

    /// A server backend: URLs whose password, `planted` behind a character
    /// that ends the userinfo elsewhere, must stay out of messages.
    std::vector<RedactedUrl> (*redacted_urls)(const std::string& planted) = nullptr;

    /// An SQL expression for the timestamp in `column` as whole milliseconds
    /// since the Unix epoch (UTC, as the library stores it).
    std::string (*epoch_ms_sql)(const std::string& column) = nullptr;

    /// Opens a connection of the application's own to the database at
    /// `url` (which may name a pooler) and, with `begin`, starts a
    /// transaction on it; without, each statement commits alone.
    std::unique_ptr<AppTransaction> (*app_transaction)(const std::string& url,
                                                       bool begin) = nullptr;

    /// The backend's own command-line client (psql, mariadb, sqlite3) as a
    /// job would run it: a shell command that runs the SQL in $APP_SQL on
    /// the database at `url`, stopping at the first error with a non-zero
    /// exit, and the environment it needs (a password only there, never in
    /// the command).
    struct ClientCommand {
        std::string shell;
        std::vector<std::pair<std::string, std::string>> env;
    };
    ClientCommand (*client_command)(const std::string& url) = nullptr;

    /// What `sqlock doctor` reports on the database at `url` (which may name
    /// a pooler), besides the facts every backend has (backend, wake-ups).
    DoctorFacts (*doctor_facts)(const std::string& url) = nullptr;

    /// The pool mode of the connection pooler that `url` says it goes
    /// through ("transaction", "session" or "statement"), or "" when it
    /// names none. What the tests that need a transaction of several
    /// statements, or a session kept from one statement to the next, are
    /// judged by ([needs:transactions], [needs:sessions]). Null: the
    /// backend's URLs never name a pooler.
    std::string (*pool_mode)(const std::string& url) = nullptr;
};

/// BackendContext
///
/// One backend as the tests see it: its name, its title for messages, the
/// environment variables of its test server (all empty for an embedded
/// backend), and its hooks.
struct BackendContext {
    std::string name;
    std::string title;             ///< "PostgreSQL"
    std::string url_variable;      ///< SQLOCK_TEST_PG_URL: the server's URL
    std::string require_variable;  ///< SQLOCK_TEST_REQUIRE_PG: 1 makes a missing URL a failure
    std::string script_variable;   ///< SQLOCK_TEST_PG_SCRIPT: its testing/server.sh
    std::string dir_variable;      ///< SQLOCK_TEST_PG_DIR: the server's DIR
    BackendHooks hooks;
};

/// Every backend built, in the order of SQLOCK_BACKENDS (generated by
/// cmake/backend_tests.cmake as generated/backend_test_table.cpp).
const std::vector<BackendContext>& backend_contexts();

}  // namespace sqlock_test
