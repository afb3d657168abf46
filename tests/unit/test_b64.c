/* test_b64.c - base64 as RFC 4648 gives it, both ways, and what is not base64. */
#include "check_main.h"
#include "b64.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

START_TEST(rfc4648_vectors_both_ways) {
        static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
        static const char *const coded[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
        for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
                char *text = b64_encode(plain[i], strlen(plain[i]));
                unsigned char *back;
                size_t len;
                ck_assert_str_eq(text, coded[i]);
                ck_assert_int_eq(b64_decode(text, &back, &len), 0);
                ck_assert_uint_eq(len, strlen(plain[i]));
                ck_assert_mem_eq(back, plain[i], len);
                free(text);
                free(back);
        }
}
END_TEST

START_TEST(every_byte_round_trips) {
        unsigned char all[256], *back;
        size_t len;
        for (int i = 0; i < 256; i++)
                all[i] = (unsigned char)i;
        char *text = b64_encode(all, sizeof(all));
        ck_assert_int_eq(b64_decode(text, &back, &len), 0);
        ck_assert_uint_eq(len, 256);
        ck_assert_mem_eq(back, all, 256);
        free(text);
        free(back);
}
END_TEST

START_TEST(what_is_not_base64_is_refused) {
        static const char *const bad[] = { "Zg=", "Zg=a", "Z===", "=Zm9", "Zm9v!A==", "Zg==Zm9v", "Zm\n9v" };
        unsigned char *out = NULL;
        size_t len;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(b64_decode(bad[i], &out, &len) == -EINVAL, "'%s' was taken", bad[i]);
}
END_TEST

static Suite *b64_suite(void) {
        Suite *s = suite_create("b64");
        TCase *tc = tcase_create("b64");
        tcase_add_test(tc, rfc4648_vectors_both_ways);
        tcase_add_test(tc, every_byte_round_trips);
        tcase_add_test(tc, what_is_not_base64_is_refused);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(b64_suite)
