#include "test_support.hpp"

#include "needs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sqlock_test {

const BackendContext& backend_context() {
    static const BackendContext& context = []() -> const BackendContext& {
        const char* b = std::getenv("SQLOCK_TEST_BACKEND");
        const std::string name = b && *b ? b : "sqlite";
        std::string known;
        for (const BackendContext& c : backend_contexts()) {
            if (c.name == name) return c;
            known += " " + c.name;
        }
        std::fprintf(stderr, "SQLOCK_TEST_BACKEND=%s: not a backend built (built:%s)\n",
                     name.c_str(), known.c_str());
        std::abort();
    }();
    return context;
}

const std::string& backend() {
    return backend_context().name;
}

bool is_server_backend() {
    return !backend_context().url_variable.empty();
}

bool declares_need(const std::string& need, const std::string& helper) {
    if (current_test_declares(need)) return true;
    FAIL(helper << " in a test without the tag " << need_tag(need)
                << ": declare the need as a tag (backend_needs.hpp), so that the test is not "
                   "run, and is reported as skipped, where it does not apply");
    return false;
}

bool only_on_server_backend(const std::string& why) {
    declares_need("server", "only_on_server_backend(\"" + why + "\")");
    REQUIRE(is_server_backend());
    return true;
}

bool only_on_embedded_backend(const std::string& why) {
    declares_need("embedded", "only_on_embedded_backend(\"" + why + "\")");
    REQUIRE_FALSE(is_server_backend());
    return true;
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
    const std::string variable = backend_context().url_variable;
    const char* url = std::getenv(variable.c_str());
    if (!url || !*url) throw std::runtime_error(variable + " is not set");
    return url;
}

sqlock::errc category_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const sqlock::error& e) {
        return e.category();
    }
    FAIL("no sqlock::error thrown");
    return sqlock::errc::backend;
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
        // An embedded backend: one without a test server makes new databases.
        const auto fresh_url = backend_context().hooks.fresh_url;
        if (!fresh_url)
            throw std::logic_error(backend() + ": neither a test server nor a fresh_url hook");
        db.url = fresh_url(scratch_dir(), n);
        db.table = "sqlock_locks";
    }
    db.open().init();
    return db;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

sqlock::Locker Database::open(sqlock::LockerOptions options) const {
    options.table = table;
    return sqlock::Locker(url, options);
}

bool have_tool(bool present, const std::string& what) {
    if (present) return true;
    FAIL(what << " is missing" << (require_all() ? " (SQLOCK_TEST_REQUIRE_ALL=1)" : "")
              << "; a tool a test needs is a need of its own (needs.hpp), which skips the test, "
                 "with the reason, where the tool is missing");
    return false;
}

void skip_test(const std::string& why) {
    FAIL("not run: " << why
                     << ": declare what the test needs as a tag [needs:...] "
                        "(backend_needs.hpp), so that the run reports it skipped where it is "
                        "missing");
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

int files_starting(const std::string& dir, const std::string& prefix) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        n += e.path().filename().string().rfind(prefix, 0) == 0;
    return n;
}

int observe_whole_sets(sqlock::Locker& locker, const std::string& prefix,
                       const std::function<bool()>& done) {
    const std::regex size_re("\"set_size\":\"([0-9]+)\"");
    int reads = 0;
    while (!done()) {
        std::map<std::string, std::pair<int, int>> owners;  // guid -> (rows, size)
        for (const auto& row : locker.list(prefix)) {
            if (row.seconds_left <= 0) continue;
            std::smatch m;
            if (!std::regex_search(row.locked_by, m, size_re)) continue;
            auto& o = owners[row.holder.guid];
            ++o.first;
            o.second = std::stoi(m[1]);
        }
        for (const auto& [guid, o] : owners)
            if (o.first != o.second) return 4;  // part of a set
        ++reads;
    }
    return reads > 0 ? 0 : 5;
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

std::vector<SqlRow> query(const Database& db, const std::string& sql) {
    return backend_context().hooks.query(db.url, sql);
}

std::unique_ptr<AppTransaction> app_transaction(const Database& db, bool begin) {
    const auto open = backend_context().hooks.app_transaction;
    // Every backend has transactions a program can guard: a backend without
    // the hook is a gap in its test context, not a reason to skip.
    if (!open) FAIL("backend " << backend() << " has no app_transaction hook");
    return open(db.url, begin);
}

void exec_sql(const Database& db, const std::string& sql) {
    query(db, sql);
}

void grant_table_use(const Database& db, const std::string& account) {
    const auto grant = backend_context().hooks.grant_table_use_sql;
    if (!grant) throw std::logic_error("grant_table_use: " + backend() + " has no grants");
    // The lock table, its run history table, its queue of waiters, and its
    // pauses and leaders' values beside it (no id, so no sequence: the same
    // plain GRANT on every server).
    exec_sql(db, grant(db.table, account) + "; " + grant(db.table + "_runs", account) + "; " +
                     grant(db.table + "_queue", account) +
                     "; GRANT SELECT, INSERT, UPDATE, DELETE ON " + db.table + "_pauses TO " +
                     account + "; GRANT SELECT, INSERT, UPDATE, DELETE ON " + db.table +
                     "_leaders TO " + account);
    if (const auto guard = backend_context().hooks.grant_guard_use_sql)
        exec_sql(db, guard(db.table, account));
    if (const auto own = backend_context().hooks.grant_own_tables_sql)
        exec_sql(db, own(db.table, account));
}

Database least_privileged(const Database& db) {
    grant_table_use(db, "sqlock_noaccess");
    return {with_user(db.url, "sqlock_noaccess"), db.table};
}

std::string privilege_denied_code() {
    return backend_context().hooks.privilege_denied_code;
}

std::vector<std::string> names_of(const std::vector<sqlock::LockInfo>& rows) {
    std::vector<std::string> names;
    for (const auto& r : rows) names.push_back(r.name);
    return names;
}

}  // namespace sqlock_test
