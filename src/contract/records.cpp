#include "contract/records.hpp"

#include <charconv>

#include "contract/backend.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

// std::from_chars: the database's digits as they are, whatever locale the
// program set (strtod would read "12.345" as 12 under a comma locale).

std::int64_t as_int64(const Field& f) {
    std::int64_t n = 0;
    if (f) std::from_chars(f->data(), f->data() + f->size(), n);
    return n;
}

double as_double(const Field& f) {
    double d = 0.0;
    if (f) std::from_chars(f->data(), f->data() + f->size(), d);
    return d;
}

bool as_bool(const Field& f) {
    if (!f) return false;
    const std::string& v = *f;
    if (v == "t" || v == "true") return true;
    // Any integer but 0: a count is as good as a flag.
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    return ec == std::errc() && end == v.data() + v.size() && n != 0;
}

const std::string& as_text(const Field& f) {
    static const std::string empty;
    return f ? *f : empty;
}

const std::vector<Field>& first_row(const Rows& rows, Query key, const std::vector<Value>& params) {
    if (rows.rows.empty())
        throw error(errc::backend, "the database sent no row while " + describe_query(key, params));
    return rows.rows.front();
}

std::int64_t query_int64(Connection& c, Query key, const std::vector<Value>& params) {
    return as_int64(first_row(c.query(key, params), key, params).at(0));
}

Row read_lock_row(const std::vector<Field>& r, std::size_t first) {
    Row row;
    row.id = as_int64(r.at(first));
    row.lockstring = as_text(r.at(first + 1));
    row.created = as_text(r.at(first + 2));
    row.expires = as_text(r.at(first + 3));
    row.locked_by = as_text(r.at(first + 4));
    row.seconds_left = as_double(r.at(first + 5));
    return row;
}

RunRecord read_run(const std::vector<Field>& r) {
    RunRecord run;
    run.id = as_int64(r.at(0));
    run.name = as_text(r.at(1));
    if (r.at(2)) run.window_start = *r.at(2);
    run.host = as_text(r.at(3));
    run.pid = as_int64(r.at(4));
    run.user = as_text(r.at(5));
    run.program = as_text(r.at(6));
    run.fencing_id = as_int64(r.at(7));
    run.started = as_text(r.at(8));
    if (r.at(9)) run.ended = *r.at(9);
    run.outcome = parse_run_outcome(as_text(r.at(10))).value_or(run_outcome::lost);
    if (r.at(11)) run.exit_status = static_cast<int>(as_int64(r.at(11)));
    if (r.at(12)) run.signal = static_cast<int>(as_int64(r.at(12)));
    if (r.at(13)) run.duration_seconds = as_double(r.at(13));
    run.attempt = static_cast<int>(as_int64(r.at(14)));
    return run;
}

std::vector<RunRecord> read_runs(const Rows& rows) {
    std::vector<RunRecord> runs;
    runs.reserve(rows.rows.size());
    for (const auto& row : rows.rows) runs.push_back(read_run(row));
    return runs;
}

PauseInfo read_pause(const std::vector<Field>& r, std::size_t first) {
    PauseInfo p;
    p.name = as_text(r.at(first));
    p.paused_by = as_text(r.at(first + 1));
    p.reason = as_text(r.at(first + 2));
    p.created = as_text(r.at(first + 3));
    if (r.at(first + 4)) p.until = *r.at(first + 4);
    return p;
}

RunStartOutcome read_run_start(const std::vector<Field>& row, const std::vector<Value>& params) {
    RunStartOutcome out;
    if (row.at(0)) {
        out.run_id = as_int64(row[0]);
    } else if (row.at(1)) {
        out.pause = read_pause(row, 1);
    } else {
        throw error(errc::backend, "the database sent neither a run nor a pause while " +
                                       describe_query(Query::start_run_unless_paused, params));
    }
    return out;
}

}  // namespace sqlock::detail
