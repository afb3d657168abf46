#!/usr/bin/env bash
# output.sh - output that tools can trust: a job's stderr goes to its output file beside its
# stdout unless --error says otherwise, in the order written; argv, paths and errors holding
# control characters print escaped in every human listing; every integer in the JSON of
# queue, show, history, events and /api/status is written as digits, in valid UTF-8.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl missing"; exit $SKIP; }
command -v iconv >/dev/null || { echo "SKIP: iconv missing"; exit $SKIP; }
POKE="$COLONY_BIN/proto-poke"

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

# --- a file that exists: a run truncates it, as Slurm does, unless --open-mode append ----------
for f in trunc append script; do printf 'stale\n' >"$DIR/$f.out"; done
trunc=$(colony submit --output "$DIR/trunc.out" --cpus 0.5 --mem 32M -- /bin/echo fresh)
append=$(colony submit --output "$DIR/append.out" --open-mode append --cpus 0.5 --mem 32M -- /bin/echo fresh)
printf '#!/bin/sh\n#SBATCH --open-mode=append\n#SBATCH -o %s\necho fresh\n' "$DIR/script.out" >"$DIR/append.sh"
script=$(colony submit --cpus 0.5 --mem 32M "$DIR/append.sh")
for id in "$trunc" "$append" "$script"; do colony wait "$id" >/dev/null || fail "job $id: $(job_field "$id" state)"; done
[ "$(cat "$DIR/trunc.out")" = fresh ] || fail "a run over an existing file left '$(cat "$DIR/trunc.out")', want fresh alone"
for f in append script; do
        [ "$(cat "$DIR/$f.out")" = $'stale\nfresh' ] || fail "--open-mode append ($f) left '$(cat "$DIR/$f.out")'"
done
[ "$(job_field "$append" open_mode)" = append ] || fail "the record does not say open_mode append"
# An array's tasks may share one file: none empties another's output (without --open-mode).
printf 'stale\n' >"$DIR/shared.out"
arr=$(colony submit --array 0-3 --output "$DIR/shared.out" --cpus 0.2 --mem 16M -- /bin/sh -c 'echo "task $COLONY_ARRAY_TASK_ID"')
colony wait "$arr" >/dev/null || fail "array $arr did not complete"
[ "$(sort "$DIR/shared.out" | tr '\n' ' ')" = "stale task 0 task 1 task 2 task 3 " ] ||
        fail "an array's shared file holds '$(tr '\n' ' ' <"$DIR/shared.out")', want stale and the four tasks' lines"
set +e; bad=$(colony submit --open-mode sometimes -- /bin/true 2>&1); rc=$?; set -e
[ $rc = 2 ] && [ "$(wc -l <<<"$bad")" = 1 ] && grep -q "neither append nor truncate" <<<"$bad" ||
        fail "--open-mode sometimes: exit $rc, said '$bad'"
note "an existing output file: truncated by default, kept with --open-mode append (option and #SBATCH) and by an array's tasks"

# --- control characters never reach the terminal raw --------------------------------------------
esc=$'\x1b' nl=$'\n'
mkdir "$DIR/dir${esc}[31mred"
evil=$(cd "$DIR/dir${esc}[31mred" && colony submit --name evil --cpus 0.5 --mem 32M -- \
        /bin/echo "clear${esc}[2J" "two${nl}lines" "bell$(printf '\a')")
colony wait "$evil" >/dev/null || fail "job $evil: $(job_field "$evil" state)"
[ "$(job_field "$evil" 'argv[1]')" = "clear${esc}[2J" ] || fail "the JSON does not carry argv as given"
# A program path with ESC that does not exist: the agent's error quotes it.
reply=$("$POKE" "$COLONY_SOCKET" json \
        '{"v":1,"type":"submit","argv":["/no/such/\u001b]0;title\u0007x"],"cwd":"'"$DIR"'","mcpu":100,"mem":1048576}')
gone=$(jq -r .id <<<"$reply")
wait_state "$gone" failed

# raw_controls TEXT: the control bytes in TEXT other than the newlines between lines, as hex.
raw_controls() { tr -d '\n' <<<"$1" | LC_ALL=C tr -dc '\000-\037\177' | od -An -tx1 | tr -d ' \n'; }
for cmd in "show $evil" "show $gone" "queue --all" "history" "wait $evil" "events --job $gone"; do
        # shellcheck disable=SC2086 # cmd is words
        out=$(colony $cmd 2>&1) || [ "${cmd%% *}" = wait ] || fail "colony $cmd: $out"
        [ -z "$(raw_controls "$out")" ] || fail "colony $cmd printed raw control bytes $(raw_controls "$out"): $out"
done
show=$(colony show "$evil")
grep -qF "command:     /bin/echo \$'clear\\x1b[2J' \$'two\\nlines' \$'bell\\x07'" <<<"$show" ||
        fail "colony show does not print the command escaped: $show"
grep -qF 'cwd:         '"$DIR"'/dir\x1b[31mred' <<<"$show" || fail "colony show does not print cwd escaped: $show"
grep -qF 'x1b]0;title\x07x' <<<"$(colony show "$gone")" || fail "the error is not escaped: $(colony show "$gone")"
note "show: $(grep command: <<<"$show")"

# --- integers as digits, valid UTF-8 JSON everywhere --------------------------------------------
# check_json WHAT TEXT: TEXT is valid UTF-8 and JSON (one document, or one per line), no number
# has an exponent, and every id, *_usec, *bytes, mem*, *mcpu field is an integer's digits.
check_json() {
        local what=$1 text=$2 bad
        iconv -f UTF-8 -t UTF-8 <<<"$text" >/dev/null || fail "$what is not valid UTF-8"
        jq . <<<"$text" >/dev/null || fail "$what is not JSON: $text"
        bad=$(grep -Eo '"[a-z_0-9]+":[[:space:]]*-?[0-9][0-9.eE+-]*' <<<"$text" |
                grep -E ':[[:space:]]*-?[0-9.]*[eE]|"(id|[a-z_]*_id|[a-z_]*_usec|[a-z_]*bytes|mem[a-z_]*|[a-z_]*mcpu|seq|array_first)":[[:space:]]*-?[0-9]*\.' || true)
        [ -z "$bad" ] || fail "$what has numbers that are not digits: $(head -n 3 <<<"$bad")"
        [ "$(grep -Ec '"[a-z_]*_usec":[[:space:]]*[0-9]{16}' <<<"$text")" -gt 0 ] || fail "$what has no timestamp to check"
}
check_json "queue --json" "$(colony queue --all --json)"
check_json "show --json" "$(colony show --json "$evil")"
check_json "history --json" "$(colony history --json)"
check_json "events --json" "$(colony events --json --job "$evil")"
check_json "/api/status" "$(curl -fsS "$HTTP/api/status")"
note "JSON: e.g. $(colony show --json "$evil" | grep -Eo '"submit_usec":[[:space:]]*[0-9]+')"
echo "PASS"
