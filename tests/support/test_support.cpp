#include "test_support.hpp"

#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef SQLOCK_TEST_HAVE_MARIADB
#include <mysql.h>
#endif

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sqlock_test {

const std::string& backend() {
    static const std::string value = [] {
        const char* b = std::getenv("SQLOCK_TEST_BACKEND");
        std::string name = b && *b ? b : "sqlite";
        if (name != "sqlite" && name != "postgres" && name != "mariadb") {
            std::fprintf(stderr, "SQLOCK_TEST_BACKEND=%s: not a backend the tests know\n",
                         name.c_str());
            std::abort();
        }
        return name;
    }();
    return value;
}

// The server backends' test servers; tests/CMakeLists.txt (add_backend_suite)
// holds the list of backends each suite runs against.
ServerEnv server_env() {
    if (backend() == "postgres")
        return {"SQLOCK_TEST_PG_URL", "SQLOCK_TEST_REQUIRE_PG", "SQLOCK_TEST_PG_SCRIPT",
                "PostgreSQL"};
    if (backend() == "mariadb")
        return {"SQLOCK_TEST_MARIADB_URL", "SQLOCK_TEST_REQUIRE_MARIADB",
                "SQLOCK_TEST_MARIADB_SCRIPT", "MariaDB"};
    return {};
}

bool is_server_backend() {
    return !server_env().url_variable.empty();
}

const std::string& scratch_dir() {
    // Deliberately leaked: the atexit cleanup below is registered while this
    // static is being initialised, so it would run after a normal static's
    // destructor and read freed memory.
    static const std::string& dir = *new std::string([] {
        std::string base = std::filesystem::temp_directory_path().string() + "/sqlock-test-XXXXXX";
        if (!mkdtemp(base.data())) throw std::runtime_error("mkdtemp failed");
        static pid_t owner = getpid();
        std::atexit([] {
            if (getpid() == owner) {
                std::error_code ec;
                std::filesystem::remove_all(scratch_dir(), ec);
            }
        });
        return base;
    }());
    return dir;
}

static std::string server_url() {
    const std::string variable = server_env().url_variable;
    const char* url = std::getenv(variable.c_str());
    if (!url || !*url) throw std::runtime_error(variable + " is not set");
    return url;
}

Database fresh_database() {
    static std::atomic<int> counter{0};
    int n = ++counter;
    Database db;
    if (is_server_backend()) {
        db.url = server_url();
        // Random too: later runs on the same server (the sanitizer stage)
        // may reuse a pid, and tables are never dropped.
        static const std::string run = [] {
            char buf[9];
            std::snprintf(buf, sizeof buf, "%08x", std::random_device{}());
            return std::string(buf);
        }();
        db.table = "t_" + std::to_string(getpid()) + "_" + run + "_" + std::to_string(n);
    } else {
        db.url = "sqlite://" + scratch_dir() + "/db" + std::to_string(n) + ".db";
        db.table = "sqlock_locks";
    }
    db.open().init();
    return db;
}

sqlock::Locker Database::open(sqlock::LockerOptions options) const {
    options.table = table;
    return sqlock::Locker(url, options);
}

int thread_count() {
    std::error_code ec;
    int n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        // The PostgreSQL backend's watchdog thread is safe beside a fork: it
        // allocates nothing and a child makes its own (postgres_watchdog.cpp).
        std::ifstream comm(it->path() / "comm");
        std::string name;
        std::getline(comm, name);
        if (name != "sqlock-watchdog") ++n;
    }
    return n;
}

// ThreadSanitizer's runtime starts a thread of its own with the process's
// first pthread_create and keeps it; its fork handler takes that thread's
// locks, so it is not one of the threads a child could deadlock on.
#if defined(__SANITIZE_THREAD__)
constexpr int runtime_threads = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int runtime_threads = 1;
#else
constexpr int runtime_threads = 0;
#endif
#else
constexpr int runtime_threads = 0;
#endif

pid_t fork_child(child_work work) {
    if (work == child_work::runs_code) {
        const int threads = thread_count();
        if (threads > 1 + runtime_threads)
            throw std::logic_error(
                "test bug: fork() of a child that runs code, from a process with " +
                std::to_string(threads) +
                " threads; fork before starting threads, or exec a helper");
    }
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(125);  // the parent died before prctl
    }
    return pid;
}

static int decode_status(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::optional<int> wait_child(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    // Polled: a child's exit has no descriptor to wait on (pidfd_open needs
    // a newer libc than the one the tests assume).
    for (auto pause = std::chrono::microseconds(100);;
         pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return decode_status(status);
        if (r < 0 && errno != EINTR) return std::nullopt;
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(pause);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return std::nullopt;
}

std::vector<int> run_children(int n, const std::function<int(int)>& body,
                              std::chrono::milliseconds timeout) {
    std::vector<pid_t> pids;
    for (int i = 0; i < n; ++i) {
        pid_t pid = fork_child(child_work::runs_code);
        if (pid == 0) {
            int code = 99;
            try {
                code = body(i);
            } catch (const std::exception& e) {
                fprintf(stderr, "child %d: %s\n", i, e.what());
                code = 98;
            }
            fflush(nullptr);
            _exit(code);
        }
        pids.push_back(pid);
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<int> codes;
    for (pid_t pid : pids) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        codes.push_back(wait_child(pid, std::max(left, std::chrono::milliseconds(0))).value_or(-1));
    }
    return codes;
}

std::string read_within(int fd, std::size_t n, std::chrono::milliseconds timeout) {
    std::string data;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (data.size() < n) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{fd, POLLIN, 0};
        const int ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) break;
        char buf[4096];
        const ssize_t got = read(fd, buf, std::min(sizeof buf, n - data.size()));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        data.append(buf, static_cast<std::size_t>(got));
    }
    return data;
}

bool have_tool(bool present, const std::string& what) {
    if (present) return true;
    const char* strict = std::getenv("SQLOCK_TEST_REQUIRE_ALL");
    if (strict && std::string(strict) == "1")
        FAIL(what << " is missing (SQLOCK_TEST_REQUIRE_ALL=1)");
    WARN(what << " is missing: not tested");
    return false;
}

int skip_suite(const std::string& why) {
    std::cout << "SQLOCK_TEST_SKIPPED: " << why << std::endl;
    return 0;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return condition();
}

bool enter_witness(const std::string& path) {
    const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0) return false;
    close(fd);
    return true;
}

void leave_witness(const std::string& path) {
    unlink(path.c_str());
}

void append_id(const std::string& path, long long id) {
    if (FILE* f = fopen(path.c_str(), "a")) {
        fprintf(f, "%lld\n", id);
        fclose(f);
    }
}

std::vector<long long> read_ids(const std::string& path) {
    std::vector<long long> ids;
    if (FILE* f = fopen(path.c_str(), "r")) {
        long long id = 0;
        while (fscanf(f, "%lld", &id) == 1) ids.push_back(id);
        fclose(f);
    }
    return ids;
}

// The URL as libpq takes it: without sqlock's own `pooler` parameter.
static std::string libpq_url(std::string url) {
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

double seconds_between(const std::string& from, const std::string& to) {
    auto parse = [](const std::string& text) {
        std::tm tm{};
        double seconds = 0;
        std::istringstream in(text);
        in >> std::get_time(&tm, "%Y-%m-%d %H:%M:") >> seconds;
        if (in.fail()) throw std::runtime_error("not a database timestamp: " + text);
        return static_cast<double>(timegm(&tm)) + seconds;
    };
    return parse(to) - parse(from);
}

namespace {

std::vector<SqlRow> query_sqlite(const std::string& path, const std::string& sql) {
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        std::string msg = h ? sqlite3_errmsg(h) : "out of memory";
        sqlite3_close(h);
        throw std::runtime_error("query: cannot open " + path + ": " + msg);
    }
    sqlite3_busy_timeout(h, 10000);
    // Every statement of `sql` in turn (like sqlite3_exec); the rows are the
    // last statement's.
    std::vector<SqlRow> rows;
    const char* next = sql.c_str();
    int rc = SQLITE_DONE;
    while (next && *next) {
        sqlite3_stmt* st = nullptr;
        rc = sqlite3_prepare_v2(h, next, -1, &st, &next);
        if (rc != SQLITE_OK) break;
        if (!st) continue;  // only white space or a comment left
        rows.clear();
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            SqlRow row;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                if (sqlite3_column_type(st, c) == SQLITE_NULL) {
                    row.emplace_back();
                } else {
                    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
                    row.emplace_back(std::string(text, sqlite3_column_bytes(st, c)));
                }
            }
            rows.push_back(std::move(row));
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) break;
    }
    std::string msg = sqlite3_errmsg(h);
    sqlite3_close(h);
    if (rc != SQLITE_DONE) throw std::runtime_error("query: " + msg + " in: " + sql);
    return rows;
}

std::vector<SqlRow> query_postgres(const std::string& url, const std::string& sql) {
    PGconn* conn = PQconnectdb(libpq_url(url).c_str());
    if (PQstatus(conn) != CONNECTION_OK) {
        std::string msg = PQerrorMessage(conn);
        PQfinish(conn);
        // libpq does not echo passwords, but keep even the URL out of logs.
        throw std::runtime_error("query: cannot connect: " + msg);
    }
    PGresult* r = PQexec(conn, sql.c_str());
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

#ifdef SQLOCK_TEST_HAVE_MARIADB

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

std::vector<SqlRow> query_mariadb(const std::string& url, const std::string& sql) {
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
        // The C API's messages carry the user and host, never the password.
        std::string msg = "query: " + what + ": " + mysql_error(h);
        mysql_close(h);
        return std::runtime_error(msg);
    };
    if (!mysql_real_connect(h, t.host.c_str(), t.user.c_str(), t.password.c_str(),
                            t.database.empty() ? nullptr : t.database.c_str(), t.port, nullptr,
                            CLIENT_MULTI_STATEMENTS))
        throw fail("cannot connect");
    // Standard SQL text (see query() in the header), UTC.
    if (mysql_query(h,
                    "SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES,NO_BACKSLASH_ESCAPES'), "
                    "time_zone = '+00:00'") != 0)
        throw fail("setting the session up");
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
    mysql_close(h);
    return rows;
}

#endif  // SQLOCK_TEST_HAVE_MARIADB

}  // namespace

std::vector<SqlRow> query(const Database& db, const std::string& sql) {
    if (db.url.rfind("postgres", 0) == 0) return query_postgres(db.url, sql);
    if (db.url.rfind("mariadb://", 0) == 0 || db.url.rfind("mysql://", 0) == 0) {
#ifdef SQLOCK_TEST_HAVE_MARIADB
        return query_mariadb(db.url, sql);
#else
        throw std::runtime_error("query: the tests were built without libmariadb");
#endif
    }
    std::string path = db.url.substr(std::string("sqlite://").size());
    std::size_t q = path.find('?');
    if (q != std::string::npos) path.resize(q);
    return query_sqlite(path, sql);
}

void exec_sql(const Database& db, const std::string& sql) {
    query(db, sql);
}

void grant_table_use(const Database& db, const std::string& account) {
    // The lock table and its run history table beside it.
    std::string sql;
    for (const std::string& table : {db.table, db.table + "_runs"}) {
        sql += "GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + " TO " + account + "; ";
        if (backend() == "postgres")
            sql += "GRANT USAGE ON SEQUENCE " + table + "_id_seq TO " + account + "; ";
    }
    exec_sql(db, sql);
}

std::string privilege_denied_code() {
    return backend() == "mariadb" ? "1142/42000" : "42501";
}

}  // namespace sqlock_test
