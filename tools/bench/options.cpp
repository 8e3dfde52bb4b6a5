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

// "a, b and c".
std::string enumeration(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    return out;
}

std::vector<std::string> backend_names() {
    std::vector<std::string> names;
    for (const BenchBackend& b : bench_backends()) names.push_back(b.name);
    return names;
}

}  // namespace

const std::string& OptionValues::operator[](const std::string& name) const {
    static const std::string none;
    for (const auto& [key, value] : values)
        if (key == name) return value;
    return none;
}

const std::vector<std::string>& section_names() {
    static const std::vector<std::string> names{"uncontended", "parallel", "contention", "growth",
                                                "semaphore",   "reaper",   "command",    "memory",
                                                "queue",       "sets",     "leader",     "guard"};
    return names;
}

Options parse_options(int argc, char** argv) {
    std::vector<std::string> titles;
    for (const BenchBackend& b : bench_backends()) titles.push_back(b.title);
    cxxopts::Options spec("sqlock-bench",
                          "Measures sqlock against raw SQL baselines in the same "
                          "run, on " +
                              enumeration(titles) + ", and prints the ratios.");
    std::string names;
    for (const std::string& n : backend_names()) names += (names.empty() ? "" : ", ") + n;
    // clang-format off
    spec.add_options()
        ("quick", "scaled-down run (under a minute): 10^5 instead of 10^6 rows, shorter rounds")
        ("json", "print the results as JSON on stdout (the table goes to stderr)");
    for (const BenchBackend& b : bench_backends())
        for (const BenchOption& option : b.options)
            spec.add_options()(option.name, option.help, cxxopts::value<std::string>());
    spec.add_options()
        ("sqlock", "the sqlock command for the command rows",
         cxxopts::value<std::string>()->default_value(SQLOCK_BENCH_DEFAULT_CLI))
        ("only", "comma-separated sections to run: uncontended, parallel, contention, growth, "
                 "semaphore, sets, reaper, command, memory, queue, leader, guard", cxxopts::value<std::string>())
        ("backend", "comma-separated backends: " + names, cxxopts::value<std::string>())
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
    for (const BenchBackend& b : bench_backends())
        for (const BenchOption& option : b.options) {
            const char* from_env = std::getenv(option.variable.c_str());
            std::string value = parsed.count(option.name) ? parsed[option.name].as<std::string>()
                                : from_env                ? from_env
                                                          : "";
            o.backend_options.values.emplace_back(option.name, std::move(value));
        }
    o.sqlock_cli = parsed["sqlock"].as<std::string>();
    if (parsed.count("only")) o.sections = split_list(parsed["only"].as<std::string>());
    if (parsed.count("backend")) o.backends = split_list(parsed["backend"].as<std::string>());
    check_names(o.sections, section_names(), "section");
    check_names(o.backends, backend_names(), "backend");
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
