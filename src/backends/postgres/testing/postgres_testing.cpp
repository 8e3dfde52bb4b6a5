// The PostgreSQL backend's test context (cmake/backend_tests.cmake): rows
// read through libpq, independent of the backend's libpqxx code; the grants
// and codes of PostgreSQL; what the shared suites expect of its dialect.
#include <libpq-fe.h>

#include <memory>
#include <pqxx/pqxx>

#include "sqlock/postgres/transaction.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "backend_context.hpp"

namespace sqlock_test {

namespace {

// The URL as libpq takes it: without sqlock's own `pooler` parameter.
std::string libpq_url(std::string url) {
    for (const char* sep : {"?", "&"}) {
        std::size_t at = url.find(std::string(sep) + "pooler=");
        if (at == std::string::npos) continue;
        std::size_t end = url.find('&', at + 1);
        if (end == std::string::npos)
            url.erase(at);
        else
            url.erase(at + 1, end - at);  // keeps `sep`, drops "pooler=...&"
        break;
    }
    return url;
}

// What the tests' own sessions set: no statement, lock or idle timeout.
const std::string own_session_timeouts =
    "SET statement_timeout = 0; SET lock_timeout = 0; "
    "SET idle_in_transaction_session_timeout = 0; ";

std::vector<SqlRow> query(const std::string& url, const std::string& sql) {
    PGconn* conn = PQconnectdb(libpq_url(url).c_str());
    if (PQstatus(conn) != CONNECTION_OK) {
        std::string msg = PQerrorMessage(conn);
        PQfinish(conn);
        // libpq does not echo passwords, but keep even the URL out of logs.
        throw std::runtime_error("query: cannot connect: " + msg);
    }
    // The test's own statement waits as long as the test means it to,
    // whatever the server's defaults (server.sh's hostile ones among them):
    // only sqlock's sessions are under test. In the same message: one
    // round trip.
    PGresult* r = PQexec(conn, (own_session_timeouts + sql).c_str());
    auto status = PQresultStatus(r);
    std::vector<SqlRow> rows;
    if (status == PGRES_TUPLES_OK) {
        for (int i = 0; i < PQntuples(r); ++i) {
            SqlRow row;
            for (int c = 0; c < PQnfields(r); ++c) {
                if (PQgetisnull(r, i, c))
                    row.emplace_back();
                else
                    row.emplace_back(std::string(PQgetvalue(r, i, c), PQgetlength(r, i, c)));
            }
            rows.push_back(std::move(row));
        }
    }
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    PQfinish(conn);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        throw std::runtime_error("query: " + msg + " in: " + sql);
    return rows;
}

// The table's rights, and USAGE on its id sequence (a bigserial's nextval).
std::string grant_table_use_sql(const std::string& table, const std::string& account) {
    return "GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + " TO " + account +
           "; GRANT USAGE ON SEQUENCE " + table + "_id_seq TO " + account;
}

// The password as a libpq parameter, in a URL of a port nobody listens on;
// an unknown sslmode, which libpq rejects when it connects.
std::vector<BadUrl> bad_urls(const std::string& url, const std::string& password) {
    using sqlock::errc;
    return {
        {"postgresql://127.0.0.1:1/db?user=sqlock_test&password=" + password + "&connect_timeout=5",
         {errc::connection, errc::configuration}},
        // Refused before any connection is tried (postgres_conninfo.cpp).
        {url + "?sslmode=bogus", {errc::invalid_argument}}};
}

// The transaction of every deleted row, from a PL/pgSQL trigger.
std::string delete_log_sql(const std::string& table, const std::string& log) {
    return "CREATE TABLE " + log + " (tx bigint); CREATE FUNCTION " + log +
           "_f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN INSERT INTO " + log +
           " VALUES (txid_current()); RETURN OLD; END$$; CREATE TRIGGER " + log +
           "_t AFTER DELETE ON " + table + " FOR EACH ROW EXECUTE FUNCTION " + log + "_f()";
}

BackendHooks::TableDumpSql table_dump_sql(const std::string& table) {
    return {"SELECT to_regclass('" + table + "')::text",
            "SELECT id::text, lockstring, created::text, expires::text, locked_by FROM " + table +
                " ORDER BY id"};
}

// timestamptz admits only dates, but also the infinities, BC dates, time
// zones and microseconds.
std::vector<ForeignRow> odd_timestamp_rows() {
    const std::string past = "'2001-01-01 00:00:00'";
    return {
        {"ts-infinity", past, "'infinity'", "", ForeignRow::held},
        {"ts-minus-infinity", "'-infinity'", "'-infinity'", "", ForeignRow::expired},
        {"ts-bc", "'4713-01-01 00:00:00+00 BC'", "'4713-01-02 00:00:00+00 BC'", "",
         ForeignRow::expired},
        {"ts-max", past, "'294276-12-31 23:59:59.999999+00'", "", ForeignRow::held},
        {"ts-zone", past, "'2999-01-01 00:00:00+14'", "", ForeignRow::held},
    };
}

// Through a pooler in transaction or statement mode (the URL says
// ?pooler=...) LISTEN/NOTIFY does not work, so the waits are polled.
DoctorFacts doctor_facts(const std::string& url) {
    const std::size_t at = url.find("pooler=");
    const std::string pooler = at == std::string::npos ? "" : url.substr(at + 7);
    DoctorFacts expected{"postgresql",
                         {{"host name lookup", "none by sqlock"},  // the test URLs are numeric
                          {"server version", ""},
                          {"server role", "primary (read-write)"},
                          {"clock difference", ""}}};
    if (pooler == "transaction" || pooler == "statement") {
        expected.facts.push_back({"pooler detected", "transaction or statement"});
        expected.facts.push_back({"wake-ups", "polled"});
    } else {
        expected.facts.push_back({"pooler detected", "none, or session pooling"});
        expected.facts.push_back({"wake-ups", "pushed"});
    }
    return expected;
}

// Beside the shared URL cases (PostgreSQL's scheme is the reference
// backend's): values libpq refuses only when it connects, which sqlock
// refuses with the URL, as bad usage (exit 64), not as a server that cannot
// be reached (69), which cron and monitoring would retry.
std::vector<HostileInput> hostile_inputs(const std::string& password) {
    using sqlock::errc;
    const std::string pg = "postgresql://u:" + password + "@127.0.0.1:";
    auto refused = [](std::string what, std::string url) {
        return HostileInput{std::move(what), errc::invalid_argument, std::move(url), "", 64};
    };
    return {
        {"PostgreSQL port nobody listens on", errc::connection, pg + "1/db?connect_timeout=5", "",
         69},
        refused("PostgreSQL URL with an unknown sslmode", pg + "1/db?sslmode=bogus"),
        refused("PostgreSQL URL with a port that is not a number", pg + "notaport/db"),
        refused("PostgreSQL URL with a port out of range", pg + "99999/db"),
        refused("PostgreSQL URL with a connect_timeout that is not a number",
                pg + "1/db?connect_timeout=abc"),
        refused("PostgreSQL URL with an unknown target_session_attrs",
                pg + "1/db?target_session_attrs=rw"),
        // libpq would end the password at the first '@' and show the rest
        // as the host; a raw '/' (base64 passwords have them) ends the
        // authority early.
        refused("PostgreSQL password with a raw '@'",
                "postgresql://u:Qm@x" + password + "@127.0.0.1:1/db"),
        refused("PostgreSQL password with a raw '/'",
                "postgresql://u:Qm/x" + password + "@127.0.0.1:1/db"),
    };
}

// libpq ends the userinfo at the first '@', so "u:Pa?ss@host" has the
// password "Pa?ss".
std::vector<RedactedUrl> redacted_urls(const std::string& planted) {
    std::vector<RedactedUrl> urls;
    for (const std::string prefix : {"Qm?x", "Qm#x"})
        urls.push_back({prefix + planted, "postgresql://u:" + prefix + planted +
                                              "@127.0.0.1:1/db?connect_timeout=5"});
    return urls;
}

std::string epoch_ms_sql(const std::string& column) {
    return "(extract(epoch FROM " + column + ") * 1000)::bigint";
}

}  // namespace

// The application's transaction: libpqxx, as a program that guards its
// writes with sqlock/postgres/transaction.hpp has it.
class PqxxApp final : public AppTransaction {
  public:
    PqxxApp(const std::string& url, bool begin) : conn_(libpq_url(url)) {
        // The application's own timeouts, as query() sets them; its
        // isolation stays the server's default: the guard is tested under
        // it (serializable with server.sh's hostile defaults). SET LOCAL in
        // the transaction: through a transaction pooler, a session's SET
        // may land on another server session.
        if (begin) {
            tx_ = std::make_unique<pqxx::work>(conn_);
            tx_->exec("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0; "
                      "SET LOCAL idle_in_transaction_session_timeout = 0");
        } else {
            tx_ = std::make_unique<pqxx::nontransaction>(conn_);
            tx_->exec(own_session_timeouts);
        }
        adapter_ = std::make_unique<sqlock::postgres::PqxxTransaction>(*tx_);
    }
    sqlock::Transaction& adapter() override { return *adapter_; }
    std::vector<SqlRow> query(const std::string& sql) override {
        try {
            std::vector<SqlRow> rows;
            for (const auto& tuple : tx_->exec(sql)) {
                SqlRow row;
                for (const auto& field : tuple)
                    row.push_back(field.is_null() ? std::nullopt
                                                  : std::optional<std::string>(field.c_str()));
                rows.push_back(std::move(row));
            }
            return rows;
        } catch (const std::exception& e) {
            throw std::runtime_error(std::string("app transaction: ") + e.what());
        }
    }
    void commit() override {
        try {
            tx_->commit();
        } catch (const std::exception& e) {
            throw std::runtime_error(std::string("app commit: ") + e.what());
        }
    }
    void rollback() override { tx_->abort(); }

  private:
    pqxx::connection conn_;
    std::unique_ptr<pqxx::transaction_base> tx_;
    std::unique_ptr<sqlock::postgres::PqxxTransaction> adapter_;
};

static std::unique_ptr<AppTransaction> app_transaction(const std::string& url, bool begin) {
    return std::make_unique<PqxxApp>(url, begin);
}

static BackendHooks::ClientCommand client_command(const std::string& url) {
    return {"psql \"$APP_DB\" -X -q -v ON_ERROR_STOP=1 -c \"$APP_SQL\"",
            {{"APP_DB", libpq_url(url)}}};
}

BackendHooks postgres_test_hooks() {
    BackendHooks hooks;
    hooks.query = query;
    hooks.read_only_setting = "default_transaction_read_only";
    hooks.read_only_on = "on";
    hooks.isolation_setting = "default_transaction_isolation";
    hooks.serializable = "serializable";
    hooks.repeatable_read = "repeatable read";
    hooks.grant_table_use_sql = grant_table_use_sql;
    hooks.privilege_denied_code = "42501";  // SQLSTATE insufficient_privilege
    hooks.missing_grant_hint = "SELECT, INSERT, UPDATE, DELETE and USAGE on its id sequence";
    hooks.connect_timeout_parameter = "connect_timeout=5";
    hooks.bad_urls = bad_urls;
    hooks.delete_log_sql = delete_log_sql;
    hooks.table_dump_sql = table_dump_sql;
    hooks.odd_timestamp_rows = odd_timestamp_rows;
    hooks.doctor_facts = doctor_facts;
    hooks.epoch_ms_sql = epoch_ms_sql;
    hooks.hostile_inputs = hostile_inputs;
    hooks.redacted_urls = redacted_urls;
    hooks.app_transaction = app_transaction;
    hooks.client_command = client_command;
    return hooks;
}

}  // namespace sqlock_test
