#include "waiting/obstacle.hpp"

#include <algorithm>

#include "waiting/contention_text.hpp"

namespace sqlock::detail {

Obstacles::Obstacles(duration first, duration cap) : first_(first), cap_(cap), backoff_(first) {}

void Obstacles::met(const error& e, clock::time_point now) {
    if (!last_) {
        spell_since_ = now;
        backoff_ = first_;
    }
    last_ = e;
    (e.read_only() ? read_only_seen_ : unreachable_seen_) = true;
    if (!jitter_) jitter_.emplace(std::random_device{}());
    std::uniform_int_distribution<std::int64_t> spread(backoff_.count() / 2, backoff_.count());
    retry_at_ = now + duration(spread(*jitter_));
    backoff_ = std::min(backoff_ * 2, cap_);
}

void Obstacles::cleared(clock::time_point now) {
    if (!last_) return;
    before_spell_ += std::chrono::duration_cast<duration>(now - spell_since_);
    last_.reset();
    retry_at_ = clock::time_point::min();
}

duration Obstacles::unavailable_for(clock::time_point now) const {
    if (!last_) return before_spell_;
    return before_spell_ + std::chrono::duration_cast<duration>(now - spell_since_);
}

error Obstacles::give_up(const std::string& subject, duration waited, const std::string& why,
                         clock::time_point now) const {
    const error& e = *last_;
    const auto spell = std::chrono::duration_cast<duration>(now - spell_since_);
    std::string text = why + " waiting for " + subject + " after " + waited_text(waited) +
                       ": the database has been " + (e.read_only() ? "read-only" : "unavailable") +
                       " for the last " + waited_text(spell);
    if (before_spell_ > duration::zero() || (read_only_seen_ && unreachable_seen_))
        text += " (unavailable for " + waited_text(unavailable_for(now)) + " of the wait in all" +
                (read_only_seen_ && unreachable_seen_ ? ", unreachable and read-only" : "") + ")";
    text += "; the last attempt: " + std::string(e.what());
    if (e.read_only()) return error::read_only_database(text, e.backend_code());
    return error(e.category(), text, e.backend_code());
}

}  // namespace sqlock::detail
