// `sqlock run --after`: the jobs a job runs after, as options (checked
// before anything is asked of the database) and as the words and JSON that
// say how they stand (run_session.cpp decides, the library reads).
#pragma once

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sqlock/run_history.hpp"

namespace sqlock_cli {

struct RunSettings;

/// --after NAME[,NAME...] (repeatable) and --after-within DUR into `s`,
/// whose own name and --once-per are parsed already. Throws usage_error
/// (64) for an empty list or name, a name that is not a lock name, one
/// given twice or naming the job itself, a set, --no-history, and for
/// --after with neither --after-within nor --once-per (no window to judge
/// a success by), or --after-within without --after.
void parse_after_settings(const cxxopts::ParseResult& o, RunSettings& s);

/// "'import'", "'import' and 'fetch'", "'a', 'b' and 'c'".
std::string after_list(const std::vector<std::string>& names);

/// How the jobs that are not satisfied stand, for people: "'import' failed
/// last (exit 3) on host-a at ... UTC; 'fetch' is still running (run 41 on
/// host-b since ... UTC)". With `running_only`, only the running ones,
/// named ("'fetch' (run 41 on host-b)").
std::string describe_predecessors(const sqlock::Predecessors& p, bool running_only);

/// Every job as JSON: [{"name", "state", "run": the deciding run or null}].
nlohmann::ordered_json predecessors_json(const sqlock::Predecessors& p);

}  // namespace sqlock_cli
