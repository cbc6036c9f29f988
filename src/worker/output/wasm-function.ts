/**
 * The smallest WebAssembly modules: one exported function `(i32) -> i32` over one exported memory,
 * written as bytecode by hand. Used for the few SIMD loops that JavaScript cannot express fast
 * (ascii-line-scan.ts and crlf-to-lf.ts, both on the engine thread). No toolchain, no binary blobs:
 * each body is a commented array of instructions next to the code that calls it.
 */

/** An unsigned LEB128 number, as WebAssembly encodes sizes, indices and offsets. */
export function uleb128(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  do {
    const byte = rest & 0x7f;
    rest >>>= 7;
    bytes.push(rest === 0 ? byte : byte | 0x80);
  } while (rest !== 0);
  return bytes;
}

/** `v128.const` with every lane `byte` (the instruction and its 16-byte immediate). */
export function splat(byte: number): number[] {
  return [0xfd, 0x0c, ...new Array<number>(16).fill(byte)];
}

/** `i32.store` at the constant address `offset` plus the i32 below the value on the stack. */
export function store(offset: number): number[] {
  return [0x36, 0x02, ...uleb128(offset)];
}

/** A section: id, byte length, contents. */
function section(id: number, contents: number[]): number[] {
  return [id, ...uleb128(contents.length), ...contents];
}

/** A name as WebAssembly spells it: length, then its bytes. */
function name(text: string): number[] {
  return [text.length, ...[...text].map((c) => c.charCodeAt(0))];
}

/** Bytes of memory per WebAssembly page. */
export const PAGE_BYTES = 64 * 1024;

/**
 * A module exporting `memory` (`memoryBytes`, rounded up to pages) and `fn`, a function
 * `(i32) -> i32` whose code is `body` (its locals declaration, instructions and final `end`).
 */
export function moduleBytes(body: number[], memoryBytes: number): Uint8Array {
  const pages = Math.ceil(memoryBytes / PAGE_BYTES);
  // biome-ignore format: one section per line
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
    ...section(1, [0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f]), // type 0: (i32) -> i32
    ...section(3, [0x01, 0x00]), // function 0 has type 0
    ...section(5, [0x01, 0x00, ...uleb128(pages)]), // one memory, no maximum
    ...section(7, [0x02, ...name('memory'), 0x02, 0x00, ...name('fn'), 0x00, 0x00]), // exports
    ...section(10, [0x01, ...uleb128(body.length), ...body]), // the code
  ]);
}

/** The part of the WebAssembly JS API used here (the project's type libraries do not declare it). */
interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

/** An instantiated {@link moduleBytes} module. */
export interface WasmFunction {
  fn: (argument: number) => number;
  memory: ArrayBuffer;
}

/**
 * Instantiates `bytes` synchronously; undefined where WebAssembly (or its SIMD, which needs SSE4.1 on
 * x64) is not available — callers then take their JavaScript path.
 */
export function instantiate(bytes: Uint8Array): WasmFunction | undefined {
  const api = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
  try {
    if (api === undefined || !api.validate(bytes)) return undefined;
    const { exports } = new api.Instance(new api.Module(bytes));
    return {
      fn: exports.fn as (argument: number) => number,
      memory: (exports.memory as { buffer: ArrayBuffer }).buffer,
    };
  } catch {
    return undefined;
  }
}
