# Read by cpack before it packages (CPACK_PROJECT_CONFIG_FILE): refuse a tree whose compiled-in
# and unit paths are not the package's.
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_COLONY_CONFIGURED_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR "colony: this tree installs to ${CPACK_COLONY_CONFIGURED_PREFIX}; a Debian package "
                      "needs one configured with -DCMAKE_INSTALL_PREFIX=/usr")
endif()
