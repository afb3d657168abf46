# array_lib.sh - for the tests of arrays, sourced after lib.sh: an array's tasks as listed.

# array_tasks A [--all]: "index state" of each task of array A, sorted by index: its tasks made
# (jobs of their own) and those still in its record (queue --json's "records": their indexes in
# Slurm's text, "256-999999,1000001:2"), pending.
array_tasks() {
        colony queue ${2:-} --json | jq -r --argjson a "$1" '
                def indexes: if . == "" then empty else split(",")[]
                        | capture("^(?<lo>[0-9]+)(-(?<hi>[0-9]+)(:(?<st>[0-9]+))?)?$")
                        | range(.lo | tonumber; (.hi // .lo | tonumber) + 1; .st // "1" | tonumber) end;
                (.jobs[] | select(.array_first == $a) | "\(.array_index) \(.state)"),
                (.records[]? | select(.id == $a) | .pending | indexes | "\(.) pending")' | sort -n
}
