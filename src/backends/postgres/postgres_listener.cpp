#include "postgres_listener.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <pqxx/notification>

#include "postgres_error.hpp"
#include "postgres_libpq.hpp"
#include "postgres_session.hpp"
#include "postgres_statements.hpp"
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
    : target_(std::move(target)), wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (wake_fd_ < 0)
        throw error(errc::connection, "cannot make an eventfd for the release listener");
}

PgReleaseListener::~PgReleaseListener() {
    // The receiver unregisters from (and UNLISTENs on) the connection, so it
    // must go first. It never throws: libpqxx reports failures as notices.
    // Our waiting keys end with the session.
    names_.clear();
    inbox_.reset();
    receiver_.reset();
    link_.reset();
    close(wake_fd_);
}

void PgReleaseListener::interrupt() noexcept {
    const std::uint64_t one = 1;
    // Only fails when the counter is about to overflow: a wake-up is pending.
    (void)!write(wake_fd_, &one, sizeof one);
}

void PgReleaseListener::waiting(const std::string& name, bool on) {
    if (!link_ || !receiver_)
        throw error(errc::connection,
                    "PostgreSQL release listener is not listening [" + target_->redact.url() + "]");
    // Taking the key waits only for a release that holds it for its own
    // short transaction; bounded all the same, as every round trip is.
    // The key is the name's turn_name(), as the release computes it from
    // the row: "x" for the semaphore x and each of its slot rows "x#N".
    const std::string turn = turn_name(name);
    // Listening first, then saying so: a release that sees the key taken
    // notifies a channel we already listen on.
    if (on && !names_.count(name))
        names_[name] = receive(name_channel(*target_, turn), "listening for releases of");
    PqDeadline limit{std::chrono::steady_clock::now() + target_->timeout};
    guarded(*target_, on ? "saying we wait for" : "saying we no longer wait for", name, [&] {
        pq_exec_params(link_->raw(), waiting_sql(*target_, on), {turn.c_str()}, limit);
    });
    if (!on) names_.erase(name);  // UNLISTEN
}

std::unique_ptr<PgReleaseListener::Receiver> PgReleaseListener::receive(const std::string& channel,
                                                                        const char* doing) {
    PqDeadline limit{std::chrono::steady_clock::now() + target_->timeout};
    Armed armed(link_->get().sock(), limit.at);  // libpqxx's LISTEN blocks inside libpq
    std::unique_ptr<Receiver> out;
    guarded(*target_, doing, channel, [&] {
        out = std::make_unique<Receiver>(link_->get(), channel, received_);
        // libpqxx swallows a broken link during LISTEN; check for it.
        if (!link_->get().is_open() || armed.fired())
            throw pqxx::broken_connection(armed.fired() ? "no answer to LISTEN in time"
                                                        : "connection lost while sending LISTEN");
    });
    return out;
}

void PgReleaseListener::listen(const std::string& inbox) {
    names_.clear();
    inbox_.reset();
    receiver_.reset();
    link_.reset();
    link_ = std::make_unique<Link>(*target_);
    // LISTEN is a round trip like any other: bounded, so a server that does
    // not answer cannot hold the release hub's thread (and a Locker's
    // destructor, which joins it).
    PqDeadline limit{std::chrono::steady_clock::now() + target_->timeout};
    Armed armed(link_->get().sock(), limit.at);  // libpqxx's LISTEN blocks inside libpq
    guarded(*target_, "listening for releases", {}, [&] {
        // Sends LISTEN and waits for the server's answer: once this returns,
        // every later release reaches us.
        receiver_ = std::make_unique<Receiver>(link_->get(), target_->channel, received_);
        // The settings of a session of sqlock's own (postgres_session.hpp):
        // saying we wait for a name may wait for a release's commit, which a
        // low lock_timeout or statement_timeout set for the role would end
        // with an error, and with it this session; and the session idles
        // while waiters sleep, which a low idle_session_timeout would end.
        // The watchdog bounds every round trip instead.
        pq_exec_simple(link_->raw(), session_setup_sql(*target_, PQserverVersion(link_->raw())),
                       limit);
        // libpqxx swallows a broken link during LISTEN; check for it.
        if (!link_->get().is_open() || armed.fired())
            throw pqxx::broken_connection(armed.fired() ? "no answer to LISTEN in time"
                                                        : "connection lost while sending LISTEN");
    });
    inbox_ = receive(inbox, "listening on its inbox");
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
        // libpqxx's await_notification() cannot be interrupted: poll the
        // socket and our eventfd, then let libpqxx read what came.
        guarded(*target_, "waiting for releases", {}, [&] {
            auto& conn = link_->get();
            if (conn.get_notifs() > 0) return;
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
            pollfd fds[2] = {{conn.sock(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
            if (poll(fds, 2, static_cast<int>(std::max<std::int64_t>(ms, 0))) < 0 && errno != EINTR)
                throw pqxx::broken_connection("poll failed while waiting for releases");
            if (fds[1].revents & POLLIN) {
                std::uint64_t count;
                (void)!read(wake_fd_, &count, sizeof count);
            }
            conn.get_notifs();
            // get_notifs() reads nothing from a connection it considers
            // closed: a server gone away must still be reported.
            if (!conn.is_open()) throw pqxx::broken_connection("listening connection closed");
        });
    }
    std::vector<std::string> out;
    out.swap(received_);
    return out;
}

}  // namespace sqlock::detail::postgres
