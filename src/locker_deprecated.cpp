// The Locker members kept for one release: each forwards to the type over
// the Locker's session it moved to (locker.hpp names them), so that callers
// keep compiling, and programs built against the previous release keep
// linking, while they move. Removing them is deleting this file and their
// block in locker.hpp.
#include "sqlock/locker.hpp"

namespace sqlock {

OncePerWindow Locker::once_per_window(const Lock& lock, duration length, duration offset,
                                      bool any_outcome) {
    return RunHistory(*this).once_per_window(lock, length, offset, any_outcome);
}

OncePerWindow Locker::once_per_window(const Lock& lock, const once_per_rule& rule,
                                      bool any_outcome) {
    return RunHistory(*this).once_per_window(lock, rule, any_outcome);
}

std::int64_t Locker::start_run(const Lock& lock, RunStart info) {
    return RunHistory(*this).start_run(lock, std::move(info));
}

RunStartOutcome Locker::start_run_unless_paused(const Lock& lock, RunStart info) {
    return RunHistory(*this).start_run_unless_paused(lock, std::move(info));
}

run_outcome Locker::finish_run(const Lock& lock, std::int64_t run_id, const RunEnd& end) {
    return RunHistory(*this).finish_run(lock, run_id, end);
}

std::int64_t Locker::record_skip(const Lock& lock, run_outcome outcome, RunStart info) {
    return RunHistory(*this).record_skip(lock, outcome, std::move(info));
}

Predecessors Locker::predecessors(const std::vector<std::string>& names, duration within) {
    return RunHistory(*this).predecessors(names, within);
}

Predecessors Locker::predecessors(const std::vector<std::string>& names, const since_rule& rule) {
    return RunHistory(*this).predecessors(names, rule);
}

std::vector<RunRecord> Locker::history(const HistoryQuery& query) {
    return RunHistory(*this).runs(query);
}

JobStatus Locker::job_status(const std::string& name) {
    return RunHistory(*this).job_status(name);
}

std::vector<RunCount> Locker::run_counts() {
    return RunHistory(*this).run_counts();
}

std::size_t Locker::prune_history(duration retention, std::size_t batch_size) {
    return RunHistory(*this).prune(retention, batch_size);
}

std::size_t Locker::count_prunable_history(duration retention) {
    return RunHistory(*this).count_prunable(retention);
}

PauseInfo Locker::pause(const std::string& name, std::optional<duration> for_,
                        const std::string& reason) {
    return Pauses(*this).pause(name, for_, reason);
}

bool Locker::resume(const std::string& name) {
    return Pauses(*this).resume(name);
}

std::optional<PauseInfo> Locker::paused(const std::string& name) {
    return Pauses(*this).find(name);
}

std::vector<PauseInfo> Locker::pauses() {
    return Pauses(*this).all();
}

std::size_t Locker::purge_expired_pauses(std::size_t batch_size) {
    return Pauses(*this).purge_expired(batch_size);
}

std::size_t Locker::count_expired_pauses() {
    return Pauses(*this).count_expired();
}

Leadership Locker::campaign(const std::string& name, const std::string& value,
                            const LockOptions& options) {
    return Election(*this, name).campaign(value, options);
}

std::optional<LeaderInfo> Locker::leader(const std::string& name) {
    return Election(*this, name).leader();
}

LeaderWatch Locker::observe(const std::string& name, const ObserveOptions& options) {
    return Election(*this, name).observe(options);
}

Diagnosis Locker::diagnose() {
    return sqlock::diagnose(*this);
}

std::int64_t Locker::lock_transaction(Transaction& tx, const std::string& name, duration wait) {
    return sqlock::lock_transaction(tx, *this, name, wait);
}

}  // namespace sqlock
