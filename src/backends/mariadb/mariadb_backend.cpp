// The MariaDB/MySQL backend: locks shared by many hosts, via libmariadb.
#include "mariadb_backend.hpp"

#include "backend_module.hpp"
#include "mariadb_connection.hpp"
#include "mariadb_doctor.hpp"
#include "mariadb_statements.hpp"
#include "mariadb_target.hpp"
#include "validate.hpp"

namespace sqlock::detail {
namespace {

// Waiters poll (the Backend default): MariaDB has no push of a row's
// deletion to another session that is both reliable and cheap.
class MariaBackend final : public Backend {
  public:
    explicit MariaBackend(std::shared_ptr<const mariadb::MariaTarget> target)
        : target_(std::move(target)),
          set_(std::make_shared<const StatementSet>(mariadb::sql::statement_set(*target_))) {}

    std::unique_ptr<Connection> connect() override {
        return std::make_unique<mariadb::MariaConnection>(target_, set_);
    }
    std::string name() const override { return "mariadb"; }
    void diagnose(Diagnosis& out) override { mariadb::diagnose(*target_, out); }

  private:
    std::shared_ptr<const mariadb::MariaTarget> target_;
    std::shared_ptr<const StatementSet> set_;  // the core's statements, for every connection
};

}  // namespace

std::unique_ptr<Backend> make_mariadb_backend(const DatabaseUrl& url, const std::string& table,
                                              duration timeout) {
    validate_table_name(table, /*allow_schema=*/true);
    return std::make_unique<MariaBackend>(
        std::make_shared<const mariadb::MariaTarget>(url, table, timeout));
}

}  // namespace sqlock::detail

SQLOCK_BACKEND(mariadb, sqlock::detail::make_mariadb_backend)
