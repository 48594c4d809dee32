# `cmake --install` produces a relocatable package: headers, the libraries, the CLI, and
# lib/cmake/mlpcore/mlpcoreConfig.cmake, so that find_package(mlpcore CONFIG REQUIRED) gives
# mlpcore::mlpcore (the C++ API), mlpcore::device (headers for users' own GPU kernels), mlpcore::c.
include(CMakePackageConfigHelpers)
set(MLPCORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mlpcore)

set_target_properties(mlpcore_c PROPERTIES EXPORT_NAME c)
install(TARGETS mlpcore mlpcore_emu mlpcore_device mlpcore_c EXPORT mlpcoreTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET mlpcore_cli)
  install(TARGETS mlpcore_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/mlpcore ${PROJECT_BINARY_DIR}/engine/generated/mlpcore
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/ops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mlpcore/device
        FILES_MATCHING PATTERN "*.h")
install(EXPORT mlpcoreTargets NAMESPACE mlpcore:: DESTINATION ${MLPCORE_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mlpcoreConfig.cmake.in ${PROJECT_BINARY_DIR}/mlpcoreConfig.cmake
                              INSTALL_DESTINATION ${MLPCORE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mlpcoreConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mlpcoreConfig.cmake ${PROJECT_BINARY_DIR}/mlpcoreConfigVersion.cmake DESTINATION ${MLPCORE_CMAKE_DIR})
