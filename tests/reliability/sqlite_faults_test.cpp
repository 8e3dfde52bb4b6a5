// SQLite's own failure modes, each reported as what it is.
//
// The important one: another process holding the file in a long write
// transaction. After the busy timeout sqlock must report a backend error
// with code SQLITE_BUSY, never "the lock is held" (errc::busy) and never a
// wrong answer; readers must keep working meanwhile (WAL).
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock::errc;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

using clock_type = std::chrono::steady_clock;

// Another process holding a write transaction on the file until destroyed.
class Writer {
  public:
    explicit Writer(const std::string& path) {
        int ready[2], release[2];
        REQUIRE(pipe(ready) == 0);
        REQUIRE(pipe(release) == 0);
        pid_ = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
        if (pid_ == 0) {
            close(ready[0]);
            close(release[1]);
            sqlite3* db = nullptr;
            sqlite3_open(path.c_str(), &db);
            char* err = nullptr;
            int rc = sqlite3_exec(db,
                                  "BEGIN IMMEDIATE; INSERT INTO sqlock_locks (lockstring, created, "
                                  "expires, locked_by) VALUES ('writer', '2001-01-01', "
                                  "'2999-01-01', 'writer')",
                                  nullptr, nullptr, &err);
            char c = rc == SQLITE_OK ? 'y' : 'n';
            (void)!write(ready[1], &c, 1);
            (void)!read(release[0], &c, 1);  // until the parent closes its end
            sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
            sqlite3_close(db);
            _exit(0);
        }
        close(ready[1]);
        close(release[0]);
        release_ = release[1];
        const std::string answer = sqlock_test::read_within(ready[0], 1, 30s);
        close(ready[0]);
        REQUIRE(answer == "y");
    }
    ~Writer() {
        try {
            end();
        } catch (const std::exception&) {
            // Reaped already: nothing left to wait for.
        }
    }
    void end() {
        if (pid_ <= 0) return;
        close(release_);
        sqlock_test::wait_child(pid_, 30s);
        pid_ = -1;
    }

  private:
    pid_t pid_ = -1;
    int release_ = -1;
};

std::string path_of(const sqlock_test::Database& db) {
    return db.url.substr(std::string("sqlite://").size());
}

// Runs `op` and returns the error it threw (fails the test if none).
template <typename Op>
sqlock::error error_of(Op&& op) {
    try {
        op();
    } catch (const sqlock::error& e) {
        return e;
    }
    FAIL("no sqlock::error thrown");
    throw std::logic_error("unreachable");
}

// Runs `op` in a forked child, as user nobody when we are root (root ignores
// file modes), and returns "category code message" of what it threw.
std::string as_unprivileged(const std::function<void()>& op) {
    int out[2];
    REQUIRE(pipe(out) == 0);
    pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
    if (pid == 0) {
        close(out[0]);
        std::string result = "no error";
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
            result = "setuid failed";
        } else {
            try {
                op();
            } catch (const sqlock::error& e) {
                result = std::string(sqlock::to_string(e.category())) + " " + e.backend_code() +
                         " " + e.what();
            } catch (const std::exception& e) {
                result = std::string("other ") + e.what();
            }
        }
        (void)!write(out[1], result.data(), result.size());
        _exit(0);
    }
    close(out[1]);
    std::string result = sqlock_test::read_within(out[0], 64 * 1024, 60s);
    close(out[0]);
    sqlock_test::wait_child(pid, 30s);
    return result;
}

// A directory outside the private scratch dir, so user nobody can reach it.
std::string public_dir() {
    std::string dir = "/tmp/sqlock-ro-XXXXXX";
    REQUIRE(mkdtemp(dir.data()));
    chmod(dir.c_str(), 0755);
    return dir;
}

}  // namespace

TEST_CASE("a long write transaction elsewhere: SQLITE_BUSY after the busy timeout, never 'held'",
          "[sqlite][busy]") {
    auto db = fresh_database();
    sqlock::Locker locker(db.url + "?busy_timeout=200", locker_options().table(db.table));
    auto before_writer = locker.lock("taken-before", lock_options().expires(1h));
    const std::string token = before_writer.owner_token();
    locker.list();  // open the pooled connection before the writer starts
    Writer writer(path_of(db));

    auto expect_busy = [&](const char* what, const std::function<void()>& op) {
        INFO(what);
        const auto start = clock_type::now();
        sqlock::error e = error_of(op);
        const auto waited = clock_type::now() - start;
        INFO(e.what());
        CHECK(e.category() == errc::backend);
        CHECK(e.backend_code() == "SQLITE_BUSY");
        CHECK(std::string(e.what()).find("busy") != std::string::npos);
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
        // It waited for the busy timeout, and not much longer.
        CHECK(waited >= 150ms);
        CHECK(waited < 5s);
    };
    expect_busy("try_lock", [&] { locker.try_lock("free-name"); });
    expect_busy("lock with a wait", [&] { locker.lock("free-name", lock_options().wait(2s)); });
    expect_busy("try_acquire_slot", [&] { locker.try_acquire_slot("sem", 3); });
    expect_busy("purge_expired", [&] { locker.purge_expired(); });
    expect_busy("force_release", [&] { locker.force_release("taken-before"); });
    expect_busy("renew", [&] { before_writer.renew(); });
    // Readers are not blocked by the writer (WAL).
    CHECK(locker.list().size() == 1);
    CHECK(locker.show("taken-before"));
    CHECK(before_writer.held());
    // A failed release leaves the row: it is released by owner token later.
    expect_busy("release", [&] { before_writer.release(); });
    writer.end();
    CHECK(locker.show("taken-before"));
    CHECK(locker.release("taken-before", token));
    // Once the writer is gone everything works, and its row never appeared.
    auto lock = locker.try_lock("free-name");
    CHECK(lock);
    CHECK_FALSE(locker.show("writer"));
}

TEST_CASE("a read-only database file is a configuration error", "[sqlite][files]") {
    const std::string dir = public_dir();
    const std::string path = dir + "/ro.db";
    { sqlock::Locker("sqlite://" + path).init(); }
    chmod(path.c_str(), 0444);
    const std::string result =
        as_unprivileged([&] { sqlock::Locker("sqlite://" + path).try_lock("x"); });
    INFO(result);
    CHECK(result.rfind("configuration SQLITE_READONLY", 0) == 0);
    CHECK(result.find(path) != std::string::npos);
    // A read-only directory (no room for -wal and -shm) as well.
    chmod(path.c_str(), 0644);
    chmod(dir.c_str(), 0555);
    const std::string in_ro_dir =
        as_unprivileged([&] { sqlock::Locker("sqlite://" + path).try_lock("x"); });
    INFO(in_ro_dir);
    CHECK(in_ro_dir.rfind("configuration", 0) == 0);
    CHECK(in_ro_dir.find(path) != std::string::npos);
    chmod(dir.c_str(), 0755);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a missing directory, a directory, a non-database: each a clear error",
          "[sqlite][files]") {
    const std::string scratch = sqlock_test::scratch_dir();
    {
        const std::string path = scratch + "/missing-dir/sub/x.db";
        // Using a database that is not there is a configuration error (the
        // path is wrong, or `init` was never run), as the CLI's exit 78 says.
        sqlock::error e = error_of([&] { sqlock::Locker("sqlite://" + path).try_lock("x"); });
        INFO(e.what());
        CHECK(e.category() == errc::configuration);
        CHECK(e.backend_code() == "SQLITE_CANTOPEN");
        CHECK(std::string(e.what()).find(path) != std::string::npos);
        CHECK(std::string(e.what()).find("sqlock init") != std::string::npos);
        CHECK(std::string(e.what()).find("the directory") != std::string::npos);  // said at once
        // init() cannot create it either: the directory is missing, a
        // setting to fix too (never "unreachable", which says try later).
        sqlock::error on_init = error_of([&] { sqlock::Locker("sqlite://" + path).init(); });
        CHECK(on_init.category() == errc::configuration);
        CHECK(std::string(on_init.what()).find("directory") != std::string::npos);
        // Nothing was created on the way.
        CHECK_FALSE(std::filesystem::exists(scratch + "/missing-dir"));
    }
    {
        const std::string path = scratch + "/a-directory.db";
        std::filesystem::create_directory(path);
        sqlock::error e = error_of([&] { sqlock::Locker("sqlite://" + path).try_lock("x"); });
        INFO(e.what());
        // A directory is a mistake in the URL (configuration), not an
        // unreachable database (connection).
        CHECK(e.category() == errc::configuration);
        CHECK(std::string(e.what()).find(path) != std::string::npos);
        CHECK(std::string(e.what()).find("is a directory") != std::string::npos);
    }
    for (const std::string content :
         {std::string("this is not a database, just some text\n"), std::string(8192, '\xa5'),
          std::string("SQLite format 3") + std::string(4081, '\x01')}) {
        const std::string path = scratch + "/not-a-db-" + std::to_string(content.size()) + ".db";
        std::ofstream(path, std::ios::binary) << content;
        const auto before = std::filesystem::file_size(path);
        sqlock::error e = error_of([&] { sqlock::Locker("sqlite://" + path).try_lock("x"); });
        INFO(e.what());
        CHECK(e.category() == errc::configuration);
        CHECK((e.backend_code() == "SQLITE_NOTADB" || e.backend_code() == "SQLITE_CORRUPT"));
        CHECK(std::string(e.what()).find(path) != std::string::npos);
        // The file was not "repaired" or overwritten.
        CHECK(std::filesystem::file_size(path) == before);
    }
    {
        // A valid database without the lock table: configuration, saying what to do.
        const std::string path = scratch + "/no-table.db";
        sqlite3* h = nullptr;
        sqlite3_open(path.c_str(), &h);
        sqlite3_exec(h, "CREATE TABLE other (x)", nullptr, nullptr, nullptr);
        sqlite3_close(h);
        sqlock::error e = error_of([&] { sqlock::Locker("sqlite://" + path).try_lock("x"); });
        INFO(e.what());
        CHECK(e.category() == errc::configuration);
        CHECK(std::string(e.what()).find("sqlock init") != std::string::npos);
    }
    {
        // An empty file is an empty database: init makes it usable.
        const std::string path = scratch + "/empty.db";
        std::ofstream(path).close();
        sqlock::Locker locker("sqlite://" + path);
        CHECK_NOTHROW(locker.init());
        CHECK(locker.try_lock("x"));
    }
}

// Regression: expiry used to be compared as text only, so a timestamp
// SQLite cannot parse blocked for ever (while expired() said true) and an
// ISO 8601 "...T..." expiry in the past blocked until midnight UTC. Such rows
// now count as expired: listed, taken over and reaped.
TEST_CASE("foreign timestamps SQLite cannot compare as text still expire", "[sqlite][foreign]") {
    auto db = fresh_database();
    int n = 0;
    for (const std::string expires : {"'not a date'", "'2999-13-45 99:99:99'", "X'00ff'",
                                      "strftime('%Y-%m-%dT%H:%M:%S', 'now', '-60 seconds')"})
        sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                      " (lockstring, created, expires, locked_by) VALUES ('odd-" +
                                      std::to_string(++n) + "', '2001-01-01 00:00:00', " + expires +
                                      ", '{}')");
    auto locker = db.open();
    reliability::check_expired_agrees_with_list_expired(locker);
    for (const auto& info : locker.list()) {
        INFO(info.name);
        CHECK(info.expired());
    }
    CHECK(locker.try_lock("odd-1"));
    CHECK(locker.purge_expired() == 3);
    CHECK(locker.list().empty());
}
