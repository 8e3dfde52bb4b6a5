// fault_relay — a TCP relay the fencing tests control, to cut a client off
// from its database the ways networks do.
//
//   fault_relay TARGET_PORT      relays 127.0.0.1:PORT (printed on stdout)
//                                to 127.0.0.1:TARGET_PORT
//
// Commands, one a line on stdin:
//   pass      relay everything (the start state)
//   freeze    relay nothing and read nothing: connections stay open and
//             packets go nowhere, as in a network partition (the kernel
//             still accepts new connections into the backlog; they hang too)
//   refuse    reset every connection and stop listening: connects are refused
//   slow MS   relay each chunk MS milliseconds after it arrived
//   hold-reply
//             relay everything, but the next chunk a server sends after a
//             client's chunk is kept back, and that connection frozen for
//             good (its client times out and opens another, which passes):
//             a statement that ran and whose answer never came
//   held      answers "held TEXT", the printable bytes of the client chunk
//             whose answer was kept back ('.' for the others), or "held"
//             while none has been
// A side that closes its end (end of file) has it closed on the other side
// too, after what it sent before (a FIN follows the data, as over a
// network): a server gets the last statement of a client that gave up and
// then closed. A reset or a failed write resets both sides.
// Each command is answered with "ok" once in effect. End of stdin ends the
// relay, as does the death of its parent (PR_SET_PDEATHSIG).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct Chunk {
    clock_type::time_point due;
    std::string data;
};

// One direction of a relayed connection.
struct Flow {
    int from = -1, to = -1;
    std::deque<Chunk> queue;
    bool ended = false;   // `from` reached end of file: nothing more to read
    bool closed = false;  // ... and `to` was shut for writing after the queue
};

struct Pair {
    Flow up, down;  // client -> server, server -> client
    bool dead = false;
    bool frozen = false;  // its answer held back (hold-reply): nothing moves
    std::string asked;    // the last chunk the client sent while hold-reply was armed
};

// The printable bytes of `data`, '.' for the others.
std::string printable(const std::string& data) {
    std::string out;
    for (char c : data) out += c >= 32 && c < 127 ? c : '.';
    return out;
}

enum class mode { pass, freeze, refuse, slow };

int listen_on(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0) {
        std::perror("fault_relay: bind/listen");
        std::exit(1);
    }
    return fd;
}

int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void reset(int fd) {
    if (fd < 0) return;
    linger l{1, 0};  // close with RST, as a dropped route or a reboot would
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fault_relay TARGET_PORT\n");
        return 2;
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::signal(SIGPIPE, SIG_IGN);
    const int target = std::atoi(argv[1]);
    int listener = listen_on(0);
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    const int port = ntohs(a.sin_port);
    std::printf("%d\n", port);
    std::fflush(stdout);

    mode current = mode::pass;
    std::chrono::milliseconds delay{0};
    bool hold_reply = false;  // armed by "hold-reply"
    std::string held;         // what the client asked whose answer was held
    bool answer_held = false;
    std::list<Pair> pairs;
    std::string input;
    for (;;) {
        const auto now = clock_type::now();
        std::vector<pollfd> fds;
        fds.push_back({0, POLLIN, 0});
        const bool moving = current == mode::pass || current == mode::slow;
        if (listener >= 0 && moving) fds.push_back({listener, POLLIN, 0});
        int timeout = 100;
        if (moving) {
            for (auto& p : pairs) {
                if (p.frozen) continue;
                for (Flow* f : {&p.up, &p.down}) {
                    if (!f->ended) fds.push_back({f->from, POLLIN, 0});
                    if (!f->queue.empty()) {
                        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                        f->queue.front().due - now)
                                        .count();
                        timeout = std::max(0, std::min<int>(timeout, static_cast<int>(left)));
                    }
                }
            }
        }
        ::poll(fds.data(), fds.size(), timeout);
        for (const auto& p : fds) {
            if (!p.revents) continue;
            if (p.fd == 0) {
                char buf[256];
                ssize_t n = ::read(0, buf, sizeof buf);
                if (n <= 0) return 0;
                input.append(buf, static_cast<std::size_t>(n));
            } else if (p.fd == listener) {
                int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
                if (client < 0) continue;
                int server = connect_to(target);
                if (server < 0) {
                    reset(client);
                    continue;
                }
                Pair pair;
                pair.up = {client, server, {}};
                pair.down = {server, client, {}};
                pairs.push_back(std::move(pair));
            } else {
                for (auto& pr : pairs) {
                    for (Flow* f : {&pr.up, &pr.down}) {
                        if (f->from != p.fd || pr.dead || f->ended) continue;
                        char buf[65536];
                        ssize_t n = ::read(f->from, buf, sizeof buf);
                        if (n == 0) {
                            f->ended = true;
                            continue;
                        }
                        if (n < 0) {
                            pr.dead = true;
                            continue;
                        }
                        if (f == &pr.up && hold_reply)
                            pr.asked.assign(buf, static_cast<std::size_t>(n));
                        if (f == &pr.down && hold_reply && !pr.asked.empty()) {
                            hold_reply = false;
                            pr.frozen = true;
                            held = printable(pr.asked);
                            answer_held = true;
                            continue;
                        }
                        f->queue.push_back({clock_type::now() + delay,
                                            std::string(buf, static_cast<std::size_t>(n))});
                    }
                }
            }
        }
        // Deliver what is due (never while frozen: packets go nowhere).
        if (current == mode::pass || current == mode::slow) {
            const auto t = clock_type::now();
            for (auto& pr : pairs) {
                if (pr.frozen) continue;
                for (Flow* f : {&pr.up, &pr.down}) {
                    while (!pr.dead && !f->queue.empty() && f->queue.front().due <= t) {
                        const std::string& d = f->queue.front().data;
                        if (::write(f->to, d.data(), d.size()) != static_cast<ssize_t>(d.size()))
                            pr.dead = true;
                        f->queue.pop_front();
                    }
                    if (!pr.dead && f->ended && !f->closed && f->queue.empty()) {
                        ::shutdown(f->to, SHUT_WR);
                        f->closed = true;
                    }
                }
            }
        }
        for (auto it = pairs.begin(); it != pairs.end();) {
            if (it->up.closed && it->down.closed) {
                ::close(it->up.from);
                ::close(it->down.from);
                it = pairs.erase(it);
            } else if (it->dead) {
                reset(it->up.from);
                reset(it->down.from);
                it = pairs.erase(it);
            } else {
                ++it;
            }
        }
        // Commands.
        std::size_t nl;
        while ((nl = input.find('\n')) != std::string::npos) {
            std::string line = input.substr(0, nl);
            input.erase(0, nl + 1);
            if (line == "pass" || line.rfind("slow ", 0) == 0) {
                current = line == "pass" ? mode::pass : mode::slow;
                delay = std::chrono::milliseconds(line == "pass" ? 0 : std::atoi(line.c_str() + 5));
                if (listener < 0) listener = listen_on(port);
            } else if (line == "hold-reply") {
                hold_reply = true;
                for (auto& pr : pairs) pr.asked.clear();  // only what is asked from now on
            } else if (line == "held") {
                std::printf("held%s%s\n", answer_held ? " " : "", held.c_str());
                std::fflush(stdout);
                continue;
            } else if (line == "freeze") {
                current = mode::freeze;
            } else if (line == "refuse") {
                current = mode::refuse;
                for (auto& pr : pairs) {
                    reset(pr.up.from);
                    reset(pr.down.from);
                }
                pairs.clear();
                ::close(listener);
                listener = -1;
            } else {
                std::printf("unknown command\n");
                std::fflush(stdout);
                continue;
            }
            std::printf("ok\n");
            std::fflush(stdout);
        }
    }
}
