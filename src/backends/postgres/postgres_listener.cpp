#include "postgres_listener.hpp"

#include <pqxx/notification>

#include "postgres_error.hpp"
#include "postgres_watchdog.hpp"

namespace sqlock::detail::postgres {

// Collects payloads (lockstrings) as libpqxx delivers them.
class PgReleaseListener::Receiver final : public pqxx::notification_receiver {
  public:
    Receiver(pqxx::connection_base& conn, const std::string& channel, std::vector<std::string>& out)
        : pqxx::notification_receiver(conn, channel), out_(out) {}
    void operator()(const std::string& payload, int) override { out_.push_back(payload); }

  private:
    std::vector<std::string>& out_;
};

PgReleaseListener::PgReleaseListener(std::shared_ptr<const PgTarget> target)
    : target_(std::move(target)) {}

PgReleaseListener::~PgReleaseListener() {
    // The receiver unregisters from (and UNLISTENs on) the connection, so it
    // must go first. It never throws: libpqxx reports failures as notices.
    receiver_.reset();
    link_.reset();
}

void PgReleaseListener::listen() {
    receiver_.reset();
    link_.reset();
    link_ = std::make_unique<Link>(*target_);
    // LISTEN is a round trip like any other: bounded, so a server that does
    // not answer cannot hold the release hub's thread (and a Locker's
    // destructor, which joins it).
    Armed armed(link_->get().sock(), std::chrono::steady_clock::now() + target_->timeout);
    guarded(*target_, "listening for releases", {}, [&] {
        // Sends LISTEN and waits for the server's answer: once this returns,
        // every later release reaches us.
        receiver_ = std::make_unique<Receiver>(link_->get(), target_->channel, received_);
        // libpqxx swallows a broken link during LISTEN; check for it.
        if (!link_->get().is_open() || armed.fired())
            throw pqxx::broken_connection(armed.fired() ? "no answer to LISTEN in time"
                                                        : "connection lost while sending LISTEN");
    });
}

std::vector<std::string> PgReleaseListener::await(duration timeout) {
    if (!link_ || !receiver_)
        throw error(errc::connection,
                    "PostgreSQL release listener is not listening [" + target_->redact.url() + "]");
    // A symptom of transaction pooling seen since we started listening: what
    // we hear is not to be trusted. The hub asks the backend for a new
    // listener, gets none, and waiters poll from then on.
    if (!target_->session_bound())
        throw error(errc::configuration,
                    "PostgreSQL is reached through a transaction pooler: "
                    "release notifications cannot arrive [" +
                        target_->redact.url() + "]");
    if (received_.empty()) {
        const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
        guarded(*target_, "waiting for releases", {}, [&] {
            link_->get().await_notification(static_cast<long>(micros / 1000000),
                                            static_cast<long>(micros % 1000000));
        });
    }
    std::vector<std::string> out;
    out.swap(received_);
    return out;
}

}  // namespace sqlock::detail::postgres
