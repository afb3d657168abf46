/* test_usergroups.c - a user's groups looked up, and when a lookup made ahead is still current
 * (agent/usergroups.h). That a change to /etc/group is seen by the next job is
 * tests/integration/groups.sh's. */
#include "check_main.h"
#include "usergroups.h"
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

/* A uid no passwd entry names, found from the top down. */
static uid_t unnamed_uid(void) {
        for (uid_t u = 3999999999U;; u--)
                if (!getpwuid(u))
                        return u;
}

START_TEST(own_groups_begin_with_the_primary_group) {
        usergroups g;

        ck_assert_int_eq(usergroups_lookup(getuid(), getgid(), &g), 0);
        ck_assert_uint_ge(g.n, 1);
        ck_assert_uint_eq(g.list[0], getgid());
        ck_assert_uint_eq(g.uid, getuid());
        ck_assert_uint_eq(g.gid, getgid());
        usergroups_free(&g);
        ck_assert_ptr_null(g.list);
        ck_assert_uint_eq(g.n, 0);
}
END_TEST

START_TEST(a_user_without_an_entry_has_the_primary_group_alone) {
        usergroups g;

        ck_assert_int_eq(usergroups_lookup(unnamed_uid(), 4321, &g), 0);
        ck_assert_uint_eq(g.n, 1);
        ck_assert_uint_eq(g.list[0], 4321);
        usergroups_free(&g);
}
END_TEST

START_TEST(current_for_its_user_for_a_while_only) {
        usergroups g, empty = { 0 };
        uid_t u = getuid();
        gid_t gid = getgid();

        ck_assert_int_eq(usergroups_lookup(u, gid, &g), 0);
        ck_assert(usergroups_current(&g, u, gid, g.looked_up_ms));
        ck_assert(usergroups_current(&g, u, gid, g.looked_up_ms + USERGROUPS_TTL_MS - 1));
        ck_assert(!usergroups_current(&g, u, gid, g.looked_up_ms + USERGROUPS_TTL_MS));
        ck_assert(!usergroups_current(&g, u, gid, g.looked_up_ms - 1)); /* a clock gone back: not trusted */
        ck_assert(!usergroups_current(&g, u + 1, gid, g.looked_up_ms));
        ck_assert(!usergroups_current(&g, u, gid + 1, g.looked_up_ms));
        ck_assert(!usergroups_current(&empty, 0, 0, g.looked_up_ms));
        ck_assert(!usergroups_current(NULL, u, gid, g.looked_up_ms));
        usergroups_free(&g);
}
END_TEST

static Suite *usergroups_suite(void) {
        Suite *s = suite_create("usergroups");
        TCase *tc = tcase_create("lookup");

        tcase_add_test(tc, own_groups_begin_with_the_primary_group);
        tcase_add_test(tc, a_user_without_an_entry_has_the_primary_group_alone);
        tcase_add_test(tc, current_for_its_user_for_a_while_only);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(usergroups_suite)
