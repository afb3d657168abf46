#!/usr/bin/env bash
# waiting_cap.sh - a job its department's cap holds back waits with the reason "department cap",
# on an otherwise idle node, and starts once its department's running job ends.
. "$(dirname "$0")/lib.sh"

conf=$DIR/controller.conf
printf '[departments]\nphysics = 1\ncs = 1\n[department_caps]\nphysics = 0.5\n' >"$conf"
cluster_up --agents 1 --agent-cpus 2 --agent-mem 512M --controller-config "$conf"

stress="$COLONY_BIN/colony-stress"
first=$(colony submit --name p1 --group physics --cpus 1 --mem 32M -- "$stress" sleep 30)
wait_state "$first" running
second=$(colony submit --name p2 --group physics --cpus 1 --mem 32M -- "$stress" sleep 0)
end=$((SECONDS + 20))
until [ "$(job_field "$second" reason)" = "department cap" ]; do
        ((SECONDS <= end)) || fail "p2's reason is '$(job_field "$second" reason)', not 'department cap'"
        sleep 0.1
done
[ "$(job_field "$second" state)" = pending ] || fail "p2 passed physics' cap"
colony queue | grep -E "^$second .* department cap *\$" >/dev/null || fail "queue: $(colony queue)"
colony cancel "$first" >/dev/null
colony wait --timeout 60 "$second" >/dev/null || fail "p2: $(job_field "$second" state)"
note "p2 waited for physics' cap, then ran"
echo "PASS"
