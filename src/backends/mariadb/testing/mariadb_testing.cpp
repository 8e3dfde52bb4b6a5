// The MariaDB backend's test context (cmake/backend_tests.cmake): rows read
// through the MariaDB C API, independent of the backend's code; the grants
// and codes of MariaDB; what the shared suites expect of its dialect.
#include <mysql.h>

#include <cctype>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_context.hpp"
#include "sqlock/mariadb/transaction.hpp"

namespace sqlock_test {

namespace {

std::string percent_decoded(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() &&
            std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

// mariadb://[user[:password]@]host[:port][/database][?parameters], read here
// rather than by the library's parser (which is under test); parameters are
// ignored.
struct MariadbTarget {
    std::string user, password, host = "127.0.0.1", database;
    unsigned port = 3306;
};

MariadbTarget mariadb_target(const std::string& url) {
    MariadbTarget t;
    std::string rest = url.substr(url.find("://") + 3);
    rest = rest.substr(0, rest.find('?'));
    const std::size_t slash = rest.find('/');
    if (slash != std::string::npos) {
        t.database = percent_decoded(rest.substr(slash + 1));
        rest.resize(slash);
    }
    const std::size_t at = rest.rfind('@');
    if (at != std::string::npos) {
        const std::string userinfo = rest.substr(0, at);
        const std::size_t colon = userinfo.find(':');
        t.user = percent_decoded(userinfo.substr(0, colon));
        if (colon != std::string::npos) t.password = percent_decoded(userinfo.substr(colon + 1));
        rest = rest.substr(at + 1);
    }
    std::size_t colon = rest.rfind(':');
    if (!rest.empty() && rest.front() == '[') {  // [IPv6]:port
        const std::size_t close = rest.find(']');
        colon = rest.find(':', close);
        t.host = rest.substr(1, close - 1);
    } else if (!rest.empty()) {
        t.host = rest.substr(0, colon);
    }
    if (colon != std::string::npos)
        t.port = static_cast<unsigned>(std::stoul(rest.substr(colon + 1)));
    return t;
}

// A new session to the database at `url`; with `standard_sql`, its text
// read as query() in the header says (ANSI quotes, no backslash escapes,
// UTC). Throws std::runtime_error (the C API's messages carry the user and
// host, never the password).
MYSQL* open_session(const std::string& url, bool standard_sql) {
    // mysql_init() initialises the library on first use, which is not
    // thread-safe; the tests call query() from several threads.
    static const bool initialised = mysql_library_init(0, nullptr, nullptr) == 0;
    if (!initialised) throw std::runtime_error("query: mysql_library_init failed");
    const MariadbTarget t = mariadb_target(url);
    MYSQL* h = mysql_init(nullptr);
    if (!h) throw std::runtime_error("query: mysql_init: out of memory");
    const unsigned connect_timeout = 10, read_timeout = 60;
    mysql_options(h, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
    mysql_options(h, MYSQL_OPT_READ_TIMEOUT, &read_timeout);
    mysql_options(h, MYSQL_OPT_WRITE_TIMEOUT, &read_timeout);
    auto fail = [&](const std::string& what) {
        std::string msg = "query: " + what + ": " + mysql_error(h);
        mysql_close(h);
        return std::runtime_error(msg);
    };
    if (!mysql_real_connect(h, t.host.c_str(), t.user.c_str(), t.password.c_str(),
                            t.database.empty() ? nullptr : t.database.c_str(), t.port, nullptr,
                            CLIENT_MULTI_STATEMENTS))
        throw fail("cannot connect");
    // The test's own session waits as long as the test means it to, whatever
    // the server's defaults (server.sh's hostile ones among them): only
    // sqlock's sessions are under test.
    if (mysql_query(h,
                    "SET SESSION innodb_lock_wait_timeout = 60, max_statement_time = 0, "
                    "idle_transaction_timeout = 0, wait_timeout = 28800") != 0)
        throw fail("setting the session's timeouts");
    if (standard_sql &&
        mysql_query(h,
                    "SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES,NO_BACKSLASH_ESCAPES'), "
                    "time_zone = '+00:00'") != 0)
        throw fail("setting the session up");
    return h;
}

// Runs `sql` on session `h`; the last statement's rows. Throws
// std::runtime_error, leaving `h` open.
std::vector<SqlRow> run_on(MYSQL* h, const std::string& sql) {
    auto fail = [&](const std::string& what) {
        return std::runtime_error("query: " + what + ": " + mysql_error(h));
    };
    if (mysql_real_query(h, sql.data(), sql.size()) != 0) throw fail("in: " + sql);
    std::vector<SqlRow> rows;
    for (int more = 0; more == 0; more = mysql_next_result(h)) {
        rows.clear();
        MYSQL_RES* result = mysql_store_result(h);
        if (!result) {
            if (mysql_field_count(h) != 0) throw fail("reading the rows of: " + sql);
            continue;  // a statement without rows
        }
        const unsigned columns = mysql_num_fields(result);
        while (MYSQL_ROW r = mysql_fetch_row(result)) {
            const unsigned long* lengths = mysql_fetch_lengths(result);
            SqlRow row;
            for (unsigned c = 0; c < columns; ++c) {
                if (r[c])
                    row.emplace_back(std::string(r[c], lengths[c]));
                else
                    row.emplace_back();
            }
            rows.push_back(std::move(row));
        }
        mysql_free_result(result);
    }
    if (mysql_errno(h) != 0) throw fail("in: " + sql);
    return rows;
}

std::vector<SqlRow> query(const std::string& url, const std::string& sql) {
    MYSQL* h = open_session(url, /*standard_sql=*/true);
    try {
        std::vector<SqlRow> rows = run_on(h, sql);
        mysql_close(h);
        return rows;
    } catch (...) {
        mysql_close(h);
        throw;
    }
}

// The application's transaction: a MYSQL* session in the server's own
// sql_mode, as a program that guards its writes with
// sqlock/mariadb/transaction.hpp has it.
class MariadbApp final : public AppTransaction {
  public:
    MariadbApp(const std::string& url, bool begin)
        : h_(open_session(url, /*standard_sql=*/false)), adapter_(h_) {
        if (begin) run_on(h_, "START TRANSACTION");
    }
    ~MariadbApp() override { mysql_close(h_); }
    sqlock::Transaction& adapter() override { return adapter_; }
    std::vector<SqlRow> query(const std::string& sql) override { return run_on(h_, sql); }
    void commit() override { run_on(h_, "COMMIT"); }
    void rollback() override { run_on(h_, "ROLLBACK"); }

  private:
    MYSQL* h_;
    sqlock::mariadb::MariadbTransaction adapter_;
};

std::unique_ptr<AppTransaction> app_transaction(const std::string& url, bool begin) {
    return std::make_unique<MariadbApp>(url, begin);
}

// The table's rights; MariaDB's AUTO_INCREMENT needs no grant of its own.
std::string grant_table_use_sql(const std::string& table, const std::string& account) {
    return "GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + " TO " + account;
}

// The guard procedure beside the table (docs/guarded-writes.md).
std::string grant_guard_use_sql(const std::string& table, const std::string& account) {
    return "GRANT EXECUTE ON PROCEDURE " + table + "_guard TO " + account;
}

// The fencing register beside the table (docs/mariadb.md), which Galera
// uses.
std::string grant_own_tables_sql(const std::string& table, const std::string& account) {
    return grant_table_use_sql(table + "_fencing", account);
}

// The test server has no TLS: refused at the handshake. The MariaDB URL
// takes no password parameter; an unknown mode is a URL sqlock cannot read.
std::vector<BadUrl> bad_urls(const std::string& url, const std::string&) {
    using sqlock::errc;
    return {{url + "?ssl-mode=required", {errc::connection, errc::configuration}},
            {url + "?ssl-mode=bogus", {errc::invalid_argument}}};
}

// MariaDB has no txid_current(): the deleting transaction is told by its
// session and the session's count of commits so far (Handler_commit),
// which stays the same within a transaction. (A system-versioned table
// with transaction-precise history told it too, but Galera replicates the
// trigger's insert into one as a statement, which the other nodes cannot
// run: they vote the node out.)
std::string delete_log_sql(const std::string& table, const std::string& log) {
    return "CREATE TABLE " + log +
           " (lockstring varchar(128), tx bigint, id int AUTO_INCREMENT PRIMARY KEY);"
           " CREATE TRIGGER " +
           log + "_t AFTER DELETE ON " + table + " FOR EACH ROW INSERT INTO " + log +
           " (lockstring, tx) VALUES (OLD.lockstring, CONNECTION_ID() * 1000000 + (SELECT"
           " VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME ="
           " 'HANDLER_COMMIT'))";
}

BackendHooks::TableDumpSql table_dump_sql(const std::string& table) {
    return {
        "SELECT (SELECT CONCAT(table_schema, '.', table_name, ' ', engine) FROM "
        "information_schema.tables WHERE table_schema = DATABASE() AND table_name = '" +
            table + "')",
        "SELECT id, lockstring, created, expires, locked_by FROM " + table + " ORDER BY id"};
}

// MariaDB's default sql_mode (no NO_ZERO_DATE, no NO_ZERO_IN_DATE) admits the
// zero date and zero months and days, which older MySQL programs write;
// DATETIME keeps microseconds up to year 9999.
std::vector<ForeignRow> odd_timestamp_rows() {
    const std::string past = "'2001-01-01 00:00:00'";
    return {
        {"ts-zero", "'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'", "", ForeignRow::expired},
        {"ts-zero-in-date", past, "'2999-00-00 00:00:00'", "", ForeignRow::held},
        {"ts-max", past, "'9999-12-31 23:59:59.999999'", "", ForeignRow::held},
        {"ts-micro", past, "'2999-01-01 00:00:00.000001'", "", ForeignRow::held},
    };
}

DoctorFacts doctor_facts(const std::string&) {
    return {"mariadb",
            {// the test URLs are numeric
             {"host name lookup", "none by sqlock"},
             {"server version", ""},
             {"clock difference", ""}}};
}

std::vector<HostileInput> hostile_inputs(const std::string& password) {
    using sqlock::errc;
    const std::string mariadb = "mariadb://u:" + password + "@127.0.0.1:";
    std::string more_hosts;
    for (int port = 2; port <= 33; ++port) more_hosts += ",127.0.0.1:" + std::to_string(port);
    return {
        {"MariaDB port nobody listens on", errc::connection, mariadb + "1/db", "", 69},
        {"MariaDB URL with an unknown parameter", errc::invalid_argument, mariadb + "1/db?bogus=1",
         "", 64},
        {"MariaDB URL with an unknown ssl-mode", errc::invalid_argument,
         mariadb + "1/db?ssl-mode=sometimes", ""},
        {"MariaDB URL without a database", errc::invalid_argument, mariadb + "1", ""},
        {"MariaDB URL with a port out of range", errc::invalid_argument, mariadb + "99999/db", ""},
        {"MariaDB password with a raw '/'", errc::invalid_argument,
         "mariadb://u:Qm/x" + password + "@127.0.0.1:1/db", "", 64},
        {"MariaDB mysql:// URL, nobody listening", errc::connection,
         "mysql://u:" + password + "@127.0.0.1:1/db", ""},
        {"MariaDB host list, nobody listening on any", errc::connection,
         mariadb + "1,127.0.0.1:2,127.0.0.1:3/db", "", 69},
        {"MariaDB host list with an empty entry", errc::invalid_argument,
         mariadb + "1,,127.0.0.1:2/db", "", 64},
        {"MariaDB host list with a trailing comma", errc::invalid_argument, mariadb + "1,/db", "",
         64},
        {"MariaDB host list with a bad port in its second entry", errc::invalid_argument,
         mariadb + "1,127.0.0.1:3306x/db", "", 64},
        {"MariaDB host list with an unterminated '['", errc::invalid_argument,
         mariadb + "1,[::1/db", ""},
        {"MariaDB host list with socket=", errc::invalid_argument,
         mariadb + "1,127.0.0.1:2/db?socket=/tmp/x.sock", "", 64},
        {"MariaDB host list of 33 hosts", errc::invalid_argument,
         mariadb + "1" + more_hosts + "/db", ""},
    };
}

// A MariaDB URL's userinfo ends at the last '@' (mariadb_url.hpp), so a raw
// '@' belongs to the password too.
std::vector<RedactedUrl> redacted_urls(const std::string& planted) {
    std::vector<RedactedUrl> urls;
    for (const std::string prefix : {"Qm?x", "Qm#x", "Qm@x"})
        urls.push_back({prefix + planted, "mariadb://u:" + prefix + planted + "@127.0.0.1:1/db"});
    return urls;
}

std::string epoch_ms_sql(const std::string& column) {
    return "FLOOR(UNIX_TIMESTAMP(" + column + ") * 1000)";
}

}  // namespace

static BackendHooks::ClientCommand client_command(const std::string& url) {
    const MariadbTarget t = mariadb_target(url);
    return {
        "mariadb --host=\"$APP_HOST\" --port=\"$APP_PORT\" --user=\"$APP_USER\" "
        "\"$APP_DATABASE\" -e \"$APP_SQL\"",
        {{"APP_HOST", t.host},
         {"APP_PORT", std::to_string(t.port)},
         {"APP_USER", t.user},
         {"APP_DATABASE", t.database},
         {"MYSQL_PWD", t.password}}};
}

BackendHooks mariadb_test_hooks() {
    BackendHooks hooks;
    hooks.query = query;
    // read_only binds every account without SUPER or READ ONLY ADMIN, as
    // sqlock's test account is.
    hooks.read_only_setting = "read_only";
    hooks.read_only_on = "ON";
    hooks.isolation_setting = "tx_isolation";
    hooks.serializable = "SERIALIZABLE";
    hooks.repeatable_read = "REPEATABLE-READ";
    hooks.grant_table_use_sql = grant_table_use_sql;
    hooks.grant_guard_use_sql = grant_guard_use_sql;
    hooks.grant_own_tables_sql = grant_own_tables_sql;
    hooks.privilege_denied_code = "1142/42000";  // ER_TABLEACCESS_DENIED_ERROR
    // What to grant: the table's rights (no sequence, unlike PostgreSQL).
    hooks.missing_grant_hint = "GRANT SELECT, INSERT, UPDATE, DELETE ON";
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
