/* check_main.h - the main() every Check test binary shares: run one suite, exit non-zero on failure. */
#pragma once
#include <check.h>
#include <stdlib.h>

#define COLONY_CHECK_MAIN(make_suite)                                                                                  \
        int main(void) {                                                                                               \
                SRunner *sr = srunner_create(make_suite());                                                            \
                srunner_run_all(sr, CK_NORMAL);                                                                        \
                int failed = srunner_ntests_failed(sr);                                                                \
                srunner_free(sr);                                                                                      \
                return failed ? EXIT_FAILURE : EXIT_SUCCESS;                                                           \
        }
