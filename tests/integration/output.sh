#!/usr/bin/env bash
# output.sh - output that tools can trust: a job's stderr goes to its output file beside its
# stdout unless --error says otherwise, in the order written.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit $SKIP; }

http_cluster_up 'physics = 1' --agents 1 --agent-cpus 2 --agent-mem 1G

# --- stderr with stdout, as colony(1) and `colony show` say -------------------------------------
both=$(colony submit --name both --cpus 0.5 --mem 32M -- /bin/sh -c 'echo out; echo err >&2; echo out2')
colony wait "$both" >/dev/null || fail "job $both: $(job_field "$both" state)"
[ "$(cat "$DIR/colony-$both.out")" = $'out\nerr\nout2' ] ||
        fail "colony-$both.out holds '$(cat "$DIR/colony-$both.out")', want out, err, out2 in order"
[ "$(colony show "$both" | awk '$1 == "stderr:" { $1 = ""; print substr($0, 2) }')" = "with stdout" ] ||
        fail "colony show does not say stderr goes with stdout"
split=$(colony submit --error "$DIR/err.txt" --cpus 0.5 --mem 32M -- /bin/sh -c 'echo out; echo err >&2')
colony wait "$split" >/dev/null || fail "job $split: $(job_field "$split" state)"
[ "$(cat "$DIR/colony-$split.out")" = out ] && [ "$(cat "$DIR/err.txt")" = err ] ||
        fail "with --error: out '$(cat "$DIR/colony-$split.out")', err '$(cat "$DIR/err.txt")'"
note "stderr: default with stdout ($(tr '\n' ' ' <"$DIR/colony-$both.out")), --error apart"

echo "PASS"
