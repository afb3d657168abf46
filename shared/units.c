/* units.c - sizes and CPU counts as users type and read them. */
#include "units.h"
#include "res.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Parse "digits[.digits]" at *s into an integer part and a fraction scaled to 10^9.
 * Advances *s past the number. Returns 0 or -EINVAL / -ERANGE. */
static int parse_decimal(const char **s, int64_t *whole, int64_t *nano, int *decimals) {
        const char *p = *s;
        if (!isdigit((unsigned char)*p))
                return -EINVAL;
        *whole = 0;
        for (; isdigit((unsigned char)*p); p++) {
                if (*whole > (INT64_MAX - 9) / 10)
                        return -ERANGE;
                *whole = *whole * 10 + (*p - '0');
        }
        *nano = 0;
        *decimals = 0;
        if (*p == '.') {
                p++;
                if (!isdigit((unsigned char)*p))
                        return -EINVAL;
                int64_t scale = 100000000;
                for (; isdigit((unsigned char)*p); p++, (*decimals)++) {
                        if (*decimals == 9)
                                return -EINVAL; /* beyond nano-units nothing we count has meaning */
                        *nano += (*p - '0') * scale;
                        scale /= 10;
                }
        }
        *s = p;
        return 0;
}

static int suffix_shift(const char *s, int *shift) {
        static const char units[] = "KMGT";
        *shift = 0;
        if (*s) {
                const char *u = strchr(units, toupper((unsigned char)*s));
                if (!u)
                        return strcasecmp(s, "B") == 0 ? 0 : -EINVAL;
                *shift = 10 * (int)(u - units + 1);
                s++;
        }
        return *s == '\0' || strcasecmp(s, "B") == 0 || strcasecmp(s, "iB") == 0 ? 0 : -EINVAL;
}

int units_parse_size(const char *s, int64_t *out) {
        int64_t whole, nano;
        int decimals, shift, r;
        if (!s || (r = parse_decimal(&s, &whole, &nano, &decimals)) < 0)
                return s ? r : -EINVAL;
        if ((r = suffix_shift(s, &shift)) < 0)
                return r;
        if (shift == 0 && nano)
                return -EINVAL; /* "1.5" bytes: there are no half bytes */
        if (whole > (RES_MEM_MAX >> shift))
                return -ERANGE;
        __int128 bytes = ((__int128)whole << shift) + (((__int128)nano << shift) / 1000000000);
        if (bytes > RES_MEM_MAX)
                return -ERANGE;
        *out = (int64_t)bytes;
        return 0;
}

int units_parse_cpus(const char *s, int64_t *out_mcpu) {
        int64_t whole, nano, mcpu;
        int decimals, r;
        if (!s || (r = parse_decimal(&s, &whole, &nano, &decimals)) < 0)
                return s ? r : -EINVAL;
        if (strcmp(s, "m") == 0) {
                if (decimals)
                        return -EINVAL;
                mcpu = whole;
        } else if (*s == '\0') {
                if (decimals > 3 || whole > RES_MCPU_MAX / 1000)
                        return decimals > 3 ? -EINVAL : -ERANGE;
                mcpu = whole * 1000 + nano / 1000000;
        } else {
                return -EINVAL;
        }
        if (mcpu <= 0)
                return -EINVAL;
        if (mcpu > RES_MCPU_MAX)
                return -ERANGE;
        *out_mcpu = mcpu;
        return 0;
}

int units_parse_uint(const char *s, int64_t max, int64_t *out) {
        int64_t whole, nano;
        int decimals, r;
        if (!s || (r = parse_decimal(&s, &whole, &nano, &decimals)) < 0)
                return s ? r : -EINVAL;
        if (*s || decimals)
                return -EINVAL;
        if (whole > max)
                return -ERANGE;
        *out = whole;
        return 0;
}

char *units_format_size(int64_t bytes, char *buf, size_t len) {
        static const char units[] = "BKMGTPE";
        int u = 0;
        double v = (double)bytes;
        /* 1023.96K would print as "1024.0K": move up before rounding can reach 1024 */
        while ((v >= 1023.95 || v <= -1023.95) && units[u + 1]) {
                v /= 1024;
                u++;
        }
        if (u == 0)
                snprintf(buf, len, "%lldB", (long long)bytes);
        else
                snprintf(buf, len, "%.1f%c", v, units[u]);
        return buf;
}

char *units_format_cpus(int64_t mcpu, char *buf, size_t len) {
        const char *sign = mcpu < 0 ? "-" : "";
        /* negate in unsigned arithmetic: -INT64_MIN does not fit */
        uint64_t m = mcpu < 0 ? -(uint64_t)mcpu : (uint64_t)mcpu;
        unsigned long long whole = m / 1000, frac = m % 1000;
        if (frac == 0)
                snprintf(buf, len, "%s%llu", sign, whole);
        else if (frac % 100 == 0)
                snprintf(buf, len, "%s%llu.%llu", sign, whole, frac / 100);
        else if (frac % 10 == 0)
                snprintf(buf, len, "%s%llu.%02llu", sign, whole, frac / 10);
        else
                snprintf(buf, len, "%s%llu.%03llu", sign, whole, frac);
        return buf;
}
