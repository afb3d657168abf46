/* res.c - resource vector arithmetic. */
#include "res.h"

res_t res_add(res_t a, res_t b) {
        return (res_t){
                .mcpu = a.mcpu + b.mcpu, .mem = a.mem + b.mem, .pids = a.pids + b.pids, .gpus = a.gpus + b.gpus
        };
}

res_t res_sub(res_t a, res_t b) {
        return (res_t){
                .mcpu = a.mcpu - b.mcpu, .mem = a.mem - b.mem, .pids = a.pids - b.pids, .gpus = a.gpus - b.gpus
        };
}

res_t res_min(res_t a, res_t b) {
        return (res_t){ .mcpu = a.mcpu < b.mcpu ? a.mcpu : b.mcpu,
                        .mem = a.mem < b.mem ? a.mem : b.mem,
                        .gpus = a.gpus < b.gpus ? a.gpus : b.gpus };
}

bool res_fits(res_t req, res_t avail) {
        return req.mcpu <= avail.mcpu && req.mem <= avail.mem && req.gpus <= avail.gpus;
}

bool res_in_range(res_t r) {
        return r.mcpu >= 0 && r.mcpu <= RES_MCPU_MAX && r.mem >= 0 && r.mem <= RES_MEM_MAX && r.pids >= 0 &&
               r.pids <= RES_PIDS_MAX && r.gpus >= 0 && r.gpus <= RES_GPUS_MAX;
}

bool res_equal(res_t a, res_t b) { return a.mcpu == b.mcpu && a.mem == b.mem && a.pids == b.pids && a.gpus == b.gpus; }
