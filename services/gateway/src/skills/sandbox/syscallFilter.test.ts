import { describe, expect, it } from 'vitest'
import { NoSyscallFilterError, REFUSED_SYSCALLS, syscallFilter } from './syscallFilter.js'

/** The program as [code, jt, jf, k] rows. */
function rows(program: Buffer): Array<[number, number, number, number]> {
  const out: Array<[number, number, number, number]> = []
  for (let at = 0; at < program.length; at += 8) out.push([program.readUInt16LE(at), program.readUInt8(at + 2), program.readUInt8(at + 3), program.readUInt32LE(at + 4)])
  return out
}

/**
 * Runs the classic BPF program over one seccomp_data, as the kernel does for
 * the instructions it uses (load word, jumps on K, return), and gives back
 * the action it returns. The system test runs it in the kernel itself.
 */
function verdict(program: Buffer, call: { arch: number; nr: number; arg0?: number }): number {
  const code = rows(program)
  let a = 0
  for (let pc = 0; pc < code.length; pc++) {
    const [op, jt, jf, k] = code[pc]!
    if (op === 0x20) a = k === 0 ? call.nr : k === 4 ? call.arch : k === 16 ? (call.arg0 ?? 0) : Number.NaN
    else if (op === 0x15) pc += a === k ? jt : jf
    else if (op === 0x35) pc += a >>> 0 >= k ? jt : jf
    else if (op === 0x45) pc += (a & k) !== 0 ? jt : jf
    else if (op === 0x06) return k
    else throw new Error(`instruction ${op.toString(16)} at ${pc} is not one the filter uses`)
  }
  throw new Error('the program ran off its end')
}

const X64 = 0xc000003e
const ALLOW = 0x7fff0000
const EPERM = 0x00050001

describe('syscallFilter', () => {
  it('refuses each listed call with EPERM and allows others, on x86_64', () => {
    const program = syscallFilter('x64')
    expect(program.length % 8).toBe(0)
    expect(verdict(program, { arch: X64, nr: 319 })).toBe(EPERM) // memfd_create
    expect(verdict(program, { arch: X64, nr: 29 })).toBe(EPERM) // shmget
    expect(verdict(program, { arch: X64, nr: 272 })).toBe(EPERM) // unshare
    expect(verdict(program, { arch: X64, nr: 0 })).toBe(ALLOW) // read
    expect(verdict(program, { arch: X64, nr: 9 })).toBe(ALLOW) // mmap
    expect(verdict(program, { arch: X64, nr: 435 })).toBe(0x00050000 | 38) // clone3: ENOSYS
    expect(REFUSED_SYSCALLS).toContain('memfd_create')
  })

  it('refuses clone with a new-namespace flag and allows a plain fork or thread', () => {
    const program = syscallFilter('x64')
    expect(verdict(program, { arch: X64, nr: 56, arg0: 0x10000000 | 17 })).toBe(EPERM) // CLONE_NEWUSER
    expect(verdict(program, { arch: X64, nr: 56, arg0: 0x40000000 })).toBe(EPERM) // CLONE_NEWNET
    expect(verdict(program, { arch: X64, nr: 56, arg0: 17 })).toBe(ALLOW) // fork
    expect(verdict(program, { arch: X64, nr: 56, arg0: 0x003d0f00 })).toBe(ALLOW) // a thread's flags
  })

  it('allows AF_UNIX sockets only: TCP, UDP, netlink and packet sockets fail with EAFNOSUPPORT', () => {
    const program = syscallFilter('x64')
    const EAFNOSUPPORT = 0x00050000 | 97
    expect(verdict(program, { arch: X64, nr: 41, arg0: 1 })).toBe(ALLOW) // AF_UNIX
    for (const family of [2, 10, 16, 17]) expect(verdict(program, { arch: X64, nr: 41, arg0: family }), `family ${family}`).toBe(EAFNOSUPPORT)
    expect(verdict(syscallFilter('arm64'), { arch: 0xc00000b7, nr: 198, arg0: 2 })).toBe(EAFNOSUPPORT)
  })

  it('kills a call made through another ABI, and refuses x32 numbers', () => {
    const program = syscallFilter('x64')
    expect(verdict(program, { arch: 0x40000003, nr: 1 })).toBe(0x80000000) // i386
    expect(verdict(program, { arch: X64, nr: 0x40000000 + 319 })).toBe(EPERM)
  })

  it('has a program for arm64, with its own numbers', () => {
    const program = syscallFilter('arm64')
    const AARCH64 = 0xc00000b7
    expect(verdict(program, { arch: AARCH64, nr: 279 })).toBe(EPERM) // memfd_create
    expect(verdict(program, { arch: AARCH64, nr: 319 })).toBe(ALLOW) // not memfd_create there
    expect(verdict(program, { arch: AARCH64, nr: 220, arg0: 0x10000000 })).toBe(EPERM) // clone NEWUSER
    expect(verdict(program, { arch: X64, nr: 0 })).toBe(0x80000000)
  })

  it('has none for another architecture: nothing runs unfiltered', () => {
    expect(() => syscallFilter('riscv64')).toThrow(NoSyscallFilterError)
    expect(() => syscallFilter('riscv64')).toThrow(/no system-call filter for the riscv64 architecture/)
  })
})
