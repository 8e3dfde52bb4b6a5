// The connection pool's hand-out order: the most recently used connection
// first, and to waiting threads in their order of arrival.
#include <catch2/catch.hpp>
#include <mutex>
#include <optional>
#include <vector>

#include "loading/backend_factory.hpp"  // internal: the pool is tested directly
#include "state/connection_pool.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;

TEST_CASE("the pool hands connections to waiting threads in arrival order", "[pool]") {
    auto db = fresh_database();
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    sqlock::detail::ConnectionPool pool([&] { return backend->connect(); }, 1, 20s);

    std::mutex mutex;
    std::vector<int> served;  // thread numbers, in the order they got the connection
    {
        std::vector<sqlock_test::ScopedThread> threads;  // joined last: after `only` went back
        auto only = pool.checkout();  // the only connection: everyone else queues
        for (int i = 0; i < 5; ++i) {
            threads.emplace_back([&, i] {
                try {
                    auto c = pool.checkout();
                    c->find("probe");  // a real statement on the connection
                    std::lock_guard<std::mutex> guard(mutex);
                    served.push_back(i);
                } catch (const sqlock::error&) {
                    std::lock_guard<std::mutex> guard(mutex);
                    served.push_back(-1);
                }
            });
            // Thread i is in line before thread i+1 starts: arrival order is
            // known, not guessed.
            const auto queued = static_cast<std::size_t>(i + 1);
            REQUIRE(eventually([&] { return pool.waiting() == queued; }));
        }
    }  // `only` goes back to the pool; each ScopedThread waits for its thread
    CHECK(served == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("the pool hands out the most recently used connection first", "[pool]") {
    using Handle = sqlock::detail::ConnectionPool::Handle;
    auto db = fresh_database();
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    sqlock::detail::ConnectionPool pool([&] { return backend->connect(); }, 2, 20s);
    std::optional<Handle> x, y;
    x.emplace(pool.checkout());
    y.emplace(pool.checkout());
    const sqlock::detail::Connection* a = &**x;
    const sqlock::detail::Connection* b = &**y;
    REQUIRE(a != b);
    (*x)->find("probe");
    (*y)->find("probe");

    // Whichever came back last goes out first, in both orders.
    y.reset();
    x.reset();
    x.emplace(pool.checkout());
    CHECK(&**x == a);
    y.emplace(pool.checkout());
    CHECK(&**y == b);

    x.reset();
    y.reset();
    x.emplace(pool.checkout());
    CHECK(&**x == b);
}

TEST_CASE("after a broken connection the pool retries on a newly opened one", "[pool]") {
    using Handle = sqlock::detail::ConnectionPool::Handle;
    auto db = fresh_database();
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    int opened = 0;
    sqlock::detail::ConnectionPool pool(
        [&] {
            ++opened;
            return backend->connect();
        },
        2, 20s);
    {
        std::optional<Handle> x, y;  // two idle connections once they go back
        x.emplace(pool.checkout());
        y.emplace(pool.checkout());
    }
    REQUIRE(opened == 2);
    // The first attempt finds its connection broken (as after a server
    // restart, when the idle ones are broken too): the retry must not take
    // the other idle connection.
    int attempts = 0;
    pool.with([&](sqlock::detail::Connection& c) {
        if (++attempts == 1) throw sqlock::error(sqlock::errc::connection, "the server went away");
        return c.find("probe");
    });
    CHECK(attempts == 2);
    CHECK(opened == 3);
}
