# colony_script_tests(LABEL TIMEOUT NAME...): register NAME.sh of this directory as ctest
# LABEL_NAME, with the build's bin/ in $COLONY_BIN and exit 77 meaning skipped.
function(colony_script_tests label timeout)
  foreach(t ${ARGN})
    add_test(NAME ${label}_${t} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/${t}.sh)
    set_tests_properties(${label}_${t} PROPERTIES
      LABELS ${label}
      SKIP_RETURN_CODE 77
      TIMEOUT ${timeout}
      ENVIRONMENT "COLONY_BIN=${CMAKE_BINARY_DIR}/bin")
  endforeach()
endfunction()
