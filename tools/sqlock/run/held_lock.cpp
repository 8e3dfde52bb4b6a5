#include "run/held_lock.hpp"

#include <nlohmann/json.hpp>

#include "common/output.hpp"
#include "run/acquisition.hpp"

namespace sqlock_cli {

std::string HeldLock::describe() const {
    if (lock_)
        return "lock " + in_quotes(lock_->lockstring()) + " (id " + std::to_string(lock_->id()) +
               ")";
    std::string text = "lock set ";
    for (std::size_t i = 0; i < set_->size(); ++i)
        text += (i ? ", " : "") + in_quotes(set_->names()[i]) + " (id " +
                std::to_string(set_->ids()[i]) + ")";
    return text;
}

std::int64_t HeldLock::id() const {
    return lock_ ? lock_->id() : set_->ids().front();
}

std::vector<std::string> HeldLock::lockstrings() const {
    if (lock_) return {lock_->lockstring()};
    return set_->names();
}

std::string HeldLock::expires() const {
    return lock_ ? lock_->expires() : set_->expires();
}

std::chrono::steady_clock::time_point HeldLock::valid_until() const {
    return lock_ ? lock_->valid_until() : set_->valid_until();
}

std::optional<sqlock::error> HeldLock::renewal_failure() const {
    return lock_ ? lock_->renewal_failure() : set_->renewal_failure();
}

void HeldLock::renew() {
    if (lock_)
        lock_->renew();
    else
        set_->renew();
}

void HeldLock::release() {
    if (lock_)
        lock_->release();
    else
        set_->release();
}

bool HeldLock::active() const noexcept {
    return lock_ ? lock_->active() : set_->active();
}

void HeldLock::detach() {
    if (lock_)
        lock_->detach();
    else
        set_->detach();
}

std::string HeldLock::guard_sql() const {
    if (lock_) return lock_->guard_statement().literal;
    // A set's: one statement per name, each as a name's alone.
    std::string sql;
    for (const sqlock::GuardStatement& g : set_->guard_statements())
        sql += (sql.empty() ? "" : "; ") + g.literal;
    return sql;
}

std::vector<std::string> HeldLock::environment() const {
    nlohmann::ordered_json locks = nlohmann::ordered_json::object();
    std::vector<std::string> env;
    if (lock_) {
        const bool shared = lock_->mode() == sqlock::lock_mode::shared;
        // A shared hold's row is its own; the job knows the name it asked for.
        locks[shared ? lock_->name() : lock_->lockstring()] = lock_->id();
        env = {"SQLOCK_NAME=" + lock_->name(), "SQLOCK_LOCKSTRING=" + lock_->lockstring(),
               "SQLOCK_SLOT=" + std::to_string(lock_->slot()),
               "SQLOCK_ID=" + std::to_string(lock_->id()),
               std::string("SQLOCK_MODE=") + (shared ? "shared" : "exclusive")};
    } else {
        for (std::size_t i = 0; i < set_->size(); ++i) locks[set_->names()[i]] = set_->ids()[i];
        // The command takes a set's names all in one mode.
        const std::string& first = set_->names().front();
        env = {"SQLOCK_NAME=" + first, "SQLOCK_LOCKSTRING=" + set_->lockstring(first),
               "SQLOCK_SLOT=0", "SQLOCK_ID=" + std::to_string(set_->ids().front()),
               std::string("SQLOCK_MODE=") + mode_name(set_->mode(first))};
    }
    env.push_back("SQLOCK_LOCKS=" + locks.dump());
    env.push_back("SQLOCK_GUARD=" + guard_sql());
    if (lead_) env.push_back("SQLOCK_LEADER_VALUE=" + lead_->value());
    return env;
}

}  // namespace sqlock_cli
