// LISTEN/NOTIFY: waiters in other processes are woken by the release itself,
// not by polling.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "base/fnv1a.hpp"
#include "pg_test.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using steady = std::chrono::steady_clock;
using sqlock_test::lock_options;

namespace {

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now().time_since_epoch())
        .count();
}

// Waiter: a child process that says when it is about to wait, then runs `wait`,
// which returns the steady-clock time it got the lock (comparable across
// processes: CLOCK_MONOTONIC) and the lock's id. (Taken inside `wait`: a
// Locker's destructor may take a moment to stop its listener thread.)
class Waiter {
  public:
    template <typename Wait>
    static Waiter start(Wait wait) {
        int ready[2], result[2];
        REQUIRE(pipe(ready) == 0);
        REQUIRE(pipe(result) == 0);
        sqlock_test::Process process = sqlock_test::Process::fork([&] {
            close(ready[0]);
            close(result[0]);
            long long out[2] = {0, 0};
            try {
                char c = 'r';
                if (write(ready[1], &c, 1) != 1) return 3;
                auto [at, id] = wait();
                out[0] = at;
                out[1] = id;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "child: %s\n", e.what());
            }
            if (write(result[1], out, sizeof out) != sizeof out) return 4;
            return out[1] > 0 ? 0 : 1;
        });
        close(ready[1]);
        close(result[1]);
        return Waiter(std::move(process), ready[0], result[0]);
    }

    Waiter(Waiter&& other) noexcept
        : process_(std::move(other.process_)),
          ready_fd_(std::exchange(other.ready_fd_, -1)),
          result_fd_(std::exchange(other.result_fd_, -1)) {}
    Waiter& operator=(Waiter&&) = delete;
    // A test that failed part-way leaves no child behind (~Process).
    ~Waiter() {
        if (ready_fd_ >= 0) close(ready_fd_);
        if (result_fd_ >= 0) close(result_fd_);
    }

    void wait_ready() const { REQUIRE(sqlock_test::read_within(ready_fd_, 1, 30s) == "r"); }

    // (time acquired, id); waits for the child to exit.
    std::pair<std::int64_t, std::int64_t> result() {
        long long out[2] = {0, 0};
        const std::string bytes = sqlock_test::read_within(result_fd_, sizeof out, 60s);
        REQUIRE(bytes.size() == sizeof out);
        std::memcpy(out, bytes.data(), sizeof out);
        CHECK(process_.finish(30s).code == 0);
        return {out[0], out[1]};
    }

  private:
    Waiter(sqlock_test::Process process, int ready, int result)
        : process_(std::move(process)), ready_fd_(ready), result_fd_(result) {}

    sqlock_test::Process process_;
    int ready_fd_ = -1;
    int result_fd_ = -1;
};

double ms_between(std::int64_t from_ns, std::int64_t to_ns) {
    return (to_ns - from_ns) / 1e6;
}

// A pushed wake-up took 2.0-2.7 ms in six runs here; a waiter that
// missed it would wake at the 5 s safety-net re-check. The bound sits between
// the two, generous enough for a machine 3x slower under a sanitizer.
constexpr double pushed_wakeup_ms = 2500.0;

// The channel a release of `name` in `table` notifies (the backend's
// name_channel(), written out: the test checks what goes over the wire).
std::string name_channel(const std::string& table, const std::string& name) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(sqlock::detail::fnv1a64(table + '\0' + name)));
    return std::string("sqlock_n_") + hex;
}

// A session of our own that LISTENs on the channels of the names given.
class ChannelListener {
  public:
    ChannelListener(const std::string& url, const std::string& table,
                    const std::vector<std::string>& names)
        : conn_(PQconnectdb(url.c_str())), channel_(name_channel(table, names.at(0))) {
        REQUIRE(PQstatus(conn_) == CONNECTION_OK);
        for (const std::string& name : names) run("LISTEN " + name_channel(table, name));
    }
    ~ChannelListener() { PQfinish(conn_); }
    ChannelListener(const ChannelListener&) = delete;
    ChannelListener& operator=(const ChannelListener&) = delete;

    // The payloads notified on the channel before a NOTIFY of our own, sent
    // now: notifications arrive in commit order, so this is every one that
    // a transaction committed before this call sent.
    std::vector<std::string> heard() {
        run("NOTIFY " + channel_ + ", 'sentinel'");
        std::vector<std::string> out;
        const auto give_up = steady::now() + 30s;
        while (steady::now() < give_up) {
            REQUIRE(PQconsumeInput(conn_) == 1);
            while (PGnotify* n = PQnotifies(conn_)) {
                std::string payload = n->extra;
                PQfreemem(n);
                if (payload == "sentinel") return out;
                out.push_back(payload);
            }
            pollfd fd{PQsocket(conn_), POLLIN, 0};
            poll(&fd, 1, 100);
        }
        FAIL("our own NOTIFY never arrived");
        return out;
    }

  private:
    void run(const std::string& sql) {
        PGresult* r = PQexec(conn_, sql.c_str());
        const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        REQUIRE(ok);
    }

    PGconn* conn_;
    std::string channel_;
};

}  // namespace

TEST_CASE("a release notifies only while someone waits for the name", "[pg][notify]") {
    auto db = fresh_database();
    ChannelListener channel(db.url, db.table, {"wanted", "pool", "quiet", "other"});
    auto holder = db.open();
    auto waiter = db.open();
    holder.lock("quiet").release();
    CHECK(channel.heard().empty());

    auto held = holder.lock("wanted", lock_options().expires(1h));
    auto slot = holder.acquire_slot("pool", 1, lock_options().expires(1h));
    std::optional<sqlock::Lock> got_lock, got_slot;
    {
        sqlock_test::ScopedThread lock_waiter(
            [&] { got_lock.emplace(waiter.lock("wanted", lock_options().wait(30s))); });
        sqlock_test::ScopedThread slot_waiter(
            [&] { got_slot.emplace(waiter.acquire_slot("pool", 1, lock_options().wait(30s))); });
        // The waiting Locker's listener says it waits for both names.
        REQUIRE(sqlock_test::eventually(
            [&] { return pg_test::count(pg_test::waiting_sessions(db.url, db.table), ",") == 1; }));
        holder.lock("other").release();  // nobody waits for it
        held.release();
        slot.release();
    }
    REQUIRE(got_lock);
    REQUIRE(got_slot);
    auto heard = channel.heard();
    std::sort(heard.begin(), heard.end());
    CHECK(heard == std::vector<std::string>{"pool#1", "wanted"});
    // Nobody waits any more: the listener says so, and releases are quiet again.
    REQUIRE(sqlock_test::eventually(
        [&] { return pg_test::waiting_sessions(db.url, db.table).empty(); }));
    got_lock->release();
    got_slot->release();
    CHECK(channel.heard().empty());
}

TEST_CASE("a waiter that gives up stops saying it waits", "[pg][notify]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto held = holder.lock("long", lock_options().expires(1h));
    auto waiter = db.open();
    std::atomic<bool> give_up{false};
    bool timed_out = false;
    {
        sqlock_test::ScopedThread t([&] {
            sqlock::LockOptions o;
            o.wait = 30s;
            o.progress_every = 20ms;
            o.on_waiting = [&](const sqlock::LockInfo*, sqlock::duration) { return !give_up; };
            try {
                waiter.lock("long", o);
            } catch (const sqlock::error& e) {
                timed_out = e.category() == sqlock::errc::timeout;
            }
        });
        // It says it waits, then stops waiting.
        REQUIRE(sqlock_test::eventually(
            [&] { return !pg_test::waiting_sessions(db.url, db.table).empty(); }));
        give_up = true;
    }
    CHECK(timed_out);
    REQUIRE(sqlock_test::eventually(
        [&] { return pg_test::waiting_sessions(db.url, db.table).empty(); }));
}

TEST_CASE("a waiter in another process acquires within ms of the release, without polling",
          "[pg][notify]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto held = holder.lock("handoff", lock_options().expires(1h));
    const std::int64_t held_id = held.id();
    Waiter child = Waiter::start([&] {
        auto locker = db.open();
        auto lock = locker.lock("handoff", lock_options().expires(1h).wait(30s));
        return std::make_pair(now_ns(), lock.id());
    });
    child.wait_ready();
    // An observation window, not synchronisation: 3 s in which a polling
    // waiter would make dozens of attempts (counted by the id gap below),
    // well short of the 5 s safety-net re-check.
    std::this_thread::sleep_for(3s);
    const std::int64_t released_at = now_ns();
    held.release();
    auto [acquired_at, id] = child.result();
    const double delay = ms_between(released_at, acquired_at);
    INFO("release -> acquire in another process: " << delay << " ms");
    CHECK(delay < pushed_wakeup_ms);
    CHECK(delay >= 0.0);
    // Every attempt draws one id from the table's sequence (ON CONFLICT
    // evaluates the default), so the gap counts the waiter's attempts: one
    // before it slept, one after the wake-up. A polling waiter would have
    // made dozens in those 3 s.
    INFO("ids: holder " << held_id << ", waiter " << id);
    CHECK(id - held_id <= 3);
}

TEST_CASE("every waiter is woken, each in turn, long before the safety net", "[pg][notify]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto held = holder.lock("queue", lock_options().expires(1h));
    std::vector<Waiter> children;
    for (int i = 0; i < 3; ++i)
        children.push_back(Waiter::start([&] {
            auto locker = db.open();
            auto lock = locker.lock("queue", lock_options().expires(1h).wait(30s));
            auto at = now_ns();
            std::this_thread::sleep_for(50ms);
            return std::make_pair(at, lock.id());  // released on return: wakes the next one
        }));
    for (auto& c : children) c.wait_ready();
    // Each child's first attempt draws an id; then all three are asleep.
    const std::int64_t held_id = held.id();
    REQUIRE(sqlock_test::eventually(
        [&] { return pg_test::last_id_drawn(db.url, db.table) >= held_id + 3; }));
    const std::int64_t released_at = now_ns();
    held.release();
    std::int64_t last = 0;
    for (auto& c : children) last = std::max(last, c.result().first);
    const double total = ms_between(released_at, last);
    INFO("three hand-offs took " << total << " ms");
    // Three pushed hand-offs plus three 50 ms holds; one missed wake-up
    // alone would cost the 5 s safety net.
    CHECK(total < 150.0 + pushed_wakeup_ms);
}

TEST_CASE("a waiter for a semaphore is woken by a slot release", "[pg][notify]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto s1 = holder.acquire_slot("sem", 2);
    auto s2 = holder.acquire_slot("sem", 2);
    Waiter child = Waiter::start([&] {
        auto locker = db.open();
        auto slot = locker.acquire_slot("sem", 2, lock_options().wait(30s));
        return std::make_pair(now_ns(), slot.slot() == 2 ? slot.id() : std::int64_t{-1});
    });
    child.wait_ready();
    // A failed slot attempt draws no id; instead, the child's session has run
    // a slot statement once the holder's has (the acquisition's probe, or
    // the read of the holders after a failed one; both sit idle after it).
    REQUIRE(sqlock_test::eventually([&] {
        return pg_test::query(db.url,
                              "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' AND "
                              "(query LIKE '%RECURSIVE probe%" +
                                  db.table + "%' OR query LIKE '%generate_series%" + db.table +
                                  "%')") == "2";
    }));
    const std::int64_t released_at = now_ns();
    s2.release();
    auto [acquired_at, id] = child.result();
    CHECK(id > 0);
    CHECK(ms_between(released_at, acquired_at) < pushed_wakeup_ms);
}

TEST_CASE("a release kept by min_hold tells waiters the new, nearer expiry", "[pg][notify]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto held = holder.lock("cron", lock_options().expires(1h).min_hold(4s));
    const std::int64_t held_id = held.id();
    const std::int64_t created_at = now_ns();
    Waiter child = Waiter::start([&] {
        auto locker = db.open();
        auto lock = locker.lock("cron", lock_options().wait(30s));
        return std::make_pair(now_ns(), lock.id());
    });
    child.wait_ready();
    REQUIRE(sqlock_test::eventually(
        [&] { return pg_test::last_id_drawn(db.url, db.table) > held_id; }));
    held.release();  // kept until created + 4 s
    auto [acquired_at, id] = child.result();
    CHECK(id > held_id);
    // Woken by the notification, the waiter re-reads the row and sleeps until
    // created + 4 s; without it, it would sleep until its 5 s re-check.
    const double after_creation = ms_between(created_at, acquired_at);
    INFO("acquired " << after_creation << " ms after the lock was taken");
    CHECK(after_creation > 3500.0);
    CHECK(after_creation < 4600.0);
}

TEST_CASE("releases of names that differ only in their digits do not notify", "[pg][notify]") {
    // Nobody waits, so no release may notify. Each release tries its name's
    // waiting key exclusively until it commits: were "job-1" ... "job-8" to
    // share a key, two releases overlapping in time would each find it taken
    // and notify (a tenth of them did, with 8 processes, when names were
    // folded into buckets with their digits stripped).
    auto db = fresh_database();
    constexpr int processes = 8, cycles = 300;
    std::vector<std::string> names;
    for (int p = 1; p <= processes; ++p) names.push_back("job-" + std::to_string(p));
    ChannelListener channel(db.url, db.table, names);
    const std::vector<int> codes = sqlock_test::run_children(
        processes,
        [&](int p) {
            auto locker = db.open();
            const std::string name = "job-" + std::to_string(p + 1);
            for (int i = 0; i < cycles; ++i) locker.lock(name).release();
            return 0;
        },
        120s);
    for (int code : codes) CHECK(code == 0);
    const auto heard = channel.heard();
    INFO("notified: " << heard.size() << " of " << processes * cycles << " releases");
    CHECK(heard.empty());
}

TEST_CASE("a Locker says at most max_said_keys names; waiters beyond them poll", "[pg][notify]") {
    // Each said name holds an entry in the server's shared lock table; a
    // Locker with waiters on more names than the bound says the first ones
    // and lets the others poll. All are still served.
    auto db = fresh_database();
    constexpr int names = 270;  // ReleaseHub::max_said_keys is 256
    auto holder = db.open();
    std::vector<sqlock::Lock> held;
    for (int i = 0; i < names; ++i)
        held.push_back(holder.lock("many-" + std::to_string(i), lock_options().expires(1h)));
    auto waiter = db.open();
    std::atomic<int> acquired{0};
    // Failed attempts per waiter: from its third on, it has either been
    // said (and tried again) or been turned away to poll.
    auto attempts = std::make_unique<std::atomic<int>[]>(names);
    {
        std::vector<sqlock_test::ScopedThread> threads;
        for (int i = 0; i < names; ++i)
            threads.emplace_back([&, i] {
                sqlock::LockOptions o;
                o.wait = 120s;
                o.on_waiting = [&, i](const sqlock::LockInfo*, sqlock::duration) {
                    ++attempts[i];
                    return true;
                };
                waiter.lock("many-" + std::to_string(i), o).release();
                ++acquired;
            });
        REQUIRE(sqlock_test::eventually(
            [&] {
                for (int i = 0; i < names; ++i)
                    if (attempts[i] < 3) return false;
                return true;
            },
            60s));
        const std::string said_keys =
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock'"
            " AND granted AND objsubid = 2 AND classid::bigint = (hashtext('sqlock waiting ' || '" +
            db.table + "'::regclass::oid::text)::bigint & 4294967295)";
        // Saying 256 names takes the listener a statement each, which may
        // outlast the waiters' first looks (they poll meanwhile): await the
        // bound, then see that it holds while the others poll on.
        std::string said;
        CHECK(sqlock_test::eventually(
            [&] { return (said = pg_test::query(db.url, said_keys)) == "256"; }, 60s));
        INFO("names said: " << said);
        const auto looks = [&] {
            int sum = 0;
            for (int i = 0; i < names; ++i) sum += attempts[i];
            return sum;
        };
        const int before = looks();  // the unsaid waiters poll on
        REQUIRE(sqlock_test::eventually([&] { return looks() > before + names; }, 60s));
        CHECK(pg_test::query(db.url, said_keys) == "256");
        held.clear();  // releases every name
    }
    CHECK(acquired == names);
    REQUIRE(sqlock_test::eventually(
        [&] { return pg_test::waiting_sessions(db.url, db.table).empty(); }));
}
