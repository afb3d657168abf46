/* units.c - sizes and CPU counts as users type and read them. */
#include "units.h"
#include "res.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
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

int units_parse_mem(const char *s, int64_t *out) {
        int64_t v;
        int r;
        /* Only digits: Slurm's default unit, MiB (a byte count would be OOM-killed at once). */
        bool bare = s && *s && strspn(s, "0123456789") == strlen(s);
        if (bare) {
                if ((r = units_parse_uint(s, RES_MEM_MAX >> 20, &v)) < 0)
                        return r;
                v <<= 20;
        } else if ((r = units_parse_size(s, &v)) < 0) {
                return r;
        }
        if (v < UNITS_MEM_MIN)
                return -EDOM;
        *out = v;
        return 0;
}

/* Up to max colon-separated numbers of at most 9 digits at s into v; the count in *n. */
static int parse_fields(const char *s, int64_t v[3], int max, int *n) {
        *n = 0;
        for (;;) {
                size_t len = strspn(s, "0123456789");
                if (len == 0 || len > 9 || *n == max)
                        return -EINVAL;
                v[(*n)++] = strtoll(s, NULL, 10);
                s += len;
                if (*s == '\0')
                        return 0;
                if (*s++ != ':')
                        return -EINVAL;
        }
}

int units_parse_time(const char *s, int64_t *out_usec) {
        int64_t days = 0, v[3] = { 0 }, secs;
        int n, r;
        if (!s)
                return -EINVAL;
        if (strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "INFINITE") == 0) {
                *out_usec = 0;
                return 0;
        }
        const char *dash = strchr(s, '-');
        if (dash) {
                size_t len = strspn(s, "0123456789");
                if (len == 0 || len > 6 || s + len != dash)
                        return -EINVAL;
                days = strtoll(s, NULL, 10);
                if ((r = parse_fields(dash + 1, v, 3, &n)) < 0)
                        return r;
                /* "D-H", "D-H:M", "D-H:M:S": hours first */
                secs = v[0] * 3600 + (n > 1 ? v[1] * 60 : 0) + (n > 2 ? v[2] : 0);
        } else {
                if ((r = parse_fields(s, v, 3, &n)) < 0)
                        return r;
                /* "M", "M:S", "H:M:S" */
                secs = n == 1 ? v[0] * 60 : n == 2 ? v[0] * 60 + v[1] : v[0] * 3600 + v[1] * 60 + v[2];
        }
        secs += days * 24 * 3600;
        if (secs > UNITS_TIME_MAX_USEC / 1000000)
                return -ERANGE;
        *out_usec = secs * 1000000;
        return 0;
}

char *units_format_time(int64_t usec, char *buf, size_t len) {
        if (usec <= 0) {
                snprintf(buf, len, usec == 0 ? "UNLIMITED" : "0:00");
                return buf;
        }
        long long s = (long long)(usec / 1000000), d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;
        if (d)
                snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", d, h, m, s % 60);
        else if (h)
                snprintf(buf, len, "%lld:%02lld:%02lld", h, m, s % 60);
        else
                snprintf(buf, len, "%lld:%02lld", m, s % 60);
        return buf;
}
