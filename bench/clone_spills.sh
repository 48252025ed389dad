#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/clone_spills.sh [BUILD_DIR] [OBJECT...]: per function of the direction generator's
# objects (default: BUILD_DIR/kernels/CMakeFiles/dpzo_kernels.dir/cpu/*.o; BUILD_DIR
# defaults to build), the instructions that touch the stack, counted in the disassembly
# (objdump -d), so that each ISA version of a hot loop (target_clones' fn.avx2 / fn.avx512f /
# fn.default, philox.c's raw_blocks_avx2 / _avx512 / _sse2 / _portable) can be checked for
# spills on the CPU and compiler at hand (issue 18: a loop whose AVX2 clone keeps its
# vectors on the stack). Columns:
#   insns      instructions in the function
#   stack      instructions with an %rsp- (or, where %rbp is the frame pointer, %rbp-)
#              relative memory operand (lea excluded: it touches no memory)
#   iloops     innermost loops: address ranges [target, jump] of the conditional backward
#              jumps that contain no other such range (the hot loops)
#   il_insn    instructions in the innermost loops
#   il_stack   stack-touching instructions in them
#   il_store   of those, stores to a fixed slot (no index register): spills of values that
#              change in the loop
#   il_load    of those, loads or folded operands from a fixed slot: reloads (mostly of
#              vector constants hoisted out of the loop that did not fit in the registers)
#   worst      the most stack-touching instructions in one innermost loop
#   (an indexed access such as (%rsp,%rax,8) is a loop over a local array, the intended
#   traffic of a staged loop: counted in il_stack only)
# DPZO_SPILL_LOOPS=1 adds a line per innermost loop (its address range, instructions and
# stack-touching instructions; disassemble the range to see them); DPZO_SPILL_FILTER=REGEX
# keeps only the matching lines. Extra objects (e.g.
# build/kernels/CMakeFiles/dpzo_kernels.dir/cpu/chacha.c.o) may be named after the build
# directory; then only those are read. Needs objdump (binutils) and a POSIX awk.
set -euo pipefail
bdir=${1:-build}
shift || true
if [ $# -gt 0 ]; then
    objs=("$@")
else
    objs=("$bdir"/kernels/CMakeFiles/dpzo_kernels.dir/cpu/*.o)
fi
printf '%-34s %6s %6s %6s %7s %8s %8s %8s %6s\n' function insns stack iloops il_insn il_stack il_store il_load worst
for o in "${objs[@]}"; do
    [ -f "$o" ] || { echo "clone_spills: no object $o (build $bdir first)" >&2; exit 1; }
    printf '# %s\n' "${o#"$bdir"/}"
    objdump -d --no-show-raw-insn "$o" | awk -v show="${DPZO_SPILL_LOOPS:-0}" '
    function hex(h,   i, v) {
        v = 0
        for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
        return v
    }
    function flush(   i, j, k, inner, st) {
        if (fn == "" || n == 0) return
        # loops: the address ranges [target, jump] of the conditional backward jumps;
        # innermost: those that contain no other (the hot loops)
        nl = 0
        for (i = 1; i <= n; i++)
            if (tgt[i] != "" && cond[i] && tgt[i] <= addr[i] && tgt[i] >= addr[1]) {
                nl++; lo[nl] = tgt[i]; hi[nl] = addr[i]
            }
        delete inl
        nin = 0
        worst = 0
        lp = lstk = lst = lld = 0
        for (k = 1; k <= nl; k++) {
            inner = 1
            for (j = 1; j <= nl; j++)
                if (j != k && lo[j] >= lo[k] && hi[j] <= hi[k] && (lo[j] != lo[k] || hi[j] != hi[k])) {
                    inner = 0; break
                }
            if (!inner) continue
            nin++
            here = 0
            lpn = 0
            for (i = 1; i <= n; i++) {
                if (addr[i] < lo[k] || addr[i] > hi[k] || (i in inl)) continue
                inl[i] = 1
                lp++
                lpn++
                if (!stk_op[i]) continue
                lstk++; here++
                if (txt[i] !~ /\(%r[sb]p,%/) {
                    # a fixed slot: a store to it (the destination, last operand, is the
                    # slot) or a load / folded operand from it
                    if (txt[i] ~ /\(%r[sb]p\)$/) lst++; else lld++
                }
            }
            if (here > worst) worst = here
            if (show) {
                nloops++
                lines[nloops] = sprintf("    loop %x..%x: %d insns, %d stack", lo[k], hi[k], lpn, here)
            }
        }
        tot = stk = 0
        for (i = 1; i <= n; i++) { tot++; stk += stk_op[i] }
        printf "%-34s %6d %6d %6d %7d %8d %8d %8d %6d\n", fn, tot, stk, nin, lp, lstk, lst, lld, worst
        for (k = 1; k <= nloops; k++) print lines[k]
        nloops = 0
    }
    /^[0-9a-f]+ <.*>:$/ {
        flush()
        fn = $2; gsub(/[<>:]/, "", fn); n = 0; fp = 0
        next
    }
    /^ +[0-9a-f]+:\t/ {
        line = $0
        sub(/^ +/, "", line)
        a = line; sub(/:.*/, "", a)
        t = line; sub(/^[0-9a-f]+:\t/, "", t)
        if (t ~ /^(\(bad\)|$)/) next
        n++
        addr[n] = hex(a)
        txt[n] = t
        tgt[n] = ""
        cond[n] = (t !~ /^jmp/)
        if (t ~ /^(j[a-z]+|loop[a-z]*) +[0-9a-f]+ </) {
            split(t, f, /[ \t]+/)
            tgt[n] = hex(f[2])
        }
        if (t ~ /^mov +%rsp,%rbp$/) fp = 1
        stk_op[n] = (t !~ /^lea/ && (t ~ /\(%rsp[,)]/ || (fp && t ~ /\(%rbp[,)]/))) ? 1 : 0
    }
    END { flush() }' | grep -E "${DPZO_SPILL_FILTER:-.}" || true
done
