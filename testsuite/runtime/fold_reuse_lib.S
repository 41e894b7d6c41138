/* fold_reuse.c's two libraries, the same code: work calls step1, which
   calls step2, which calls malloc.  With SPLIT (libfold_a.so) step1 and
   step2 are two functions (two FDEs); without (libfold_b.so) they are one,
   so the fold of recursion (fold_recursion=1) takes step2's frame for a
   second frame of step1's function and folds.  Loaded at one address in
   turns, the two have the same return addresses but different
   functions.  Frame pointers kept: the fast unwinder's frames.  */
        .text
        .globl work
        .type work,@function
work:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        call step1
        pop %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size work, .-work

        .p2align 4
step1:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        call step2
        pop %rbp
        .cfi_def_cfa %rsp, 8
        ret
#ifdef SPLIT
        .cfi_endproc
#endif
        .p2align 4
step2:
#ifdef SPLIT
        .cfi_startproc
#else
        .cfi_def_cfa %rsp, 8
        .cfi_same_value %rbp
#endif
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        mov $64, %edi
        call malloc@PLT
        pop %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .section .note.GNU-stack,"",@progbits
