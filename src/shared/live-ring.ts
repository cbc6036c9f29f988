/**
 * The live-output ring (SPEC §2, data plane): shared memory that the engine thread writes batches of
 * sanitized output into and the host thread reads them from, so a flood's text never goes through a
 * message. The host acknowledges by moving its read position, which the engine reads from the same
 * memory. While output flows, the host keeps reading on a timer of its own; only a host that has gone
 * to sleep gets a wake-up message on the data port. So during a flood no message crosses at all.
 *
 * Why: posting a batch's strings costs the engine thread a structured-clone serialization and the host
 * a deserialization, ~100 and ~80 ms per 100 MiB measured with 64 KiB batches of 4 KiB strings. A copy
 * into this ring costs the engine ~6 ms, and a decode out of it the host ~10–25 ms. And every message
 * wakes the other thread, which costs both sides 25–50 µs on this VM. On two shared CPUs all of that
 * is taken from the program writing the output (docs/decisions/0002-live-output-ring.md).
 *
 * Layout: a power-of-two number of record bytes, then four Int32 control slots. A record is a 16-byte
 * header (payload bytes, characters dropped before it, whether the payload is ASCII) and its payload,
 * padded to 8 bytes, and it may wrap around the end. Payloads start 8-byte aligned because V8 copies
 * into shared memory word by word only when source and target are aligned alike, and byte by byte
 * otherwise: 4.5 against 39 ms per 100 MiB. The payload is text as subscribers get it, in
 * UTF-8: the engine has already turned CRLF into LF, so the host only decodes it. Positions are byte
 * counters modulo 2^32, masked to the ring. The engine alone writes records and WRITTEN; the host
 * alone writes READ. Both slots are stored with `Atomics` after the bytes they cover, which makes those
 * bytes visible to the other thread.
 */

/** Record space of a ring (a power of two). */
export const LIVE_RING_BYTES = 2 * 1024 * 1024;
/**
 * The engine stops writing (and counts what it drops instead) once this many bytes are unread — a
 * stuck or slow subscriber …
 */
export const LIVE_HIGH_WATERMARK_BYTES = 1024 * 1024;
/** … and resumes once the host has read all but this many. */
export const LIVE_LOW_WATERMARK_BYTES = 256 * 1024;

/**
 * A record's header, four words: payload bytes; characters dropped before the record (as subscribers
 * count them), low 32 bits; 1 if the payload is ASCII (decoded as Latin-1, a plain copy), else 0; the
 * dropped characters' high bits (a host stopped for a minute during a flood can miss more than 2^32).
 */
const HEADER_BYTES = 16;
/** Records start at multiples of this (see the layout above). */
const RECORD_ALIGN = 8;
/** Control slots, after the records. */
const CONTROL_SLOTS = 4;
/** Bytes published by the engine (stored after the record it completes). */
const WRITTEN = 0;
/** Bytes the host has read and handed on: its acknowledgement. */
const READ = 1;
/**
 * 1 while the host will look at the ring again without being told: a wake-up message is on its way,
 * or its read timer is armed. 0 once it has gone to sleep.
 */
const HOST_AWAKE = 2;
/** 1 while the engine is paused and wants to hear that the host has read down to the low watermark. */
const RESUME_WANTED = 3;

/** Views of one ring's memory. */
class RingMemory {
  /** Record space as bytes. */
  readonly bytes: Buffer;
  /** Record space as Int32 (headers are 4-byte aligned). */
  readonly words: Int32Array;
  readonly control: Int32Array;
  readonly mask: number;

  constructor(readonly buffer: SharedArrayBuffer) {
    const capacity = buffer.byteLength - 4 * CONTROL_SLOTS;
    if (capacity < 64 || (capacity & (capacity - 1)) !== 0) {
      throw new RangeError(`live ring: record space must be a power of two ≥ 64 bytes, got ${capacity}`);
    }
    this.bytes = Buffer.from(buffer, 0, capacity);
    this.words = new Int32Array(buffer, 0, capacity / 4);
    this.control = new Int32Array(buffer, capacity, CONTROL_SLOTS);
    this.mask = capacity - 1;
  }

  get capacity(): number {
    return this.mask + 1;
  }

  /** The Int32 at byte counter `at` (a multiple of 4). */
  word(at: number): number {
    return this.words[(at & this.mask) >>> 2]!;
  }

  setWord(at: number, value: number): void {
    this.words[(at & this.mask) >>> 2] = value;
  }
}

/** Byte counter `at` advanced past a record of `payload` bytes, padded (modulo 2^32, as an Int32). */
function afterRecord(at: number, payload: number): number {
  return (at + HEADER_BYTES + payload + RECORD_ALIGN - 1) & -RECORD_ALIGN;
}

/** The engine's end of a ring. */
export class LiveRingWriter {
  private readonly memory: RingMemory;
  /** Bytes published (this thread's copy of WRITTEN). */
  private written: number;

  /**
   * A new ring with `capacity` bytes of record space (a power of two; smaller only in tests). `origin`:
   * where the byte counters start, a multiple of 8 — 0 but in tests of their wrap-around.
   */
  constructor(capacity = LIVE_RING_BYTES, origin = 0) {
    this.memory = new RingMemory(new SharedArrayBuffer(capacity + 4 * CONTROL_SLOTS));
    this.written = origin | 0;
    Atomics.store(this.memory.control, WRITTEN, this.written);
    Atomics.store(this.memory.control, READ, this.written);
  }

  /** The shared memory, for the host's {@link LiveRingReader}. */
  get buffer(): SharedArrayBuffer {
    return this.memory.buffer;
  }

  /** Bytes published and not yet read by the host. */
  unread(): number {
    return (this.written - Atomics.load(this.memory.control, READ)) >>> 0;
  }

  /**
   * Publishes one record: `payload`, UTF-8 text (`ascii` if all of it is), after `dropped` characters
   * that were not sent. Returns false, and writes nothing, when it does not fit in the free space.
   */
  append(payload: Uint8Array, ascii: boolean, dropped: number): boolean {
    const { memory } = this;
    if (afterRecord(0, payload.length) > memory.capacity - this.unread()) return false;
    const start = this.written;
    const position = (start + HEADER_BYTES) & memory.mask;
    const room = memory.capacity - position;
    if (payload.length <= room) memory.bytes.set(payload, position);
    else {
      memory.bytes.set(payload.subarray(0, room), position);
      memory.bytes.set(payload.subarray(room), 0);
    }
    memory.setWord(start, payload.length);
    memory.setWord(start + 4, (dropped % 2 ** 32) | 0);
    memory.setWord(start + 8, ascii ? 1 : 0);
    memory.setWord(start + 12, Math.floor(dropped / 2 ** 32));
    this.written = afterRecord(start, payload.length);
    Atomics.store(memory.control, WRITTEN, this.written); // publishes the bytes written above
    return true;
  }

  /**
   * After a record is published: whether the host sleeps, so a wake-up message must be posted (true
   * once; the host is awake from then on). See {@link LiveRingReader.trySleep} for why none is lost.
   */
  claimWake(): boolean {
    return Atomics.compareExchange(this.memory.control, HOST_AWAKE, 0, 1) === 0;
  }

  /**
   * Asks the host to say when it has read down to the low watermark ({@link LiveRingReader.claimResume}).
   * Returns whether it already has — then no message will come, and the caller resumes at once.
   *
   * The request is stored before the unread bytes are checked, and the host stores its read position
   * before it checks the request: with sequentially consistent atomics, at least one side sees the
   * other's store, so a pause never waits for a message that nobody sends.
   */
  requestResume(): boolean {
    Atomics.store(this.memory.control, RESUME_WANTED, 1);
    return this.unread() <= LIVE_LOW_WATERMARK_BYTES;
  }
}

/** The host's end of a ring. */
export class LiveRingReader {
  private readonly memory: RingMemory;
  /** Bytes read (this thread's copy of READ). */
  private read: number;

  constructor(buffer: SharedArrayBuffer) {
    this.memory = new RingMemory(buffer);
    this.read = Atomics.load(this.memory.control, READ);
  }

  /**
   * Reads the records published before this call, in order, at most `maxRecords` of them, and frees
   * each after `deliver` has had it (`deliver` must not throw: a record it threw on is read again);
   * without `deliver` (nobody subscribes) records are skipped undecoded. Records published during the call wait for the next one: a producer that never stops
   * cannot keep the host thread here. Returns the number of records read.
   */
  drain(deliver?: (text: string, dropped: number) => void, maxRecords = Number.POSITIVE_INFINITY): number {
    const { memory } = this;
    const end = Atomics.load(memory.control, WRITTEN);
    let records = 0;
    for (; this.read !== end && records < maxRecords; records++) {
      const start = this.read;
      const payload = memory.word(start);
      if (deliver !== undefined) {
        const text = this.text(start + HEADER_BYTES, payload, memory.word(start + 8) === 1);
        deliver(text, (memory.word(start + 4) >>> 0) + memory.word(start + 12) * 2 ** 32);
      }
      this.read = afterRecord(start, payload);
      Atomics.store(memory.control, READ, this.read); // the acknowledgement: the engine may reuse the space
    }
    return records;
  }

  /**
   * Goes to sleep (the engine posts a wake-up with its next record), unless records are waiting: then
   * returns false and the host stays awake to read them.
   *
   * The host stores "asleep" before it looks for records; the engine publishes a record before it
   * looks whether the host sleeps ({@link LiveRingWriter.claimWake}). With sequentially consistent
   * atomics at least one side sees the other's store: either the engine posts a wake-up, or the host
   * finds the record here. If both do, only one of them wins the flag back.
   */
  trySleep(): boolean {
    const { control } = this.memory;
    Atomics.store(control, HOST_AWAKE, 0);
    if (Atomics.load(control, WRITTEN) === this.read) return true;
    // The engine took the flag (its wake-up is on the way), or the host takes it and keeps reading.
    return Atomics.compareExchange(control, HOST_AWAKE, 0, 1) !== 0;
  }

  /**
   * Whether the engine asked to hear that the ring has drained to the low watermark, and it has: true
   * once per request (the caller then posts the resume message).
   */
  claimResume(): boolean {
    const { control } = this.memory;
    if (Atomics.load(control, RESUME_WANTED) === 0) return false;
    if ((Atomics.load(control, WRITTEN) - this.read) >>> 0 > LIVE_LOW_WATERMARK_BYTES) return false;
    return Atomics.compareExchange(control, RESUME_WANTED, 1, 0) === 1;
  }

  /** The text of `length` payload bytes at byte counter `at`. */
  private text(at: number, length: number, ascii: boolean): string {
    const { bytes, capacity, mask } = this.memory;
    const encoding = ascii ? 'latin1' : 'utf8';
    const position = at & mask;
    if (position + length <= capacity) return bytes.toString(encoding, position, position + length);
    // Wrapped around the end: join the bytes, not two decoded halves (a character may be split).
    return Buffer.concat([
      bytes.subarray(position),
      bytes.subarray(0, length - (capacity - position)),
    ]).toString(encoding);
  }
}
