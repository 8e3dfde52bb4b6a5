#include "postgres_bench_layers.hpp"

#include "postgres_statements.hpp"

namespace sqlock_bench::postgres {

std::vector<LayerStatements> layer_statements(const sqlock::detail::postgres::PgTarget& target) {
    namespace pg = sqlock::detail::postgres;
    const auto statements = pg::statements(target);
    const std::string& gated = statements.at(pg::stmt::acquire_gated).sql;
    return {
        {pg::acquire_sql(target, pg::AcquireLayer::take_over), 3, ""},
        {statements.at(pg::stmt::acquire).sql, 4, ""},
        {gated, 5, ""},
        {gated, 5, statements.at(pg::stmt::delete_exact).sql},
    };
}

std::vector<std::string> layer_names() {
    return {"raw + take-over of an expired row", "raw + take-over + the name's turn",
            "raw + take-over + turn + the queue gate",
            "raw + take-over + turn + gate + the release's wake-up"};
}

}  // namespace sqlock_bench::postgres
