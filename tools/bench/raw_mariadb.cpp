// The MariaDB/MySQL baseline: the MariaDB C connector with server-side
// prepared statements (mysql_stmt_*), one round trip per statement,
// autocommit, READ COMMITTED (as sqlock's sessions: no gap locks, so
// inserts of distinct names never wait for each other).
#include <mysql.h>

#include <stdexcept>
#include <string>

#include "raw_client.hpp"

namespace sqlock_bench {
namespace {

// What the raw client needs of a mariadb:// or mysql:// URL:
//   scheme://[user[:password]@][host][:port][/database][?socket=PATH]
// The userinfo ends at the last '@' before the first '/', as in sqlock's own
// grammar (src/backends/mariadb/mariadb_url.hpp); user, password and
// database are percent-decoded. Other parameters (ssl-mode, ...) are refused
// rather than ignored: a baseline that silently drops TLS would not compare.
struct Endpoint {
    std::string host, user, password, database, socket;
    unsigned port = 0;
    bool has_password = false;
};

std::string decoded(const std::string& text) {
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 &&
            hex(text[i + 2]) >= 0) {
            out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

Endpoint parse_endpoint(const std::string& url) {
    const std::string shown = redact_url(url);
    auto bad = [&](const std::string& why) {
        return std::invalid_argument("raw MariaDB client: " + why + " in " + shown);
    };
    std::size_t scheme = url.find("://");
    if (scheme == std::string::npos ||
        (url.compare(0, scheme, "mariadb") != 0 && url.compare(0, scheme, "mysql") != 0))
        throw bad("not a mariadb:// or mysql:// URL");
    std::string rest = url.substr(scheme + 3);
    std::string query;
    if (std::size_t q = rest.find('?'); q != std::string::npos) {
        query = rest.substr(q + 1);
        rest.erase(q);
    }
    Endpoint e;
    std::size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    if (slash != std::string::npos) e.database = decoded(rest.substr(slash + 1));
    if (std::size_t at = authority.rfind('@'); at != std::string::npos) {
        std::string userinfo = authority.substr(0, at);
        authority.erase(0, at + 1);
        std::size_t colon = userinfo.find(':');
        e.user = decoded(userinfo.substr(0, colon));
        if (colon != std::string::npos) {
            e.password = decoded(userinfo.substr(colon + 1));
            e.has_password = true;
        }
    }
    std::string port;
    if (!authority.empty() && authority.front() == '[') {
        std::size_t close = authority.find(']');
        if (close == std::string::npos) throw bad("an unclosed '['");
        e.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size() && authority[close + 1] == ':')
            port = authority.substr(close + 2);
    } else {
        std::size_t colon = authority.find(':');
        e.host = authority.substr(0, colon);
        if (colon != std::string::npos) port = authority.substr(colon + 1);
    }
    if (!port.empty()) {
        if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5)
            throw bad("a bad port");
        e.port = static_cast<unsigned>(std::stoul(port));
    }
    std::size_t start = 0;
    while (start < query.size()) {
        std::size_t amp = query.find('&', start);
        std::string param = query.substr(start, amp == std::string::npos ? amp : amp - start);
        start = amp == std::string::npos ? query.size() : amp + 1;
        if (param.rfind("socket=", 0) == 0)
            e.socket = decoded(param.substr(7));
        else if (!param.empty())
            throw bad("parameter '" + param.substr(0, param.find('=')) +
                      "', which the raw client does not support");
    }
    if (e.database.empty()) throw bad("no database name");
    return e;
}

// One server-side prepared statement, prepared once; the parameters are
// bound once too, to buffers that live as long as the client.
class Statement {
  public:
    Statement(MYSQL* mysql, const std::string& sql) : stmt_(mysql_stmt_init(mysql)) {
        if (!stmt_) throw std::runtime_error("raw MariaDB client: out of memory");
        if (mysql_stmt_prepare(stmt_, sql.c_str(), static_cast<unsigned long>(sql.size())) != 0) {
            std::string msg = mysql_stmt_error(stmt_);
            mysql_stmt_close(stmt_);
            throw std::runtime_error("raw MariaDB client: PREPARE " + sql + ": " + msg);
        }
    }
    ~Statement() { mysql_stmt_close(stmt_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    void bind(MYSQL_BIND* params) {
        if (mysql_stmt_bind_param(stmt_, params)) fail("bind");
    }

    // Runs it; the number of rows it changed. InnoDB may pick the statement
    // as a deadlock victim (INSERT IGNOREs of neighbouring keys from 8
    // processes do meet in gap locks) and roll it back: a client retries
    // it, as its manual says, and so does sqlock's backend.
    unsigned long long execute(const char* what) {
        for (int attempt = 1; mysql_stmt_execute(stmt_) != 0; ++attempt)
            if (mysql_stmt_errno(stmt_) != 1213 /* ER_LOCK_DEADLOCK */ || attempt == 100)
                fail(what);
        return mysql_stmt_affected_rows(stmt_);
    }

    // The AUTO_INCREMENT id of the row the last execute() inserted (what
    // LAST_INSERT_ID() would return, from the same reply, no round trip).
    std::int64_t insert_id() { return static_cast<std::int64_t>(mysql_stmt_insert_id(stmt_)); }

  private:
    [[noreturn]] void fail(const char* what) {
        throw std::runtime_error(std::string("raw MariaDB client: ") + what + ": " +
                                 mysql_stmt_error(stmt_));
    }
    MYSQL_STMT* stmt_;
};

MYSQL_BIND string_param(char* buffer, unsigned long* length) {
    MYSQL_BIND b{};
    b.buffer_type = MYSQL_TYPE_STRING;
    b.buffer = buffer;
    b.length = length;
    return b;
}

template <typename T>
MYSQL_BIND integer_param(T* value, enum_field_types type) {
    MYSQL_BIND b{};
    b.buffer_type = type;
    b.buffer = value;
    return b;
}

// The rows' timestamps: UTC from the server's clock, as sqlock writes them.
constexpr const char* now = "UTC_TIMESTAMP(3)";

class RawMariaDB final : public RawClient {
  public:
    RawMariaDB(const std::string& url, const std::string& table)
        : url_(url), table_name_(table), table_("`" + table + "`"), owner_(raw_owner_string()) {
        const Endpoint e = parse_endpoint(url);
        mysql_ = mysql_init(nullptr);
        if (!mysql_) throw std::runtime_error("raw MariaDB client: out of memory");
        mysql_optionsv(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
        if (!mysql_real_connect(mysql_, e.host.empty() ? nullptr : e.host.c_str(),
                                e.user.empty() ? nullptr : e.user.c_str(),
                                e.has_password ? e.password.c_str() : nullptr, e.database.c_str(),
                                e.port, e.socket.empty() ? nullptr : e.socket.c_str(),
                                CLIENT_MULTI_STATEMENTS)) {
            std::string msg = mysql_error(mysql_);
            mysql_close(mysql_);
            throw std::runtime_error("raw MariaDB client: cannot connect to " + redact_url(url) +
                                     ": " + scrub_password(msg, url));
        }
        try {
            mariadb_ =
                std::string(mysql_get_server_info(mysql_)).find("MariaDB") != std::string::npos;
            exec("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
            // As sqlock's sessions: no server-side statement time limit.
            if (mariadb_) exec("SET SESSION max_statement_time = 0");
            prepare();
        } catch (...) {
            acquire_.reset();
            release_.reset();
            slot_.reset();
            mysql_close(mysql_);
            throw;
        }
    }

    ~RawMariaDB() override {
        acquire_.reset();
        release_.reset();
        slot_.reset();
        mysql_close(mysql_);
    }

    std::int64_t try_acquire(const std::string& name) override {
        set_name(name);
        if (acquire_->execute("acquire") != 1) return 0;  // INSERT IGNORE met a row
        return acquire_->insert_id();
    }

    void release(std::int64_t id) override {
        id_ = id;
        if (release_->execute("release") != 1) throw std::runtime_error("raw release found no row");
    }

    std::int64_t try_acquire_with(layer up_to, const std::string& name) override {
        const std::string T = table_, N = quoted(name), own = quoted(owner_);
        const std::string values =
            "(" + N + ", " + now + ", " + now + " + INTERVAL 1 HOUR, " + own + ")";
        if (up_to == layer::text) {
            exec("INSERT IGNORE INTO " + T + " (lockstring, created, expires, locked_by) VALUES " +
                 values);
            return mysql_affected_rows(mysql_) == 1
                       ? static_cast<std::int64_t>(mysql_insert_id(mysql_))
                       : 0;
        }
        return first_number_of_batch(
            guarded(up_to, name, false,
                    "INSERT INTO " + T + " (lockstring, created, expires, locked_by) VALUES " +
                        values + " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)"));
    }

    std::int64_t try_acquire_slot_guarded(const std::string& name, int capacity) override {
        const std::string N = quoted(name);
        return first_number_of_batch(guarded(
            layer::queue_gate, name, true,
            "INSERT IGNORE INTO " + table_ +
                " (lockstring, created, expires, locked_by) SELECT CONCAT(" + N + ", '#', g.n), " +
                now + ", " + now + " + INTERVAL 1 HOUR, " + quoted(owner_) +
                " FROM (WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n "
                "< " +
                std::to_string(capacity) +
                ") SELECT n FROM s) AS g WHERE NOT EXISTS (SELECT 1 FROM " + table_ +
                " AS t WHERE t.lockstring = CONCAT(" + N + ", '#', g.n)) ORDER BY g.n LIMIT 1"));
    }

    void cycle_many(const std::vector<std::string>& names) override {
        std::string values, in;
        for (const std::string& n : names) {
            const std::string q = quoted(n);
            values += std::string(values.empty() ? "" : ", ") + "(" + q + ", " + now + ", " + now +
                      " + INTERVAL 1 HOUR, " + quoted(owner_) + ")";
            in += std::string(in.empty() ? "" : ", ") + q;
        }
        exec("INSERT IGNORE INTO " + table_ + " (lockstring, created, expires, locked_by) VALUES " +
             values);
        if (mysql_affected_rows(mysql_) != names.size())
            throw std::runtime_error("raw set found a row held");
        exec("DELETE FROM " + table_ + " WHERE lockstring IN (" + in +
             ") AND locked_by = " + quoted(owner_));
        if (mysql_affected_rows(mysql_) != names.size())
            throw std::runtime_error("raw set release found a row gone");
    }

    std::int64_t try_acquire_slot(const std::string& name, int capacity) override {
        set_name(name);
        capacity_ = capacity;
        if (slot_->execute("slot") != 1) return 0;
        return slot_->insert_id();
    }

    void fill(const std::string& prefix, std::int64_t first, std::int64_t count,
              bool expired) override {
        const std::string created =
            expired ? std::string(now) + " - INTERVAL 2 HOUR" : std::string(now);
        const std::string expires =
            std::string(now) + (expired ? " - INTERVAL 1 HOUR" : " + INTERVAL 1 DAY");
        // Both stop a recursive CTE after 1000 rows unless told otherwise.
        exec(std::string("SET SESSION ") +
             (mariadb_ ? "max_recursive_iterations" : "cte_max_recursion_depth") + " = " +
             std::to_string(count + 1));
        // The numbers are made on the server (a recursive CTE, MariaDB's and
        // MySQL's generate_series), so the load is one statement: one
        // transaction under autocommit.
        exec("INSERT INTO " + table_ +
             " (lockstring, created, expires, locked_by)"
             " SELECT CONCAT(" +
             quoted(prefix) + ", g.n), " + created + ", " + expires + ", " + quoted(owner_) +
             " FROM (WITH RECURSIVE s (n) AS (SELECT CAST(" + std::to_string(first) +
             " AS SIGNED) UNION ALL SELECT n + 1 FROM s WHERE n < " +
             std::to_string(first + count - 1) + ") SELECT n FROM s) AS g");
        // A long-lived table has statistics; give the optimizer the same.
        exec("ANALYZE TABLE " + table_);
    }

    std::int64_t purge_expired_at_once() override {
        exec("DELETE FROM " + table_ + " WHERE expires <= " + now);
        return static_cast<std::int64_t>(mysql_affected_rows(mysql_));
    }

    void drop_table() override {
        for (const std::string& t : lock_table_family(table_name_))
            exec("DROP TABLE IF EXISTS `" + t + "`");
        exec("DROP TABLE IF EXISTS `" + table_name_ + "_data`");
        exec("DROP PROCEDURE IF EXISTS `" + table_name_ + "_guard`");
    }

    void write_transaction(const std::string& guard) override {
        const std::string data = "`" + table_name_ + "_data`";
        if (!data_made_) {
            exec("CREATE TABLE IF NOT EXISTS " + data +
                 " (id BIGINT AUTO_INCREMENT PRIMARY KEY, who VARCHAR(16)) ENGINE=InnoDB");
            data_made_ = true;
        }
        exec("START TRANSACTION");
        if (!guard.empty()) exec(guard);
        exec("INSERT INTO " + data + " (who) VALUES ('bench')");
        exec("COMMIT");
    }

    std::int64_t work_done() override {
        const std::string sql = "SHOW GLOBAL STATUS LIKE 'Questions'";
        if (mysql_query(mysql_, sql.c_str()) != 0) return -1;
        MYSQL_RES* r = mysql_store_result(mysql_);
        if (!r) return -1;
        MYSQL_ROW row = mysql_fetch_row(r);
        const std::int64_t n = row && row[1] ? std::stoll(row[1]) : -1;
        mysql_free_result(r);
        return n;
    }

    std::string server_version() override {
        // "10.11.6-MariaDB-0+deb12u1" -> "MariaDB 10.11.6"; MySQL says "8.0.36".
        std::string v = mysql_get_server_info(mysql_);
        return (mariadb_ ? "MariaDB " : "MySQL ") + v.substr(0, v.find('-'));
    }

  private:
    void prepare() {
        // The same columns and clock as sqlock's rows (sql/mariadb/schema.sql).
        acquire_ = std::make_unique<Statement>(
            mysql_, "INSERT IGNORE INTO " + table_ +
                        " (lockstring, created, expires, locked_by) VALUES (?, " + now + ", " +
                        now + " + INTERVAL 1 HOUR, ?)");
        MYSQL_BIND acquire[] = {string_param(name_, &name_length_),
                                string_param(owner_.data(), &owner_length_)};
        acquire_->bind(acquire);

        release_ = std::make_unique<Statement>(
            mysql_, "DELETE FROM " + table_ + " WHERE id = ? AND locked_by = ?");
        MYSQL_BIND release[] = {integer_param(&id_, MYSQL_TYPE_LONGLONG),
                                string_param(owner_.data(), &owner_length_)};
        release_->bind(release);

        // The lowest of name#1 .. name#capacity without a row, in one
        // statement; INSERT IGNORE turns a race for the same slot into "no
        // slot", as ON CONFLICT DO NOTHING does on PostgreSQL.
        slot_ = std::make_unique<Statement>(
            mysql_, "INSERT IGNORE INTO " + table_ +
                        " (lockstring, created, expires, locked_by)"
                        " SELECT CONCAT(?, '#', g.n), " +
                        now + ", " + now +
                        " + INTERVAL 1 HOUR, ? FROM (WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL"
                        " SELECT n + 1 FROM s WHERE n < ?) SELECT n FROM s) AS g"
                        " WHERE NOT EXISTS (SELECT 1 FROM " +
                        table_ +
                        " AS t WHERE t.lockstring = CONCAT(?, '#', g.n))"
                        " ORDER BY g.n LIMIT 1");
        MYSQL_BIND slot[] = {
            string_param(name_, &name_length_), string_param(owner_.data(), &owner_length_),
            integer_param(&capacity_, MYSQL_TYPE_LONG), string_param(name_, &name_length_)};
        slot_->bind(slot);
    }

    void set_name(const std::string& name) {
        if (name.size() > sizeof name_) throw std::invalid_argument("raw client: name too long");
        name.copy(name_, name.size());
        name_length_ = static_cast<unsigned long>(name.size());
    }

    // A string literal for the statements built once per bulk operation.
    std::string quoted(const std::string& text) {
        std::string out(text.size() * 2 + 1, '\0');
        out.resize(mysql_real_escape_string(mysql_, out.data(), text.c_str(),
                                            static_cast<unsigned long>(text.size())));
        return "'" + out + "'";
    }

    // A statement without parameters; any result set is read and dropped.
    void exec(const std::string& sql) {
        if (mysql_real_query(mysql_, sql.c_str(), static_cast<unsigned long>(sql.size())) != 0)
            throw std::runtime_error("raw MariaDB client: " + sql.substr(0, 80) + ": " +
                                     scrub_password(mysql_error(mysql_), url_));
        if (MYSQL_RES* r = mysql_store_result(mysql_)) mysql_free_result(r);
    }

    // Runs a multi-statement batch; the first column of the one result set
    // that has rows (0 when none).
    // `insert` in a batch with the layers of sqlock's acquire up to `up_to`
    // (at least layer::batch): the row read back by id as sqlock reads it,
    // its id first (0 when the insert took no row); with `transaction`,
    // the insert and the read in one.
    std::string guarded(layer up_to, const std::string& name, bool transaction,
                        const std::string& insert) {
        const std::string T = table_, N = quoted(name);
        const bool turn = up_to == layer::turn || up_to == layer::queue_gate;
        const std::string key = "'raw:" + name + "'";
        const std::string take_turn = "GET_LOCK(" + key + ", 5)";
        std::string batch;
        if (up_to == layer::queue_gate)
            batch = "SET @raw_turn = IF(EXISTS(SELECT 1 FROM `" + table_name_ +
                    "_queue` WHERE lockstring = " + N + " AND expires > " + now + "), NULL, " +
                    take_turn + ");\n";
        else if (turn)
            batch = "SET @raw_turn = " + take_turn + ";\n";
        if (transaction) batch += "START TRANSACTION;\n";
        batch += insert +
                 ";\n"
                 "SELECT IF(ROW_COUNT() = 1 AND id = LAST_INSERT_ID(), id, 0), lockstring,"
                 " LEFT(DATE_FORMAT(created, '%Y-%m-%d %H:%i:%s.%f'), 23),"
                 " LEFT(DATE_FORMAT(expires, '%Y-%m-%d %H:%i:%s.%f'), 23), locked_by,"
                 " CEIL(TIMESTAMPDIFF(MICROSECOND, " +
                 std::string(now) + ", expires) / 1000) / 1000 FROM " + T +
                 " WHERE id = LAST_INSERT_ID()";
        if (transaction) batch += ";\nCOMMIT";
        if (turn) batch += ";\nDO RELEASE_LOCK(" + key + ")";
        return batch;
    }

    std::int64_t first_number_of_batch(const std::string& sql) {
        if (mysql_real_query(mysql_, sql.c_str(), static_cast<unsigned long>(sql.size())) != 0)
            throw std::runtime_error("raw MariaDB client: batch: " +
                                     scrub_password(mysql_error(mysql_), url_));
        std::int64_t first = 0;
        for (int status = 0; status == 0; status = mysql_next_result(mysql_)) {
            if (MYSQL_RES* r = mysql_store_result(mysql_)) {
                if (MYSQL_ROW row = mysql_fetch_row(r); row && row[0]) first = std::stoll(row[0]);
                mysql_free_result(r);
            } else if (mysql_errno(mysql_) != 0) {
                break;
            }
        }
        if (mysql_errno(mysql_) != 0)
            throw std::runtime_error("raw MariaDB client: batch: " +
                                     scrub_password(mysql_error(mysql_), url_));
        return first;
    }

    std::string url_;         // holds the password: never printed
    std::string table_name_;  // the plain name
    std::string table_;       // quoted
    std::string owner_;
    bool data_made_ = false;
    unsigned long owner_length_ = static_cast<unsigned long>(owner_.size());
    MYSQL* mysql_ = nullptr;
    bool mariadb_ = true;
    // The bound parameters' buffers.
    char name_[256] = {};
    unsigned long name_length_ = 0;
    long long id_ = 0;
    int capacity_ = 0;
    std::unique_ptr<Statement> acquire_, release_, slot_;
};

}  // namespace

std::unique_ptr<RawClient> connect_raw_mariadb(const std::string& url, const std::string& table) {
    return std::make_unique<RawMariaDB>(url, table);
}

}  // namespace sqlock_bench
