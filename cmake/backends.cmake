# Backends as plug-ins. A backend is its folder src/backends/<name>/, its
# schema sql/<name>/schema.sql, and its name in SQLOCK_BACKENDS (the top-level
# CMakeLists.txt). Its folder's CMakeLists.txt calls sqlock_backend() once.
#
# In a shared build (BUILD_SHARED_LIBS=ON) each backend is a module,
# sqlock-<name>.so, in the directory `sqlock/` beside libsqlock (installed in
# ${CMAKE_INSTALL_LIBDIR}/sqlock), which the core loads when a URL first names
# one of its schemes (src/loading/backend_loader.cpp): a program that only uses SQLite
# never loads libpq. In a static build the backends are compiled into
# libsqlock itself.

# A backend's folder has a CMakeLists.txt of three parts:
#
#   sqlock_backend_declare(NAME TITLE text SCHEMES scheme... BUILD_DEPENDS package...
#                          PACKAGE package)
#   if(NOT SQLOCK_WITH_<NAME>) return() endif()
#   sqlock_backend_build(NAME SOURCES file... PKG_CONFIG PREFIX:module-spec...)
#
# TITLE names the backend in messages ("PostgreSQL"); SCHEMES are the URL
# schemes it serves, the first the canonical one; BUILD_DEPENDS the Debian
# packages it builds with, named when the backend is missing. A backend that
# is switched off is still declared: its URLs then get an error naming what
# provides it, not "unknown scheme". PACKAGE is the binary package of
# debian/control that ships the backend's module: with
# SQLOCK_DISTRO_PACKAGES=ON (the packages' build) a missing module's error
# names it. PKG_CONFIG lists the client libraries,
# each as the prefix of its imported target and a pkg-config module spec
# ("PQXX:libpqxx>=6.4" makes PkgConfig::PQXX): a static libsqlock's package
# files (sqlockConfig.cmake, sqlock.pc) find them again for consumers.
function(sqlock_backend_declare name)
  cmake_parse_arguments(arg "" "TITLE;PACKAGE" "SCHEMES;BUILD_DEPENDS" ${ARGN})
  if(NOT arg_TITLE OR NOT arg_SCHEMES OR NOT arg_BUILD_DEPENDS OR NOT arg_PACKAGE)
    message(FATAL_ERROR
            "sqlock_backend_declare(${name}): TITLE, SCHEMES, BUILD_DEPENDS and PACKAGE are required")
  endif()
  string(TOUPPER ${name} upper)
  string(REPLACE ";" " and " packages "${arg_BUILD_DEPENDS}")
  if(SQLOCK_DISTRO_PACKAGES)
    set(arg_PROVIDED_BY "the package ${arg_PACKAGE}")
  else()
    set(arg_PROVIDED_BY "a sqlock built with SQLOCK_WITH_${upper}=ON, which needs ${packages}")
  endif()
  set_property(GLOBAL APPEND PROPERTY SQLOCK_DECLARED_BACKENDS ${name})
  set_property(GLOBAL PROPERTY SQLOCK_BACKEND_${name}_TITLE "${arg_TITLE}")
  set_property(GLOBAL PROPERTY SQLOCK_BACKEND_${name}_SCHEMES "${arg_SCHEMES}")
  set_property(GLOBAL PROPERTY SQLOCK_BACKEND_${name}_PROVIDED_BY "${arg_PROVIDED_BY}")
endfunction()

# Finds one PKG_CONFIG entry, "PREFIX:module-spec", as the imported target
# PkgConfig::PREFIX; sets `prefix_out` to PREFIX. `caller` names the
# function in the error for a malformed entry.
function(sqlock_find_pkg_config caller dependency prefix_out)
  string(REGEX MATCH "^([A-Za-z0-9_]+):(.+)$" matched "${dependency}")
  if(NOT matched)
    message(FATAL_ERROR "${caller}: PKG_CONFIG wants PREFIX:module, not ${dependency}")
  endif()
  set(prefix ${CMAKE_MATCH_1})
  pkg_check_modules(${prefix} REQUIRED IMPORTED_TARGET GLOBAL ${CMAKE_MATCH_2})
  set(${prefix}_LDFLAGS "${${prefix}_LDFLAGS}" PARENT_SCOPE)
  set(${prefix_out} ${prefix} PARENT_SCOPE)
endfunction()

# sqlock_embed_schema(NAME DIR OUT): a rule that compiles sql/NAME/schema.sql
# into DIR/NAME_schema_sql.cpp, as sqlock::detail::NAME_schema_sql; its path
# in OUT. (A rule's output is built only for targets of the directory that
# makes it: the backend's build, its unit tests and the benchmark each make
# their own.)
function(sqlock_embed_schema name dir out)
  set(schema_sql ${PROJECT_SOURCE_DIR}/sql/${name}/schema.sql)
  set(schema_cpp ${dir}/${name}_schema_sql.cpp)
  add_custom_command(
    OUTPUT ${schema_cpp}
    COMMAND ${CMAKE_COMMAND} -DNAME=${name} -DSQL=${schema_sql} -DOUTPUT=${schema_cpp}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_sql.cmake
    DEPENDS ${schema_sql} ${PROJECT_SOURCE_DIR}/cmake/embed_sql.cmake
    COMMENT "Embedding sql/${name}/schema.sql")
  set(${out} ${schema_cpp} PARENT_SCOPE)
endfunction()

function(sqlock_backend_build name)
  cmake_parse_arguments(arg "" "" "SOURCES;PKG_CONFIG" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY SQLOCK_BUILT_BACKENDS ${name})
  set(libraries "")
  foreach(dependency ${arg_PKG_CONFIG})
    sqlock_find_pkg_config("sqlock_backend_build(${name})" ${dependency} prefix)
    list(APPEND libraries PkgConfig::${prefix})
    set_property(GLOBAL APPEND PROPERTY SQLOCK_BACKEND_PKG_CONFIG "${dependency}")
    set_property(GLOBAL APPEND PROPERTY SQLOCK_BACKEND_LDFLAGS ${${prefix}_LDFLAGS})
  endforeach()

  # The schema, compiled in as sqlock::detail::<name>_schema_sql.
  sqlock_embed_schema(${name} ${PROJECT_BINARY_DIR}/generated schema_cpp)

  set(target sqlock_backend_${name})
  if(BUILD_SHARED_LIBS)
    add_library(${target} MODULE ${arg_SOURCES} ${schema_cpp})
    set_target_properties(${target} PROPERTIES
      PREFIX "" OUTPUT_NAME sqlock-${name}
      LIBRARY_OUTPUT_DIRECTORY $<TARGET_FILE_DIR:sqlock>/sqlock)
    target_link_libraries(${target} PRIVATE sqlock ${libraries})
    # Every program that uses libsqlock from the build tree (the command,
    # the tests) needs the modules built: sqlock_backends depends on them.
    add_dependencies(sqlock_backends ${target})
    if(SQLOCK_INSTALL)
      install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/sqlock)
    endif()
  else()
    # Compiled here (the schema is generated in this directory), linked into
    # libsqlock.
    add_library(${target} OBJECT ${arg_SOURCES} ${schema_cpp})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include
                                                 ${PROJECT_BINARY_DIR}/include)
    target_link_libraries(${target} PRIVATE ${libraries})
    target_sources(sqlock PRIVATE $<TARGET_OBJECTS:${target}>)
    target_link_libraries(sqlock PRIVATE ${libraries})
  endif()
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src
                                               ${PROJECT_SOURCE_DIR}/src/text)
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
endfunction()

# Writes the core's catalog of backends (names, schemes, what provides them)
# and, in a static build, the table of the compiled-in entry points.
function(sqlock_backend_catalog output)
  get_property(declared GLOBAL PROPERTY SQLOCK_DECLARED_BACKENDS)
  get_property(built GLOBAL PROPERTY SQLOCK_BUILT_BACKENDS)
  set(entries "")
  set(builtin_decls "")
  foreach(name ${declared})
    get_property(title GLOBAL PROPERTY SQLOCK_BACKEND_${name}_TITLE)
    get_property(schemes GLOBAL PROPERTY SQLOCK_BACKEND_${name}_SCHEMES)
    get_property(provided_by GLOBAL PROPERTY SQLOCK_BACKEND_${name}_PROVIDED_BY)
    string(REPLACE ";" "\", \"" scheme_list "${schemes}")
    set(entry "nullptr")
    if(NOT BUILD_SHARED_LIBS AND name IN_LIST built)
      string(APPEND builtin_decls
             "extern \"C\" const sqlock::detail::BackendModule* sqlock_backend_${name}_v2();\n")
      set(entry "&sqlock_backend_${name}_v2")
    endif()
    string(APPEND entries
           "        {\"${name}\", \"${title}\", {\"${scheme_list}\"}, \"${provided_by}\", ${entry}},\n")
  endforeach()
  file(WRITE ${output}.tmp
"// Generated from SQLOCK_BACKENDS by cmake/backends.cmake. Do not edit.
#include \"loading/backend_catalog.hpp\"

${builtin_decls}
namespace sqlock::detail {

const std::vector<CatalogEntry>& backend_catalog() {
    static const std::vector<CatalogEntry> entries{
${entries}    };
    return entries;
}

}  // namespace sqlock::detail
")
  file(COPY_FILE ${output}.tmp ${output} ONLY_IF_DIFFERENT)
endfunction()
