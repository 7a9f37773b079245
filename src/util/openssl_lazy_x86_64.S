// The OpenSSL stubs of openssl_lazy.h: for each function of openssl_lazy_symbols.inc, a global
// symbol of that name that jumps through nvmlx_openssl_fns[i], or, while that is null, to
// nvmlx_openssl_resolve(i) with every argument register saved, then to what it returned.
  .text

// r10 and r11 carry no arguments in the SysV x86-64 ABI; rax may (al: vector registers used by a
// variadic call), so it is saved with the argument registers.
.macro NVMLX_STUB name, index
  .globl \name
  .type \name, @function
  .p2align 4
\name:
  movq nvmlx_openssl_fns+8*\index(%rip), %r11
  testq %r11, %r11
  jz 1f
  jmp *%r11
1:
  movl $\index, %r10d
  jmp nvmlx_openssl_slow
  .size \name, .-\name
.endm

#define NVMLX_OPENSSL_FN(name) NVMLX_STUB name, __COUNTER__
#include "util/openssl_lazy_symbols.inc"
#undef NVMLX_OPENSSL_FN

  .type nvmlx_openssl_slow, @function
  .p2align 4
nvmlx_openssl_slow:
  pushq %rbp
  movq %rsp, %rbp
  pushq %rdi
  pushq %rsi
  pushq %rdx
  pushq %rcx
  pushq %r8
  pushq %r9
  pushq %rax
  subq $136, %rsp  // 8 xmm registers, and 16-byte alignment for the call
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  movl %r10d, %edi
  call nvmlx_openssl_resolve@PLT
  movq %rax, %r11
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  addq $136, %rsp
  popq %rax
  popq %r9
  popq %r8
  popq %rcx
  popq %rdx
  popq %rsi
  popq %rdi
  popq %rbp
  jmp *%r11
  .size nvmlx_openssl_slow, .-nvmlx_openssl_slow

  .section .note.GNU-stack, "", @progbits
