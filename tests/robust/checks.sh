# checks.sh - sourced by the robustness scripts (tests/robust_cli.sh, tests/robust/round2.sh, round3.sh): a
# work folder of their own, the check counters, and the checks; a failed check says why on stderr
# and counts in $failures, and the script goes on.

# robust_begin NAME: a fresh folder $work (under $TMPDIR, removed at exit), the current directory
# from here on; $failures and $checks start at 0.
robust_begin() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cd "$work" || exit 1
  failures=0 checks=0
}

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }
# expect STATUS DESCRIPTION -- COMMAND...: runs it (stdout in out.txt, stderr in err.txt)
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >out.txt 2>err.txt
  local st=$?
  ok
  if [ "$st" != "$want" ]; then fail "$what: exit status $st, expected $want"; sed 's/^/  | /' err.txt out.txt >&2; fi
}
contains() { # contains FILE TEXT DESCRIPTION
  ok
  grep -qF -- "$2" "$1" || { fail "$3: $1 does not contain \"$2\""; sed 's/^/  | /' "$1" >&2; }
}
lacks() { # lacks FILE TEXT DESCRIPTION
  ok
  if grep -qF -- "$2" "$1"; then fail "$3: $1 contains \"$2\""; fi
}
same() { ok; cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"; }    # same FILE1 FILE2 DESCRIPTION
absent() { ok; [ ! -e "$1" ] || fail "$2: $1 was written"; }        # absent FILE DESCRIPTION
no_temps() { # no_temps DESCRIPTION: no *.tmp.* file below the current folder
  ok
  local left
  left=$(find . -name '*.tmp.*' | head -5)
  [ -z "$left" ] || fail "$1: temporary files left behind: $left"
}
