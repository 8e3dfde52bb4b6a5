#include "contract/statement_set.hpp"

#include "base/validate.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {
namespace {

// What each key does, for messages, and which parameter (if any) names its
// subject: one wording for every backend, so that an error reads the same
// whichever database it came from, and names the job or lock it concerns.
struct About {
    const char* name;
    const char* doing;
    int subject;             // index into the parameters, or -1
    std::size_t parameters;  // how many the core passes (statement_set.hpp)
};

About about(Query key) noexcept {
    switch (key) {
        case Query::side_tables:
            return {"side_tables", "looking for the tables beside the lock table", -1, 0};
        case Query::now_millis:
            return {"now_millis", "reading the clock", -1, 0};
        case Query::start_run:
            return {"start_run", "recording the start of a run of", 0, 7};
        case Query::start_run_unless_paused:
            return {"start_run_unless_paused",
                    "reading the pause and recording the start of a run of", 0, 7};
        case Query::finish_run:
            return {"finish_run", "recording the end of run", 0, 6};
        case Query::finished_run:
            return {"finished_run", "reading the end of run", 0, 3};
        case Query::window_runs:
            return {"window_runs", "reading the runs of", 0, 2};
        case Query::history_all:
            return {"history_all", "reading the run history", -1, 2};
        case Query::history_name:
            return {"history_name", "reading the run history of", 2, 3};
        case Query::last_success:
            return {"last_success", "reading the last success of", 0, 1};
        case Query::run_counts:
            return {"run_counts", "counting the runs", -1, 0};
        case Query::lock_row:
            return {"lock_row", "reading lock", 0, 1};
        case Query::lock_rows:
            return {"lock_rows", "listing locks", 0, 2};
        case Query::lock_held:
            return {"lock_held", "checking lock id", 0, 2};
        case Query::purge_locks:
            return {"purge_locks", "purging expired locks", -1, 1};
        case Query::purge_locks_and_runs:
            return {"purge_locks_and_runs", "purging expired locks", -1, 1};
        case Query::lock_counts:
            return {"lock_counts", "counting the locks", -1, 0};
        case Query::prune_runs:
            return {"prune_runs", "pruning the run history", -1, 2};
        case Query::count_runs:
            return {"count_runs", "counting the runs to prune", -1, 1};
        case Query::pause:
            return {"pause", "pausing", 0, 4};
        case Query::resume:
            return {"resume", "resuming", 0, 1};
        case Query::paused:
            return {"paused", "reading the pause of", 0, 1};
        case Query::pauses:
            return {"pauses", "reading the pauses", -1, 0};
        case Query::purge_pauses:
            return {"purge_pauses", "deleting expired pauses", -1, 1};
        case Query::count_pauses:
            return {"count_pauses", "counting expired pauses", -1, 0};
        case Query::queue_join:
            return {"queue_join", "joining the queue of waiters for", 0, 4};
        case Query::queue_poll:
            return {"queue_poll", "keeping a place in the queue of waiters for", 3, 4};
        case Query::queue_leave:
            return {"queue_leave", "leaving the queue of waiters, ticket", 0, 2};
        case Query::queue_length:
            return {"queue_length", "counting the waiters for", 0, 1};
        case Query::proclaim:
            return {"proclaim", "proclaiming the leader's value of", 0, 4};
        case Query::leader:
            return {"leader", "reading the leader of", 0, 1};
        case Query::recent_runs:
            return {"recent_runs", "reading the recent runs of", 1, 2};
        case Query::last_skip:
            return {"last_skip", "reading the last skip of", 0, 1};
        case Query::skip_run:
            return {"skip_run", "recording a skip of", 0, 8};
        case Query::live_locks:
            return {"live_locks", "reading the held locks", -1, 0};
        case Query::queue_lengths:
            return {"queue_lengths", "counting the waiters", -1, 0};
        case Query::leader_names:
            return {"leader_names", "reading the names of the leaders", -1, 0};
        case Query::queue_joined:
            return {"queue_joined", "looking for the queue's join times", -1, 0};
        case Query::queue_waits:
            return {"queue_waits", "counting the waiters and their waits", -1, 0};
    }
    return {"unknown", "running a statement", -1, 0};
}

}  // namespace

const char* query_name(Query key) noexcept {
    return about(key).name;
}

std::size_t query_parameter_count(Query key) noexcept {
    return about(key).parameters;
}

std::string Value::to_text() const {
    switch (kind_) {
        case Kind::null:
            return {};
        case Kind::integer:
        case Kind::millis:
            return std::to_string(number_);
        case Kind::text:
            return text_;
    }
    return {};
}

StatementSet& StatementSet::add(Query key, std::string sql, QueryText::Mode mode) {
    texts_.at(static_cast<std::size_t>(key)) = QueryText{std::move(sql), mode};
    return *this;
}

const QueryText& StatementSet::operator[](Query key) const {
    const auto& text = texts_.at(static_cast<std::size_t>(key));
    if (!text)
        throw error(errc::backend,
                    "the " + dialect_ + " backend has no statement for '" + query_name(key) + "'");
    return *text;
}

std::string describe_query(Query key, const std::vector<Value>& params) {
    const About a = about(key);
    if (a.subject < 0 || static_cast<std::size_t>(a.subject) >= params.size()) return a.doing;
    const std::string subject = params[static_cast<std::size_t>(a.subject)].to_text();
    if (subject.empty()) return a.doing;
    return std::string(a.doing) + " '" + printable(subject) + "'";
}

}  // namespace sqlock::detail
