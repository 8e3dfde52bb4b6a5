// Security properties: private default files, deletes that remove exactly
// what they report, a least-privilege server account, no password in errors.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;
using sqlock_test::spawn_options;

namespace {

const char* const helper = SQLOCK_RELIABILITY_HELPER;

mode_t mode_of(const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return 07777;  // missing: never a match
    return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("the default SQLite database and its directory are private to the user", "[security]") {
    // The default location only exists for SQLite; the backend under test
    // does not matter. Checked while a process holds a lock, so SQLite's
    // -wal and -shm files (which hold lock rows too) exist.
    for (mode_t umask_value : {mode_t(022), mode_t(0)}) {
        for (bool use_xdg : {true, false}) {
            INFO("umask " << std::oct << umask_value << std::dec << ", XDG_STATE_HOME "
                          << (use_xdg ? "set" : "unset"));
            static int n = 0;
            const std::string home = sqlock_test::scratch_dir() + "/home" + std::to_string(++n);
            REQUIRE(mkdir(home.c_str(), 0755) == 0);
            const std::string state = use_xdg ? home + "/xdg-state" : home + "/.local/state";
            const sqlock_test::Env env = {
                {"HOME", home},
                {"XDG_STATE_HOME", use_xdg ? std::optional<std::string>(state) : std::nullopt},
                {"SQLOCK_DB", std::nullopt}};
            mode_t old = umask(umask_value);
            sqlock_test::Process holder({helper, "", "sqlock_locks", "hold", "private", "60000"},
                                        env, spawn_options().pipe_stdin(true).pipe_stdout(true));
            umask(old);
            auto line = holder.read_line();
            REQUIRE(line);
            INFO(*line);
            REQUIRE(line->rfind("acquired", 0) == 0);
            const std::string dir = state + "/sqlock";
            CHECK(mode_of(dir) == 0700);
            CHECK(mode_of(dir + "/locks.db") == 0600);
            CHECK(mode_of(dir + "/locks.db-wal") == 0600);
            CHECK(mode_of(dir + "/locks.db-shm") == 0600);
            // Directories we had to create on the way are private too.
            if (!use_xdg) CHECK(mode_of(home + "/.local") == 0700);
            holder.write_line("release");
            CHECK(holder.read_line() == "released");
            CHECK(holder.finish().code == 0);
        }
    }
}

TEST_CASE("force_release deletes exactly the row it reports, even while the lock churns",
          "[security][threads]") {
    // One thread takes and releases the name as fast as it can; another
    // force-releases it. Every id force_release() reports must be exactly a
    // holder that then finds its lock lost at release, and no other holder
    // may lose its lock.
    auto db = fresh_database();
    auto holders = db.open();
    auto admin = db.open();
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::set<std::int64_t> forced, lost, taken;
    std::atomic<int> unexpected{0}, gave_up{0};
    std::string first_unexpected;
    auto note_unexpected = [&](const sqlock::error& e) {
        std::lock_guard<std::mutex> g(mutex);
        if (unexpected++ == 0) first_unexpected = e.what();
    };
    std::thread churn([&] {
        for (int i = 0; i < 400; ++i) {
            try {
                auto lock = holders.lock("churn", lock_options().expires(1h).wait(30s));
                const std::int64_t id = lock.id();
                // Hold briefly, so the force thread often finds a holder.
                std::this_thread::sleep_for(std::chrono::microseconds(300));
                try {
                    lock.release();
                } catch (const sqlock::error& e) {
                    if (e.category() != sqlock::errc::lost) throw;
                    std::lock_guard<std::mutex> g(mutex);
                    lost.insert(id);
                }
                std::lock_guard<std::mutex> g(mutex);
                taken.insert(id);
            } catch (const sqlock::error& e) {
                note_unexpected(e);
            }
        }
        stop = true;
    });
    std::thread force([&] {
        while (!stop) {
            try {
                if (auto row = admin.force_release("churn")) {
                    std::lock_guard<std::mutex> g(mutex);
                    forced.insert(row->id);
                }
            } catch (const sqlock::error& e) {
                // The row it read changed hands before each of its ten
                // deletes: documented, and nothing was deleted.
                if (e.category() == sqlock::errc::busy)
                    ++gave_up;
                else
                    note_unexpected(e);
            }
        }
    });
    churn.join();
    force.join();
    INFO("first unexpected error: " << first_unexpected);
    CHECK(unexpected == 0);
    CHECK(forced == lost);
    for (auto id : forced) CHECK(taken.count(id) == 1);
    CHECK(holders.list().empty());
    WARN("force_release under churn ("
         << sqlock_test::backend() << "): " << taken.size() << " acquisitions, " << forced.size()
         << " force-released, each one exactly a lost release; " << gave_up
         << " force releases gave up (busy)");
}

TEST_CASE("the reaper deletes only expired rows and reports each one", "[security]") {
    auto db = fresh_database();
    auto locker = db.open();
    // Live locks of all kinds next to expired ones, names that share prefixes.
    auto live1 = locker.lock("job");
    auto live2 = locker.lock("job2");
    auto slot = locker.acquire_slot("job", 2);
    for (const char* name : {"job#2", "job-old", "jo", "job2#1"})
        sqlock_test::exec_sql(
            db, "INSERT INTO " + db.table + " (lockstring, created, expires, locked_by) VALUES ('" +
                    name + "', '2001-01-01 00:00:00', '2001-01-01 00:00:01', '{}')");
    const auto live_before =
        reliability::query(db, "SELECT id, lockstring, locked_by FROM " + db.table +
                                   " WHERE lockstring IN ('job', "
                                   "'job2', 'job#1') ORDER BY id");
    REQUIRE(live_before.size() == 3);
    auto expired = locker.list_expired();
    CHECK(expired.size() == 4);
    CHECK(locker.purge_expired(3) == 4);
    CHECK(reliability::query(db, "SELECT id, lockstring, locked_by FROM " + db.table +
                                     " ORDER BY id") == live_before);
    // force_release of "job" leaves "job#1", "job2" and everything else.
    auto gone = locker.force_release("job");
    REQUIRE(gone);
    CHECK(gone->id == live1.id());
    CHECK(locker.list().size() == 2);
    CHECK_FALSE(locker.force_release("jo"));
    CHECK(locker.list().size() == 2);
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    live1 = sqlock::Lock(std::move(live2));  // releases nothing of job2's: moved
    sqlock::set_release_error_handler({});
}

TEST_CASE("a least-privilege server account can lock, release and reap, but not init",
          "[security][privileges][needs:server]") {
    // SQLite has no accounts.
    auto db = fresh_database();  // created by the owner role
    // What the README tells an administrator to grant, and nothing more.
    const std::string url = sqlock_test::least_privileged(db).url;
    sqlock::Locker locker(url, locker_options().table(db.table));
    sqlock::Locker other(url, locker_options().table(db.table));
    {
        auto lock = locker.lock("lp", lock_options().expires(1h));
        CHECK_FALSE(other.try_lock("lp"));
        lock.renew();
        CHECK(lock.held());
        auto slot = locker.acquire_slot("lp-sem", 2);
        CHECK(slot.slot() == 1);
        CHECK(other.list().size() == 2);
        CHECK(other.show("lp"));
        CHECK(other.force_release("lp-sem#1"));
        sqlock::set_release_error_handler([](const sqlock::error&) {});
    }
    sqlock::set_release_error_handler({});
    // Waiting (LISTEN/NOTIFY on PostgreSQL) needs no further privilege.
    {
        auto held = locker.lock("lp-wait", lock_options().expires(1h));
        std::thread releaser([&] {
            // Gives the waiter time to start waiting; the outcome does not
            // depend on it (a waiter arriving later finds the lock free).
            std::this_thread::sleep_for(200ms);
            held.release();
        });
        CHECK_NOTHROW(other.lock("lp-wait", lock_options().wait(10s)));
        releaser.join();
    }
    {
        auto short_lease = locker.lock("lp-short", lock_options().expires(100ms));
        CHECK(sqlock_test::eventually([&] { return !other.list_expired().empty(); }));
        CHECK(other.purge_expired() == 1);
        sqlock::set_release_error_handler([](const sqlock::error&) {});
    }
    sqlock::set_release_error_handler({});
    CHECK(locker.list().empty());

    // init needs CREATE on the schema, which this role lacks: a configuration
    // error that says what is missing.
    sqlock::Locker creator(url, locker_options().table(db.table + "_new"));
    try {
        creator.init();
        FAIL("init succeeded without CREATE");
    } catch (const sqlock::error& e) {
        INFO(e.what());
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK(e.backend_code() == sqlock_test::privilege_denied_code());
        CHECK(std::string(e.what()).find("CREATE") != std::string::npos);
    }
    // Without the grants at all: also configuration, never "busy" or "lost".
    auto bare = fresh_database();
    try {
        sqlock::Locker(url, locker_options().table(bare.table)).try_lock("x");
        FAIL("locked without privileges");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK(e.backend_code() == sqlock_test::privilege_denied_code());
    }
}

TEST_CASE("no server password in errors for a wrong password or an unreachable server",
          "[security][redaction][needs:server][needs:bad_urls]") {
    // SQLite URLs have no password.
    auto db = fresh_database();
    const std::string password = sqlock_test::password_of(db.url);
    REQUIRE(password.size() >= 8);
    std::string wrong = db.url;
    wrong.replace(wrong.find(password), password.size(), password + "Wrong");
    std::string elsewhere = db.url;
    elsewhere.replace(
        elsewhere.find("@127.0.0.1:") + 11,
        elsewhere.find('/', elsewhere.find("@127.0.0.1:")) - (elsewhere.find("@127.0.0.1:") + 11),
        "1");
    using errc = sqlock::errc;
    struct Case {
        std::string url;
        std::vector<errc> categories;  // what the failure may be
    };
    std::vector<Case> cases = {{wrong, {errc::connection, errc::configuration}},
                               {elsewhere, {errc::connection, errc::configuration}}};
    // And the ways this backend's own URLs can be wrong.
    for (const sqlock_test::BadUrl& bad :
         sqlock_test::backend_context().hooks.bad_urls(db.url, password))
        cases.push_back({bad.url, bad.categories});
    for (const auto& c : cases) {
        INFO("case " << (&c - cases.data()));  // never the URL: it holds the password
        try {
            sqlock::Locker locker(c.url, locker_options().table(db.table));
            CHECK(locker.url().find(password) == std::string::npos);
            locker.try_lock("x");
            FAIL("connected with a bad URL");
        } catch (const sqlock::error& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.find(password) == std::string::npos);
            CHECK(what.find('\n') == std::string::npos);
            CHECK(std::count(c.categories.begin(), c.categories.end(), e.category()) == 1);
        }
    }
}
