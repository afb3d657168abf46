#!/usr/bin/env bash
# backfill.sh - EASY backfill, live: on a 2-CPU agent a wide job (2 CPUs) behind a running narrow
# one gets a reserved start (the running job's start plus its limit); narrow jobs whose limits run
# past it wait "priority" instead of taking the free CPU (plain backfill would start them, and the
# wide job would starve behind them), a short one that ends before it still goes, and the wide job
# starts before every long narrow job.
. "$(dirname "$0")/lib.sh"
printf '[controller]\norder = backfill\n' >"$DIR/controller.conf"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 1G --kill-wait 1 --controller-config "$DIR/controller.conf"
stress="$COLONY_BIN/colony-stress"

# The narrow job running now: its limit (30 s) ends it, and with it the wide job's wait. The
# short job below must be submitted less than 28 s after it started, however slow the host.
first=$(colony submit --name first --cpus 1 --mem 32M --time 0:30 -- "$stress" sleep 300)
wait_started "$first"
wide=$(colony submit --name wide --cpus 2 --mem 32M --time 0:10 -- "$stress" sleep 1)
narrow=()
for i in 1 2 3; do
        narrow+=("$(colony submit --name "narrow$i" --cpus 1 --mem 32M --time 1:00 -- "$stress" sleep 300)")
done
short=$(colony submit --name short --cpus 1 --mem 32M --time 0:02 -- "$stress" sleep 1)

reason_is "$wide" resources 30
for id in "${narrow[@]}"; do
        [ "$(job_field "$id" state)" = pending ] || fail "narrow job $id took the CPU the wide job needs"
        reason_is "$id" priority 30
done
reserved=$(job_field "$wide" reserved_start_usec)
want=$(($(job_field "$first" start_usec) + 30000000))
[ "$reserved" = "$want" ] || fail "wide's reserved start is $reserved, not first's start + 30 s ($want)"
colony show "$wide" | grep -E '^reserved: +start ' >/dev/null || fail "show: $(colony show "$wide")"
colony queue | grep -E "^$wide .*resources, starts " >/dev/null || fail "queue: $(colony queue)"
# The short one ends (by its limit) before the reserved start: it backfills on the free CPU.
colony wait --timeout 60 "$short" >/dev/null || fail "short: $(job_field "$short" state)"
note "$(colony queue)"

wait_started "$wide" 120
ws=$(job_field "$wide" start_usec)
for id in "${narrow[@]}"; do
        s=$(job_field "$id" start_usec)
        [ "$s" = 0 ] || [ "$s" -gt "$ws" ] || fail "narrow job $id started at $s, before the wide job ($ws)"
done
ss=$(job_field "$short" start_usec)
[ "$ss" -lt "$ws" ] || fail "the short job started at $ss, not before the wide one ($ws; first started $(job_field "$first" start_usec))"
[ "$(job_field "$first" state)" = timeout ] || fail "first: $(job_field "$first" state)"
note "wide: reserved $reserved, started $ws ($(((ws - reserved) / 1000)) ms after), first ended $(job_field "$first" end_usec)"
colony wait --timeout 60 "$wide" >/dev/null || fail "wide: $(job_field "$wide" state)"
wait_state "${narrow[0]}" running 60
colony cancel "${narrow[@]}" >/dev/null
echo "PASS"
