// The seccomp filter every sandbox runs under (bwrap --seccomp), as the
// classic BPF program the kernel takes: struct sock_filter { u16 code; u8 jt;
// u8 jf; u32 k } in the machine's (little-endian) byte order, evaluated over
// struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6] }.
//
// Why: with allowSpawn a skill runs any binary of /usr, and the run's watch
// counts what processes hold (resident memory, tasks) and what its /tmp
// holds. Memory held by the kernel for no process escaped it: a memfd or a
// SysV shared-memory segment written and never mapped, a message queue, a
// keyring; a skill put 512 MiB in a run of memoryMb 16 (found by review). And
// nested user namespaces gave it a mount namespace of its own. Those calls
// are refused here with EPERM; nothing a skill needs uses them (node and its
// libuv fall back when io_uring is refused). So are sockets of any family
// but AF_UNIX (EAFNOSUPPORT): the run has no network, yet TCP on its own
// loopback held 700 MiB in kernel socket buffers, which no process's
// resident memory shows (found by review).

/** The file descriptor bwrap reads the program from (spawnSandbox gives the child a pipe there). */
export const SYSCALL_FILTER_FD = 3

const BPF_LD_W_ABS = 0x20
const BPF_JEQ_K = 0x15
const BPF_JGE_K = 0x35
const BPF_JSET_K = 0x45
const BPF_RET_K = 0x06

const SECCOMP_RET_KILL_PROCESS = 0x80000000
const SECCOMP_RET_ERRNO = 0x00050000
const SECCOMP_RET_ALLOW = 0x7fff0000
const EPERM = 1
const ENOSYS = 38
const EAFNOSUPPORT = 97
const AF_UNIX = 1

/** Offsets in struct seccomp_data; args[0]'s low word comes first on a little-endian machine. */
const NR = 0
const ARCH = 4
const ARG0_LOW = 16

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
const NEW_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

/** x86_64 numbers from asm/unistd_64.h, arm64 from asm-generic/unistd.h. */
interface SyscallTable {
  /** AUDIT_ARCH_* of the native ABI: another ABI (32-bit calls) is killed. */
  auditArch: number
  /** Numbers at or above this belong to another ABI on the same arch (x32). */
  foreignFrom?: number
  refused: Record<string, number>
  clone: number
  clone3: number
  socket: number
}

const REFUSED = [
  'memfd_create', 'memfd_secret', 'shmget', 'msgget', 'mq_open',
  'add_key', 'request_key', 'keyctl',
  'unshare', 'setns',
  'io_uring_setup', 'userfaultfd', 'bpf', 'perf_event_open',
] as const

const TABLES: Record<string, SyscallTable> = {
  x64: {
    auditArch: 0xc000003e,
    foreignFrom: 0x40000000,
    refused: { memfd_create: 319, memfd_secret: 447, shmget: 29, msgget: 68, mq_open: 240, add_key: 248, request_key: 249, keyctl: 250, unshare: 272, setns: 308, io_uring_setup: 425, userfaultfd: 323, bpf: 321, perf_event_open: 298 },
    clone: 56,
    clone3: 435,
    socket: 41,
  },
  arm64: {
    auditArch: 0xc00000b7,
    refused: { memfd_create: 279, memfd_secret: 447, shmget: 194, msgget: 186, mq_open: 180, add_key: 217, request_key: 218, keyctl: 219, unshare: 97, setns: 268, io_uring_setup: 425, userfaultfd: 282, bpf: 280, perf_event_open: 241 },
    clone: 220,
    clone3: 435,
    socket: 198,
  },
}

/** The system calls every sandbox is refused (docs/skills.md), by name. */
export const REFUSED_SYSCALLS: readonly string[] = REFUSED

export class NoSyscallFilterError extends Error {
  override name = 'NoSyscallFilterError'
}

type Instruction = [code: number, jt: number, jf: number, k: number]

/**
 * The compiled program for `arch` (process.arch names): refused calls fail
 * with EPERM, clone with any new-namespace flag too, socket of any family
 * but AF_UNIX with EAFNOSUPPORT, clone3 with ENOSYS (its
 * flags sit in memory a filter cannot read; the C library then uses clone),
 * a call of another ABI kills the process, anything else is allowed.
 */
export function syscallFilter(arch: string = process.arch): Buffer {
  const table = TABLES[arch]
  if (!table) throw new NoSyscallFilterError(`no system-call filter for the ${arch} architecture (there is one for ${Object.keys(TABLES).join(' and ')})`)
  const refuse = (errno: number): Instruction => [BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno]
  const program: Instruction[] = [
    [BPF_LD_W_ABS, 0, 0, ARCH],
    [BPF_JEQ_K, 1, 0, table.auditArch],
    [BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS],
    [BPF_LD_W_ABS, 0, 0, NR],
  ]
  if (table.foreignFrom !== undefined) program.push([BPF_JGE_K, 0, 1, table.foreignFrom], refuse(EPERM))
  for (const name of REFUSED) program.push([BPF_JEQ_K, 0, 1, table.refused[name]!], refuse(EPERM))
  program.push(
    [BPF_JEQ_K, 0, 1, table.clone3],
    refuse(ENOSYS),
    // socket: past the next four (load, test, allow, refuse) unless it is socket; only AF_UNIX is allowed.
    [BPF_JEQ_K, 0, 4, table.socket],
    [BPF_LD_W_ABS, 0, 0, ARG0_LOW],
    [BPF_JEQ_K, 0, 1, AF_UNIX],
    [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
    refuse(EAFNOSUPPORT),
    // clone: past the next four (load, test, refuse, allow) unless it is clone.
    [BPF_JEQ_K, 0, 4, table.clone],
    [BPF_LD_W_ABS, 0, 0, ARG0_LOW],
    [BPF_JSET_K, 0, 1, NEW_NAMESPACE_FLAGS],
    refuse(EPERM),
    [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
    [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
  )
  const bytes = Buffer.alloc(program.length * 8)
  program.forEach(([code, jt, jf, k], i) => {
    bytes.writeUInt16LE(code, i * 8)
    bytes.writeUInt8(jt, i * 8 + 2)
    bytes.writeUInt8(jf, i * 8 + 3)
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4)
  })
  return bytes
}
