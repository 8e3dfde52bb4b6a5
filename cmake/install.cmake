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

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/sqlock)
install(EXPORT sqlockTargets NAMESPACE sqlock:: DESTINATION ${config_dir})
configure_package_config_file(cmake/sqlockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sqlockConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sqlockConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sqlockConfig.cmake
              ${PROJECT_BINARY_DIR}/sqlockConfigVersion.cmake
        DESTINATION ${config_dir})

# The backends' libraries matter to a consumer only when libsqlock is static.
# Listed for a shared library, pkg-config would demand their .pc files (the
# -dev packages) and add their flags even for `pkg-config --cflags --libs`.
set(SQLOCK_PC_REQUIRES_PRIVATE "")
set(SQLOCK_PC_LIBS_PRIVATE "")
if(NOT BUILD_SHARED_LIBS)
  if(SQLOCK_WITH_SQLITE)
    string(APPEND SQLOCK_PC_REQUIRES_PRIVATE " sqlite3")
  endif()
  if(SQLOCK_WITH_POSTGRES)
    string(APPEND SQLOCK_PC_REQUIRES_PRIVATE " libpqxx libpq")
  endif()
  set(SQLOCK_PC_LIBS_PRIVATE " -pthread")
endif()
# A relocatable .pc: the prefix is found relative to the file itself, so
# `cmake --install --prefix X` works without reconfiguring.
file(RELATIVE_PATH SQLOCK_PC_PREFIX_FROM_PCDIR
     "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
configure_file(cmake/sqlock.pc.in ${PROJECT_BINARY_DIR}/sqlock.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sqlock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
