#!/usr/bin/env bash
# coloc_live.sh - policy = coloc on two agents: with a stored matrix in which types A and B
# clash (alpha 4 both ways, 1 within a type), jobs of A and B submitted in turn are kept on
# different hosts, although one host could hold them all (first-fit would stack all six on
# the first); a job of a type the matrix lacks runs too. Every job completes.
. "$(dirname "$0")/lib.sh"

printf '[controller]\npolicy = coloc\n' >"$DIR/controller.conf"
cluster_up --agents 2 --agent-cpus 4 --agent-mem 1G --controller-config "$DIR/controller.conf"
colony nodes | grep -q "^policy: coloc: no interference matrix stored (colony measure): every alpha counts 1" ||
        fail "status without a matrix: $(colony nodes | tail -n 1)"
printf '{"types": ["A", "B"], "alpha": [[1, 4], [4, 1]]}\n' >"$DIR/clash.json"
colony measure --upload "$DIR/clash.json" >/dev/null
colony nodes | grep -q "^policy: coloc: interference matrix version 1, 2 types; other types count alpha 1" ||
        fail "status with a matrix: $(colony nodes | tail -n 1)"

ids=() types=()
for t in A B A B A B; do
        ids+=("$(colony submit --type "$t" --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 10)")
        types+=("$t")
done
# Started: 10 s outlasts the six submissions even in a slow guest, so each was placed beside the
# others; one may have ended by the time this loop reads it.
for id in "${ids[@]}"; do wait_started "$id"; done
declare -A node_of_type=()
for k in "${!ids[@]}"; do
        node=$(job_field "${ids[$k]}" node)
        t=${types[$k]}
        [ -z "${node_of_type[$t]:-}" ] && node_of_type[$t]=$node
        [ "${node_of_type[$t]}" = "$node" ] || fail "type $t on ${node_of_type[$t]} and $node"
done
[ "${node_of_type[A]}" != "${node_of_type[B]}" ] || fail "A and B share ${node_of_type[A]}"
note "A on ${node_of_type[A]}, B on ${node_of_type[B]}"
other=$(colony submit --type C --cpus 0.5 --mem 32M -- "$COLONY_BIN/colony-stress" sleep 0.1)
for id in "${ids[@]}" "$other"; do wait_state "$id" completed 30; done
grep -q "job=$other node=.* state=running reason=placed policy=coloc" "$DIR/controller.log" ||
        fail "the job of type C was not placed by coloc"
echo "PASS: 3 A and 3 B jobs kept apart, a job of an unknown type placed, all completed"
