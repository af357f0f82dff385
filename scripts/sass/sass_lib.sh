# sass_lib.sh - sourced by the SASS scripts: finds ptxas and a disassembler that reads the cubins
# it makes, compiles PTX to sm_90 SASS and lists a kernel's instructions.  ptxas's treatment of
# %clock is observed behaviour, not a documented promise, so these scripts look at what it does.
#
# The disassembler (nvdisasm, else cuobjdump) is looked for in $MGPU_SASS_DIR, beside the first
# ptxas found, on PATH and in /usr/local/cuda/bin; the ptxas used is the one in the
# disassembler's folder when there is one (a disassembler reads only the cubins of its own
# toolkit's age), else the first found.  A ptxas older than the PTX's .version gets the module
# at the version it names in its refusal ("current version is '7.8'"): the instrumentation
# uses nothing newer, and the check only compares what ptxas makes of one text.
# After sass_find: $SASS_PTXAS, $SASS_DIS ("" without one), $SASS_DIS_KIND (nvdisasm|cuobjdump).

sass_find() {
  local d p
  SASS_PTXAS=""; SASS_DIS=""; SASS_DIS_KIND=""
  local first_ptxas
  first_ptxas=$(command -v ptxas || true)
  [ -z "$first_ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && first_ptxas=/usr/local/cuda/bin/ptxas
  for d in ${MGPU_SASS_DIR:-} ${first_ptxas:+$(dirname "$first_ptxas")} $(dirname "$(command -v nvdisasm 2>/dev/null || echo /nonexistent/x)") \
           $(dirname "$(command -v cuobjdump 2>/dev/null || echo /nonexistent/x)") /usr/local/cuda/bin; do
    for p in nvdisasm cuobjdump; do
      if [ -x "$d/$p" ]; then
        SASS_DIS=$d/$p; SASS_DIS_KIND=$p
        [ -x "$d/ptxas" ] && SASS_PTXAS=$d/ptxas
        break 2
      fi
    done
  done
  [ -n "$SASS_PTXAS" ] || SASS_PTXAS=$first_ptxas
  [ -n "$SASS_PTXAS" ]
}

# sass_arch FILE: the module's own target (sm_90, or sm_90a for Hopper-only code)
sass_arch() {
  local a
  a=$(sed -n 's/^\.target[[:space:]]*\(sm_90a\{0,1\}\).*/\1/p' "$1" | head -1)
  echo "${a:-sm_90}"
}

# sass_compile IN.ptx OUT.cubin LOG: ptxas -v into LOG; 0 on success
sass_compile() {
  local in=$1 out=$2 log=$3 arch cur tmp
  arch=$(sass_arch "$in")
  if "$SASS_PTXAS" -arch="$arch" -v "$in" -o "$out" >"$log" 2>&1; then return 0; fi
  cur=$(sed -n "s/.*current version is '\([0-9.]*\)'.*/\1/p" "$log" | head -1)
  [ -n "$cur" ] || return 1
  tmp=$out.v.ptx
  sed "s/^\.version .*/.version $cur/" "$in" >"$tmp"
  "$SASS_PTXAS" -arch="$arch" -v "$tmp" -o "$out" >"$log" 2>&1
}

# sass_regs LOG KERNEL: the registers ptxas -v reported for KERNEL
sass_regs() {
  awk -v k="$2" '/Compiling entry function/ { cur = $0; sub(/.*function ./, "", cur); sub(/. for .*/, "", cur) }
                 /Used [0-9]+ registers/ && cur == k { for (i = 1; i <= NF; i++) if ($i == "Used") print $(i + 1); exit }' "$1"
}

# sass_insns CUBIN KERNEL: KERNEL's instructions, one a line ("@P0 STG.E.64 [R4.64+0xc], R6"),
# without the padding after its last EXIT/BRA (the branch to itself and the NOPs); labels as
# lines ".L_x_N:"
sass_insns() {
  local cubin=$1 k=$2
  if [ "$SASS_DIS_KIND" = nvdisasm ]; then
    "$SASS_DIS" -c "$cubin" 2>/dev/null
  else
    "$SASS_DIS" -sass "$cubin" 2>/dev/null
  fi | awk -v k="$k" '
    /^[[:space:]]*(\/\/-+ |Function : )/ { inside = ($0 ~ ("[ .]text\\." k "[ ]") || $0 ~ ("Function : " k "$")) ; next }
    inside && /^\.L_x_[0-9]+:/ { n++; line[n] = $1; next }
    inside && /\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// {
      s = $0; sub(/^[[:space:]]*\/\*[0-9a-f]+\*\/[[:space:]]*/, "", s); sub(/[[:space:]]*;.*$/, "", s)
      if (s == "") next
      n++; line[n] = s
    }
    END {
      last = n
      while (last > 0 && (line[last] ~ /^NOP/ || line[last] ~ /^\.L_x/)) last--
      if (last > 0 && line[last] ~ /^BRA/) last--  # the branch to itself after the last EXIT
      while (last > 0 && line[last] ~ /^\.L_x/) last--
      for (i = 1; i <= last; i++) print line[i]
    }'
}
