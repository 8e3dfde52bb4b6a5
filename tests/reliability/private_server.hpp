// PrivateServer — a server of one test program's own, made by the backend's
// testing/server.sh in a directory of its own, so that stopping it, freezing
// it or changing its defaults disturbs no other suite (they share the lane's
// server).
#pragma once

#include <string>

#include <vector>

namespace reliability {

/// A server started by `script` (the backend's testing/server.sh) in a new
/// directory, stopped and removed by the destructor. With `hostile`, made
/// with the hostile defaults server.sh knows (SQLOCK_TEST_SERVER_DEFAULTS):
/// transactions serializable, low statement, lock and idle timeouts. Fails
/// the test (REQUIRE) when it cannot be started.
class PrivateServer {
  public:
    explicit PrivateServer(const std::string& script, bool hostile = false);
    ~PrivateServer();
    PrivateServer(const PrivateServer&) = delete;
    PrivateServer& operator=(const PrivateServer&) = delete;

    const std::string& url() const { return url_; }

    /// Sends `signo` to the server and every process it started
    /// (PostgreSQL's postmaster and its backends; MariaDB is one process).
    void signal(int signo);
    /// Stops the server, keeping its data (server.sh halt): an outage.
    void halt();
    /// Starts it again after halt(), at the same URL.
    void start();
    /// A server-wide setting, as its administrator (server.sh set); `value`
    /// "DEFAULT" resets it. In force for new sessions when it returns.
    void set(const std::string& name, const std::string& value);
    /// Undoes what a test that failed half-way may have left: starts the
    /// server if it was halted, and resets every setting set().
    void recover();

  private:
    int run(const std::string& command, const std::vector<std::string>& args = {});
    void stop();

    std::string script_, dir_, url_;
    int server_pid_ = 0;
    bool halted_ = false;
    std::vector<std::string> settings_;  // the names set() changed
    bool hostile_ = false;
};

}  // namespace reliability
