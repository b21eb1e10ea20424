# `cmake --install`: lib/ (libdeepinfer.so.1 with its SONAME link, the CUDA backend when built),
# include/deepinfer.h, bin/deepinfer, lib/pkgconfig/deepinfer.pc and lib/cmake/DeepInfer for
# find_package(DeepInfer); `cpack -G DEB` packs the same tree. Installed RUNPATHs are
# $ORIGIN-relative (set in the top-level CMakeLists.txt), so the prefix can move.
include(CMakePackageConfigHelpers)

install(TARGETS deepinfer EXPORT DeepInferTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/capi/include/deepinfer.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS deepinfer_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET deepinfer_cuda)
  install(TARGETS deepinfer_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

install(EXPORT DeepInferTargets NAMESPACE DeepInfer::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/DeepInfer)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/DeepInferConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/DeepInferConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/DeepInfer)
# Same major version = same ABI (abi/deepinfer.map); a newer minor serves older callers.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/DeepInferConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/DeepInferConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/DeepInferConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/DeepInfer)

file(RELATIVE_PATH DI_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/deepinfer.pc.in ${CMAKE_BINARY_DIR}/cmake/deepinfer.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/deepinfer.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Debian package: dpkg-shlibdeps computes Depends from the ELF files (libc, libcurl, ...).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME deepinfer)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "DeepInfer developers <dev@deepinfer.dev>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "DeepSeek inference engine: libdeepinfer, its header and the deepinfer CLI")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Debug info stays in the build tree; the package carries stripped binaries.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)

# deepinfer.pc for the build tree itself (PKG_CONFIG_PATH=$BUILD/pkgconfig): the Go binding's
# `#cgo pkg-config: deepinfer` against an uninstalled build, as scripts/suites/go.sh uses it.
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/pkgconfig/deepinfer.pc CONTENT [[
# libdeepinfer in its build tree (not installed); the installed one is lib/pkgconfig/deepinfer.pc.
libdir=@CMAKE_LIBRARY_OUTPUT_DIRECTORY@
includedir=@CMAKE_SOURCE_DIR@/capi/include

Name: deepinfer
Description: DeepSeek inference engine and API recipe (C ABI), build tree
Version: @PROJECT_VERSION@
Libs: -L${libdir} -ldeepinfer
Cflags: -I${includedir}
]] @ONLY)
