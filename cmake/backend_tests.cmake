# Each backend's test context, from its own folder: the tests know no
# backend by name. A backend <name> of SQLOCK_BACKENDS has, beside its code,
# src/backends/<name>/testing/ with
#
#   CMakeLists.txt   sqlock_backend_test(<name> SOURCES file... PKG_CONFIG PREFIX:module...)
#   <name>_testing.cpp
#                    defines sqlock_test::BackendHooks <name>_test_hooks()
#                    (tests/support/backend_context.hpp): the raw client the
#                    tests inspect rows with, the codes they expect, what the
#                    shared suites expect of its dialect
#   test.conf        NAME=value lines, read here and by the shell scripts
#                    (tools/backends.sh): env, packages, sanitizer_lanes,
#                    companions
#   server.sh        for a server backend only: `server.sh start DIR` starts a
#                    throwaway server and prints its URL; also stop, restart,
#                    url and pid
#
# sqlock_backend_tests() (tests/CMakeLists.txt) adds each built backend's
# testing folder and writes the table the test support reads
# (generated/backend_test_table.cpp).

# The value of KEY in a test.conf, or `default` when it has none.
function(sqlock_backend_test_conf conf key default out)
  file(STRINGS ${conf} lines REGEX "^${key}=")
  if(lines)
    list(GET lines 0 line)
    string(REGEX REPLACE "^${key}=" "" value "${line}")
    string(STRIP "${value}" value)
  else()
    set(value "${default}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# sqlock_backend_test(NAME SOURCES file... PKG_CONFIG PREFIX:module-spec...):
# compiles the backend's test context into sqlock_test_support and links the
# client libraries it uses (PUBLIC: suites of that backend, in tests/<name>/,
# may use the same client). PREFIX names the imported target, as in
# sqlock_backend_build(); use one of the tests' own (SQLOCK_TEST_...), since
# the backend's targets may be named the same way.
function(sqlock_backend_test name)
  cmake_parse_arguments(arg "" "" "SOURCES;PKG_CONFIG" ${ARGN})
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "sqlock_backend_test(${name}): SOURCES is required")
  endif()
  foreach(source ${arg_SOURCES})
    get_filename_component(source ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    target_sources(sqlock_test_support PRIVATE ${source})
  endforeach()
  foreach(dependency ${arg_PKG_CONFIG})
    sqlock_find_pkg_config("sqlock_backend_test(${name})" ${dependency} prefix)
    target_link_libraries(sqlock_test_support PUBLIC PkgConfig::${prefix})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY SQLOCK_TESTED_BACKENDS ${name})
endfunction()

# Adds the testing folder of every backend built and writes `output`, the
# table of their contexts: the environment variables of a server backend's
# test server (from test.conf's `env`, by default the name in capitals:
# SQLOCK_TEST_<ENV>_URL, SQLOCK_TEST_REQUIRE_<ENV>, SQLOCK_TEST_<ENV>_SCRIPT,
# SQLOCK_TEST_<ENV>_DIR), its title and its hooks.
function(sqlock_backend_tests output)
  get_property(built GLOBAL PROPERTY SQLOCK_BUILT_BACKENDS)
  set(declarations "")
  set(entries "")
  foreach(name ${built})
    set(dir ${PROJECT_SOURCE_DIR}/src/backends/${name}/testing)
    if(NOT EXISTS ${dir}/CMakeLists.txt OR NOT EXISTS ${dir}/test.conf)
      message(FATAL_ERROR "backend ${name}: no test context (${dir}/CMakeLists.txt and test.conf, see cmake/backend_tests.cmake)")
    endif()
    add_subdirectory(${dir} ${PROJECT_BINARY_DIR}/backend_testing/${name})
    get_property(tested GLOBAL PROPERTY SQLOCK_TESTED_BACKENDS)
    if(NOT name IN_LIST tested)
      message(FATAL_ERROR "${dir}/CMakeLists.txt does not call sqlock_backend_test(${name} ...)")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/test.conf)

    get_property(title GLOBAL PROPERTY SQLOCK_BACKEND_${name}_TITLE)
    if(NOT title)
      set(title ${name})
    endif()
    set(url "")
    set(require "")
    set(script "")
    set(server_dir "")
    if(EXISTS ${dir}/server.sh)
      string(TOUPPER ${name} upper)
      sqlock_backend_test_conf(${dir}/test.conf env ${upper} env)
      set(url SQLOCK_TEST_${env}_URL)
      set(require SQLOCK_TEST_REQUIRE_${env})
      set(script SQLOCK_TEST_${env}_SCRIPT)
      set(server_dir SQLOCK_TEST_${env}_DIR)
    endif()
    string(APPEND declarations "BackendHooks ${name}_test_hooks();\n")
    string(APPEND entries
           "        {\"${name}\", \"${title}\", \"${url}\", \"${require}\", \"${script}\", \"${server_dir}\", ${name}_test_hooks()},\n")
  endforeach()
  file(WRITE ${output}.tmp
"// Generated from SQLOCK_BACKENDS by cmake/backend_tests.cmake. Do not edit.
#include \"backend_context.hpp\"

namespace sqlock_test {

${declarations}
const std::vector<BackendContext>& backend_contexts() {
    static const std::vector<BackendContext> contexts{
${entries}    };
    return contexts;
}

}  // namespace sqlock_test
")
  file(COPY_FILE ${output}.tmp ${output} ONLY_IF_DIFFERENT)
  target_sources(sqlock_test_support PRIVATE ${output})
endfunction()
