// The PostgreSQL baseline: libpq with server-side prepared statements, one
// round trip per statement, autocommit.
#include <libpq-fe.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "raw_client.hpp"

namespace sqlock_bench {
namespace {

// Owns one PGresult.
class Result {
  public:
    explicit Result(PGresult* r) : r_(r) {}
    ~Result() { PQclear(r_); }
    Result(const Result&) = delete;
    Result& operator=(const Result&) = delete;
    PGresult* get() const { return r_; }

  private:
    PGresult* r_;
};

class RawPostgres final : public RawClient {
  public:
    RawPostgres(const std::string& url, const std::string& table)
        : url_(url), table_name_(table), table_("\"" + table + "\""), owner_(raw_owner_string()) {
        conn_ = PQconnectdb(url.c_str());
        if (PQstatus(conn_) != CONNECTION_OK) {
            std::string msg = PQerrorMessage(conn_);
            PQfinish(conn_);
            throw std::runtime_error("raw PostgreSQL client: cannot connect to " + redact_url(url) +
                                     ": " + scrub_password(trimmed(msg), url));
        }
        // DROP TABLE IF EXISTS and friends talk back; nobody needs to read it.
        PQsetNoticeProcessor(
            conn_, [](void*, const char*) {}, nullptr);
        try {
            // What sqlock's own sessions run with, whatever the server's
            // defaults (a test server may have hostile ones): the same
            // isolation, and no server-side timeout in the way.
            exec(std::string("SET default_transaction_isolation = 'read committed'; "
                             "SET statement_timeout = 0; SET lock_timeout = 0; "
                             "SET idle_in_transaction_session_timeout = 0") +
                 (PQserverVersion(conn_) >= 140000 ? "; SET idle_session_timeout = 0" : ""));
            prepare("acquire", "INSERT INTO " + table_ +
                                   " (lockstring, created, expires, locked_by)"
                                   " VALUES ($1, now(), now() + interval '1 hour', $2)"
                                   " ON CONFLICT (lockstring) DO NOTHING RETURNING id");
            prepare("release", "DELETE FROM " + table_ + " WHERE id = $1 AND locked_by = $2");
            prepare("acquire_many", "INSERT INTO " + table_ +
                                        " (lockstring, created, expires, locked_by)"
                                        " SELECT n, now(), now() + interval '1 hour', $2"
                                        " FROM unnest($1::text[]) AS n"
                                        " ON CONFLICT (lockstring) DO NOTHING");
            prepare("release_many", "DELETE FROM " + table_ +
                                        " WHERE lockstring = ANY ($1::text[]) AND locked_by = $2");
            prepare("slot", "INSERT INTO " + table_ +
                                " (lockstring, created, expires, locked_by)"
                                " SELECT $1 || '#' || n, now(), now() + interval '1 hour', $3"
                                " FROM generate_series(1, $2::int) AS n WHERE NOT EXISTS"
                                " (SELECT 1 FROM " +
                                table_ +
                                " WHERE lockstring = $1 || '#' || n) ORDER BY n LIMIT 1"
                                " ON CONFLICT (lockstring) DO NOTHING RETURNING id");
            prepare_layers();
        } catch (...) {
            PQfinish(conn_);
            throw;
        }
    }

    bool cycle_with(pg_layer up_to, const std::string& name) override {
        const char* acquire = up_to == pg_layer::take_over ? "layer_take_over"
                              : up_to == pg_layer::turn    ? "layer_turn"
                                                           : "layer_queue_gate";
        const std::int64_t id = id_of(run(acquire, {name.c_str(), owner_.c_str()}));
        if (!id) return false;
        const std::string text = std::to_string(id);
        Result r(up_to == pg_layer::wake_up
                     ? run("layer_wake_up", {text.c_str(), owner_.c_str(), name.c_str()})
                     : run("release", {text.c_str(), owner_.c_str()}));
        if (std::string(PQcmdTuples(r.get())) != "1")
            throw std::runtime_error("raw layered release found no row");
        return true;
    }

    ~RawPostgres() override { PQfinish(conn_); }

    std::int64_t try_acquire(const std::string& name) override {
        return id_of(run("acquire", {name.c_str(), owner_.c_str()}));
    }

    void release(std::int64_t id) override {
        const std::string text = std::to_string(id);
        Result r(run("release", {text.c_str(), owner_.c_str()}));
        if (std::string(PQcmdTuples(r.get())) != "1")
            throw std::runtime_error("raw release found no row");
    }

    void cycle_many(const std::vector<std::string>& names) override {
        std::string array = "{";
        for (const std::string& n : names) array += (array.size() > 1 ? ",\"" : "\"") + n + "\"";
        array += "}";
        const std::string count = std::to_string(names.size());
        Result in(run("acquire_many", {array.c_str(), owner_.c_str()}));
        if (std::string(PQcmdTuples(in.get())) != count)
            throw std::runtime_error("raw set found a row held");
        Result out(run("release_many", {array.c_str(), owner_.c_str()}));
        if (std::string(PQcmdTuples(out.get())) != count)
            throw std::runtime_error("raw set release found a row gone");
    }

    std::int64_t try_acquire_slot(const std::string& name, int capacity) override {
        const std::string cap = std::to_string(capacity);
        return id_of(run("slot", {name.c_str(), cap.c_str(), owner_.c_str()}));
    }

    void fill(const std::string& prefix, std::int64_t first, std::int64_t count,
              bool expired) override {
        const std::string created = expired ? "now() - interval '2 hours'" : "now()";
        const std::string expires =
            expired ? "now() - interval '1 hour'" : "now() + interval '1 day'";
        const std::string a = std::to_string(first), b = std::to_string(first + count - 1);
        Result r(check(PQexecParams(conn_,
                                    ("INSERT INTO " + table_ +
                                     " (lockstring, created, expires, locked_by)"
                                     " SELECT $1 || g, " +
                                     created + ", " + expires +
                                     ", $4 FROM generate_series($2::bigint, $3::bigint) AS g")
                                        .c_str(),
                                    4, nullptr,
                                    std::vector<const char*>{prefix.c_str(), a.c_str(), b.c_str(),
                                                             owner_.c_str()}
                                        .data(),
                                    nullptr, nullptr, 0),
                       "bulk INSERT"));
        // A long-lived table has statistics; give the planner the same.
        exec("ANALYZE " + table_);
    }

    std::int64_t purge_expired_at_once() override {
        Result r(check(PQexec(conn_, ("DELETE FROM " + table_ + " WHERE expires <= now()").c_str()),
                       "DELETE"));
        return std::stoll(PQcmdTuples(r.get()));
    }

    void drop_table() override {
        for (const std::string& t : lock_table_family(table_name_))
            exec("DROP TABLE IF EXISTS \"" + t + "\"");
        exec("DROP TABLE IF EXISTS \"" + table_name_ + "_data\"");
        exec("DROP FUNCTION IF EXISTS \"" + table_name_ + "_guard\"(bigint, text, text, text)");
    }

    void write_transaction(const std::string& guard) override {
        const std::string data = "\"" + table_name_ + "_data\"";
        if (!data_made_) {
            exec("CREATE TABLE IF NOT EXISTS " + data + " (id bigserial PRIMARY KEY, who text)");
            data_made_ = true;
        }
        exec("BEGIN");
        if (!guard.empty()) exec(guard);
        exec("INSERT INTO " + data + " (who) VALUES ('bench')");
        exec("COMMIT");
    }

    std::int64_t work_done() override {
        // Other backends' counts reach the view when they end or every
        // second; the waiters counted have ended. Our own reads are in it too.
        const char* sql =
            "SELECT xact_commit + xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()";
        Result r(check(PQexec(conn_, sql), sql));
        return std::stoll(PQgetvalue(r.get(), 0, 0));
    }

    std::string server_version() override {
        Result r(check(PQexec(conn_, "SELECT version()"), "SELECT version()"));
        std::string v = PQgetvalue(r.get(), 0, 0);
        return v.substr(0, v.find(" on "));
    }

  private:
    // sqlock's PostgreSQL statements, written out one guarantee at a time
    // (postgres_statements.cpp has the reasons for each).
    void prepare_layers() {
        const std::string take_over =
            " ON CONFLICT (lockstring) DO UPDATE SET id = excluded.id,"
            " created = excluded.created, expires = excluded.expires,"
            " locked_by = excluded.locked_by WHERE t.expires <= now() RETURNING t.id";
        const std::string row = "INSERT INTO " + table_ +
                                " AS t (lockstring, created, expires, locked_by)"
                                " SELECT $1::text, now(), now() + interval '1 hour', $2::text";
        const std::string oid = "'" + table_ + "'::regclass::oid::text";
        const std::string turn =
            "WITH turn AS (SELECT hashtext('sqlock ' || " + oid + ") AS space) " + row +
            " FROM turn WHERE pg_advisory_xact_lock(turn.space, hashtext($1::text)) IS NOT NULL";
        const std::string queue = "\"" + table_name_ + "_queue\"";
        prepare("layer_take_over", row + take_over);
        prepare("layer_turn", turn + take_over);
        prepare("layer_queue_gate", turn + " AND NOT EXISTS (SELECT 1 FROM " + queue +
                                        " AS q WHERE q.lockstring = $1::text"
                                        " AND q.expires > now())" +
                                        take_over);
        prepare("layer_wake_up",
                "DELETE FROM " + table_ +
                    " WHERE id = $1::bigint AND coalesce(locked_by, '') = $2::text RETURNING"
                    " CASE WHEN pg_try_advisory_xact_lock(hashtext('sqlock waiting ' || " +
                    oid +
                    "), hashtext($3::text)) THEN NULL ELSE pg_notify('sqlock_bench', "
                    "lockstring) END");
    }

    static std::string trimmed(std::string s) {
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        return s;
    }

    PGresult* check(PGresult* r, const char* what) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
        std::string msg = r ? PQresultErrorMessage(r) : PQerrorMessage(conn_);
        PQclear(r);
        throw std::runtime_error(std::string("raw PostgreSQL client: ") + what + ": " +
                                 scrub_password(trimmed(msg), url_));
    }

    void exec(const std::string& sql) { Result r(check(PQexec(conn_, sql.c_str()), sql.c_str())); }
    bool data_made_ = false;

    void prepare(const char* name, const std::string& sql) {
        Result r(check(PQprepare(conn_, name, sql.c_str(), 0, nullptr), "PREPARE"));
    }

    PGresult* run(const char* statement, std::initializer_list<const char*> params) {
        return check(PQexecPrepared(conn_, statement, static_cast<int>(params.size()),
                                    params.begin(), nullptr, nullptr, 0),
                     statement);
    }

    static std::int64_t id_of(PGresult* raw) {
        Result r(raw);
        if (PQntuples(r.get()) == 0) return 0;
        return std::stoll(PQgetvalue(r.get(), 0, 0));
    }

    std::string url_;         // holds the password: never printed
    std::string table_name_;  // the plain name
    std::string table_;       // quoted
    std::string owner_;
    PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<RawClient> connect_raw_postgres(const std::string& url, const std::string& table) {
    return std::make_unique<RawPostgres>(url, table);
}

}  // namespace sqlock_bench
