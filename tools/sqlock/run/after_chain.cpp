#include "run/after_chain.hpp"

#include <algorithm>

#include "common/command_line.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "run/run_settings.hpp"
#include "text.hpp"

namespace sqlock_cli {
namespace {

// What the library would refuse as a lock name, said before anything runs:
// a usage error must write nothing.
void check_after_name(const std::string& name) {
    if (name.empty())
        throw usage_error(
            "--after needs job names, NAME[,NAME...]: an empty name was given (--after '')");
    if (name.size() > 128)
        throw usage_error("--after: " + in_quotes(name) + " is " + std::to_string(name.size()) +
                          " bytes long; a lock name is at most 128 bytes");
    for (std::size_t i = 0; i < name.size();) {
        const std::size_t n = sqlock::text::utf8_sequence_length(name, i);
        if (n == 0 || name[i] == '\0')
            throw usage_error("--after: " + in_quotes(name) +
                              " is not a lock name (not valid UTF-8)");
        i += n;
    }
}

std::string quoted(const std::string& name) {
    return in_quotes(name);
}

}  // namespace

void parse_after_settings(const cxxopts::ParseResult& o, RunSettings& s) {
    if (!o.count("after")) {
        if (o.count("after-within")) throw usage_error("--after-within needs --after NAME");
        return;
    }
    // cxxopts splits each value at commas; "--after ''" gives no name at all.
    const auto given = o["after"].as<std::vector<std::string>>();
    if (given.empty()) check_after_name("");
    for (const std::string& name : given) {
        check_after_name(name);
        if (name == s.request.name)
            throw usage_error("--after " + in_quotes(name) +
                              " names the job itself: a job cannot run after itself");
        if (std::find(s.after.begin(), s.after.end(), name) != s.after.end())
            throw usage_error("--after: " + in_quotes(name) + " is given twice");
        s.after.push_back(name);
    }
    if (!s.request.set.empty())
        throw usage_error("--after takes one lock name, got " +
                          std::to_string(s.request.set.size()) + " names");
    if (!s.history)
        throw usage_error("--after reads and records the run history; drop --no-history");
    if (o.count("after-within"))
        s.after_within = duration_option(o, "after-within", duration_kind::positive);
    else if (!s.once_per)
        throw usage_error(
            "--after needs --after-within DUR (how recent a success counts) or "
            "--once-per DUR (a success in this window)");
}

std::string after_list(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
        out += quoted(names[i]);
    }
    return out;
}

std::string describe_predecessors(const sqlock::Predecessors& p, bool running_only) {
    std::string out;
    for (const sqlock::Predecessor& j : p.jobs) {
        std::string text;
        const std::string name = quoted(j.name);
        switch (j.state) {
            case sqlock::predecessor_state::succeeded:
                continue;
            case sqlock::predecessor_state::running:
                text = running_only ? name + " (run " + std::to_string(j.run->id) + " on " +
                                          sqlock::text::printable(j.run->host) + ")"
                                    : name + " is still running (run " + std::to_string(j.run->id) +
                                          " on " + sqlock::text::printable(j.run->host) +
                                          " since " + j.run->started + " UTC)";
                break;
            case sqlock::predecessor_state::failed:
                if (running_only) continue;
                text = name + " did not succeed last: run " + std::to_string(j.run->id) + " " +
                       sqlock::to_string(j.run->outcome) +
                       (j.run->outcome == sqlock::run_outcome::lost
                            ? std::string()
                            : " (" + status_text(*j.run) + ")") +
                       " on " + sqlock::text::printable(j.run->host) + ", started " +
                       j.run->started + " UTC";
                break;
            case sqlock::predecessor_state::missing:
                if (running_only) continue;
                text = j.run
                           ? name + " last succeeded at " + j.run->ended.value_or(j.run->started) +
                                 " UTC, before " + p.since + " UTC"
                           : name + " has no recorded run";
                break;
        }
        out += (out.empty() ? "" : running_only ? " and " : "; ") + text;
    }
    return out;
}

nlohmann::ordered_json predecessors_json(const sqlock::Predecessors& p) {
    nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
    for (const sqlock::Predecessor& j : p.jobs) {
        nlohmann::ordered_json job = {{"name", sqlock::text::printable(j.name)},
                                      {"state", sqlock::to_string(j.state)}};
        job["run"] = j.run ? run_json(*j.run) : nlohmann::ordered_json(nullptr);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

}  // namespace sqlock_cli
