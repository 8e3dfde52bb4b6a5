#include "postgres_target.hpp"

#include <cstdint>

#include "base/validate.hpp"
#include "contract/table_family.hpp"
#include "postgres_conninfo.hpp"

namespace sqlock::detail::postgres {
namespace {

// `url` with sqlock's `pooler` parameter taken out (libpq rejects unknown
// parameters), its mode in `mode`.
DatabaseUrl without_pooler(DatabaseUrl url, PoolMode* mode) {
    PoolerSetting pooler = split_pooler(url.original, url.redacted);
    *mode = pooler.mode;
    url.original = std::move(pooler.libpq_url);
    return url;
}

}  // namespace

std::string channel_name(const std::string& table) {
    std::string name = "sqlock_" + table;
    for (char& c : name)
        if (c == '.') c = '_';
    return fit_identifier(name, "");
}

PgTarget::PgTarget(DatabaseUrl u, std::string t, duration bound)
    : pool_mode(PoolMode::none),
      url(without_pooler(std::move(u), &pool_mode)),
      table(std::move(t)),
      family(table, quote_table_name),
      channel(channel_name(table)),
      redact(url, {parse_conninfo(url).password}),
      timeout(bound),
      conninfo(bounded_conninfo(url, bound)) {}

void PgTarget::note_served_by(ServedHost entry) const {
    const std::lock_guard<std::mutex> guard(served_by_mutex_);
    served_by_ = std::move(entry);
}

std::string PgTarget::served_first(const std::string& conninfo) const {
    std::optional<ServedHost> first;
    {
        const std::lock_guard<std::mutex> guard(served_by_mutex_);
        first = served_by_;
    }
    return first ? with_host_first(conninfo, *first) : conninfo;
}

}  // namespace sqlock::detail::postgres
