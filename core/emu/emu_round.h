/* emu_round.h - IEEE arithmetic under PTX's directed rounding modifiers
 * (.rz, .rm, .rp), the round-to-odd fma for halves, and the .ftz flush, for
 * the CPU executor. */
#ifndef MGPU_EMU_ROUND_H
#define MGPU_EMU_ROUND_H

#include <math.h>
#include <stdint.h>

/* The operation of a PTX float instruction, computed in f32 (f64 = 0) or f64
 * under rounding modifier `rnd` (a mh_ptx_rnd: MH_RND_RZ, MH_RND_RM or MH_RND_RP).
 * op: 'a' add, 's' sub, 'm' mul, 'f' fma (a*b+c, one rounding), 'd' div,
 * 'q' sqrt, 'r' rcp. */
double mh_round_op(int op, int f64, int rnd, double a, double b, double c);

/* cvt under `rnd`: an f64 to f32 (narrow), and a 64-bit integer x_int
 * (signed or not) to f32 (to_f32) or f64 (int). Both return the rounded value
 * as a double. */
double mh_round_narrow(int rnd, double x);
double mh_round_int(int rnd, int to_f32, int is_signed, uint64_t x_int);

/* cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32: f32 bits x to tf32 (f32 bits with the low 13 mantissa
 * bits zero) under rnd (MH_RND_RNA ties away from zero, MH_RND_RN ties to even, MH_RND_RZ); form holds
 * MH_CVT_SATFINITE (an infinity or an overflow gives the largest finite tf32 of its sign) and
 * MH_CVT_RELU (a negative value gives +0). A NaN stays a NaN: quiet, its sign and payload's top bits
 * kept (with .relu the canonical NaN's, 0x7fffe000). Subnormals are rounded, not flushed. */
uint32_t mh_round_tf32(uint32_t x, int rnd, int form);

/* cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2} of one value x (an f32's or f16's, exact in a double) to an fp8's
 * byte (e5m2 selects the format): to nearest, ties to even; an infinity or a value beyond the largest
 * finite one (448, 57344) gives that of its sign; a NaN gives 0x7f; with .relu (form's MH_CVT_RELU) a
 * negative value gives +0.  Integer arithmetic on exact doubles: no FPU mode is involved. */
uint32_t mh_f8_from_double(double x, int e5m2, int form);

/* cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} of one fp8 byte to an f16's bits (exact: every fp8 value is an
 * f16); a NaN gives 0x7fff, and with .relu a negative value +0. */
uint16_t mh_f16_from_f8(uint32_t byte, int e5m2, int form);

/* a*b+c rounded to odd in f64 (toward zero, then the last bit set when
 * inexact), for a and b of at most 26 significant bits (halves): rounding
 * that to f16 or bf16 to nearest gives the correctly rounded half-precision
 * fma (53 >= 2p + 2), where going through f32 or a nearest-rounded f64 can
 * land on a tie that the exact value is not on. */
double mh_fma_odd(double a, double b, double c);

/* .ftz: a value below the type's smallest normal (a subnormal) becomes a
 * zero of the same sign; mh_ftz32 for f32, mh_ftz(x, 0x1p-14) for f16. */
static inline double mh_ftz(double x, double min_normal) { return fabs(x) < min_normal ? copysign(0.0, x) : x; }
static inline double mh_ftz32(double x) { return mh_ftz(x, 0x1p-126); }

#endif
