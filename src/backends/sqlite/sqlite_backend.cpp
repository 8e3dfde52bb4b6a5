// The SQLite backend: the embedded default, one file shared by processes.
// The backend object and the module's entry point; the connection is
// sqlite_connection.hpp, its SQL sqlite_statements.cpp.
#include "sqlite_backend.hpp"

#include "backend_module.hpp"
#include "sqlite_connection.hpp"
#include "sqlite_doctor.hpp"
#include "sqlite_url.hpp"
#include "validate.hpp"

namespace sqlock::detail {
namespace {

class SqliteBackend final : public Backend {
  public:
    SqliteBackend(SqliteUrl url, std::string table)
        : url_(std::move(url)),
          table_(std::move(table)),
          set_(
              std::make_shared<const StatementSet>(sqlite::statement_set(sqlite::Tables(table_)))) {
    }
    std::unique_ptr<Connection> connect() override {
        return std::make_unique<sqlite::SqliteConnection>(url_, table_, url_.is_embedded_default,
                                                          set_);
    }
    void create_database() override {
        sqlite::SqliteConnection(url_, table_, /*create=*/true, set_);
    }
    std::string name() const override { return "sqlite"; }
    // A look is a read of a local file, and only the first two in line
    // look: from 0.25 ms, growing 1.5x, the release of a short hold is seen
    // within about half a millisecond (8 processes' hand-off p50: 0.55 ms,
    // against 1.17 ms from 1 ms doubling).
    PollSchedule poll_schedule() const override { return {std::chrono::microseconds(250), 1.5}; }
    void diagnose(Diagnosis& out) override {
        out.facts.push_back({"wake-ups",
                             "polled by the first in line (0.25 ms growing 1.5x to 25 ms, with "
                             "jitter; to 100 ms without a queue table); releases in this "
                             "process wake at once"});
        sqlite::diagnose(url_, table_, out);
    }

  private:
    SqliteUrl url_;
    std::string table_;
    std::shared_ptr<const StatementSet> set_;  // the core's statements, for every connection
};

}  // namespace

std::unique_ptr<Backend> make_sqlite_backend(const DatabaseUrl& url, const std::string& table,
                                             duration timeout) {
    (void)timeout;  // a local file has no round trips to bound
    SqliteUrl location = parse_sqlite_url(url);
    validate_table_name(table, /*allow_schema=*/false);
    return std::make_unique<SqliteBackend>(std::move(location), table);
}

}  // namespace sqlock::detail

SQLOCK_BACKEND(sqlite, sqlock::detail::make_sqlite_backend)
