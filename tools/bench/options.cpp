#include "options.hpp"

#include <algorithm>
#include <cstdlib>
#include <cxxopts.hpp>
#include <iostream>
#include <stdexcept>

namespace sqlock_bench {
namespace {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        if (comma > start) out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

void check_names(const std::vector<std::string>& given, const std::vector<std::string>& known,
                 const char* what) {
    for (const auto& g : given)
        if (std::find(known.begin(), known.end(), g) == known.end()) {
            std::string list;
            for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
            throw std::invalid_argument(std::string("unknown ") + what + " '" + g +
                                        "' (known: " + list + ")");
        }
}

}  // namespace

const std::vector<std::string>& section_names() {
    static const std::vector<std::string> names{"uncontended", "parallel", "contention", "growth",
                                                "semaphore",   "reaper",   "command",    "memory",
                                                "queue",       "sets",     "leader",     "guard"};
    return names;
}

Options parse_options(int argc, char** argv) {
    cxxopts::Options spec("sqlock-bench",
                          "Measures sqlock against raw SQL baselines in the same run, on SQLite "
                          "PostgreSQL and MariaDB/MySQL, and prints the ratios.");
    const char* env_url = std::getenv("SQLOCK_TEST_PG_URL");
    const char* env_pooled = std::getenv("SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL");
    const char* env_mariadb = std::getenv("SQLOCK_TEST_MARIADB_URL");
    // clang-format off
    spec.add_options()
        ("quick", "scaled-down run (under a minute): 10^5 instead of 10^6 rows, shorter rounds")
        ("json", "print the results as JSON on stdout (the table goes to stderr)")
        ("pg-url", "PostgreSQL URL (default: $SQLOCK_TEST_PG_URL); without one the "
                   "PostgreSQL rows are skipped", cxxopts::value<std::string>())
        ("pg-pooled-url", "the same server through PgBouncer in transaction mode, with "
                          "pooler=transaction (default: $SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL); "
                          "adds a pooled row beside the direct one", cxxopts::value<std::string>())
        ("mariadb-url", "MariaDB/MySQL URL, mariadb://... (default: $SQLOCK_TEST_MARIADB_URL); "
                        "without one the MariaDB rows are skipped", cxxopts::value<std::string>())
        ("sqlock", "the sqlock command for the command rows",
         cxxopts::value<std::string>()->default_value(SQLOCK_BENCH_DEFAULT_CLI))
        ("only", "comma-separated sections to run: uncontended, parallel, contention, growth, "
                 "semaphore, sets, reaper, command, memory, queue, leader, guard", cxxopts::value<std::string>())
        ("backend", "comma-separated backends: sqlite, postgresql, mariadb",
         cxxopts::value<std::string>())
        ("h,help", "this help");
    // clang-format on
    auto parsed = spec.parse(argc, argv);
    if (parsed.count("help")) {
        std::cout << spec.help()
                  << "\nExit status: 0, or 1 if a measurement failed with an "
                     "error (never because of a timing).\n";
        std::exit(0);
    }
    if (!parsed.unmatched().empty())
        throw std::invalid_argument("unexpected argument '" + parsed.unmatched().front() + "'");
    Options o;
    o.quick = parsed.count("quick") > 0;
    o.json = parsed.count("json") > 0;
    if (parsed.count("pg-url"))
        o.pg_url = parsed["pg-url"].as<std::string>();
    else if (env_url)
        o.pg_url = env_url;
    if (parsed.count("pg-pooled-url"))
        o.pg_pooled_url = parsed["pg-pooled-url"].as<std::string>();
    else if (env_pooled)
        o.pg_pooled_url = env_pooled;
    if (parsed.count("mariadb-url"))
        o.mariadb_url = parsed["mariadb-url"].as<std::string>();
    else if (env_mariadb)
        o.mariadb_url = env_mariadb;
    o.sqlock_cli = parsed["sqlock"].as<std::string>();
    if (parsed.count("only")) o.sections = split_list(parsed["only"].as<std::string>());
    if (parsed.count("backend")) o.backends = split_list(parsed["backend"].as<std::string>());
    check_names(o.sections, section_names(), "section");
    check_names(o.backends, {"sqlite", "postgresql", "mariadb"}, "backend");
    return o;
}

Scale scale_for(const Options& options) {
    Scale s;
    if (!options.quick) return s;
    s.rounds = 3;
    s.round_seconds = 0.1;
    s.parallel_rounds = 2;
    s.parallel_seconds = 0.3;
    s.contention_seconds = 1.5;
    s.big_rows = 100'000;
    s.growth_seconds = 0.2;
    s.growth_rounds = 3;
    s.reaper_rows = 100'000;
    s.probe_idle_seconds = 1;
    s.command_runs = 6;
    s.rss_runs = 3;
    s.held_locks = 10'000;
    return s;
}

std::string count_text(std::int64_t n) {
    int exponent = 0;
    std::int64_t m = n;
    while (m >= 10 && m % 10 == 0) {
        m /= 10;
        ++exponent;
    }
    if (m == 1 && exponent >= 2) return "10^" + std::to_string(exponent);
    return std::to_string(n);
}

}  // namespace sqlock_bench
