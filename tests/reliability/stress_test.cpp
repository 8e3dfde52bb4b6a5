// Stress: 8 processes x 4 threads hammering three locks and two semaphores.
//
// The database is not trusted to judge itself. Every holder proves its
// exclusivity outside it: a lock holder creates a witness file with
// O_CREAT|O_EXCL (it fails if another holder's file is still there), and a
// semaphore holder does the same for its slot and bumps a holder count in
// memory shared by all processes, which must never exceed the capacity.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using reliability::Shared;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

struct Resource {
    const char* name;
    int capacity;  // 0: a plain lock
};
constexpr Resource resources[] = {
    {"stress/a", 0}, {"stress/b", 0}, {"stress/c", 0}, {"stress/pool", 3}, {"stress/pair", 2},
};
constexpr int resource_count = sizeof resources / sizeof resources[0];

// Its errors: sqlock errors the callers did not cause.
struct Board : reliability::SharedErrors {
    std::atomic<long> attempts{0};
    std::atomic<long> acquisitions{0};
    std::atomic<long> try_misses{0};  // try_* that found everything held: expected, not an error
    std::atomic<long> renewals{0};
    std::atomic<int> holders[resource_count]{};      // current holders, across processes
    std::atomic<int> max_holders[resource_count]{};  // the most ever seen at once
    std::atomic<int> overlaps{0};                    // witness files found already there
};

std::string witness_path(const std::string& dir, const sqlock::Lock& lock) {
    std::string file = lock.lockstring();
    for (char& c : file)
        if (c == '/') c = '_';
    return dir + "/" + file;
}

// The file of the thread whose release said it released lock `id`
// ("released-<seed>", see worker()), or "" when none did.
std::string releaser_of(const std::string& dir, std::int64_t id) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string file = entry.path().filename().string();
        if (file.rfind("released-", 0) != 0) continue;
        std::ifstream in(entry.path());
        std::int64_t released = 0;
        std::string name;
        while (in >> released >> name)
            if (released == id) return file;
    }
    return "";
}

// One thread's share of the load: mixed waiting and non-waiting acquisitions,
// an occasional renew and held() check while holding, explicit release. It
// stops after `rounds` or at `stop`, whichever comes first: a slow machine
// makes the trial shorter, not late.
void worker(const sqlock_test::Database& db, sqlock::Locker& locker, Board& board,
            const std::string& witness_dir, int rounds, std::chrono::steady_clock::time_point stop,
            unsigned seed) {
    std::mt19937 rng(seed);
    // The ids this thread released, so that a row left at the end can be
    // told apart: released by a release that said so (a library bug), or
    // never handed out (a statement applied after its caller gave up).
    std::ofstream released(witness_dir + "/released-" + std::to_string(seed));
    for (int round = 0; round < rounds && std::chrono::steady_clock::now() < stop; ++round) {
        ++board.attempts;
        const int which = static_cast<int>(rng() % resource_count);
        const Resource& res = resources[which];
        const bool waiting = rng() % 4 != 0;
        try {
            std::optional<sqlock::Lock> lock;
            const sqlock::LockOptions options = lock_options().expires(60s).wait(60s);
            if (res.capacity == 0)
                lock =
                    waiting ? locker.lock(res.name, options) : locker.try_lock(res.name, options);
            else
                lock = waiting ? locker.acquire_slot(res.name, res.capacity, options)
                               : locker.try_acquire_slot(res.name, res.capacity, options);
            if (!lock) {
                ++board.try_misses;
                continue;
            }
            ++board.acquisitions;
            if (res.capacity && (lock->slot() < 1 || lock->slot() > res.capacity))
                board.record_error("slot " + std::to_string(lock->slot()) + " out of range");
            int now = ++board.holders[which];
            int seen = board.max_holders[which].load();
            while (now > seen && !board.max_holders[which].compare_exchange_weak(seen, now)) {
            }
            const std::string witness = witness_path(witness_dir, *lock);
            const bool entered = sqlock_test::enter_witness(witness);
            if (!entered) ++board.overlaps;
            // Hold for a moment, as real work would: a zero-length hold would
            // leave an overlap almost no window to show in.
            std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
            switch (rng() % 8) {
                case 0:
                    lock->renew();
                    ++board.renewals;
                    break;
                case 1:
                    if (!lock->held()) board.record_error("held() false while holding");
                    break;
                default:
                    break;
            }
            // Remove the witness before the row: the next holder may come in
            // the moment the row is gone.
            if (entered) sqlock_test::leave_witness(witness);
            --board.holders[which];
            const std::int64_t id = lock->id();
            lock->release();
            released << id << ' ' << res.name << '\n';
        } catch (const sqlock::error& e) {
            board.record_error(std::string(sqlock::to_string(e.category())) + ": " + e.what());
        }
    }
    (void)db;
}

}  // namespace

TEST_CASE("8 processes x 4 threads: no overlap, no over-allocation, no stray error",
          "[stress][threads]") {
    auto db = fresh_database();
    const int procs = 8, threads = 4;
    // Up to 200 rounds per thread (6400 attempts, about 4800 of them waiting
    // ones) within 60 s; the sanitizer runs scale this down through the
    // environment.
    const int rounds = static_cast<int>(reliability::env_long("SQLOCK_STRESS_ROUNDS", 200));
    const auto budget = std::chrono::seconds(reliability::env_long("SQLOCK_STRESS_SECONDS", 60));
    const std::string witness_dir =
        sqlock_test::scratch_dir() + "/stress-witness-" + std::to_string(getpid());
    REQUIRE(mkdir(witness_dir.c_str(), 0700) == 0);
    Shared<Board> board;

    const auto start = std::chrono::steady_clock::now();
    const auto stop = start + budget;
    auto codes = sqlock_test::run_children(
        procs,
        [&](int p) {
            // One Locker per process, shared by its threads (the documented use):
            // the pool is smaller than the thread count on purpose.
            auto locker = db.open(locker_options().pool_size(3));
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; ++t)
                pool.emplace_back(worker, std::cref(db), std::ref(locker), std::ref(*board),
                                  std::cref(witness_dir), rounds, stop,
                                  static_cast<unsigned>(p * 100 + t + getpid()));
            for (auto& t : pool) t.join();
            return 0;
            // A round begun just before the stop may wait out its 60 s.
        },
        budget + 120s);
    const auto elapsed = std::chrono::steady_clock::now() - start;

    INFO("first error: " << board->first_error);
    CHECK(codes == std::vector<int>(procs, 0));
    CHECK(board->overlaps == 0);
    CHECK(board->errors == 0);
    for (int r = 0; r < resource_count; ++r) {
        INFO(resources[r].name);
        CHECK(board->max_holders[r] <= std::max(1, resources[r].capacity));
        CHECK(board->holders[r] == 0);
    }
    // Waiting acquisitions always succeed; only try_* may come back empty.
    CHECK(board->acquisitions + board->try_misses == board->attempts);
    CHECK(board->acquisitions >= board->attempts / 2);
    // Enough of a crowd to prove something, even on a slow machine: a tenth
    // of the rounds asked for.
    CHECK(board->attempts >= long{procs} * threads * (rounds / 10));
    auto locker = db.open();
    const auto left = locker.list();
    for (const auto& row : left) {
        const std::string released_by = releaser_of(witness_dir, row.id);
        WARN("row left: " << row.name << " id " << row.id << " created " << row.created
                          << " expires " << row.expires << " holder "
                          << sqlock::describe_holder(row)
                          << (released_by.empty() ? "; its id was never released"
                                                  : "; released by " + released_by));
    }
    CHECK(left.empty());
    CHECK(reliability::query(db, "SELECT count(*) FROM " + db.table)[0][0] == "0");
    WARN("stress (" << sqlock_test::backend() << "): " << board->acquisitions.load()
                    << " acquisitions of " << board->attempts.load() << " attempts ("
                    << board->try_misses.load() << " try misses, " << board->renewals.load()
                    << " renewals) by " << procs << "x" << threads << " threads in "
                    << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
                    << " ms");
}
