// The PostgreSQL backend: locks shared by many hosts, via libpqxx.
#include "postgres_backend.hpp"

#include "backend_module.hpp"

#include "postgres_connection.hpp"
#include "postgres_doctor.hpp"
#include "postgres_listener.hpp"
#include "postgres_statements.hpp"
#include "postgres_target.hpp"
#include "validate.hpp"

namespace sqlock::detail {
namespace {

class PostgresBackend final : public Backend {
  public:
    explicit PostgresBackend(std::shared_ptr<const postgres::PgTarget> target)
        : target_(std::move(target)), core_(postgres::core_statements(*target_)) {}

    std::unique_ptr<Connection> connect() override {
        return std::make_unique<postgres::PgConnection>(target_, core_);
    }
    // LISTEN needs a server session of its own: through a pooler in
    // transaction or statement mode, notifications would reach whichever
    // client holds that server connection next. Waiters poll there instead.
    std::unique_ptr<ReleaseListener> listen() override {
        if (!target_->session_bound()) return nullptr;
        return std::make_unique<postgres::PgReleaseListener>(target_);
    }
    std::string name() const override { return "postgresql"; }
    void diagnose(Diagnosis& out) override { postgres::diagnose(*target_, out); }

  private:
    std::shared_ptr<const postgres::PgTarget> target_;
    std::shared_ptr<const postgres::CoreStatements> core_;  // for every connection
};

}  // namespace

std::unique_ptr<Backend> make_postgres_backend(const DatabaseUrl& url, const std::string& table,
                                               duration timeout) {
    validate_table_name(table, /*allow_schema=*/true);
    return std::make_unique<PostgresBackend>(
        std::make_shared<const postgres::PgTarget>(url, table, timeout));
}

}  // namespace sqlock::detail

SQLOCK_BACKEND(postgres, sqlock::detail::make_postgres_backend)
