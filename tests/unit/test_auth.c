/* test_auth.c - the agent link's challenge-response: proofs match an independent HMAC-SHA256
 * (Python's hmac module computed the expected values), differ in every input, and nonces are
 * fresh. */
#include "check_main.h"
#include "auth.h"
#include <errno.h>
#include <string.h>

#define NC "0000000000000000000000000000000000000000000000000000000000000001"
#define NA "abababababababababababababababababababababababababababababababab"

START_TEST(proofs_match_an_independent_hmac) {
        char p[AUTH_HEX_LEN + 1];
        ck_assert_int_eq(auth_proof("sesame", AUTH_AGENT, NC, NA, "node-1", p), 0);
        ck_assert_str_eq(p, "da58652d13d4758e09b0230b9a602e69b668d9795bc2bef2c392e8b9280246ff");
        ck_assert_int_eq(auth_proof("sesame", AUTH_CONTROLLER, NC, NA, "node-1", p), 0);
        ck_assert_str_eq(p, "d39ba4a426c5185712e612ec7199b1da5bba87fcb3dac76dc72b2cecf858303e");
}
END_TEST

START_TEST(every_input_changes_the_proof) {
        char base[AUTH_HEX_LEN + 1], other[AUTH_HEX_LEN + 1];
        ck_assert_int_eq(auth_proof("sesame", AUTH_AGENT, NC, NA, "node-1", base), 0);
        ck_assert_int_eq(auth_proof("sesamE", AUTH_AGENT, NC, NA, "node-1", other), 0);
        ck_assert_str_ne(base, other);
        ck_assert_int_eq(auth_proof("sesame", AUTH_AGENT, NA, NC, "node-1", other), 0); /* a reflected challenge */
        ck_assert_str_ne(base, other);
        ck_assert_int_eq(auth_proof("sesame", AUTH_AGENT, NC, NA, "node-2", other), 0);
        ck_assert_str_ne(base, other);
        ck_assert_int_eq(auth_proof("sesame", AUTH_AGENT, NC, "ab", "node-1", other), -EINVAL);
        ck_assert_int_eq(auth_proof("sesame", AUTH_AGENT, NC, NA "0", "node-1", other), -EINVAL);
        char upper[] = NC;
        upper[10] = 'F'; /* hex, but not as the wire spells it */
        ck_assert_int_eq(auth_proof("sesame", AUTH_AGENT, upper, NA, "node-1", other), -EINVAL);
}
END_TEST

START_TEST(nonces_are_fresh_hex) {
        char a[AUTH_HEX_LEN + 1], b[AUTH_HEX_LEN + 1];
        ck_assert_int_eq(auth_nonce(a), 0);
        ck_assert_int_eq(auth_nonce(b), 0);
        ck_assert(auth_hex_ok(a));
        ck_assert(auth_hex_ok(b));
        ck_assert_str_ne(a, b);
        ck_assert(!auth_hex_ok("ABAB"));
        ck_assert(auth_equal("abc", "abc"));
        ck_assert(!auth_equal("abc", "abd"));
        ck_assert(!auth_equal("abc", "ab"));
        ck_assert(!auth_equal("", "a"));
}
END_TEST

static Suite *auth_suite(void) {
        Suite *s = suite_create("auth");
        TCase *tc = tcase_create("auth");
        tcase_add_test(tc, proofs_match_an_independent_hmac);
        tcase_add_test(tc, every_input_changes_the_proof);
        tcase_add_test(tc, nonces_are_fresh_hex);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(auth_suite)
