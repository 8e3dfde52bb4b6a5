// Holders killed with SIGKILL at every point of their work.
//
// Four child processes loop over acquire / hold / release on a few locks and
// a semaphore, publishing what they are doing in shared memory. The parent
// picks a phase (connecting, inside lock(), just acquired, holding, inside
// release(), idle), waits until a child is in it, kills it with SIGKILL and
// starts a replacement, many times, running the reaper now and then. A killed
// process cannot clean up, so what it held must stay held until its lease
// runs out and then become available; and the reaper must leave no stale row.
// Live holders record themselves in shared memory, so two live holders of
// one row would be caught.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <thread>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using reliability::Shared;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

enum Phase : int {
    spawning = -1,  // forked, not running yet (set by the parent)
    connecting,     // opening the Locker
    acquiring,      // inside lock() / acquire_slot(), possibly waiting
    acquired,       // lock() returned, not yet recorded
    holding,
    releasing,  // inside release()
    idle,       // released, before the next round
    phase_count
};
const char* const phase_names[] = {"connecting", "acquiring", "acquired",
                                   "holding",    "releasing", "idle"};

struct KilledResource {
    const char* name;
    int capacity;  // 0: plain lock
    int first_record;
};
constexpr KilledResource killed_resources[] = {
    {"kill/a", 0, 0}, {"kill/b", 0, 1}, {"kill/c", 0, 2}, {"kill/d", 0, 3}, {"kill/sem", 3, 4},
};
constexpr int killed_resource_count = sizeof killed_resources / sizeof killed_resources[0];
constexpr int record_count = 7;  // one per row: 4 locks + 3 slots
constexpr int children = 4;
constexpr int max_incarnations = 8192;

struct KillBoard : reliability::SharedErrors {
    std::atomic<int> phase[children];
    std::atomic<int> holder[record_count];  // incarnation + 1 of the live holder, or 0
    std::atomic<bool> dead[max_incarnations];
    std::atomic<long> acquisitions{0};
    std::atomic<int> overlaps{0};
};

[[noreturn]] void child_main(const sqlock_test::Database& db, KillBoard& board, int slot, int me,
                             std::chrono::milliseconds lease) {
    std::mt19937 rng(static_cast<unsigned>(me * 7919 + getpid()));
    try {
        board.phase[slot] = connecting;
        auto locker = db.open(locker_options().pool_size(2));
        locker.list("kill/");  // first use opens the connection: part of "connecting"
        for (;;) {
            const KilledResource& res = killed_resources[rng() % killed_resource_count];
            // Some holders keep their lease alive with a heartbeat: it must
            // die with them.
            // A waiter killed in line holds its place for its queue lease:
            // the shortest, so the line is clear soon after the leases.
            sqlock::LockOptions options =
                lock_options().expires(lease).wait(30s).heartbeat(rng() % 4 == 0);
            options.queue_lease = 1s;
            board.phase[slot] = acquiring;
            sqlock::Lock lock = res.capacity ? locker.acquire_slot(res.name, res.capacity, options)
                                             : locker.lock(res.name, options);
            board.phase[slot] = acquired;
            ++board.acquisitions;
            const int record = res.first_record + (res.capacity ? lock.slot() - 1 : 0);
            const int previous = board.holder[record].exchange(me + 1);
            if (previous != 0 && !board.dead[previous - 1]) ++board.overlaps;
            board.phase[slot] = holding;
            std::this_thread::sleep_for(std::chrono::microseconds(rng() % 5000));
            board.phase[slot] = releasing;
            int mine = me + 1;
            board.holder[record].compare_exchange_strong(mine, 0);
            lock.release();
            board.phase[slot] = idle;
            // Other work between jobs, as a real worker has.
            std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
        }
    } catch (const sqlock::error& e) {
        board.record_error(std::string(sqlock::to_string(e.category())) + ": " + e.what());
    } catch (const std::exception& e) {
        board.record_error(e.what());
    }
    std::fflush(nullptr);
    _exit(1);
}

}  // namespace

TEST_CASE("holders SIGKILLed at any point: locks come back after the lease, no stale row",
          "[kill]") {
    auto db = fresh_database();
    auto locker = db.open();
    const auto lease =
        std::chrono::milliseconds(reliability::env_long("SQLOCK_KILL_LEASE_MS", 1500));
    const long target_kills = reliability::env_long("SQLOCK_KILLS", 200);
    const auto budget = std::chrono::seconds(reliability::env_long("SQLOCK_KILL_SECONDS", 20));
    Shared<KillBoard> board;

    pid_t pids[children] = {-1, -1, -1, -1};
    int incarnation[children];
    // The children loop for ever: if a REQUIRE below ends this test early,
    // they must not go on hammering the database under the next test.
    struct Reaper {
        pid_t* pids;
        ~Reaper() {
            for (int s = 0; s < children; ++s) {
                if (pids[s] <= 0) continue;
                kill(pids[s], SIGKILL);
                sqlock_test::wait_child(pids[s], 10s);
            }
        }
    } reaper{pids};
    int next_incarnation = 0;
    auto spawn = [&](int slot) {
        REQUIRE(next_incarnation < max_incarnations);
        incarnation[slot] = next_incarnation++;
        board->phase[slot] = spawning;
        pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
        if (pid == 0) child_main(db, *board, slot, incarnation[slot], lease);
        pids[slot] = pid;
    };
    // Returns the phase the child was in when it died.
    auto kill_child = [&](int slot) {
        kill(pids[slot], SIGKILL);
        const auto code = sqlock_test::wait_child(pids[slot], 10s);
        pids[slot] = -1;
        board->dead[incarnation[slot]] = true;
        if (code != 128 + SIGKILL)
            board->record_error("child exited by itself with status " +
                                std::to_string(code.value_or(-1)));
        return board->phase[slot].load();
    };

    for (int s = 0; s < children; ++s) spawn(s);
    std::mt19937 rng(std::random_device{}());
    long kills = 0, purged_while_running = 0;
    long by_phase[phase_count] = {};
    const auto start = std::chrono::steady_clock::now();
    while (kills < target_kills && std::chrono::steady_clock::now() - start < budget &&
           board->errors == 0) {
        const int target = static_cast<int>(kills % phase_count);
        // Aim at the phase: watch all children until one is in it. A phase
        // missed within the window is fine (a random child dies instead); the
        // histogram says what was hit.
        int slot = static_cast<int>(rng() % children);
        const auto aim_until = std::chrono::steady_clock::now() + 200ms;
        for (bool found = false; !found && std::chrono::steady_clock::now() < aim_until;) {
            for (int s = 0; s < children && !found; ++s)
                if (board->phase[s] == target) slot = s, found = true;
            if (!found) std::this_thread::sleep_for(20us);
        }
        const int phase = kill_child(slot);
        if (phase >= 0) ++by_phase[phase];
        ++kills;
        if (kills % 20 == 0) purged_while_running += static_cast<long>(locker.purge_expired());
        spawn(slot);
    }
    for (int s = 0; s < children; ++s) {
        const int phase = kill_child(s);
        if (phase >= 0) ++by_phase[phase];
        ++kills;
    }

    INFO("first error: " << board->first_error);
    CHECK(board->errors == 0);
    CHECK(board->overlaps == 0);
    CHECK(kills >= target_kills / 4);  // enough to prove something, even on a slow machine
    // The phases that last long enough to aim at were all hit.
    for (int p : {connecting, acquiring, holding, idle}) {
        INFO("phase " << phase_names[p]);
        CHECK(by_phase[p] > 0);
    }

    // Every holder is dead now. What they left is held for at most a lease...
    auto rows = locker.list();
    for (const auto& row : rows) {
        INFO(row.name << " left " << row.seconds_left);
        CHECK(row.seconds_left <= lease.count() / 1000.0 + 0.5);
        if (row.seconds_left > 0.5) {
            // ...and while the lease runs, nobody gets in.
            const std::string& name = row.name;
            std::size_t hash = name.rfind('#');
            if (hash == std::string::npos) CHECK_FALSE(locker.try_lock(name));
        }
    }
    // ...then expires, and the reaper removes all of it; the places of
    // waiters killed in line lapse with their queue lease.
    CHECK(eventually([&] { return locker.list_expired().size() == locker.list().size(); },
                     lease + 10s));
    for (const auto& res : killed_resources)
        CHECK(eventually([&] { return locker.queue_length(res.name) == 0; }, 10s));
    const std::size_t stale = locker.list().size();
    CHECK(locker.purge_expired() == stale);
    CHECK(locker.list().empty());
    // Every name can be taken again at once.
    for (const auto& res : killed_resources) {
        INFO(res.name);
        if (res.capacity) {
            std::vector<sqlock::Lock> all;
            for (int i = 0; i < res.capacity; ++i) {
                auto slot = locker.try_acquire_slot(res.name, res.capacity);
                REQUIRE(slot);
                all.push_back(std::move(*slot));
            }
        } else {
            CHECK(locker.try_lock(res.name));
        }
    }
    CHECK(locker.list().empty());

    std::string histogram;
    for (int p = 0; p < phase_count; ++p)
        histogram += std::string(" ") + phase_names[p] + "=" + std::to_string(by_phase[p]);
    WARN("kill (" << sqlock_test::backend() << "): " << kills << " SIGKILLs," << histogram << "; "
                  << board->acquisitions.load() << " acquisitions; " << stale
                  << " stale rows reaped at the end, " << purged_while_running << " while running");
}
