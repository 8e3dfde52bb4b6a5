# Installation: headers, library, CMake package (sqlock::sqlock), pkg-config.
include(CMakePackageConfigHelpers)

install(TARGETS sqlock EXPORT sqlockTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/sqlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/sqlock/config.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sqlock)
install(DIRECTORY sql/ DESTINATION ${CMAKE_INSTALL_DATADIR}/sqlock/sql)

# The backends' libraries matter to a consumer only when libsqlock is static.
# Listed for a shared library, pkg-config would demand their .pc files (the
# -dev packages) and add their flags even for `pkg-config --cflags --libs`.
# They are the PKG_CONFIG dependencies the backends declared
# (cmake/backends.cmake). sqlock.pc lists their libraries as found here
# (`pkg-config --libs`), not as Requires.private: `pkg-config --static`
# would add libpq's own private libraries, which exist only for a static
# libpq that Debian does not ship.
set(SQLOCK_PC_LIBS_PRIVATE "")
set(SQLOCK_FIND_BACKEND_DEPENDENCIES "")
if(NOT BUILD_SHARED_LIBS)
  get_property(dependencies GLOBAL PROPERTY SQLOCK_BACKEND_PKG_CONFIG)
  foreach(dependency ${dependencies})
    string(REGEX MATCH "^([A-Za-z0-9_]+):([^<>= ]+)" matched "${dependency}")
    string(APPEND SQLOCK_FIND_BACKEND_DEPENDENCIES
           "  pkg_check_modules(${CMAKE_MATCH_1} REQUIRED IMPORTED_TARGET ${CMAKE_MATCH_2})\n")
  endforeach()
  get_property(ldflags GLOBAL PROPERTY SQLOCK_BACKEND_LDFLAGS)
  list(REMOVE_DUPLICATES ldflags)
  list(JOIN ldflags " " ldflags)
  set(SQLOCK_PC_LIBS_PRIVATE " ${ldflags} -pthread")
  foreach(library ${CMAKE_DL_LIBS})
    string(APPEND SQLOCK_PC_LIBS_PRIVATE " -l${library}")
  endforeach()
endif()
set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/sqlock)
install(EXPORT sqlockTargets NAMESPACE sqlock:: DESTINATION ${config_dir})
configure_package_config_file(cmake/sqlockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sqlockConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sqlockConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sqlockConfig.cmake
              ${PROJECT_BINARY_DIR}/sqlockConfigVersion.cmake
        DESTINATION ${config_dir})

# A relocatable .pc: the prefix is found relative to the file itself, so
# `cmake --install --prefix X` works without reconfiguring.
file(RELATIVE_PATH SQLOCK_PC_PREFIX_FROM_PCDIR
     "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
configure_file(cmake/sqlock.pc.in ${PROJECT_BINARY_DIR}/sqlock.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sqlock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
