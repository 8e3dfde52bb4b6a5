// The PostgreSQL backend: locks shared by many hosts, via libpqxx.
#include "postgres_backend.hpp"

#include "loading/backend_module.hpp"

#include <algorithm>
#include <optional>

#include "base/validate.hpp"
#include "postgres_connection.hpp"
#include "postgres_doctor.hpp"
#include "postgres_listener.hpp"
#include "postgres_statements.hpp"
#include "postgres_target.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {
namespace {

// A text literal for a client that binds nothing (SQLOCK_GUARD in psql):
// '' doubles a quote; a backslash, which a server with
// standard_conforming_strings off would read as an escape, makes it an
// E'' literal with the backslash doubled, read alike by every server.
std::string pg_literal(const std::string& text) {
    const bool escapes = text.find('\\') != std::string::npos;
    std::string out = escapes ? "E'" : "'";
    for (char c : text) {
        if (c == '\'') out += '\'';
        if (c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

// What `tx` answered, first column of the first row.
std::optional<std::string> first_value(const std::vector<Transaction::row>& rows) {
    if (rows.empty() || rows[0].empty()) return std::nullopt;
    return rows[0][0];
}

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

    GuardStatement guard_statement(std::int64_t id, const std::string& locked_by,
                                   const std::string& marker,
                                   const std::string& lock_name) const override {
        const std::string call = "SELECT " + target_->family.guard().quoted + "(";
        return {name(),
                call + "$1::bigint, $2::text, $3::text, $4::text)",
                {std::to_string(id), locked_by, marker, lock_name},
                call + std::to_string(id) + ", " + pg_literal(locked_by) + ", " +
                    pg_literal(marker) + ", " + pg_literal(lock_name) + ")",
                lock_name};
    }

    // Inside a savepoint, so that a wait that ran out (lock_timeout) leaves
    // the caller's transaction usable: the expired row of the name is
    // deleted (others then wait for us), the name's row inserted unless a
    // live one is there (DO NOTHING locks nothing it meets) and deleted
    // again. A refusal rolls the savepoint back, undoing the delete too.
    std::optional<std::int64_t> try_lock_transaction(Transaction& tx, Connection&,
                                                     const std::string& lock_name,
                                                     const std::string& locked_by, duration lease,
                                                     duration wait) override {
        const std::string& T = target_->family.table().quoted;
        tx.run("SAVEPOINT sqlock_transaction_lock", {});
        std::optional<std::int64_t> id;
        try {
            // lock_timeout 0 means none: an attempt without a wait waits 1 ms.
            const std::string timeout = std::to_string(std::max<long long>(1, wait.count())) + "ms";
            const auto before = first_value(tx.run(
                "SELECT current_setting('lock_timeout'), set_config('lock_timeout', $1, true)",
                {timeout}));
            tx.run("DELETE FROM " + T + " WHERE lockstring = $1 AND expires <= clock_timestamp()",
                   {lock_name});
            const auto inserted = first_value(tx.run(
                "INSERT INTO " + T +
                    " (lockstring, created, expires, locked_by) VALUES ($1, clock_timestamp(),"
                    " clock_timestamp() + $2::bigint * interval '1 millisecond', $3)"
                    " ON CONFLICT (lockstring) DO NOTHING RETURNING id",
                {lock_name, std::to_string(lease.count()), locked_by}));
            if (inserted) {
                tx.run("DELETE FROM " + T + " WHERE id = $1::bigint", {*inserted});
                tx.run("SELECT set_config('lock_timeout', $1, true)", {before.value_or("0")});
                tx.run("RELEASE SAVEPOINT sqlock_transaction_lock", {});
                return std::stoll(*inserted);
            }
        } catch (const error& e) {
            // 55P03 lock_not_available: another transaction's row of the
            // name, not committed yet, outlasted the wait.
            tx.run("ROLLBACK TO SAVEPOINT sqlock_transaction_lock", {});
            tx.run("RELEASE SAVEPOINT sqlock_transaction_lock", {});
            if (e.backend_code() == "55P03") return std::nullopt;
            throw;
        }
        tx.run("ROLLBACK TO SAVEPOINT sqlock_transaction_lock", {});
        tx.run("RELEASE SAVEPOINT sqlock_transaction_lock", {});
        return id;
    }
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
