// Every built backend's statement set against the contract of
// src/contract/statement_set.hpp: a statement for every key, referring to no
// parameter beyond those the core passes. And the benchmark's layered rows
// (src/backends/<name>/testing/<name>_bench_layers.*): they send the
// backend's own statements, so that what they price is what sqlock sends.
// Built from each backend's own code, without a server.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "built_targets.hpp"
#include "contract/statement_set.hpp"
#include "sqlock/error.hpp"
#if SQLOCK_WITH_POSTGRES
#include "postgres_bench_layers.hpp"
#endif
#if SQLOCK_WITH_MARIADB
#include "contract/tuned_claims.hpp"
#include "mariadb_bench_layers.hpp"
#endif

using sqlock::detail::Query;
using sqlock::detail::StatementSet;
using sqlock::detail::Value;

namespace {

// The highest N of the placeholders `sigil`N in `sql` outside quotes
// ('...', "..." and `...`), 0 for none.
std::size_t highest_placeholder(const std::string& sql, char sigil) {
    std::size_t highest = 0;
    char quote = 0;
    for (std::size_t i = 0; i < sql.size(); ++i) {
        const char c = sql[i];
        if (quote) {
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"' || c == '`') {
            quote = c;
            continue;
        }
        if (c != sigil) continue;
        std::size_t n = 0, j = i + 1;
        while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9')
            n = n * 10 + static_cast<std::size_t>(sql[j++] - '0');
        if (n > highest) highest = n;
    }
    return highest;
}

std::vector<Query> every_query() {
    std::vector<Query> all;
    for (std::size_t i = 0; i < sqlock::detail::query_count; ++i)
        all.push_back(static_cast<Query>(i));
    return all;
}

}  // namespace

TEST_CASE("every statement refers only to the parameters the core passes", "[statements]") {
    const auto backends = unit_test::built_backends();
    REQUIRE_FALSE(backends.empty());
    for (const unit_test::BuiltBackend& b : backends) {
        const StatementSet set = b.statement_set();
        for (Query key : every_query()) {
            INFO(b.dialect << " " << sqlock::detail::query_name(key) << ": " << set[key].sql);
            CHECK(highest_placeholder(set[key].sql, b.sigil) <=
                  sqlock::detail::query_parameter_count(key));
        }
    }
}

TEST_CASE("the scan finds the highest placeholder outside quotes", "[statements]") {
    CHECK(highest_placeholder("SELECT ?1, ?12, '?99', \"?98\", `?97`", '?') == 12);
    CHECK(highest_placeholder("SELECT $2::text || '$7'", '$') == 2);
    CHECK(highest_placeholder("SELECT 1", '?') == 0);
}

#if SQLOCK_WITH_MARIADB
TEST_CASE("MariaDB binds every statement of its set, and refuses SQL it cannot scan",
          "[statements][mariadb]") {
    namespace sql = sqlock::detail::mariadb::sql;
    const sqlock::detail::mariadb::MariaTarget target = unit_test::mariadb_target("locks");
    const StatementSet set = sql::statement_set(target);
    for (Query key : every_query()) {
        INFO(sqlock::detail::query_name(key));
        const std::vector<Value> params(sqlock::detail::query_parameter_count(key),
                                        Value::integer(1));
        CHECK_NOTHROW(sql::bind(set[key].sql, params));
    }

    CHECK(sql::bind("SELECT ?2, '?1'", {Value::null(), Value::integer(5)}) == "SELECT 5, '?1'");
    auto refused = [](const std::string& text) {
        try {
            sql::bind(text, {Value::integer(1)});
        } catch (const sqlock::error& e) {
            return e.category() == sqlock::errc::backend;
        }
        return false;
    };
    CHECK(refused("SELECT 1 -- ?1"));
    CHECK(refused("SELECT 1 # ?1"));
    CHECK(refused("SELECT 1 /* ?1 */"));
    CHECK(refused("SELECT 'it\\'s ?1'"));
    CHECK(refused("SELECT ?2"));
}
#endif

#if SQLOCK_WITH_POSTGRES
TEST_CASE("the PostgreSQL bench's layered rows send the backend's own statements",
          "[statements][bench][postgres]") {
    namespace pg = sqlock::detail::postgres;
    const pg::PgTarget target = unit_test::postgres_target();
    const auto statements = pg::statements(target);
    const auto layers = sqlock_bench::postgres::layer_statements(target);
    REQUIRE(layers.size() == sqlock_bench::postgres::layer_names().size());
    REQUIRE(layers.size() == 4);
    // The turn, then the queue gate, are sqlock's own acquisitions; the
    // wake-up is its release by id and owner.
    CHECK(layers[1].acquire == statements.at(pg::stmt::acquire).sql);
    CHECK(layers[2].acquire == statements.at(pg::stmt::acquire_gated).sql);
    CHECK(layers[3].acquire == statements.at(pg::stmt::acquire_gated).sql);
    CHECK(layers[3].release == statements.at(pg::stmt::delete_exact).sql);
    // The take-over alone is the same insert without the turn, and the
    // others add to it: it ends every acquisition.
    const std::string& take_over = layers[0].acquire;
    const std::string upsert = take_over.substr(take_over.find(" ON CONFLICT "));
    for (const auto& layer : layers) {
        INFO(layer.acquire);
        CHECK(layer.acquire.compare(layer.acquire.size() - upsert.size(), upsert.size(), upsert) ==
              0);
        CHECK(highest_placeholder(layer.acquire, '$') ==
              static_cast<std::size_t>(layer.acquire_params));
        CHECK(layer.release.empty() == (&layer != &layers.back()));
    }
}
#endif

#if SQLOCK_WITH_MARIADB
TEST_CASE("the MariaDB bench's layered rows send the backend's own batches",
          "[statements][bench][mariadb]") {
    using namespace std::chrono_literals;
    namespace sql = sqlock::detail::mariadb::sql;
    using sqlock::detail::QueueGate;
    const sqlock::detail::mariadb::MariaTarget target = unit_test::mariadb_target("locks");
    const std::string name = "bench-layers", owner = "{\"by\":\"raw-baseline\"}";
    REQUIRE(sqlock_bench::mariadb::layer_names().size() == 4);
    auto layer = [&](std::size_t up_to) {
        return sqlock_bench::mariadb::layer_batch(target, up_to, name, owner);
    };
    // The turn, then the queue gate of a caller without a place in line,
    // are sqlock's own acquire batch.
    const std::string turn =
        sql::acquire(target, sql::Protocol{}, name, 1h, owner, 0ms, QueueGate::none(), false);
    const std::string gated = sql::acquire(target, sql::Protocol{}, name, 1h, owner, 0ms,
                                           QueueGate{name, INT64_MAX}, false);
    CHECK(layer(2) == turn);
    CHECK(layer(3) == gated);
    // The batch alone is the same insert and read, the name not waiting on
    // a turn.
    std::string turnless = turn;
    const std::string guarded_name = "IF(@sqlock_turn = 1, " + sql::literal(name) + ", NULL)";
    REQUIRE(turnless.find(guarded_name) != std::string::npos);
    turnless.replace(turnless.find(guarded_name), guarded_name.size(), sql::literal(name));
    CHECK(turnless.find(layer(1)) != std::string::npos);
    CHECK_THROWS(layer(4));
    // The guarded slot: the raw statement under the gated turn of the
    // semaphore, as sqlock takes a slot, with the read of the row.
    const std::string slot = sqlock_bench::mariadb::guarded_slot_batch(target, name, "INSERT 1");
    CHECK(slot.substr(0, slot.find('\n')) == gated.substr(0, gated.find('\n')));
    CHECK(slot.substr(slot.rfind('\n')) == gated.substr(gated.rfind('\n')));
    CHECK(slot.find("START TRANSACTION;\nINSERT 1;\n" + sql::read_met_row(target) +
                    ";\nCOMMIT;\n") != std::string::npos);
}
#endif
