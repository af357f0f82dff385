# ptx_keep.awk: the part of an nvcc PTX module that some of its kernels need, so that the corpus
# commits a kernel's PTX and not the whole program's (the host-side helpers' kernels, random-number
# tables): the header (.version, .target, .address_size), the .entry blocks whose name holds KEEP
# (a substring), and the module-scope declarations those blocks name (an `.extern .func` such as
# vprintf's among them).  A module with .func bodies is refused (none of the programs trimmed has
# one: their kernels inline everything).
#   awk -v KEEP=GemmUniversal -f ptx_keep.awk FILE.ptx FILE.ptx > KEPT.ptx   (the file twice)
# With -v NAMES=FILE (kernel names, one a line: those a recording launched), an entry is kept only
# if it is also named there (a program that compiles many variants of a kernel and runs a few).
function entry_name(line,   s) {
  s = line
  sub(/^(\.visible |\.weak )?\.entry[ \t]+/, "", s)
  sub(/[ \t(].*$/, "", s)
  return s
}
# braces opened less closed on a line (vector operands close on their line; inline asm's
# { ... } blocks nest inside a body, so a body ends where its depth is back to 0)
function depth_change(line,   o, c) {
  sub(/\/\/.*$/, "", line)
  o = gsub(/\{/, "", line)
  c = gsub(/\}/, "", line)
  return o - c
}
function decl_name(line,   s) {
  s = line
  sub(/[ \t]*(=.*)?;[ \t]*$/, "", s) # the initialiser and the semicolon
  sub(/\[[0-9]*\]$/, "", s)          # an array's size
  sub(/^.*[ \t]/, "", s)             # the last word is the name
  return s
}
BEGIN {
  if (NAMES != "") {
    while ((getline line < NAMES) > 0) if (line != "") named[line] = 1
    close(NAMES)
  }
}
function wanted(name) { return index(name, KEEP) > 0 && (NAMES == "" || (name in named)) }
# the name an .extern .func declares: after its return parameters, before its own
function func_name(line,   s) {
  s = line
  sub(/^\.extern[ \t]+\.func[ \t]*/, "", s)
  if (s ~ /^\(/) sub(/^\([^)]*\)[ \t]*/, "", s)
  sub(/[ \t(;].*$/, "", s)
  return s
}
FNR == 1 { pass++; inside = 0; header = 1; extern = 0 }
# an .extern .func declaration (no body): to its ';', printed in pass 2 if a kept body calls it
extern || (!inside && /^\.extern[ \t]+\.func/) {
  if (!extern) { extern = 1; decl = ""; fname = func_name($0) }
  decl = decl $0 "\n"
  if ($0 ~ /;[ \t]*$/) {
    extern = 0
    if (pass == 2 && index(body, fname) > 0) print decl
  }
  next
}
pass == 1 {
  if (!inside && /^(\.visible |\.weak )?\.func/) { print "ptx_keep.awk: " FILENAME " has .func bodies" > "/dev/stderr"; exit 2 }
  if (!inside && /^(\.visible |\.weak )?\.entry/) { inside = 1; opened = 0; depth = 0; kept = wanted(entry_name($0)); if (kept) nkept++ }
  if (inside && kept) body = body "\n" $0
  if (inside) { depth += depth_change($0); if (depth > 0) opened = 1; if (opened && depth == 0) inside = 0 }
  next
}
pass == 2 {
  if (header && /^(\.version|\.target|\.address_size|\/\/|[ \t]*$)/) { print; next }
  header = 0
  if (!inside && /^(\.visible |\.weak )?\.entry/) { inside = 1; opened = 0; depth = 0; kept = wanted(entry_name($0)) }
  if (inside) {
    if (kept) print
    depth += depth_change($0)
    if (depth > 0) opened = 1
    if (opened && depth == 0) { inside = 0; if (kept) print "" }
    next
  }
  if (/^(\.visible |\.weak |\.extern )?\.(global|const|shared)/ && index(body, decl_name($0)) > 0) print $0 "\n"
}
END {
  if (pass == 2 && !nkept) { print "ptx_keep.awk: no .entry holds " KEEP > "/dev/stderr"; exit 1 }
}
