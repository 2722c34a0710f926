# common-setup.bash - loaded by every bats file: libraries, the binary, data.
# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
_common_setup() {
    bats_require_minimum_version 1.5.0
    load "${BATS_LIB_PATH:-/usr/lib/bats}/bats-support/load"
    load "${BATS_LIB_PATH:-/usr/lib/bats}/bats-assert/load"
    HAPLIK="${HAPLIK:-$BATS_TEST_DIRNAME/../haplik}"
    DATA="${HK_TESTDATA:-$BATS_TEST_DIRNAME/data}"
    export HAPLIK DATA
}

# table same|close|get|valid TABLE...: tests/test_helper/table.py, which compares, checks and
# queries tables.
table() { python3 "$BATS_TEST_DIRNAME/test_helper/table.py" "$@"; }

# haplik with the test's defaults: CPU backend unless a test says otherwise,
# no notices.
hk() { "$HAPLIK" "$@"; }

# The directory holds nothing but the given names (no temporary leftovers).
assert_dir_only() {
    local dir=$1; shift
    local got want
    got=$(find "$dir" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ')
    want=
    if (($#)); then want=$(printf '%s\n' "$@" | sort | tr '\n' ' '); fi
    [ "$got" = "$want" ] || fail "directory $dir holds '$got', expected '$want'"
}

# Debian 12's bats-assert (2.0) has no assert_stderr: a minimal one.
if ! declare -F assert_stderr >/dev/null; then
    assert_stderr() {
        case $1 in
        --partial) [[ "$stderr" == *"$2"* ]] || fail "stderr lacks '$2': $stderr" ;;
        --regexp) [[ "$stderr" =~ $2 ]] || fail "stderr does not match '$2': $stderr" ;;
        *) [ "$stderr" = "$1" ] || fail "stderr is '$stderr', expected '$1'" ;;
        esac
    }
fi
