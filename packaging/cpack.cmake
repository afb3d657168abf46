# Debian packages from the install rules, one per install component (`make package` or `cpack`
# in a build tree configured with -DCMAKE_INSTALL_PREFIX=/usr):
#   colony-client      colony, colony-offline, colony-stress, colony(1), colony.conf(5), bash completion,
#                      the guides
#   colony-controller  colony-controller, its unit, /etc/colony/controller.conf, colony-controller(8)
#   colony-agent       colony-agent, its unit, /etc/colony/agent.conf, colony-agent(8)
# A cluster has one controller and an agent per host; every host gets the client. Both daemons'
# packages depend on the client's: it holds the configuration's man page and the command that
# talks to them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME colony)
set(CPACK_PACKAGE_VENDOR "colony developers")
set(CPACK_PACKAGE_CONTACT "colony developers <dev@colony.invalid>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://colony.invalid/")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# The paths compiled into the programs and written into the units are the build's: a package
# built from a tree configured for /usr/local would point its units at /usr/local/sbin.
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/cpack-check.cmake)
set(CPACK_COLONY_CONFIGURED_PREFIX ${CMAKE_INSTALL_PREFIX})

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL client controller agent)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME colony-client)
set(CPACK_DEBIAN_CLIENT_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_CLIENT_DESCRIPTION "cluster resource manager for Linux labs - command-line client
colony submits, lists, waits for and cancels jobs of a colony cluster,
starts a development cluster on one machine, and compares placement and
fairness policies offline with its trace-driven simulator. Also
colony-stress, the small workloads the demo and the interference
measurements run.")

foreach(daemon controller agent)
  string(TOUPPER ${daemon} D)
  set(CPACK_DEBIAN_${D}_PACKAGE_NAME colony-${daemon})
  set(CPACK_DEBIAN_${D}_PACKAGE_SECTION admin)
  set(dir ${PROJECT_BINARY_DIR}/packaging/debian/${daemon})
  set(CPACK_DEBIAN_${D}_PACKAGE_CONTROL_EXTRA ${dir}/postinst ${dir}/prerm ${dir}/postrm ${dir}/conffiles)
endforeach()
# colony on another host than the controller's, and the controller's client_listen, prove
# users with MUNGE: libmunge2 comes through shlibdeps (colony-connect, the controller); the
# daemon itself is only needed where that is used, so it is recommended.
set(CPACK_DEBIAN_CLIENT_PACKAGE_RECOMMENDS munge)
# colony sim reads gzip'd traces with zlib: zlib1g comes through shlibdeps too.
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_RECOMMENDS munge)
set(CPACK_COMPONENT_CONTROLLER_DEPENDS client)
set(CPACK_COMPONENT_AGENT_DEPENDS client)
set(CPACK_DEBIAN_CONTROLLER_DESCRIPTION "cluster resource manager for Linux labs - controller daemon
colony-controller keeps a colony cluster's state: the hosts whose agents
are connected and every job, in an SQLite database. It places pending
jobs on hosts with a configurable policy and order, with departments
sharing CPU by weight. Runs as colony-controller.service.")
set(CPACK_DEBIAN_AGENT_DESCRIPTION "cluster resource manager for Linux labs - per-host agent
colony-agent runs a colony cluster's jobs on one host, each as the
submitting user in its own cgroup (v1 or v2) with CPU, memory and task
limits, and reports their ends and the host's pressure to the
controller. Runs as colony-agent.service, in a cgroup systemd delegates
to it.")

include(CPack)
