/* gpushare.c - the agents' shares of a local cluster's GPUs (gpushare.h). */
#include "gpushare.h"
#include <errno.h>
#include <stdio.h>

int gpushare_of(const gpus *g, size_t i, size_t n, char *buf, size_t len) {
        size_t each = g->n / n, extra = g->n % n;
        size_t first = i * each + (i < extra ? i : extra), count = each + (i < extra);
        size_t at = 0;
        if (len == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        for (size_t k = first; k < first + count; k++) {
                int w = snprintf(buf + at, len - at, "%s%s", at ? "," : "", g->dev[k].path);
                if (w < 0 || (size_t)w >= len - at)
                        return -ENOBUFS;
                at += (size_t)w;
        }
        return 0;
}
