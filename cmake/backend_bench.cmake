# Each backend's part of the benchmark, from its own folder: sqlock-bench
# (tools/bench) names no backend. A backend <name> of SQLOCK_BACKENDS has,
# beside its test context, src/backends/<name>/testing/bench.cmake, which
# calls
#
#   sqlock_backend_bench(<name> RESULT_NAME name
#                        [DEFAULT_DATABASE]
#                        [OPTIONS "option|VARIABLE|help" ...]
#                        SOURCES file... [BACKEND_SOURCES file...]
#                        [PKG_CONFIG PREFIX:module...])
#
#   RESULT_NAME      its name in the results and in --backend ("postgresql")
#   DEFAULT_DATABASE the command's default database is this backend's: the
#                    command rows run on it
#   OPTIONS          its command-line options, each with the environment
#                    variable that is its default; a server backend's first
#                    is its server's URL
#   SOURCES          files of the testing folder that define
#                    sqlock_bench::BenchHooks <name>_bench_hooks()
#                    (tools/bench/bench_backend.hpp): the raw baseline client
#                    and what the backend's rows need
#   BACKEND_SOURCES  files of the backend's own folder compiled in beside
#                    them (the statement builders its layered rows take their
#                    SQL from), with the backend's schema
#   PKG_CONFIG       the client libraries the baseline uses, as in
#                    sqlock_backend_build()
#
# A backend switched off is still declared (its options are accepted, its
# rows reported as skipped, saying why); only a built one's sources are
# compiled, into a library of its own, sqlock_bench_<name>.

# Called by bench.cmake; `sqlock_backend_benches()` sets the bench target in
# SQLOCK_BENCH_TARGET before including it.
function(sqlock_backend_bench name)
  # PARSE_ARGV: a help text may hold a ';' (kept escaped in the list).
  cmake_parse_arguments(PARSE_ARGV 1 arg "DEFAULT_DATABASE" "RESULT_NAME"
                        "OPTIONS;SOURCES;BACKEND_SOURCES;PKG_CONFIG")
  if(NOT arg_RESULT_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "sqlock_backend_bench(${name}): RESULT_NAME and SOURCES are required")
  endif()
  set(dir ${PROJECT_SOURCE_DIR}/src/backends/${name}/testing)
  set_property(GLOBAL PROPERTY SQLOCK_BENCH_${name}_RESULT_NAME ${arg_RESULT_NAME})
  set_property(GLOBAL PROPERTY SQLOCK_BENCH_${name}_DEFAULT_DATABASE ${arg_DEFAULT_DATABASE})
  set_property(GLOBAL PROPERTY SQLOCK_BENCH_${name}_OPTIONS "${arg_OPTIONS}")
  get_property(built GLOBAL PROPERTY SQLOCK_BUILT_BACKENDS)
  if(NOT name IN_LIST built)
    return()
  endif()

  set(library sqlock_bench_${name})
  set(sources "")
  foreach(source ${arg_SOURCES})
    list(APPEND sources ${dir}/${source})
  endforeach()
  foreach(source ${arg_BACKEND_SOURCES})
    list(APPEND sources ${PROJECT_SOURCE_DIR}/src/backends/${name}/${source})
  endforeach()
  if(arg_BACKEND_SOURCES)
    # The backend's schema, compiled in as its own build does.
    sqlock_embed_schema(${name} ${CMAKE_CURRENT_BINARY_DIR} schema_cpp)
    list(APPEND sources ${schema_cpp})
  endif()
  add_library(${library} STATIC ${sources})
  # One file each: the backends' files share helper names.
  set_target_properties(${library} PROPERTIES UNITY_BUILD OFF)
  target_include_directories(${library} PRIVATE ${PROJECT_SOURCE_DIR}/tools/bench
    ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/src/text ${PROJECT_SOURCE_DIR}/src/backends/${name}
    ${dir})
  target_link_libraries(${library} PUBLIC sqlock::sqlock)
  target_compile_options(${library} PRIVATE -Wall -Wextra -Wpedantic)
  foreach(dependency ${arg_PKG_CONFIG})
    sqlock_find_pkg_config("sqlock_backend_bench(${name})" ${dependency} prefix)
    target_link_libraries(${library} PUBLIC PkgConfig::${prefix})
  endforeach()
  target_link_libraries(${SQLOCK_BENCH_TARGET} PRIVATE ${library})
  set_property(GLOBAL APPEND PROPERTY SQLOCK_BENCHED_BACKENDS ${name})
endfunction()

# A C++ string literal of `text` (which holds no newline).
function(sqlock_cxx_literal text out)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# Includes every declared backend's testing/bench.cmake for the benchmark
# `target` and writes `output`, the table of bench_backends().
function(sqlock_backend_benches target output)
  set(SQLOCK_BENCH_TARGET ${target})
  get_property(declared GLOBAL PROPERTY SQLOCK_DECLARED_BACKENDS)
  get_property(built GLOBAL PROPERTY SQLOCK_BUILT_BACKENDS)
  set(declarations "")
  set(entries "")
  foreach(name ${declared})
    set(dir ${PROJECT_SOURCE_DIR}/src/backends/${name}/testing)
    if(NOT EXISTS ${dir}/bench.cmake)
      message(FATAL_ERROR "backend ${name}: no ${dir}/bench.cmake (see cmake/backend_bench.cmake)")
    endif()
    include(${dir}/bench.cmake)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/bench.cmake)
    get_property(result_name GLOBAL PROPERTY SQLOCK_BENCH_${name}_RESULT_NAME)
    if(NOT result_name)
      message(FATAL_ERROR "${dir}/bench.cmake does not call sqlock_backend_bench(${name} ...)")
    endif()
    get_property(default_database GLOBAL PROPERTY SQLOCK_BENCH_${name}_DEFAULT_DATABASE)
    get_property(options GLOBAL PROPERTY SQLOCK_BENCH_${name}_OPTIONS)
    get_property(title GLOBAL PROPERTY SQLOCK_BACKEND_${name}_TITLE)
    string(TOUPPER ${name} upper)
    set(option_list "")
    foreach(option IN LISTS options)
      string(REPLACE "\\;" ";" option "${option}")
      # "option|VARIABLE|help", the help possibly with '|' of its own.
      string(FIND "${option}" "|" first)
      string(SUBSTRING "${option}" 0 ${first} option_name)
      math(EXPR first "${first} + 1")
      string(SUBSTRING "${option}" ${first} -1 rest)
      string(FIND "${rest}" "|" second)
      if(first EQUAL 0 OR second LESS 1)
        message(FATAL_ERROR "sqlock_backend_bench(${name}): OPTIONS wants \"option|VARIABLE|help\", not ${option}")
      endif()
      string(SUBSTRING "${rest}" 0 ${second} variable)
      math(EXPR second "${second} + 1")
      string(SUBSTRING "${rest}" ${second} -1 help)
      sqlock_cxx_literal("${help}" help)
      string(APPEND option_list "{\"${option_name}\", \"${variable}\", ${help}}, ")
    endforeach()
    # A server backend: one whose tests start a server (testing/server.sh).
    set(server false)
    if(EXISTS ${dir}/server.sh)
      set(server true)
    endif()
    if(default_database)
      set(default_database true)
    else()
      set(default_database false)
    endif()
    set(hooks "std::nullopt")
    if(name IN_LIST built)
      string(APPEND declarations "BenchHooks ${name}_bench_hooks();\n")
      set(hooks "${name}_bench_hooks()")
    endif()
    string(APPEND entries
           "        {\"${result_name}\", \"${title}\", \"SQLOCK_WITH_${upper}\", {${option_list}}, ${server}, ${default_database}, ${hooks}},\n")
  endforeach()
  file(WRITE ${output}.tmp
"// Generated from SQLOCK_BACKENDS by cmake/backend_bench.cmake. Do not edit.
#include \"bench_backend.hpp\"

namespace sqlock_bench {

${declarations}
const std::vector<BenchBackend>& bench_backends() {
    static const std::vector<BenchBackend> backends{
${entries}    };
    return backends;
}

}  // namespace sqlock_bench
")
  file(COPY_FILE ${output}.tmp ${output} ONLY_IF_DIFFERENT)
  target_sources(${target} PRIVATE ${output})
endfunction()
