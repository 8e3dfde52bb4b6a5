// PgReleaseListener — release notifications via LISTEN/NOTIFY.
//
// A release calls pg_notify(name channel, lockstring) in its own transaction
// when someone waits for the name, so a notification arrives exactly when a
// lock row has been freed, from whichever host freed it, and only at the
// sessions that LISTEN on that name's channel (name_channel()): those whose
// waiter is first in line. "Someone waits" is a session-level shared advisory
// lock on the name's waiting key, which this listener's session takes for
// each name a waiter of its Locker sleeps on (waiting()), with the LISTEN:
// both live exactly as long as the session. The session also listens on its
// inbox, where a waiter leaving the line wakes the one behind it. One
// dedicated connection per Locker listens; the core's ReleaseHub fans each
// payload out to the waiters of its name.
//
// A broken listening connection throws errc::connection from await() or
// waiting(); the hub then makes a new listener, says again which names it
// waits for, and has all waiters re-check, since releases may have gone
// unheard meanwhile.
//
// Thread safety: used by one thread (the hub's); interrupt() from any.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contract/backend.hpp"
#include "postgres_link.hpp"
#include "postgres_target.hpp"

namespace sqlock::detail::postgres {

class PgReleaseListener final : public ReleaseListener {
  public:
    explicit PgReleaseListener(std::shared_ptr<const PgTarget> target);
    ~PgReleaseListener() override;

    void listen(const std::string& inbox) override;
    std::vector<std::string> await(duration timeout) override;
    void waiting(const std::string& name, bool on) override;
    void interrupt() noexcept override;

  private:
    class Receiver;

    std::shared_ptr<const PgTarget> target_;
    std::unique_ptr<Link> link_;
    /// Makes a receiver of `channel`, which LISTENs on it: bounded as every
    /// round trip.
    std::unique_ptr<Receiver> receive(const std::string& channel, const char* doing);

    std::unique_ptr<Receiver> receiver_;                      // must go before link_
    std::unique_ptr<Receiver> inbox_;                         // likewise
    std::map<std::string, std::unique_ptr<Receiver>> names_;  // likewise: by name
    std::vector<std::string> received_;
    int wake_fd_ = -1;  // an eventfd: interrupt() makes await()'s poll return
};

}  // namespace sqlock::detail::postgres
